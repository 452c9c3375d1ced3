"""Which of the user's groups a picture opens: as many, shallowest first, as fit.

`plan(build, budget)` starts with every group folded, then opens groups level by level
(the outermost calls first) while the boxes and equations drawn stay within `budget`
nodes. A group too big to open stays one box and its calls stay inside it. Opening a
group may draw blocks not drawn before (a scan's body inside it), whose groups are
then weighed in turn, so `build` runs a few times (it is cheap: no layout).
`fit(...)` then lays the picture out and, while it is wider or taller than `max_px`,
plans again with a smaller budget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour._code_groups import Group
from jaxtour._render import RendererUnavailableError

# The largest side a picture may have at its defaults, in CSS pixels.
MAX_PX = 5000


def cost(group: Group, weight: Callable[[Any], int]) -> int:
    """Nodes added by opening `group`: its items (each `weight(item)` nodes, a group
    one box) drawn in place of its one box."""
    return -1 + sum(1 if isinstance(i, Group) else weight(i) for i in group.items)


def plan(build: Callable[[set], Any], budget: int) -> Any:
    """The builder `build(opened)` returned for the largest set of opened groups that
    keeps the picture within `budget` nodes (at least one build)."""
    opened: set[int] = set()
    weighed: set[int] = set()
    while True:
        builder = build(opened)
        drawn = builder.drawn_nodes
        fresh = [g for g in builder.folded_groups if id(g) not in weighed]
        changed = False
        for group in fresh:
            weighed.add(id(group))
            extra = cost(group, builder.weight)
            if drawn + extra <= budget:
                opened.add(id(group))
                drawn += extra
                changed = True
        if not changed:
            return builder


def fit(
    draw: Callable[[int], Any],
    budget: int,
    max_px: int | None = MAX_PX,
    cap: bool = True,
) -> tuple[Any, int]:
    """`draw(budget)`'s Diagram, with the budget shrunk until it fits `max_px` both
    ways (down to a budget of 8 nodes, or until a smaller budget draws the same
    graph), then `capped` unless not `cap` (`turned` may still turn it); (diagram,
    tries)."""
    tries, before = 0, None
    while True:
        diagram = draw(budget)
        tries += 1
        size = _measured(diagram)
        if max_px is None or budget <= 8 or size is None or max(size) <= max_px:
            return capped(diagram, max_px) if cap else diagram, tries
        if diagram.counts == before:  # folding further changes nothing
            return capped(diagram, max_px) if cap else diagram, tries
        before = diagram.counts
        budget = max(8, int(budget * 0.6))


_FLIP = {"TB": "LR", "LR": "TB", "BT": "RL", "RL": "BT"}


def turned(draw: Callable[[str], Any], rankdir: str, first: Any) -> Any:
    """`first` if it fits `MAX_PX` both ways and is no long thin strip, else the
    picture drawn the other way round too (`draw(rankdir)`: top-down for
    left-right), whichever has the smaller longest side, `capped`."""
    if _measured(first) is None or not _over(first):
        return first
    other = draw(_FLIP[rankdir])
    return capped(other if max(other.size_px) < max(first.size_px) else first)


def _measured(diagram: Any) -> tuple[float, float] | None:
    """The picture's size in pixels, or None with no renderer to lay it out (it is
    drawn as it is: its DOT source stands, and showing it says what is missing)."""
    try:
        return diagram.size_px
    except RendererUnavailableError:
        return None


def _over(diagram: Any) -> bool:
    """Over `MAX_PX` a side, or a strip: a long side over 2,500 px and 4 times the
    short one (a row of parallel chains, a run of steps)."""
    long, short = sorted(diagram.size_px, reverse=True)
    return long > MAX_PX or (long > 2500 and long > 4 * short)


def capped(diagram: Any, max_px: int | None = MAX_PX) -> Any:
    """`diagram`, scaled down by Graphviz (its `size` attribute) when a side is still
    over `max_px` after every fold: a promise of `max_px` is kept to the pixel."""
    if max_px is None:
        return diagram
    size = _measured(diagram)
    if size is None or max(size) <= max_px:  # no renderer: nothing to scale by
        return diagram
    inches = max_px * 0.75 / 72 * 0.995  # px -> pt -> inch, a hair under for rounding
    source = diagram.source
    brace = source.index("{") + 1
    scaled = type(diagram)(
        f'{source[:brace]}\n\tsize="{inches:.3f},{inches:.3f}"{source[brace:]}',
        diagram.title,
    )
    scaled.whole = diagram.whole
    return scaled
