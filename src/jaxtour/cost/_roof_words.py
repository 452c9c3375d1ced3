"""What a roofline says of a whole program, in words its title, axes and legend share:
its rate, or why it has none (no FLOPs counted, or one iteration's of a loop whose
trip count is unknown), and why it may sit above the roof."""

from __future__ import annotations

from jaxtour.cost._ledger import CostTable, total

NO_PLACE = "so the program has no place on the roof; its ops are drawn at the left edge"
ABOVE = (
    "above the measured roof: the peaks were measured at a busier moment or the data "
    "sat in cache; device_peaks(refresh=True) measures again"
)
# the roof is a float32 matmul's: other types' matmuls may run faster or slower
ABOVE_TYPED = "this program's matmuls are not float32, the roof's, and may run faster"
# XLA counts a cond's costliest branch whichever ran: a cheap branch taken, the rate is
# the costly one's FLOPs over the cheap one's time
ABOVE_COND = (
    "a cheaper branch of a cond may have run (the FLOPs count the costliest, as XLA's "
    "do)"
)
# profile gives no rate either: one iteration's FLOPs over every iteration's time
TRIPS_UNKNOWN = "FLOPs of one iteration; trips unknown, so no rate or % of peak"
PER_ITERATION = "a data-dependent loop counts one iteration"  # the legend's word
# XLA's rules count one FLOP per complex op: (a+bi)(c+di) is 4 real multiplies and 2
# adds, a multiply-add 8 real FLOPs where XLA counts 2
COMPLEX = (
    "complex arithmetic ({types}) counts one FLOP per complex op, as XLA does: the real "
    "work is more (a complex multiply-add is 8 real FLOPs, counted 2)"
)


def no_flops(table: CostTable) -> str:
    """Why a program counts no FLOPs: pure data movement only when it also counts no
    transcendentals (which XLA counts apart) and holds no op the rules cannot count;
    beside such an op (a `top_k`, a library call) the transcendentals are a lower bound.

    Example:
        >>> from jaxtour.cost._ledger import Row
        >>> cos = CostTable("cos", "cpu", [], [Row("cosine", "", 0.0, 1e3, 8e3)])
        >>> no_flops(cos)
        'no FLOPs counted (1,000 transcendentals, which XLA counts apart)'
        >>> cos.ops.append(Row("custom-call.1", "", None, 0.0, 8e3, "custom-call"))
        >>> no_flops(cos)
        'no FLOPs counted (at least 1,000 transcendentals, which XLA counts apart)'
    """
    transcendentals = total(table.ops)[1]
    if transcendentals:
        least = "at least " if table.uncounted else ""
        return (
            f"no FLOPs counted ({least}{transcendentals:,.0f} transcendentals, which "
            "XLA counts apart)"
        )
    if table.uncounted:
        return "no FLOPs counted"
    return "no FLOPs after compilation (pure data movement)"


def headline(table: CostTable, rate: float | None, fraction: float | None) -> str:
    """The title's figures: intensity, then the measured rate and its share of the
    peak ("≤" before an upper bound: a cond), or why there is none."""
    if not table.flops:
        return f"{no_flops(table)}, {NO_PLACE}"
    if rate is None or fraction is None:
        return f"{table.intensity:.3g} FLOP/B; {TRIPS_UNKNOWN}"
    bound = "≤ " if table.conds else ""
    return (
        f"{table.intensity:.3g} FLOP/B, {bound}{rate / 1e9:.3g} GFLOP/s measured "
        f"({bound}{100 * fraction:.2g} % of peak)"
    )


def above(table: CostTable, matmul_types: tuple[str, ...]) -> str:
    """Why the program sits above the roof: what the count or the roof leaves out
    (a cond, a matmul type the roof was not measured for), else a stale roof."""
    causes = [ABOVE_COND] if table.conds else []
    causes += [ABOVE_TYPED] if matmul_types else []
    if not causes:
        return ABOVE
    return "above the measured roof: " + "; or ".join(causes)


def axes_title(table: CostTable, device: str, bound: str, placed: bool) -> str:
    """The plot's own title: where the program sits, or why it is not placed."""
    where = f"{table.name} on {device}: "
    if placed:
        return f"{where}{table.intensity:.3g} FLOP/B, {bound}-bound here"
    if table.flops:
        return f"{where}{table.intensity:.3g} FLOP/B; {TRIPS_UNKNOWN}"
    return where + no_flops(table)
