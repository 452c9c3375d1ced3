"""What a jitted function reads besides its arguments: globals and closed-over values.

`watched(f)` fingerprints them. `jax.jit` does not key its cache on them, so when one
changes after the trace, the compiled function keeps the old value: a stale result,
not a retrace.
"""

from __future__ import annotations

import dataclasses
import dis
import functools
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


def mutable_fingerprints(found: dict[str, Any]) -> dict[str, str]:
    """Fingerprints of the values a trace could change in place (containers and
    objects, not arrays, numbers or strings): taken before a call, they tell a
    side effect of the trace (`trace_log.append(x.shape)`) from a changed input."""
    fixed = bool | int | float | complex | str | bytes | jax.Array | np.ndarray
    return fingerprints({k: v for k, v in found.items() if not isinstance(v, fixed)})


def fingerprints(found: dict[str, Any]) -> dict[str, str]:
    """Fingerprints of values `read_values` found (those whose content can change)."""
    return {k: fp for k, v in found.items() if (fp := _fingerprint(v)) is not None}


def read_values(f: Any) -> dict[str, Any]:
    """The globals and closed-over values `f`'s code reads, by name, and as `self`
    the object a bound method or a callable object reads (a partial's function's;
    nothing for a callable without Python code)."""
    f = inspect.unwrap(getattr(f, "func", f))
    found: dict[str, Any] = {}
    owner = getattr(f, "__self__", None)  # a bound method reads its object
    if owner is None and not inspect.isroutine(f) and not isinstance(f, type):
        owner, f = f, type(f).__call__  # a callable object (not a routine or class)
    if owner is not None and not isinstance(owner, types.ModuleType):
        found["self"] = owner
    code = getattr(f, "__code__", None)
    if code is None:
        return found
    scope = getattr(f, "__globals__", {})
    for name in _global_names(code):
        if name in scope:
            found[name] = scope[name]
    cells = zip(code.co_freevars, getattr(f, "__closure__", None) or (), strict=False)
    for name, cell in cells:
        try:
            found[name] = cell.cell_contents
        except ValueError:  # a cell not yet filled
            continue
    return found


@functools.lru_cache(maxsize=1024)
def _global_names(code: types.CodeType) -> frozenset[str]:
    """The global names `code` loads (not its attribute names: `x.mean` reads no
    global `mean`), with those of the lambdas and comprehensions inside it."""
    names = {
        str(op.argval)
        for op in dis.get_instructions(code)
        if op.opname in ("LOAD_GLOBAL", "LOAD_NAME")
    }
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return frozenset(names)


def _fingerprint(value: Any, depth: int = 0) -> str | None:
    """A value's content in a short string; None for what cannot change meaning
    (modules, functions, classes) or is too big or deep to read on every call."""
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
    if depth >= DEEP:
        return None
    items = _items(value)
    if items is None or len(items) > MANY:
        return None
    parts = [(k, _fingerprint(v, depth + 1)) for k, v in items]
    if any(p is None for _, p in parts):
        return None
    if isinstance(value, tuple | list) and not hasattr(value, "_fields"):
        return f"{type(value).__name__}({', '.join(str(p) for _, p in parts)})"
    inside = ", ".join(f"{k}={p}" for k, p in parts)
    if len(inside) > 120:  # a pytree of parameters: its digest, not its listing
        inside = "#" + hashlib.sha1(inside.encode()).hexdigest()[:8]
    return f"{type(value).__name__}({inside})"


DEEP, MANY = 4, 64  # how deep and how wide a container is read on every call


def _items(value: Any) -> list[tuple[str, Any]] | None:
    """(name, value) of what a container holds: a dict's items, a sequence's, a
    registered pytree's leaves, a dataclass's fields, an object's attributes."""
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    if isinstance(value, tuple | list):
        return [(str(i), v) for i, v in enumerate(value)]
    leaves = jax.tree_util.tree_flatten_with_path(value)[0]
    if not (len(leaves) == 1 and leaves[0][1] is value):  # a registered pytree
        return [(jax.tree_util.keystr(path), leaf) for path, leaf in leaves]
    if dataclasses.is_dataclass(value):
        return [(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)]
    attributes = getattr(value, "__dict__", None)
    return list(attributes.items()) if isinstance(attributes, dict) else None
