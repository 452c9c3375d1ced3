"""`draw_roofline`: each compiled op of a program against the device's measured roof."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from jaxtour import _ir
from jaxtour._plot import Plot, figure
from jaxtour._wait import run_interruptibly
from jaxtour.cost import _notes, _roof_words
from jaxtour.cost._ledger import CostTable
from jaxtour.cost._peaks import Peaks, best_seconds, device_peaks
from jaxtour.cost._profile import compile_to_time, measured_ops
from jaxtour.cost._table import build

_ROOF, _OP, _PROGRAM, _ZERO = "#264653", "#2a9d8f", "#e63946", "#8d99ae"
LABELLED = 6  # the ops with most FLOPs get their name written beside them


class Point(NamedTuple):
    """One op on the roofline: its intensity and its FLOP/s (the rate the roof allows
    it, or the rate it was measured at)."""

    name: str
    intensity: float  # FLOP per byte
    flops_per_s: float


class Roofline(Plot):
    """The roofline plot, with the numbers behind it.

    Attributes:
        table: the program's `CostTable`.
        peaks: the device's measured `Peaks`.
        points: one `Point` per compiled op: at the rate its intensity allows, or,
            when `op_seconds` is given, at the rate it was measured at (ops that took
            no measured time are left out).
        seconds: the whole program's measured time per call (best of a few).
        measured: whether the points are measured rates (`draw_roofline(measured=True)`).
        matmul_types: the element types of the program's matmuls and convolutions
            other than float32, the roof's (their peak is not the one measured).
    """

    def __init__(
        self,
        table: CostTable,
        peaks: Peaks,
        seconds: float,
        op_seconds: dict[str, float] | None = None,
        matmul_types: tuple[str, ...] = (),
    ) -> None:
        self.table, self.peaks, self.seconds = table, peaks, seconds
        self.matmul_types = matmul_types
        self.measured = op_seconds is not None
        self.points = [
            Point(r.name, r.intensity or 0.0, _rate(r, peaks, op_seconds))
            for r in table.ops
            if r.flops is not None and (op_seconds is None or op_seconds.get(r.name))
        ]
        title = (
            f"Roofline of {table.name} on {peaks.device_name}: "
            + _roof_words.headline(table, self.flops_per_s, self.fraction)
        )
        if self.above_roof:
            title += "; " + _roof_words.above(table, matmul_types)
        said = _roof_words.PER_ITERATION  # the headline says it
        title += "".join(f"; {note}" for note in self.caveats if note != said)
        title += "; ops at their measured rate" if self.measured else ""
        super().__init__(_draw(self), title)

    @property
    def caveats(self) -> list[str]:
        """What the whole-program figures leave out or how they count (loops, devices,
        ops not counted): each is also on the picture."""
        table, notes = self.table, []
        if table.devices > 1:
            notes.append(f"figures are one device's of {table.devices}")
        if self.matmul_types:
            types = " and ".join(self.matmul_types)
            notes.append(
                f"the roof is a float32 matmul's; the matmuls here take {types}"
            )
        if _notes.repeats(table.compiled_loops):
            notes.append("loops count every iteration")
        if table.per_iteration:
            notes.append(_roof_words.PER_ITERATION)
        if table.conds:
            notes.append("a cond counts its costliest branch (an upper bound)")
        if table.complex_types:
            types = " and ".join(table.complex_types)
            notes.append(_roof_words.COMPLEX.format(types=types))
        if table.uncounted:
            notes.append(f"not plotted: {table.uncounted}")
        return notes

    @property
    def flops_per_s(self) -> float | None:
        """The whole program's FLOPs (kit's count) over its measured time: an upper
        bound when it holds a cond (its costliest branch is counted), None when it runs
        a loop whose trip count is unknown (one iteration's FLOPs over every
        iteration's time is no rate, as `profile` gives none)."""
        if self.table.per_iteration:
            return None
        return self.table.flops / self.seconds if self.seconds else 0.0

    @property
    def fraction(self) -> float | None:
        """Measured FLOP/s as a fraction of the matmul peak (None with no rate)."""
        rate = self.flops_per_s
        return None if rate is None else rate / self.peaks.flops_per_s

    def add(self, label: str, intensity: float, flops_per_s: float) -> Roofline:
        """Mark another measured program (e.g. a NumPy twin) on the same axes.

        Args:
            label: the legend's name for it.
            intensity: its FLOPs per byte moved.
            flops_per_s: its measured rate.

        Returns:
            This `Roofline`, redrawn with the extra point (Jupyter shows it).

        Raises:
            ValueError: intensity or rate is not a positive number.
        """
        if not (intensity > 0 and flops_per_s > 0):
            raise ValueError(
                f"Roofline.add needs a positive intensity and rate; got "
                f"{intensity!r} FLOP/B and {flops_per_s!r} FLOP/s."
            )
        ax = self.figure.axes[0]
        ax.scatter([intensity], [flops_per_s], marker="D", s=110, zorder=4, label=label)
        low, high = ax.get_xlim()
        ax.set_xlim(min(low, intensity / 3), max(high, intensity * 3))
        bottom, top = ax.get_ylim()
        ax.set_ylim(min(bottom, flops_per_s / 3), top)
        _legend(self.figure)
        return self

    @property
    def above_roof(self) -> bool:
        """The program ran faster than the measured roof allows: the roof is stale."""
        rate = self.flops_per_s
        if not self.table.flops or rate is None:
            return False
        return rate > self.peaks.attainable(self.table.intensity)

    @property
    def bound(self) -> str:
        """`memory` when the intensity is left of the ridge, else `compute`."""
        return "memory" if self.table.intensity < self.peaks.ridge else "compute"


def _rate(row: Any, peaks: Peaks, op_seconds: dict[str, float] | None) -> float:
    """An op's FLOP/s: measured when its time is known, else what the roof allows."""
    if op_seconds is None:
        return peaks.attainable(row.intensity or 0)
    return (row.flops or 0.0) / op_seconds[row.name]


def _draw(roof: Roofline) -> Any:
    peaks, table = roof.peaks, roof.table
    fig = figure(7.6, 5.4)
    ax = fig.subplots()
    # Sizes and fonts are constants: only positions depend on the measured peaks, so
    # the picture reads the same on every machine (a slide shows it at one scale).
    shown = [p.intensity for p in roof.points if p.intensity > 0]
    shown += [table.intensity] if table.intensity > 0 else []
    low = min([*shown, peaks.ridge]) / 10
    high = max([*shown, peaks.ridge]) * 10
    x = np.geomspace(low, high, 200)
    ax.loglog(
        x,
        np.minimum(peaks.flops_per_s, peaks.bytes_per_s * x),
        color=_ROOF,
        lw=2,
        label=f"roof: {peaks.bytes_per_s / 1e9:.3g} GB/s x intensity, capped at "
        f"{peaks.flops_per_s / 1e9:.3g} GFLOP/s",
    )
    ax.axvline(peaks.ridge, color=_ROOF, ls=":", lw=1)
    ax.text(
        peaks.ridge * 1.1,
        peaks.flops_per_s / 30,
        f"ridge {peaks.ridge:.3g} FLOP/B",
        color=_ROOF,
        fontsize=12,
    )
    on, off = (
        [p for p in roof.points if p.intensity > 0],
        [p for p in roof.points if p.intensity <= 0],
    )
    ax.scatter(
        [p.intensity for p in on],
        [p.flops_per_s for p in on],
        s=60,
        color=_OP,
        zorder=3,
        label=(
            f"compiled ops at their measured rate ({len(on)})"
            if roof.measured
            else f"compiled ops at their ceiling ({len(on)})"
        ),
    )
    if off:
        ax.scatter(
            [low] * len(off),
            [peaks.bytes_per_s * low] * len(off),
            marker=">",
            s=60,
            color=_ZERO,
            zorder=3,
            label=_off_label(off, table),
        )
    counted = {r.name: r.flops or 0.0 for r in table.ops}
    spots: dict[str, list[Point]] = {}  # ops at one spot share one label
    for p in sorted(on, key=lambda p: -counted[p.name]):
        spots.setdefault(f"{p.intensity:.2g}", []).append(p)
    chosen: list[list[Point]] = []  # the busiest spots, none within 1.6x of another
    for group in spots.values():
        near = [abs(np.log(group[0].intensity / g[0].intensity)) for g in chosen]
        if len(chosen) < LABELLED and all(d > np.log(1.6) for d in near):
            chosen.append(group)
    labelled = sorted(chosen, key=lambda g: g[0].intensity)
    for i, group in enumerate(labelled):  # neighbours alternate below and above
        p, more = group[0], len(group) - 1
        ax.annotate(
            p.name + (f" (+{more})" if more else ""),
            (p.intensity, p.flops_per_s),
            textcoords="offset points",
            xytext=(6, -14 if i % 2 == 0 else 8),
            fontsize=11,
            color=_OP,
        )
    rate = roof.flops_per_s or 0.0
    placed = table.intensity > 0 and rate > 0
    if placed:
        ax.scatter(
            [table.intensity],
            [rate],
            marker="*",
            s=260,
            color=_PROGRAM,
            zorder=4,
            label=f"whole program, measured ({roof.seconds * 1e3:.3g} ms)"
            + (", above the roof" if roof.above_roof else ""),
        )
    for note in roof.caveats:  # on the picture, not only in the title
        ax.plot([], [], " ", label=note)
    ax.set_xlim(low, high)
    rates = [peaks.bytes_per_s * low] + ([rate] if placed else [])
    ax.set_ylim(min(rates) / 3, max(peaks.flops_per_s, *rates) * 3)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved, log scale)", fontsize=12)
    ax.set_ylabel("FLOP/s (log scale)", fontsize=12)
    ax.set_title(
        _roof_words.axes_title(table, peaks.device_name, roof.bound, placed),
        fontsize=13,
    )
    ax.tick_params(labelsize=11)
    ax.grid(alpha=0.3, which="both")
    _legend(fig)
    return fig


