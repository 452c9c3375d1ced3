"""`profile`: where the time went, op by compiled op, mapped back to your lines.

The cost lens says what a program *should* cost; this says what each compiled op *took*.
`profile(f)(*args)` compiles `f` once, times it with no profiler running, times a
jitted function of the same arguments that does no work (dispatch), runs `f` a few times
under `jax.profiler`, reads the profiler's trace offline (no server, no network) and
joins each op's measured time with what the compiled HLO says about it: the jaxpr
primitives its fused computation holds, their source lines, and the kit's FLOP and byte
counts. The wall is itemised in measured figures (ops, time between ops, dispatch) and
what they leave is called unexplained, not given a cause.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jaxtour import _ir
from jaxtour._wait import run_interruptibly
from jaxtour.cost import _timeline, _walls
from jaxtour.cost._profile_view import ProfileView
from jaxtour.cost._table import devices_of
from jaxtour.cost._timeline import Timeline
from jaxtour.cost._walls import Walls

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
        primitives: the jaxpr primitives its ops compute, in program order, read from
            its fused computation (or loop body): a fusion holding a dot lists
            `dot_general`, one holding none never does, whatever the op is named.
        kind: the op's opcode, or the fusion's kind.
        flops: its FLOPs by the kit's rules (None: not counted).
        bytes: what it reads and writes.
        root: for a fusion, the primitive of the op it returns ("" otherwise).
        per_iteration: it runs a loop whose trip count depends on an argument or the
            data: its FLOPs and bytes are one iteration's, so it has no rate.
        upper_bound: it runs a cond: its FLOPs are the costliest branch's (as XLA
            counts them), an upper bound of what ran, and so is its rate.
    """

    op: str
    seconds: float
    share: float
    lines: tuple[str, ...]
    primitives: tuple[str, ...]
    kind: str
    flops: float | None
    bytes: float
    root: str = ""
    per_iteration: bool = False
    upper_bound: bool = False

    @property
    def flops_per_s(self) -> float | None:
        """The rate it achieved: its FLOPs over its measured time (None when not
        counted, or counted for one iteration of a loop that ran an unknown number of
        times; an upper bound when `upper_bound`)."""
        if self.flops is None or self.seconds <= 0 or self.per_iteration:
            return None
        return self.flops / self.seconds

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte moved (None when not counted or nothing moves)."""
        return (
            self.flops / self.bytes if self.flops is not None and self.bytes else None
        )


class Profile(ProfileView):
    """The measured time of one compiled program, op by op, and where its wall went.

    Attributes:
        name: the function's name.
        backend: where it ran ("cpu", "gpu", "tpu").
        rows: one `OpTime` per compiled op, slowest first.
        wall_seconds: one call's time from Python to its result with no profiler
            running (the median of separate calls).
        profiled_wall_seconds: the same under the profiler (the recorded calls);
            `profiler_seconds` is the difference, the profiler's own cost.
        dispatch_seconds: a jitted call of the same arguments that does no work.
        op_seconds: the ops' times summed, per call (under the profiler).
        overlap_seconds: op time that ran at the same moment as other ops (several
            threads), per call: `busy_seconds` is the summed time less this.
        between_ops_seconds: time inside the executable's run when no op ran (gaps
            between consecutive ops on its own timeline), per call; NaN where the
            trace cannot tell the calls apart.
        calls: how many calls the trace recorded.
        module: the parsed compiled HLO (what `draw()` draws).
    """

    def __init__(
        self,
        name: str,
        backend: str,
        rows: list[OpTime],
        timeline: Timeline,
        walls: Walls,
        module: Any,
    ) -> None:
        self.name, self.backend, self.rows, self.module = name, backend, rows, module
        self.wall_seconds = walls.wall_seconds
        self.profiled_wall_seconds = walls.profiled_wall_seconds
        self.dispatch_seconds = walls.dispatch_seconds
        self.op_seconds = timeline.op_seconds
        self.overlap_seconds = timeline.overlap_seconds
        self.between_ops_seconds = timeline.between_seconds
        self.calls = timeline.calls
        self.devices = timeline.devices


def profile(
    f: Callable,
    *,
    calls: int = 5,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., Profile]:
    """As `jax.profiler.trace` around `jax.jit(f)(*args)`, but read for you, op by op.

    On a GPU the program is compiled without CUDA graphs (XLA's command buffers), which
    the profiler would record as one event each: every op then launches on its own, and
    the wall is that program's.

    Args:
        f: the function to time; it is traced and compiled once with `jax.jit`.
        calls: how many calls to record under the profiler (the per-op figure is
            their median); as many again, and at least 50 ms of calls before and after
            the recorded ones, are timed without it (the wall).
        static_argnums: as `jax.jit`'s.
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.

    Returns:
        A function of `f`'s example arguments returning a `Profile`: its `rows`
        (slowest op first, with `.op`, `.seconds`, `.share`, `.lines`), its
        `wall_seconds` (no profiler running) itemised as `busy_seconds`,
        `between_ops_seconds`, `dispatch_seconds` and `unexplained_seconds`, the
        profiler's own cost `profiler_seconds`, and `draw()`, the compiled program
        coloured by time. FLOPs count every iteration of a loop whose trip count is
        known; one of unknown count gets no rate, a cond's rate is an upper bound (its
        costliest branch), and the notes name both.

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
    compiled_for: dict[Any, tuple[Any, Any, dict]] = {}

    def measure(*args: Any, **kwargs: Any) -> Profile:
        import jax

        traced, part = _ir.trace_split(f, args, kwargs, WHO, *statics)
        key = _signature(part.called(args), kwargs, part.static, part.static_names)
        if key not in compiled_for:
            compiled = compile_to_time(traced.lower())
            module = _ir.parse_hlo(compiled.as_text())
            jaxpr = _ir.unwrap_jit(traced.jaxpr).jaxpr
            compiled_for[key] = (compiled, module, _ir.hlo_trips(module, jaxpr))
        compiled, module, loops = compiled_for[key]
        dynamic, dynamic_kw = part.dynamic()
        run = lambda: compiled(*dynamic, **dynamic_kw)
        run_interruptibly(run, f"{_ir.function_name(f)}'s compiled program")
        # unprofiled calls before and after the profiled ones: a load that drifts
        # meanwhile weighs on both sides alike
        before = _walls.walls(run, max(calls // 2, 1), warm=False)
        used = _ir.used_inputs(traced.jaxpr)
        dispatch = _walls.dispatch_seconds(dynamic, dynamic_kw, used)
        rows, (timeline, profiled) = measured_ops(
            run, module, calls, loops, devices_of(compiled)
        )
        after = _walls.walls(run, max(calls - calls // 2, 1), warm=False)
        wall = statistics.median(before + after)
        walls = Walls(wall, statistics.median(profiled), dispatch)
        name = _ir.function_name(f)
        return Profile(name, jax.default_backend(), rows, timeline, walls, module)

    return measure


# A GPU runs runs of kernels as CUDA graphs ("command buffers"), which the profiler
# records as one event each: a program compiled without them shows every op.
UNGRAPHED = {"xla_gpu_enable_command_buffer": ""}


def compile_to_time(lowered: Any) -> Any:
    """`lowered` compiled to be timed op by op: on a GPU without CUDA graphs (each op
    then launches alone, as the profiler must see it; the ops' own times are the
    same), elsewhere as `jax.jit` compiles it."""
    import jax

    if jax.default_backend() != "gpu":
        return lowered.compile()
    try:
        return lowered.compile(compiler_options=UNGRAPHED)
    except Exception:  # an XLA without the option: graphs stay, and a row says so
        return lowered.compile()


def measured_ops(
    run: Callable[[], Any],
    module: Any,
    calls: int = 5,
    loops: dict | None = None,
    devices: int = 1,
) -> tuple[list[OpTime], tuple[Timeline, list[float]]]:
    """Record `calls` runs of the compiled `module` (`run` calls it) under the
    profiler: its `OpTime` rows, its `Timeline`, and each recorded call's wall time.
    `loops` (`_ir.hlo_trips`) says how often each while runs. A program sharded over
    `devices` (`devices_of`) runs each op once per device: its times are one device's,
    as its compiled FLOPs and bytes are."""
    events, profiled = _timeline.record(run, calls)
    found = _timeline.per_call(_timeline.op_events(events, module.name), calls)
    timeline = found.per_device(devices)
    rows = op_rows(module, timeline.seconds, timeline.op_seconds, loops)
    return rows, (timeline, profiled)


def _signature(
    args: tuple, kwargs: dict, held: frozenset[int], held_names: tuple[str, ...] = ()
) -> Any:
    """What a compiled program is keyed on, as `jax.jit` keys its cache: the tree,
    each array's shape, dtype, weak type and sharding (a weak-typed scalar promotes
    differently), and each static value by its type and `==`, never by its repr (a
    dataclass field with ``repr=False`` changes the program all the same)."""
    import jax

    def leaf(x: Any) -> Any:
        shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
        if shape is None or dtype is None:
            return _static(x)
        weak = bool(getattr(x, "weak_type", False))
        return ("array", tuple(shape), str(dtype), weak, _static(_sharding(x)))

    dynamic = [a for i, a in enumerate(args) if i not in held]
    keyed = {k: v for k, v in kwargs.items() if k not in held_names}
    leaves, tree = jax.tree.flatten((dynamic, keyed))
    static = tuple(_static(args[i]) for i in sorted(held))
    static += tuple((k, _static(kwargs[k])) for k in sorted(kwargs) if k in held_names)
    return (tree, tuple(leaf(x) for x in leaves), static)


def _sharding(x: Any) -> Any:
    try:
        return x.sharding
    except Exception:  # a NumPy array, a deleted buffer: no sharding to key on
        return None


class _Same:
    """An unhashable value as a key: equal to this very object only (held alive, so
    its id is never reused while the key lives)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.value is self.value

    def __hash__(self) -> int:
        return id(self.value)


def _static(x: Any) -> Any:
    """A static value keyed as `jax.jit` keys it: its type and its hash and `==`."""
    try:
        hash(x)
    except TypeError:
        return (type(x), _Same(x))
    return (type(x), x)


def op_counts(module: Any, loops: dict | None = None) -> dict[str, Any]:
    """Each entry op's `_ir.Count` (FLOPs, bytes), as the ledger counts it: a while
    op's body once per iteration (`loops`, see `_ir.hlo_trips`, else XLA's
    known_trip_count, else one iteration), a conditional its costliest branch."""
    return {op.name: count for op, count in _ir.hlo_counts(module, loops)}


def op_rows(
    module: Any, seconds: dict[str, float], summed: float, loops: dict | None = None
) -> list[OpTime]:
    """One `OpTime` per entry op that took time: a loop body's ops count to the loop."""
    owner = _owners(module)
    per_op: dict[str, float] = {}
    for name, t in seconds.items():
        top = owner.get(name, name)
        per_op[top] = per_op.get(top, 0.0) + t
    counts = op_counts(module, loops)
    entry = {op.name: op for op in module.computations[module.entry].ops}
    rows = [
        _row(module, entry.get(name), name, t, summed, counts.get(name), loops or {})
        for name, t in per_op.items()
    ]
    return sorted(rows, key=lambda r: -r.seconds)


def _row(
    module: Any, op: Any, name: str, t: float, summed: float, count: Any, loops: dict
) -> OpTime:
    inner = [op, *_ir.held_ops(module, op)] if op else []
    root = _ir.fusion_root(module, op) if op else None
    unknown = any(o.opcode == "while" and _ir.trips_of(o, loops) is None for o in inner)
    return OpTime(
        name,
        t,
        t / summed if summed else 0.0,
        tuple(dict.fromkeys(o.source.where for o in inner if o.source)),
        _ir.held_primitives(module, op) if op else (),
        (op.fusion or op.kind) if op else "not in the entry computation",
        count.flops if count else None,
        count.bytes if count else 0.0,
        _ir.op_primitive(root) if root else "",
        unknown,
        any(o.opcode == "conditional" for o in inner),
    )


def _owners(module: Any) -> dict[str, str]:
    """Each op's name -> the entry op that runs it (itself for entry ops)."""
    owner = {}
    for op in module.computations[module.entry].ops:
        owner[op.name] = op.name
        for inner in _ir.held_ops(module, op):
            owner.setdefault(inner.name, op.name)
    return owner
