"""Concept diagrams: the autodiff landscape and the JAX AI stack, checked on the SVG."""

import itertools
import re
import xml.etree.ElementTree as ET

import pytest

from jaxtour.viz import draw_ai_stack, draw_autodiff_landscape

SVG = "{http://www.w3.org/2000/svg}"


def rendered(diagram):
    """(SVG groups by class, all drawn text, edges as (tail, head)) of the picture."""
    root = ET.fromstring(diagram.svg().encode())
    groups: dict[str, list] = {}
    for group in root.iter(f"{SVG}g"):
        groups.setdefault(group.get("class", ""), []).append(group)
    text = " ".join(t.text or "" for t in root.iter(f"{SVG}text")).replace("\xa0", " ")
    edges = [
        tuple(g.find(f"{SVG}title").text.split("->")) for g in groups.get("edge", [])
    ]
    return groups, re.sub(r"\s+", " ", text), edges


# First releases, from the projects' own announcements (an oracle apart from the module).
RELEASED = {
    "TensorFlow 1": 2015,
    "PyTorch": 2016,
    "JAX": 2018,
    "TensorFlow 2": 2019,
    "PyTorch 2": 2023,
}


def card_positions(diagram) -> dict[str, float]:
    """The x of each card's centre in the SVG, by node id."""
    groups, _, _ = rendered(diagram)
    positions = {}
    for node in groups["node"]:
        name = node.find(f"{SVG}title").text
        xs = [
            float(x)
            for x in re.findall(
                r"(-?[\d.]+),-?[\d.]+", node.find(f"{SVG}path").get("d")
            )
        ]
        positions[name] = (min(xs) + max(xs)) / 2
    return positions


def test_the_landscape_has_one_card_per_framework():
    diagram = draw_autodiff_landscape()
    groups, text, _ = rendered(diagram)
    assert len(groups["node"]) == 5 and "cluster" not in groups
    for name, how in [
        ("TensorFlow 1", "static graph: per-op kernels, XLA opt-in"),
        ("PyTorch", "a tape recorded as Python runs"),
        ("TensorFlow 2", "eager tape + tf.function graphs"),
        ("JAX", "trace pure functions, transform, compile (XLA)"),
        ("PyTorch 2", "torch.compile"),
    ]:
        assert f"{name} · {RELEASED[name]}" in text and how in text, name
    # every card weighs an advantage (+) against a disadvantage (−)
    lines = [
        t.text.replace("\xa0", " ").strip()
        for t in ET.fromstring(diagram.svg().encode()).iter(f"{SVG}text")
        if t.text
    ]
    assert sum(line.startswith("+ ") for line in lines) == 5
    assert sum(line.startswith("− ") for line in lines) == 5


def test_the_landscape_is_current():
    _, text, _ = rendered(draw_autodiff_landscape())
    # PyTorch 2 compiles whole programs and has JAX-like transforms; TF1's XLA was opt-in
    assert "no whole-program compiler" not in text
    for fact in (
        "torch.compile",
        "torch.func has grad and vmap",
        "XLA opt-in",
        "jit_compile=True",
    ):
        assert fact in text, fact


def test_the_landscape_reads_left_to_right_in_order_of_release():
    diagram = draw_autodiff_landscape()
    x = card_positions(diagram)
    by_id = {name: x[name.lower().replace(" ", "_")] for name in RELEASED}
    in_order = sorted(RELEASED, key=RELEASED.get)
    for earlier, later in itertools.pairwise(in_order):
        # a generation's two cards may share a column; a later card is never further left
        assert by_id[earlier] <= by_id[later] + 1, (earlier, later)
    assert by_id["TensorFlow 1"] < by_id["JAX"] < by_id["TensorFlow 2"]
    assert by_id["PyTorch"] < by_id["JAX"] < by_id["PyTorch 2"]


def test_the_landscape_arrows_say_what_changed():
    _, text, edges = rendered(draw_autodiff_landscape())
    assert sorted(edges) == sorted(
        [
            ("tensorflow_1", "tensorflow_2"),
            ("pytorch", "pytorch_2"),
            ("jax", "pytorch_2"),
        ]
    )
    for step in ("eager by default", "compile the Python too", "JAX-like transforms"):
        assert step in text


