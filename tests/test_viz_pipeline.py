"""draw_pipeline: the general diagram's three steps, and one annotated with f's artefacts.

Counts are checked against what JAX itself prints (the jaxpr's equations, the StableHLO
text, the compiled HLO text), and structure against the rendered SVG, not the DOT text.
"""

import re
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import pytest

from jaxtour import Diagram
from jaxtour.viz import draw_pipeline

SVG = "{http://www.w3.org/2000/svg}"
ENTRY_POINTS = (
    "jax.make_jaxpr(f)(x)",
    "jax.jit(f).trace(x)",
    "traced.lower()",
    "lowered.compile()",
    "compiled.as_text()",
    "jax.grad",
    "jax.vmap",
    "in_shardings=",
)


def rendered(diagram: Diagram) -> tuple[dict[str, int], str]:
    """(how many SVG groups of each class, all the text drawn) of the rendered picture."""
    root = ET.fromstring(diagram.svg().encode())
    counts: dict[str, int] = {}
    for group in root.iter(f"{SVG}g"):
        kind = group.get("class", "")
        counts[kind] = counts.get(kind, 0) + 1
    text = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    return counts, text.replace("\xa0", " ")


def test_step_one_shows_only_tracing_and_jit():
    counts, text = rendered(draw_pipeline(step=1))
    assert (counts["node"], counts["edge"], counts.get("cluster", 0)) == (4, 3, 0)
    for word in (
        "pure Python function",
        "tracing",
        "jaxpr",
        "jit",
        "XLA",
        "CPU · GPU · TPU",
    ):
        assert word in text
    assert "StableHLO" not in text and "transformations" not in text


def test_step_two_names_every_stage_and_the_transformations():
    counts, text = rendered(draw_pipeline(step=2))
    # 5 stages, the transformations, the shardings; 4 road edges, jaxpr <-> transformations,
    # shardings -> compiled HLO
    assert (counts["node"], counts["edge"], counts["cluster"]) == (7, 6, 2)
    for word in (
        "tracing",
        "lowering",
        "XLA compiles",
        "executes",
        "StableHLO",
        "compiled HLO",
        "transformations",
        "grad",
        "vmap",
        "shardings",
        "JAX (Python)",
        "XLA (compiler)",
    ):
        assert word in text, word
    assert not [entry for entry in ENTRY_POINTS if entry in text]


def test_step_three_adds_the_jax_entry_points():
    counts, text = rendered(draw_pipeline(step=3))
    assert (counts["node"], counts["edge"], counts["cluster"]) == (7, 6, 2)
    assert [entry for entry in ENTRY_POINTS if entry not in text] == []


def _edges(diagram: Diagram) -> dict[str, str]:
    """{"tail->head": the edge's drawn text} of the rendered picture."""
    root = ET.fromstring(diagram.svg().encode())
    edges = {}
    for group in root.iter(f"{SVG}g"):
        if group.get("class") == "edge":
            title = group.find(f"{SVG}title").text.replace("&#45;", "-")
            edges[title] = " ".join(t.text or "" for t in group.iter(f"{SVG}text"))
    return edges


@pytest.mark.parametrize("step", [2, 3])
def test_sharding_is_drawn_as_annotations_for_xla_not_a_jaxpr_transformation(step):
    edges = _edges(draw_pipeline(step=step))
    assert edges["jaxpr->transforms"].strip() == "jaxpr → jaxpr"
    assert "per-device code" in edges["shardings->hlo"]
    assert not [name for name in edges if name.startswith("shardings->j")]
    # what the picture claims: the transformations' node has no sharding in it, and the
    # jaxpr is the same with and without in_shardings (XLA, not JAX, splits the program)
    _, text = rendered(draw_pipeline(step=step))
    transforms = text.split("transformations")[1].split("shardings")[0]
    assert "shard" not in transforms


def test_a_jaxpr_is_the_same_with_and_without_in_shardings():
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((1,), ("d",))

    def layer(x):
        return jnp.tanh(x @ x.T)

    x = jnp.ones((4, 4))
    sharded = jax.jit(layer, in_shardings=NamedSharding(mesh, P("d")))
    assert str(sharded.trace(x).jaxpr) == str(jax.jit(layer).trace(x).jaxpr)
    assert "sharding" in sharded.lower(x).as_text()  # the annotation is in StableHLO


def test_the_default_is_the_complete_diagram_and_a_diagram_at_once():
    diagram = draw_pipeline()
    assert isinstance(diagram, Diagram)
    assert diagram.source == draw_pipeline(step=3).source
    assert diagram.title == "how JAX runs a function (step 3 of 3)"


def affine(x):
    """A docstring that must not appear in the picture."""
    y = jnp.sin(x) * 2.0
    return y + 1.0


def stablehlo_ops(text: str) -> int:
    return len(re.findall(r"^\s*(?:%\S+ = )?stablehlo\.(?!return)\w+", text, re.M))


