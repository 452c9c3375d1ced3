"""Grading with the real nbgrader: generate, release, autograde, read the gradebook. Four
submissions of two assignments (untouched, solved, half right, and one playing the
tricks a student can read off the installed kit); every exercise's mark is asserted.

The marks are decided outside the answer's process (`jaxtour.exercises._grade`), so a
trick played there changes nothing: only a right answer scores. What the kit measures
there is trusted only while the kit is untouched: a submission that changes jaxtour's,
NumPy's or JAX's names there has every answer judged by a probe refused, right or not.
"""

import contextlib
import io
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

import nbformat
import pytest
from own_course import OWN_EXERCISES, OWN_STEM, write_own

from jaxtour.exercises import write_nbgrader_course

ROOT = Path(__file__).resolve().parent.parent
# seconds per cell and per exercise: what an endless answer waits, once per course; a
# right answer on a busy machine must finish well within it (a solved
# ex_jacobian_from_jvp took 15 s of 20 under a load of 13 on 2 cores)
TIMEOUT = 30
WHY, MATH = "01_why_jax", "02_close_to_the_math"

ENDLESS_TIMER = """def ex_time_call(f, x):
    import time
    while True:
        time.sleep(0.05)
"""
TOP_LEVEL_LOOP = """import time
while True:
    time.sleep(0.05)

def ex_jacobian_from_jvp(f, x):
    return jax.jacfwd(f)(x)
"""
RAISES = "def ex_grad_from_vjp(f, x):\n    raise ValueError('not yet')\n"
WRONG_COUNT = "def ex_gelu_jaxpr():\n    return (9, 4)\n"
FLOAT16 = """def ex_clip_by_norm(x):
    return x.astype(jnp.float16)
"""
# 1: rebind `check` where the kernel's grade cells would call it
REBIND_CHECK = """import jaxtour.exercises
from jaxtour.exercises import Feedback

def check(fn, quiet=False, timeout=None):
    return Feedback(True, None, "correct!", "passed")

jaxtour.exercises.check = check

def ex_grad_from_vjp(f, x):
    return None
"""
# 2: read the checker's reference off its frame
READ_FRAME = """def ex_jacobian_from_jvp(f, x):
    import sys
    frame = sys._getframe(1)
    while frame is not None and "want" not in frame.f_locals:
        frame = frame.f_back
    return frame.f_locals["want"] if frame is not None else x
"""
# 3: patch NumPy below the names the kit watches; 5: an int whose == and != both lie
PATCH_NUMPY_LYING_INT = """import numpy as np
np.all._implementation.__code__ = (lambda *a, **k: True).__code__
np.isclose = lambda *a, **k: True

class Liar(int):
    def __eq__(self, other):
        return False
    def __ne__(self, other):
        return False
    __hash__ = int.__hash__

def ex_biggest_cotangent():
    return (Liar(7), Liar(0))
"""
# 4: write forged replies on every pipe the process holds, then a right answer
FORGE_CHANNEL = """import json, os, struct
for fd in map(int, os.listdir("/proc/self/fd")):
    for seq in range(1, 200):
        body = json.dumps({"seq": seq, "value": {"t": "bool", "v": True},
                           "verdict": [True, "correct!", "passed"]}).encode()
        try:
            os.write(fd, struct.pack(">Q", len(body)) + body)
        except OSError:
            break
"""
# 5 again, for a count; and a forged `expect_close` beside a wrong log
LYING_COUNT = """class Liar(int):
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False
    __hash__ = int.__hash__

def ex_gelu_jaxpr():
    return (Liar(0), Liar(0))
"""
# 6: a timer that calls f once and says a constant
CONSTANT_TIMER = """def ex_time_call(f, x):
    f(x).block_until_ready()
    return 0.05
"""
PATCH_KIT_RIGHT_LOG = """import jaxtour.exercises._expect as expect
expect.expect_close = lambda *a, **k: None

def ex_safe_log(x):
    positive = x > 0
    return jnp.where(positive, jnp.log(jnp.where(positive, x, 1.0)), 0.0)
"""

