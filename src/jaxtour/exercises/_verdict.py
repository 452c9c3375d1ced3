"""The verdict on one answer: run an exercise's checker on it and say what it found.

This runs where the answer runs, in the checker process (`_worker`), never in the
student's kernel; `check` only reads the answer's bytecode (`is_stub`) before sending it.
Every exception the answer can raise, `SystemExit` and `KeyboardInterrupt` included,
becomes a verdict: `(passed, message, kind)`, as `Feedback` holds them.
"""

from __future__ import annotations

import ast
import dis
import functools
import inspect
import site
import sysconfig
import textwrap
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jaxtour.exercises._errors import describe
from jaxtour.exercises._probes import python_function
from jaxtour.exercises._registry import Exercise, Wrong

Verdict = tuple[bool, str, str]  # (passed, message, kind)

_STUB_OPS = {"RESUME", "NOP", "RETURN_VALUE", "CACHE"}
_RETURN_OPS = {"LOAD_CONST", "RETURN_CONST"}


class AnswerRaised(Exception):
    """When grading: the answer, in its own process, raised (`message` says what)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class AnswerStopped(Exception):
    """When grading: the answer's process ran out of time or ended."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class AnswerRefused(AnswerStopped):
    """When grading: the submission changed the kit where its probes run."""

    def __init__(self, tampered: str) -> None:
        super().__init__(
            f"refused: {tampered} in the answer's process, so what the kit measured "
            "there cannot be trusted. A right answer scores without assigning to "
            "jaxtour's, NumPy's or JAX's names.",
            "refused",
        )


def verdict(exercise: Exercise, fn: Callable) -> Verdict:
    """Run `exercise.checker(fn)` here and now; whatever happens, return a verdict."""
    try:
        exercise.checker(fn)
    except Wrong as err:
        return False, str(err) or "not right yet.", "wrong"
    except AnswerStopped as stop:
        return False, str(stop), stop.kind
    except AnswerRaised as err:
        if err.kind == "not done":
            return False, f"not done yet: {err}", "not done"
        return False, f"not right yet: {err}", "error"
    except NotImplementedError:
        return False, not_done(exercise), "not done"
    except (TypeError, AttributeError) as err:
        if "ellipsis" not in str(err):
            return _error(fn, err)
        return (
            False,
            f"not done yet: a `...` is still in `{exercise.name}` ({describe(err)}); "
            "replace it with your code.",
            "not done",
        )
    except Exception as err:  # the student's code raised: a hint, not a traceback
        return _error(fn, err)
    except BaseException as err:  # SystemExit, KeyboardInterrupt, GeneratorExit, ...
        return False, f"not right yet: your function raised {_named(err)}", "error"
    return True, f"correct! You practised {exercise.practises}", "passed"


def said_by(err: BaseException) -> str:
    """What an exception the answer raised means, in plain words."""
    if isinstance(err, Exception):
        return describe(err)
    return f"your function raised {_named(err)}"


def not_done(exercise: Exercise) -> str:
    """What a stub is told: write the body, run the cell, check again."""
    return (
        f"not done yet: write the body of `{exercise.name}` ({exercise.title}) in "
        "place of the `...`, run that cell, then run this check again."
    )


def is_stub(fn: Callable) -> bool:
    """Whether `fn`'s body is only `...`, `pass` and a docstring (read, not run)."""
    # Such a body compiles to "return None"; `return ...` to "return Ellipsis".
    fn = python_function(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    returned = set()  # the constants it returns: None, Ellipsis
    for instruction in dis.get_instructions(code):
        if instruction.opname in _STUB_OPS:
            continue
        if instruction.opname in _RETURN_OPS and instruction.argval in (None, Ellipsis):
            returned.add(instruction.argval)
            continue
        return False
    if code.co_name == "<lambda>":  # its body is an expression: a stub's is `...`
        return Ellipsis in returned
    return _written_as_stub(fn)


def _written_as_stub(fn: Callable) -> bool:
    """Whether `fn`'s source (where it can be read) holds only `...`, `pass` and a
    docstring: `return None` compiles as `pass` does, but it is an answer."""
    try:  # a grader's `Remote` answer has its code, compiled from the cell's source
        tree = ast.parse(textwrap.dedent(inspect.getsource(_source_of(fn))))
    except (OSError, TypeError, SyntaxError):
        return True  # no source (shipped by value): the bytecode's word stands
    found = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ),
        None,
    )
    if found is None:  # no def in it: the bytecode's word stands
        return True
    return all(_stub_statement(statement) for statement in found.body)


def _source_of(fn: Any) -> Any:
    """What `inspect.getsource` reads `fn` from: itself, or a stand-in's code."""
    return fn if inspect.isfunction(fn) else getattr(fn, "__code__", fn)


def _stub_statement(node: ast.stmt) -> bool:
    return isinstance(node, ast.Pass) or (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and (node.value.value is Ellipsis or isinstance(node.value.value, str))
    )


def _named(err: BaseException) -> str:
    said = " ".join(str(err).split())
    return f"{type(err).__name__}: {said}" if said else type(err).__name__


def _error(fn: Callable, err: Exception) -> Verdict:
    culprit = (
        "your function"
        if _raised_in(fn, err)
        else "checking what your function returned"
    )
    return False, f"not right yet: {describe(err, culprit)}", "error"


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
