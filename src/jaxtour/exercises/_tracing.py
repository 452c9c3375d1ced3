"""Run a student's function under `jax.jit` and watch what tracing does to it.

Under `jit`, the Python body of a function runs once per trace; later calls with the
same shapes and dtypes reuse the compiled program. So a retrace shows up as one more
run of the Python body, and a Python side effect shows up on the first call only.
"""

from __future__ import annotations

import functools
import io
import numbers
import types
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from typing import Any

import jax
import numpy as np

from jaxtour.exercises._errors import describe
from jaxtour.exercises._registry import Wrong
from jaxtour.exercises._remote import Remote

_TRACING_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerArrayConversionError,
    jax.errors.UnexpectedTracerError,
)


class Counted:
    """`fn` with a count of how often its Python body ran: under `jit`, once per trace.

    Example:
        >>> f = Counted(lambda x: x + 1)
        >>> g = jax.jit(f)
        >>> _ = g(1.0), g(2.0)
        >>> f.calls
        1
    """

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.calls = 0
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.fn(*args, **kwargs)


def under_jit(fn: Callable, *args: Any, **jit_kwargs: Any) -> Any:
    """Call `jax.jit(fn, **jit_kwargs)(*args)`, traced afresh; return its result.

    Arguments that are functions (e.g. the `f` of `ex_grad_from_vjp(f, x)`) are not
    arrays, so they are passed through unjitted, as if closed over.

    Raises:
        Wrong: `fn` used Python control flow, `int()`, NumPy or a global on a traced
            value (e.g. "under `jax.jit`: a Python `if` … needed the value of a traced
            array …"). Other exceptions pass through for `check` to explain.
    """
    if isinstance(fn, Remote):  # grading: the answer runs in its own process
        return fn.run(under_jit, *args, **jit_kwargs)
    fixed = {
        i: a for i, a in enumerate(args) if callable(a) and not hasattr(a, "shape")
    }
    traced = [a for i, a in enumerate(args) if i not in fixed]

    @functools.wraps(fn)
    def with_fixed(*arrays: Any) -> Any:
        rest = iter(arrays)
        return fn(*(fixed[i] if i in fixed else next(rest) for i in range(len(args))))

    try:
        return jax.block_until_ready(jax.jit(with_fixed, **jit_kwargs)(*traced))
    except _TRACING_ERRORS as err:
        raise Wrong(f"under `jax.jit`: {describe(err)}") from None


def count_traces(fn: Callable, calls: Sequence[tuple], **jit_kwargs: Any) -> int:
    """How many times `jax.jit(fn, **jit_kwargs)` traced `fn` over `calls` (argument tuples).

    Example:
        >>> count_traces(lambda x: x * 2, [(1.0,), (2.0,)])
        1
        >>> count_traces(lambda x, n: x * n, [(1.0, 2), (1.0, 3)], static_argnums=1)
        2
    """
    if isinstance(fn, Remote):  # grading: the answer runs in its own process
        return fn.run(count_traces, calls, **jit_kwargs)
    counted = Counted(fn)
    jitted = jax.jit(counted, **jit_kwargs)
    for args in calls:
        jax.block_until_ready(jitted(*args))
    return counted.calls


def expect_no_retrace(
    fn: Callable, calls: Sequence[tuple], *, hint: str = "", **jit_kwargs: Any
) -> None:
    """Raise `Wrong` if `jax.jit` traces `fn` more than once over `calls`.

    The checker passes calls whose arguments have the same shapes and dtypes, so a
    second trace means something `jit` treats as static changed between them.

    Args:
        fn: the student's function.
        calls: argument tuples, one per call.
        hint: what to do, in the exercise's terms; appended to the message.
        **jit_kwargs: passed to `jax.jit` (e.g. `static_argnums`).
    """
    if isinstance(fn, Remote):  # grading: the answer runs in its own process
        return fn.run(expect_no_retrace, calls, hint=hint, **jit_kwargs)
    counted = Counted(fn)
    jitted = jax.jit(counted, **jit_kwargs)
    for number, args in enumerate(calls, 1):
        before = counted.calls
        jax.block_until_ready(jitted(*args))
        if number > 1 and counted.calls > before:
            raise Wrong(
                f"`jax.jit` traced your function again on call {number} of {len(calls)}, "
                "although the arrays had the same shapes and dtypes: something `jit` "
                "treats as static changed (a Python number in a static argument, a new "
                "function or a new `jax.jit` object each call)"
                + (f". {hint}" if hint else "")
            )


