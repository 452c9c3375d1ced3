"""FLOPs and bytes of compiled HLO ops, by the rules `_cost` applies to jaxpr equations.

Bytes are an op's operands plus its results, as XLA's cost analysis counts them: a
(dynamic-)slice reads only the slice it takes, a dynamic-update-slice writes only its
update (in place), and a fusion's operand used only through slices counts its slices.
A while op counts its body's ops once per iteration (`_loops`), its condition once
more; a conditional its costliest branch's ops, each figure the most any branch has (as
XLA's HandleConditional does): which branch runs depends on the data, so that is an
upper bound of what runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from jaxtour._ir._cost import Count, fft_flops, names
from jaxtour._ir._hlo import BOOKKEEPING, HloComputation, HloModule, HloOp
from jaxtour._ir._hlo_library import (
    CUBLAS_GEMMS,
    CUDNN_CONVOLUTIONS,
    convolution,
    gemm,
    is_host_callback,
)
from jaxtour._ir._hlo_types import array_bytes, elements, hlo_arrays, hlo_bytes
from jaxtour._ir._loops import Loop

HLO_ARITHMETIC = names(
    "add subtract multiply divide remainder maximum minimum negate abs sign floor ceil "
    "round-nearest-afz round-nearest-even compare select clamp and or not xor "
    "shift-left shift-right-logical shift-right-arithmetic"
)
HLO_TRANSCENDENTAL = names(
    "exponential exponential-minus-one log log-plus-one logistic tanh sine cosine tan "
    "atan2 erf power sqrt rsqrt cbrt"
)
HLO_MOVES = names(
    "broadcast reshape transpose slice dynamic-slice dynamic-update-slice "
    "concatenate pad "
    "gather copy convert bitcast bitcast-convert iota reverse constant parameter tuple "
    "get-tuple-element reduce-precision optimization-barrier copy-start copy-done "
    "all-gather all-gather-start all-gather-done all-to-all collective-permute "
    "collective-permute-start collective-permute-done all-reduce-done"
)
HLO_COLLECTIVE_SUMS = names("all-reduce all-reduce-start reduce-scatter")


def hlo_op_count(op: HloOp, types: dict[str, str]) -> Count:
    """The FLOPs of one op (not its bytes), operand types read from `types`."""
    out = elements(op.type)
    flops: float | None = None
    if op.opcode == "dot":
        lhs = hlo_arrays(types.get(op.operands[0], ""))
        dims = re.search(r"lhs_contracting_dims=\{([\d,]*)\}", op.attrs)
        if lhs and dims:
            shape = lhs[0][1]
            flops = 2 * out * math.prod(shape[int(d)] for d in dims[1].split(",") if d)
    elif op.opcode == "convolution" or op.target.startswith(CUDNN_CONVOLUTIONS):
        flops = convolution(op, types)
    elif op.target.startswith(CUBLAS_GEMMS):
        flops = gemm(op, types)
    elif op.opcode in HLO_TRANSCENDENTAL:
        return Count(0, out, 0, 0)
    elif op.opcode in HLO_ARITHMETIC:
        flops = out
    elif op.opcode == "reduce":
        flops = max(elements(types.get(op.operands[0], "")) - out, 0)
    elif op.opcode == "reduce-window":
        window = re.search(r"size=([\dx]+)", op.attrs)
        flops = (
            out * (math.prod(int(s) for s in window[1].split("x")) - 1)
            if window
            else None
        )
    elif op.opcode == "fft":
        lengths = re.search(r"fft_length=\{([\d,]*)\}", op.attrs)
        if lengths:
            size = elements(types.get(op.operands[0], ""))
            flops = fft_flops(size, lengths[1].split(","))
    elif op.opcode in HLO_COLLECTIVE_SUMS:
        flops = out
    elif op.opcode in HLO_MOVES or is_host_callback(op.target):
        flops = 0
    return Count(flops, 0, 0, 0)


def uncountable(module: HloModule, op: HloOp) -> list[str]:
    """The ops inside `op` (itself, when it calls nothing) whose FLOPs the rules do
    not know: what a fusion that cannot be counted holds that makes it so."""
    return _uncountable_inside(module, op) or [op.name]


def _uncountable_inside(module: HloModule, op: HloOp) -> list[str]:
    """The ops inside `op`'s computations the rules cannot count ([] when it calls
    none, or they count them all); `op` itself when the text lacks one of them."""
    found = []
    for called in op.called:
        computation = module.computations.get(called.computation)
        if computation is None:
            return [op.name]
        types = {o.name: o.type for o in computation.ops}
        for inner in computation.ops:
            if inner.called:
                found += _uncountable_inside(module, inner)
            elif hlo_op_count(inner, types).flops is None:
                found.append(inner.name)
    return found


def hlo_counts(
    module: HloModule, loops: dict[str, Loop] | None = None
) -> list[tuple[HloOp, Count]]:
    """Each op of the entry computation with its cost; a fusion sums its fused ops.

    Bytes are the op's operands and results: what crosses memory between ops. A while
    op counts its body's ops once per iteration (and its condition once more):
    `loops[op.name].trips` (see `hlo_trips`), else XLA's `known_trip_count`, else one
    iteration.
    """
    return list(_rows(module, module.entry, loops or {}))


def _rows(
    module: HloModule, name: str, loops: dict[str, Loop]
) -> Iterator[tuple[HloOp, Count]]:
    computation = module.computations[name]
    types = {op.name: op.type for op in computation.ops}
    for op in computation.ops:
        if op.opcode in BOOKKEEPING or op.opcode in ("constant", "bitcast"):
            continue
        if op.opcode == "while":
            yield op, _while(module, op, loops)
            continue
        if op.opcode == "conditional":
            yield op, _conditional(module, op, loops)
            continue
        flops, trans = _inside(module, op, types, loops)
        read = sum(_read(module, op, i, types) for i in range(len(op.operands)))
        yield op, Count(flops, trans, read, _written(module, op, types))


_SLICES = ("dynamic-slice", "slice")


def _read(module: HloModule, op: HloOp, i: int, types: dict[str, str]) -> float:
    """Bytes op reads of operand i: all of it, but only the slice a (dynamic-)slice
    takes, and nothing of the buffer a dynamic-update-slice updates in place (XLA's
    rule: a scan reads one minibatch per iteration, not the whole stack)."""
    full = hlo_bytes(types.get(op.operands[i], ""))
    if op.opcode in _SLICES and i == 0:
        return hlo_bytes(op.type)
    if op.opcode == "dynamic-update-slice" and i == 0:
        return 0.0
    fused = _fused(module, op)
    if fused is None or i >= len(fused.params):
        return full
    param = fused.params[i]
    users = [o for o in fused.ops if param in o.operands]
    if users and all(o.opcode in _SLICES and o.operands[0] == param for o in users):
        return sum(hlo_bytes(o.type) for o in users)
    if users and all(
        o.opcode == "dynamic-update-slice" and o.operands[0] == param for o in users
    ):
        return 0.0
    return full


def _written(module: HloModule, op: HloOp, types: dict[str, str]) -> float:
    """Bytes op writes: its result, or only the update a dynamic-update-slice makes,
    or a library kernel's results without its scratch space."""
    if op.opcode == "dynamic-update-slice":
        return hlo_bytes(types.get(op.operands[1], ""))
    if op.target.startswith(CUBLAS_GEMMS + CUDNN_CONVOLUTIONS):
        return _results_bytes(op.type)
    fused = _fused(module, op)
    if fused is None:
        return hlo_bytes(op.type)
    root = next((o for o in fused.ops if o.name in fused.returns), None)
    if (
        root
        and root.opcode == "dynamic-update-slice"
        and root.operands[0] in fused.params
    ):
        inner = {o.name: o.type for o in fused.ops}
        return hlo_bytes(inner.get(root.operands[1], ""))
    return hlo_bytes(op.type)


