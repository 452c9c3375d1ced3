"""The retrace table: a row per call that traced (or read a stale value); text, HTML."""

from __future__ import annotations

import textwrap
from html import escape
from typing import Any

from jaxtour._number_words import plural

_HEAD = ("call", "where", "what", "compile", "why")
WIDTH = 88  # characters of the text table: a slide's code box, a terminal
_CELL = "padding:2px 10px;text-align:left;vertical-align:top"


class RetraceReport:
    """What `explain_retraces` saw: the calls that traced, why, and what each cost.

    Cache hits are counted in the summary line; they get a row of their own only when
    they read a global or closed-over value that has changed since the trace (a stale
    result). `str(report)` is the table as text, at most 88 characters wide (what a
    slide's output box shows); in a notebook it shows as HTML.
    """

    def __init__(self, name: str, calls: list[Any]) -> None:
        self.name, self.calls = name, calls
        self.traces = sum(c.event != "cache hit" for c in calls)
        self.rows = [c for c in calls if c.event != "cache hit" or c.stale]

    @property
    def summary(self) -> str:
        """One line: calls, traces, retraces, cache hits and the compile time spent."""
        hits = len(self.calls) - self.traces
        spent = sum(c.compile_s for c in self.calls)
        retraces = plural(max(self.traces - 1, 0), "retrace")
        return (
            f"{self.name}: {plural(len(self.calls), 'call')}, "
            f"{plural(self.traces, 'trace')} ({retraces}), "
            f"{plural(hits, 'cache hit')}; {_ms(spent)} tracing and compiling"
        )

    def _cells(self, call: Any) -> tuple[str, str, str, str, list[tuple[str, str]]]:
        """(call, where, what, compile, [(why, hint), ...]) for one row."""
        if call.event == "first trace":
            why = [("first call: traced and compiled", "")]
        elif call.event == "retrace":
            why = [(c.words, c.hint) for c in call.causes] or [
                ("the arguments changed in a way jaxtour does not name", "")
            ]
        else:
            why = [("STALE: " + s, "pass it as an argument") for s in call.stale]
        where = call.site.where if call.site else ""
        compile_ms = _ms(call.compile_s) if call.event != "cache hit" else "—"
        return str(call.number), where, call.event, compile_ms, why

    def __str__(self) -> str:
        rows = [self._cells(c) for c in self.rows]
        widths = [
            max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(_HEAD[:4])
        ]
        line = lambda cells: "  ".join(
            c.ljust(w) for c, w in zip(cells, widths, strict=False)
        )
        pad = " " * (len(line(["" for _ in widths])) + 2)
        room = max(WIDTH - len(pad), 30)
        head, _, spent = self.summary.partition("; ")
        out = (
            [f"{head}; {spent}"] if len(self.summary) <= WIDTH else [head + ";", spent]
        )
        out.append(line(_HEAD[:4]) + "  why")
        for *cells, why in rows:
            for i, (words, hint) in enumerate(why):
                text = _wrap(words, room) or [""]
                if hint:
                    text += _wrap(
                        hint, room, initial_indent="→ ", subsequent_indent="  "
                    )
                first = (line(cells) + "  ") if i == 0 else pad
                out += [first + text[0], *(pad + t for t in text[1:])]
        return "\n".join(out)

    def __repr__(self) -> str:
        return (
            f"RetraceReport({self.name!r}: {plural(len(self.calls), 'call')}, "
            f"{plural(self.traces, 'trace')})"
        )

    def _repr_html_(self) -> str:
        head = "".join(f"<th style='{_CELL}'>{h}</th>" for h in _HEAD)
        body = []
        for *cells, why in (self._cells(c) for c in self.rows):
            text = "<br/>".join(
                f"{escape(w)}"
                + (f"<br/><small style='color:#555'>→ {escape(h)}</small>" if h else "")
                for w, h in why
            )
            colour = {"retrace": "#fdecea", "cache hit": "#fff6dc"}.get(cells[2], "")
            style = f" style='background:{colour}'" if colour else ""
            body.append(
                f"<tr{style}>"
                + "".join(f"<td style='{_CELL}'>{escape(c)}</td>" for c in cells)
                + f"<td style='{_CELL}'>{text}</td></tr>"
            )
        return (
            f"<div class='jaxtour-retraces'><b>{escape(self.summary)}</b>"
            f"<table><tr>{head}</tr>{''.join(body)}</table></div>"
        )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds >= 0.001 else f"{seconds * 1e3:.2f} ms"


def _wrap(
    text: str, width: int, initial_indent: str = "", subsequent_indent: str = ""
) -> list[str]:
    """`textwrap.wrap`, never breaking around an arrow ("2 → 3" stays on one line)."""
    lines = textwrap.wrap(
        text.replace(" → ", "\u00a0→\u00a0"),
        width,
        initial_indent=initial_indent,
        subsequent_indent=subsequent_indent,
    )
    return [line.replace("\u00a0", " ") for line in lines]