# answer cells by grade id (None: the solution), cells added before an answer, the marks
SUBMISSIONS = {
    "half": {
        WHY: (
            {"ex_time_call": ENDLESS_TIMER, "ex_gelu_jaxpr": WRONG_COUNT},
            {},
            {"ex_gelu_jaxpr": 0, "ex_time_call": 0, "ex_safe_log": 1},
        ),
        MATH: (
            {
                "ex_grad_from_vjp": RAISES,
                "ex_jacobian_from_jvp": TOP_LEVEL_LOOP,
                "ex_clip_by_norm": FLOAT16,
            },
            {},
            {
                "ex_grad_from_vjp": 0,
                "ex_biggest_cotangent": 1,
                "ex_jacobian_from_jvp": 0,
                "ex_clip_by_norm": 0,
            },
        ),
    },
    "tricks": {
        WHY: (
            {
                "ex_gelu_jaxpr": LYING_COUNT,
                "ex_time_call": CONSTANT_TIMER,
                "ex_safe_log": PATCH_KIT_RIGHT_LOG,
            },
            {},
            {"ex_gelu_jaxpr": 0, "ex_time_call": 0, "ex_safe_log": 0},  # kit patched
        ),
        MATH: (
            {
                "ex_grad_from_vjp": REBIND_CHECK,
                "ex_jacobian_from_jvp": READ_FRAME,
                "ex_biggest_cotangent": PATCH_NUMPY_LYING_INT,
            },
            {"ex_clip_by_norm": FORGE_CHANNEL},
            {
                "ex_grad_from_vjp": 0,
                "ex_biggest_cotangent": 0,
                "ex_jacobian_from_jvp": 0,
                "ex_clip_by_norm": 0,  # right, but judged by probes on a patched kit
            },
        ),
    },
}


def _nbgrader(*runs: tuple[Path, tuple[str, ...]]) -> None:
    """`nbgrader ARGS` in each (course, ARGS), side by side; each must succeed."""
    with contextlib.ExitStack() as stack:
        started = []
        for course, args in runs:
            log = stack.enter_context(tempfile.TemporaryFile("w+"))  # no pipe to fill
            proc = subprocess.Popen(
                [sys.executable, "-m", "nbgrader", *args],
                cwd=course,
                env=_nbgrader_env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
            )
            stack.callback(_end, proc)  # a run that failed leaves none running
            started.append((proc, log))
        for proc, log in started:
            proc.wait(timeout=900)
            log.seek(0)
            assert proc.returncode == 0, log.read()[-6000:]


def _nbgrader_env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)  # nbgrader runs `alembic` from its venv
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _nbgrader_here(course: Path, *args: str) -> None:
    """`nbgrader ARGS` in `course`, run in this process as nbgrader's own tests run it
    (its `main`'s app, with the course's nbgrader_config.py): one start of Python,
    nbformat (jsonschema's imports, ~4 s of CPU) and nbgrader fewer than a command.
    A new gradebook's schema version is read here too, not by an `alembic heads`
    command (5.6 s of CPU, for its imports, to print one revision)."""
    from jupyter_core.application import NoStart
    from nbgrader.apps import NbGraderApp  # type: ignore[import-untyped]

    path, log = list(sys.path), io.StringIO()
    app = NbGraderApp.instance()
    head = mock.patch("nbgrader.api.get_alembic_version", _alembic_head)
    try:
        with (
            contextlib.chdir(course),
            mock.patch.dict(os.environ, _nbgrader_env()),
            head,
        ):
            app.initialize(list(args))
            app.init_logging(logging.StreamHandler, [log], color=False, subapps=True)
            app.start()
    except NoStart:  # how a jupyter command says its subcommand has run
        pass
    except SystemExit as stop:  # nbgrader's way to fail
        assert not stop.code, log.getvalue()[-6000:]
    finally:
        app.reset()
        sys.path[:] = path  # nbgrader put the course's folder first


def _alembic_head() -> str:
    """What nbgrader's `get_alembic_version` reads off `alembic heads`: the newest
    revision of nbgrader's gradebook schema."""
    import nbgrader  # type: ignore[import-untyped]
    from alembic.script import ScriptDirectory

    return ScriptDirectory(
        str(Path(nbgrader.__file__).parent / "alembic")
    ).get_current_head()


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _submit(
    course: Path, student: str, assignment: str, notebook: nbformat.NotebookNode
) -> None:
    folder = course / "submitted" / student / assignment
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{assignment}.ipynb")


