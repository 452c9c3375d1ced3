"""How a `Profile` shows itself: a table (text and HTML), notes in words, a drawing."""

from __future__ import annotations

import math
from typing import Any

from jaxtour import _style
from jaxtour._diagram import Diagram
from jaxtour._number_words import plural, si
from jaxtour._options import check_count, check_rankdir
from jaxtour._report import Report, Reported, Table

TOO_SHORT = 50e-6  # below this per call, the profiler's own cost per op is a large part
DRAWN = 12  # the slowest ops drawn by default (a slide's worth); the rest are one node
# white to deep red: an op's share of the summed op time, in five steps
HEAT = ("#FFFFFF", "#FDE0C5", "#FAB98C", "#F4845F", "#D63C3C")
HEAD = ["op", "kind", "time/call", "share", "rate", "primitives", "lines"]
PASS_THROUGH = frozenset({"get-tuple-element", "tuple", "bitcast"})


def seconds_text(seconds: float) -> str:
    """`1.23 ms`, `45.6 µs`: a time in the unit that reads best."""
    for factor, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if seconds >= factor:
            return f"{seconds / factor:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


class ProfileView(Reported):
    """The displays of `Profile` (its data lives there)."""

    name: str
    backend: str
    rows: list
    wall_seconds: float
    profiled_wall_seconds: float
    dispatch_seconds: float
    op_seconds: float
    overlap_seconds: float
    between_ops_seconds: float
    calls: int
    devices: int
    module: Any

    @property
    def busy_seconds(self) -> float:
        """The time at least one op was running, per call."""
        return self.op_seconds - self.overlap_seconds

    @property
    def profiler_seconds(self) -> float:
        """The profiler's own cost per call: profiled wall less the unprofiled wall."""
        return self.profiled_wall_seconds - self.wall_seconds

    @property
    def unexplained_seconds(self) -> float:
        """The wall less its measured parts (ops, between ops, dispatch); negative when
        the parts, timed under the profiler, sum to more than the unprofiled wall."""
        return self.wall_seconds - sum(self.parts().values())

    def parts(self) -> dict[str, float]:
        """The wall's measured parts per call: busy ops, between ops, dispatch (the
        time between ops is left out where the trace could not measure it)."""
        parts = {
            "ops": self.busy_seconds,
            "between ops": self.between_ops_seconds,
            "dispatch": self.dispatch_seconds,
        }
        return {k: v for k, v in parts.items() if not math.isnan(v)}

    def notes(self) -> list[str]:
        """Where the wall time went, in measured figures, and how far to trust them."""
        notes = [_wall_note(self)]
        if not self.rows:
            notes.append(
                f"The profiler recorded no compiled op of {self.name} on "
                f"{self.backend}: this backend's trace names no ops, or the program "
                "ran none (it may only move its inputs)."
            )
            return notes
        notes.append(_parts_note(self))
        notes += _count_notes(self.rows)
        graphs = [r.op for r in self.rows if r.op.startswith("command_buffer")]
        if graphs:
            notes.append(
                f"{', '.join(graphs)}: ops XLA ran as one CUDA graph (a command "
                "buffer), timed as one. The kit compiles with "
                "xla_gpu_enable_command_buffer cleared; this XLA kept the graph or "
                "refused the option."
            )
        if self.devices > 1:
            notes.append(
                f"Each op ran on each of {self.devices} devices: its time is one "
                f"device's (their summed time / {self.devices}), as are its FLOPs and "
                "bytes."
            )
        if self.overlap_seconds > 0.01 * self.op_seconds:
            notes.append(
                f"{seconds_text(self.overlap_seconds)} of op time ran at the same "
                "moment as other ops (several threads): shares are of the summed time."
            )
        if self.wall_seconds < TOO_SHORT:
            notes.append(
                f"One call takes {seconds_text(self.wall_seconds)}: too short to time "
                "op by op (the profiler's own cost per op is a large part of it). Time "
                "a bigger batch, or several steps inside one jit (lax.scan)."
            )
        return notes

    def table(self) -> list[list[str]]:
        """The rows as text cells: op, kind, time, share, rate, primitives, lines."""
        return [
            [
                r.op,
                r.kind,
                seconds_text(r.seconds),
                f"{100 * r.share:.1f} %",
                _rate(r),
                _first(r.primitives, 4),
                _first(r.lines, 3),
            ]
            for r in self.rows
        ]

    def __repr__(self) -> str:
        top = (
            f", slowest {self.rows[0].op} ({100 * self.rows[0].share:.0f} %)"
            if self.rows
            else ""
        )
        return (
            f"Profile({self.name!r} on {self.backend}: {plural(len(self.rows), 'op')}, "
            f"{seconds_text(self.wall_seconds)} per call{top})"
        )

    def report(self) -> Report:
        """The ops, slowest first, and how far their times can be trusted."""
        return Report(
            f"Where the time went: {self.name} on {self.backend}",
            tables=[Table(HEAD, self.table(), align="llrrrll")],
            notes=self.notes(),
        )

    def draw(self, *, rankdir: str = "TB", max_ops: int = DRAWN) -> Diagram:
        """The compiled program, each op a box coloured and labelled by its time.

        Args:
            rankdir: "TB" (top to bottom) or "LR" (left to right).
            max_ops: the slowest ops drawn; the others are one box with their share
                (12 fits a slide; pass more for the whole program).

        Returns:
            A `jaxtour.Diagram`: white boxes took little time, deep red ones most.

        Raises:
            ValueError: `rankdir` or `max_ops` is not one this function knows.
        """
        check_rankdir(rankdir, "Profile.draw")
        check_count(max_ops, "max_ops", "Profile.draw")
        import graphviz

        title = (
            f"Where the time went: {self.name} on {self.backend}, "
            f"{seconds_text(self.wall_seconds)} per call"
        )
        shown = {r.op: r for r in self.rows[:max_ops]}
        graph = graphviz.Digraph(
            graph_attr=_style.graph_attrs(title, rankdir, _subtitle(self)),
            node_attr=dict(_style.NODE),
            edge_attr=dict(_style.EDGE),
        )
        for row in shown.values():
            graph.node(_id(row.op), _label(row), fillcolor=_heat(row.share))
        hidden = self.rows[max_ops:]
        if hidden:
            share = sum(r.share for r in hidden)
            graph.node(
                "_rest",
                f"{len(hidden)} faster ops\n{100 * share:.1f} %",
                fillcolor="#EEEEEE",
            )
        for src, dst in _edges(self.module, set(shown)):
            graph.edge(_id(src), _id(dst))
        return Diagram.from_graph(graph, title)


