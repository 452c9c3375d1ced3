"""A jaxpr with its `jit` calls inlined, and the value of every var."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
from jax.extend import core as jex_core

from jaxtour._ir._jaxpr import is_dropvar, is_literal


@dataclass
class FlatEqn:
    """One eqn of a jaxpr whose `jit` calls are inlined.

    `invars` are canonical atoms: a literal, or the var that computes the value in the
    flattened program (a sub-jaxpr's invar is replaced by its caller's atom). `scope`
    names the `jit` calls the eqn sits in, e.g. ``("log_softmax",)``. `eqn` is JAX's
    own eqn, as it stood in its (sub-)jaxpr.
    """

    primitive: str
    params: dict
    invars: list
    outvars: list
    scope: tuple[str, ...] = ()
    eqn: Any = None
    call_ids: tuple[int, ...] = ()  # one number per call in `scope`: which call


@dataclass
class FlatJaxpr:
    """A jaxpr with its `jit` calls inlined and, when evaluated, every var's value."""

    invars: list
    constvars: list
    eqns: list[FlatEqn]
    outvars: list
    env: dict = field(default_factory=dict)
    consts: list = field(default_factory=list)
    n_calls: int = 0

    def value(self, atom: Any) -> Any:
        """The value of a var or literal (None when not evaluated)."""
        return atom.val if is_literal(atom) else self.env.get(atom)


# The primitives whose eqns `flatten_jaxpr` inlines, and the param holding their jaxpr.
JIT_CALLS = {"jit": "jaxpr", "pjit": "jaxpr"}  # `jit` since JAX 0.7, `pjit` before
# Calls whose forward value is their jaxpr's: custom derivatives (their primal), remat.
PRIMAL_CALLS = {
    **JIT_CALLS,
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "remat2": "jaxpr",
    "checkpoint": "jaxpr",
}


def flatten_jaxpr(
    closed: Any,
    args: list | None = None,
    calls: dict[str, str] = JIT_CALLS,
    scope: tuple = (),
) -> FlatJaxpr:
    """Inline the `jit` eqns of a ClosedJaxpr; with `args` (flat inputs), evaluate all.

    `cond`, `scan`, `while`, `shard_map` and custom-derivative calls stay single eqns,
    unless `calls` (primitive name to the param holding its jaxpr, e.g. `PRIMAL_CALLS`)
    names them. With a `scope` (a name for where this jaxpr sits), every eqn's outputs
    are fresh vars, so a jaxpr flattened twice defines no var twice. The values come
    from one compiled run (`evaluate_flat`), not op by op.
    """
    jaxpr = closed.jaxpr
    flat = FlatJaxpr(
        list(jaxpr.invars), list(jaxpr.constvars), [], [], consts=list(closed.consts)
    )
    alias: dict = {}
    _inline(jaxpr, alias, flat, scope, calls, ())
    flat.outvars = [_canon(alias, v) for v in jaxpr.outvars]
    flat.env.update(zip(flat.constvars, flat.consts, strict=True))
    if args is not None:
        flat.env.update(evaluate_flat(closed, flat, args))
    return flat


def _canon(alias: dict, atom: Any) -> Any:
    return atom if is_literal(atom) else alias.get(atom, atom)


def _fresh(alias: dict, var: Any) -> Any:
    """A new var standing for `var` in this inlined copy of a call's jaxpr.

    JAX reuses one traced jaxpr for identical calls (two `jnp.where`s of one type), so
    inlining it twice would define its vars twice; each copy gets vars of its own.
    """
    if is_dropvar(var):
        return var
    alias[var] = jex_core.gensym()(var.aval)
    return alias[var]


def _inline(
    jaxpr: Any,
    alias: dict,
    flat: FlatJaxpr,
    scope: tuple,
    calls: dict[str, str],
    call_ids: tuple,
) -> None:
    for eqn in jaxpr.eqns:
        invars = [_canon(alias, a) for a in eqn.invars]
        name = eqn.primitive.name
        if name not in calls:
            outvars = [_fresh(alias, v) for v in eqn.outvars] if scope else eqn.outvars
            flat.eqns.append(
                FlatEqn(
                    name, dict(eqn.params), invars, list(outvars), scope, eqn, call_ids
                )
            )
            continue
        inner = eqn.params[calls[name]]  # a ClosedJaxpr, or an open Jaxpr (remat)
        body = getattr(inner, "jaxpr", inner)
        consts = list(getattr(inner, "consts", []))
        alias.update(zip(body.invars, invars, strict=True))
        flat.constvars += [_fresh(alias, v) for v in body.constvars]
        flat.consts += consts
        label = eqn.params.get("name")
        label = label if isinstance(label, str) else name
        flat.n_calls += 1
        _inline(body, alias, flat, (*scope, label), calls, (*call_ids, flat.n_calls))
        for outer, inner_out in zip(eqn.outvars, body.outvars, strict=True):
            alias[outer] = _canon(alias, inner_out)


def evaluate_flat(closed: Any, flat: FlatJaxpr, args: list) -> dict:
    """Every var of `flat` (its inputs and each eqn's outputs) mapped to its value.

    The flattened eqns become one jaxpr whose outputs are all its vars, run once under
    `jax.jit` through the public `jax.extend.core.jaxpr_as_fun`: one compilation, so
    the numbers are JAX's own and cost about what the compiled program costs.
    """
    every = list(
        dict.fromkeys(
            v
            for v in [*flat.invars, *(v for e in flat.eqns for v in e.outvars)]
            if not is_dropvar(v)
        )
    )
    eqns = [e.eqn.replace(invars=e.invars, outvars=e.outvars) for e in flat.eqns]
    probe = closed.jaxpr.replace(
        constvars=[], invars=[*flat.constvars, *flat.invars], eqns=eqns, outvars=every
    )
    return dict(zip(every, _compiled(probe)(*flat.consts, *args), strict=True))


_CACHE: dict = {}
# A notebook or a test file draws a few dozen programs, some again after others: with 32,
# one in twelve of those the suite's autodiff and lens tests draw was dropped before it
# came back; 64 kept every one.
_CACHE_SIZE = 64


def _compiled(probe: Any) -> Any:
    """`jax.jit` of the probe jaxpr, reused for a jaxpr that prints the same.

    A drawing retraces `f`, so its jaxpr is a new object each call; its text (types,
    params, the functions params name) says what it computes. Each entry holds its
    jaxpr, so the objects named in that text stay alive and their names unique.
    """
    key = str(probe)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        run = jex_core.jaxpr_as_fun(jex_core.ClosedJaxpr(probe, []))
        _CACHE[key] = (probe, jax.jit(run))
    return _CACHE[key][1]


def depends_on(flat: FlatJaxpr, seeds: Any) -> list[bool]:
    """For each eqn of `flat`, whether it reads (transitively) any var in `seeds`.

    Seeded with the tangent inputs of a `jax.jvp` jaxpr, this splits the tangent
    lane (True) from the primal lane (False).
    """
    reached, marks = set(seeds), []
    for eqn in flat.eqns:
        hit = any(not is_literal(a) and a in reached for a in eqn.invars)
        reached.update(v for v in eqn.outvars if hit and not is_dropvar(v))
        marks.append(hit)
    return marks
