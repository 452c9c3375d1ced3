"""A deck's title and closing slides, read from the lesson's first and last cells.

A lesson's first markdown cell holds ``# NN · Title``, the Colab badge, a few bullets of what
you will learn and, last, ``*About N minutes.*``. Its title slide shows the heading, the
bullets and the time; the badge (a link for notebook readers) is left out, and any other
prose of that cell goes to the title slide's speaker notes. The last markdown cell that
says "In this notebook we" is the summary: it always opens a slide of its own, as does
an exercise's task (a markdown cell tagged ``exercise``: the "Your turn" slide).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from jaxtour.lesson import Kind, kind_of

# A line holding only a linked badge image or the link it becomes: [![..](..)](..), [..](..).
_BADGE_LINE = re.compile(r"^\s*\[!?\[?[^\]]*\]?(?:\([^)]*\))?\]\([^)\s]+\)\s*$")
_HEADING = re.compile(r"^#\s+(.+?)\s*$")
_MINUTES = re.compile(
    r"^\s*[*_]\s*About\s+(\d+)\s+minutes?\.?\s*[*_]\s*$", re.IGNORECASE
)
_BULLET = re.compile(r"^\s{0,3}[-*+]\s+")
SUMMARY = re.compile(r"In this notebook,? we\b", re.IGNORECASE)
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def in_code(lines: list[str]) -> list[bool]:
    """For each markdown line, whether it is part of a fenced code block (a ``# comment``
    there is no heading).

    Example:
        >>> in_code(["# Title", "```python", "# a comment", "```", "text"])
        [False, True, True, True, False]
    """
    inside, flags = False, []
    for line in lines:
        fence = bool(_FENCE.match(line))
        flags.append(inside or fence)
        inside = inside != fence
    return flags


def headings_only(markdown: str) -> str:
    """`markdown` with its fenced code blocks' lines emptied, to search for headings."""
    lines = markdown.splitlines()
    return "\n".join(
        "" if code else line for line, code in zip(lines, in_code(lines), strict=True)
    )


@dataclass
class Opening:
    """What a lesson's first markdown cell says, split into the parts of a title slide.

    Attributes:
        heading: the ``#`` heading's text (``"03 · How JAX works"``), or "" without one.
        bullets: the markdown bullets, each with its continuation lines.
        minutes: the ``*About N minutes.*`` figure, or None.
        prose: every other paragraph (not the badge), for the speaker notes.
    """

    heading: str = ""
    bullets: list[str] = field(default_factory=list)
    minutes: int | None = None
    prose: list[str] = field(default_factory=list)


def read_opening(markdown: str) -> Opening:
    """Split a lesson's first cell into heading, bullets, time and other prose.

    Example:
        >>> o = read_opening("# 01 · Why JAX\\n\\n[![Colab](https://b/x.svg)](https://c)\\n\\n"
        ...                  "You will learn:\\n\\n- float32\\n- jit,\\n  and more\\n\\n"
        ...                  "*About 20 minutes.*")
        >>> o.heading, o.bullets, o.minutes, o.prose
        ('01 · Why JAX', ['- float32', '- jit,\\n  and more'], 20, ['You will learn:'])
    """
    opening = Opening()
    paragraph: list[str] = []
    in_bullet = False

    def flush() -> None:
        if paragraph:
            opening.prose.append("\n".join(paragraph))
            paragraph.clear()

    lines = markdown.splitlines()
    for line, code in zip(lines, in_code(lines), strict=True):
        heading, minutes = _HEADING.match(line), _MINUTES.match(line)
        if code:  # a code block is prose for the notes, whatever its lines look like
            paragraph.append(line.rstrip())
            in_bullet = False
        elif heading and not opening.heading:
            opening.heading, in_bullet = heading.group(1), False
        elif minutes:
            opening.minutes, in_bullet = int(minutes.group(1)), False
        elif _BADGE_LINE.match(line) and re.search(
            "colab|binder|badge", line, re.IGNORECASE
        ):
            in_bullet = False
        elif _BULLET.match(line):
            flush()
            opening.bullets.append(line.rstrip())
            in_bullet = True
        elif not line.strip():
            in_bullet = False
            flush()
        elif in_bullet:
            opening.bullets[-1] += "\n" + line.rstrip()
        else:
            paragraph.append(line.rstrip())
    flush()
    return opening


