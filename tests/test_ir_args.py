"""jaxtour._ir checked tracing: bad arguments named, the user's own errors kept."""

import jax.numpy as jnp
import pytest

from jaxtour import _ir


def test_a_non_callable_is_named():
    with pytest.raises(
        TypeError, match=r"draw_x needs a function to trace.*got 3 \(int\)"
    ):
        _ir.check_callable(3, "draw_x")


@pytest.mark.parametrize(
    ("args", "where", "what"),
    [
        (("abc",), r"args\[0\]", r"'abc' \(str\)"),
        ((jnp.ones(2), {"w": object()}), r"args\[1\]\['w'\]", r"object"),
    ],
)
def test_untraceable_arguments_are_named(args, where, what):
    with pytest.raises(
        TypeError,
        match=rf"draw_x cannot trace {where}: it is .*{what}.*"
        r"static_argnums",
    ):
        _ir.trace(lambda *a: a[0], args, {}, who="draw_x")


def test_keyword_arguments_are_named_too():
    with pytest.raises(
        TypeError,
        match=r"draw_x cannot trace kwargs\['mode'\]\['how'\]: "
        r"it is 'fast' \(str\)",
    ):
        _ir.check_args((1.0,), {"mode": {"how": "fast"}}, (), "draw_x")


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
