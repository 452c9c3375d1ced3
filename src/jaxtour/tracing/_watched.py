"""What a jitted function reads besides its arguments: globals and closed-over values.

`watched(f)` fingerprints them. `jax.jit` does not key its cache on them, so when one
changes after the trace, the compiled function keeps the old value: a stale result,
not a retrace.
"""

from __future__ import annotations

import hashlib
import inspect
import types
from typing import Any

import jax
import numpy as np

from jaxtour import _ir

BIG = 2**20  # elements: hashing megabytes on every call would cost more than the call


def watched(f: Any) -> dict[str, str]:
    """Fingerprints of the globals and closed-over values `f`'s code reads."""
    return fingerprints(read_values(f))


def fingerprints(found: dict[str, Any]) -> dict[str, str]:
    """Fingerprints of values `read_values` found (those whose content can change)."""
    return {k: fp for k, v in found.items() if (fp := _fingerprint(v)) is not None}


def read_values(f: Any) -> dict[str, Any]:
    """The globals and closed-over values `f`'s code reads, by name (a partial's
    function's; nothing for a callable without Python code)."""
    f = inspect.unwrap(getattr(f, "func", f))
    code = getattr(f, "__code__", None)
    if code is None:
        return {}
    found: dict[str, Any] = {}
    scope = getattr(f, "__globals__", {})
    for name in _names(code):
        if name in scope:
            found[name] = scope[name]
    cells = zip(code.co_freevars, getattr(f, "__closure__", None) or (), strict=False)
    for name, cell in cells:
        try:
            found[name] = cell.cell_contents
        except ValueError:  # a cell not yet filled
            continue
    return found


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:  # lambdas and comprehensions inside f
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _fingerprint(value: Any) -> str | None:
    """A value's content in a short string; None for what cannot change meaning
    (modules, functions, classes)."""
    if isinstance(
        value, types.ModuleType | types.FunctionType | type | types.BuiltinFunctionType
    ):
        return None
    if isinstance(value, bool | int | float | complex | str | bytes | type(None)):
        return repr(value)
    if _ir.is_tracer(value):  # a transformation's value: no content to read yet
        return f"{_ir.type_str(value)} tracer"
    if isinstance(value, jax.Array | np.ndarray):
        if value.size > BIG:
            return f"{_ir.type_str(value)} object {id(value)}"
        array = _ir.host(value)  # a key's data; NumPy cannot hold the key itself
        digest = hashlib.sha1(array.tobytes()).hexdigest()[:8]
        return f"{_ir.type_str(array)} #{digest}"
    if isinstance(value, dict) and len(value) <= 16:  # a config dict mutated in place
        items = [(k, _fingerprint(v)) for k, v in value.items()]
        if all(isinstance(k, str | int) and p is not None for k, p in items):
            return "dict(" + ", ".join(f"{k}={p}" for k, p in items) + ")"
        return None
    if isinstance(value, tuple | list) and len(value) <= 16:
        parts = [p for v in value if (p := _fingerprint(v)) is not None]
        return (
            f"{type(value).__name__}({', '.join(parts)})"
            if len(parts) == len(value)
            else None
        )
    return None
