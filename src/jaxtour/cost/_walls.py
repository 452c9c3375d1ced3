"""A call's wall time without the profiler, and what a call that does no work costs.

The profiler slows what it watches (it records every op, every thread switch), so a
call's wall time is taken apart from it: the median of calls made with no profiler
running. Dispatch is measured, not assumed: a jitted function of the same arguments
(the same pytree, shapes, dtypes and shardings; the buffers the real program reads
passed to its executable) that returns a constant is called the same way; what it
takes is what any call pays before and after the work: flattening and checking the
arguments, launching the executable, handing back its result.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NO_OP_CALLS = 25  # a no-op call takes microseconds: many, for a steady median
BUDGET_S = 0.05  # short calls are repeated for this long, for a steady median...
MAX_CALLS = 500  # ...up to this many


@dataclass(frozen=True)
class Walls:
    """Wall times per call (seconds), each the median of its calls.

    Attributes:
        wall_seconds: the call with no profiler running.
        profiled_wall_seconds: the same call under `jax.profiler` (the recorded calls).
        dispatch_seconds: a jitted call of the same arguments that does no work.
    """

    wall_seconds: float
    profiled_wall_seconds: float
    dispatch_seconds: float


def walls(run: Callable[[], Any], calls: int, *, warm: bool = True) -> list[float]:
    """The wall times of at least `calls` calls of `run`, each waiting for its result,
    after one call to warm it (`warm=False`: `run` has run already). Short calls are
    repeated for `BUDGET_S` (at most `MAX_CALLS`), for a steadier median."""
    import jax

    if warm:
        jax.block_until_ready(run())
    taken: list[float] = []
    while len(taken) < calls or (sum(taken) < BUDGET_S and len(taken) < MAX_CALLS):
        start = time.perf_counter()
        jax.block_until_ready(run())
        taken.append(time.perf_counter() - start)
    return taken


def median_wall(run: Callable[[], Any], calls: int) -> float:
    """The median of `walls(run, calls)`."""
    return statistics.median(walls(run, calls))


def no_op_twin(args: tuple, kwargs: dict, used: list[bool]) -> Any:
    """A compiled function of `args` and `kwargs` that does no work.

    It takes the leaves `used` marks (those the real program reads, which `jax.jit`
    passes to its executable; the rest it drops, as `jax.jit` does) through an
    `optimization_barrier`, so each of their buffers reaches the executable, and
    returns a scalar constant.
    """
    import jax
    import jax.numpy as jnp

    def nothing(*args: Any, **kwargs: Any) -> Any:
        leaves = jax.tree.leaves((args, kwargs))
        keep = used if len(used) == len(leaves) else [True] * len(leaves)
        kept = [leaf for leaf, k in zip(leaves, keep, strict=True) if k]
        return jax.lax.optimization_barrier((jnp.zeros((), jnp.float32), *kept))[0]

    return jax.jit(nothing).lower(*args, **kwargs).compile()


def dispatch_seconds(args: tuple, kwargs: dict, used: list[bool]) -> float:
    """The median wall time of a call of `no_op_twin(args, kwargs, used)`."""
    compiled = no_op_twin(args, kwargs, used)
    return median_wall(lambda: compiled(*args, **kwargs), NO_OP_CALLS)
