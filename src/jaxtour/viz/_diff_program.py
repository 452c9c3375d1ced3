"""One side of a diff: a function traced, lowered and compiled, its nodes and its costs."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
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
            # a jitted f lowered under the kit's jit is one call (`unwrap_jit` there)
            "stablehlo": _ir.hlo_nodes(_ir.unwrap_call(_ir.parse_stablehlo(shlo_text))),
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


def example(call: Any, side: str) -> tuple[tuple, dict]:
    """`diff_calls`' `before` or `after` checked: `(args, kwargs)`, the positional
    arguments as a tuple (or list) and the keyword ones as a dict.

    Example:
        >>> example(([1.0], {"n": 2}), "before")
        ((1.0,), {'n': 2})
        >>> example((1.0,), "after")
        Traceback (most recent call last):
        ...
        TypeError: diff_calls takes `after` as (args, kwargs): a tuple of the call's \
positional arguments and a dict of its keyword ones, ((x,), {}) for f(x); got (1.0,), \
a tuple of 1. If these are the positional arguments, pass ((1.0,), {}).
    """
    if (
        isinstance(call, tuple | list)
        and len(call) == 2
        and isinstance(call[0], tuple | list)
        and isinstance(call[1], Mapping)
    ):
        return tuple(call[0]), dict(call[1])
    if isinstance(call, tuple | list) and len(call) == 1 and isinstance(call[0], tuple):
        args, what = call[0], "the kwargs are missing"
    elif (
        isinstance(call, tuple | list)
        and len(call) == 2
        and isinstance(call[1], Mapping)
    ):
        args, what = (call[0],), "it is the one positional argument"
    elif isinstance(call, tuple):
        args, what = call, "these are the positional arguments"
    else:
        args, what = (call,), "it is the one positional argument"
    got = _brief(call)
    if isinstance(call, tuple | list):
        got += f", a {type(call).__name__} of {len(call)}"
    raise TypeError(
        f"{WHO}_calls takes `{side}` as (args, kwargs): a tuple of the call's positional "
        f"arguments and a dict of its keyword ones, ((x,), {{}}) for f(x); got {got}. "
        f"If {what}, pass ({_brief(args)}, {{}})."
    )


def _brief(value: Any) -> str:
    """`value` for a message, arrays as their types: `((f32[4],), {})`."""
    if isinstance(value, tuple | list):
        items = [_brief(v) for v in value[:4]] + ["..."] * (len(value) > 4)
        ends = "()" if isinstance(value, tuple) else "[]"
        comma = "," if isinstance(value, tuple) and len(value) == 1 else ""
        return f"{ends[0]}{', '.join(items)}{comma}{ends[1]}"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k!r}: {_brief(v)}" for k, v in value.items()) + "}"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return _ir.type_str(value)
    text = repr(value)
    return text if len(text) <= 30 else text[:27] + "..."


def _trace(
    f: Callable, args: tuple, kwargs: dict, static: dict[str, Any]
) -> tuple[Any, Callable[[], Any]]:
    """A function already under `jax.jit` is traced with its own options (donation,
    shardings); any other is jitted as the kit's lenses do. A framework's jit
    (`nnx.jit`, `eqx.filter_jit`) may have `trace` too, but its `Traced` is not
    `jax.jit`'s (no `.jaxpr`), so it is jitted like a plain function."""
    if _ir.is_jitted(f):
        own: Any = f  # what jax.jit returns: it has `trace`
        try:
            traced = own.trace(*args, **kwargs)
        except Exception as err:
            err.add_note(f"(raised while {WHO} traced {_ir.function_name(f)})")
            raise
        return traced, lambda: f(*args, **kwargs)
    import jax

    traced, part = _ir.trace_split(f, args, kwargs, WHO, **static)
    nums, names = tuple(part.static), part.static_names  # past a model f, if one
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
