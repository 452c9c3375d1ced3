"""draw_grad: the numbers it draws are JAX's, JAX's agree with float64 finite differences,
the backward lane holds the transposed eqns JAX produced, and the residual nodes are
exactly what the VJP closes over."""

import functools
from collections import Counter

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_autodiff_cases import CASES, cubic, directional_fd, dot, random_like, split

from jaxtour.autodiff import draw_grad, grad_graph

NAMES = sorted(CASES)


@functools.cache
def _graph(name, values=True):
    """Built once per case: the tests only read the model."""
    f, args, argnums = CASES[name]
    return grad_graph(f, argnums, values=values)(*args)


def _jaxpr_counts(closed) -> Counter:
    """An independent count of primitives, `jit` calls opened (the test's own walker)."""
    counts = Counter()
    for eqn in closed.jaxpr.eqns:
        if eqn.primitive.name in ("jit", "pjit"):
            counts += _jaxpr_counts(eqn.params["jaxpr"])
        else:
            counts[eqn.primitive.name] += 1
    return counts


@pytest.mark.parametrize("name", NAMES)
def test_the_drawn_gradient_equals_jax_grad(name):
    f, args, argnums = CASES[name]
    drawn = _graph(name).values_of("gradient")
    expected = jax.tree.leaves(jax.grad(f, argnums)(*args))
    assert len(drawn) == len(expected)
    for got, want in zip(drawn, expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_jax_grad_agrees_with_float64_central_differences(name):
    f, args, argnums = CASES[name]
    gradient = jax.grad(f, argnums)(*args)
    _, diff = split(f, args, argnums)
    direction = random_like(diff, seed=len(name))
    fd = directional_fd(f, args, argnums, direction)
    # grad · v is the derivative along v: float32 gradient against a float64 oracle.
    assert dot(gradient, direction) == pytest.approx(float(fd), rel=2e-4, abs=2e-5)


def _distinct(values) -> set:
    return {(a.shape, a.dtype.str, a.tobytes()) for a in map(np.asarray, values)}


@pytest.mark.parametrize("name", NAMES)
def test_residual_nodes_are_exactly_what_the_vjp_closes_over(name):
    f, args, argnums = CASES[name]
    # Arrays, not Python floats: JAX bakes a Python-float primal into the VJP's jaxpr
    # as a literal, where a traced input (as in the picture) is a residual leaf.
    g, diff = split(f, jax.tree.map(jnp.asarray, args), argnums)
    _, vjp_fn = jax.vjp(g, *diff)
    saved = jax.tree.leaves(vjp_fn)  # the VJP object is a pytree of its residuals
    drawn = _graph(name).values_of("residual")
    assert drawn and all(d is not None for d in drawn)
    # Compared as sets: an eager VJP may hold one primal input twice where a traced
    # one holds it once (gelu(x) * x saves x once per use).
    assert _distinct(drawn) == _distinct(saved)


@pytest.mark.parametrize("name", NAMES)
def test_the_backward_lane_holds_the_transposed_eqns_jax_produced(name):
    f, args, argnums = CASES[name]
    g, diff = split(f, args, argnums)
    out, vjp_fn = jax.vjp(g, *diff)
    backward = _jaxpr_counts(jax.make_jaxpr(vjp_fn)(jnp.ones_like(out)))
    forward = _jaxpr_counts(jax.make_jaxpr(lambda *d: jax.vjp(g, *d))(*diff))
    graph = _graph(name)
    assert graph.primitive_counts("backward") == backward
    assert graph.primitive_counts("forward") == forward
    assert sum(backward.values()) > 0


def test_sin_is_not_recomputed_backwards_its_cosine_is_saved():
    graph = _graph("sin_times_x")
    assert graph.primitive_counts("forward")["cos"] == 1
    assert not {"sin", "cos"} & set(graph.primitive_counts("backward"))
    residuals = graph.values_of("residual")
    assert any(np.allclose(r, np.cos(0.7)) for r in residuals)


def test_the_mlp_backward_pass_multiplies_by_transposed_weights():
    graph = _graph("mlp")
    # Gradients for w1 and w2, and the cotangent of the hidden layer: three matmuls.
    assert graph.primitive_counts("forward")["dot_general"] == 2
    assert graph.primitive_counts("backward")["dot_general"] == 3
    labels = [n.label for n in graph.select("gradient")]
    assert labels == [
        "∂mlp_loss/∂params['b1']",
        "∂mlp_loss/∂params['b2']",
        "∂mlp_loss/∂params['w1']",
        "∂mlp_loss/∂params['w2']",
    ]
    assert [n.kind for n in graph.select(lane="forward")][:6] == ["input"] * 4 + [
        "fixed"
    ] * 2


def test_the_cubic_picture_shows_the_gradient_4_at_1():
    d = draw_grad(cubic)(1.0)
    assert (
        d.title
        == "grad of cubic: 10 forward equations, 4 residuals, 7 backward equations"
    )
    assert '[label="∂cubic/∂x\\nf32[] 4.0"' in d.source
    assert grad_graph(cubic)(1.0).values_of("gradient") == [4.0]


def _scaled(x, *, scale=2.0):
    return jnp.sum(jnp.sin(x) * scale)


def _scaled_by(x, scale):
    return jnp.sum(jnp.sin(x) * scale)


@pytest.mark.parametrize(
    ("f", "options"),
    [
        (_scaled, {}),
        (_scaled, {"static_argnames": "scale"}),
        (_scaled_by, {}),
        (jax.jit(_scaled, static_argnames="scale"), {}),
    ],
    ids=["keyword-only", "static keyword-only", "by keyword", "jitted, static"],
)
def test_keyword_arguments_reach_f_undifferentiated_as_in_jax_grad(f, options):
    x = jnp.linspace(0.0, 1.0, 3)
    want = jax.grad(f)(x, scale=3.0)
    [got] = grad_graph(f, **options)(x, scale=3.0).values_of("gradient")
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got, 3.0 * np.cos(np.asarray(x)), rtol=1e-6)
    assert draw_grad(f, **options)(x, scale=3.0).title.startswith("grad of ")


def test_arrays_show_their_type_and_first_entries():
    d = draw_grad(lambda x: jnp.sum(x**2))(jnp.arange(5.0))
    assert '\\nf32[5] [0.0, 2.0, 4.0, …]"' in d.source


def test_without_values_nodes_show_types_only():
    graph = _graph("cubic", values=False)
    assert all(v is None for n in graph.nodes.values() for v in n.values)
    d = draw_grad(cubic, values=False)(1.3)
    assert "1.3" not in d.source and "f32[]" in d.source


def _three(a, b, c):
    return (a * 2.0 + b * 3.0 * c).sum()


@pytest.mark.parametrize("argnums", [(1, 0), (2, 0, 1), (0, 2)])
def test_the_gradients_come_in_argnums_order_as_jax_grad_returns_them(argnums):
    args = (jnp.float32(1.0), jnp.arange(2.0), jnp.float32(5.0))
    graph = grad_graph(_three, argnums=argnums)(*args)
    want = jax.grad(_three, argnums)(*args)
    for got, expected in zip(graph.values_of("gradient"), want, strict=True):
        np.testing.assert_allclose(got, expected)
    names = "abc"
    assert [n.label for n in graph.select("gradient")] == [
        f"∂_three/∂{names[i]}" for i in argnums
    ]
