"""Checks of the drawing options every drawer shares: direction, depth, counts.

Each raises ValueError naming the caller (`who`), the option, what it accepts and what
it got.
"""

from __future__ import annotations

RANKDIRS = ("TB", "LR", "BT", "RL")
MAX_DEPTH = (
    2  # every drawer opens two levels of nesting (calls, loops, fusions) by default
)

# The widest an autodiff drawing may be at its defaults; a wider one folds further.
MAX_WIDTH_PX = 5000


def check_rankdir(rankdir: str, who: str) -> None:
    """Raises ValueError unless `rankdir` is one of Graphviz's four directions."""
    if rankdir not in RANKDIRS:
        raise ValueError(
            f'{who}: `rankdir` must be one of "TB" (top to bottom), "LR" (left '
            f'to right), "BT" or "RL"; got {rankdir!r}.'
        )


def check_max_width(max_width: int | None, who: str) -> None:
    """Raises ValueError unless `max_width` is a whole number of pixels >= 1 or None."""
    if max_width is not None and not _whole(max_width, at_least=1):
        raise ValueError(
            f"{who}: `max_width` must be a positive whole number of pixels, or None "
            f"(never fold for width); got {max_width!r}."
        )


def check_max_depth(max_depth: int | None, who: str) -> None:
    """Raises ValueError unless `max_depth` is a whole number >= 0 or None."""
    if max_depth is not None and not _whole(max_depth, at_least=0):
        raise ValueError(
            f"{who}: `max_depth` must be a whole number >= 0 (0 draws "
            f"every nested part as one node) or None; got {max_depth!r}."
        )


def check_count(value: int, name: str, who: str) -> None:
    """Raises ValueError unless `value` (option `name`) is a positive whole number."""
    if not _whole(value, at_least=1):
        raise ValueError(
            f"{who}: `{name}` must be a positive whole number; got {value!r}."
        )


def _whole(value: object, at_least: int) -> bool:
    """Whether `value` is an int (not a bool) of at least `at_least`."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= at_least
