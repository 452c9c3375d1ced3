"""`Table`: rows of text cells under column names, written as text, HTML or Markdown.

The one table writer of the kit: every result's `Report` holds its tables as `Table`s,
and a listing that needs no report (the explorer's figures, `jaxtour exercises`) uses
one directly. A cell is text and may hold several lines; the renderers escape it.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape

from jaxtour._number_words import plural

CELL_WIDTH = 48  # characters of a text cell before it wraps onto the next line
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

    Raises:
        ValueError: a row has more or fewer cells than there are columns.

    Example:
        >>> table = Table(["op", "time"], [["dot", "3 ms"], ["add\\nmul", "1 ms"]], align="lr")
        >>> print(table.text())
        op   time
        ---  ----
        dot  3 ms
        add  1 ms
        mul
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

    def text(self, width: int = 0) -> str:
        """The header, a rule and the rows; a cell wraps at `CELL_WIDTH` characters.

        Args:
            width: when set, the last column takes the room the others leave in
                lines of this many characters (0: each cell wraps at `CELL_WIDTH`).
        """
        cells = [[wrap(c, CELL_WIDTH, fit=False) for c in row] for row in self.rows]
        columns = [[name] for name in self.columns]
        widths = [
            max(len(line) for c in [h] + [r[i] for r in cells] for line in c)
            for i, h in enumerate(columns)
        ]
        if width and widths:  # the last column takes the room the others leave
            room = max(width - sum(w + 2 for w in widths[:-1]), 20)
            for row, cell in zip(cells, self.rows, strict=True):
                row[-1] = wrap(cell[-1], room)
            widths[-1] = max(
                len(line) for c in [columns[-1]] + [r[-1] for r in cells] for line in c
            )
        out = self._text_row(columns, widths)
        out += ["  ".join("-" * w for w in widths)]
        for row in cells:
            out += self._text_row(row, widths)
        return "\n".join(out)

    def html(self) -> str:
        """A <table> (well-formed XML), with its heading and note around it."""
        head = "".join(
            f"<th style='{_CELL}{self._align(i)}'>{escape(name)}</th>"
            for i, name in enumerate(self.columns)
        )
        body = []
        for k, row in enumerate(self.rows):
            shade = self.shades.get(k)
            style = f" style='background:{escape(shade)}'" if shade else ""
            cells = "".join(
                f"<td style='{_CELL}{self._align(i)}'>{html_lines(c.split(chr(10)))}</td>"
                for i, c in enumerate(row)
            )
            body.append(f"<tr{style}>{cells}</tr>")
        out = (
            f"<table style='border-collapse:collapse'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
        )
        if self.heading:
            out = f"<h4 style='margin:8px 0 4px'>{escape(self.heading)}</h4>{out}"
        if self.note:
            out += f"<p style='margin:4px 0'><small>{escape(self.note)}</small></p>"
        return out

    def markdown(self) -> str:
        """A pipe table; `|` and markup in cells escaped, code in backticks kept."""
        rule = "|".join(
            "---:" if self._align(i) == "right" else "---"
            for i in range(len(self.columns))
        )
        lines = [_md_row(self.columns), f"|{rule}|", *(_md_row(r) for r in self.rows)]
        if self.heading:
            lines = [f"*{md(self.heading)}*", "", *lines]
        return "\n".join(lines + (["", md(self.note)] if self.note else []))

    def _align(self, i: int) -> str:
        return "right" if self.align[i : i + 1] == "r" else "left"

    def _text_row(self, cells: list[list[str]], widths: list[int]) -> list[str]:
        lines = []
        for k in range(max((len(c) for c in cells), default=1)):
            parts = [c[k] if k < len(c) else "" for c in cells]
            lines.append(
                "  ".join(
                    p.rjust(w) if self._align(i) == "right" else p.ljust(w)
                    for i, (p, w) in enumerate(zip(parts, widths, strict=True))
                ).rstrip()
            )
        return lines


def wrap(text: str, width: int, fit: bool = True) -> list[str]:
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


def html_lines(lines: Sequence[str]) -> str:
    """Lines of text as escaped HTML, a <br/> apart."""
    return "<br/>".join(escape(line) for line in lines)


def md(text: str) -> str:
    """Text for a Markdown table cell: markup and `|` escaped, a newline a <br/>."""
    return escape(text, quote=False).replace("|", "\\|").replace("\n", "<br/>")


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(md(c) for c in cells) + " |"