def test_annotations_match_what_jax_prints():
    x = jnp.ones((8,), jnp.float32)
    lowered = jax.jit(affine).lower(x)
    eqns = len(jax.make_jaxpr(affine)(x).eqns)
    ops = stablehlo_ops(lowered.as_text())
    fusions = lowered.compile().as_text().count(" fusion(")
    platform = jax.devices()[0].platform
    diagram = draw_pipeline(affine)(x)
    assert (
        eqns == 3 and ops > eqns
    )  # sin, mul, add; StableHLO adds constants, broadcasts
    assert diagram.title == (
        f"pipeline of affine: {eqns} equations, {ops} StableHLO ops, "
        f"{fusions} fusion{'s' * (fusions != 1)} on {platform}"
    )
    counts, text = rendered(diagram)
    assert (counts["node"], counts["cluster"]) == (7, 2)
    assert f"{eqns} equations" in text and f"{ops} ops" in text
    assert platform.upper() in text and f"{platform}: " not in text


def test_the_source_excerpt_is_the_code_without_its_docstring():
    _, text = rendered(draw_pipeline(affine)(1.0))
    assert "def affine(x):" in text and "y = jnp.sin(x) * 2.0" in text
    assert "return y + 1.0" in text and "docstring" not in text


def test_nested_jaxprs_count_their_equations():
    def branchy(x):
        return jax.lax.cond(x > 0, lambda v: jnp.sin(v) * 2.0, jnp.cos, x)

    jaxpr = jax.make_jaxpr(branchy)(1.0).jaxpr
    (cond,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    nested = sum(len(branch.jaxpr.eqns) for branch in cond.params["branches"])
    assert nested == 3
    title = draw_pipeline(branchy)(1.0).title
    assert title.startswith(
        f"pipeline of branchy: {len(jaxpr.eqns) + nested} equations"
    )


def test_static_arguments_and_shape_only_examples():
    def power(x, n):
        return x**n

    spec = jax.ShapeDtypeStruct((4, 3), jnp.float32)
    title = draw_pipeline(power, static_argnums=1)(spec, 3).title
    assert title.startswith("pipeline of power: 1 equation,")


def test_not_a_function_is_named():
    with pytest.raises(
        TypeError, match=r"draw_pipeline needs a function to trace.*got 3 \(int\)"
    ):
        draw_pipeline(3)


def test_an_argument_jax_cannot_trace_is_held_fixed():
    def act(x, how):
        return affine(x) if how == "affine" else x

    d = draw_pipeline(act)(1.0, "affine")
    assert d.title == draw_pipeline(affine)(1.0).title.replace("affine", "act")


@pytest.mark.parametrize("step", [0, 4, "3"])
def test_an_unknown_step_is_refused(step):
    with pytest.raises(ValueError, match=rf"`step` must be 1 .* got {step!r}\."):
        draw_pipeline(step=step)


def test_step_one_has_nothing_to_annotate():
    with pytest.raises(ValueError, match=r"draw_pipeline\(f, step=1\) has no stage"):
        draw_pipeline(affine, step=1)


class OwnError(Exception):
    pass


def test_the_users_own_error_is_not_swallowed():
    def broken(x):
        raise OwnError("the user's message")

    with pytest.raises(OwnError, match="the user's message") as caught:
        draw_pipeline(broken)(1.0)
    assert any("draw_pipeline traced broken" in note for note in caught.value.__notes__)


def test_a_lambda_is_quoted_alone():
    square = lambda x: x * x
    _, text = rendered(draw_pipeline(square)(2.0))
    assert "lambda x: x * x" in text and "square =" not in text


def test_counts_agree_with_compare_stages():
    from jaxtour.viz import compare_stages

    def layer(x, w):
        return jax.nn.gelu(x @ w).sum()

    args = (jnp.ones((8, 16)), jnp.ones((16, 4)))
    seen = compare_stages(layer)(*args)
    assert draw_pipeline(layer)(*args).title == (
        f"pipeline of layer: {seen.jaxpr_eqns} equations, {seen.stablehlo_ops} StableHLO ops, "
        f"{len(seen.fusions)} fusion{'s' * (len(seen.fusions) != 1)} on {seen.platform}"
    )


@pytest.mark.parametrize(
    ("platform", "kind", "n", "words"),
    [
        ("cpu", "cpu", 1, ""),
        ("cpu", "cpu", 8, "8 devices"),
        ("gpu", "NVIDIA H200", 1, "NVIDIA H200"),
        ("tpu", "TPU v5 lite", 4, "4 × TPU v5 lite"),
    ],
)
def test_the_device_box_names_the_platform_once(platform, kind, n, words):
    from types import SimpleNamespace

    from jaxtour.viz._pipeline import device_words
    from jaxtour.viz._pipeline_graph import Artefacts, device_label

    devices = [
        SimpleNamespace(platform=platform, device_kind=kind, id=i) for i in range(n)
    ]
    assert device_words(devices) == words
    found = Artefacts("f", (), 3, 5, 1, 2, platform=platform, device=words)
    label = str(device_label(found, 2))
    assert label == "\\n".join(filter(None, [platform.upper(), words]))
