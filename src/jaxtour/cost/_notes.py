"""What a whole-call figure leaves out or how it was scaled, in words every lens shares.

Loops: each figure counts every iteration (scan's length, a counted while, XLA's
known_trip_count); a data-dependent loop's figures are one iteration's. Ops the rules
cannot count: named, with what XLA's own total says they cost.
"""

from __future__ import annotations

import collections
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


def uncounted(names: Sequence[str], kit_flops: float, xla_flops: float | None) -> str:
    """'' when every op is counted; else how many of which kind, and the FLOPs XLA
    counts beyond the kit's counted ops (about what they cost).

    Example:
        >>> uncounted(["sort.1", "sort.2", "fft.3"], 100.0, 400.0)
        "2 sort, 1 fft ops not counted (FLOP totals leave them out; XLA counts 300
        FLOPs beyond the kit's, about what they cost)"
    """
    if not names:
        return ""
    kinds = collections.Counter(name.split(".")[0] for name in names)
    what = ", ".join(f"{n} {kind}" for kind, n in kinds.items())
    plural = "s" if len(names) > 1 else ""
    text = f"{what} op{plural} {NOT_COUNTED} (FLOP totals leave them out"
    if xla_flops is not None and xla_flops > kit_flops:
        text += (
            f"; XLA counts {xla_flops - kit_flops:,.0f} FLOPs beyond the kit's, "
            "about what they cost"
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
