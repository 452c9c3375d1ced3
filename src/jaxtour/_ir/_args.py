"""Getting IR from a user's function: checked arguments, tracing, the user's own errors kept."""

from __future__ import annotations

import inspect
from typing import Any

import jax
import numpy as np

from jaxtour._ir._jaxpr import type_str


def check_callable(f: Any, who: str) -> None:
    """Raise a TypeError naming `f` unless it can be traced like `jax.make_jaxpr`'s argument."""
    if not callable(f):
        raise TypeError(
            f"{who} needs a function to trace, as jax.make_jaxpr does; got {describe(f)}. "
            f"Pass the function itself, then call the result with example arguments: "
            f"{who}(loss)(params, batch)."
        )


def describe(value: Any, width: int = 40) -> str:
    """`value` as a short repr plus its type, for error messages."""
    text = repr(value)
    text = text if len(text) <= width else text[: width - 3] + "..."
    return f"{text} ({type(value).__name__})"


def function_name(f: Any) -> str:
    """The name a title should use for `f` (functools.partial and jitted functions too)."""
    for candidate in (f, getattr(f, "func", None), getattr(f, "__wrapped__", None)):
        name = getattr(candidate, "__name__", None)
        if name:
            return name
    return type(f).__name__


def arg_names(f: Any, n: int) -> list[str]:
    """Names for `f`'s first `n` positional parameters (``args[i]`` where unknown).

    Example:
        >>> arg_names(lambda x, y=1, *rest, z: x, 3)
        ['x', 'y', 'args[2]']
    """
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return [names[i] if i < len(names) else f"args[{i}]" for i in range(n)]


def _traceable(leaf: Any) -> bool:
    if isinstance(
        leaf, jax.Array | np.ndarray | np.generic | bool | int | float | complex
    ):
        return True
    return hasattr(leaf, "shape") and hasattr(leaf, "dtype")  # jax.ShapeDtypeStruct too


def static_tuple(static_argnums: int | tuple[int, ...]) -> tuple[int, ...]:
    """`static_argnums` as `_ir.trace` takes it: one position becomes a 1-tuple."""
    if isinstance(static_argnums, int):
        return (static_argnums,)
    return tuple(static_argnums)


def check_args(
    args: tuple, kwargs: dict, static_argnums: tuple[int, ...], who: str
) -> None:
    """Raise a TypeError naming the first argument leaf that JAX cannot trace."""
    dynamic = {f"args[{i}]": a for i, a in enumerate(args) if i not in static_argnums}
    dynamic |= {f"kwargs[{k!r}]": v for k, v in kwargs.items()}
    for where, value in dynamic.items():
        leaves, _ = jax.tree_util.tree_flatten_with_path(value)
        for path, leaf in leaves:
            if not _traceable(leaf):
                name = where + jax.tree_util.keystr(path)
                raise TypeError(
                    f"{who} cannot trace {name}: it is {describe(leaf)}, and JAX traces only "
                    "arrays and numbers (or lists, tuples and dicts of them). Pass an array, "
                    "or name its position in static_argnums= so it is treated as a constant."
                )


def trace(
    f: Any, args: tuple, kwargs: dict, *, who: str, static_argnums: tuple[int, ...] = ()
) -> jax.stages.Traced:
    """`jax.jit(f).trace(*args, **kwargs)` with checked inputs.

    An exception raised by `f` itself propagates unchanged, with a note saying which
    jaxtour call traced it and with what argument shapes.
    """
    check_callable(f, who)
    check_args(args, kwargs, static_argnums, who)
    try:
        return jax.jit(f, static_argnums=static_argnums).trace(*args, **kwargs)
    except Exception as err:
        shapes = ", ".join(_arg_summary(a) for a in args)
        err.add_note(f"(raised while {who} traced {function_name(f)}({shapes}))")
        raise


def _arg_summary(arg: Any) -> str:
    leaves = jax.tree.leaves(arg)
    if len(leaves) == 1 and hasattr(leaves[0], "shape"):
        return (
            type_str(jax.typeof(leaves[0]))
            if hasattr(jax, "typeof")
            else str(leaves[0].shape)
        )
    return f"<{len(leaves)} arrays>" if leaves else type(arg).__name__
