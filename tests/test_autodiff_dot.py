"""The autodiff pictures as Diagrams: titles, key DOT fragments, SVG from both renderers."""

import shutil
import xml.etree.ElementTree as ET

import jax.numpy as jnp
import pytest
from test_autodiff_cases import CASES, cubic

from jaxtour import Diagram, _render
from jaxtour.autodiff import draw_grad, draw_jvp, draw_vjp, grad_graph

RENDERERS = [
    "embedded",
    pytest.param(
        "system",
        marks=pytest.mark.skipif(
            shutil.which("dot") is None, reason="no system Graphviz `dot` on PATH"
        ),
    ),
]


def _svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg.encode())
    return [
        "".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text")
    ]


@pytest.mark.parametrize("renderer", RENDERERS)
def test_the_grad_picture_renders_as_svg_with_its_numbers(renderer, monkeypatch):
    monkeypatch.setenv(_render.RENDERER_VARIABLE, renderer)
    texts = _svg_texts(draw_grad(cubic)(1.0).svg())
    assert "∂cubic/∂x" in texts
    assert "f32[] 4.0" in texts  # the gradient's line: type, then value
    assert "seed ∂cubic/∂cubic" in texts
    assert sum(t.startswith("residual ") for t in texts) == 4


@pytest.mark.parametrize("name", ["where", "cond_true", "scan", "relu", "mlp"])
def test_every_case_renders_with_one_box_per_model_node(name):
    f, args, argnums = CASES[name]
    graph = grad_graph(f, argnums)(*args)
    d = draw_grad(f, argnums)(*args)
    assert isinstance(d, Diagram) and d.title == graph.title
    # rows of many terminals wrap with invisible edges: not the model's
    nodes, edges = d.counts
    assert (nodes, edges - d.source.count("style=invis")) == (
        len(graph.nodes),
        len(graph.edges),
    )
    for node in graph.nodes.values():
        assert f'\t{node.id} [label="{node.label}' in d.source
    ET.fromstring(d.svg().encode())


def test_lanes_are_clusters_and_residual_edges_are_dashed():
    source = draw_grad(cubic)(1.0).source
    for cluster in ("cluster_forward", "cluster_residuals", "cluster_backward"):
        assert f"subgraph {cluster}" in source
    graph = grad_graph(cubic)(1.0)
    residual_edges = [e for e in graph.edges if e.kind == "residual"]
    # Two residuals come from forward eqns (3x² and 2x), each read once backwards; two
    # are constants (2.0 and 3.0) with no forward eqn behind them.
    assert len(residual_edges) == 2 + 4
    assert source.count("style=dashed") == len(residual_edges)
    labels = [n.label for n in graph.select("residual")]
    assert sum(label.endswith("(constant)") for label in labels) == 2


def test_the_backward_lane_is_drawn_upwards_and_each_gradient_beside_its_input():
    source = draw_grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0).source
    assert "dir=back" in source
    assert "{rank=same in0 grad0}" in source and "{rank=same in1 grad1}" in source


def test_jvp_and_vjp_pictures_render():
    jvp = draw_jvp(jnp.sin)((0.5,), (1.0,))
    vjp = draw_vjp(jnp.sin)(jnp.arange(3.0))
    assert jvp.title == "jvp of sin: 2 primal equations, 1 tangent equation"
    assert (
        vjp.title
        == "vjp of sin: 2 forward equations, 1 residual, 1 transposed equation"
    )
    for d in (jvp, vjp):
        ET.fromstring(d.svg().encode())


def test_rankdir_left_to_right():
    assert "rankdir=LR" in draw_grad(cubic, rankdir="LR")(1.0).source
