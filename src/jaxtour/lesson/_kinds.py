"""The kinds of cell a lesson holds, read from a cell's tags and slideshow metadata.

A lesson `notebooks/NN_topic.py` marks its cells with tags (``# %% tags=["check"]``):

=========  ==========================  =================================================
kind       how a cell says it          what it is for
=========  ==========================  =================================================
SETUP      tag ``setup``               imports and configuration; runs, never taught
TEACH      (nothing)                   the lesson itself: prose and the code it shows
CHECK      tag ``check``               the asserts proving the lesson's claims
TASK       markdown, tag ``exercise``  an exercise's task ("Your turn: …")
STUB       code, tag ``exercise``      the function a student fills in
SOLUTION   tag ``solution``            an exercise's answer (instructors only)
HINT       tag ``hint``                a collapsed ``<details>`` hint
NOTES      slide type or tag ``notes`` what the presenter says (speaker notes)
REMOVED    tag ``remove-cell``         runs, shown nowhere
=========  ==========================  =================================================
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

Cell = Mapping[str, Any]


class Kind(enum.Enum):
    """What a lesson cell is; `kind_of` reads it. ``Kind.CHECK.tag == "check"``."""

    SETUP = "setup"
    TEACH = "teach"
    CHECK = "check"
    TASK = "task"
    STUB = "stub"
    SOLUTION = "solution"
    HINT = "hint"
    NOTES = "notes"
    REMOVED = "removed"

    @property
    def tag(self) -> str | None:
        """The tag marking a cell of this kind (None for TEACH, which has none)."""
        return _TAGS.get(self)


_TAGS = {
    Kind.SETUP: "setup",
    Kind.CHECK: "check",
    Kind.TASK: "exercise",
    Kind.STUB: "exercise",
    Kind.SOLUTION: "solution",
    Kind.HINT: "hint",
    Kind.NOTES: "notes",
    Kind.REMOVED: "remove-cell",
}
# When a cell carries two of these tags, the first listed wins (a hidden kind over a shown one).
_PRECEDENCE = ("solution", "check", "remove-cell", "setup", "hint", "exercise", "notes")


def tags(cell: Cell) -> list[str]:
    """The tags of a notebook cell (an empty list when it has none)."""
    return list((cell.get("metadata") or {}).get("tags") or [])


def kind_of(cell: Cell) -> Kind:
    """The kind of `cell`: its tags first, then a ``notes`` slide type, else TEACH.

    Example:
        >>> from nbformat.v4 import new_code_cell, new_markdown_cell
        >>> kind_of(new_code_cell("assert x == 1", metadata={"tags": ["check"]}))
        <Kind.CHECK: 'check'>
        >>> kind_of(new_markdown_cell("## Your turn", metadata={"tags": ["exercise"]}))
        <Kind.TASK: 'task'>
        >>> spoken = {"slideshow": {"slide_type": "notes"}}
        >>> kind_of(new_markdown_cell("say this", metadata=spoken))
        <Kind.NOTES: 'notes'>
        >>> kind_of(new_code_cell("x = 1"))
        <Kind.TEACH: 'teach'>
    """
    present = set(tags(cell))
    for tag in _PRECEDENCE:
        if tag in present:
            return _from_tag(tag, cell)
    slideshow = (cell.get("metadata") or {}).get("slideshow") or {}
    return Kind.NOTES if slideshow.get("slide_type") == "notes" else Kind.TEACH


def is_kind(cell: Cell, *kinds: Kind) -> bool:
    """Whether `cell` is of one of `kinds`."""
    return kind_of(cell) in kinds


def _from_tag(tag: str, cell: Cell) -> Kind:
    if tag == "exercise":
        return Kind.STUB if cell.get("cell_type") == "code" else Kind.TASK
    return next(k for k, t in _TAGS.items() if t == tag)
