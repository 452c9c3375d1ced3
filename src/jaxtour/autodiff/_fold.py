"""Folding an `ADGraph` so a big program's picture fits a slide.

The model keeps every leaf and every eqn (its values are what tests read); the picture
folds: a pytree argument, result or gradient of many leaves becomes one node naming
the pytree and its leaf count, `jit` calls deeper than `max_depth` become one node
each, and past `max_eqns` drawn equations every source line is one node (its
residuals with it). A picture still too wide folds a step further (`_dot.to_diagram`).
The title says what was folded.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

from jaxtour._io_nodes import FOLDED, ROW, fold_limit
from jaxtour._number_words import plural
from jaxtour.autodiff._adgraph import ADEdge, ADGraph, ADNode

LINE_ROW = 3  # folded by source line: a pytree of more leaves is one node


def fold(
    graph: ADGraph,
    *,
    expand_pytrees: bool | None,
    max_depth: int | None,
    max_eqns: int,
    further: int = 0,
    why: str = "",
) -> tuple[ADGraph, dict[str, str]]:
    """The folded picture's model, and each node's id -> the id drawn for it.

    Equations fold in steps: `jit` calls below `max_depth` closed, every `jit` call
    closed, one node per source line; the first step drawing at most `max_eqns`
    equations is taken, then `further` steps more (`why` says why in the title).
    """
    keys = _pytree_keys(graph, expand_pytrees)
    how = [FOLDED] if keys else []
    ops = graph.select("op")
    steps = _op_keys(max_depth)
    last = len(steps) - 1
    step = next((i for i, k in enumerate(steps) if _count(ops, k) <= max_eqns), last)
    op_key = steps[min(step + further, len(steps) - 1)]
    reason = f", {why}" if why and op_key is not steps[step] else ""
    if op_key is _line_key:
        how.append(f"one node per source line, {_count(ops, op_key)} nodes{reason}")
        if expand_pytrees is None:  # a big program: its pytrees as one node each too,
            keys = _pytree_keys(graph, None, LINE_ROW)  # or their rows outgrow a slide
            how = ([FOLDED] if keys else []) + [h for h in how if h != FOLDED]
    elif op_key in steps[2:4]:
        how.append(f"your code's calls as one node each{reason}")
    elif _count(ops, op_key) < len(ops):
        how.append(f"nested jit calls as one node each{reason}")
    keys.update({n.id: k for n in ops if (k := op_key(n)) is not None})
    if op_key is _line_key or len(graph.select("residual")) > ROW:
        saved = _residual_keys(graph, keys)
        keys.update(saved)
        if op_key is not _line_key and len(set(saved.values())) < len(saved):
            how.append("residuals by what saves them")
    folded, rep = _merge(graph, keys)
    if how:
        folded.title += f" (collapsed: {'; '.join(how)})"
    return folded, rep


STEPS = 5  # the steps `_op_keys` folds by


def _op_keys(max_depth: int | None) -> list[Callable[[ADNode], tuple | None]]:
    """What an equation folds into, one step after another: its `jit` call below
    `max_depth`, its outermost `jit` call, the user's call two levels down
    (`Block.attn`), the outermost (`Block`), its source line."""
    return [
        lambda n: _scope_key(n, max_depth),
        lambda n: _scope_key(n, 0),
        lambda n: _call_key(n, 2),
        lambda n: _call_key(n, 1),
        _line_key,
    ]


def _pytree_keys(
    graph: ADGraph, expand: bool | None, limit: float | None = None
) -> dict[str, tuple]:
    if expand:
        return {}
    members = collections.defaultdict(list)
    for node in graph.nodes.values():
        if node.group and node.kind != "op":
            members[(node.kind, node.lane, node.group)].append(node.id)
    limit = fold_limit(expand) if limit is None else limit
    return {
        i: ("tree", *key)
        for key, ids in members.items()
        if len(ids) > limit
        for i in ids
    }


def _scope_key(node: ADNode, max_depth: int | None) -> tuple | None:
    if max_depth is None or len(node.scope) <= max_depth:
        return None
    return ("call", node.lane, node.scope[: max_depth + 1])


def _call_key(node: ADNode, depth: int) -> tuple | None:
    return ("code", node.lane, node.call[:depth]) if node.call else None


def _line_key(node: ADNode) -> tuple:
    return ("line", node.lane, node.source or node.primitive)


def _count(ops: list[ADNode], key: Callable) -> int:
    return len({key(n) or n.id for n in ops})


def _residual_keys(graph: ADGraph, keys: dict) -> dict[str, tuple]:
    """Residuals folded by what saves them (an equation, its source line, an input);
    constants, saved by nothing, fold together."""
    made = {
        e.dst: e.src
        for e in graph.edges
        if e.kind == "residual" and graph.nodes[e.dst].kind == "residual"
    }
    return {
        n.id: (
            "residuals",
            keys.get(made[n.id], made[n.id]) if n.id in made else "constants",
        )
        for n in graph.select("residual")
    }


def _merge(graph: ADGraph, keys: dict) -> tuple[ADGraph, dict[str, str]]:
    groups: dict = collections.defaultdict(list)
    for node in graph.nodes.values():
        groups[keys.get(node.id, node.id)].append(node)
    folded, rep = ADGraph(graph.title, note=graph.note, own_calls=graph.own_calls), {}
    for key, members in groups.items():
        head = members[0]
        node = head if len(members) == 1 else _folded_node(key, members)
        folded.add(node)
        rep.update({m.id: node.id for m in members})
    seen = set()
    for edge in graph.edges:
        src, dst = rep[edge.src], rep[edge.dst]
        if src != dst and (src, dst, edge.kind) not in seen:
            seen.add((src, dst, edge.kind))
            folded.edges.append(ADEdge(src, dst, edge.kind))
    return folded, rep


def _folded_node(key: tuple, members: list[ADNode]) -> ADNode:
    head, n = members[0], len(members)
    if key[0] == "tree":
        return ADNode(
            head.id, head.kind, head.lane, head.group, [plural(n, "array")], [None]
        )
    if key[0] == "residuals":
        what = " (constants)" if key[1] == "constants" else ""
        return ADNode(head.id, "residual", head.lane, plural(n, "residual") + what)
    counts = collections.Counter(m.primitive for m in members)
    top = ", ".join(f"{p}×{c}" for p, c in counts.most_common(3))
    name = (
        key[2][-1][1]
        if key[0] == "call"
        else key[2][-1]
        if key[0] == "code"
        else head.source or head.primitive
    )
    return ADNode(
        head.id,
        "op",
        head.lane,
        name,
        [f"{plural(n, 'equation')}: {top}"],
        [None],
        counts.most_common(1)[0][0],
    )
