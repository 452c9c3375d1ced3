"""Which static argument a constant of a trace was computed from.

A static argument is a Python value while `f` is traced, so what `f` computes from it
with NumPy (`np.log(s)`) is computed at once, before the jaxpr exists, and enters the
jaxpr as a constant, as an array `f` closes over does (`jnp.log(s)` is staged into the
jaxpr instead, with `s` as a literal). The two kinds of constant are told apart by
tracing again with the static argument changed: one computed from it changes with it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from jaxtour._ir._args import arg_names, trace_split
from jaxtour._ir._flat import PRIMAL_CALLS, flatten_jaxpr
from jaxtour._ir._jaxpr import unwrap_jit
from jaxtour._ir._static import StaticArgs


def made_from_static(
    f: Any, args: tuple, kwargs: dict, statics: StaticArgs, value: Any
) -> tuple[str, Any] | None:
    """The name and value of the static argument of ``f(*args, **kwargs)`` that the
    trace's constant holding `value` was computed from, or None when no number among
    the static arguments is seen to change it (one that is not a number is not tried).

    Example:
        >>> f = lambda x, s: x * np.log(np.full(2, s))
        >>> nan = np.full(2, np.nan, np.float32)  # the constant, as x64 is off
        >>> with np.errstate(invalid="ignore"):  # log(-1) warns, as NumPy does
        ...     made_from_static(f, (np.ones(2), -1.0), {}, StaticArgs((1,)), nan)
        ('s', -1.0)
    """
    consts = _consts(f, args, kwargs, statics)
    if consts is None:
        return None
    held = [i for i, c in enumerate(consts) if _same(c, value)]
    for name, changed_args, changed_kwargs in _changes(f, args, kwargs, statics):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")  # the kit's probe, not the user's call
            again = _consts(f, changed_args, changed_kwargs, statics)
        if again is None or len(again) != len(consts):
            continue  # f failed, or its trace changed shape: no evidence either way
        if any(not _same(again[i], consts[i]) for i in held):
            return name, _value_of(name, f, args, kwargs)
    return None


def _consts(f: Any, args: tuple, kwargs: dict, statics: StaticArgs) -> list | None:
    """The constants of `f`'s trace as the tracing lens steps them (calls inlined)."""
    try:
        traced, _ = trace_split(
            f, args, kwargs, "made_from", statics.nums, statics.names
        )
    except Exception:  # f fails with the static changed: no evidence either way
        return None
    return flatten_jaxpr(unwrap_jit(traced.jaxpr), calls=PRIMAL_CALLS).consts


def _changes(f: Any, args: tuple, kwargs: dict, statics: StaticArgs) -> list:
    """(name, args, kwargs) with one numeric static argument moved, for each way."""
    names = arg_names(f, len(args))
    out = []
    for i in sorted(statics.positions(len(args))):
        for moved in _moves(args[i]):
            out.append((names[i], (*args[:i], moved, *args[i + 1 :]), kwargs))
    for key in (k for k in statics.names if k in kwargs):
        for moved in _moves(kwargs[key]):
            out.append((key, args, kwargs | {key: moved}))
    return out


def _moves(value: Any) -> list:
    """Other values of a number: one up and its negation (log(-5) and log(-4) are
    both NaN, log(5) is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return []
    return [v for v in (value + 1, -value) if v != value]


def _value_of(name: str, f: Any, args: tuple, kwargs: dict) -> Any:
    names = arg_names(f, len(args))
    return args[names.index(name)] if name in names else kwargs[name]


def _same(a: Any, b: Any) -> bool:
    try:
        x, y = np.asarray(a), np.asarray(b)
    except Exception:  # a key or an opaque constant: not the value looked for
        return False
    if x.shape != y.shape or x.dtype != y.dtype:
        return False
    return bool(np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
