"""Lesson 02's exercises: `grad` from `vjp`, a Jacobian from `vmap` of `jvp`, a VJP read off
its picture.

The oracles are `jax.grad`, `jax.jacfwd` and `jax.vjp`; each checker names the mistakes
students make: a zero or missing seed cotangent, the transposed Jacobian, one JVP
instead of one per basis vector, the magnitude instead of the signed cotangent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._expect import expect_close
from jaxtour.exercises._probes import primitives_of
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._remote import in_answer
from jaxtour.exercises._tracing import under_jit
from jaxtour.exercises._uses import first_use

LESSON = "02_close_to_the_math"


def _forbid(fn: Callable, names: dict[str, str], task: str) -> None:
    """Wrong if `fn` or a helper of its own uses `jax.<name>`: spelt, or reached another
    way (an alias, a default argument, an attribute, a method: see `_probes.uses`)."""
    use = first_use(fn, {name: getattr(jax, name) for name in names})
    if use is not None:
        raise Wrong(
            f"this may give the right numbers, but it uses `jax.{use.name}`{use.where}: "
            f"the task is to build it from {names[use.name]}. {task}"
        )


# --- ex_grad_from_vjp -------------------------------------------------------------------


def _sum_of_squares(x: jax.Array) -> Any:
    return jnp.sum(x**2)


@checks(LESSON, "ex_grad_from_vjp", title="gradient from `vjp`")
def _check_grad_from_vjp(fn: Callable) -> None:
    """Practises building `grad` from `jax.vjp`: reverse mode with a seed
    cotangent of 1."""
    cases = [
        (jnp.sin, jnp.float32(0.5), "f = sin, x = 0.5"),
        (
            _sum_of_squares,
            jnp.array([1.0, -2.0, 3.0], jnp.float32),
            "f = sum(x**2), x = [1, -2, 3]",
        ),
    ]
    for f, x, where in cases:
        got, want = fn(f, x), jax.grad(f)(x)
        same_shape = isinstance(got, jax.Array | np.ndarray) and np.shape(
            got
        ) == np.shape(want)
        if same_shape and np.allclose(got, 0.0) and not np.allclose(want, 0.0):
            raise Wrong(
                f"at {where}: your gradient is all zeros: the seed cotangent "
                "must be 1.0 (`jnp.ones_like(y)`), not 0; the VJP is linear, "
                "so a zero seed pulls back zero."
            )
        expect_close(got, want, where=where)
    _forbid(
        fn,
        {
            "grad": "`jax.vjp` only",
            "jacrev": "`jax.vjp` only",
            "value_and_grad": "`jax.vjp` only",
        },
        "",
    )
    expect_close(
        under_jit(fn, jnp.sin, jnp.float32(1.0)),
        jnp.cos(jnp.float32(1.0)),
        where="f = sin, x = 1.0 under jax.jit",
    )


# --- ex_jacobian_from_jvp ---------------------------------------------------------------


def _g(
    x: jax.Array,
) -> Any:  # R³ → R², not square, so a transposed answer shows in its shape
    return jnp.stack([jnp.sin(x[0]) * x[1], jnp.sum(x**2)])


def _h(x: jax.Array) -> Any:  # R² → R⁴
    return jnp.concatenate([jnp.tanh(x), x[0] * x[1] * jnp.ones(2)])


@checks(LESSON, "ex_jacobian_from_jvp", title="a Jacobian from `vmap` of `jvp`")
def _check_jacobian_from_jvp(fn: Callable) -> None:
    """Practises forward mode by hand: `jax.vmap` of `jax.jvp` over a basis is
    `jax.jacfwd`."""
    _forbid(
        fn,
        {
            "jacfwd": "`jax.jvp` and `jax.vmap`",
            "jacrev": "`jax.jvp` and `jax.vmap`",
            "jacobian": "`jax.jvp` and `jax.vmap`",
        },
        "",
    )
    cases = [
        (_g, jnp.array([0.5, -1.0, 2.0], jnp.float32), "f: R³ → R², x = [0.5, -1, 2]"),
        (_h, jnp.array([0.3, -0.7], jnp.float32), "f: R² → R⁴, x = [0.3, -0.7]"),
    ]
    for f, x, where in cases:
        got, want = fn(f, x), jax.jacfwd(f)(x)
        shape = np.shape(got) if isinstance(got, jax.Array | np.ndarray) else None
        if shape == want.T.shape and np.allclose(np.asarray(got).T, want, atol=1e-5):
            raise Wrong(
                f"at {where}: your matrix is the transpose, {shape}: the Jacobian of "
                f"f: Rⁿ → Rᵐ is m × n, its column j is the JVP along basis vector j. vmap "
                "stacks the JVPs as rows: pass `out_axes=1` to `jax.vmap` (or transpose)."
            )
        if shape == want.shape[:1] and np.allclose(
            got, want @ np.ones(x.shape[0]), atol=1e-5
        ):
            raise Wrong(
                f"at {where}: you returned one JVP, J·v for v = ones: a single column's worth. "
                "Push every basis vector through: `jax.vmap` over the rows of `jnp.eye(n)`."
            )
        expect_close(got, want, where=where)
    if first_use(fn, {"vmap": jax.vmap}) is None:  # in a helper of its own too
        raise Wrong(
            "the numbers are right, but the JVPs run one at a time in Python: "
            "use `jax.vmap` over the basis, so they run as one batched pass."
        )


# --- ex_biggest_cotangent: read draw_vjp ------------------------------------------------

_A = jnp.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]], jnp.float32)


def _sin_of_matmul(x: jax.Array) -> Any:  # the lesson's g for draw_vjp: R³ → R²
    return jnp.sin(_A @ x)


@checks(LESSON, "ex_biggest_cotangent", title="read a VJP off its picture")
def _check_biggest_cotangent(fn: Callable) -> None:
    """Practises reading `draw_vjp`: the cotangent uᵀJ that reverse mode pulls back to
    each input."""
    x3 = jnp.array([0.5, -1.0, 2.0], jnp.float32)
    u = jnp.array([1.0, -2.0], jnp.float32)
    (pulled,) = jax.vjp(_sin_of_matmul, x3)[1](u)
    index = int(jnp.argmax(jnp.abs(pulled)))
    value = float(pulled[index])
    answer = fn()
    if not (isinstance(answer, tuple | list) and len(answer) == 2):
        raise Wrong(
            f"return a pair (index of the input, its cotangent); got {answer!r}"
        )
    got_index, got_value = answer
    if got_index == index + 1:
        raise Wrong(
            f"input {got_index} counts from 1: Python (and `x3[i]`) counts from 0."
        )
    if got_index != index:
        raise Wrong(
            f"input {got_index} is not the one with the largest cotangent in the "
            "picture: compare the magnitudes of the three numbers in the box "
            '"cotangent of x".'
        )
    if np.isclose(got_value, -value, atol=0.01):
        raise Wrong(
            f"the index is right, but the sign is not: the box shows {value:.2f}; "
            "the cotangent is signed."
        )
    if not np.isclose(got_value, value, atol=0.01):
        raise Wrong(
            f"the index is right, but {got_value} is not the value in its box "
            "(to two decimals)."
        )


# --- ex_clip_by_norm: a custom_vjp ------------------------------------------------------


def _pulled(fn: Callable, x: jax.Array, cotangent: jax.Array, jit: bool = False) -> Any:
    """The cotangent `fn`'s backward rule pulls back to `x` (run where `fn` runs)."""

    def pulled(cotangent: jax.Array) -> Any:
        return jax.grad(lambda v: jnp.sum(cotangent * fn(v)))(x)

    return (jax.jit(pulled) if jit else pulled)(cotangent)


