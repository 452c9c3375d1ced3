"""A compiled program's timeline, read from the trace `jax.profiler` writes, offline.

(The house says "trace" for JAX tracing a function to a jaxpr; this module reads the
*profiler's* trace file: when each compiled op ran.)

`jax.profiler.trace(dir, create_perfetto_trace=True)` writes a Chrome-trace JSON (gzip)
beside the XPlane file, with no extra package and no server. Each compiled op XLA ran
is a complete event ("ph": "X") whose `args` name its module (`hlo_module`) and HLO
instruction (`hlo_op`): on a CPU in the thread that ran it, on a GPU or TPU in the
device's own lanes. That is all this module reads: the ops' times, how much of them ran
at the same moment, and the time between ops inside each call (the executable's idle
time).
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import statistics
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRACE_GLOBS = ("**/perfetto_trace.json.gz", "**/*.trace.json.gz")


@dataclass(frozen=True)
class OpEvent:
    """One run of one compiled op: which op, which call, where and when (µs)."""

    op: str
    run: str
    lane: tuple[Any, Any]  # (process, thread): events in one lane never overlap
    start: float
    duration: float
    device: bool  # recorded in a device's lane (GPU/TPU), not a host thread


def record(run: Callable[[], Any], calls: int) -> tuple[list[dict], list[float]]:
    """The trace events of `calls` calls of `run`, and each call's wall time (s).

    Each call waits for its result. The wall times are taken around the same calls the
    trace records, so the two agree even when the machine is busy.

    Raises:
        RuntimeError: another profiler session is running (only one can), or JAX wrote
            no trace file.
    """
    import jax

    jax.block_until_ready(run())  # compiled and warm before the trace starts
    walls = []
    with tempfile.TemporaryDirectory(prefix="jaxtour-profile-") as folder:
        try:
            with jax.profiler.trace(folder, create_perfetto_trace=True):
                for _ in range(calls):
                    start = time.perf_counter()
                    jax.block_until_ready(run())
                    walls.append(time.perf_counter() - start)
        except RuntimeError as err:
            raise RuntimeError(
                f"profile: jax.profiler could not record ({err}). Only one profiler "
                "session runs at a time: stop yours (jax.profiler.stop_trace()) and "
                "call profile again."
            ) from err
        return _read(Path(folder)), walls


def _read(folder: Path) -> list[dict]:
    for pattern in TRACE_GLOBS:
        for path in sorted(folder.glob(pattern)):
            with gzip.open(path, "rt", encoding="utf-8") as stream:
                data = json.load(stream)
            return data["traceEvents"] if isinstance(data, dict) else data
    raise RuntimeError(
        f"profile: jax.profiler wrote no trace file under {folder} (looked for "
        f"{' and '.join(TRACE_GLOBS)}); this JAX or backend may not write one."
    )


def op_events(events: list[dict], module: str) -> list[OpEvent]:
    """The events of compiled ops of HLO module `module`, device lanes when there are.

    A GPU or TPU trace holds both the host's launches and the device's execution of
    the same op; the device's lanes are the op's time.
    """
    devices = {
        e["pid"]
        for e in events
        if e.get("ph") == "M"
        and e.get("name") == "process_name"
        and "/device:" in str(e.get("args", {}).get("name", ""))
    }
    found = [
        OpEvent(
            str(e["args"]["hlo_op"]),
            str(e["args"].get("run_id", "")),
            (e.get("pid"), e.get("tid")),
            float(e["ts"]),
            float(e.get("dur", 0.0)),
            e.get("pid") in devices,
        )
        for e in events
        if e.get("ph") == "X"
        and isinstance(e.get("args"), dict)
        and e["args"].get("hlo_module") == module
        and "hlo_op" in e["args"]
    ]
    if any(e.device for e in found):
        found = [e for e in found if e.device]
    return found


def exclusive(events: list[OpEvent]) -> list[tuple[OpEvent, float]]:
    """Each event with its own time (µs): a `while` or `call` event holds its body's
    events in the same lane, and their time is theirs, not the loop's."""
    out = []
    for lane in _by(events, lambda e: e.lane).values():
        lane.sort(key=lambda e: (e.start, -e.duration))
        open_: list[list] = []  # [event, own time] of the events still open
        for event in lane:
            while open_ and event.start >= _end(open_[-1][0]):
                out.append(tuple(open_.pop()))
            if open_:
                open_[-1][1] -= event.duration
            open_.append([event, event.duration])
        out.extend(tuple(pair) for pair in open_)
    return [(e, max(own, 0.0)) for e, own in out]


