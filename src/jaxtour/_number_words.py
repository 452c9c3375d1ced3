"""Numbers and counts as a reader wants them in titles and labels."""

from __future__ import annotations

NOT_COUNTED = "not counted"  # a figure no rule knows how to count


def si(value: float | None, unit: str = "") -> str:
    """`1.37 G` style numbers; None reads "not counted"."""
    if value is None:
        return NOT_COUNTED
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}".rstrip()


def plural(n: int, word: str) -> str:
    """``"1 equation"``, ``"2 equations"``: counts in titles and labels read as English."""
    return f"{n} {word}{'s' * (n != 1)}"
