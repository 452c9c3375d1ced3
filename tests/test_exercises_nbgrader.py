"""`jaxtour exercises --nbgrader DIR`: a course the real nbgrader releases, autogrades
and exports (an untouched submission scores 0, the solutions full marks), and for every
lesson a source notebook whose regions release as the lesson's stubs."""

import builtins
import functools
import re
from pathlib import Path

import nbformat
import pytest
from own_course import OWN_CHECKERS, OWN_EXERCISES, write_own

from jaxtour import lesson
from jaxtour.cli import main
from jaxtour.exercises import _course, _nbgrader, _verdict, find

ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def _exercises(source: Path) -> list[lesson.LessonExercise]:
    """Lesson `source`'s exercises, read once (each read parses the lesson)."""
    return lesson.lesson_exercises(source)


@functools.cache
def _left_out(source: Path) -> dict[str, list[str]]:
    """What the course leaves out of lesson `source`, found once."""
    return _nbgrader.left_out_of_course(source)


LESSONS = [s for s in lesson.find_lessons(ROOT / "notebooks") if _exercises(s)]
GRADED = (
    "02_close_to_the_math"  # cheap checks; the other lessons are checked by structure
)


def test_points_come_from_the_registration_unless_the_export_says_otherwise(
    tmp_path, capsys
):
    source = ROOT / "notebooks" / "01_why_jax.py"
    notebook = _nbgrader.assignment(source, {"ex_time_call": 3})
    graded = [
        c.metadata.nbgrader for c in notebook.cells if c.metadata.nbgrader["grade"]
    ]
    assert {m["grade_id"]: m["points"] for m in graded} == {
        "test_ex_gelu_jaxpr": 1,
        "test_ex_time_call": 3,
        "test_ex_safe_log": 1,
    }
    assert "Marks: `ex_gelu_jaxpr` 1 point, `ex_time_call` 3 points," in (
        notebook.cells[0].source
    )
    course = tmp_path / "course"
    argv = ["exercises", "--nbgrader", str(course), "--lesson", "1"]
    assert main([*argv, "--points", "ex_time_call=2"]) == 0
    written = nbformat.read(course / "source" / "01_why_jax" / "01_why_jax.ipynb", 4)
    assert [
        c.metadata.nbgrader.get("points")
        for c in written.cells
        if c.metadata.nbgrader["grade"]
    ] == [1, 2, 1]
    capsys.readouterr()
    with pytest.raises(SystemExit) as usage:
        main([*argv, "--points", "ex_nothing=2"])
    assert usage.value.code == 2
    assert (
        "--points takes an exercise's name and a number above 0, e.g. ex_time_call=2; "
        "got 'ex_nothing=2'" in capsys.readouterr().err
    )


def test_the_course_grades_with_jaxtours_preprocessor_in_place_of_execute(tmp_path):
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute
    from traitlets.config.loader import PyFileConfigLoader
    from traitlets.utils.importstring import import_item

    import jaxtour.exercises

    _nbgrader.write_nbgrader_course([], tmp_path)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path)).load_config()
    steps = [import_item(p) for p in config.Autograde.autograde_preprocessors]
    default = Autograde.class_traits()["autograde_preprocessors"].default()
    assert steps == [
        jaxtour.exercises.GradeApart if p is Execute else p for p in default
    ]
    assert steps[0].__name__ == "GradeApart" and Execute not in steps


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_each_exercise_has_an_answer_region_and_a_graded_hidden_test(source):
    notebook = _assignment(source)
    left = _left_out(source)
    names = [ex.name for ex in _exercises(source) if ex.name not in left]
    meta = [c.metadata.get("nbgrader", {}) for c in notebook.cells]
    assert all(m.get("grade_id") for m in meta), "every cell has an nbgrader id"
    assert len({m["grade_id"] for m in meta}) == len(meta), "ids are unique"
    answers = [
        c for c, m in zip(notebook.cells, meta, strict=True) if m.get("solution")
    ]
    tests = [c for c, m in zip(notebook.cells, meta, strict=True) if m.get("grade")]
    assert [lesson.defined_functions(c.source)[0] for c in answers] == names
    assert [m["points"] for m in meta if m.get("grade")] == [_nbgrader.POINTS] * len(
        names
    )
    for name, test in zip(names, tests, strict=True):
        visible, hidden = test.source.split("### BEGIN HIDDEN TESTS")
        assert visible.strip() == f"check({name})"
        assert f"check({name}, quiet=True)" in hidden and "assert" in hidden
    assert all(m["locked"] for m in meta if not m.get("solution"))
    nbformat.validate(notebook)


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_a_released_answer_cell_is_a_stub_that_check_calls_not_done(source):
    notebook = _assignment(source)
    for cell in notebook.cells:
        if not cell.metadata.nbgrader.get("solution"):
            continue
        released = _release(cell.source)
        namespace: dict = {}
        exec(released, namespace)
        (name,) = [n for n in lesson.defined_functions(released) if n.startswith("ex_")]
        assert find(name) is not None and _verdict.is_stub(namespace[name]), released


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_every_solution_needs_only_what_its_assignment_defines(source):
    # what autograding the solutions runs: the locked cells, then each answer
    cells = _assignment(source).cells
    given = "\n".join(c.source for c in cells if c.cell_type == "code")
    bound, _ = lesson.names(given)
    for cell in cells:
        if cell.metadata.nbgrader.get("solution"):
            _, free = lesson.names(cell.source)
            missing = free - bound - set(dir(builtins))
            assert not missing, (
                f"{source.stem}: the answer reads {missing}:\n{cell.source}"
            )


