"""Plain data between the answer's process and the grader: numbers, strings, arrays.

The answer's process turns what an answer returned into JSON (`encode`): builtins by
their exact type (with the standard library's OrderedDict and defaultdict), arrays as
dtype, shape and bytes, anything else as its type's name and its `repr`. The grader
reads it back (`decode`) with `json` and `np.frombuffer` alone, so nothing the answer
defined (a class, an `__eq__`, a pickle) reaches the process that compares it with the
reference.

Example:
    >>> decode(encode((1, [2.5, "a"], np.arange(3, dtype=np.int8))))
    (1, [2.5, 'a'], array([0, 1, 2], dtype=int8))
"""

from __future__ import annotations

import base64
import collections
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The dtypes an array may come back as (bfloat16 and friends by name, via ml_dtypes).
DTYPES = frozenset(
    [
        *(f"int{b}" for b in (8, 16, 32, 64)),
        *(f"uint{b}" for b in (8, 16, 32, 64)),
        *("float16", "float32", "float64", "complex64", "complex128", "bool"),
        *("bfloat16", "float8_e4m3fn", "float8_e5m2"),
    ]
)
_DEPTH = 32  # levels of nesting an answer's result may have
# Mappings that come back as themselves (JAX flattens each as its own kind of node).
_MAPPINGS = {
    dict: "dict",
    collections.OrderedDict: "OrderedDict",
    collections.defaultdict: "defaultdict",
}


@dataclass(frozen=True)
class Opaque:
    """Something an answer returned that is not plain data: its type's name and repr."""

    type_name: str
    text: str

    def __repr__(self) -> str:
        return self.text


def encode(value: Any) -> bytes:
    """`value` as JSON bytes (in the answer's process)."""
    return json.dumps(tagged(value)).encode()


def decode(data: bytes) -> Any:
    """The value `encode` wrote, as builtins and NumPy arrays (in the grader).

    Raises:
        ValueError: `data` is not what `encode` writes.
    """
    return untagged(json.loads(data))


def tagged(value: Any, depth: int = 0) -> Any:
    """`value` as a tree of JSON-ready dicts (in the answer's process)."""
    if depth > _DEPTH:
        return _opaque(value)
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return {"t": kind.__name__, "v": value}
    if kind is complex:
        return {"t": "complex", "v": [value.real, value.imag]}
    if kind in (tuple, list):
        return {"t": kind.__name__, "v": [tagged(v, depth + 1) for v in value]}
    if kind in _MAPPINGS:  # a dict, or a standard library one (no code of the answer's)
        items = [[tagged(k, depth + 1), tagged(v, depth + 1)] for k, v in value.items()]
        return {"t": _MAPPINGS[kind], "v": items}
    if hasattr(value, "__array__") and hasattr(value, "dtype"):  # NumPy, JAX
        return _array(value)
    return _opaque(value)


def _array(value: Any) -> Any:
    try:
        array = np.array(np.asarray(value), order="C")  # 0-d stays 0-d
    except Exception:  # a tracer, a deleted buffer: not data
        return _opaque(value)
    if array.dtype.name not in DTYPES:
        return _opaque(value)
    data = base64.b64encode(array.tobytes()).decode()
    scalar = isinstance(value, np.generic)
    return {
        "t": "array",
        "dtype": array.dtype.name,
        "shape": list(array.shape),
        "v": data,
        "scalar": scalar,
    }


def _opaque(value: Any) -> Any:
    try:
        text = repr(value)
    except Exception:
        text = "<an object>"
    return {"t": "object", "type": type(value).__name__, "v": text[:300]}


def untagged(node: Any, depth: int = 0) -> Any:
    """The value `tagged` wrote (in the grader).

    Raises:
        ValueError: `node` is not what `tagged` writes.
    """
    if depth > _DEPTH + 1 or not isinstance(node, dict):
        raise ValueError("not an encoded value")
    kind = node.get("t")
    value: Any = node.get("v")
    simple = {
        "NoneType": type(None),
        "bool": bool,
        "int": int,
        "float": float,
        "str": str,
    }
    if (
        kind in simple
        and isinstance(value, simple[kind])
        and (kind != "int" or type(value) is int)
    ):
        return value
    if kind == "complex":
        return complex(*(float(v) for v in value[:2]))
    if kind in ("tuple", "list"):
        items = [untagged(v, depth + 1) for v in value]
        return tuple(items) if kind == "tuple" else items
    if kind in _MAPPINGS.values():
        pairs = [(untagged(k, depth + 1), untagged(v, depth + 1)) for k, v in value]
        if kind == "defaultdict":  # its default factory is code: it stays behind
            return collections.defaultdict(None, pairs)
        return collections.OrderedDict(pairs) if kind == "OrderedDict" else dict(pairs)
    if kind == "array":
        return _array_of(node)
    if kind == "object":
        return Opaque(str(node.get("type")), str(value))
    raise ValueError(f"not an encoded value: {kind!r}")


def _array_of(node: dict) -> Any:
    name = node.get("dtype")
    if name not in DTYPES:
        raise ValueError(f"not a dtype an answer may return: {name!r}")
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        import ml_dtypes

        dtype = np.dtype(getattr(ml_dtypes, name))
    else:
        dtype = np.dtype(name)
    shape = tuple(int(n) for n in node["shape"])
    array = np.frombuffer(base64.b64decode(node["v"]), dtype).reshape(shape).copy()
    return array[()] if node.get("scalar") else array
