"""The exercises the kit knows: `Exercise`, `Wrong`, and the registry lessons fill."""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass

_LESSON_STEM = re.compile(r"\d\d_[a-z0-9_]+")


class Wrong(Exception):  # a student reads the name: "wrong", not "WrongError"
    """Raised by a checker at the first problem, with a message in plain words.

    Example:
        >>> str(Wrong("expected shape (3,), got (3, 1)"))
        'expected shape (3,), got (3, 1)'
    """


@dataclass(frozen=True)
class Exercise:
    """One task a lesson sets, and how the kit checks a student's answer.

    Attributes:
        name: the name of the function the student defines, e.g. "ex_grad_from_vjp";
            `check(fn)` finds the exercise by `fn.__name__`.
        lesson: the lesson's file stem, e.g. "02_close_to_the_math".
        title: a few words for tables and feedback, e.g. "gradient from `vjp`".
        practises: one line saying what the exercise practises; it completes "You
            practised …" in the feedback and fills the table of `jaxtour exercises`,
            e.g. "building `grad` out of `jax.vjp`".
        checker: takes the student's function and returns None when it is right;
            raises `Wrong("plain words")` at the first problem it finds.
        devices: how many CPU devices the checker process needs (8 for an exercise
            about collectives; 1 otherwise).
        points: what the exercise is worth in a graded course (an export may say
            otherwise).
    """

    name: str
    lesson: str
    title: str
    practises: str
    checker: Callable[[Callable], None]
    devices: int = 1
    points: float = 1

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(
                f"Exercise name must be a Python function name; got {self.name!r}."
            )
        if not _LESSON_STEM.fullmatch(self.lesson):
            raise ValueError(
                "Exercise lesson must be a lesson's file stem such as "
                f'"02_close_to_the_math"; got {self.lesson!r}.'
            )
        if not callable(self.checker):
            raise TypeError(f"Exercise checker must be callable; got {self.checker!r}.")
        if (
            not isinstance(self.devices, int)
            or isinstance(self.devices, bool)
            or not (1 <= self.devices <= 64)
        ):
            raise ValueError(
                f"Exercise devices must be a whole number from 1 to 64; got {self.devices!r}."
            )
        if (
            isinstance(self.points, bool)
            or not isinstance(self.points, int | float)
            or not self.points > 0
        ):
            raise ValueError(
                f"Exercise points must be a number above 0; got {self.points!r}."
            )

    @property
    def number(self) -> str:
        """The lesson's two-digit number, e.g. "02"."""
        return self.lesson[:2]


_REGISTRY: dict[str, Exercise] = {}


def _same_definition(a: Exercise, b: Exercise) -> bool:
    # A lesson module imported again (importlib.reload) registers the same checker anew.
    return (
        a.lesson == b.lesson
        and a.checker.__module__ == b.checker.__module__
        and a.checker.__qualname__ == b.checker.__qualname__
    )


def register(exercise: Exercise) -> Exercise:
    """Add `exercise` to the registry and return it.

    Raises:
        ValueError: another exercise already has this name (names are what `check`
            looks up, so they are unique across all lessons).
    """
    if not isinstance(exercise, Exercise):
        raise TypeError(f"register() takes an Exercise; got {type(exercise).__name__}.")
    existing = _REGISTRY.get(exercise.name)
    if existing is not None and not _same_definition(existing, exercise):
        raise ValueError(
            f"An exercise named {exercise.name!r} is already registered (lesson "
            f"{existing.lesson}); give each exercise's function a unique name."
        )
    _REGISTRY[exercise.name] = exercise
    return exercise


def checks(
    lesson: str,
    name: str,
    *,
    title: str,
    practises: str | None = None,
    devices: int = 1,
    points: float = 1,
) -> Callable[[Callable[[Callable], None]], Callable[[Callable], None]]:
    """Register the decorated checker as the exercise `name` of `lesson`.

    The same as ``register(Exercise(name, lesson, title, practises, checker))``, written
    above the checker it registers. Without `practises`, the checker's docstring says
    it: the docstring "Practises building `grad` out of `jax.vjp`." gives practises
    "building `grad` out of `jax.vjp`" (its first paragraph on one line, less the word
    "Practises" and the full stop), so the registration fits on one line.

    Raises:
        ValueError: no `practises`, and the docstring does not begin "Practises ".
    """

    def decorate(checker: Callable[[Callable], None]) -> Callable[[Callable], None]:
        said = _practises(checker, name, title) if practises is None else practises
        register(Exercise(name, lesson, title, said, checker, devices, points))
        return checker

    return decorate


def _practises(checker: Callable, name: str, title: str) -> str:
    """What `checker`'s docstring says the exercise `name` practises (see `checks`)."""
    if checker.__doc__ is None and sys.flags.optimize >= 2:
        return title  # python -OO strips docstrings
    first = " ".join(inspect.cleandoc(checker.__doc__ or "").split("\n\n")[0].split())
    if not first.startswith("Practises "):
        raise ValueError(
            f"The checker of {name!r} needs a docstring saying what the exercise "
            'practises, e.g. "Practises building `grad` out of `jax.vjp`.", or '
            "@checks(..., practises=...)."
        )
    return first.removeprefix("Practises ").removesuffix(".")


def exercises() -> list[Exercise]:
    """Every registered exercise, in lesson order (then in the order registered)."""
    order = {name: i for i, name in enumerate(_REGISTRY)}
    return sorted(_REGISTRY.values(), key=lambda ex: (ex.lesson, order[ex.name]))


def for_lesson(lesson: str) -> list[Exercise]:
    """The exercises of one lesson, by stem ("02_close_to_the_math") or number ("02")."""
    return [ex for ex in exercises() if lesson in (ex.lesson, ex.number)]


def find(name: str) -> Exercise | None:
    """The exercise whose student function is called `name`, or None."""
    return _REGISTRY.get(name)
