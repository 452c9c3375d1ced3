"""Probes: what a checker asks of an answer where the answer runs (see `in_answer`).

Each takes the answer first and returns plain data (a list of names, an array), so
when grading it runs in the answer's process and only that data comes back. `code_names`
is no probe: it reads the answer's code, which a grader's `Remote` carries, without
running it. What the answer's globals hold (an alias, a helper it calls) is known only
where the answer lives, so `names_holding` and `uses` are probes.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types
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
    wanted = {id(o) for o in objects}
    return sorted(n for n, value in _scope(fn).items() if id(value) in wanted)


def _scope(fn: Callable) -> dict[str, Any]:
    """What the names `fn`'s code uses hold: its globals and the variables it closes
    over (a jitted function's: those of the Python function it traces)."""
    fn = python_function(fn)
    code = getattr(fn, "__code__", None)
    names = code_names(fn) | set(getattr(code, "co_freevars", ()))
    scope = {n: v for n, v in getattr(fn, "__globals__", {}).items() if n in names}
    cells = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(getattr(code, "co_freevars", ()), cells, strict=True):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # an empty cell: a variable not assigned yet
            continue
    return scope


HELPERS = 64  # the most functions of one answer `own_functions` reads


def own_functions(fn: Callable) -> list[tuple[str, Callable]]:
    """`fn` (named "") and the student's own functions its code reaches through its
    globals and closure, transitively, each with the name it was first reached by.

    A helper is a Python function (a lambda, one under `jax.jit` or `functools.partial`)
    whose code lives outside the installed packages and the kit: in the notebook, or a
    file of the student's. JAX's, NumPy's and the kit's own code is never read. Each
    function is read once (recursion ends), and at most `HELPERS` are.

    Example:
        >>> def helper(f):
        ...     return jax.grad(f)
        >>> [name for name, _ in own_functions(lambda f: jnp.sum(helper(f)(1.0)))]
        ['', 'helper']
    """
    root = python_function(fn)
    found, seen = [("", root)], {id(root)}
    for _, function in found:  # grows as it goes: breadth first
        for name, value in sorted(_scope(function).items()):
            try:
                inner = python_function(value)
            except Exception:  # an object of the student's whose attributes raise
                continue
            if len(found) < HELPERS and id(inner) not in seen and _is_own(inner):
                seen.add(id(inner))
                found.append((name, inner))
    return found


def _is_own(fn: Any) -> bool:
    """Whether `fn` is a Python function written outside the libraries and the kit."""
    code, scope = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if not isinstance(code, types.CodeType) or not isinstance(scope, dict):
        return False
    files: list[Any] = [code.co_filename]
    module = sys.modules.get(str(scope.get("__name__")))
    if getattr(module, "__dict__", None) is scope:  # code a library made (`<string>`)
        files.append(getattr(module, "__file__", None))
    return not any(_in_library(f) for f in files if isinstance(f, str))


def _in_library(file: str) -> bool:
    """Whether `file` lies in the standard library, an installed package or the kit
    (a notebook cell's pseudo-file, `<cell 3>`, lies in none)."""
    return os.path.isabs(file) and os.path.realpath(file).startswith(_library_folders())


@functools.cache
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    for module in ("jax", "jaxlib", "numpy", "jaxtour"):  # wherever they were found
        file = getattr(sys.modules.get(module), "__file__", None)
        if file:
            folders.add(os.path.dirname(file))
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders)


def uses(fn: Callable, wanted: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Where `fn` and its own helpers (`own_functions`) use one of `wanted`, a name
    and the object it names (`{"grad": jax.grad}`): each use as (the name, the
    variable holding the object or "" where the code spells the name, the helper or
    "" for `fn` itself), in the order `own_functions` reads them.

    Example:
        >>> g = jax.grad
        >>> def helper(f):
        ...     return g(f)
        >>> uses(lambda f: helper(f)(1.0), {"grad": jax.grad, "vmap": jax.vmap})
        [('grad', 'g', 'helper')]
    """
    found = []
    for helper, function in own_functions(fn):
        spelt = code_names(function)
        for name, obj in wanted.items():
            aliases = [""] if name in spelt else names_holding(function, obj)
            found += [(name, alias, helper) for alias in aliases]
    return found
