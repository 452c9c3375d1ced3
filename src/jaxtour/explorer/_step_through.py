"""The explorer's "step through" view: `step_through`'s picture, one step at a time.

The run is made once per composed function and its example arguments (`step_through`
evaluates every equation with JAX's primitives) and kept, so moving the step slider only
draws again: the picture shows the steps up to the chosen one with their values, frames
that step in red, and dashes the steps still to come.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour.explorer._request import Request, Shown
from jaxtour.explorer._snippet import named
from jaxtour.tracing import Steps, step_through

KEEP = 8  # runs kept: one per composed function recently stepped through
# (id(fn), id(args)) -> (fn, args: kept alive so their ids stay theirs; the run)
_RUNS: dict[tuple[int, int], tuple[Callable, tuple, Steps]] = {}


def run_of(fn: Callable, args: tuple) -> Steps:
    """`step_through(fn)(*args)`, made once per function object and argument tuple, then
    reused: one function explored at other arguments is another run (its values)."""
    key = (id(fn), id(args))
    kept = _RUNS.get(key)
    if kept is None or kept[0] is not fn or kept[1] is not args:
        if len(_RUNS) >= KEEP:
            _RUNS.pop(next(iter(_RUNS)))
        kept = _RUNS[key] = (fn, args, step_through(fn)(*args))
    return kept[2]


def last_step(request: Request) -> int:
    """The index of the composed function's last step (what the slider's end is)."""
    fn, args, _ = request.composed
    return max(len(run_of(fn, args)) - 1, 0)


def step_view(request: Request) -> Shown:
    """The run drawn as it stood after the slider's step (`-1`: the whole run)."""
    fn, args, _ = request.composed
    run = run_of(fn, args)
    options = request.options
    steps = Steps(run.run, run.name, run.arg_names, run.out_tree, options.rankdir)
    whole = options.step < 0 or not len(
        steps
    )  # a run of no steps has no step to stop at
    upto: Any = None if whole else min(options.step, len(steps) - 1)
    setup, called, call, _ = named(request, lens=True)
    code = f"{setup}step_through({called}, rankdir={options.rankdir!r})({call})"
    if upto is None:
        return Shown(steps.diagram(), code)
    return Shown(steps.diagram(upto=upto), f"{code}.diagram(upto={upto})")
