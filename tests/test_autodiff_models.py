"""Models as people write them, differentiated as their framework's own grad does.

Equinox modules against `eqx.filter_grad`, Flax NNX modules against `nnx.grad`, None
leaves and Python ints against `jax.grad`; the picture names the leaves held fixed.
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from jaxtour.autodiff import draw_grad, draw_vjp, grad_graph

X = jnp.linspace(-1.0, 1.0, 15).reshape(5, 3)
Y = jnp.cos(X[:, :2])


def mse(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


@pytest.fixture(scope="module")
def mlp():
    return eqx.nn.MLP(3, 2, 4, 2, key=jax.random.key(0))


def _close(got, want):
    want = jax.tree.leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_an_equinox_module_is_differentiated_as_filter_grad(mlp):
    graph = grad_graph(mse)(mlp, X, Y)
    _close(graph.values_of("gradient"), eqx.filter_grad(mse)(mlp, X, Y))
    assert graph.note == (
        "held fixed (not differentiated): model.activation, model.final_activation"
    )


def test_the_picture_names_the_leaves_held_fixed(mlp):
    source = draw_grad(mse)(mlp, X, Y).source
    assert "held fixed (not differentiated): model.activation," in source


def test_none_leaves_after_eqx_partition_are_empty_pytrees(mlp):
    params, static = eqx.partition(mlp, eqx.is_array)

    def loss(params, static, x, y):
        return mse(eqx.combine(params, static), x, y)

    graph = grad_graph(loss)(params, static, X, Y)
    _close(graph.values_of("gradient"), jax.grad(loss)(params, static, X, Y))
    assert graph.note == ""


def test_a_python_int_left_out_of_argnums_stays_a_python_int():
    def f(w, n):
        for _ in range(n):  # a tracer here would fail, as it does not in jax.grad
            w = jnp.sin(w)
        return w.sum()

    graph = grad_graph(f)(jnp.ones(3), 3)
    _close(graph.values_of("gradient"), jax.grad(f)(jnp.ones(3), 3))


class _Net(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.lin = nnx.Linear(3, 2, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.lin(x))


def _nnx_loss(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


def test_an_nnx_module_with_dropout_is_differentiated_as_nnx_grad():
    model = _Net(nnx.Rngs(0))
    graph = grad_graph(_nnx_loss)(model, X, Y)  # first: the lens must not advance rngs
    want = nnx.grad(_nnx_loss)(model, X, Y)
    _close(graph.values_of("gradient"), want)
    assert graph.note == (
        "held fixed (not differentiated): model.drop.rngs.count.value, "
        "model.drop.rngs.key.value"
    )


def test_draw_vjp_takes_a_module_too(mlp):
    title = draw_vjp(mse)(mlp, X, Y).title
    assert title.startswith("vjp of mse: ")
