"""Every lesson's exercises, generically: each stub fails its check with help and no
traceback, each solution passes it (read from the lesson's one cached execution), the
lessons and the registry agree, hints are collapsed <details>, and no solution reaches a
student's notebook or a deck."""

import re
from pathlib import Path

import nbformat
import pytest

from jaxtour import exercises as ex
from jaxtour import lesson
from jaxtour.lesson import Kind, View, kind_of

ROOT = Path(__file__).resolve().parent.parent
LESSONS = lesson.find_lessons(ROOT / "notebooks")
FOUND = [found for source in LESSONS for found in lesson.lesson_exercises(source)]
HINT = re.compile(r"^<details><summary>Hint \d+</summary>.+</details>$", re.DOTALL)


def _namespace() -> dict:
    """What a solution may use: jax, jnp, lax, np, optax (lesson 08) and `check`."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    return {
        "jax": jax,
        "jnp": jnp,
        "lax": jax.lax,
        "np": np,
        "optax": optax,
        "check": ex.check,
    }


def _define(code: str, name: str):
    namespace = _namespace()
    exec(compile(code, f"<{name}>", "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("found", FOUND, ids=lambda f: f.name)
def test_the_stub_fails_its_check_with_help_and_no_traceback(found):
    feedback = ex.check(_define(found.stub, found.name), quiet=True)
    assert not feedback.passed and feedback.kind == "not done", feedback
    assert f"`{found.name}`" in feedback.message and "Traceback" not in feedback.message


@pytest.mark.parametrize("found", FOUND, ids=lambda f: f.name)
def test_every_exercise_has_a_solution(found):
    assert found.solution is not None, (
        f"{found.lesson}: `{found.name}` has no cell tagged `solution` defining it"
    )


# Last lesson first: test_notebooks.py asks for the lessons first to last, so when the two
# files run at once in two workers, each executes lessons the other will find cached
# instead of waiting on the lesson the other is running.
@pytest.mark.notebooks
@pytest.mark.slow
@pytest.mark.parametrize("found", FOUND[::-1], ids=lambda f: f.name)
def test_the_solution_passes_its_check_in_the_executed_lesson(found, executed_lesson):
    # The lesson's own run (cached once per run, instructor view) already checked it:
    # read what its `check(ex_…)` cell printed instead of checking it again.
    [source] = [s for s in LESSONS if s.stem == found.lesson]
    run = nbformat.read(executed_lesson(source).ipynb, as_version=4)
    cells = [c for c in run.cells if c.source.strip() == f"check({found.name})"]
    assert len(cells) == 1, (
        f"{found.lesson}: want one cell holding only `check({found.name})` (the student's "
        f"check), found {len(cells)}"
    )
    [cell] = cells
    printed = "".join(o.get("text", "") for o in cell.outputs)
    printed += "".join(
        str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs
    )
    assert f"✓ {found.name}: correct!" in printed, (
        f"{found.lesson}: check({found.name}) said {printed!r}"
    )


@pytest.mark.parametrize("found", FOUND, ids=lambda f: f.name)
def test_each_exercise_has_hints_that_open_one_at_a_time(found):
    assert found.hints, (
        f"{found.lesson}: `{found.name}` has no markdown cell tagged `hint`"
    )
    for hint in found.hints:
        assert HINT.match(hint.strip()), (
            f"{found.lesson}: a hint of {found.name} is not "
            f"<details><summary>Hint N</summary>…</details>: {hint!r}"
        )


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_no_solution_stub_or_hint_reaches_the_deck(source):
    from jaxtour.slides._plan import plan_slides

    notebook = lesson.read(source)
    deck = "\n".join(c.source for c in plan_slides(notebook, source.stem).cells)
    secret = [
        c for c in notebook.cells if kind_of(c) in (Kind.SOLUTION, Kind.HINT, Kind.STUB)
    ]
    elsewhere = {
        line.strip()
        for c in notebook.cells
        if c not in secret
        for line in c.source.splitlines()
    }
    for cell in secret:
        for line in cell.source.splitlines():
            if line.strip() and line.strip() not in elsewhere:
                assert line.strip() not in deck, (
                    f"{source.stem}: the deck shows {line!r}"
                )


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_the_students_notebook_needs_no_solution_to_run(source):
    # With the stub in place, only `check(ex_…)` may name an exercise in a code cell the
    # student runs: a teaching cell using the solved function would fail in build/student/.
    names = [f.name for f in FOUND if f.lesson == source.stem]
    student = lesson.view(lesson.read(source), View.STUDENT)
    for cell in student.cells:
        if cell.cell_type != "code" or kind_of(cell) is Kind.STUB:
            continue
        for name in names:
            rest = re.sub(
                rf"^check\({name}\)\s*(#.*)?$", "", cell.source, flags=re.MULTILINE
            )
            assert not re.search(rf"\b{name}\b", rest), (
                f"{source.stem}: a cell students run uses `{name}`, which only the solution "
                "defines, so build/student/ stops there on Run All; leave trying it to the "
                f"student (a cell tagged `exercise`) or to the `check` cell:\n{cell.source}"
            )


def test_every_registered_exercise_is_set_by_exactly_one_lesson_and_vice_versa():
    in_lessons = {}
    for found in FOUND:
        assert found.name not in in_lessons, (
            f"{found.name} is set by {in_lessons[found.name]} and by {found.lesson}"
        )
        in_lessons[found.name] = found.lesson
    registered = {e.name: e.lesson for e in ex.exercises()}
    assert in_lessons == registered, (
        f"lessons set {sorted(in_lessons.items() - registered.items())} that the registry "
        f"lacks; the registry has {sorted(registered.items() - in_lessons.items())} that no "
        "lesson sets"
    )


@pytest.mark.parametrize("number", [f"{n:02d}" for n in range(1, 9)])
def test_every_lesson_sets_two_to_four_exercises(number):
    [source] = [s for s in LESSONS if s.stem.startswith(number)]
    count = sum(f.lesson == source.stem for f in FOUND)
    assert 2 <= count <= 4, (
        f"lesson {source.stem} sets {count} exercise(s); want 2 to 4"
    )


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_no_solution_reaches_the_students_notebook(source, tmp_path):
    instructor_path, student_path = lesson.write_notebooks([source], tmp_path)
    teacher = nbformat.read(instructor_path, as_version=4)
    student = nbformat.read(student_path, as_version=4)
    hidden = [c for c in teacher.cells if kind_of(c) in (Kind.SOLUTION, Kind.CHECK)]
    shown = [c for c in teacher.cells if c not in hidden]
    # A line only a solution holds (not the stub's `def`, not a line the lesson
    # shows elsewhere) must not be anywhere in the student's file.
    elsewhere = {line.strip() for c in shown for line in c.source.splitlines()}
    text = "\n".join(c.source for c in student.cells) + student_path.read_text()
    for cell in (c for c in hidden if kind_of(c) is Kind.SOLUTION):
        for line in cell.source.splitlines():
            if line.strip() and line.strip() not in elsewhere:
                assert line.strip() not in text, (
                    f"{source.stem}: solution line {line!r}"
                )
    assert [c.source for c in student.cells] == [c.source for c in shown]
    hints = [c.source for c in teacher.cells if kind_of(c) is Kind.HINT]
    assert hints == [c.source for c in student.cells if kind_of(c) is Kind.HINT]
