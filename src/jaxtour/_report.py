"""`Report`: the one display of every tabular result: HTML in Jupyter, text in print.

A result (a cost ledger, a profile, a retrace table) describes itself once, as a
`Report`: a title, lines under it, tables (columns, rows, a heading and a note each) and
notes. The same model renders as text (`str`, `print`, a terminal), as HTML (Jupyter's
one rich repr), as Markdown, and to a file; no result writes a table by hand. A result
class gets all of that from `Reported` by defining `report()`.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from jaxtour._files import write_atomically
from jaxtour._wording import plural

CELL_WIDTH = 48  # characters of a text cell before it wraps onto the next line
SUFFIXES = (".html", ".txt", ".md")
_CELL = "padding:2px 10px;vertical-align:top;text-align:"


@dataclass(frozen=True)
class Table:
    """Rows of text cells under column names; a cell may hold several lines.

    Args:
        columns: the column names.
        rows: one sequence of cells per row, as many as `columns`.
        heading: a caption above the table ("Fusions"); none when empty.
        align: one letter per column, "l" or "r" (numbers); left when shorter.
        shades: row index -> background colour of a highlighted row (HTML only: the
            text form says the same in its cells).
        note: a line under the table.
    """

    columns: Sequence[str]
    rows: Sequence[Sequence[str]]
    heading: str = ""
    align: str = ""
    shades: Mapping[int, str] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"Table row {i} has {plural(len(row), 'cell')} for "
                    f"{len(self.columns)} columns ({', '.join(self.columns)}): "
                    "give one cell per column."
                )

    def _align(self, i: int) -> str:
        return "right" if self.align[i : i + 1] == "r" else "left"


@dataclass(frozen=True)
class Report:
    """A titled display of tables and notes, shown as HTML in Jupyter, text in print.

    Args:
        title: what the report is about, one line.
        lead: lines under the title (a headline, a summary).
        tables: the tables, in order.
        notes: what the figures mean and what they leave out, one line each.
        width: when set, the text form fits this many characters (the last column
            and the notes wrap); 0 leaves lines as long as their cells.

    Example:
        >>> r = Report("Two ops", tables=[Table(["op", "time"], [["dot", "3 ms"]], align="lr")])
        >>> r
        Report('Two ops': 1 table, 1 row)
        >>> print(r)
        Two ops
        <BLANKLINE>
        op   time
        ---  ----
        dot  3 ms
        >>> "<td style='padding:2px 10px;vertical-align:top;text-align:left'>dot</td>" in (
        ...     r.html()
        ... )
        True
    """

    title: str
    lead: Sequence[str] = ()
    tables: Sequence[Table] = ()
    notes: Sequence[str] = ()
    width: int = 0

    def text(self) -> str:
        """The plain-text form: what `str` and `print` show."""
        out = [self.title, *self.lead]
        for table in self.tables:
            out += ["", *([table.heading + ":"] if table.heading else [])]
            out += _text_table(table, self.width)
            out += self._wrap(table.note) if table.note else []
        if self.notes:
            out.append("")
            for note in self.notes:
                out += self._wrap(note)
        return "\n".join(line.rstrip() for line in out)

    def html(self) -> str:
        """The HTML form (well-formed XML too): Jupyter's one rich repr."""
        out = [
            "<div class='jaxtour-report' style='font-family:sans-serif'>"
            f"<b>{escape(self.title)}</b>"
        ]
        if self.lead:
            out.append(f"<p style='margin:4px 0'>{_lines(self.lead)}</p>")
        out += [_html_table(table) for table in self.tables]
        if self.notes:
            items = "".join(f"<li>{escape(note)}</li>" for note in self.notes)
            out.append(f"<ul style='margin:4px 0'>{items}</ul>")
        return "".join(out) + "</div>"

    def markdown(self) -> str:
        """The Markdown form: a heading, pipe tables, the notes as a list."""
        out = [f"**{_md(self.title)}**", *(f"\n{_md(line)}" for line in self.lead)]
        for t in self.tables:
            out += [f"\n*{_md(t.heading)}*"] if t.heading else []
            rule = "|".join(
                "---:" if t._align(i) == "right" else "---"
                for i in range(len(t.columns))
            )
            out += ["", _md_row(t.columns), f"|{rule}|", *(_md_row(r) for r in t.rows)]
            out += [f"\n{_md(t.note)}"] if t.note else []
        out += ([""] + [f"- {_md(note)}" for note in self.notes]) if self.notes else []
        return "\n".join(out)

    def save(self, path: str | os.PathLike, who: str = "Report") -> Path:
        """Write the report as a web page (.html), text (.txt) or Markdown (.md).

        The file is written whole under a temporary name, then renamed.

        Raises:
            ValueError: the suffix is none of those three.
        """
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise ValueError(
                f"{who}.save() writes .html, .txt or .md; got {path.name!r}. Pick one "
                "of those suffixes (a drawing's .svg/.png are for Diagram.save)."
            )
        if suffix == ".html":
            text = (
                f"<!doctype html><meta charset='utf-8'><title>{escape(self.title)}"
                f"</title>\n{self.html()}\n"
            )
        else:
            text = (self.text() if suffix == ".txt" else self.markdown()) + "\n"
        write_atomically(path, text.encode())
        return path

    def _wrap(self, line: str) -> list[str]:
        return _wrap(line, self.width) if self.width else [line]

    def __str__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return self.html()

    def __repr__(self) -> str:
        rows = sum(len(t.rows) for t in self.tables)
        tables = len(self.tables)
        return (
            f"Report({self.title!r}: {tables} table{'s' * (tables != 1)}, "
            f"{rows} row{'s' * (rows != 1)})"
        )