def _edited(
    source: Path, answers: dict[str, str], before: dict[str, str]
) -> nbformat.NotebookNode:
    notebook = nbformat.read(source, as_version=4)
    cells = []
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in before:
            cells.append(nbformat.v4.new_code_cell(before[grade_id]))
        if grade_id in answers:
            cell.source = answers[grade_id]
        cells.append(cell)
    notebook.cells = cells
    return notebook


# autograde takes a course's submissions in the order of their student ids: lesson 01's
# endless answer ("half") first and lesson 02's last, so each one's TIMEOUT s of waiting
# overlaps the other course's grading, not the other's wait (both first: an idle core)
ORDER = {
    WHY: ("half", "solved", "tricks", "untouched"),
    MATH: ("untouched", "solved", "tricks", "own", "half"),
}


def _student_id(course: str, student: str) -> str:
    return f"{ORDER[course].index(student)}-{student}"


# the course's own exercises (tests/own_course.py): one submission, one right answer
# (judged through the course's own probe) and one wrong; their checkers reach autograde
# only through the course's checkers/ folder
OWN_WRONG = {"ex_course_square": "def ex_course_square(x):\n    return x * 2\n"}


@pytest.fixture(scope="module")
def marks(tmp_path_factory) -> dict[tuple[str, str], dict[str, float]]:
    """Each (student, assignment)'s marks by exercise, from nbgrader's gradebook."""
    from jaxtour.exercises import _registry

    root = tmp_path_factory.mktemp("grading")
    course, own = root / "course", root / "own"
    own.mkdir()
    write_own(own)
    sources = [ROOT / "notebooks" / f"{stem}.py" for stem in (WHY, MATH)]
    write_nbgrader_course(sources, course, own=own)
    for name in OWN_EXERCISES:  # registered here by the export: no other test sees them
        _registry._REGISTRY.pop(name, None)
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"c.GradeApart.timeout = {TIMEOUT}\n")
    # one generate_assignment for every assignment (its id is a glob), in this
    # process; then a copy of the course per lesson, the two `nbgrader autograde`
    # commands side by side (lesson 02's beside the course's own exercises): each
    # holds one endless answer, whose TIMEOUT s of waiting overlap the other's
    # grading instead of idling, for one more start of nbgrader and JAX
    _nbgrader_here(course, "generate_assignment", "*", "--force")
    courses = {WHY: course, MATH: root / "course_02"}
    shutil.copytree(course, courses[MATH])
    for assignment, folder in courses.items():
        _submit_all(folder, assignment)
    own_source = courses[MATH] / "source" / OWN_STEM / f"{OWN_STEM}.ipynb"
    own_id = _student_id(MATH, "own")
    _submit(courses[MATH], own_id, OWN_STEM, _edited(own_source, OWN_WRONG, {}))
    _nbgrader(
        *[(folder, ("autograde", "*", "--create")) for folder in courses.values()]
    )
    found = {}
    for assignment, folder in courses.items():
        students = ["untouched", "solved", *SUBMISSIONS]
        found |= _gradebook_marks(folder, assignment, {assignment: students})
    found |= _gradebook_marks(courses[MATH], MATH, {OWN_STEM: ["own"]})
    shutil.rmtree(root, ignore_errors=True)
    return found


def _submit_all(course: Path, assignment: str) -> None:
    """The released notebook untouched, the solutions, and each of SUBMISSIONS."""
    source = course / "source" / assignment / f"{assignment}.ipynb"
    released = course / "release" / assignment / f"{assignment}.ipynb"
    untouched, solved = (_student_id(assignment, s) for s in ("untouched", "solved"))
    _submit(course, untouched, assignment, nbformat.read(released, as_version=4))
    _submit(course, solved, assignment, nbformat.read(source, as_version=4))
    for student, plans in SUBMISSIONS.items():
        answers, before, _ = plans[assignment]
        notebook = _edited(source, answers, before)
        _submit(course, _student_id(assignment, student), assignment, notebook)


