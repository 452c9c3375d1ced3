"""Grading a submitted notebook where no answer can reach the mark (nbgrader's autograde).

`grade_notebook` runs the submission's code cells once, in order, in an answer process
(`_remote.Answers`); each graded cell's exercise is then judged here, its checker
calling the answer there and comparing the plain data that comes back with the
reference computed here. The graded cell's outputs say the verdict as nbgrader reads
it: an error output scores 0, a printed tick full marks. `GradeApart` is the nbgrader
preprocessor that does this in place of nbgrader's own `Execute`, so each answer runs
once per grade and a cell that loops costs one timeout.
"""

from __future__ import annotations

import functools
from typing import Any

import jax

from jaxtour.exercises._check import _timeout
from jaxtour.exercises._probes import computes_in_64_bits
from jaxtour.exercises._registry import Exercise, find
from jaxtour.exercises._remote import Answers, in_answer
from jaxtour.exercises._verdict import Verdict, is_stub, not_done, verdict

TEST_PREFIX = "test_"  # a graded cell's id is "test_" and the exercise's name


def grade_notebook(nb: Any, timeout: float | None = None) -> dict[str, Verdict]:
    """Judge every graded cell of the nbformat notebook `nb`; set the outputs.

    Returns:
        Each graded cell's id with its verdict `(passed, message, kind)`.
    """
    seconds = _timeout(timeout)
    graded: list[Any] = []
    run: list[Any] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        is_test = meta.get("grade") and not meta.get("solution")
        (graded if is_test else run).append(cell)
    found = {id(c): _exercise_of(c) for c in graded}
    devices = max([ex.devices for ex in found.values() if ex] or [1])
    verdicts: dict[str, Verdict] = {}
    sources = [(_cell_id(c, i), c.source) for i, c in enumerate(run)]
    with Answers(sources, devices, seconds) as answers:
        for cell in graded:  # the cells run when the first answer that is not a stub is
            exercise = found[id(cell)]
            said = _judge(exercise, answers) if exercise else _unknown(cell)
            verdicts[cell.metadata.nbgrader["grade_id"]] = said
            cell.outputs = _grade_outputs(exercise, said)
        for cell, (cell_id, _) in zip(run, sources, strict=True):
            cell.outputs = _cell_outputs(answers.ran.get(cell_id, {}))
    return verdicts


def _cell_id(cell: Any, index: int) -> str:
    grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
    return f"<cell {grade_id or index}>"


def _exercise_of(cell: Any) -> Exercise | None:
    grade_id = str(cell.metadata.nbgrader.get("grade_id", ""))
    return find(grade_id.removeprefix(TEST_PREFIX))


def _judge(exercise: Exercise, answers: Answers) -> Verdict:
    remote = answers.remote(exercise.name)
    if remote.__code__ is not None and is_stub(remote):
        return False, not_done(exercise), "not done"
    answers.start_exercise()
    with jax.enable_x64(_x64_of(remote)):
        return verdict(exercise, remote)


def _x64_of(remote: Any) -> bool:
    """Whether the submission's cells switched `jax_enable_x64` on: the references are
    then computed in 64 bits, as `check` does in the student's kernel. An answer process
    that cannot say (not started, changed kit) is judged with JAX's default; the verdict
    then says why."""
    try:
        return bool(in_answer(remote, computes_in_64_bits))
    except Exception:
        return False


def _unknown(cell: Any) -> Verdict:
    grade_id = cell.metadata.nbgrader.get("grade_id")
    return False, f"no exercise is graded by the cell {grade_id!r}", "unknown"


def _cell_outputs(ran: dict) -> list:
    from nbformat.v4 import new_output

    outputs = []
    if ran.get("out"):
        outputs.append(new_output("stream", name="stdout", text=ran["out"]))
    if ran.get("error"):
        name, said = ran["error"]
        outputs.append(
            new_output("error", ename=name, evalue=said, traceback=[f"{name}: {said}"])
        )
    return outputs


def _grade_outputs(exercise: Exercise | None, said: Verdict) -> list:
    from nbformat.v4 import new_output

    passed, message, kind = said
    name = f"{exercise.name}: " if exercise else ""
    if passed:
        return [new_output("stream", name="stdout", text=f"✓ {name}{message}\n")]
    ename = {"timeout": "Timeout", "not done": "NotDone", "refused": "Refused"}.get(
        kind, "Wrong"
    )
    return [
        new_output(
            "error",
            ename=ename,
            evalue=f"✗ {name}{message}",
            traceback=[f"✗ {name}{message}"],
        )
    ]


#: nbgrader's autograde steps, by import path, with jaxtour's grading in place of its
#: `Execute` (the course's `nbgrader_config.py` lists them; nothing is imported until
#: autograde runs).
AUTOGRADE_PREPROCESSORS = (
    "jaxtour.exercises.GradeApart",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
)


@functools.cache
def grade_apart() -> type:
    """The nbgrader preprocessor `GradeApart` (made on first use: it needs nbgrader)."""
    from nbgrader.preprocessors import NbGraderPreprocessor  # type: ignore[import-untyped]
    from traitlets import Float, List, Unicode

    class GradeApart(NbGraderPreprocessor):
        """Runs the submission in an answer process and judges it from outside."""

        timeout = Float(
            None, allow_none=True, help="seconds per cell and per exercise"
        ).tag(config=True)
        checkers = List(
            Unicode(), help="folders of the course's own checker modules, loaded first"
        ).tag(config=True)

        def preprocess(self, nb: Any, resources: Any) -> tuple[Any, Any]:
            from jaxtour.exercises._course import load_checkers

            for folder in self.checkers:
                load_checkers(folder)
            grade_notebook(nb, self.timeout)
            return nb, resources

    GradeApart.__module__ = "jaxtour.exercises"
    return GradeApart
