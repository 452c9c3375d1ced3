"""What a title counts: the equations inside boxes, split by lane.

A drawing keeps a `cond`, `scan`, `while`, `checkpoint` (`remat2`) or `shard_map` as
one box, but the work is inside it: a checkpoint box in the backward pass recomputes
the forward pass. A title counts every equation that is no box, each loop body once
and every cond branch, and says so. In forward mode, JAX's JVP of a loop or a cond is
one box computing primal and tangent values together; counting inside it follows
which of its values carry a tangent, through the loop's carry.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from jaxtour._ir import FlatJaxpr, is_dropvar, is_literal, scan_counts, sub_jaxprs

PRIMAL, TANGENT = "primal", "tangent"
LOOPS = ("scan", "while")


def tally(flat: FlatJaxpr, seeds: Any = ()) -> tuple[Counter, list[Counter], set]:
    """Equations of `flat` with every box opened: the whole program's `Counter`, one
    per eqn of `flat`, and the vars of `flat` that carry a tangent.

    Keys: "primal" and "tangent", the equations that read a var of `seeds` (tangent
    inputs), directly or not, or none; "loop", "cond" and "box", the boxes opened.
    With no `seeds` every equation is "primal".
    """
    hot, per_eqn = set(seeds), []
    for eqn in flat.eqns:
        reads = [_hot(a, hot) for a in eqn.invars]
        count, outs = _eqn(eqn.eqn, reads) if eqn.eqn is not None else _leaf(eqn, reads)
        hot.update(
            v for v, h in zip(eqn.outvars, outs, strict=True) if h and not is_dropvar(v)
        )
        per_eqn.append(count)
    return sum(per_eqn, Counter()), per_eqn, hot


def equations(count: Counter) -> int:
    """How many equations `count` holds, both lanes."""
    return count[PRIMAL] + count[TANGENT]


def body_equations(jaxpr: Any) -> int:
    """The equations of a box's `jaxpr`, boxes inside it opened as `tally` opens them."""
    return equations(_jaxpr(jaxpr, [False] * len(jaxpr.invars))[0])


def mixed(count: Counter) -> bool:
    """Whether a box computes in both lanes (JAX's JVP of a loop or a cond)."""
    return count["box"] > 0 and count[PRIMAL] > 0 and count[TANGENT] > 0


def caveat(count: Counter, more: str = "") -> str:
    """What a title adds when it opened boxes ("" when there were none); `more` is
    said after it."""
    if not count["box"]:
        return ""
    how = [
        *(["each loop body once"] if count["loop"] else []),
        *(["every cond branch"] if count["cond"] else []),
    ]
    said = "box contents counted" + (": " + ", ".join(how) if how else "")
    return f" ({said}{'; ' + more if more else ''})"


def _hot(atom: Any, hot: set) -> bool:
    return atom is not None and not is_literal(atom) and atom in hot


def _eqn(eqn: Any, reads: list[bool]) -> tuple[Counter, list[bool]]:
    """One eqn's equations by lane, and which of its outputs carry a tangent."""
    subs = sub_jaxprs(eqn)
    if not subs:
        return _leaf(eqn, reads)
    name = eqn.primitive.name
    kind = "loop" if name in LOOPS else "cond" if name == "cond" else "other"
    hot = {a for a, r in zip(eqn.invars, reads, strict=True) if r}
    carried: set[int] = set()  # carry positions found to hold a tangent
    while True:
        count, outs = _boxes(eqn, subs, hot, carried)
        found = {k for k in range(_n_carry(eqn)) if outs[k]}
        if found <= carried:
            return count + Counter({"box": 1, kind: 1}), outs
        carried |= found


def _leaf(eqn: Any, reads: list[bool]) -> tuple[Counter, list[bool]]:
    hit = any(reads)
    return Counter({TANGENT if hit else PRIMAL: 1}), [hit] * len(eqn.outvars)


def _boxes(
    eqn: Any, subs: list, hot: set, carried: set[int]
) -> tuple[Counter, list[bool]]:
    count: Counter = Counter()
    outs = [False] * len(eqn.outvars)
    for sub in subs:
        start = _carry_start(eqn, sub.label)
        reads = [
            _hot(a, hot) or (start is not None and i - start in carried)
            for i, a in enumerate(sub.inputs)
        ]
        inner, inner_outs = _jaxpr(sub.jaxpr, reads)
        count += inner
        if any(o is not None for o in sub.outputs):  # outputs are the eqn's, in order
            outs = [a or b for a, b in zip(outs, inner_outs, strict=True)]
    return count, outs


def _jaxpr(jaxpr: Any, reads: list[bool]) -> tuple[Counter, list[bool]]:
    hot = {v for v, r in zip(jaxpr.invars, reads, strict=True) if r}
    count: Counter = Counter()
    for eqn in jaxpr.eqns:
        inner, outs = _eqn(eqn, [_hot(a, hot) for a in eqn.invars])
        count += inner
        hot.update(
            v for v, h in zip(eqn.outvars, outs, strict=True) if h and not is_dropvar(v)
        )
    return count, [_hot(v, hot) for v in jaxpr.outvars]


def _carry_start(eqn: Any, label: str) -> int | None:
    """Where the carry starts among a loop jaxpr's inputs (None: no carry)."""
    name = eqn.primitive.name
    if name == "scan":
        return scan_counts(eqn)[0]
    if name == "while":
        key = "cond_nconsts" if label == "cond_jaxpr" else "body_nconsts"
        return int(eqn.params[key])
    return None


def _n_carry(eqn: Any) -> int:
    name = eqn.primitive.name
    if name == "scan":
        return scan_counts(eqn)[1]
    return len(eqn.outvars) if name == "while" else 0