def test_every_exercise_is_in_the_course_with_what_its_solution_reads():
    assert [n for s in LESSONS for n in _left_out(s)] == []
    cells = _assignment(ROOT / "notebooks" / "07_parallelism.py").cells
    imports, context = cells[1].source, cells[2].source
    # the set-up cell holds a `%pip` line: read as IPython, its imports still count
    assert "from jax.sharding import AxisType, NamedSharding" in imports
    # its JAX settings come before anything computes: the drawing has 8 devices' program
    assert 'jax.config.update("jax_num_cpu_devices", 8)' in imports
    assert "count_dp = collectives(auto_update, params, images, labels, velocity)" in (
        context
    )
    assert any(
        c.metadata.nbgrader.get("grade_id") == "test_ex_count_all_reduces"
        for c in cells
    )


POINTS_AT = re.compile(r"(?:`|<code>)([A-Za-z_]\w*)(?:`|</code>) above")
AT_A_DRAWING = re.compile(r"(picture|drawing)s? above", re.IGNORECASE)


@pytest.mark.parametrize("source", LESSONS, ids=lambda s: s.stem)
def test_every_assignment_runs_alone_and_points_only_at_its_own_cells(source):
    # run top to bottom, each cell reads only what the cells above it (or it) define
    bound, drawn = set(dir(builtins)), False
    for cell in _assignment(source).cells:
        if cell.cell_type == "markdown":
            for name in POINTS_AT.findall(cell.source):
                assert name in bound, f"{source.stem}: `{name}` above? {cell.source}"
            assert drawn or not AT_A_DRAWING.search(cell.source), cell.source
            continue
        defined, reads = lesson.names(cell.source)
        missing = reads - bound - defined
        assert not missing, f"{source.stem}: {sorted(missing)} in\n{cell.source}"
        bound |= defined
        drawn = drawn or "draw_" in cell.source


def test_lesson_02s_assignment_holds_the_matrix_and_the_drawing_its_text_names():
    cells = _assignment(ROOT / "notebooks" / "02_close_to_the_math.py").cells
    ids = [c.metadata.nbgrader["grade_id"] for c in cells]
    context = cells[ids.index("context")].source
    assert "A = jnp.array(" in context and "def g(x)" in context
    assert (
        "def clip_gradient(x)" in context
    )  # "copy the shape of `clip_gradient` above"
    picture = ids.index("picture_ex_biggest_cotangent")
    assert ids[picture + 1] == "task_ex_biggest_cotangent"
    assert "draw_vjp(g, cotangents=u)(x3)" in cells[picture].source


@functools.cache
def _assignment(source: Path) -> nbformat.NotebookNode:
    """Lesson `source`'s assignment, built once for the tests that only read it."""
    return _nbgrader.assignment(source)


def _release(code: str) -> str:
    """What nbgrader's ClearSolutions makes of a region: the stub, indented like it."""
    return re.sub(
        r"^( *)### BEGIN SOLUTION\n.*?^ *### END SOLUTION",
        lambda m: m.group(1) + _nbgrader.STUB,
        code,
        flags=re.MULTILINE | re.DOTALL,
    )


def test_solution_region_keeps_signatures_and_wraps_other_statements():
    code = "import math\n\n\n@jax.jit\ndef f(x):\n    y = 2 * x\n    return y\n"
    assert _nbgrader.solution_region(code) == (
        "### BEGIN SOLUTION\nimport math\n### END SOLUTION\n\n\n@jax.jit\ndef f(x):\n"
        "    ### BEGIN SOLUTION\n    y = 2 * x\n    return y\n    ### END SOLUTION"
    )


