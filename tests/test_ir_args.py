"""jaxtour._ir checked tracing: bad arguments named, the user's own errors kept."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxtour.autodiff
import jaxtour.cost
import jaxtour.tracing
import jaxtour.viz
from jaxtour import _ir


def test_a_non_callable_is_named():
    with pytest.raises(
        TypeError, match=r"draw_x needs a function to trace.*got 3 \(int\)"
    ):
        _ir.check_callable(3, "draw_x")


@pytest.mark.parametrize(
    "lens",
    [
        lambda f: jaxtour.viz.draw_jaxpr(f)(1.0),
        lambda f: jaxtour.autodiff.draw_grad(f)(1.0),
        lambda f: jaxtour.tracing.find_nans(f)(1.0),
        lambda f: jaxtour.cost.cost_table(f)(1.0),
    ],
    ids=["draw_jaxpr", "draw_grad", "find_nans", "cost_table"],
)
def test_a_numpy_ufunc_is_refused_with_its_jax_numpy_twin(lens):
    # jax.jit takes np.sin and the process can crash on the first call
    with pytest.raises(TypeError, match=r"cannot trace np\.sin: it is a NumPy ufunc"):
        lens(np.sin)
    with pytest.raises(TypeError, match=r"Pass jnp\.sin instead\.$"):
        lens(np.sin)


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


def _five(a, b, /, c, d=1.0, *, e=2.0):
    return a + b + c + d + e


@pytest.mark.parametrize(
    "opts",
    [
        {"static_argnums": 2},  # c by position: its name inferred
        {"static_argnums": -1},  # the last positional argument of the call: c
        {"static_argnames": "d"},  # d by name: its position inferred
        {"static_argnames": "e"},  # keyword-only: no position
        {"static_argnums": 0, "static_argnames": "c"},  # both given: nothing inferred
        {"static_argnums": None, "static_argnames": None},
        {"static_argnums": (), "static_argnames": "d"},  # a lens's default () is None
    ],
)
@pytest.mark.parametrize("d_by_keyword", [False, True])
def test_static_args_are_what_jax_jit_makes_static(opts, d_by_keyword):
    """Oracle: how many inputs jax.jit's own jaxpr keeps, the static ones left out."""
    args, kwargs = (1.0, 2.0, 3.0), {"e": 5.0}
    if d_by_keyword:
        kwargs["d"] = 4.0
    else:
        args += (4.0,)
    jax_opts = {k: (None if v == () else v) for k, v in opts.items()}
    want = len(jax.jit(_five, **jax_opts).trace(*args, **kwargs).jaxpr.jaxpr.invars)
    statics = _ir.static_args(
        _five, opts.get("static_argnums"), opts.get("static_argnames")
    )
    static = len(statics.positions(len(args))) + sum(k in statics.names for k in kwargs)
    assert 5 - static == want


def test_a_positional_only_name_is_refused_with_its_position():
    with pytest.raises(ValueError) as err:
        _ir.static_args(_five, None, "b", "draw_x")
    assert str(err.value) == (
        "draw_x: static_argnames='b' names a positional-only parameter of "
        "_five(a, b, c, d, e), which cannot be passed by name. Use static_argnums=1 "
        "instead."
    )


def test_a_function_without_a_signature_takes_the_options_as_given():
    assert _ir.static_args(max, 1, "key") == _ir.StaticArgs((1,), ("key",))