def side_effect_under_jit(
    fn: Callable, *args: Any, calls: int = 3, hint: str = ""
) -> None:
    """Raise `Wrong` if a side effect of `fn` ran on the first jitted call only.

    Calls a freshly jitted `fn` `calls` times and watches what it prints and the
    globals and closed-over variables it names (a list's length, a number's value,
    which object a name holds). Something that changed on the first call (the trace)
    and never after is a Python side effect that `jit` ran once, while tracing.

    Raises:
        Wrong: e.g. "the global `count` changed on the first call only (0 → 1) …".
    """
    if isinstance(fn, Remote):  # grading: the answer runs in its own process
        return fn.run(side_effect_under_jit, *args, calls=calls, hint=hint)
    jitted = jax.jit(_fresh(fn))
    state = _watched(fn)
    before = _snapshot(state)
    printed, changed = [], []
    for _ in range(calls):
        out = io.StringIO()
        with redirect_stdout(out):
            jax.block_until_ready(jitted(*args))
            jax.effects_barrier()
        after = _snapshot(state)
        printed.append(out.getvalue())
        changed.append(
            {k: (before[k], after[k]) for k in after if before[k] != after[k]}
        )
        before = after
    tail = f" {hint}" if hint else ""
    if printed[0] and not any(printed[1:]):
        raise Wrong(
            "`print` ran on the first call only: under `jax.jit`, Python code runs "
            "once, while tracing. Use `jax.debug.print` to print on every call." + tail
        )
    for name, (old, new) in changed[0].items():
        if not any(name in later for later in changed[1:]):
            raise Wrong(
                f"{name} changed on the first call only ({_change(old, new)}), not "
                f"on the {calls - 1} calls after it: under `jax.jit`, Python side effects run "
                "once, while tracing. Return the value instead of storing it." + tail
            )


def _fresh(fn: Callable) -> Callable:
    # A new function object, so jit traces it anew even if `fn` was jitted before.
    @functools.wraps(fn)
    def fresh(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return fresh


def _watched(fn: Callable) -> dict[str, Callable[[], Any]]:
    """Getters for the globals `fn`'s code names and the variables it closes over."""
    fn = getattr(fn, "__wrapped__", fn)
    code = getattr(fn, "__code__", None)
    getters: dict[str, Callable[[], Any]] = {}
    if code is None:
        return getters
    for name in sorted(_names(code)):
        if name in fn.__globals__ and _mutable_state(fn.__globals__[name]):
            getters[f"the global `{name}`"] = functools.partial(
                fn.__globals__.get, name
            )
    for name, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
        try:
            watch = _mutable_state(cell.cell_contents)
        except ValueError:  # an empty cell: a variable not assigned yet
            watch = False
        if watch:
            getters[f"the variable `{name}`"] = functools.partial(
                getattr, cell, "cell_contents"
            )
    return getters


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _mutable_state(value: Any) -> bool:
    return not isinstance(
        value, types.ModuleType | types.FunctionType | type | types.BuiltinFunctionType
    ) and not callable(value)


def _snapshot(state: dict[str, Callable[[], Any]]) -> dict[str, _Seen]:
    return {name: _Seen(get()) for name, get in state.items()}


class _Seen:
    """What a watched value was at one moment: `key` to compare (its items and
    attributes, two levels down), and how it reads in feedback."""

    def __init__(self, value: Any) -> None:
        self.key = _key(value, depth=2)
        self.plain, self.detailed = _plain(value), _short(value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Seen) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


def _change(old: _Seen, new: _Seen) -> str:
    """ "0 → 1", "length 0 → length 1", or, when those read the same, the contents."""
    if old.plain != new.plain:
        return f"{old.plain} → {new.plain}"
    return f"{old.detailed} → {new.detailed}"


_ITEMS = 64  # items of a container compared: a counter in a long log still shows


def _key(value: Any, depth: int) -> Any:
    if isinstance(value, bool | numbers.Number | str | bytes) or value is None:
        return ("value", value)
    if isinstance(value, np.ndarray):
        return ("array", value.shape, value.tobytes())
    if depth == 0 or isinstance(value, types.ModuleType) or callable(value):
        return ("length", len(value)) if _sized(value) else ("object", id(value))
    if isinstance(value, dict):
        items = list(value.items())[:_ITEMS]
        return (
            "dict",
            len(value),
            tuple((_key(k, 0), _key(v, depth - 1)) for k, v in items),
        )
    if isinstance(value, list | tuple | bytearray):
        return ("seq", len(value), tuple(_key(v, depth - 1) for v in value[:_ITEMS]))
    if isinstance(value, set | frozenset):
        return ("set", len(value), frozenset(_key(v, 0) for v in list(value)[:_ITEMS]))
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict):  # a simple object: `counter.n += 1` changes it
        return ("object", id(value), _key(attributes, depth - 1))
    return ("object", id(value))


def _sized(value: Any) -> bool:
    return isinstance(value, list | dict | set | frozenset | tuple | bytearray)


def _plain(value: Any) -> str:
    if isinstance(value, bool | numbers.Number | str | bytes) or value is None:
        return repr(value)
    if _sized(value):
        return f"length {len(value)}"
    return "an array" if isinstance(value, np.ndarray) else _a(type(value).__name__)


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"


def _short(value: Any) -> str:
    import reprlib

    shown = vars(value) if hasattr(value, "__dict__") and not _sized(value) else value
    try:
        said = reprlib.repr(shown)
    except Exception:  # a repr that raises: say what it is
        said = _plain(value)
    return said if shown is value else f"{_a(type(value).__name__)} holding {said}"
