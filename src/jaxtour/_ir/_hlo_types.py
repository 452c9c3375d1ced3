"""HLO types read as arrays: `f32[8,4]`, or a tuple's arrays, their bytes and elements."""

from __future__ import annotations

import math
import re

_DTYPE_BYTES = {
    "pred": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
}
_ARRAY = re.compile(r"([a-z]\w*)\[([\d,]*)\]")


def hlo_arrays(type_text: str) -> list[tuple[str, tuple[int, ...]]]:
    """The (dtype, shape) arrays of an HLO type: `f32[8,4]`, or each of a tuple's."""
    return [
        (dtype, tuple(int(d) for d in dims.split(",") if d))
        for dtype, dims in _ARRAY.findall(type_text)
    ]


def hlo_bytes(type_text: str) -> float:
    """Bytes of an HLO type (a tuple's elements summed; f8 and smaller count 1 byte)."""
    return array_bytes(hlo_arrays(type_text))


def array_bytes(arrays: list[tuple[str, tuple[int, ...]]]) -> float:
    """Bytes of `hlo_arrays`' arrays."""
    return sum(_DTYPE_BYTES.get(dtype, 1) * math.prod(shape) for dtype, shape in arrays)


def elements(type_text: str) -> int:
    """Elements of an HLO type (a tuple's summed)."""
    return sum(math.prod(shape) for _, shape in hlo_arrays(type_text))