@checks(LESSON, "ex_clip_by_norm", title="gradient clipping by norm with `custom_vjp`")
def _check_clip_by_norm(fn: Callable) -> None:
    """Practises `jax.custom_vjp`: a forward rule, a backward rule, and which one
    `grad` uses."""
    x = jnp.array([3.0, 4.0], jnp.float32)
    expect_close(fn(x), x, where="the value at x = [3, 4]: the identity")
    # nested ones too: a jitted answer's custom_vjp is inside its `jit` equation
    if "custom_vjp_call" not in in_answer(fn, primitives_of, x):
        raise Wrong(
            "there is no `jax.custom_vjp` in your program: define the identity with "
            "`@jax.custom_vjp`, then give it its rules with `.defvjp(forward, backward)`."
        )
    long_cotangent = jnp.array([6.0, 8.0], jnp.float32)  # norm 10: shrinks to norm 1

    def pulled(cotangent: jax.Array, jit: bool = False) -> Any:
        return in_answer(fn, _pulled, x, cotangent, jit)

    got = pulled(long_cotangent)
    if np.allclose(got, long_cotangent):
        raise Wrong(
            "the cotangent [6, 8] came back unchanged: your backward rule is not "
            "rescaling it (is it returning `g` as it is?)."
        )
    if np.allclose(got, [1.0, 1.0]):
        raise Wrong(
            "you clipped each element to [-1, 1]; the task clips the vector's norm: "
            "[6, 8] (norm 10) should come back as [0.6, 0.8]."
        )
    expect_close(got, long_cotangent / 10.0, where="the cotangent [6, 8], norm 10")
    short_cotangent = jnp.array([0.3, 0.4], jnp.float32)  # norm 0.5: unchanged
    if np.allclose(pulled(short_cotangent), [0.6, 0.8]):
        raise Wrong(
            "you rescaled a short cotangent up to norm 1: only a cotangent longer "
            "than 1 shrinks; g · min(1, 1/‖g‖) leaves [0.3, 0.4] as it is."
        )
    expect_close(
        pulled(short_cotangent), short_cotangent, where="the cotangent [0.3, 0.4]"
    )
    expect_close(
        pulled(long_cotangent, jit=True), long_cotangent / 10.0, where="under jax.jit"
    )
