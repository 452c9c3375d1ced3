"""Matching two programs' nodes: what is the same, what changed, what was added or removed.

Three passes, each over what the one before left: nodes equal with everything they
read (the same fingerprint: a Merkle hash over the dataflow graph, so renamed
variables and reordered independent lines still match); nodes equal in themselves
(`local`) whose inputs changed upstream, which are no difference of their own; nodes
of the same primitive or opcode whose fields differ, paired in program order: these
are *changed*, each with a field-by-field account. The last two pair only within the
same looping body (a scan's, a while's): a loop's body is not the unrolled loop.
What is left was added or removed.
A pair whose node reads a different (matched) value than its partner is changed too:
the edit rewired it.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from jaxtour._ir._nodes import Node


@dataclass
class Change:
    """A node of the first program paired with one of the second that differs."""

    before: int
    after: int
    what: list[str]


@dataclass
class Matching:
    """How the nodes of two programs pair up (indices into `before` and `after`)."""

    before: list[Node]
    after: list[Node]
    pairs: dict[int, int] = field(default_factory=dict)
    changed: list[Change] = field(default_factory=list)

    @property
    def removed(self) -> list[int]:
        """Nodes of the first program with no partner, in program order."""
        return [i for i in range(len(self.before)) if i not in self.pairs]

    @property
    def added(self) -> list[int]:
        """Nodes of the second program with no partner, in program order."""
        taken = set(self.pairs.values())
        return [j for j in range(len(self.after)) if j not in taken]


def match_nodes(before: list[Node], after: list[Node]) -> Matching:
    """Pair the nodes of two programs; see the module's docstring for how."""
    matching = Matching(before, after)
    _pair(matching, lambda n: n.fp)
    local = _pair(matching, lambda n: (n.region, n.local))
    loose = _pair(matching, lambda n: (n.region, n.label))
    for i in local | loose:
        j = matching.pairs[i]
        what = _fields(before[i], after[j]) if i in loose else []
        what += _rewired(matching, i, j)
        if what:
            matching.changed.append(Change(i, j, what))
    matching.changed.sort(key=lambda c: c.before)
    return matching


def _pair(matching: Matching, key: Callable[[Node], Any]) -> set[int]:
    """Pair the unpaired nodes with equal keys, in program order; return the new ones."""
    taken = set(matching.pairs.values())
    waiting: dict[Any, collections.deque] = collections.defaultdict(collections.deque)
    for j, node in enumerate(matching.after):
        if j not in taken:
            waiting[key(node)].append(j)
    new = set()
    for i, node in enumerate(matching.before):
        if i not in matching.pairs and waiting[key(node)]:
            matching.pairs[i] = waiting[key(node)].popleft()
            new.add(i)
    return new


def _fields(before: Node, after: Node) -> list[str]:
    """`out: f32[4] → bf16[4]` for every field that differs."""
    keys = dict.fromkeys([*before.fields, *after.fields])
    return [
        f"{key}: {before.fields.get(key, '—')} → {after.fields.get(key, '—')}"
        for key in keys
        if before.fields.get(key) != after.fields.get(key)
    ]


def _rewired(matching: Matching, i: int, j: int) -> list[str]:
    """Inputs that now come from another value, where both values have partners."""
    found = []
    pairs, b, a = matching.pairs, matching.before[i], matching.after[j]
    taken = set(pairs.values())
    for k, (rb, ra) in enumerate(zip(b.operands, a.operands, strict=False)):
        kept = _partnered(set(pairs), rb) and _partnered(taken, ra)
        if kept and not _same_origin(pairs, rb, ra):
            found.append(f"input {k} now comes from a different value")
    if len(b.operands) != len(a.operands):
        found.append(f"inputs: {len(b.operands)} → {len(a.operands)}")
    return found


def _partnered(paired: set[int], ref: tuple) -> bool:
    """Whether an origin is no node, or a node that has a partner."""
    return (ref[0] != "node" and len(ref) != 4) or ref[1] in paired


def _same_origin(pairs: dict[int, int], rb: tuple, ra: tuple) -> bool:
    if rb[0] != ra[0] or len(rb) != len(ra):
        return False
    if rb[0] == "tuple":
        return len(rb[1]) == len(ra[1]) and all(
            _same_origin(pairs, x, y) for x, y in zip(rb[1], ra[1], strict=False)
        )
    if rb[0] == "node" or len(rb) == 4:
        return pairs.get(rb[1]) == ra[1] and rb[2:] == ra[2:]
    return rb == ra
