"""One side of a diff: a function traced, lowered and compiled, its nodes and its costs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jaxtour import _ir

WHO = "diff"


@dataclass
class Program:
    """A function at every level, as `diff` compares it.

    Attributes:
        name: the function's name.
        nodes: level ("jaxpr", "stablehlo", "compiled") → its canonical nodes.
        modules: level → whole-module attributes ("stablehlo" and "compiled").
        cost: "jaxpr flops", "jaxpr bytes" (global, every equation through memory),
            "flops", "bytes", "compiled ops" (the compiled program: one device's share).
        devices: how many devices share the compiled program.
        call: runs the compiled program once on the arguments (for `measure=True`).
    """

    name: str
    nodes: dict[str, list[_ir.Node]]
    modules: dict[str, dict[str, str]]
    cost: dict[str, float]
    devices: int
    call: Callable[[], Any]
    not_counted: list[str] = field(default_factory=list)
    loops: bool = False  # a compiled while of unknown trip count (counted once)


def build(f: Callable, args: tuple, kwargs: dict, static: dict[str, Any]) -> Program:
    """Trace, lower and compile `f` at `(args, kwargs)`; read every level."""
    traced, run = _trace(f, args, kwargs, static)
    lowered = traced.lower()
    compiled = lowered.compile()
    jaxpr = _ir.unwrap_jit(traced.jaxpr).jaxpr
    shlo_text, hlo_text = _ir.stablehlo_text(lowered), compiled.as_text()
    module = _ir.parse_hlo(hlo_text)
    cost, missing = _cost(jaxpr, module)
    return Program(
        _ir.function_name(f),
        {
            "jaxpr": _ir.jaxpr_nodes(jaxpr),
            "stablehlo": _ir.hlo_nodes(_ir.parse_stablehlo(shlo_text)),
            "compiled": _ir.hlo_nodes(module),
        },
        {
            "stablehlo": _ir.module_attrs(shlo_text),
            "compiled": _ir.module_attrs(hlo_text),
        },
        cost,
        _devices(compiled),
        run,
        missing,
        any(loop.trips is None for loop in _ir.hlo_trips(module, jaxpr).values()),
    )


def _trace(
    f: Callable, args: tuple, kwargs: dict, static: dict[str, Any]
) -> tuple[Any, Callable[[], Any]]:
    """A function already under `jax.jit` is traced with its own options (donation,
    shardings); any other is jitted as the kit's lenses do."""
    if hasattr(f, "trace") and hasattr(f, "lower"):
        try:
            traced = f.trace(*args, **kwargs)
        except Exception as err:
            err.add_note(f"(raised while {WHO} traced {_ir.function_name(f)})")
            raise
        return traced, lambda: f(*args, **kwargs)
    import jax

    traced, part = _ir.trace_split(f, args, kwargs, WHO, **static)
    nums, names = _ir.static_args(
        f, static.get("static_argnums"), static.get("static_argnames"), WHO
    )
    jitted = jax.jit(_ir.bind(f, part), static_argnums=nums, static_argnames=names)
    return traced, lambda: jitted(*part.args, **part.kwargs)


def _cost(jaxpr: Any, module: _ir.HloModule) -> tuple[dict[str, float], list[str]]:
    """The kit's ledger in brief: the rules `jaxtour.cost.cost_table` counts by."""
    eq_flops = eq_bytes = 0.0
    missing = []
    for _, eqn, count, times in _ir.jaxpr_counts(jaxpr):
        if count.flops is None:
            missing.append(eqn.primitive.name)
        eq_flops += (count.flops or 0.0) * times
        eq_bytes += count.bytes * times
    rows = _ir.hlo_counts(module, _ir.hlo_trips(module, jaxpr))
    missing += [op.kind for op, count in rows if count.flops is None]
    return {
        "flops": float(sum(c.flops or 0.0 for _, c in rows)),
        "bytes": float(sum(c.bytes for _, c in rows)),
        "compiled ops": float(len(rows)),
        "jaxpr flops": eq_flops,
        "jaxpr bytes": eq_bytes,
    }, list(dict.fromkeys(missing))


def _devices(compiled: Any) -> int:
    """How many devices share the compiled program (1 when not sharded)."""
    import jax

    try:
        shardings = [*compiled.input_shardings[0], compiled.output_shardings]
    except Exception:  # an executable without shardings: one device
        return 1
    leaves = jax.tree.leaves(shardings, is_leaf=lambda x: hasattr(x, "device_set"))
    return max(
        (len(s.device_set) for s in leaves if hasattr(s, "device_set")), default=1
    )


def time_call(call: Callable[[], Any], repeats: int = 20) -> float:
    """Median seconds per call of an already compiled program, results waited for."""
    import jax

    jax.block_until_ready(call())  # warm: the first call may still allocate
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(call())
        times.append(time.perf_counter() - start)
    return statistics.median(times)