def _rate(row: Any) -> str:
    """FLOP/s where the op computes, bytes/s where it only moves data; "≤" before an
    upper bound (a cond), none for a loop of unknown trip count."""
    if row.per_iteration:
        return "- (trips unknown)"
    bound = "≤ " if row.upper_bound else ""
    if row.flops and row.seconds > 0:
        return bound + si(row.flops / row.seconds, "FLOP/s")
    if row.bytes and row.seconds > 0:
        return bound + si(row.bytes / row.seconds, "B/s")
    return "-"


def _count_notes(rows: list) -> list[str]:
    """What the rates of loops and conds leave out or bound, naming their ops."""
    notes = []
    looped = [r.op for r in rows if r.per_iteration]
    if looped:
        notes.append(
            f"{', '.join(looped)}: a loop whose trip count depends on an argument or "
            "the data; the kit counts one iteration of its FLOPs and bytes while its "
            "time is every iteration's, so no rate is given for it."
        )
    bounded = [r.op for r in rows if r.upper_bound and not r.per_iteration]
    if bounded:
        notes.append(
            f"{', '.join(bounded)}: a cond; its FLOPs are its costliest branch's (as "
            "XLA counts them), an upper bound of what ran, so its rate is one too (≤)."
        )
    return notes


def _subtitle(view: ProfileView) -> str:
    parts = " · ".join(f"{k} {seconds_text(v)}" for k, v in view.parts().items())
    return (
        f"{plural(len(view.rows), 'op')} timed · {parts}"
        f" · unexplained {_signed(view.unexplained_seconds)}"
    )


def _wall_note(view: ProfileView) -> str:
    return (
        f"{seconds_text(view.wall_seconds)} per call from Python to its result with no "
        f"profiler running (medians). Under the profiler "
        f"({plural(view.calls, 'recorded call')}) {seconds_text(view.profiled_wall_seconds)}"
        f": the profiler's own cost is {_signed(view.profiler_seconds)} per call"
        + (
            " (below zero: within the two timings' spread)."
            if view.profiler_seconds < 0
            else "."
        )
    )


def _parts_note(view: ProfileView) -> str:
    wall = view.wall_seconds or float("nan")
    parts = ", ".join(
        f"{k} {seconds_text(v)} ({v / wall:.2f}x)" for k, v in view.parts().items()
    )
    left = view.unexplained_seconds
    tail = (
        f"unexplained {seconds_text(left)} ({left / wall:.2f}x): measured by none of them."
        if left >= 0
        else f"the parts sum to {seconds_text(-left)} more than the wall: they are "
        "separate measurements (ops and the time between them under the profiler, "
        "dispatch on a twin call, the wall with neither), each with its own spread."
    )
    unmeasured = (
        " The time between ops is not measured: the trace does not say which call "
        "each op ran in, so each op's time is its total over the calls, shared equally."
        if math.isnan(view.between_ops_seconds)
        else ""
    )
    return (
        f"Of the wall, measured: {parts} (dispatch: a jitted call of the same "
        f"arguments doing no work); {tail}{unmeasured}"
    )


def _signed(seconds: float) -> str:
    return ("-" if seconds < 0 else "") + seconds_text(abs(seconds))


def _label(row: Any) -> str:
    lines = [row.op, f"{seconds_text(row.seconds)} · {100 * row.share:.1f} %"]
    if row.primitives:
        lines.append(_first(row.primitives, 3))
    if row.lines:
        lines.append(_first(row.lines, 2))
    return "\n".join(lines)


def _first(items: tuple[str, ...], n: int) -> str:
    """The first `n` items joined, with "…" when there are more."""
    return ", ".join(items[:n]) + (" …" if len(items) > n else "")


def _heat(share: float) -> str:
    return HEAT[min(int(share * len(HEAT) / 0.6), len(HEAT) - 1)]


def _id(name: str) -> str:
    return "op_" + "".join(c if c.isalnum() else "_" for c in name)


def _edges(module: Any, shown: set[str]) -> list[tuple[str, str]]:
    """operand -> op among the drawn entry ops, seen through tuples and bitcasts."""
    ops = {op.name: op for op in module.computations[module.entry].ops}

    def sources(name: str, seen: frozenset = frozenset()) -> set[str]:
        op = ops.get(name)
        if op is None or name in seen:
            return set()
        if name in shown:
            return {name}
        if op.opcode in PASS_THROUGH:
            return set().union(*(sources(o, seen | {name}) for o in op.operands))
        return set()

    edges = {
        (src, op.name)
        for op in ops.values()
        if op.name in shown
        for operand in op.operands
        for src in sources(operand)
    }
    return sorted(edges)
