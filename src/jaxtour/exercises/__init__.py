'''Exercises: tasks the lessons set, checked in the notebook with plain-words feedback.

A lesson defines a stub such as `def ex_grad_from_vjp(f, x): ...`; the student fills
it in and runs `check(ex_grad_from_vjp)`, which finds the `Exercise` by the function's
name, runs its checker against JAX as the oracle and shows a `Feedback`.

Each lesson's checkers live in a module of this package named by its topic (`_speed`,
`_autodiff`, ...; its `LESSON` names the lesson); every such module is imported here, so
registering is all a lesson needs.
A lesson module looks like this: `checks` registers the checker under the student's
function name with a title, and the checker's docstring says what the exercise
practises, completing "You practised …" (the `practises=` keyword can say it instead)::

    import jax
    import jax.numpy as jnp

    from jaxtour.exercises import Wrong, checks, expect_close, first_use, under_jit

    LESSON = "02_close_to_the_math"

    @checks(LESSON, "ex_grad_from_vjp", title="gradient from `vjp`")
    def _check_grad_from_vjp(fn):
        """Practises building `grad` out of `jax.vjp`."""
        for x in (0.5, -2.0):
            x = jnp.float32(x)
            expect_close(fn(jnp.sin, x), jnp.cos(x), where=f"f=sin, x={x}")
        if (use := first_use(fn, {"grad": jax.grad})) is not None:  # aliases, helpers too
            raise Wrong(f"this works, but uses `jax.grad`{use.where}: use only `jax.vjp`")
        under_jit(fn, jnp.sin, jnp.float32(1.0))  # Python `if` on a tracer -> Wrong

Checkers raise `Wrong` with plain words at the first problem; anything else the
student's code raises is turned into a hint by `check`, so checkers need not catch.
`check` runs the checker and the answer in a checker process (`_pool`, `_worker`), with
a timeout, so an answer can neither patch the kernel's kit nor hang the kernel; an
exercise that needs several devices says so with `@checks(..., devices=8)`.

Grading (`jaxtour exercises --nbgrader`, then nbgrader's autograde) goes further: the
mark must not be reachable by the answer. `GradeApart` runs a submission's cells once in
an answer process (`_answer`) and judges here: the checker calls a `Remote` answer, gets
back only plain data (`_plain`: JSON, never a pickle) and compares it with the reference
it computed itself. A checker that transforms the answer (`jax.jit`, `jax.grad`,
`make_jaxpr`) asks for it with `in_answer(fn, probe, ...)`, so the same checker serves
`check` and grading.
'''

from typing import Any

from jaxtour.exercises._check import Feedback, check
from jaxtour.exercises._course import load_checkers, own_lessons
from jaxtour.exercises._errors import describe
from jaxtour.exercises._expect import expect_close, expect_returned
from jaxtour.exercises._nbgrader import left_out_of_course, write_nbgrader_course
from jaxtour.exercises._registry import (
    Exercise,
    Wrong,
    checks,
    exercises,
    find,
    for_lesson,
    register,
)
from jaxtour.exercises._remote import in_answer
from jaxtour.exercises._tracing import (
    Counted,
    count_traces,
    expect_no_retrace,
    side_effect_under_jit,
    under_jit,
)
from jaxtour.exercises._uses import first_use

__all__ = [
    "Counted",
    "Exercise",
    "Feedback",
    "Wrong",
    "check",
    "checks",
    "count_traces",
    "describe",
    "exercises",
    "expect_close",
    "expect_no_retrace",
    "expect_returned",
    "find",
    "first_use",
    "for_lesson",
    "grade_notebook",
    "in_answer",
    "left_out_of_course",
    "load_checkers",
    "own_lessons",
    "register",
    "side_effect_under_jit",
    "under_jit",
    "write_nbgrader_course",
]


def __getattr__(name: str) -> Any:
    # `GradeApart`, the nbgrader preprocessor a course's config names, made on first use
    if name == "GradeApart":
        from jaxtour.exercises import _grade

        return _grade.grade_apart()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def grade_notebook(nb: Any, timeout: float | None = None) -> dict:
    """Judge every graded cell of a submitted nbformat notebook (see `_grade`)."""
    from jaxtour.exercises import _grade

    return _grade.grade_notebook(nb, timeout)


# Imported to register every lesson's checkers (`exercises()` sorts them by lesson).
from jaxtour.exercises import (  # noqa: E402, F401
    _autodiff,
    _compilation,
    _ecosystem,
    _mlp,
    _parallelism,
    _precision,
    _speed,
    _transformations,
)
