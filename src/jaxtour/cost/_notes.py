"""What a whole-call figure leaves out or how it was scaled, in words every lens shares.

Loops: each figure counts every iteration (scan's length, a counted while, XLA's
known_trip_count); a data-dependent loop's figures are one iteration's. A cond: its
costliest branch, an upper bound. Ops the rules cannot count: named, with what XLA's
own total says they cost. Where the kit's count and XLA's part: the ops of the
program where the two may differ, named as possibilities, never as the cause.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence

from jaxtour import _ir
from jaxtour._number_words import NOT_COUNTED, si


def loop_notes(
    jaxpr_loops: Sequence[_ir.Loop], compiled: Sequence[_ir.Loop]
) -> list[str]:
    """One sentence on how loops were counted, one more if any is data-dependent."""
    if not jaxpr_loops and not compiled:
        return []
    counted = [
        str(loop) for loop in [*jaxpr_loops, *compiled] if loop.trips is not None
    ]
    notes = []
    if counted:
        notes.append(
            "Loops count every iteration (body figures times the trip count): "
            + "; ".join(dict.fromkeys(counted))
            + "."
        )
    if per_iteration(jaxpr_loops, compiled):
        notes.append(
            "A loop's trip count depends on the data or an argument ("
            + ", ".join(
                dict.fromkeys(
                    lp.name for lp in [*jaxpr_loops, *compiled] if lp.trips is None
                )
            )
            + "): its figures count one iteration, so totals are per iteration of it, "
            "not per call."
        )
    return notes


def per_iteration(*loops: Sequence[_ir.Loop]) -> bool:
    """Whether some loop's figures are one iteration's (its trip count is unknown)."""
    return any(loop.trips is None for group in loops for loop in group)


def repeats(loops: Sequence[_ir.Loop]) -> bool:
    """Whether some loop runs its body more than once (XLA counts it once)."""
    return any(loop.trips not in (None, 1) for loop in loops)


def uncounted(
    names: Sequence[str],
    kit_flops: float,
    xla_flops: float | None,
    library: Sequence[str] = (),
) -> str:
    """'' when every op is counted; else how many of which kind, and the FLOPs XLA
    counts beyond the kit's counted ops (about what they cost). Of `library` (custom
    calls: cholesky, triangular_solve on a CPU) XLA counts nothing either, so its total
    says nothing of what they cost. Their transcendentals are unknown too: the FLOP
    and transcendental totals are lower bounds.

    Example:
        >>> uncounted(["sort.1", "sort.2", "fft.3"], 100.0, 400.0)
        "2 sort, 1 fft ops not counted (FLOP and transcendental totals leave them out;
        XLA counts 300 FLOPs beyond the kit's, about what they cost)"
        >>> uncounted(["cholesky.0"], 100.0, 400.0, library=["cholesky.0"])
        "1 cholesky op not counted (FLOP and transcendental totals leave them out; it is
        a library call (a custom call), of which XLA's cost_analysis() counts no FLOPs
        or transcendentals either, so its total is no measure of it)"
    """
    if not names:
        return ""
    kinds = collections.Counter(name.split(".")[0] for name in names)
    what = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    plural = "s" if len(names) > 1 else ""
    # what the rules cannot count may compute exp or sqrt (a cholesky's square roots)
    text = f"{what} op{plural} {NOT_COUNTED} (FLOP and transcendental totals leave them out"
    calls = [name for name in names if name in library]
    if calls:
        many, every = len(calls) > 1, len(calls) == len(names)
        who = ("they" if many else "it") if every else ", ".join(calls)
        what = "are library calls (custom calls)" if many else "is a library call"
        text += f"; {who} {what}{'' if many else ' (a custom call)'}, of which XLA's "
        text += "cost_analysis() counts no FLOPs or transcendentals either"
        if every:
            text += f", so its total is no measure of {'them' if many else 'it'}"
    if len(calls) < len(names) and xla_flops is not None and xla_flops > kit_flops:
        text += (
            f"; XLA counts {xla_flops - kit_flops:,.0f} FLOPs beyond the kit's, "
            f"about what {'the others' if calls else 'they'} cost"
        )
    return text + ")"


def xla_loops(xla: float | None, once: float, every: float, unit: str = "") -> str:
    """XLA's figure beside the kit's counted as XLA counts loops (each body once)."""
    if xla is None:
        return ""
    gap = abs(once - xla) / max(xla, 1.0)
    return (
        f"XLA's cost_analysis() counts each loop body once: XLA {si(xla, unit)}, "
        f"the kit counting each body once {si(once, unit)} ({100 * gap:.2g} % apart); "
        f"every iteration, the kit's {si(every, unit)}."
    )


def not_counted(names: Sequence[str]) -> str:
    """What the rules do not know, each once: every total leaving them out says so.

    Example:
        >>> not_counted(["sort", "cholesky", "sort"])
        'Not counted (the rules do not know them, so totals are lower bounds): sort,
        cholesky.'
    """
    return (
        f"{NOT_COUNTED.capitalize()} (the rules do not know them, so totals are lower "
        f"bounds): {', '.join(dict.fromkeys(names))}."
    )


COND = (
    "A cond counts its costliest branch, as XLA's cost_analysis() does: which branch "
    "runs depends on the data, so its figures are an upper bound of what runs."
)


def complex_flops(types: Sequence[str]) -> str:
    """What FLOPs of complex arithmetic count: one per complex op, as XLA's rules.

    Example:
        >>> print(complex_flops(["complex64"]))
        Complex arithmetic (complex64) counts one FLOP per complex op, as XLA's
        cost_analysis() does: the real work is more ((a+bi)(c+di) is 4 real multiplies
        and 2 adds; a complex multiply-add, 8 real FLOPs, counts 2), so FLOP/B and any
        rate undercount it.
    """
    # (a+bi)(c+di) = (ac - bd) + (ad + bc)i; a matmul's multiply-add adds 2 more
    return (
        f"Complex arithmetic ({', '.join(types)}) counts one FLOP per complex op, as "
        "XLA's cost_analysis() does: the real work is more ((a+bi)(c+di) is 4 real "
        "multiplies and 2 adds; a complex multiply-add, 8 real FLOPs, counts 2), so "
        "FLOP/B and any rate undercount it."
    )


# Ops where XLA's count may part from the kit's rules, and how: possibilities, since
# the kit does not trace a gap to its op (XLA gives one total, not a figure per op).
FLOP_GAPS = {
    "convolution": "a convolution (XLA leaves out multiply-adds on padded positions)",
    "convert": "a type conversion (XLA counts a FLOP per element converted, the kit "
    "none: it moves data)",
    "reduce": "a reduction (XLA counts each op of its combining computation per "
    "element: a comparator is several)",
    "reduce-window": "a windowed reduction (the same, per window)",
    "scatter": "a scatter (XLA counts its update computation per element)",
    "select-and-scatter": "a select-and-scatter (its select and scatter computations)",
}
BYTE_GAPS = {
    "gather": "a gather (XLA counts the elements it reads)",
    "slice": "a slice of an operand also used whole (XLA counts each use)",
    "dynamic-slice": "a dynamic slice of an operand also used whole (the same)",
    "tuple": "a tuple (XLA counts its table of pointers, 8 B an element; the kit "
    "nothing)",
    "custom-call": "a custom call (a library call: XLA counts none of its bytes, "
    "the kit its operands and results)",
}


def gap(
    what: str,
    ours: float,
    xla: float | None,
    opcodes: frozenset[str],
    unit: str = "",
    also: Sequence[str] = (),
) -> str:
    """The kit's figure beside XLA's and, when they part, the ops of this program
    (`opcodes`, fused ones included) where the two may part, with `also` (causes the
    caller found), or that the kit knows of none.

    Example:
        >>> print(gap("FLOPs", 100.0, 90.0, frozenset({"add", "convolution"})))
        FLOPs: kit 100, XLA 90 (11 % apart). This program holds ops where the two
        counts may part: a convolution (XLA leaves out multiply-adds on padded
        positions).
    """
    if xla is None:
        return f"XLA reports no {what} here."
    if ours == xla:
        return f"{what}: the kit's count equals XLA's ({si(xla, unit)})."
    if math.isclose(ours, xla, rel_tol=2**-23):  # XLA adds its figures in float32
        return (
            f"{what}: the kit's count equals XLA's ({si(xla, unit)}) to the float32 "
            "XLA counts in."
        )
    apart = abs(ours - xla) / max(xla, 1.0)
    text = f"{what}: kit {si(ours, unit)}, XLA {si(xla, unit)} ({100 * apart:.2g} % apart)."
    known = FLOP_GAPS if what == "FLOPs" else BYTE_GAPS
    present = [why for op, why in known.items() if op in opcodes] + list(also)
    if present:
        return (
            f"{text} This program holds ops where the two counts may part: "
            + "; ".join(present)
            + "."
        )
    return (
        f"{text} The kit has not found why: this program holds none of the ops "
        f"where it knows the two counts part ({', '.join(known)})."
    )
