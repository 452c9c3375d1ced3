"""Lesson 01's exercises: a jit-safe function, an honest timer, a jaxpr read off its picture.

Each checker uses JAX itself as the oracle and raises `Wrong` with the specific
mistake a student is likely to make: a Python `if` on a traced array, a `log` that
gives nan or -inf, a gradient that is nan at 0 (one `where`, no safe input), a timer
that stops before the work is done or counts compilation, a count that includes the
wrong boxes.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._expect import expect_close, whole_number
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._remote import in_answer
from jaxtour.exercises._tracing import under_jit

LESSON = "01_why_jax"


# --- ex_safe_log: Python control flow replaced by jnp.where ------------------------------


@checks(LESSON, "ex_safe_log", title="a jit-safe logarithm")
def _check_safe_log(fn: Callable) -> None:
    """Practises replacing a Python `if` on an array with `jnp.where`, so `jax.jit` can
    trace it."""
    # a scalar first: a Python `if` on it under jit -> Wrong, in plain words
    _expect_log(under_jit(fn, jnp.float32(-1.0)), jnp.float32(-1.0))
    _expect_log(under_jit(fn, jnp.float32(0.0)), jnp.float32(0.0))
    _expect_log(
        under_jit(fn, jnp.array([2.0, 1.0, 0.5, 0.0, -3.0], jnp.float32)),
        jnp.array([2.0, 1.0, 0.5, 0.0, -3.0], jnp.float32),
    )
    _expect_finite_grad(fn)


def _expect_log(got: Any, x: jax.Array) -> None:
    """`got` is log(x) where x > 0 and 0 elsewhere; name nan and -inf specifically."""
    x64 = np.asarray(x, np.float64)
    want = jnp.asarray(
        np.where(x64 > 0, np.log(np.where(x64 > 0, x64, 1.0)), 0.0), x.dtype
    )
    where = f"x = {x64.tolist()} under jax.jit"
    if isinstance(got, jax.Array | np.ndarray) and np.shape(got) == want.shape:
        values = np.atleast_1d(np.asarray(got))
        for what, bad, why in (
            ("nan", np.isnan(values), "of a negative number is nan"),
            ("-inf", values == -np.inf, "of zero is -inf"),
        ):
            if bad.any():
                at = float(np.atleast_1d(x64)[np.argmax(bad)])
                raise Wrong(
                    f"at x = {at:g} your function gives {what} (`jnp.log` {why}), and the "
                    "task asks for 0 there. Choose per element with "
                    "`jnp.where(x > 0, ..., 0.0)`."
                )
    expect_close(got, want, where=where)


def _jit_grad(fn: Callable, x: jax.Array) -> Any:
    """`jax.jit(jax.grad(fn))(x)` (run where the answer runs)."""
    return under_jit(jax.grad(fn), x)


def _expect_finite_grad(fn: Callable) -> None:
    """`jax.grad(fn)` is finite at 0, where the answer is the constant 0."""
    slope = float(in_answer(fn, _jit_grad, jnp.float32(0.0)))
    if not np.isfinite(slope):
        raise Wrong(
            f"your values are right, but `jax.grad(ex_safe_log)(0.0)` is {slope}: "
            "`jnp.where` differentiates both branches, `jnp.log`'s derivative at 0 is "
            "infinite, and the 0 that `where` sends that branch times infinity is nan. "
            "Give `jnp.log` a safe input too: `jnp.log(jnp.where(x > 0, x, 1.0))`."
        )


# --- ex_time_call: block_until_ready, and compile before timing --------------------------
# The verdict rests on what this checker measures itself: how long the whole call of the
# student's timer took (`wall`, here, around the call) and how long the work takes. A
# time longer than the call, one that does not grow with the work, or one that holds
# most of a call spent compiling is not a time of the work.

BIG, SMALL = 1000, 250  # matmul sizes: 64 times the work
_SLACK = 2e-3  # seconds a timer's clock may run past the call that we time around it


def _matmul(a: jax.Array) -> Any:
    return a @ a


def _compile_heavy_case() -> tuple[Callable, jax.Array]:
    """A fresh jitted function that takes long to compile and microseconds to run.

    Fresh to every cache: its program adds a constant drawn anew each time, so neither
    `jit`'s own cache nor a persistent compilation cache (JAX_COMPILATION_CACHE_DIR, which
    an earlier check in this process or another would have filled) has compiled it.
    """
    offset = random.random()

    def chain(x: jax.Array) -> Any:
        x = x + offset
        for i in range(60):
            x = jnp.sin(x) * (1.0 + i * 1e-3)
        return x

    return jax.jit(chain), jnp.float32(0.3)


def _fastest_blocked(f: Callable, x: jax.Array, repeat: int = 3) -> float:
    jax.block_until_ready(f(x))  # compiled first
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(f(x))
        times.append(time.perf_counter() - start)
    return min(times)


def _seconds(answer: Any, case: str) -> float:
    if not isinstance(answer, int | float | np.floating) or isinstance(answer, bool):
        raise Wrong(
            f"for {case} your function returned {type(answer).__name__} "
            f"{answer!r}: return the time in seconds, a Python float"
        )
    return float(answer)


def _timed_matmul(fn: Callable, size: int) -> tuple[Any, int]:
    """The student's time of a jitted matmul of `size`, and how often it called f
    (run where the answer runs: only the two numbers come back)."""
    f = _Recorded(jax.jit(_matmul))
    return fn(f, jnp.ones((size, size), jnp.float32)), len(f.durations)


def _timed_fresh(fn: Callable) -> tuple[Any, int]:
    """The student's time of a fresh compile-heavy function, and how often it called f."""
    f = _Recorded(_compile_heavy_case()[0])
    return fn(f, jnp.float32(0.3)), len(f.durations)


