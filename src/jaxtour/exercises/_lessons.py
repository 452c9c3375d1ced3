"""Exercises in the lesson sources: students' and instructors' notebooks, and the tasks.

In a lesson `notebooks/NN_topic.py`, an exercise is a code cell tagged `exercise`
holding the stub (`def ex_…(…): ...`), a cell tagged `solution` defining the same
function, markdown cells tagged `hint` (`<details><summary>Hint 1</summary>…`), a
`check(ex_…)` cell, and a hidden cell tagged `check` asserting that it passes.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass, field
from pathlib import Path

from jaxtour._files import write_atomically

#: Cells a student's notebook leaves out: the solutions, and the asserts that need them.
STUDENT_DROPS = ("solution", "check")


@dataclass(frozen=True)
class LessonExercise:
    """One exercise as a lesson source writes it: its stub, its solution, its hints."""

    name: str
    lesson: str
    stub: str
    solution: str | None
    hints: list[str] = field(default_factory=list)


def tags(cell) -> list[str]:
    """The tags of a notebook cell (an empty list when it has none)."""
    return list(cell.get("metadata", {}).get("tags", []))


def read(source: Path):
    """The lesson `source` (py:percent) as an nbformat notebook, via jupytext."""
    import jupytext

    return jupytext.read(source)


def student_notebook(notebook):
    """A copy of `notebook` without its `solution` and `check` cells; hints stay."""
    student = copy.deepcopy(notebook)
    student.cells = [c for c in student.cells if not set(tags(c)) & set(STUDENT_DROPS)]
    return student


def write_notebooks(sources: list[Path], build_dir: Path) -> list[Path]:
    """Write build/instructor/NN_topic.ipynb (every cell) and build/student/ (no solutions)."""
    import jupytext

    written = []
    for source in sources:
        notebook = read(source)
        for folder, version in (
            ("instructor", notebook),
            ("student", student_notebook(notebook)),
        ):
            path = build_dir / folder / f"{source.stem}.ipynb"
            write_atomically(path, jupytext.writes(version, fmt="ipynb").encode())
            written.append(path)
    return written


def lesson_exercises(source: Path) -> list[LessonExercise]:
    """The exercises lesson `source` sets: each function a code cell tagged `exercise` defines.

    Raises:
        ValueError: a cell tagged `exercise` or `solution` is not valid Python.
    """
    cells = read(source).cells
    solutions = {
        name: c.source
        for c in cells
        if c.cell_type == "code" and "solution" in tags(c)
        for name in defined_functions(c.source, source)
    }
    stubs: dict[str, str] = {}
    hints: dict[str, list[str]] = {}
    latest: list[str] = []  # a hint belongs to the exercise cell before it
    for cell in cells:
        if cell.cell_type == "code" and "exercise" in tags(cell):
            latest = defined_functions(cell.source, source)
            stubs.update(dict.fromkeys(latest, cell.source))
        elif "hint" in tags(cell):
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
