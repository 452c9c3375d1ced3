"""Grading a submission in its answer process (`grade_notebook`, without nbgrader): a
cell that rebinds the kit's probes scores nothing and is named, and a cell that ends its
process fails once while grading goes on.

Each test grades one lesson's assignment with some answer cells replaced, keeping only
the graded cells it asks about, and asserts each verdict and what the cells show.
"""

import builtins
from pathlib import Path

import jax.numpy as jnp
import nbformat
import pytest

from jaxtour.exercises import (
    Exercise,
    Wrong,
    _registry,
    _remote,
    _worker,
    grade_notebook,
    register,
)
from jaxtour.exercises._nbgrader import assignment

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30  # seconds per cell and per exercise; a right answer needs a few


def _graded(stem, answers=(), before=(), only=()):
    """Lesson `stem`'s assignment with `answers` (grade id: source) in place of the
    solutions, `before` (grade id: source) inserted ahead of those cells, and only the
    graded cells of `only`; graded, with the notebook's cells by grade id."""
    nb = nbformat.from_dict(assignment(ROOT / "notebooks" / f"{stem}.py"))
    cells = []
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id in dict(before):
            cells.append(nbformat.v4.new_code_cell(dict(before)[grade_id]))
        if grade_id in dict(answers):
            cell.source = dict(answers)[grade_id]
        if grade_id.startswith("test_") and grade_id[5:] not in only:
            continue
        cells.append(cell)
    nb.cells = cells
    return grade_notebook(nb, TIMEOUT), nb.cells


# lesson 01: a nan-gradient log and a timer that times nothing, with the probes that
# would have caught them rebound in the answer's process (`_speed`'s `_jit_grad` and
# its timers) to say what a right answer says
NAN_GRAD_LOG = """import jaxtour.exercises._speed as _s
_s._jit_grad = lambda fn, x: 0.0

def ex_safe_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)
"""
TIMES_NOTHING = """import time
import jaxtour.exercises._speed as _s
_s._timed_matmul = lambda fn, size: (time.sleep(0.3), (0.25 if size == 1000 else 0.005, 1))[1]
_s._timed_fresh = lambda fn: (time.sleep(0.2), (0.001, 1))[1]

def ex_time_call(f, x):
    return 0.0
"""
REFUSED = (
    "refused: the cell <cell ex_time_call> changed `jaxtour.exercises._speed` in the "
    "answer's process, so what the kit measured there cannot be trusted. A right answer "
    "scores without assigning to jaxtour's, NumPy's or JAX's names."
)


@pytest.mark.slow  # an answer process: JAX imported, two exercises judged
def test_a_submission_that_rebinds_the_kits_probes_scores_nothing_and_is_named():
    verdicts, cells = _graded(
        "01_why_jax",
        {"ex_safe_log": NAN_GRAD_LOG, "ex_time_call": TIMES_NOTHING},
        only={"ex_safe_log", "ex_time_call"},
    )
    assert verdicts == {
        "test_ex_time_call": (False, REFUSED, "refused"),
        "test_ex_safe_log": (False, REFUSED, "refused"),
    }
    shown = {
        c.metadata.nbgrader["grade_id"]: c.outputs
        for c in cells
        if c.cell_type == "code" and "nbgrader" in c.metadata
    }
    assert [o.ename for o in shown["test_ex_safe_log"]] == ["Refused"]
    assert [(o.ename, o.evalue) for o in shown["ex_time_call"]] == [
        (
            "Refused",
            "refused: the cell <cell ex_time_call> changed `jaxtour.exercises._speed`",
        )
    ]


class _Counted(_remote._AnswerProcess):
    """An answer process that counts its starts and refuses a fourth (an endless
    restart, which would otherwise run until Python's recursion limit)."""

    starts = 0

    def __init__(self, devices):
        type(self).starts += 1
        if self.starts > 3:
            raise RuntimeError("the answer process was started a fourth time")
        super().__init__(devices)


@pytest.mark.slow  # two answer processes: JAX imported twice
def test_a_cell_that_ends_its_process_fails_once_and_grading_goes_on(monkeypatch):
    monkeypatch.setattr(_remote, "_AnswerProcess", _Counted)
    verdicts, cells = _graded(
        "04_transformations",
        before={"ex_count_scans": "import os\nos._exit(3)\n"},
        only={"ex_count_scans"},
    )
    assert _Counted.starts == 2  # the cell ended the first; the second leaves it out
    assert verdicts["test_ex_count_scans"][::2] == (True, "passed")
    exit_cell = next(c for c in cells if c.source == "import os\nos._exit(3)\n")
    assert [(o.ename, o.evalue) for o in exit_cell.outputs] == [
        (
            "Stopped",
            "stopped: the process running your cell ended "
            "(the checker process died (exit status 3)).",
        )
    ]


def test_a_new_dunder_name_is_no_patch_and_a_new_plain_name_is(monkeypatch):
    """pybind11 (imported with Flax) adds its internals to `builtins`: no patch."""
    before = _worker.snapshot()
    monkeypatch.setattr(builtins, "__pybind11_internals_v4__", object(), raising=False)
    assert _worker.changed(before, _worker.snapshot()) == []
    monkeypatch.setattr(builtins, "isclose", lambda *a: True, raising=False)
    assert _worker.changed(before, _worker.snapshot()) == ["builtins"]


@pytest.mark.slow  # an answer process: JAX imported, one exercise judged twice
@pytest.mark.parametrize(
    ("body", "kind"),
    [("...", "not done"), ("return None", "wrong")],
    ids=["stub", "none"],
)
def test_grading_reads_return_none_in_the_submission_as_an_answer(body, kind):
    """The grader has the cell's source: `return None` compiles as `...` does, but it is
    an answer, marked for what it returns (it was read as a stub, as in `check`)."""
    verdicts, _ = _graded(
        "01_why_jax",
        {"ex_safe_log": f"def ex_safe_log(x):\n    {body}\n"},
        only={"ex_safe_log"},
    )
    passed, message, got = verdicts["test_ex_safe_log"]
    assert not passed and got == kind, message


def _wide_checker(fn):
    """ex_wide() must be what `jnp.ones(2)` is here: float64 where the grader computes
    in 64 bits, float32 where it does not."""
    got, want = fn(), jnp.ones(2)
    if got.dtype != want.dtype:
        raise Wrong(f"got {got.dtype}, want {want.dtype}")


@pytest.mark.slow  # two answer processes: JAX imported twice
@pytest.mark.parametrize("x64", [True, False])
def test_grading_computes_references_with_the_submissions_64_bit_setting(x64):
    """`check` judges in the kernel's setting; grading must judge in the submission's
    (its cells may switch `jax_enable_x64` on), or a right answer loses its marks."""
    cells = [
        nbformat.v4.new_code_cell(
            "import jax\nimport jax.numpy as jnp\n"
            f'jax.config.update("jax_enable_x64", {x64})\n'
            "def ex_wide():\n    return jnp.ones(2)\n"
        ),
        nbformat.v4.new_code_cell("check(ex_wide)"),
    ]
    cells[1].metadata["nbgrader"] = {
        "grade": True,
        "solution": False,
        "grade_id": "test_ex_wide",
        "points": 1,
    }
    nb = nbformat.v4.new_notebook(cells=cells)
    register(Exercise("ex_wide", "98_fake_lesson", "a wide float", "", _wide_checker))
    try:
        verdicts = grade_notebook(nb, TIMEOUT)
    finally:
        _registry._REGISTRY.pop("ex_wide", None)
    assert verdicts["test_ex_wide"][::2] == (True, "passed"), verdicts
