"""jaxtour._ir checked tracing: bad arguments named, the user's own errors kept."""

import jax.numpy as jnp
import pytest

from jaxtour import _ir


def test_a_non_callable_is_named():
    with pytest.raises(
        TypeError, match=r"draw_x needs a function to trace.*got 3 \(int\)"
    ):
        _ir.check_callable(3, "draw_x")


def test_leaves_jax_cannot_trace_are_held_as_constants():
    """As eqx.filter_jit: a string and a function inside the arguments are held."""

    def f(x, cfg):
        return cfg["act"](x) * 2 if cfg["mode"] == "double" else x

    cfg = {"act": jnp.sin, "mode": "double", "w": jnp.ones(2)}
    traced, part = _ir.trace_split(f, (jnp.ones(2), cfg), {}, who="draw_x")
    assert part.held == ("cfg['act']", "cfg['mode']")
    assert len(traced.jaxpr.jaxpr.invars) == len(part.leaves()) == 2
    assert _ir.primitive_counts(traced.jaxpr.jaxpr)["sin"] == 1
    out = traced.lower().compile()(*part.dynamic()[0])
    assert (out == f(jnp.ones(2), cfg)).all()


def test_a_warm_trace_with_held_leaves_hits_jaxs_cache():
    def f(x, act):
        return act(x)

    first = _ir.trace(f, (jnp.ones(2), jnp.cos), {}, who="draw_x")
    again = _ir.trace(f, (jnp.ones(2), jnp.cos), {}, who="draw_x")
    assert first.jaxpr is again.jaxpr


@pytest.mark.parametrize("nums", [None, -1, (-1,), 1])
def test_static_argnums_read_as_jax_jit_reads_them(nums):
    def f(x, n=2):
        return x * n

    traced = _ir.trace(f, (jnp.ones(2), 3), {}, who="draw_x", static_argnums=nums)
    consts = len(traced.jaxpr.jaxpr.invars)
    assert consts == (2 if nums is None else 1)


def test_static_argnames_hold_a_keyword():
    def f(x, *, mode="sin"):
        return jnp.sin(x) if mode == "sin" else jnp.cos(x)

    traced = _ir.trace(f, (1.0,), {"mode": "cos"}, who="draw_x", static_argnames="mode")
    assert _ir.primitive_counts(traced.jaxpr.jaxpr)["cos"] == 1


def test_keyword_arguments_are_named_too():
    with pytest.raises(
        TypeError,
        match=r"draw_x cannot trace kwargs\['mode'\]\['how'\]: "
        r"it is 'fast' \(str\)",
    ):
        _ir.check_args((1.0,), {"mode": {"how": "fast"}}, _ir.StaticArgs(), "draw_x")


def test_static_argnums_let_a_string_through():
    traced = _ir.trace(
        lambda x, mode: x * 2 if mode == "double" else x,
        (1.0, "double"),
        {},
        who="draw_x",
        static_argnums=(1,),
    )
    assert _ir.primitive_counts(traced.jaxpr.jaxpr)["mul"] == 1


def test_the_users_own_exception_propagates_with_a_note():
    class Oops(ValueError):
        pass

    def broken(x):
        raise Oops("my message")

    with pytest.raises(Oops, match="my message") as info:
        _ir.trace(broken, (jnp.ones(3),), {}, who="draw_x")
    assert any("draw_x traced broken(f32[3])" in note for note in info.value.__notes__)
