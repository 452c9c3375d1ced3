"""`profile`: where the time went, op by compiled op, mapped back to your lines.

The cost lens says what a program *should* cost; this says what each compiled op *took*.
`profile(f)(*args)` compiles `f` once, runs it a few times under `jax.profiler`, reads
the trace offline (no server, no network) and joins each op's measured time with what
the compiled HLO says about it: the jaxpr primitives it holds, their source lines, and
the kit's FLOP and byte counts.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jaxtour import _ir
from jaxtour._wait import run_interruptibly
from jaxtour.cost import _trace
from jaxtour.cost._profile_view import ProfileView

WHO = "profile"


@dataclass(frozen=True)
class OpTime:
    """One compiled op of the entry computation and the time it took per call.

    Attributes:
        op: the HLO instruction's name (`fusion.3`, `dot.1`), as the trace names it.
        seconds: its time per call (the median over the recorded calls); for a loop or
            call, the ops it runs included.
        share: its part of the summed op time (0 to 1).
        lines: `file:line` of the source lines whose equations it holds.
        primitives: the jaxpr primitives it holds, in program order.
        kind: the op's opcode, or the fusion's kind.
        flops: its FLOPs by the kit's rules (None: not counted).
        bytes: what it reads and writes.
    """

    op: str
    seconds: float
    share: float
    lines: tuple[str, ...]
    primitives: tuple[str, ...]
    kind: str
    flops: float | None
    bytes: float

    @property
    def flops_per_s(self) -> float | None:
        """The rate it achieved: its FLOPs over its measured time."""
        if self.flops is None or self.seconds <= 0:
            return None
        return self.flops / self.seconds

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte moved (None when not counted or nothing moves)."""
        return (
            self.flops / self.bytes if self.flops is not None and self.bytes else None
        )


class Profile(ProfileView):
    """The measured time of one compiled program, op by op.

    Attributes:
        name: the function's name.
        backend: where it ran ("cpu", "gpu", "tpu").
        rows: one `OpTime` per compiled op, slowest first.
        wall_seconds: one call's time from Python to its result, the median of the
            recorded calls (the same calls the op times come from).
        op_seconds: the ops' times summed, per call.
        overlap_seconds: op time that ran at the same moment as other ops (several
            threads), per call: `busy_seconds` is the summed time less this.
        calls: how many calls the trace recorded.
        module: the parsed compiled HLO (what `draw()` draws).
    """

    def __init__(
        self,
        name: str,
        backend: str,
        rows: list[OpTime],
        timing: tuple[float, float, float, int],
        module: Any,
    ) -> None:
        self.name, self.backend, self.rows, self.module = name, backend, rows, module
        self.wall_seconds, self.op_seconds, self.overlap_seconds, self.calls = timing


def profile(
    f: Callable,
    *,
    calls: int = 5,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., Profile]:
    """As `jax.profiler.trace` around `jax.jit(f)(*args)`, but read for you, op by op.

    Args:
        f: the function to time; it is traced and compiled once with `jax.jit`.
        calls: how many calls to record (the per-op figure is their median).
        static_argnums: as `jax.jit`'s.
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.

    Returns:
        A function of `f`'s example arguments returning a `Profile`: its `rows`
        (slowest op first, with `.op`, `.seconds`, `.share`, `.lines`), its
        `wall_seconds`, and `draw()`, the compiled program coloured by time.

    Raises:
        TypeError: `f` is not callable, or an argument is not something JAX traces.
        ValueError: `calls` is not a positive int.
        RuntimeError: another profiler session is running.

    Example:
        >>> import jax.numpy as jnp
        >>> p = profile(lambda a: jnp.sin(a @ a))(jnp.ones((64, 64)))
        >>> p.rows[0].op == max(p.rows, key=lambda r: r.seconds).op
        True
    """
    _ir.check_callable(f, WHO)
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
        raise ValueError(f"{WHO}: `calls` must be a positive int; got {calls!r}.")
    statics = _ir.static_args(f, static_argnums, static_argnames, WHO)
    compiled_for: dict[Any, tuple[Any, Any]] = {}

    def measure(*args: Any, **kwargs: Any) -> Profile:
        import jax

        key = _signature(args, kwargs, statics.nums)
        traced, part = _ir.trace_split(f, args, kwargs, WHO, *statics)
        if key not in compiled_for:
            compiled = traced.lower().compile()
            compiled_for[key] = (compiled, _ir.parse_hlo(compiled.as_text()))
        compiled, module = compiled_for[key]
        dynamic, dynamic_kw = part.dynamic()
        run = lambda: compiled(*dynamic, **dynamic_kw)
        run_interruptibly(run, f"{_ir.function_name(f)}'s compiled program")
        rows, timing = measured_ops(run, module, calls)
        name = _ir.function_name(f)
        return Profile(name, jax.default_backend(), rows, timing, module)

    return measure