def _results_bytes(type_text: str) -> float:
    """Bytes of a library kernel's results: its tuple less the scratch buffer XLA
    appends last (bytes, s8 or u8); an auxiliary output (GELU_AUX, amax) is kept."""
    arrays = hlo_arrays(type_text)
    if len(arrays) > 1 and arrays[-1][0] in ("s8", "u8"):
        arrays = arrays[:-1]
    return array_bytes(arrays)


def _fused(module: HloModule, op: HloOp) -> HloComputation | None:
    if op.opcode != "fusion" or not op.called:
        return None
    return module.computations.get(op.called[0].computation)


def trips_of(op: HloOp, loops: dict[str, Loop]) -> int | None:
    """A compiled while's trip count: the one `loops` gives, else XLA's annotation."""
    loop = loops.get(op.name)
    return loop.trips if loop else op.trip_count


def _while(module: HloModule, op: HloOp, loops: dict[str, Loop]) -> Count:
    """A while op: its body's ops (each through memory) times the trip count."""
    n = trips_of(op, loops)
    flops: float | None = 0.0
    trans = read = written = 0.0
    for called in op.called:
        if called.computation not in module.computations:
            return Count(None, trans, read, written)
        k = (n if called.role == "body" else n + 1) if n is not None else 1
        for _, c in _rows(module, called.computation, loops):
            flops = None if flops is None or c.flops is None else flops + k * c.flops
            trans, read = trans + k * c.transcendentals, read + k * c.read
            written += k * c.written
    return Count(flops, trans, read, written)


