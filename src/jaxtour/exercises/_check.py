"""`check(fn)`: run an exercise's checker on a student's function; never raise."""

from __future__ import annotations

import contextlib
import dis
import functools
import html
import io
import re
import site
import sysconfig
import traceback
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxtour.exercises._errors import describe
from jaxtour.exercises._registry import Exercise, Wrong, exercises, find

_STUB_OPS = {"RESUME", "NOP", "RETURN_VALUE", "CACHE"}
_RETURN_OPS = {"LOAD_CONST", "RETURN_CONST"}


@dataclass(frozen=True)
class Feedback:
    """What `check` found: shown as a green tick or a red cross with plain words.

    The text form (`repr`) is one line, e.g. "✗ ex_grad_from_vjp: at x=0.5: expected
    shape (), got (1,)"; Jupyter shows the HTML form. A Feedback is truthy when passed.

    Attributes:
        passed: True when the checker found nothing wrong.
        exercise: the exercise checked, or None when `check` could not find one.
        message: what is right or wrong, in plain words (no traceback).
        kind: "passed", "not done" (a stub), "wrong" (the checker said so), "error"
            (the student's code raised) or "unknown" (no such exercise).
    """

    passed: bool
    exercise: Exercise | None
    message: str
    kind: str

    def __repr__(self) -> str:
        mark = "✓" if self.passed else "✗"
        name = f"{self.exercise.name}: " if self.exercise else ""
        return f"{mark} {name}{self.message}"

    def __bool__(self) -> bool:
        return self.passed

    def _repr_html_(self) -> str:
        colour, mark = ("#1a7f37", "✓") if self.passed else ("#cf222e", "✗")
        name = (
            f"<code>{html.escape(self.exercise.name)}</code>: " if self.exercise else ""
        )
        text = re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(self.message))
        return (
            f'<div style="border-left:4px solid {colour};padding:0.3em 0.8em">'
            f'<span style="color:{colour};font-weight:bold">{mark}</span> {name}{text}</div>'
        )


def check(fn: Callable, *, quiet: bool = False) -> Feedback:
    """Check a student's answer to the exercise named like `fn`; never raises.

    Args:
        fn: the student's function, e.g. `ex_grad_from_vjp`.
        quiet: print nothing while checking, not even what `fn` prints (for check
            cells: `assert check(fn, quiet=True).passed`).

    Returns:
        A `Feedback`; as the last line of a notebook cell it shows itself.
    """
    exercise = find(getattr(fn, "__name__", ""))
    if exercise is None:
        return _unknown(fn)
    if _is_stub(fn):
        return _not_done(exercise)
    with _quiet() if quiet else contextlib.nullcontext():
        try:
            exercise.checker(fn)
        except Wrong as err:
            return Feedback(False, exercise, str(err) or "not right yet.", "wrong")
        except NotImplementedError:
            return _not_done(exercise)
        except (TypeError, AttributeError) as err:
            if "ellipsis" not in str(err):
                return _error(fn, exercise, err)
            return Feedback(
                False,
                exercise,
                f"not done yet: a `...` is still in `{exercise.name}`"
                f" ({describe(err)}); replace it with your code.",
                "not done",
            )
        except Exception as err:  # the student's code raised: a hint, not a traceback
            return _error(fn, exercise, err)
    return Feedback(
        True, exercise, f"correct! You practised {exercise.practises}", "passed"
    )


def _is_stub(fn: Callable) -> bool:
    # A body of only `...`, `pass` and a docstring compiles to "return None";
    # `return ...` (a stub that shows it returns something) to "return Ellipsis".
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    for instruction in dis.get_instructions(code):
        if instruction.opname in _STUB_OPS:
            continue
        if instruction.opname in _RETURN_OPS and instruction.argval in (None, Ellipsis):
            continue
        return False
    return True


def _error(fn: Callable, exercise: Exercise, err: Exception) -> Feedback:
    culprit = (
        "your function"
        if _raised_in(fn, err)
        else "checking what your function returned"
    )
    return Feedback(
        False, exercise, f"not right yet: {describe(err, culprit)}", "error"
    )


def _raised_in(fn: Callable, err: BaseException) -> bool:
    """Whether the student's code is in the traceback: `fn`'s own cell or file, or any
    code that is not a library's (a helper from another notebook cell, say)."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    mine = code.co_filename if code is not None else None
    for frame, _ in traceback.walk_tb(err.__traceback__):
        name = frame.f_code.co_filename
        if name == mine or not name.startswith(_library_roots()):
            return True
    return False


@functools.cache
def _library_roots() -> tuple[str, ...]:
    import jax
    import numpy

    paths = sysconfig.get_paths()
    roots = {
        paths["stdlib"],
        paths["platstdlib"],
        paths["purelib"],
        paths["platlib"],
        *site.getsitepackages(),
        str(Path(__file__).parents[1]),
    }
    # Wherever JAX and NumPy are installed (Colab's dist-packages, say) is library code too.
    roots |= {str(Path(module.__file__ or "").parents[1]) for module in (jax, numpy)}
    return tuple(sorted(roots))


def _not_done(exercise: Exercise) -> Feedback:
    message = (
        f"not done yet: write the body of `{exercise.name}` ({exercise.title}) in "
        "place of the `...`, run that cell, then run this check again."
    )
    return Feedback(False, exercise, message, "not done")


def _unknown(fn: Any) -> Feedback:
    name = getattr(fn, "__name__", None)
    known = ", ".join(f"`{ex.name}`" for ex in exercises()) or "none yet"
    what = (
        f"no exercise is called `{name}`"
        if name
        else (
            f"`check` takes the function you wrote, e.g. `check(ex_…)`; got {type(fn).__name__}"
        )
    )
    return Feedback(False, None, f"{what}. The exercises are: {known}.", "unknown")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with (
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        yield