@dataclass(frozen=True)
class Timeline:
    """What the op events of the recorded calls say, per call (seconds).

    Attributes:
        seconds: each op's own time, the median over the calls that ran it.
        op_seconds: those medians summed.
        overlap_seconds: op time that ran beside other ops (several lanes), the median.
        between_seconds: time inside a call (its first op's start to its last op's end)
            when no op ran: the executable's idle time between ops, the median; NaN
            when the trace does not say which call an op ran in (see `per_call`).
        calls: how many calls the events hold.
        devices: how many devices ran each call; with more than one, every figure is
            one device's: the devices' summed time over their count (see `per_device`).
    """

    seconds: dict[str, float]
    op_seconds: float
    overlap_seconds: float
    between_seconds: float
    calls: int
    devices: int = 1

    def per_device(self, devices: int) -> Timeline:
        """This timeline, summed over `devices` devices running one SPMD program, as
        one device's: each op's time and their sum divided by the count (a compiled
        op's FLOPs and bytes are one device's, so its rate stays like with like). The
        time at least one op ran is kept: the devices ran side by side.

        Example:
            >>> t = Timeline({"add": 8e-3}, 8e-3, 7e-3, 0.0, 5).per_device(8)
            >>> t.seconds, t.op_seconds, t.op_seconds - t.overlap_seconds
            ({'add': 0.001}, 0.001, 0.001)
        """
        if devices <= 1:
            return self
        busy = self.op_seconds - self.overlap_seconds
        each = {op: t / devices for op, t in self.seconds.items()}
        ops = self.op_seconds / devices
        overlap = max(ops - busy, 0.0)
        return Timeline(each, ops, overlap, self.between_seconds, self.calls, devices)


def per_call(events: list[OpEvent], calls: int | None = None) -> Timeline:
    """The `Timeline` of `events`, recorded over `calls` calls: each call is one `run`
    id. A trace whose lanes name no call (a GPU's device lanes carry no run id) is cut
    into calls at its `calls - 1` longest stretches with no op running, and kept so
    only when every call then ran the same ops; else each op's time is its total over
    the calls, shared equally, and the time between ops is unknown (NaN)."""
    runs = _by(events, lambda e: e.run)
    if calls and len(runs) == 1 < calls:
        cut = _cut_into_calls(events, calls)
        if cut is None:
            return _shared(events, calls)
        runs = cut
    by_op: dict[str, list[float]] = defaultdict(list)
    overlaps, betweens = [], []
    for run_events in runs.values():
        own: dict[str, float] = defaultdict(float)
        for event, seconds in exclusive(run_events):
            own[event.op] += seconds * 1e-6
        for op, seconds in own.items():
            by_op[op].append(seconds)
        busy = _union(run_events) * 1e-6
        overlaps.append(max(sum(own.values()) - busy, 0.0))
        betweens.append(max(_span(run_events) * 1e-6 - busy, 0.0))
    if not runs:
        return Timeline({}, 0.0, 0.0, 0.0, 0)
    # an op missing from one call's trace (a dropped event) is left out, not taken as 0
    medians = {op: statistics.median(times) for op, times in by_op.items()}
    return Timeline(
        medians,
        sum(medians.values()),
        statistics.median(overlaps),
        statistics.median(betweens),
        len(runs),
    )


def _cut_into_calls(events: list[OpEvent], calls: int) -> dict | None:
    """`events` (one stretch of `calls` calls) cut at their `calls - 1` longest idle
    gaps, or None when there are fewer gaps or the calls then ran different ops."""
    ordered = sorted(events, key=lambda e: e.start)
    gaps, reach = [], float("-inf")
    for i, event in enumerate(ordered):
        if i and event.start > reach:
            gaps.append((event.start - reach, i))
        reach = max(reach, _end(event))
    if len(gaps) < calls - 1:
        return None
    cuts = sorted(i for _, i in sorted(gaps, reverse=True)[: calls - 1])
    bounds = [0, *cuts, len(ordered)]
    groups = {
        str(k): ordered[a:b] for k, (a, b) in enumerate(itertools.pairwise(bounds))
    }
    ops = [Counter(e.op for e in group) for group in groups.values()]
    return groups if all(o == ops[0] for o in ops) else None


def _shared(events: list[OpEvent], calls: int) -> Timeline:
    """The timeline of `calls` calls no trace tells apart: totals over the calls,
    shared equally; no time between ops (NaN) since no call's span is known."""
    own: dict[str, float] = defaultdict(float)
    for event, seconds in exclusive(events):
        own[event.op] += seconds * 1e-6 / calls
    overlap = max(sum(own.values()) - _union(events) * 1e-6 / calls, 0.0)
    return Timeline(dict(own), sum(own.values()), overlap, math.nan, calls)


def _span(events: list[OpEvent]) -> float:
    """From the first event's start to the last one's end (µs)."""
    return max(map(_end, events)) - min(e.start for e in events)


def _union(events: list[OpEvent]) -> float:
    total, reach = 0.0, float("-inf")
    for e in sorted(events, key=lambda e: e.start):
        start, end = max(e.start, reach), _end(e)
        if end > start:
            total += end - start
        reach = max(reach, end)
    return total


def _end(event: OpEvent) -> float:
    return event.start + event.duration


def _by(events: list[OpEvent], key: Callable[[OpEvent], Any]) -> dict:
    groups: dict[Any, list[OpEvent]] = defaultdict(list)
    for event in events:
        groups[key(event)].append(event)
    return groups
