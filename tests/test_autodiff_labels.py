"""What the autodiff pictures call f's outputs, and how their numbers read."""

import jax
import jax.numpy as jnp

from jaxtour.autodiff import draw_grad, draw_jvp, grad_graph, jvp_graph, vjp_graph


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


def _pair(x, y):
    return {"a": x * y, "b": jnp.sin(x)}


def test_each_leaf_of_a_pytree_output_is_named_by_its_path():
    # Two outputs and two seeds all called "f(…)" / "cotangent in" left the reader to
    # guess which is which; each now names its key, as the inputs do.
    v = vjp_graph(_pair)(1.0, 2.0)
    assert _output_labels(v) == [
        ("forward", "_pair(…)['a']"),
        ("forward", "_pair(…)['b']"),
    ]
    assert [n.label for n in v.select("seed")] == [
        "cotangent in ['a']",
        "cotangent in ['b']",
    ]
    j = jvp_graph(_pair)((1.0, 2.0), (1.0, 0.0))
    assert _output_labels(j) == [
        ("primal", "_pair(…)['a']"),
        ("primal", "_pair(…)['b']"),
        ("tangent", "tangent of _pair(…)['a']"),
        ("tangent", "tangent of _pair(…)['b']"),
    ]
    tangent_b = j.select("output", lane="tangent")[1].value
    assert tangent_b == jax.jvp(_pair, (1.0, 2.0), (1.0, 0.0))[1]["b"]


def test_aux_leaves_are_named_by_their_path_and_a_scalar_loss_by_f_alone():
    def loss(w):
        return jnp.sum(w**2), (w.mean(), {"n": w.size * 1.0})

    graph = grad_graph(loss, has_aux=True)(jnp.arange(3.0))
    assert [n.label for n in graph.select("output")] == [
        "loss(…)",
        "aux[0] (not differentiated)",
        "aux[1]['n'] (not differentiated)",
    ]
    assert [n.label for n in graph.select("seed")] == ["seed ∂loss/∂loss"]
    jgraph = jvp_graph(loss, has_aux=True)((jnp.arange(3.0),), (jnp.ones(3),))
    assert [n.label for n in jgraph.select("output")][-1] == (
        "aux[1]['n'] (not differentiated)"
    )


def test_a_rounded_value_is_never_shown_with_a_false_zero_decimal():
    # d(x²)/dx at 617.2 is 1234.4: four digits show "1234", and "1234.0" would be wrong
    graph = grad_graph(lambda x: x**2)(617.2)
    assert graph.values_of("gradient")[0] == jax.grad(lambda x: x**2)(617.2)
    source = draw_grad(lambda x: x**2)(617.2).source
    assert '∂f/∂x\\nf32[] 1234"' in source
    assert "1234.0" not in source
    assert 'x\\nf32[] 617.2"' in source
    assert "f32[] 1.0" in draw_grad(lambda x: x**2)(0.5).source  # a whole float: 1.0
