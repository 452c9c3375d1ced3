"""FLOPs and bytes counted from shapes and dtypes: per jaxpr equation, per compiled op.

The rules follow XLA's own cost analysis where it has one (a multiply-add is 2 flops;
exp, log, tanh, sqrt, ... count as transcendentals, not flops; a reduction of n values
to m costs n - m; an FFT 8 flops per element per radix-2 level, as XLA counts it).
Loops count every iteration (`_loops` says how often each runs); a cond counts its
costliest branch, as XLA's cost analysis counts a conditional: which branch runs
depends on the data, so a cond's figures are an upper bound of what runs. An equation
or op the rules do not know gets `flops=None` ("not counted"), never a silent zero.
Bytes are what an equation reads and writes through memory: its operands plus its
results, each counted once. Compiled ops are counted in `_hlo_cost`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from jaxtour._ir._jaxpr import is_literal, sub_jaxprs
from jaxtour._ir._loops import Loop, eqn_trips


def names(text: str) -> frozenset[str]:
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


ARITHMETIC = names(
    "add sub mul div rem max min neg abs sign floor ceil round nextafter square "
    "integer_pow clamp select_n eq ne lt le gt ge and or not xor add_any "
    "shift_left shift_right_logical shift_right_arithmetic"
)
TRANSCENDENTAL = names(
    "exp exp2 log log1p expm1 tanh logistic sin cos tan asin acos atan atan2 sinh cosh "
    "asinh acosh atanh erf erfc erf_inv lgamma digamma pow sqrt rsqrt cbrt"
)
REDUCTIONS = names(
    "reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor "
    "argmax argmin cumsum cumprod cummax cummin cumlogsumexp"
)
MOVES = names(
    "reshape broadcast_in_dim transpose slice dynamic_slice dynamic_update_slice "
    "concatenate pad gather squeeze expand_dims convert_element_type copy copy_p iota "
    "rev bitcast_convert_type reduce_precision stop_gradient optimization_barrier "
    "device_put sharding_constraint split all_gather all_to_all ppermute"
)
# Collectives that add across devices: one flop per element of the result, as XLA's
# HandleAllReduce counts it. `pvary` only marks a value as varying: nothing moves.
COLLECTIVE_SUMS = names("psum psum_invariant pmax pmin psum_scatter reduce_scatter")
NO_TRAFFIC = names("pvary")
# Host callbacks (jax.debug.print, jax.debug.callback, jax.pure_callback, io_callback)
# hand values to Python on the host: the device does no arithmetic for them, so their
# FLOPs and transcendentals are 0 exactly; what the Python does is host work, not
# device FLOPs (`_stages.cost_summary` names them).
HOST_CALLBACKS = names("debug_print debug_callback pure_callback io_callback")


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
    if eqn.primitive.name in NO_TRAFFIC:
        return Count(0, 0, 0, 0)
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
        features = rhs.shape[spec[0]]  # none: an empty output, no work
        flops = 2 * out * _size(rhs) / features if features else 0
    elif name in TRANSCENDENTAL:
        return Count(0, out, read, written)
    elif name in ARITHMETIC:
        flops = out
    elif name in REDUCTIONS:
        # n elements into one take n - 1 steps; an empty axis takes none
        kept = out if name.startswith(("reduce", "arg")) else 0
        flops = max(_size(eqn.invars[0].aval) - kept, 0)
    elif name in MOVES or name in HOST_CALLBACKS:
        flops = 0
    elif name in COLLECTIVE_SUMS:
        flops = out
    elif name in ("scatter-add", "scatter_add"):
        flops = _size(eqn.invars[2].aval)
    elif name == "fft":
        flops = fft_flops(_size(eqn.invars[0].aval), eqn.params["fft_lengths"])
    return Count(flops, 0, read, written)


def fft_flops(elements: int, lengths: Any) -> float:
    """XLA's count for an FFT: 4 complex multiply-adds (8 flops) per input element per
    level, `floor(log2 n)` levels per transformed axis (HloCostAnalysis::HandleFft)."""
    levels = math.prod(max(int(n), 1).bit_length() - 1 for n in lengths)
    return 8.0 * levels * elements


def jaxpr_counts(
    jaxpr: Any, times: float = 1.0, depth: int = 0
) -> Iterator[tuple[int, Any, Count, float]]:
    """(depth, eqn, count, times run) for every equation, nested jaxprs expanded.

    Figures are global: a scan body runs `length` times, a counted while (`i < N`,
    see `_loops`) its trip count, its condition once more; a data-dependent while's
    body and condition count once (one iteration). A `shard_map` body runs once per
    device of its manual axes. Of a cond's branches only the costliest is listed (see
    `_costliest`): an upper bound of what runs, as XLA's cost analysis counts it.
    """
    for eqn in jaxpr.eqns:
        subs = sub_jaxprs(eqn)
        if not subs:
            yield depth, eqn, eqn_count(eqn), times
            continue
        if eqn.primitive.name == "cond":
            branches = [list(jaxpr_counts(s.jaxpr, times, depth + 1)) for s in subs]
            yield from _costliest(branches)
            continue
        loop = eqn_trips(eqn)
        for sub in subs:
            inner = times * _runs(eqn, loop, sub.label)
            yield from jaxpr_counts(sub.jaxpr, inner, depth + 1)


def _costliest(branches: list[list[tuple[int, Any, Count, float]]]) -> list:
    """The branch of a cond whose counts stand for it: the most FLOPs, then the most
    bytes (XLA's cost analysis takes the costliest branch). A branch holding an
    equation the rules cannot count ranks first: its cost is unknown, and choosing it
    keeps that equation named ("not counted") in every total."""

    def rank(rows: list[tuple[int, Any, Count, float]]) -> tuple[bool, float, float]:
        return (
            any(c.flops is None for _, _, c, _ in rows),
            sum((c.flops or 0.0) * t for _, _, c, t in rows),
            sum(c.bytes * t for _, _, c, t in rows),
        )

    return max(branches, key=rank, default=[])


def _runs(eqn: Any, loop: Loop | None, label: str) -> float:
    """How many times a nested jaxpr runs per run of its equation."""
    if loop is not None:
        trips = 1 if loop.trips is None else loop.trips
        return trips + 1 if label == "cond_jaxpr" and loop.trips is not None else trips
    if eqn.primitive.name == "shard_map":
        mesh = eqn.params.get("mesh")
        shape = dict(getattr(mesh, "shape", {}))
        manual = eqn.params.get("newly_manual_axes") or eqn.params.get("axis_names")
        return math.prod(shape.get(a, 1) for a in manual or shape)
    return 1
