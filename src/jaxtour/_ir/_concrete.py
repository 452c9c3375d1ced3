"""A value `f` needs in Python (a size, a loop count, a branch) that tracing made
abstract: which errors say so, and the same error retold in `f`'s terms, with the fix.

Shared by the lenses that trace `f` to differentiate it (`draw_grad`, `draw_vjp`,
`draw_jvp`, `grad_memory`), so each tells the same story.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._ir._args import arg_names


def needs_concrete(err: Exception) -> bool:
    """Whether `f` failed because a value it needs in Python (a size, a loop count, a
    branch) was traced: JAX's concretization errors, and the TypeError or IndexError
    a shape or a slice raises on a tracer (not numpy's conversion: use jnp there)."""
    if isinstance(err, jax.errors.TracerArrayConversionError):
        return False
    if isinstance(err, JAX_CONCRETE):
        return True
    text = str(err).lower()
    return isinstance(err, CONCRETE) and ("tracer" in text or "traced" in text)


# What `f` raises when a value it needs in Python is traced: caught, then sorted out
# by `needs_concrete` and retold by `concrete_error` (JAX's own errors are TypeErrors).
CONCRETE = (TypeError, IndexError)
JAX_CONCRETE = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
)


def concrete_error(
    err: Exception,
    f: Callable,
    args: tuple,
    static: frozenset[int],
    who: str,
    diff: frozenset[int] = frozenset(),
) -> TypeError:
    """JAX's error for a traced value `f` needed in Python, raised while `who` traced
    it, retold in `f`'s terms, never the kit's own names: which integer arguments to
    hold static (a size, a loop count), and that a branch on an argument `diff` holds
    (differentiated) must become `jnp.where` or `jax.lax.cond`, as static cannot
    hold it."""
    names = arg_names(f, len(args))
    ints = [
        i
        for i, a in enumerate(args)
        if i not in static | diff
        and jax.tree.leaves(a)
        and all(map(is_int_scalar, jax.tree.leaves(a)))
    ]
    said = str(err).splitlines()[0] if str(err) else type(err).__name__
    if ints:
        fix = _hold_static(who, ints, static, args, names)
    elif diff:
        which = ", ".join(f"`{names[i]}`" for i in sorted(diff))
        fix = (
            f"{who} traces f as jax.jit does, so a Python `if`, `while` or int() on a "
            f"differentiated value ({which}) has no concrete value, and a differentiated "
            "argument cannot be static. Write the branch with jnp.where(cond, a, b) or "
            "jax.lax.cond, and a loop with jax.lax.scan or jax.lax.fori_loop of fixed "
            "bounds (JAX's docs on control flow): jax.grad differentiates those."
        )
    else:
        fix = (
            "A value that sets a shape, a loop count or a Python branch must be "
            "static: name its argument in static_argnums= (or static_argnames=), as "
            "in jax.jit."
        )
    return TypeError(
        f"{who}: {_ir_name(f)} needs a concrete Python value where it got a traced "
        f"one ({said}). {fix}"
    )


def _hold_static(
    who: str, ints: list[int], static: frozenset[int], args: tuple, names: list[str]
) -> str:
    nums = sorted(static | set(ints))
    option = nums[0] if len(nums) == 1 else tuple(nums)
    which = ", ".join(f"`{names[i]}` (argument {i})" for i in ints)
    fix = (
        f"{who} traces {which} as an array, as jax.jit would. If it is a size, a "
        f"loop count or a flag, hold it static: {who}(f, static_argnums={option})."
    )
    arrays = [names[i] for i in ints if any(map(_unhashable, jax.tree.leaves(args[i])))]
    if arrays:  # a static argument is hashed, as jax.jit hashes it
        fix += f" Pass it as a Python int: int({arrays[0]})."
    return fix


def is_int_scalar(leaf: Any) -> bool:
    """A Python, NumPy or JAX integer or boolean scalar: what sets a size or a count."""
    if isinstance(leaf, bool | int | np.integer | np.bool_):
        return True
    dtype = getattr(leaf, "dtype", None)
    return (
        dtype is not None
        and np.ndim(leaf) == 0
        and (jnp.issubdtype(dtype, jnp.integer) or jnp.issubdtype(dtype, jnp.bool_))
    )


def _unhashable(leaf: Any) -> bool:
    try:
        hash(leaf)
    except TypeError:
        return True
    return False


def _ir_name(f: Callable) -> str:
    name = getattr(f, "__name__", None) or type(f).__name__
    return "f" if name == "<lambda>" else name
