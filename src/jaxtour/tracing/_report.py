"""The retrace table: a row per call that traced (or read a stale value); text, HTML."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour._number_words import plural
from jaxtour._report import Report, Reported, Table

_HEAD = ("call", "where", "what", "compile", "why")
WIDTH = 88  # characters of the text table: a slide's output box wraps past about 94
_SHADES = {  # a first trace is plain
    "retrace": "#fdecea",
    "cache hit": "#fff6dc",
    "compiled again": "#fff6dc",
    "not jitted": "#eeeeee",
    "not counted": "#eeeeee",
}
TRACED = ("first trace", "retrace")  # the events where jit traced f


class RetraceReport(Reported):
    """What `explain_retraces` saw: the calls that traced, why, and what each cost.

    Cache hits are counted in the summary line; they get a row of their own only when
    they read a global or closed-over value that has changed since the trace (a stale
    result). A cache hit XLA compiled anew ("compiled again") and a call under
    `jax.disable_jit` ("not jitted") get a row too, and so does a framework's jit
    called under an outer transformation ("not counted": JAX records no trace event
    there, so the traces counted leave those calls out, and the summary says so).
    `str(report)` is the table as text, at most 88 characters wide (what a slide's
    output box shows); in a notebook it shows as HTML.
    """

    def __init__(
        self, name: str, calls: list[Any], differ: Callable[[int], Any] | None = None
    ) -> None:
        self.name, self.calls, self._differ = name, calls, differ
        self.traces = sum(c.event in TRACED for c in calls)
        self.rows = [c for c in calls if c.event != "cache hit" or c.stale]

    @property
    def summary(self) -> str:
        """One line: calls, traces, retraces, cache hits and the compile time spent."""
        hits = sum(c.event in ("cache hit", "compiled again") for c in self.calls)
        again = sum(c.event == "compiled again" for c in self.calls)
        eager = sum(c.event == "not jitted" for c in self.calls)
        spent = sum(c.compile_s for c in self.calls)
        retraces = plural(max(self.traces - 1, 0), "retrace")
        hits_said = plural(hits, "cache hit") + (
            f" ({again} compiled again)" if again else ""
        )
        eager_said = f", {eager} not jitted" if eager else ""
        unseen = sum(c.event == "not counted" for c in self.calls)
        counted = " counted" if unseen else ""
        unseen_said = (
            f", {unseen} not counted (under a transformation)" if unseen else ""
        )
        return (
            f"{self.name}: {plural(len(self.calls), 'call')}, "
            f"{plural(self.traces, 'trace')}{counted} ({retraces}), "
            f"{hits_said}{eager_said}{unseen_said}; {_ms(spent)} tracing and compiling"
        )

    def _cells(self, call: Any) -> list[str]:
        """[call, where, what, compile, why] for one row; a hint follows its cause."""
        if call.event == "first trace":
            why = [("first call: traced and compiled", "")]
        elif call.event == "retrace":
            why = [(c.words, c.hint) for c in call.causes] or [
                ("the arguments changed in a way jaxtour does not name", "")
            ]
            if call.compared_with not in (None, self._previous_trace(call.number)):
                why.insert(0, (f"against call {call.compared_with}, the closest:", ""))
        else:
            why = [(c.words, c.hint) for c in call.causes]
            why += [("STALE: " + s, "pass it as an argument") for s in call.stale]
        where = call.site.where if call.site else ""
        shown = ("cache hit", "not jitted", "not counted")
        compile_ms = _ms(call.compile_s) if call.event not in shown else "—"
        reasons = "\n".join(w + (f"\n→ {h}" if h else "") for w, h in why)
        return [str(call.number), where, call.event, compile_ms, reasons]

    def diff(self, n: int) -> Any:
        """What retracing changed: call `n`'s program against the closest earlier trace.

        Both are traced, lowered and compiled again from the argument types recorded
        at each call (`jaxtour.viz.diff_calls`); the earlier one is the traced call
        the table's cause names (`closest(n)`: the one that differs least).

        Returns:
            A `jaxtour.viz.ProgramDiff`.

        Raises:
            ValueError: call `n` did not trace, or it was the first trace.
        """
        if self._differ is None:
            raise ValueError(
                f"this report of {self.name} keeps no arguments to diff; take it from "
                "`explain_retraces(f).report`."
            )
        return self._differ(n)

    def report(self) -> Report:
        """A row per call that traced (or read a stale value), 88 characters wide."""
        head, _, spent = self.summary.partition("; ")
        title, lead = (
            (self.summary, []) if len(self.summary) <= WIDTH else (head + ";", [spent])
        )
        shades = {
            k: _SHADES[call.event]
            for k, call in enumerate(self.rows)
            if call.event in _SHADES
        }
        table = Table(_HEAD, [self._cells(c) for c in self.rows], shades=shades)
        return Report(title, lead, [table], width=WIDTH)

    def _previous_trace(self, number: int) -> int | None:
        """The number of the last call before call `number` that traced."""
        earlier = [c.number for c in self.calls[: number - 1] if c.event in TRACED]
        return earlier[-1] if earlier else None

    def closest(self, number: int) -> int | None:
        """The number of the earlier traced call that call `number` (as the table
        counts calls, from 1) was explained against: the one that differs least. For
        a cache hit, the call whose trace it reused; None for the first trace.

        Raises:
            IndexError: there is no call `number`.
        """
        if not 1 <= number <= len(self.calls):
            raise IndexError(
                f"{self.name}: there is no call {number}; calls are numbered "
                f"1..{len(self.calls)}."
            )
        return self.calls[number - 1].compared_with

    def __repr__(self) -> str:
        return (
            f"RetraceReport({self.name!r}: {plural(len(self.calls), 'call')}, "
            f"{plural(self.traces, 'trace')})"
        )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.001 else f"{seconds * 1e3:.2f} ms"
