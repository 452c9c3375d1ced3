"""What a retrace changed in the program: each traced call's argument types, kept to diff.

A traced call keeps its arguments as `jax.ShapeDtypeStruct`s (shape, dtype, weak type,
sharding; never the arrays, which may be large) and its static arguments as they were,
so that trace `n` can be traced, lowered and compiled again beside an earlier one and
the two compared with `jaxtour.viz.diff_calls`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from jaxtour import _ir
from jaxtour.viz import ProgramDiff, diff_calls

Example = tuple[tuple, dict]


def abstract(
    args: tuple, kwargs: dict, static: tuple[int, ...], static_names: tuple[str, ...]
) -> Example:
    """The call's arguments with every traced leaf replaced by its type."""
    kept = tuple(a if i in static else _types(a) for i, a in enumerate(args))
    named = {k: v if k in static_names else _types(v) for k, v in kwargs.items()}
    return kept, named


def _types(tree: Any) -> Any:
    return jax.tree.map(_leaf_type, tree)


def _leaf_type(leaf: Any) -> Any:
    if not _ir.traceable(leaf) or isinstance(leaf, jax.ShapeDtypeStruct):
        return leaf
    try:
        aval = jax.typeof(leaf)
        sharding = leaf.sharding if isinstance(leaf, jax.Array) else None
        return jax.ShapeDtypeStruct(
            aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=sharding
        )
    except Exception:  # a leaf JAX types some other way: keep it as it is
        return leaf


def diff_trace(
    f: Callable,
    name: str,
    examples: dict[int, Example],
    n: int,
    static: dict[str, Any],
    against: int | None = None,
) -> ProgramDiff:
    """Call `n`'s program against the earlier trace `against` (the closest, which
    the retrace's cause names), else the trace before it (`examples`: call →
    arguments)."""
    traced = sorted(examples)
    if n not in examples:
        raise ValueError(
            f"call {n} of {name} did not trace (it was a cache hit, or there is no such "
            f"call), so it made no program of its own; the calls that traced are "
            f"{traced}. Pass one of those."
        )
    earlier = [m for m in traced if m < n]
    if not earlier:
        raise ValueError(
            f"call {n} was {name}'s first trace: there is no earlier program to compare "
            f"it with. Pass a later traced call: {traced[1:] or 'none yet'}."
        )
    m = against if against in earlier else earlier[-1]
    return diff_calls(
        f,
        examples[m],
        examples[n],
        names=(f"{name} (call {m})", f"{name} (call {n})"),
        **static,
    )
