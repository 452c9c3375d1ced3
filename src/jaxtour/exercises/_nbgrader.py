"""An nbgrader course from the lessons' exercises: `jaxtour exercises --nbgrader DIR`.

For each lesson with exercises, `source/<lesson>/<lesson>.ipynb` holds only what its
exercises need, so autograding is quick: the lesson's imports, the functions its tasks
name, then per exercise the task, the hints, an answer cell whose function body is a
solution region (nbgrader's release puts the lesson's `...` stub there) and a locked,
autograded test cell worth `POINTS` that shows `check`'s feedback and, hidden from the
student, asserts that it passed. `nbgrader_config.py` sets the course up.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jaxtour import lesson
from jaxtour._files import write_atomically
from jaxtour.exercises import _context, _course
from jaxtour.exercises._grade import AUTOGRADE_PREPROCESSORS
from jaxtour.exercises._registry import find

#: Points each exercise is worth.
POINTS = 1
STUB = "...  # your code here"
#: The course's record of what jaxtour wrote (each file's SHA-256), to tell its own
#: files, which a re-export may rewrite, from an instructor's edits, which it keeps.
WRITTEN = ".jaxtour_written.json"
_STEPS = "".join(f"    {step!r},\n" for step in AUTOGRADE_PREPROCESSORS)
CONFIG = f'''"""The nbgrader course of jaxtour's exercises: `jaxtour exercises --nbgrader`."""

c = get_config()  # noqa: F821  (nbgrader defines it)
c.CourseDirectory.course_id = "jaxtour"
c.ClearSolutions.code_stub = {{"python": {STUB!r}}}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.Execute.timeout = 600  # seconds per cell: a first `check` starts the checker process