def test_nbgrader_refuses_a_file_for_a_folder(tmp_path, capsys):
    target = tmp_path / "course"
    target.write_text("not a folder")
    assert main(["exercises", "--nbgrader", str(target)]) == 1
    assert f"--nbgrader takes a folder; {target} is a file." in capsys.readouterr().err


def test_an_edited_source_notebook_is_kept_not_overwritten(tmp_path, capsys):
    course = tmp_path / "course"
    assert main(["exercises", "--nbgrader", str(course), "--lesson", "04"]) == 0
    notebook = course / "source" / "04_transformations" / "04_transformations.ipynb"
    notebook.write_text(notebook.read_text().replace("Your turn", "Your go"))
    edited = notebook.read_text()
    capsys.readouterr()
    assert main(["exercises", "--nbgrader", str(course), "--lesson", "04"]) == 0
    out = capsys.readouterr().out
    assert f"Kept {notebook}: it differs from what jaxtour writes (your edits?)" in out
    assert "Wrote no assignment" in out and notebook.read_text() == edited
    notebook.unlink()
    assert main(["exercises", "--nbgrader", str(course), "--lesson", "04"]) == 0
    assert (
        "nbgrader_config.py and 1 assignment (04_transformations)."
        in capsys.readouterr().out
    )


# --- a course's own exercises: exported beside the lessons', judged by the same grader ---


@pytest.fixture(scope="module")
def own_course(tmp_path_factory):
    """A course exported with its own exercises (folder `own`), into `course`; the
    exercises are unregistered afterwards, so no other test sees them."""
    from jaxtour.exercises import _registry

    root = tmp_path_factory.mktemp("own")
    own, empty = root / "own", root / "no_lessons"
    own.mkdir(), empty.mkdir()
    write_own(own)
    course = root / "course"
    argv = ["exercises", "--nbgrader", str(course), "--notebooks", str(empty)]
    assert main([*argv, "--own-exercises", str(own)]) == 0
    yield course
    for name in OWN_EXERCISES:
        _registry._REGISTRY.pop(name, None)


def test_own_exercises_are_exported_with_their_checkers_and_points(own_course):
    from traitlets.config.loader import PyFileConfigLoader

    notebook = nbformat.read(
        own_course / "source" / "90_our_extras" / "90_our_extras.ipynb", 4
    )
    graded = [m for c in notebook.cells if (m := c.metadata.nbgrader)["grade"]]
    assert {m["grade_id"]: m["points"] for m in graded} == {
        "test_ex_course_cube": 2,
        "test_ex_course_square": 1,
    }
    # the student's kernel has no checker for it: the test cell says so, not check()
    tests = [c.source for c in notebook.cells if c.metadata.nbgrader["grade"]]
    tests = [t for t in tests if "HIDDEN" in t]
    assert [t.split("\n")[0] for t in tests] == [_course.KEPT_CHECKER] * 2
    assert (own_course / "checkers" / "checkers.py").read_text() == OWN_CHECKERS
    config = PyFileConfigLoader(
        "nbgrader_config.py", path=str(own_course)
    ).load_config()
    assert config.GradeApart.checkers == [str(own_course / "checkers")]


def test_a_second_export_writes_the_same_bytes_and_new_points_rewrite_it(
    tmp_path, capsys
):
    first, second = tmp_path / "first", tmp_path / "second"
    argv = ["exercises", "--lesson", "01", "--nbgrader"]
    assert main([*argv, str(first)]) == 0
    assert main([*argv, str(second)]) == 0
    notebook = Path("source") / "01_why_jax" / "01_why_jax.ipynb"
    assert (first / notebook).read_bytes() == (second / notebook).read_bytes()
    ids = [c.id for c in nbformat.read(first / notebook, as_version=4).cells]
    assert len(set(ids)) == len(ids)
    capsys.readouterr()
    assert main([*argv, str(first), "--points", "ex_safe_log=5"]) == 0
    assert "Kept" not in capsys.readouterr().out
    cells = nbformat.read(first / notebook, as_version=4).cells
    marks = {c.metadata.nbgrader["grade_id"]: c.metadata.nbgrader for c in cells}
    assert marks["test_ex_safe_log"]["points"] == 5


def test_exercises_of_a_lesson_that_is_none_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["exercises", "--lesson", "99"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (
        "jaxtour exercises: error: there is no lesson 99; the lessons are 00, 01" in err
    )


def test_nbgrader_refuses_a_folder_of_no_lessons_and_writes_nothing(tmp_path, capsys):
    empty, course = tmp_path / "empty", tmp_path / "c8"
    empty.mkdir()
    assert (
        main(["exercises", "--nbgrader", str(course), "--notebooks", str(empty)]) == 1
    )
    assert f"error: No lessons in {empty}: --notebooks takes" in capsys.readouterr().err
    assert not course.exists()
