"""Probes: what a checker asks of an answer where the answer runs (see `in_answer`).

Each takes the answer first and returns plain data (a list of names, an array), so
when grading it runs in the answer's process and only that data comes back. `code_names`
is no probe: it reads the answer's code, which a grader's `Remote` carries, without
running it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


def primitives_of(
    fn: Callable, *traced: Any, before: tuple = (), after: tuple = ()
) -> list[str]:
    """The primitive of every equation of `fn(*before, *traced, *after)`'s jaxpr, those
    inside nested jaxprs too (a `jit`, a `scan` or `while` body, `cond` branches,
    `custom_jvp`/`custom_vjp` functions), depth first (only `traced` are traced).

    Example:
        >>> primitives_of(jax.jit(jnp.sin), 1.0)[-1]
        'sin'
    """
    jaxpr = jax.make_jaxpr(lambda *a: fn(*before, *a, *after))(*traced)
    return list(_primitives_in(jaxpr.jaxpr))


def _primitives_in(jaxpr: Any) -> Iterator[str]:
    for eqn in jaxpr.eqns:
        yield eqn.primitive.name
        for param in eqn.params.values():
            for inner in param if isinstance(param, tuple | list) else (param,):
                inner = getattr(inner, "jaxpr", inner)  # a ClosedJaxpr's Jaxpr
                if hasattr(inner, "eqns"):
                    yield from _primitives_in(inner)


def grad_of_sum(fn: Callable, x: jax.Array) -> Any:
    """`jax.grad(lambda v: jnp.sum(fn(v)))(x)`."""
    return jax.grad(lambda v: jnp.sum(fn(v)))(x)


def vmapped(fn: Callable, xs: jax.Array, axis_name: str) -> Any:
    """`jax.vmap(fn, axis_name=axis_name)(xs)`."""
    return jax.vmap(fn, axis_name=axis_name)(xs)


def computes_in_64_bits(answer: Any = None) -> bool:
    """Whether JAX computes in 64 bits where this runs (`jax_enable_x64` on). A probe:
    the grader asks it of the answer's process, whose cells may have switched it on
    (`answer` is not read).

    Example:
        >>> with jax.enable_x64(True):
        ...     computes_in_64_bits()
        True
    """
    return bool(jax.dtypes.canonicalize_dtype(np.float64) == np.float64)


def python_function(fn: Any) -> Any:
    """The Python function under `fn`'s wrappers: what a `jax.jit` (or any
    `functools.wraps`) wraps, what a `functools.partial` calls.

    Example:
        >>> def f(x, y):
        ...     return x * y
        >>> python_function(functools.partial(jax.jit(f), 2.0)) is f
        True
    """
    for _ in range(32):  # a cycle of wrappers ends somewhere
        inner = (
            fn.func
            if isinstance(fn, functools.partial)
            else getattr(fn, "__wrapped__", None)
        )
        if inner is None:
            break
        fn = inner
    return fn


def code_names(fn: Callable) -> set[str]:
    """The global and attribute names `fn`'s code uses, nested functions and lambdas
    included (read, never run), through `jax.jit` and `functools.partial`.

    Example:
        >>> sorted(code_names(lambda xs: jax.vmap(lambda x: jnp.sin(x))(xs)))
        ['jax', 'jnp', 'sin', 'vmap']
        >>> sorted(code_names(jax.jit(lambda x: jnp.cos(x))))
        ['cos', 'jnp']
    """
    found: set[str] = set()
    stack = [getattr(python_function(fn), "__code__", None)]
    while stack:
        code = stack.pop()
        if code is not None:
            found |= set(code.co_names)
            stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return found


def names_holding(fn: Callable, *objects: Any) -> list[str]:
    """The globals `fn`'s code names (nested code included) and the variables it closes
    over that hold one of `objects` (by identity): `bc = jnp.bincount` is found.

    Example:
        >>> sin = jnp.sin
        >>> names_holding(lambda x: sin(x), jnp.sin)
        ['sin']
    """
    fn = python_function(fn)  # a jitted function: the Python one it traces
    scope = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(getattr(code, "co_freevars", ()), cells, strict=True):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # an empty cell: a variable not assigned yet
            continue
    wanted = {id(o) for o in objects}
    names = code_names(fn) | set(getattr(code, "co_freevars", ()))
    return sorted(n for n in names if n in scope and id(scope[n]) in wanted)