class Reported:
    """A result displayed from its `report()`: HTML in Jupyter, text in print, `save`.

    A subclass defines `report()` and a one-line `__repr__`; it writes no table itself.
    """

    def report(self) -> Report:
        """The result as a `Report` (title, tables, notes)."""
        raise NotImplementedError(f"{type(self).__name__} must define report()")

    def _repr_html_(self) -> str:
        return self.report().html()

    def __str__(self) -> str:
        return self.report().text()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the result as a web page (.html), text (.txt) or Markdown (.md).

        Raises:
            ValueError: the suffix is none of those three.
        """
        return self.report().save(path, who=type(self).__name__)


def _text_table(table: Table, width: int) -> list[str]:
    """The table's lines: a header, a rule, the rows; long cells wrap in their column."""
    cells = [[_wrap(c, CELL_WIDTH, fit=False) for c in row] for row in table.rows]
    columns = [[name] for name in table.columns]
    widths = [
        max(len(line) for c in [h] + [r[i] for r in cells] for line in c)
        for i, h in enumerate(columns)
    ]
    if width and widths:  # the last column takes the room the others leave
        room = max(width - sum(w + 2 for w in widths[:-1]), 20)
        cells = [
            [*r[:-1], [x for line in r[-1] for x in _wrap(line, room)]] for r in cells
        ]
        widths[-1] = min(widths[-1], room)
    out = _text_row(columns, widths, table)
    out += ["  ".join("-" * w for w in widths)]
    for row in cells:
        out += _text_row(row, widths, table)
    return out


def _text_row(cells: list[list[str]], widths: list[int], table: Table) -> list[str]:
    height = max((len(c) for c in cells), default=1)
    lines = []
    for k in range(height):
        parts = [c[k] if k < len(c) else "" for c in cells]
        lines.append(
            "  ".join(
                p.rjust(w) if table._align(i) == "right" else p.ljust(w)
                for i, (p, w) in enumerate(zip(parts, widths, strict=True))
            ).rstrip()
        )
    return lines


def _wrap(text: str, width: int, fit: bool = True) -> list[str]:
    """Each line of `text` wrapped at `width`; a "→ " line's wrap hangs under its text.

    An arrow between two values ("f32[3] → f32[4]") never starts or ends a line. A word
    longer than `width` (an op's name, a path) is cut only when `fit` says the lines
    must fit.
    """
    out = []
    for line in text.split("\n"):
        hang = "  " if line.startswith("→ ") else ""
        wrapped = textwrap.wrap(
            line.replace(" → ", "\u00a0→\u00a0"),
            width,
            subsequent_indent=hang,
            break_long_words=fit,
            break_on_hyphens=False,
        )
        out += [w.replace("\u00a0", " ") for w in wrapped] or [""]
    return out


def _html_table(table: Table) -> str:
    head = "".join(
        f"<th style='{_CELL}{table._align(i)}'>{escape(name)}</th>"
        for i, name in enumerate(table.columns)
    )
    body = []
    for k, row in enumerate(table.rows):
        shade = table.shades.get(k)
        style = f" style='background:{escape(shade)}'" if shade else ""
        cells = "".join(
            f"<td style='{_CELL}{table._align(i)}'>{_lines(c.split(chr(10)))}</td>"
            for i, c in enumerate(row)
        )
        body.append(f"<tr{style}>{cells}</tr>")
    heading = (
        f"<h4 style='margin:8px 0 4px'>{escape(table.heading)}</h4>"
        if table.heading
        else ""
    )
    note = (
        f"<p style='margin:4px 0'><small>{escape(table.note)}</small></p>"
        if table.note
        else ""
    )
    return (
        f"{heading}<table><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>{note}"
    )


def _lines(lines: Sequence[str]) -> str:
    return "<br/>".join(escape(line) for line in lines)


def _md(text: str) -> str:
    return escape(text, quote=False).replace("|", "\\|").replace("\n", "<br/>")


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(_md(c) for c in cells) + " |"