def _time_around(fn: Callable, probe: Callable, *args: Any) -> tuple[float, float]:
    """(the student's time, the seconds its whole call took, measured here)."""
    start = time.perf_counter()
    answer, calls = in_answer(fn, probe, *args)
    wall = time.perf_counter() - start
    if calls == 0:
        raise Wrong(
            "your function never called `f`: time `f(x)`, the call it was given"
        )
    timed = _seconds(answer, "a jitted matmul" if args else "a fresh jitted function")
    if not 0 < timed <= wall + _SLACK:
        raise Wrong(
            f"your function says {timed:.3g} s, but the whole call of it took {wall:.3g} s: "
            "return the time the clock measured, `time.perf_counter() - start`"
        )
    return timed, wall


@checks(LESSON, "ex_time_call", title="time a jitted call honestly")
def _check_time_call(fn: Callable) -> None:
    """Practises timing JAX code: compile first, then stop the clock after
    `.block_until_ready()`."""
    work = _fastest_blocked(jax.jit(_matmul), jnp.ones((BIG, BIG), jnp.float32))
    # the fastest of a few answers: on a busy machine one dispatch can stall for
    # milliseconds, but not every one of them
    big = min(_time_around(fn, _timed_matmul, BIG)[0] for _ in range(3))
    if big < 0.25 * work:
        raise Wrong(
            f"your time for a jitted matmul is {big * 1e3:.3f} ms, but the work takes "
            f"at least {work * 1e3:.1f} ms: you stopped the clock when the call returned, "
            "not when the work was done (asynchronous dispatch). End the timed call with "
            "`.block_until_ready()`."
        )
    small = min(_time_around(fn, _timed_matmul, SMALL)[0] for _ in range(3))
    if big < 3 * small:
        raise Wrong(
            f"your times do not follow the work: {small * 1e3:.2f} ms for a {SMALL}² matmul "
            f"and {big * 1e3:.2f} ms for a {BIG}² one, 64 times the work. Time the call "
            "`f(x)` itself, between two readings of `time.perf_counter()`."
        )
    # a clock that contains the first call (tracing, compiling) reads most of the
    # whole call, however busy the machine; a warmed-up call is a sliver of it
    attempts = [_time_around(fn, _timed_fresh) for _ in range(2)]
    if all(timed >= 0.5 * wall for timed, wall in attempts):
        timed, wall = attempts[-1]
        raise Wrong(
            f"for a freshly jitted function your time is {timed * 1e3:.0f} ms of the "
            f"{wall * 1e3:.0f} ms your whole function took, most of it the first call "
            "(tracing and compiling): your timer counted compilation. Call `f(x)` once "
            "(and wait for it) before you start the clock."
        )


class _Recorded:
    """A jitted function as the student's timer sees it, each call's duration noted."""

    def __init__(self, f: Callable) -> None:
        self._f = f
        self.durations: list[float] = []

    def __call__(self, *args: Any) -> Any:
        start = time.perf_counter()
        out = self._f(*args)
        self.durations.append(time.perf_counter() - start)
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)  # .lower(...) and friends, as on jax.jit


# --- ex_gelu_jaxpr: read a count off draw_jaxpr -----------------------------------------


def _gelu(x: jax.Array) -> Any:
    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x**3)))


@checks(LESSON, "ex_gelu_jaxpr", title="read gelu's jaxpr off its picture")
def _check_gelu_jaxpr(fn: Callable) -> None:
    """Practises reading a jaxpr drawn by `draw_jaxpr`: one box per primitive JAX
    traced."""
    names = [e.primitive.name for e in jax.make_jaxpr(_gelu)(jnp.ones(4)).jaxpr.eqns]
    want = (len(names), names.count("mul"))
    answer = fn()
    counts = (
        [whole_number(a) for a in answer] if isinstance(answer, tuple | list) else []
    )
    match counts:  # "two numbers": (13, 5) or [13, 5]
        case [int(equations), int(muls)]:
            pass
        case _:
            raise Wrong(
                f"return two whole numbers, (equations, mul boxes); got {answer!r}"
            )
    if muls == want[1] + names.count("integer_pow"):
        raise Wrong(
            f"{muls} mul boxes counts `x**3` as well: in the picture it is its own "
            "primitive, `integer_pow`, not a `mul`."
        )
    if muls != want[1]:
        raise Wrong(
            f"the drawing does not show {muls} boxes labelled `mul`: count the boxes "
            "whose first line is exactly `mul`."
        )
    if equations != want[0]:
        more = "more" if equations < want[0] else "fewer"
        raise Wrong(
            f"the number of `mul` boxes is right, but the drawing has {more} "
            f"than {equations} equations: count every box between the input and the "
            "output, `convert_element_type` and `sqrt` of a constant included (the "
            "picture's title says how many)."
        )
