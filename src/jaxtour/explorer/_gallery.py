"""The explorer's gallery: small functions that each show something JAX does.

A workshop can start from these with no code of its own. Every example is a plain
function of example arguments that `jax.grad`, `jax.vmap`, `jax.jvp` and `jax.jit` can
all take (the factorial loop's integer argument is there to show what `grad` says).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from jax import lax


class Example(NamedTuple):
    """A gallery entry: `load()` gives (function, example arguments); `about` says what."""

    load: Callable[[], tuple[Callable, tuple]]
    about: str


def _fixed(fn: Callable, *args: Any) -> Callable[[], tuple[Callable, tuple]]:
    return lambda: (fn, args)


def cubic(x: jax.Array) -> jax.Array:
    """The polynomial of the autodiff lessons; at x = 1: f = 8, f' = 4."""
    return x**3 + 2 * x**2 - 3 * x + 8


def tanh(x: jax.Array) -> jax.Array:
    """One transcendental primitive: its derivative is 1 - tanh(x)**2."""
    return jnp.tanh(x)


def relu(x: jax.Array) -> jax.Array:
    """max(x, 0): a kink at 0, differentiated as JAX's `max` rule says."""
    return jnp.maximum(x, 0.0)


def sum_of_squares(xs: jax.Array) -> Any:
    """A `lax.scan` carrying a running total over the rows of `xs`."""

    def body(total: Any, x: jax.Array) -> tuple[Any, Any]:
        total = total + x * x
        return total, total

    total, _ = lax.scan(body, 0.0, xs)
    return total


def signed_square(x: jax.Array) -> jax.Array:
    """A `lax.cond`: x**2 for positive x, -x otherwise; both branches are traced."""
    return lax.cond(x > 0, lambda v: v**2, lambda v: -v, x)


def factorial(n: jax.Array | int) -> jax.Array:
    """n! with `lax.fori_loop`: a `while` in the jaxpr; an integer input, so no `grad`."""
    return lax.fori_loop(1, n + 1, lambda i, acc: acc * i, 1)


@functools.cache  # made once a session: initialising compiles a few small programs
def _mlp_example() -> tuple:
    from jaxtour import mlp  # imported when chosen: the gallery opens without it

    x, y = mlp.example_batch(8)  # random digit-shaped images: no download
    return mlp.init_params(jax.random.key(0)), x, y


def _mlp(name: str) -> Callable[[], tuple[Callable, tuple]]:
    def load() -> tuple[Callable, tuple]:
        from jaxtour import mlp

        return getattr(mlp, name), _mlp_example()

    return load


GALLERY: dict[str, Example] = {
    "cubic": Example(_fixed(cubic, 1.0), "x**3 + 2*x**2 - 3*x + 8 at x = 1.0"),
    "tanh": Example(_fixed(tanh, 0.5), "jnp.tanh at x = 0.5"),
    "relu": Example(_fixed(relu, 0.5), "jnp.maximum(x, 0) at x = 0.5"),
    "MLP loss": Example(
        _mlp("loss"), "jaxtour.mlp.loss(params, x, y) on 8 random images"
    ),
    "MLP step": Example(
        _mlp("update"), "jaxtour.mlp.update(params, x, y): one SGD step"
    ),
    "scan": Example(
        lambda: (sum_of_squares, (jnp.arange(1.0, 5.0),)),
        "lax.scan summing the squares of [1, 2, 3, 4]",
    ),
    "cond": Example(
        _fixed(signed_square, 0.5), "lax.cond(x > 0, square, negate) at x = 0.5"
    ),
    "factorial loop": Example(_fixed(factorial, 5), "lax.fori_loop computing 5!"),
}