def measured_ops(
    run: Callable[[], Any], module: Any, calls: int = 5
) -> tuple[list[OpTime], tuple[float, float, float, int]]:
    """Record `calls` runs of the compiled `module` (`run` calls it): its `OpTime` rows,
    and (wall seconds, summed op seconds, overlap seconds, calls seen) per call."""
    trace, walls = _trace.record(run, calls)
    events = _trace.op_events(trace, module.name)
    seconds, summed, overlap, seen = _trace.per_call(events)
    rows = op_rows(module, seconds, summed)
    return rows, (statistics.median(walls), summed, overlap, seen)


def _signature(args: tuple, kwargs: dict, statics: tuple[int, ...]) -> Any:
    """What a compiled program is keyed on: shapes, dtypes, tree and static values."""
    import jax

    def leaf(x: Any) -> Any:
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is not None:
            return (tuple(shape), str(dtype))
        try:
            return (type(x), hash(x), x)
        except TypeError:  # an unhashable leaf: this very object
            return (type(x), id(x))

    held = {i % len(args) for i in statics if -len(args) <= i < len(args)}
    dynamic = [a for i, a in enumerate(args) if i not in held]
    leaves, tree = jax.tree.flatten((dynamic, kwargs))
    static = tuple(repr(args[i]) for i in sorted(held))
    return (tree, tuple(leaf(x) for x in leaves), static)


def op_rows(module: Any, seconds: dict[str, float], summed: float) -> list[OpTime]:
    """One `OpTime` per entry op that took time: a loop body's ops count to the loop."""
    owner = _owners(module)
    per_op: dict[str, float] = {}
    for name, t in seconds.items():
        top = owner.get(name, name)
        per_op[top] = per_op.get(top, 0.0) + t
    counts = {op.name: count for op, count in _ir.hlo_counts(module)}
    entry = {op.name: op for op in module.computations[module.entry].ops}
    rows = []
    for name, t in per_op.items():
        op = entry.get(name)
        inner = [op, *_inside(module, op)] if op else []
        count = counts.get(name)
        rows.append(
            OpTime(
                name,
                t,
                t / summed if summed else 0.0,
                tuple(dict.fromkeys(o.source.where for o in inner if o.source)),
                tuple(dict.fromkeys(o.primitive for o in inner if o.primitive)),
                (op.fusion or op.kind) if op else "not in the entry computation",
                count.flops if count else None,
                count.bytes if count else 0.0,
            )
        )
    return sorted(rows, key=lambda r: -r.seconds)


def _owners(module: Any) -> dict[str, str]:
    """Each op's name -> the entry op that runs it (itself for entry ops)."""
    owner = {}
    for op in module.computations[module.entry].ops:
        owner[op.name] = op.name
        for inner in _inside(module, op):
            owner.setdefault(inner.name, op.name)
    return owner


def _inside(module: Any, op: Any) -> list[Any]:
    return [
        inner
        for called in op.called
        if called.computation in module.computations
        for _, inner in module.walk(called.computation)
    ]