def test_the_stack_puts_jax_under_every_library():
    diagram = draw_ai_stack()
    groups, text, edges = rendered(diagram)
    assert len(groups["cluster"]) == 2 and len(groups["node"]) == 11
    for label in (
        "built with JAX",
        "libraries built on JAX",
        "LLMs",
        "solvers",
        "physics simulations",
        "neural networks",
        "Flax · Equinox",
        "optimisers",
        "Optax",
        "checkpoints",
        "Orbax",
        "data loading",
        "Grain",
        "probabilistic",
        "programming",
        "NumPyro · BlackJAX",
        "JAX",
        "XLA",
        "CPU · GPU · TPU",
    ):
        assert label in text, label
    assert "▶" not in text  # nothing marked as run
    assert sorted(tail for tail, head in edges if head == "jax") == [
        f"lib_{i}" for i in range(5)
    ]
    assert ("jax", "xla") in edges and ("xla", "hardware") in edges
    assert len(edges) == 7  # the invisible edges that stack the layers are not drawn


def _fills(diagram) -> dict[str, str]:
    """Node id -> its fill colour, read from the SVG."""
    groups, _, _ = rendered(diagram)
    return {
        g.find(f"{SVG}title").text: g.find(f"{SVG}path").get("fill")
        for g in groups["node"]
    }


def test_the_stack_marks_what_a_lesson_ran_and_greys_out_the_rest():
    ran = {
        "Flax": "Flax NNX: nnx.Linear ×3",
        "Optax": "Optax: sgd + momentum",
        "Grain": "Grain: batches of 128",
        "hardware": "ran on: cpu",
    }
    diagram = draw_ai_stack(ran=ran)
    _, text, _ = rendered(diagram)
    for line in ran.values():
        assert f"▶ {line}" in text, line
    assert text.count("▶") == 4
    fills = _fills(diagram)
    marked = {"lib_0", "lib_1", "lib_3", "hardware"}  # Flax, Optax, Grain, the hardware
    assert {node for node, fill in fills.items() if fill == "#b9e6b0"} == marked
    assert {node for node, fill in fills.items() if fill == "#f4f4f4"} == {
        "lib_2",
        "lib_4",
        "jax",
        "xla",
    }  # Orbax, NumPyro/BlackJAX, JAX, XLA: not named
    assert fills == _fills(draw_ai_stack(ran=ran))  # same input, same picture
    assert set(_fills(draw_ai_stack()).values()).isdisjoint({"#b9e6b0", "#f4f4f4"})


def test_the_stack_rejects_a_piece_it_does_not_have():
    import pytest

    with pytest.raises(ValueError, match=r"'PyTorch'.*not in the stack.*Flax, Equinox"):
        draw_ai_stack(ran={"PyTorch": "torch.compile"})
    with pytest.raises(TypeError, match="must map pieces"):
        draw_ai_stack(ran=["Flax"])


def test_titles_say_what_is_drawn():
    assert draw_autodiff_landscape().title == "the autodiff landscape: 5 frameworks"
    assert draw_ai_stack().title == (
        "the JAX AI stack: 5 kinds of library, 3 kinds of application"
    )
    assert draw_ai_stack(ran={"Grain": "batches", "JAX": "jit"}).title == (
        "the JAX AI stack as run here: Grain, JAX"
    )


@pytest.mark.slow  # renders every tour diagram
def test_every_diagram_the_tour_renders_is_registered_and_parses():
    from jaxtour.cli._tour_steps import DIAGRAMS

    expected = {
        "pipeline_step1",
        "pipeline_step2",
        "pipeline_step3",
        "autodiff_landscape",
        "ai_stack",
        "mlp_pipeline",
        "mlp_jaxpr",
        "mlp_hlo",
    }
    assert expected <= set(DIAGRAMS)
    titles = {}
    for stem, draw in DIAGRAMS.items():
        diagram = draw()
        ET.fromstring(diagram.svg().encode())
        titles[stem] = diagram.title
    assert titles["mlp_pipeline"].startswith("pipeline of update: ")
    assert titles["mlp_jaxpr"].startswith("jaxpr of update: ")
    assert titles["mlp_hlo"].startswith("compiled HLO of update")
