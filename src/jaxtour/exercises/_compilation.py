"""Lesson 03's exercises: a jit-safe function, and fusion read off a compiled-HLO drawing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxtour.exercises._expect import expect_close, expect_pair
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._tracing import side_effect_under_jit, under_jit

LESSON = "03_how_it_works"


def leaky_relu_reference(x: jax.Array) -> Any:
    """The oracle: x where x > 0, else 0.1 x (elementwise, for scalars and arrays)."""
    return jnp.where(x > 0, x, 0.1 * x)


@checks(LESSON, "ex_leaky_relu", title="make a function jit-safe")
def _check_leaky_relu(fn: Callable[..., Any]) -> None:
    """Practises removing a side effect and a Python `if` on a tracer so that `jax.jit`
    runs a function the same way on every call."""
    for value in (2.0, -3.0, 0.0):
        x = jnp.float32(value)
        expect_close(fn(x), leaky_relu_reference(x), where=f"x={float(x)}")
    under_jit(
        fn, jnp.float32(-1.5)
    )  # a Python `if` on a tracer becomes plain words here
    xs = jnp.array([-2.0, -0.5, 0.0, 1.5], jnp.float32)
    got = under_jit(fn, xs)
    expect_close(
        got, leaky_relu_reference(xs), where="x=[-2, -0.5, 0, 1.5] under jax.jit"
    )
    side_effect_under_jit(
        fn, xs, hint="Counting calls is not the function's job: drop it."
    )


# The two programs of the fusion exercise; the lesson defines the same two.


def program_a(x: jax.Array) -> Any:
    """An elementwise chain: sin, mul, add, tanh."""
    return jnp.tanh(jnp.sin(x) * 2.0 + 1.0)


def program_b(x: jax.Array) -> Any:
    """The same chain with a sort in the middle."""
    return jnp.tanh(jnp.sort(jnp.sin(x)) * 2.0 + 1.0)


def kernels(f: Callable[..., Any], x: jax.Array) -> int:
    """How many top-level ops (a fusion counts once) XLA compiles `f` into on this backend."""
    from jaxtour.viz import compare_stages

    return compare_stages(f)(x).compiled_ops


_NAMES = {
    "a": "program_a",
    "program_a": "program_a",
    "b": "program_b",
    "program_b": "program_b",
}


@checks(LESSON, "ex_fewer_kernels", title="which program fuses into fewer kernels")
def _check_fewer_kernels(fn: Callable[..., Any]) -> None:
    """Practises reading fusions off `draw_hlo(..., stage="compiled")` and
    `compare_stages`, and spotting the op that breaks a fusion."""
    answer = expect_pair(
        fn(),
        of="strings: the program with fewer kernels (e.g. "
        '"program_a") and the op that splits the other one (e.g. "tanh")',
    )
    program, splitter = (str(part).strip().lower() for part in answer)
    x = jnp.linspace(-1.0, 1.0, 1000)
    counts = {
        name: kernels(f, x)
        for name, f in (("program_a", program_a), ("program_b", program_b))
    }
    fewer = min(counts, key=lambda name: counts[name])
    if _NAMES.get(program) is None:
        raise Wrong(
            f'the first answer names a program: "program_a" or "program_b"; got '
            f"{answer[0]!r}"
        )
    if _NAMES[program] != fewer:
        raise Wrong(
            f"count the boxes in the two compiled drawings: {fewer} compiles into "
            f"{counts[fewer]} kernel(s) on {jax.default_backend()}, the other into "
            f"{max(counts.values())}. Fewer kernels means fewer trips through memory"
        )
    if splitter in ("sin", "mul", "multiply", "add", "tanh", "fusion"):
        raise Wrong(
            f"`{splitter}` is elementwise: XLA fuses it with its neighbours. Which "
            "op in program_b's compiled drawing stands outside every fusion box?"
        )
    if "sort" not in splitter:
        raise Wrong(
            f"`{splitter}` is not in program_b's compiled drawing outside a fusion: "
            "look for the op that stands alone between the boxes"
        )
