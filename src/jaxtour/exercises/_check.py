"""`check(fn)`: judge a student's answer in the checker process; never raise."""

from __future__ import annotations

import contextlib
import html
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from jaxtour.exercises import _pool
from jaxtour.exercises._probes import computes_in_64_bits, python_function
from jaxtour.exercises._registry import Exercise, exercises, find
from jaxtour.exercises._verdict import is_stub, not_done

#: Seconds an answer may run before the checker process is stopped, unless `check` is
#: given `timeout=` or the environment sets TIMEOUT_VARIABLE (a test suite on a busy machine).
TIMEOUT = 60.0
TIMEOUT_VARIABLE = "JAXTOUR_CHECK_TIMEOUT"


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
            (the student's code raised), "timeout" (it ran too long and was stopped),
            "refused" (it changed the checking kit) or "unknown" (no such exercise).
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


def check(
    fn: Callable, *, quiet: bool = False, timeout: float | None = None
) -> Feedback:
    """Check a student's answer to the exercise named like `fn`; never raises.

    The answer runs in a checker process (started on the first check, then reused),
    so nothing it does reaches this kernel's kit, a verdict reached after it patched
    the kit there is refused, and an answer that runs past `timeout` is stopped.

    Args:
        fn: the student's function, e.g. `ex_grad_from_vjp`, or what the caller named
            so (`ex_grad_from_vjp = lambda f, x: ...`, a `functools.partial`).
        quiet: print nothing while checking, not even what `fn` prints (for check
            cells: `assert check(fn, quiet=True).passed`).
        timeout: seconds the answer may run before it is stopped (default: `TIMEOUT`,
            or `$JAXTOUR_CHECK_TIMEOUT` when set).

    Returns:
        A `Feedback`; as the last line of a notebook cell it shows itself.

    Raises:
        ValueError: `timeout` (or `$JAXTOUR_CHECK_TIMEOUT`) is not a number above 0
            (nothing an answer does makes `check` raise).
    """
    timeout = _timeout(timeout)
    exercise = find(getattr(fn, "__name__", "")) or _bound_by_caller(fn)
    if exercise is None:
        return _unknown(fn)
    if is_stub(fn):
        return Feedback(False, exercise, not_done(exercise), "not done")
    try:
        payload = _pickled(exercise, fn)
    except Exception as err:
        return Feedback(False, exercise, _unpicklable(exercise, err), "error")
    try:
        files = [_filename(f) for f in (exercise.checker, fn)]
        job = {"payload": payload, "quiet": quiet, "files": files, "x64": _x64()}
        reply = _pool.ask(exercise.devices, job, timeout)
    except _pool.Stopped as stop:
        return _stopped(exercise, stop, timeout)
    except KeyboardInterrupt:
        message = "stopped: you interrupted the check; run it again when ready."
        return Feedback(False, exercise, message, "timeout")
    if not quiet:
        sys.stdout.write(reply.get("out", ""))
        sys.stderr.write(reply.get("err", ""))
    passed, message, kind = reply["verdict"]
    return Feedback(passed, exercise, message, kind)


def _bound_by_caller(fn: Any) -> Exercise | None:
    """The exercise whose name the code calling `check` gave `fn`: a lambda, an alias or
    a partial has a `__name__` of its own (or none), as in `ex_safe_log = lambda x: ...`."""
    frame = inspect.currentframe()
    caller = frame.f_back.f_back if frame and frame.f_back else None
    try:
        scopes = (caller.f_locals, caller.f_globals) if caller else ()
        names = {name for scope in scopes for name, v in list(scope.items()) if v is fn}
    finally:
        del frame, caller
    found = [ex for ex in map(find, sorted(names)) if ex is not None]
    return found[0] if len(found) == 1 else None


def _x64() -> bool:
    """Whether this kernel computes in 64 bits (`jax.config.update("jax_enable_x64",
    True)`): the answer is checked as it runs here."""
    return computes_in_64_bits()


def _timeout(given: Any) -> float:
    if given is None:
        said = os.environ.get(TIMEOUT_VARIABLE)
        try:
            given = TIMEOUT if said is None else float(said)
        except ValueError:
            given = said
    if isinstance(given, bool) or not isinstance(given, int | float) or not given > 0:
        raise ValueError(
            f"`timeout` must be a number of seconds above 0 (from `check(..., timeout=)` or "
            f"${TIMEOUT_VARIABLE}); got {given!r}."
        )
    return float(given)


def _pickled(exercise: Exercise, fn: Callable) -> bytes:
    """The exercise and the answer as cloudpickle bytes; code from outside the kit
    (a notebook, a test module, a student's file) travels by value."""
    import io
    import warnings

    buffer = io.BytesIO()
    with _by_value(fn, exercise.checker), warnings.catch_warnings():
        # a function with no __module__ (made by exec) sends cloudpickle through
        # every module in sys.modules, and a deprecated one (numpy.core) warns when
        # asked: a warning about the search, not about the answer
        warnings.simplefilter("ignore", DeprecationWarning)
        _pickler()(buffer).dump((exercise, fn))
    return buffer.getvalue()


def _pickler() -> type:
    """cloudpickle's pickler, taught to copy a `jax.custom_vjp` function (on JAX 0.10
    its `__new__` asks for the function again, so the default copy cannot be loaded) and
    a `jax.jit` function whole (its default copy drops `__wrapped__` and `__name__`, so
    the checks that read an answer's code would find none)."""
    import pickle

    import cloudpickle
    import jax

    jitted = type(jax.jit(_bare))

    class Pickler(cloudpickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            if type(obj) is jax.custom_vjp:  # rebuilt bare, then given its attributes
                return _bare, (type(obj),), dict(vars(obj))
            if type(obj) is jitted:
                reduced: Any = obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
                made, args, state = reduced[:3]
                names = {k: v for k, v in vars(obj).items() if k.startswith("__")}
                return made, args, (state, names), None, None, _jitted_state
            return super().reducer_override(obj)

    return Pickler


def _bare(cls: type) -> Any:
    """An instance of `cls` without its `__init__` (what a copy's state then fills)."""
    return object.__new__(cls)


def _jitted_state(jitted: Any, state: tuple[Any, dict[str, Any]]) -> None:
    """Fill a copied `jax.jit` function: its own state, then the names `wraps` gave it."""
    own, names = state
    jitted.__setstate__(own)
    vars(jitted).update(names)


def _filename(fn: Any) -> str | None:
    code = getattr(python_function(fn), "__code__", None)
    return code.co_filename if code is not None else None


@contextlib.contextmanager
def _by_value(*functions: Any) -> Iterator[None]:
    import cloudpickle

    names = {getattr(python_function(f), "__module__", None) for f in functions}
    modules = [
        sys.modules[name]
        for name in names
        if name
        and name != "__main__"
        and not name.startswith("jaxtour")
        and name in sys.modules
    ]
    chosen = [
        m
        for m in modules
        if m.__name__ not in cloudpickle.list_registry_pickle_by_value()
    ]
    for module in chosen:
        cloudpickle.register_pickle_by_value(module)
    try:
        yield
    finally:
        for module in chosen:
            cloudpickle.unregister_pickle_by_value(module)


def _unpicklable(exercise: Exercise, err: Exception) -> str:
    said = " ".join(str(err).split())[:200]
    return (
        f"not right yet: `{exercise.name}` could not be sent to the checker, because it "
        f"uses something that cannot be copied to another process ({type(err).__name__}: "
        f"{said}). Create that object inside the function, or pass it as an argument."
    )


def _stopped(exercise: Exercise, stop: _pool.Stopped, timeout: float) -> Feedback:
    if stop.timed_out:
        message = (
            f"your answer ran longer than {timeout:g} s; stopped. Look for a loop "
            "that never ends (a `while` whose condition stays true), or pass a "
            "longer `timeout=` to `check` if it is only slow."
        )
        return Feedback(False, exercise, message, "timeout")
    message = (
        f"not right yet: the checker stopped before it could judge your answer "
        f"({stop}); your function may have ended the process (`os._exit`, a crash). "
        "Run the check again; the checker restarts."
    )
    return Feedback(False, exercise, message, "error")


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