def _gradebook_marks(
    course: Path, lesson: str, students: dict[str, list[str]]
) -> dict[tuple[str, str], dict[str, float]]:
    """{(student, assignment): {exercise: score}} for each assignment's students, in
    the course of `lesson`."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for assignment, names in students.items():
            for student in names:
                student_id = _student_id(lesson, student)
                notebook = gb.find_submission_notebook(
                    assignment, assignment, student_id
                )
                found[student, assignment] = {
                    g.name.removeprefix("test_"): g.score for g in notebook.grades
                }
    return found


@pytest.mark.slow  # the real nbgrader: two assignments, four submissions each
@pytest.mark.parametrize("assignment", [WHY, MATH])
def test_untouched_scores_nothing_and_solved_scores_everything(marks, assignment):
    untouched, solved = marks["untouched", assignment], marks["solved", assignment]
    assert set(untouched) == set(SUBMISSIONS["half"][assignment][2])
    assert untouched == dict.fromkeys(untouched, 0.0)
    assert solved == dict.fromkeys(solved, 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("student", list(SUBMISSIONS))
@pytest.mark.parametrize("assignment", [WHY, MATH])
def test_each_exercise_scores_only_a_right_answer(marks, student, assignment):
    want = SUBMISSIONS[student][assignment][2]
    assert marks[student, assignment] == {k: float(v) for k, v in want.items()}


@pytest.mark.slow
def test_a_courses_own_exercises_are_graded_by_its_own_checkers(marks):
    # ex_course_cube is worth 2 (its registration says so)
    assert marks["own", OWN_STEM] == {"ex_course_cube": 2.0, "ex_course_square": 0.0}


# --- the channel: plain data only (no process needed) -----------------------------------


def test_plain_data_comes_back_as_builtins_and_numpy_arrays():
    import jax.numpy as jnp
    import ml_dtypes
    import numpy as np

    from jaxtour.exercises._plain import decode, encode

    sent = (1, [2.5, "a", None, True], {"k": 3 + 1j}, jnp.float32(1.5))
    back = decode(encode(sent))
    assert back[:3] == (1, [2.5, "a", None, True], {"k": 3 + 1j})
    assert (
        type(back[3]) is np.ndarray
        and back[3].shape == ()
        and back[3].dtype == np.float32
    )
    half = decode(encode(jnp.arange(3, dtype=jnp.bfloat16)))
    assert half.dtype == ml_dtypes.bfloat16 and half.tolist() == [0, 1, 2]
    assert type(decode(encode(np.float32(2.0)))) is np.float32


def test_the_standard_librarys_mappings_come_back_as_themselves():
    """An OrderedDict or a defaultdict is data, and JAX flattens each as its own kind of
    node: they came back Opaque, so a right answer of params in one was marked wrong."""
    import collections

    from jaxtour.exercises._plain import decode, encode

    ordered = collections.OrderedDict([("b", 1), ("a", [2.0])])
    counts = collections.defaultdict(int, {"x": 3})
    back = decode(encode((ordered, counts, {"d": ordered})))
    assert type(back[0]) is collections.OrderedDict and back[0] == ordered
    assert list(back[0]) == ["b", "a"]
    assert type(back[1]) is collections.defaultdict and back[1] == {"x": 3}
    assert back[1].default_factory is None  # code of the answer's stays behind
    assert type(back[2]["d"]) is collections.OrderedDict


def test_what_is_not_plain_data_comes_back_as_its_name_and_repr_only():
    from jaxtour.exercises._plain import Opaque, decode, encode

    class Liar(int):
        def __eq__(self, other):
            return True

        __hash__ = int.__hash__

    back = decode(encode((Liar(3), print)))
    assert back == (
        Opaque("Liar", "3"),
        Opaque("builtin_function_or_method", repr(print)),
    )
    assert back[0] != 3  # a plain record: its `==` is the dataclass's, not the answer's


@pytest.mark.parametrize(
    "data, said",
    [
        (b'{"t": "array", "dtype": "object", "shape": [1], "v": ""}', "not a dtype"),
        (b'{"t": "pickle", "v": "gASVAAAAAAAAAAA="}', "not an encoded value"),
        (b"[1, 2]", "not an encoded value"),
        (b'{"t": "int", "v": "7"}', "not an encoded value"),
    ],
)
def test_anything_else_on_the_channel_is_refused(data, said):
    from jaxtour.exercises._plain import decode

    with pytest.raises(ValueError, match=said):
        decode(data)