def _off_label(off: list[Point], table: CostTable) -> str:
    """The legend's words for ops with no FLOPs: data movement unless they compute
    transcendentals (which XLA counts apart from FLOPs)."""
    transcendental = {r.name for r in table.ops if r.transcendentals}
    busy = sum(p.name in transcendental for p in off)
    if not busy:
        return f"ops with no FLOPs: pure data movement ({len(off)})"
    return f"ops with no FLOPs counted ({len(off)}; {busy} with transcendentals)"


def _legend(fig: Any) -> None:
    """One legend below the axes, out of the points' way (redrawn when one is added)."""
    for old in list(fig.legends):
        old.remove()
    fig.legend(loc="outside lower center", ncols=2, fontsize=10)


def draw_roofline(
    f: Callable,
    *,
    peaks: Peaks | None = None,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    measured: bool = False,
) -> Callable[..., Roofline]:
    """Place `f`'s compiled ops and the whole program on this device's roofline.

    Each compiled op (a fusion counts once) sits at its arithmetic intensity: at the
    rate the roof allows it, or with `measured=True` at the rate `profile` measured
    (the dot where the op is, not where its ceiling is). The whole program is timed
    and shown at its measured rate; the title and legend say which the ops show. The
    roof is a float32 matmul's: a program whose matmuls take another type says so. A
    loop whose trip count depends on the data gets no rate (its FLOPs are one
    iteration's, as `profile` says), and a cond's rate is an upper bound (≤).

    Args:
        f: the function; it is compiled with `jax.jit` and run a few times.
        peaks: the roof; None measures it (`device_peaks()`, cached after the first).
        static_argnums: as `jax.jit`'s.
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.
        measured: time each op under `jax.profiler` (as `profile` does) and place it
            at its measured rate.

    Returns:
        A function of `f`'s example arguments returning a `Roofline` (a `Plot`).
    """
    _ir.check_callable(f, "draw_roofline")
    statics = _ir.static_args(f, static_argnums, static_argnames, "draw_roofline")

    def draw(*args: Any, **kwargs: Any) -> Roofline:
        traced, part = _ir.trace_split(
            f, args, kwargs, "draw_roofline", statics.nums, statics.names
        )
        lowered = traced.lower()
        compiled = compile_to_time(lowered) if measured else lowered.compile()
        table = build(_ir.function_name(f), traced, compiled)
        dynamic, dynamic_kw = part.dynamic()
        run = lambda: compiled(*dynamic, **dynamic_kw)
        run_interruptibly(run, f"{table.name}'s compiled program")  # may never end
        seconds = best_seconds(run, repeats=3, budget=0.25)
        op_seconds = None
        jaxpr = _ir.unwrap_jit(traced.jaxpr).jaxpr
        if measured:  # a loop of unknown trips has no rate: profile gives it none
            module = _ir.parse_hlo(compiled.as_text())
            loops = _ir.hlo_trips(module, jaxpr)
            rows, _ = measured_ops(run, module, loops=loops, devices=table.devices)
            op_seconds = {
                r.op: r.seconds for r in rows if r.seconds > 0 and not r.per_iteration
            }
        types = _matmul_types(jaxpr)
        return Roofline(table, peaks or device_peaks(), seconds, op_seconds, types)

    return draw


def _matmul_types(jaxpr: Any) -> tuple[str, ...]:
    """The operand types of `jaxpr`'s matmuls and convolutions, float32 (the roof's)
    left out."""
    types = [
        str(var.aval.dtype)
        for _, eqn in _ir.walk(jaxpr)
        if eqn.primitive.name in ("dot_general", "conv_general_dilated")
        for var in eqn.invars
    ]
    return tuple(t for t in dict.fromkeys(types) if t != "float32")
