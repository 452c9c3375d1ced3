"""FLOPs and bytes counted from shapes and dtypes: per jaxpr equation, per compiled op.

The rules follow XLA's own cost analysis where it has one (a multiply-add is 2 flops;
exp, log, tanh, sqrt, ... count as transcendentals, not flops; a reduction of n values
to m costs n - m). An equation or op the rules do not know gets `flops=None` ("not
counted"), never a silent zero. Bytes are what an op reads and writes through memory:
its operands plus its results, each counted once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from jaxtour._ir._hlo import BOOKKEEPING, HloModule, HloOp
from jaxtour._ir._jaxpr import is_literal, sub_jaxprs


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


class Count(NamedTuple):
    """What one equation or op costs; `flops` is None when the rules do not know it."""

    flops: float | None
    transcendentals: float
    read: float  # bytes
    written: float  # bytes

    @property
    def bytes(self) -> float:
        """Bytes read plus bytes written."""
        return self.read + self.written


ARITHMETIC = _names(
    "add sub mul div rem max min neg abs sign floor ceil round nextafter square "
    "integer_pow clamp select_n eq ne lt le gt ge and or not xor add_any "
    "shift_left shift_right_logical shift_right_arithmetic"
)
TRANSCENDENTAL = _names(
    "exp exp2 log log1p expm1 tanh logistic sin cos tan asin acos atan atan2 sinh cosh "
    "asinh acosh atanh erf erfc erf_inv lgamma digamma pow sqrt rsqrt cbrt"
)
REDUCTIONS = _names(
    "reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor "
    "argmax argmin cumsum cumprod cummax cummin cumlogsumexp"
)
MOVES = _names(
    "reshape broadcast_in_dim transpose slice dynamic_slice dynamic_update_slice "
    "concatenate pad gather squeeze expand_dims convert_element_type copy copy_p iota "
    "rev bitcast_convert_type reduce_precision stop_gradient optimization_barrier "
    "device_put sharding_constraint split"
)


def aval_bytes(aval: Any) -> float:
    """Bytes of an abstract value (0 for tokens and extended dtypes: PRNG keys)."""
    try:
        return math.prod(aval.shape) * np.dtype(aval.dtype).itemsize
    except (AttributeError, TypeError):
        return 0.0


def _size(aval: Any) -> int:
    return math.prod(getattr(aval, "shape", ()))


def eqn_count(eqn: Any) -> Count:
    """The cost of one equation that calls no nested jaxpr."""
    read = sum(aval_bytes(v.aval) for v in eqn.invars if not is_literal(v))
    written = sum(aval_bytes(v.aval) for v in eqn.outvars)
    name, out = eqn.primitive.name, sum(_size(v.aval) for v in eqn.outvars)
    flops: float | None = None
    if name == "dot_general":
        (contract, _), _ = eqn.params["dimension_numbers"]
        lhs = eqn.invars[0].aval.shape
        flops = 2 * out * math.prod(lhs[d] for d in contract)
    elif name == "conv_general_dilated":
        rhs, spec = eqn.invars[1].aval, eqn.params["dimension_numbers"].rhs_spec
        flops = 2 * out * _size(rhs) / rhs.shape[spec[0]]
    elif name in TRANSCENDENTAL:
        return Count(0, out, read, written)
    elif name in ARITHMETIC:
        flops = out
    elif name in REDUCTIONS:
        flops = _size(eqn.invars[0].aval) - (
            out if name.startswith(("reduce", "arg")) else 0
        )
    elif name in MOVES:
        flops = 0
    elif name in ("scatter-add", "scatter_add"):
        flops = _size(eqn.invars[2].aval)
    return Count(flops, 0, read, written)


def jaxpr_counts(
    jaxpr: Any, times: float = 1.0, depth: int = 0
) -> Iterator[tuple[int, Any, Count, float]]:
    """(depth, eqn, count, times run) for every equation, nested jaxprs expanded.

    A scan body runs `length` times; a while body is counted once (its trip count is
    not in the jaxpr); of a cond's branches each is listed, run once.
    """
    for eqn in jaxpr.eqns:
        subs = sub_jaxprs(eqn)
        if not subs:
            yield depth, eqn, eqn_count(eqn), times
            continue
        inner = (
            times * eqn.params.get("length", 1)
            if eqn.primitive.name == "scan"
            else times
        )
        for sub in subs:
            yield from jaxpr_counts(sub.jaxpr, inner, depth + 1)


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
    return sum(
        _DTYPE_BYTES.get(dtype, 1) * math.prod(shape)
        for dtype, shape in hlo_arrays(type_text)
    )


def _elements(type_text: str) -> int:
    return sum(math.prod(shape) for _, shape in hlo_arrays(type_text))


HLO_ARITHMETIC = _names(
    "add subtract multiply divide remainder maximum minimum negate abs sign floor ceil "
    "round-nearest-afz round-nearest-even compare select clamp and or not xor "
    "shift-left shift-right-logical shift-right-arithmetic"
)
HLO_TRANSCENDENTAL = _names(
    "exponential exponential-minus-one log log-plus-one logistic tanh sine cosine tan "
    "atan2 erf power sqrt rsqrt cbrt"
)
HLO_MOVES = _names(
    "broadcast reshape transpose slice dynamic-slice dynamic-update-slice "
    "concatenate pad "
    "gather copy convert bitcast bitcast-convert iota reverse constant parameter tuple "
    "get-tuple-element reduce-precision optimization-barrier copy-start copy-done"
)


def hlo_op_count(op: HloOp, types: dict[str, str]) -> Count:
    """The FLOPs of one op (not its bytes), operand types read from `types`."""
    out = _elements(op.type)
    flops: float | None = None
    if op.opcode == "dot":
        lhs = hlo_arrays(types.get(op.operands[0], ""))
        dims = re.search(r"lhs_contracting_dims=\{([\d,]*)\}", op.attrs)
        if lhs and dims:
            shape = lhs[0][1]
            flops = 2 * out * math.prod(shape[int(d)] for d in dims[1].split(",") if d)
    elif op.opcode == "convolution":
        kernel = hlo_arrays(types.get(op.operands[1], ""))
        labels = re.search(r"dim_labels=\w+_(\w+)->", op.attrs)
        if kernel and labels:
            shape = kernel[0][1]
            flops = 2 * out * math.prod(shape) / shape[labels[1].index("o")]
    elif op.opcode in HLO_TRANSCENDENTAL:
        return Count(0, out, 0, 0)
    elif op.opcode in HLO_ARITHMETIC:
        flops = out
    elif op.opcode == "reduce":
        flops = _elements(types.get(op.operands[0], "")) - out
    elif op.opcode == "reduce-window":
        window = re.search(r"size=([\dx]+)", op.attrs)
        flops = (
            out * (math.prod(int(s) for s in window[1].split("x")) - 1)
            if window
            else None
        )
    elif op.opcode in HLO_MOVES:
        flops = 0
    return Count(flops, 0, 0, 0)


def hlo_counts(module: HloModule) -> list[tuple[HloOp, Count]]:
    """Each op of the entry computation with its cost; a fusion sums its fused ops.

    Bytes are the op's operands and results: what crosses memory between ops.
    """
    entry = module.computations[module.entry]
    types = {op.name: op.type for op in entry.ops}
    rows = []
    for op in entry.ops:
        if op.opcode in BOOKKEEPING or op.opcode in ("constant", "bitcast"):
            continue
        flops, trans = _inside(module, op, types)
        read = sum(hlo_bytes(types.get(name, "")) for name in op.operands)
        rows.append((op, Count(flops, trans, read, hlo_bytes(op.type))))
    return rows


def _inside(
    module: HloModule, op: HloOp, types: dict[str, str]
) -> tuple[float | None, float]:
    if not op.called:
        count = hlo_op_count(op, types)
        return count.flops, count.transcendentals
    flops: float | None = 0.0
    trans = 0.0
    for called in op.called:
        computation = module.computations.get(called.computation)
        if computation is None:
            return None, trans
        inner = {o.name: o.type for o in computation.ops}
        for sub in computation.ops:
            sub_flops, sub_trans = _inside(module, sub, inner)
            flops = None if flops is None or sub_flops is None else flops + sub_flops
            trans += sub_trans
    return flops, trans
