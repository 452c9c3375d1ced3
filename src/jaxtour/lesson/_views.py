"""The views of a lesson, and which kinds of cell each keeps: one table, asked by all.

==========  ===========================================================================
view        who reads it, and what it leaves out
==========  ===========================================================================
INSTRUCTOR  the instructor and the tests: every cell (what the suite executes)
STUDENT     the student (Colab, Binder, ``jaxtour lessons``): no solutions, no checks
            (a check cell asserts what a solution makes true, and defines no name a
            teaching cell uses, so dropping it changes nothing a student runs)
HTML        a reader of the exported lesson: every cell but checks and removed ones
DECK        the audience: prose, shown code, tasks and speaker notes
HANDOUT     a reader of the printed deck: the deck's cells, the notes under each slide
==========  ===========================================================================
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Iterable
from typing import Any

from jaxtour.lesson._kinds import Cell, Kind, kind_of


class View(enum.Enum):
    """Who a lesson is shown to; `KEEPS` says which kinds of cell each view keeps."""

    INSTRUCTOR = "instructor"
    STUDENT = "student"
    HTML = "html"
    DECK = "deck"
    HANDOUT = "handout"


_ALL = frozenset(Kind)
_SHOWN = frozenset({Kind.TEACH, Kind.TASK, Kind.NOTES})
KEEPS: dict[View, frozenset[Kind]] = {
    View.INSTRUCTOR: _ALL,
    View.STUDENT: _ALL - {Kind.SOLUTION, Kind.CHECK},
    View.HTML: _ALL - {Kind.CHECK, Kind.REMOVED},
    View.DECK: _SHOWN,
    View.HANDOUT: _SHOWN,
}


def keeps(view: View, cell: Cell) -> bool:
    """Whether `view` shows `cell`.

    Example:
        >>> from nbformat.v4 import new_code_cell
        >>> answer = new_code_cell("def ex_f(x): ...", metadata={"tags": ["solution"]})
        >>> keeps(View.INSTRUCTOR, answer), keeps(View.STUDENT, answer)
        (True, False)
    """
    return kind_of(cell) in KEEPS[view]


def kept(view: View, cells: Iterable[Cell]) -> list[Any]:
    """The cells of `cells` that `view` shows, in order."""
    return [cell for cell in cells if keeps(view, cell)]


def view(notebook: Any, which: View) -> Any:
    """A copy of `notebook` holding only the cells `which` shows; `notebook` is untouched.

    The student view also forgets jupytext's pairing (``metadata.jupytext.formats``): a
    student's Jupyter must not sync the notebook with a source that holds the solutions.

    Example:
        >>> from nbformat.v4 import new_code_cell, new_notebook
        >>> lesson = new_notebook(cells=[
        ...     new_code_cell("def ex_f(x):\\n    ...", metadata={"tags": ["exercise"]}),
        ...     new_code_cell("def ex_f(x):\\n    return x", metadata={"tags": ["solution"]}),
        ... ])
        >>> [c.source.splitlines()[1] for c in view(lesson, View.STUDENT).cells]
        ['    ...']
    """
    shown = copy.deepcopy(notebook)
    shown.cells = kept(which, shown.cells)
    if which is View.STUDENT:
        shown.get("metadata", {}).get("jupytext", {}).pop("formats", None)
    return shown
