"""`Report`: the one display of every tabular result: HTML in Jupyter, text in print.

A result (a cost ledger, a profile, a retrace table) describes itself once, as a
`Report`: a title, lines under it, tables (columns, rows, a heading and a note each) and
notes. The same model renders as text (`str`, `print`, a terminal), as HTML (Jupyter's
one rich repr), as Markdown, and to a file; no result writes a table by hand. A result
class gets all of that from `Reported` by defining `report()`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from jaxtour._files import user_path, write_atomically
from jaxtour._table import Table, html_lines, md, wrap

SUFFIXES = (".html", ".txt", ".md")


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
        >>> import xml.etree.ElementTree as ET
        >>> [len(tr) for tr in ET.fromstring(r.html()).iter("tr")]  # a header, a row
        [2, 2]
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
            out += table.text(self.width).split("\n")
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
            out.append(f"<p style='margin:4px 0'>{html_lines(self.lead)}</p>")
        out += [table.html() for table in self.tables]
        if self.notes:
            items = "".join(f"<li>{escape(note)}</li>" for note in self.notes)
            out.append(f"<ul style='margin:4px 0'>{items}</ul>")
        return "".join(out) + "</div>"

    def markdown(self) -> str:
        """The Markdown form: a heading, pipe tables, the notes as a list."""
        out = [f"**{md(self.title)}**", *(md(line) for line in self.lead)]
        out += [table.markdown() for table in self.tables]
        out += ["\n".join(f"- {md(note)}" for note in self.notes)] if self.notes else []
        return "\n\n".join(out)

    def save(self, path: str | os.PathLike, who: str = "Report") -> Path:
        """Write the report as a web page (.html), text (.txt) or Markdown (.md).

        The file is written whole under a temporary name, then renamed.

        Raises:
            ValueError: the suffix is none of those three.
        """
        path = user_path(path)
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
        return wrap(line, self.width) if self.width else [line]

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