# Autograde runs each submission once, in a process of its own, and decides every mark
# outside it: jaxtour's GradeApart in place of nbgrader's Execute, so no answer reaches
# its mark. Seconds per cell and per exercise: c.GradeApart.timeout (default 60).
c.Autograde.autograde_preprocessors = [
{_STEPS}]
'''


def write_nbgrader_course(
    sources: list[Path],
    folder: Path,
    points: Mapping[str, float] | None = None,
    own: Path | None = None,
) -> tuple[list[Path], list[Path]]:
    """Write `folder/nbgrader_config.py` and one assignment per lesson with exercises.

    Each exercise is worth the points its checker was registered with
    (`@checks(..., points=)`), unless `points` maps its name to another number.
    `own`, a folder of the course's own exercises (`_course`), adds its lessons'
    assignments and copies its checker modules to `folder/checkers/`, which the
    course's autograde loads.

    A file already there that differs from what would be written is rewritten when it
    is as jaxtour last wrote it (`WRITTEN` records each file's SHA-256: new `points`,
    say), and kept, never overwritten, when it was edited since (an instructor's edit,
    or a file jaxtour has no record of): delete it to have it written again.

    Returns:
        (the files written, the configuration first; the edited files kept).
    """
    import nbformat

    config = CONFIG + (_course.CONFIG if own is not None else "")
    files = {folder / "nbgrader_config.py": config.encode()}
    if own is not None:
        sources = [*sources, *_course.own_lessons(own)]
        for path in _course.checker_files(own):
            files[folder / _course.CHECKERS / path.name] = path.read_bytes()
    for source in sources:
        notebook = assignment(source, points)
        if notebook is not None:
            path = folder / "source" / source.stem / f"{source.stem}.ipynb"
            files[path] = nbformat.writes(notebook).encode()
    return _write_unedited(files, folder)


def _write_unedited(
    files: dict[Path, bytes], folder: Path
) -> tuple[list[Path], list[Path]]:
    """Write each of `files` unless the file there was edited since jaxtour wrote it."""
    record = folder / WRITTEN
    try:
        hashes = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet (or unreadable): every differing file kept
        hashes = {}
    hashes = hashes if isinstance(hashes, dict) else {}
    written, kept = [], []
    for path, data in files.items():
        name = path.relative_to(folder).as_posix()
        there = path.read_bytes() if path.is_file() else data
        if there != data and hashes.get(name) != _sha256(there):
            kept.append(path)
            continue
        write_atomically(path, data)
        hashes[name] = _sha256(data)
        written.append(path)
    text = json.dumps(hashes, indent=1, sort_keys=True) + "\n"
    write_atomically(record, text.encode())
    return written, kept


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def assignment(source: Path, points: Mapping[str, float] | None = None) -> Any:
    """Lesson `source`'s exercises as an nbgrader source notebook, or None without any
    (each exercise worth its registered points, or what `points` says)."""
    import nbformat.v4 as nbf

    found = lesson.lesson_exercises(source)
    cells = lesson.read(source).cells
    tasks, imports, drawings, context = _carried(cells, found)
    found = [ex for ex in found if not _unknown_names(ex, imports + "\n" + context)]
    if not found:
        return None
    worth = {ex.name: _points(ex.name, points) for ex in found}
    notebook = nbf.new_notebook()
    notebook.metadata.kernelspec = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        _locked(nbf.new_markdown_cell(_intro(source.stem, worth)), "intro"),
        _locked(nbf.new_code_cell(imports), "imports"),
    ]
    if context:
        notebook.cells.append(_locked(nbf.new_code_cell(context), "context"))
    for ex in found:
        if ex.name in drawings:
            picture = nbf.new_code_cell(drawings[ex.name])
            notebook.cells.append(_locked(picture, f"picture_{ex.name}"))
        notebook.cells += _exercise_cells(ex, tasks.get(ex.name), worth[ex.name])
    return lesson.stable_ids(notebook, source.stem)  # a re-run writes the same bytes


def _carried(
    cells: Any, found: list[lesson.LessonExercise]
) -> tuple[dict[str, str], str, dict[str, str], str]:
    """(the tasks, the imports, the drawings the tasks point at, the definitions all
    of them need) that an assignment carries over from its lesson."""
    tasks = _context.tasks(cells)
    said = {ex.name: " ".join([tasks.get(ex.name, ex.stub), *ex.hints]) for ex in found}
    drawings = _context.pictures(cells, said)
    words = " ".join(said.values())
    solutions = [ex.solution for ex in found if ex.solution]  # a value it reads, say
    code = "\n".join([*drawings.values(), *solutions])
    return (
        tasks,
        _context.imports(cells),
        drawings,
        _context.context(cells, words, code),
    )


def left_out_of_course(source: Path) -> dict[str, list[str]]:
    """Lesson `source`'s exercises the course leaves out, each with the names its solution
    reads that only the lesson computes (a count read off one of its drawings, say):
    an assignment holds the lesson's imports and the functions its tasks name, not the
    lesson's run. Students do these in the lesson, where `check` gives its feedback."""
    cells = lesson.read(source).cells
    found = lesson.lesson_exercises(source)
    _, imports, _, context = _carried(cells, found)
    given = imports + "\n" + context
    return {ex.name: m for ex in found if (m := _unknown_names(ex, given))}


def _unknown_names(ex: lesson.LessonExercise, given: str) -> list[str]:
    """The names `ex`'s solution reads that neither `given` nor Python defines."""
    if ex.solution is None:
        return []
    bound, _ = lesson.names(given)
    _, free = lesson.names(ex.solution)
    return sorted(free - bound - set(dir(builtins)))


def _points(name: str, given: Mapping[str, float] | None) -> float:
    if given and name in given:
        return given[name]
    registered = find(name)
    return registered.points if registered is not None else POINTS


def _exercise_cells(ex: lesson.LessonExercise, task: str | None, points: float) -> list:
    import nbformat.v4 as nbf

    if ex.solution is None:
        raise ValueError(
            f"{ex.lesson}: `{ex.name}` has no cell tagged `solution`; nbgrader needs "
            "one to mark the answer region."
        )
    cells = [
        _locked(nbf.new_markdown_cell(task or f"Write `{ex.name}`."), f"task_{ex.name}")
    ]
    cells += [
        _locked(nbf.new_markdown_cell(hint), f"hint_{ex.name}_{i}")
        for i, hint in enumerate(ex.hints, 1)
    ]
    answer = nbf.new_code_cell(solution_region(ex.solution))
    answer.metadata.nbgrader = _metadata(ex.name, solution=True)
    test = nbf.new_code_cell(
        f"{_course.visible_check(ex.name)}\n### BEGIN HIDDEN TESTS\n"
        f"_feedback = check({ex.name}, quiet=True)\n"
        "assert _feedback.passed, _feedback.message\n### END HIDDEN TESTS"
    )
    test.metadata.nbgrader = _metadata(
        f"test_{ex.name}", grade=True, locked=True, points=points
    )
    return [*cells, answer, test]


def solution_region(code: str) -> str:
    """`code` with each top-level function's body, and every other top-level statement,
    between `### BEGIN SOLUTION` and `### END SOLUTION` (what nbgrader's release
    replaces with the stub); the `def` lines stay, so the student sees the signature.

    Example:
        >>> print(solution_region("def f(x):\\n    return 2 * x"))
        def f(x):
            ### BEGIN SOLUTION
            return 2 * x
            ### END SOLUTION
    """
    lines = code.rstrip().splitlines()
    out: list[str] = []
    done = 0  # lines of `code` already copied
    for node in ast.parse(code).body:
        first = _first_line(node)
        out += lines[done : first - 1]
        end = node.end_lineno or node.lineno
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = _first_line(node.body[0])  # a decorated inner def starts at its @
            out += lines[first - 1 : body - 1]
            out += _region(lines[body - 1 : end], " " * node.body[0].col_offset)
        else:
            out += _region(lines[first - 1 : end], "")
        done = end
    return "\n".join(out + lines[done:])


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _region(lines: list[str], indent: str) -> list[str]:
    return [f"{indent}### BEGIN SOLUTION", *lines, f"{indent}### END SOLUTION"]


def _metadata(
    grade_id: str,
    *,
    solution: bool = False,
    grade: bool = False,
    locked: bool = False,
    points: float = POINTS,
) -> dict:
    return {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        **({"points": points} if grade else {}),
    }


def _locked(cell: Any, grade_id: str) -> Any:
    cell.metadata.nbgrader = _metadata(grade_id, locked=True)
    return cell


def _intro(stem: str, worth: dict[str, float]) -> str:
    marks = ", ".join(f"`{name}` {_said(p)}" for name, p in worth.items())
    return (
        f"# Exercises of lesson {stem[:2]}: {stem[3:].replace('_', ' ')}\n\n"
        "Write each function in place of its `...`, run its cell, then run the test cell "
        f"under it: it shows what is right or wrong. Marks: {marks}. Run the first "
        "cells first."
    )


def _said(points: float) -> str:
    number = f"{points:g}"
    return f"{number} point{'' if number == '1' else 's'}"
