"""How many times a loop runs: scan's `length`, a counted `while`, XLA's trip count.

XLA's `cost_analysis()` counts a while body once whatever its trip count; a jaxpr's
`while` carries no count at all. A whole-call figure must count every iteration, so
the cost rules ask here: a scan runs `length` times; a jaxpr `while` whose condition is
`i < N` on a counter that starts at a literal and steps by a literal (what
`fori_loop` with traced bounds and a hand-written counted loop give) runs
`ceil((N - start) / step)` times; a compiled `while` runs XLA's `known_trip_count`.
Any other loop depends on the data: its figures are one iteration's, and say so.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from jaxtour._ir._hlo import HloModule
from jaxtour._ir._jaxpr import is_literal, walk

DATA_DEPENDENT = "data-dependent: figures count one iteration"


class Loop(NamedTuple):
    """One loop of a program and how often its body runs.

    `trips` is None when the count depends on the data (or an argument): the figures
    then hold one iteration of it, and `how` says so.

    Example:
        >>> str(Loop("scan", 8, "scan's length"))
        "scan runs 8 times (scan's length)"
        >>> str(Loop("while.0", None, DATA_DEPENDENT))
        'while.0: data-dependent: figures count one iteration'
    """

    name: str  # "scan", "while" (jaxpr) or the compiled op's name ("while.1")
    trips: int | None
    how: str  # where the count comes from

    def __str__(self) -> str:
        if self.trips is None:
            return f"{self.name}: {self.how}"
        return f"{self.name} runs {self.trips} times ({self.how})"


def eqn_trips(eqn: Any) -> Loop | None:
    """The loop an equation runs (None for an equation that is not a loop)."""
    name = eqn.primitive.name
    if name == "scan":
        return Loop("scan", int(eqn.params["length"]), "scan's length")
    if name != "while":
        return None
    trips = _counted_while(eqn)
    if trips is None:
        return Loop("while", None, DATA_DEPENDENT)
    return Loop("while", trips, "counter and bound are constants in the jaxpr")


def jaxpr_loops(jaxpr: Any) -> list[Loop]:
    """Every scan and while of `jaxpr`, nested ones included, in program order."""
    return [loop for _, eqn in walk(jaxpr) if (loop := eqn_trips(eqn))]


def _value(var: Any) -> float | None:
    return (
        float(var.val)
        if is_literal(var) and not getattr(var.val, "shape", ())
        else None
    )


def _counted_while(eqn: Any) -> int | None:
    """`while i < N: i += step` with literal start, step and bound, else None."""
    cond, body = eqn.params["cond_jaxpr"].jaxpr, eqn.params["body_jaxpr"].jaxpr
    cn, bn = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
    if len(cond.eqns) != 1 or cond.eqns[0].primitive.name != "lt":
        return None
    counter, bound = cond.eqns[0].invars
    carry = cond.invars[cn:]
    at = next((i for i, v in enumerate(carry) if v is counter), None)
    if at is None:
        return None
    limit = _value(bound)
    if limit is None and (j := _index(cond.invars[:cn], bound)) is not None:
        limit = _value(eqn.invars[j])  # a constant of the condition
    start, step = _value(eqn.invars[cn + bn + at]), _step(body, bn + at, at)
    if limit is None or start is None or not step or step <= 0:
        return None
    return max(0, math.ceil((limit - start) / step))


def _index(vars_: list, var: Any) -> int | None:
    return next((i for i, v in enumerate(vars_) if v is var), None)


def _step(body: Any, invar: int, outvar: int) -> float | None:
    """The literal the body adds to carry `invar` to make output `outvar`."""
    counter, result = body.invars[invar], body.outvars[outvar]
    for eqn in body.eqns:
        # (an effect's equation, a callback's say, may have no outputs)
        if eqn.outvars and eqn.outvars[0] is result and eqn.primitive.name == "add":
            a, b = eqn.invars
            return _value(b) if a is counter else _value(a) if b is counter else None
    return None


def hlo_trips(module: HloModule, jaxpr: Any = None) -> dict[str, Loop]:
    """Each compiled while op's loop, by op name.

    XLA's `known_trip_count` first; a while without one takes the jaxpr's count when
    the jaxpr's loops and the compiled whiles pair off one to one, in order.
    """
    whiles = [op for _, op in module.walk() if op.opcode == "while"]
    known = [loop.trips for loop in jaxpr_loops(jaxpr)] if jaxpr is not None else []
    paired = len(known) == len(whiles)
    loops = {}
    for i, op in enumerate(whiles):
        if op.trip_count is not None:
            loops[op.name] = Loop(op.name, op.trip_count, "XLA's known_trip_count")
        elif paired and known[i] is not None:
            loops[op.name] = Loop(op.name, known[i], "counted in the jaxpr")
        else:
            loops[op.name] = Loop(op.name, None, DATA_DEPENDENT)
    return loops
