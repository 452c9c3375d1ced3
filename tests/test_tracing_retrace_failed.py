"""A call that raises while `f` is traced: jax.jit keeps no trace of it, so
explain_retraces counts none, and its counts agree with its report.

Oracle: `jax.jit` of the same function, whose Python side effect shows each trace.
"""

import contextlib

import jax
import jax.numpy as jnp
import pytest

from jaxtour.tracing import explain_retraces

SIZES = [2, 2, 3, 3, 2, 4, 3]  # a call of size 2 raises while traced


def _counting() -> tuple:
    """A function that notes each trace's size and raises at size 2, and the notes."""
    traced: list[int] = []

    def f(x):
        traced.append(x.shape[0])
        if x.shape[0] == 2:
            raise ValueError("size 2 is not allowed")
        return x * 2

    return f, traced


def _run(fn) -> None:
    for n in SIZES:
        with contextlib.suppress(ValueError):  # the oracle's and ours alike
            fn(jnp.ones(n))


def test_a_trace_that_raised_is_not_counted_as_jax_jit_does_not_keep_it():
    """Issue: each call that raised was counted a trace (5 here, 2 in the report)."""
    f, traced = _counting()
    _run(jax.jit(f))
    assert traced == [2, 2, 3, 2, 4]  # jit traced size 2 each time: nothing kept
    kept = sum(n != 2 for n in traced)
    f, traced = _counting()
    retraced = explain_retraces(f)
    _run(retraced)
    assert retraced.traces == kept == 2
    assert retraced.retraces == 1
    assert [c.event for c in retraced.calls] == [
        "first trace",
        "cache hit",
        "retrace",
        "cache hit",
    ]
    assert str(retraced.report).startswith("f: 4 calls, 2 traces (1 retrace), ")


def test_a_call_that_raised_then_succeeds_is_a_first_trace():
    f, _ = _counting()
    retraced = explain_retraces(f)
    with pytest.raises(ValueError, match="size 2"):
        retraced(jnp.ones(2))
    assert retraced.traces == 0
    retraced(jnp.ones(3))
    assert (retraced.traces, retraced.calls[-1].event) == (1, "first trace")
