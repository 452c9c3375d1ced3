"""Inputs and outputs of a picture: a pytree of many leaves is one node.

A training step's state of 50 arrays would otherwise be 50 boxes side by side. Leaves
are grouped by the pytree they come from (the argument, or the element of the result
tuple); a group of more than `ROW` leaves is drawn as one node naming the pytree, its
shape and its leaf count, every edge of its leaves going to or from it. `draw_jaxpr`,
`draw_hlo` and the autodiff drawers share these rules and the `expand_pytrees` option.
"""

from __future__ import annotations

import re
from typing import Any

from jaxtour import _style
from jaxtour._number_words import plural

ROW = 8  # terminals per row; a pytree of more leaves than this is one node
FOLDED = "pytrees as one node each"  # what a title says when one was folded

# The pytree a leaf belongs to: the argument (`params` of `params[0]['w']`), or the
# element of a result tuple (`result[0]` of `result[0]['w']`), else the whole result.
# A name that is no path (HLO's `Arg_0.1`) is a pytree of its own.
_HEAD = re.compile(r"^(result\[\d+\]|[A-Za-z_]\w*)(?=\[|\.[A-Za-z_]|$)")
_FIRST_KEY = re.compile(r"^(?:\[(\d+)\]|\['([^']*)'\]|\.(\w+))")


def check_expand(expand: bool | None, who: str) -> None:
    """Raises ValueError unless `expand` (option `expand_pytrees`) is None or a bool."""
    if expand is not None and not isinstance(expand, bool):
        raise ValueError(
            f"{who}: `expand_pytrees` must be None (fold pytrees of more "
            f"than {ROW} leaves into one node), True (draw every leaf) or "
            f"False (fold every pytree); got {expand!r}."
        )


def fold_limit(expand: bool | None) -> float:
    """How many leaves a pytree may have and still be drawn leaf by leaf."""
    return float("inf") if expand else 1 if expand is False else ROW


def pytree_of(name: str) -> str:
    """``params[0]['w']`` -> ``params``; ``result[0][3]['b']`` -> ``result[0]``."""
    match = _HEAD.match(name)
    return match.group(1) if match else name


def group_terminals(names: list[str], expand: bool | None) -> list[list[int]]:
    """Terminal indices in order, grouped: one group per folded pytree, else one
    each."""
    members: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        members.setdefault(pytree_of(name), []).append(i)
    limit, groups = fold_limit(expand), []
    for i, name in enumerate(names):
        same = members[pytree_of(name)]
        if len(same) <= limit:
            groups.append([i])
        elif same[0] == i:
            groups.append(same)
    return groups


def folds(name_lists: list[list[str]], expand: bool | None) -> bool:
    """Whether any of these terminals (inputs, outputs) is drawn folded."""
    return any(
        len(group) > 1
        for names in name_lists
        for group in group_terminals(names, expand)
    )


def describe(names: list[str]) -> str:
    """A folded pytree's shape from its leaves' paths: ``params · 25 items``,
    ``batch · dict of x, y``."""
    head = pytree_of(names[0])
    matches = [m for n in names if (m := _FIRST_KEY.match(n[len(head) :]))]
    if matches and all(m.group(1) for m in matches):
        return f"{head} · {plural(len({m.group(1) for m in matches}), 'item')}"
    keys = list(dict.fromkeys(m.group(2) or m.group(3) or m.group(1) for m in matches))
    if not keys:
        return head
    return f"{head} · dict of {', '.join(keys[:3])}{', …' * (len(keys) > 3)}"


def add_terminals(
    canvas: Any,
    g: Any,
    names: list[str],
    types: list[str],
    *,
    prefix: str,
    rank: str,
    attrs: dict,
    expand: bool | None,
    labels: list[str] | None = None,
) -> list[str]:
    """Nodes for the inputs or outputs (`prefix` "in" or "out") in subgraph `g`: one
    per leaf (labelled `labels[i]`, by default its name and type), or one per folded
    pytree (remembered in `canvas.folded`, its edges then unlabelled). Returns the
    node id drawn for each leaf."""
    if labels is None:
        labels = [_style.text_label(n, t) for n, t in zip(names, types, strict=True)]
    ids, drawn = [""] * len(names), []
    for group in group_terminals(names, expand):
        node = f"{prefix}{group[0]}"
        if len(group) == 1:
            label = labels[group[0]]
        else:
            dtypes = " ".join(sorted({types[i].split("[")[0] for i in group}))
            label = _style.text_label(
                describe([names[i] for i in group]),
                f"{plural(len(group), 'array')} · {dtypes}",
            )
            canvas.folded.add(node)
        g.node(node, label, **attrs)
        drawn.append(node)
        for i in group:
            ids[i] = node
    place_rows(g, drawn, rank)
    return ids


def place_rows(g: Any, ids: list[str], rank: str | None, per_row: int = ROW) -> None:
    """One row (`rank`) for a few terminals; more wrap into rows of `per_row`, stacked
    by invisible edges, so many terminals keep the picture slide-wide."""
    if len(ids) <= per_row:
        if rank:
            g.attr(rank=rank)
        return
    for a, b in zip(ids, ids[per_row:], strict=False):
        g.edge(a, b, style="invis")
