"""The exercises a lesson sets: for each, its stub, its solution and its hints.

In a lesson, an exercise is a markdown TASK cell, a code STUB cell (both tagged
``exercise``) defining ``def ex_…(…): ...``, a SOLUTION cell defining the same function,
HINT cells (``<details><summary>Hint 1</summary>…``), a ``check(ex_…)`` cell for the
student, and a CHECK cell asserting that it passes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from jaxtour.lesson._files import read
from jaxtour.lesson._kinds import Kind, kind_of


@dataclass(frozen=True)
class LessonExercise:
    """One exercise as a lesson source writes it: its stub, its solution, its hints."""

    name: str
    lesson: str
    stub: str
    solution: str | None
    hints: list[str] = field(default_factory=list)


def lesson_exercises(source: Path) -> list[LessonExercise]:
    """The exercises lesson `source` sets: each function a STUB cell defines.

    Raises:
        ValueError: a STUB or SOLUTION cell is not valid Python.
    """
    cells = read(source).cells
    solutions = {
        name: c.source
        for c in cells
        if kind_of(c) is Kind.SOLUTION
        for name in defined_functions(c.source, source)
    }
    stubs: dict[str, str] = {}
    hints: dict[str, list[str]] = {}
    latest: list[str] = []  # a hint belongs to the stub before it
    for cell in cells:
        if kind_of(cell) is Kind.STUB:
            latest = defined_functions(cell.source, source)
            stubs.update(dict.fromkeys(latest, cell.source))
        elif kind_of(cell) is Kind.HINT:
            for name in latest:
                hints.setdefault(name, []).append(cell.source)
    return [
        LessonExercise(
            name, source.stem, stub, solutions.get(name), hints.get(name, [])
        )
        for name, stub in stubs.items()
    ]


def defined_functions(code: str, source: Path | str = "<cell>") -> list[str]:
    """The names of the functions `code` defines at its top level."""
    try:
        tree = ast.parse(code)
    except SyntaxError as err:
        raise ValueError(
            f"{source}: a cell is not valid Python ({err.msg}, line "
            f"{err.lineno}):\n{code}"
        ) from None
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
