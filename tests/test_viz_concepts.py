"""Concept diagrams: the autodiff landscape and the JAX AI stack, checked on the SVG."""

import re
import xml.etree.ElementTree as ET

from jaxtour.viz import draw_ai_stack, draw_autodiff_landscape

SVG = "{http://www.w3.org/2000/svg}"


def rendered(diagram):
    """(SVG groups by class, all drawn text, edges as (tail, head)) of the picture."""
    root = ET.fromstring(diagram.svg().encode())
    groups: dict[str, list] = {}
    for group in root.iter(f"{SVG}g"):
        groups.setdefault(group.get("class", ""), []).append(group)
    text = " ".join(t.text or "" for t in root.iter(f"{SVG}text")).replace("\xa0", " ")
    edges = [tuple(g.find(f"{SVG}title").text.split("->")) for g in groups.get("edge", [])]
    return groups, re.sub(r"\s+", " ", text), edges


def test_the_landscape_has_one_card_per_approach():
    groups, text, _ = rendered(draw_autodiff_landscape())
    assert len(groups["node"]) == 4 and "cluster" not in groups
    for name, how in [("TensorFlow 1", "static graph + XLA"), ("PyTorch", "dynamic graph"),
                      ("TensorFlow 2", "dynamic graph + XLA"),
                      ("JAX", "non-standard interpretation + XLA")]:
        assert name in text and how in text, name
    # every card weighs an advantage (+) against a disadvantage (−)
    assert text.count("+ ") - text.count(" + XLA") == 4
    assert text.count("− ") == 4


def test_the_landscape_tells_its_story_in_order():
    _, text, edges = rendered(draw_autodiff_landscape())
    # one path through all four: TF1 → PyTorch → TF2 → JAX
    assert sorted(edges) == sorted([("tensorflow_1", "pytorch"), ("pytorch", "tensorflow_2"),
                                    ("tensorflow_2", "jax")])
    for step in ("run the Python itself", "compile it again", "trace pure functions"):
        assert step in text


def test_the_stack_puts_jax_under_every_library():
    diagram = draw_ai_stack()
    groups, text, edges = rendered(diagram)
    assert len(groups["cluster"]) == 2 and len(groups["node"]) == 10
    for label in ("built with JAX", "libraries built on JAX", "LLMs", "solvers",
                  "physics simulations", "deep learning", "Flax", "Equinox", "optimisers",
                  "Optax", "probabilistic programming", "and modelling", "NumPyro",
                  "BlackJAX", "checkpointing", "Orbax", "JAX", "XLA", "CPU · GPU · TPU"):
        assert label in text, label
    assert sorted(tail for tail, head in edges if head == "jax") == [
        f"lib_{i}" for i in range(4)]
    assert ("jax", "xla") in edges and ("xla", "hardware") in edges
    assert len(edges) == 6  # the invisible edges that stack the layers are not drawn


def test_titles_say_what_is_drawn():
    assert draw_autodiff_landscape().title == "the autodiff landscape: 4 approaches"
    assert draw_ai_stack().title == (
        "the JAX AI stack: 4 kinds of library, 3 kinds of application")


def test_every_diagram_the_tour_renders_is_registered_and_parses():
    import importlib

    from jaxtour.cli._tour_steps import DIAGRAMS

    expected = {"pipeline_step1", "pipeline_step2", "pipeline_step3", "autodiff_landscape",
                "ai_stack", "mlp_pipeline", "mlp_jaxpr", "mlp_hlo"}
    assert expected <= set(DIAGRAMS)
    titles = {}
    for stem, target in DIAGRAMS.items():
        module, _, name = target.partition(":")
        diagram = getattr(importlib.import_module(module), name)()
        ET.fromstring(diagram.svg().encode())
        titles[stem] = diagram.title
    assert titles["mlp_pipeline"].startswith("pipeline of update: ")
    assert titles["mlp_jaxpr"].startswith("jaxpr of update: ")
    assert titles["mlp_hlo"].startswith("compiled HLO of update")