def _conditional(module: HloModule, op: HloOp, loops: dict[str, Loop]) -> Count:
    """A conditional: its costliest branch's ops (each through memory), each figure
    the most any branch has, as XLA's HandleConditional counts it. A branch holding
    an op the rules cannot count makes the FLOPs unknown (None): it may cost most."""
    totals = []
    for called in op.called:
        if called.computation not in module.computations:
            return Count(None, 0.0, 0.0, 0.0)
        counts = [c for _, c in _rows(module, called.computation, loops)]
        flops = [c.flops for c in counts]
        totals.append(
            Count(
                None if None in flops else sum(f or 0.0 for f in flops),
                sum(c.transcendentals for c in counts),
                sum(c.read for c in counts),
                sum(c.written for c in counts),
            )
        )
    if not totals:
        return Count(None, 0.0, 0.0, 0.0)
    flops = [t.flops for t in totals]
    return Count(
        None if None in flops else max(f or 0.0 for f in flops),
        max(t.transcendentals for t in totals),
        max(t.read for t in totals),
        max(t.written for t in totals),
    )


def _inside(
    module: HloModule, op: HloOp, types: dict[str, str], loops: dict[str, Loop]
) -> tuple[float | None, float]:
    """An op's FLOPs and transcendentals, the computations it calls included."""
    if op.opcode == "while":
        count = _while(module, op, loops)
        return count.flops, count.transcendentals
    if not op.called:
        count = hlo_op_count(op, types)
        return count.flops, count.transcendentals
    each = [_computation(module, called.computation, loops) for called in op.called]
    flops = [f for f, _ in each]
    known = None if None in flops else [f for f in flops if f is not None]
    if op.opcode == "conditional":  # one branch runs: the costliest, per figure
        return (None if known is None else max(known)), max(t for _, t in each)
    return (None if known is None else sum(known)), sum(t for _, t in each)


def _computation(
    module: HloModule, name: str, loops: dict[str, Loop]
) -> tuple[float | None, float]:
    """The FLOPs (None: some op not counted) and transcendentals of one computation."""
    computation = module.computations.get(name)
    if computation is None:
        return None, 0.0
    inner = {o.name: o.type for o in computation.ops}
    flops: float | None = 0.0
    trans = 0.0
    for sub in computation.ops:
        sub_flops, sub_trans = _inside(module, sub, inner, loops)
        flops = None if flops is None or sub_flops is None else flops + sub_flops
        trans += sub_trans
    return flops, trans
