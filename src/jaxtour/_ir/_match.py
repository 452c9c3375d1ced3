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

from jaxtour._ir._nodes import RETURN, Node


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

    # A body's `RETURN` with no partner is not listed: its loop or cond is.

    @property
    def removed(self) -> list[int]:
        """Nodes of the first program with no partner, in program order."""
        return [
            i
            for i, node in enumerate(self.before)
            if i not in self.pairs and node.label != RETURN
        ]

    @property
    def added(self) -> list[int]:
        """Nodes of the second program with no partner, in program order."""
        taken = set(self.pairs.values())
        return [
            j
            for j, node in enumerate(self.after)
            if j not in taken and node.label != RETURN
        ]


def match_nodes(before: list[Node], after: list[Node]) -> Matching:
    """Pair the nodes of two programs; see the module's docstring for how."""
    matching = Matching(before, after)
    keys: list[Callable[[Node], Any]] = [
        lambda n: n.fp,
        lambda n: (n.region, n.local),
        lambda n: (n.region, n.label),
    ]
    # nodes that read nothing (constants, iotas) all look alike: they pair last, each
    # with the one its readers' partners read
    found = [_pair(matching, key, leaves=False) for key in keys]
    for k, key in enumerate(keys):
        found[k] |= _pair(matching, key, leaves=True)
    local, loose = found[1], found[2]
    paired, taken = set(matching.pairs), set(matching.pairs.values())
    for i in local | loose:
        j = matching.pairs[i]
        what = _fields(before[i], after[j]) if i in loose else []
        what += _rewired(matching, i, j, (paired, taken))
        if what:
            matching.changed.append(Change(i, j, what))
    matching.changed.sort(key=lambda c: c.before)
    return matching


def _pair(matching: Matching, key: Callable[[Node], Any], leaves: bool) -> set[int]:
    """Pair the unpaired nodes with equal keys, in program order; return the new ones.

    Only nodes that read nothing (`leaves`) or only nodes that read something. Of
    several candidates, the one reading the partners of this node's inputs wins
    (inputs come earlier, so they are paired already), for a leaf the one its
    readers' partners read; then the first in order.
    """
    pairs, after = matching.pairs, matching.after
    free = {j for j in range(len(after)) if (not after[j].operands) == leaves}
    free -= set(pairs.values())
    read_by = _readers(matching.before) if leaves else {}
    waiting: dict[Any, collections.deque] = collections.defaultdict(collections.deque)
    readers: dict[tuple, list[int]] = collections.defaultdict(list)
    for j in sorted(free):
        waiting[key(after[j])].append(j)
        for position, ref in enumerate(after[j].operands):
            readers[(position, *ref)].append(j)
    new = set()
    for i, node in enumerate(matching.before):
        if i in pairs or (not node.operands) != leaves:
            continue
        wanted = key(node)

        def fits(j: int, w: Any = wanted) -> bool:
            return j in free and key(after[j]) == w

        partner = _read_by_partners(matching, read_by.get(i, []), fits)
        if partner is None:
            partner = _best(node, pairs, readers, fits)
        queue = waiting[wanted]
        while partner is None and queue:
            first = queue.popleft()
            partner = first if first in free else None
        if partner is not None:
            pairs[i] = partner
            free.discard(partner)
            new.add(i)
    return new


def _readers(nodes: list[Node]) -> dict[int, list[tuple[int, int]]]:
    """Node → (reader, operand position) for every node another one reads."""
    found: dict[int, list[tuple[int, int]]] = collections.defaultdict(list)
    for r, node in enumerate(nodes):
        for position, ref in enumerate(node.operands):
            if ref[0] == "node":
                found[ref[1]].append((r, position))
    return found


def _read_by_partners(
    matching: Matching,
    readers: list[tuple[int, int]],
    fits: Callable[[int], bool],
) -> int | None:
    """The fitting node that the partner of one of this node's readers reads there."""
    for r, position in readers:
        if r in matching.pairs:
            operands = matching.after[matching.pairs[r]].operands
            ref = operands[position] if position < len(operands) else ("none",)
            if ref[0] == "node" and fits(ref[1]):
                return int(ref[1])
    return None


# An input read by more nodes than this says little about which of them is the partner.
_MAX_READERS = 256


def _best(
    node: Node,
    pairs: dict[int, int],
    readers: dict[tuple, list[int]],
    fits: Callable[[int], bool],
) -> int | None:
    """The free candidate reading the most of `node`'s inputs' partners, if any."""
    scores: collections.Counter = collections.Counter()
    for position, ref in enumerate(node.operands):
        mapped = _mapped(pairs, ref)
        found = readers.get((position, *mapped), []) if mapped else []
        if len(found) <= _MAX_READERS:
            scores.update(j for j in found if fits(j))
    if not scores:
        return None
    return max(scores, key=lambda j: (scores[j], -j))


def _mapped(pairs: dict[int, int], ref: tuple) -> tuple | None:
    """Where the partner program reads the value `ref` names, when that is known."""
    if ref[0] == "node" or (ref[0] == "arg" and len(ref) == 4):
        return (ref[0], pairs[ref[1]], *ref[2:]) if ref[1] in pairs else None
    return ref if ref[0] == "arg" else None


def _fields(before: Node, after: Node) -> list[str]:
    """`out: f32[4] → bf16[4]` for every field that differs."""
    keys = dict.fromkeys([*before.fields, *after.fields])
    return [
        f"{key}: {before.fields.get(key, '—')} → {after.fields.get(key, '—')}"
        for key in keys
        if before.fields.get(key) != after.fields.get(key)
    ]


def _rewired(
    matching: Matching, i: int, j: int, partnered: tuple[set[int], set[int]]
) -> list[str]:
    """Inputs that now come from another value, where both values have partners."""
    found = []
    pairs, b, a = matching.pairs, matching.before[i], matching.after[j]
    put = "output" if b.label == RETURN else "input"
    for k, (rb, ra) in enumerate(zip(b.operands, a.operands, strict=False)):
        kept = _partnered(partnered[0], rb) and _partnered(partnered[1], ra)
        if kept and not _same_origin(pairs, rb, ra):
            found.append(f"{put} {k} now comes from a different value")
    if len(b.operands) != len(a.operands):
        found.append(f"{put}s: {len(b.operands)} → {len(a.operands)}")
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
