"""What the autodiff pictures call f's outputs: the name the title gives f."""

import jax.numpy as jnp

from jaxtour.autodiff import draw_jvp, jvp_graph, vjp_graph


def _output_labels(graph):
    return [(n.lane, n.label) for n in graph.select("output")]


def test_draw_jvp_names_its_outputs_as_its_title_does_as_draw_vjp_does():
    graph = jvp_graph(jnp.sin)((1.0,), (1.0,))
    assert graph.title.startswith("jvp of sin:")
    assert _output_labels(graph) == [
        ("primal", "sin(…)"),
        ("tangent", "tangent of sin(…)"),
    ]
    assert _output_labels(vjp_graph(jnp.sin)(1.0)) == [("forward", "sin(…)")]
    assert 'label="tangent of sin(…)' in draw_jvp(jnp.sin)((1.0,), (1.0,)).source