def title_markdown(opening: Opening) -> str:
    """The title slide's markdown: heading, bullets, and the time in a ``jt-time`` line."""
    parts = [f"# {opening.heading}"] if opening.heading else []
    if opening.bullets:
        parts.append("\n".join(opening.bullets))
    if opening.minutes is not None:
        parts.append(f'<p class="jt-time">About {opening.minutes} minutes</p>')
    return "\n\n".join(parts)


def frame(cells: list, new_cell: Any) -> list:
    """Cells (already planned) with a title slide first and the summary on its own slide.

    Args:
        cells: planned cells, each with ``metadata.slideshow.slide_type``.
        new_cell: makes a markdown cell from (source, metadata) (``nbformat``'s, or a test's).

    Returns:
        The new list of cells: the first visible markdown cell with a ``#`` heading becomes
        the title slide (``data-jt-frame="title"`` on its section), followed by a notes cell
        with its other prose; the last summary cell opens a slide marked ``closing``, and
        each markdown cell tagged ``exercise`` one marked ``exercise``.
    """
    cells = list(cells)
    first = next(
        (
            i
            for i, c in enumerate(cells)
            if c.cell_type == "markdown" and _slide_type(c) not in ("skip", "notes")
        ),
        None,
    )
    if first is not None and any(
        _HEADING.match(li) for li in headings_only(cells[first].source).splitlines()
    ):
        opening = read_opening(cells[first].source)
        cells[first].source = title_markdown(opening)
        _mark(cells[first], "title", _slide_type(cells[first]))
        if opening.prose:
            notes = {"slideshow": {"slide_type": "notes"}}
            cells.insert(first + 1, new_cell("\n\n".join(opening.prose), notes))
    summary = [
        i
        for i, c in enumerate(cells)
        if c.cell_type == "markdown"
        and SUMMARY.search(c.source)
        and _slide_type(c) not in ("skip", "notes")
    ]
    if summary and summary[-1] != first:
        _mark(cells[summary[-1]], "closing", "slide")
    for cell in cells:  # an exercise's task: a "Your turn" slide of its own
        if kind_of(cell) is Kind.TASK and _slide_type(cell) not in ("skip", "notes"):
            _mark(cell, "exercise", _slide_type(cell))
    return cells


def lesson_minutes(notebook: Any) -> int | None:
    """The ``*About N minutes.*`` of a lesson's first markdown cell, or None."""
    first = next((c for c in notebook.cells if c.get("cell_type") == "markdown"), None)
    return read_opening(first.get("source", "")).minutes if first else None


def exercise_titles(notebook: Any) -> tuple[str, ...]:
    """The titles of a lesson's exercises: the first line of each markdown cell tagged
    ``exercise``, heading marks, code marks and a leading "Your turn:" dropped.

    Example:
        >>> from nbformat.v4 import new_markdown_cell, new_notebook
        >>> task = new_markdown_cell(
        ...     "## Your turn: gradient from `vjp`\\nWrite it.",
        ...     metadata={"tags": ["exercise"]})
        >>> exercise_titles(new_notebook(cells=[task]))
        ('gradient from vjp',)
    """
    titles = []
    for cell in notebook.cells:
        if kind_of(cell) is Kind.TASK:
            first = next(
                (li for li in cell.get("source", "").splitlines() if li.strip()), ""
            )
            first = (
                re.sub(r"^#+\s*", "", first).replace("`", "").replace("**", "").strip()
            )
            titles.append(
                re.sub(r"^Your turn\s*[:·—-]\s*", "", first, flags=re.IGNORECASE)
            )
    return tuple(titles)


def _slide_type(cell: Any) -> str:
    return cell.metadata["slideshow"]["slide_type"]


def _mark(cell: Any, frame_name: str, slide_type: str) -> None:
    slideshow = cell.metadata["slideshow"]
    slideshow["slide_type"] = (
        slide_type if slide_type in ("slide", "subslide") else "slide"
    )
    slideshow["data"] = {**slideshow.get("data", {}), "jt_frame": frame_name}
