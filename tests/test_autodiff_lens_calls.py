"""How the autodiff lenses are called, as JAX's transformations are: what `jax.jvp` takes
at a static primal, one argument where two tuples are due, and each lens naming itself
in its errors."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.autodiff import (
    draw_grad,
    draw_jvp,
    grad_graph,
    jvp_graph,
    vjp_graph,
)

X = jnp.arange(3.0)
FLOAT0 = np.zeros((), jax.dtypes.float0)


def _raises(error, message, call):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def _scaled_sum(x, n):
    return (x * n).sum()


def test_a_float0_tangent_at_a_static_primal_is_taken_as_jax_jvp_takes_it():
    f = jax.jit(_scaled_sum, static_argnums=1)
    out, out_dot = jax.jvp(f, (X, 3), (jnp.ones(3), FLOAT0))
    graph = jvp_graph(f)((X, 3), (jnp.ones(3), FLOAT0))
    np.testing.assert_allclose(graph.values_of("output"), [out, out_dot])
    told = jvp_graph(_scaled_sum, static_argnums=1)((X, 3), (jnp.ones(3), FLOAT0))
    np.testing.assert_allclose(told.values_of("output"), [out, out_dot])
    assert draw_jvp(f)((X, 3), (jnp.ones(3), FLOAT0)).title.startswith("jvp of")


def test_a_wrong_tangent_at_a_static_primal_is_told_without_contradiction():
    f = jax.jit(_scaled_sum, static_argnums=1)
    _raises(
        TypeError,
        "draw_jvp: with static arguments at positions [1], a static primal's tangent "
        "is never read: give None (or a float0 zero, as jax.jvp takes) at position 1, "
        "or leave it out; got f32[].",
        lambda: draw_jvp(f)((X, 3), (jnp.ones(3), jnp.ones(()))),
    )
    _raises(
        TypeError,
        "draw_jvp: with static arguments at positions [1], pass one tangent per primal "
        "(2; None or a float0 zero at a static one) or one for each of the other 1; "
        "got 3 tangents.",
        lambda: draw_jvp(f)((X, 3), (jnp.ones(3), None, None)),
    )


def test_one_argument_where_two_tuples_are_due_is_told_how_to_call():
    message = (
        "draw_jvp(f)(primals, tangents) takes two tuples, as jax.jvp does; got "
        "1 argument (ArrayImpl). For one argument write draw_jvp(f)((x,), (1.0,))."
    )
    _raises(TypeError, message, lambda: draw_jvp(jnp.sin)(X))
    _raises(
        TypeError,
        message.replace("1 argument (ArrayImpl)", "0 arguments"),
        lambda: draw_jvp(jnp.sin)(),
    )
    _raises(
        TypeError,
        message.replace("draw_jvp", "jvp_graph"),
        lambda: jvp_graph(jnp.sin)(X),
    )


def test_each_lens_names_itself_in_its_errors():
    for lens in (grad_graph, draw_grad):
        name = lens.__name__
        _raises(
            ValueError,
            f"{name}: argnums=2 is out of range: f was called with 1 positional "
            "argument (valid positions: 0..0). Pass the example arguments in the "
            f"call, e.g. {name}(f, argnums=1)(x, y).",
            lambda lens=lens: lens(jnp.sin, argnums=2)(1.0),
        )
    _raises(
        ValueError,
        "grad_graph needs f to return a scalar, as jax.grad does; f returned f32[3]. "
        "To draw the backward pass for any output, use vjp_graph(f)(*args); or reduce "
        "the output to a scalar, e.g. grad_graph(lambda x: f(x).sum())(x).",
        lambda: grad_graph(jnp.sin)(X),
    )
    _raises(
        TypeError,
        "vjp_graph: cotangents must match f's output in structure and shape; "
        "expected f32[3], got f32[2].",
        lambda: vjp_graph(jnp.sin, jnp.ones(2))(X),
    )
    _raises(
        TypeError,
        "jvp_graph: tangents must match the primals in structure and shape; "
        "expected f32[3], got f32[2].",
        lambda: jvp_graph(jnp.sin)((X,), (jnp.ones(2),)),
    )
