"""A jaxpr evaluated equation by equation with JAX's own primitives, every value kept.

Calls whose value is their jaxpr's (`jit`, custom derivatives' primal, `remat`) are
inlined first (`_flat.flatten_jaxpr` with `PRIMAL_CALLS`); a `cond` runs the branch its
index picks, stepped inside too; `scan`, `while`, `shard_map` and any other primitive
run as one step (`primitive.bind`, the way JAX's own jaxpr interpreter runs one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._ir._flat import PRIMAL_CALLS, FlatEqn, flatten_jaxpr
from jaxtour._ir._jaxpr import SourceLine, is_dropvar, is_literal, source_line
from jaxtour._wait import run_interruptibly


@dataclass
class Step:
    """One equation as it ran: its inputs' and outputs' values and where it came from.

    `index` counts steps from 0 in the order they ran; `scope` names the calls and
    branches it sits in, e.g. ``("loss", "cond branch 1")``; `eqn` is JAX's own
    equation; `invars`/`outvars` its atoms (inputs of inlined calls replaced by the
    caller's atoms, so an edge joins the step that made a value to the steps using it).
    """

    index: int
    primitive: str
    invars: list
    outvars: list
    inputs: list
    outputs: list
    scope: tuple[str, ...] = ()
    line: SourceLine | None = None
    eqn: Any = None


@dataclass
class Stepped:
    """A run, step by step: the program's inputs, its steps, and its outputs' values.

    `outputs` is empty when the run stopped early (`stopped` then holds the step it
    stopped at).
    """

    invars: list
    inputs: list
    steps: list[Step]
    outvars: list
    outputs: list = field(default_factory=list)
    stopped: Step | None = None


class _Stop(Exception):
    def __init__(self, step: Step) -> None:
        super().__init__(step.primitive)
        self.step = step


def step_jaxpr(
    closed: Any, args: list, stop: Callable[[Step], bool] | None = None
) -> Stepped:
    """Run the ClosedJaxpr `closed` on flat `args`, one equation at a time.

    After each step `stop(step)` is asked; when it says True the run ends there.
    """
    flat = flatten_jaxpr(closed, calls=PRIMAL_CALLS)
    inputs = [_input(a, v) for a, v in zip(args, flat.invars, strict=True)]
    env = dict(zip(flat.invars, inputs, strict=True))
    env.update(zip(flat.constvars, flat.consts, strict=True))
    run = Stepped(flat.invars, _kept(inputs), [], flat.outvars)
    try:
        _run(flat.eqns, env, run, stop)
    except _Stop as done:
        run.stopped = done.step
        return run
    run.outputs = [_read(env, v) for v in flat.outvars]
    return run


def _input(arg: Any, var: Any) -> Any:
    """An argument as the jaxpr's input: an array of the var's dtype, or a `jax.ref`
    Ref as it is (its equations read and write it, as `jax.jit(f)` would)."""
    return arg if _is_ref(arg) else jnp.asarray(arg, dtype=var.aval.dtype)


def _is_ref(value: Any) -> bool:
    ref = getattr(jax, "ref", None)
    return ref is not None and isinstance(value, ref.Ref)


def _kept(values: list) -> list:
    """Values as a step saw them: a Ref as the array it held then (later steps may
    write to it), anything else as it is."""
    return [v[...] if _is_ref(v) else v for v in values]


def _read(env: dict, atom: Any) -> Any:
    return atom.val if is_literal(atom) else env[atom]


def _run(
    eqns: list[FlatEqn], env: dict, run: Stepped, stop: Callable[[Step], bool] | None
) -> None:
    for flat_eqn in eqns:
        invars = flat_eqn.invars
        if flat_eqn.primitive == "cond":
            invars, outvals = _cond(flat_eqn, env, run, stop)
            invals = _kept([_read(env, a) for a in invars])
        else:
            invals = [_read(env, a) for a in invars]
            kept = _kept(invals)  # before the step writes to a Ref it reads
            outvals = _bind(flat_eqn.eqn, invals, len(run.steps))
            invals = kept
        env.update(
            (v, x)
            for v, x in zip(flat_eqn.outvars, outvals, strict=True)
            if not is_dropvar(v)
        )
        step = Step(
            len(run.steps),
            flat_eqn.primitive,
            invars,
            flat_eqn.outvars,
            invals,
            _kept(outvals),
            flat_eqn.scope,
            source_line(flat_eqn.eqn),
            flat_eqn.eqn,
        )
        run.steps.append(step)
        if stop is not None and stop(step):
            raise _Stop(step)


def _bind(eqn: Any, invals: list, index: int) -> list:
    """One equation, bound by its primitive as JAX's own jaxpr interpreter binds it.

    One holding a jaxpr (`while`, `scan`, ...) may never end: Ctrl-C can stop it.
    """
    if any("jaxpr" in name for name in eqn.params):
        line = source_line(eqn)
        at = f", {line.file}:{line.line}" if line else ""
        what = f"step {index} (a `{eqn.primitive}` equation{at})"
        return run_interruptibly(lambda: _bind_now(eqn, invals), what)
    return _bind_now(eqn, invals)


def _bind_now(eqn: Any, invals: list) -> list:
    params = eqn.primitive.get_bind_params(
        eqn.params
    )  # e.g. shard_map's jaxpr to a fun
    with eqn.ctx.manager:  # the equation's context: compute type, thread resources
        out = eqn.primitive.bind(*invals, **params)
    return list(out) if eqn.primitive.multiple_results else [out]


def _cond(
    flat_eqn: FlatEqn, env: dict, run: Stepped, stop: Callable[[Step], bool] | None
) -> tuple[list, list]:
    """Step the branch the index picks; its steps come before the cond's own step.

    Returns the cond step's inputs (the index, then the branch's results, so the
    picture joins the branch to the cond) and its outputs' values.
    """
    branches = flat_eqn.params["branches"]
    index_atom, operands = flat_eqn.invars[0], flat_eqn.invars[1:]
    index = int(np.clip(np.asarray(_read(env, index_atom)), 0, len(branches) - 1))
    inner = flatten_jaxpr(
        branches[index],
        calls=PRIMAL_CALLS,
        scope=(*flat_eqn.scope, f"cond branch {index}"),
    )
    alias = dict(zip(inner.invars, operands, strict=True))  # branch inputs: outer atoms
    canon = lambda a: a if is_literal(a) else alias.get(a, a)
    env.update(zip(inner.constvars, inner.consts, strict=True))
    for eqn in inner.eqns:
        eqn.invars = [canon(a) for a in eqn.invars]
    _run(inner.eqns, env, run, stop)
    results = [canon(v) for v in inner.outvars]
    return [index_atom, *results], [_read(env, v) for v in results]
