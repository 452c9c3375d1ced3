"""Probes: what a checker asks of an answer where the answer runs (see `in_answer`).

Each takes the answer first and returns plain data (a list of names, an array), so
when grading it runs in the answer's process and only that data comes back. `code_names`
is no probe: it reads the answer's code, which a grader's `Remote` carries, without
running it. What the answer's globals hold (an alias, a helper it calls) is known only
where the answer lives, so `names_holding` and `uses` are probes.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._own_code import is_function, is_own
from jaxtour.exercises._reach import (
    UNKNOWN,
    Seen,
    class_attribute,
    held,
    loads,
    slot,
    unwrapped,
)


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
        >>> import functools
        >>> def f(x, y):
        ...     return x * y
        >>> python_function(functools.partial(jax.jit(f), 2.0)) is f
        True
    """
    return unwrapped(fn)[0]


def names_holding(fn: Callable, *objects: Any) -> list[str]:
    """Where `fn`'s code (nested code included) finds one of `objects` (by identity, or
    under a `functools.partial`): a global, a closed-over variable, a default argument,
    an attribute read off one (`tools.g`) or an item of a list or dict one holds.

    Example:
        >>> sin = jnp.sin
        >>> names_holding(lambda x: sin(x), jnp.sin)
        ['sin']
        >>> names_holding(lambda x, f=jnp.sin: f(x), jnp.sin)
        ['f']
    """
    return sorted(set().union(*(_holding(loads(fn), obj) for obj in objects)))


def _holding(seen: list[Seen], obj: Any) -> set[str]:
    """The paths of `seen` that hold `obj`, or hold it as an item."""
    inner = python_function(obj)
    return {
        path
        for s in seen
        for path, value in _holdings(s.path, s.value)
        if value is obj or _python_function_of(value) is inner
    }


def _holdings(path: str, value: Any) -> Iterator[tuple[str, Any]]:
    """`value` and, for a list, tuple or dict (not a subclass: no code of the student's
    runs), its items (up to `HELPERS`)."""
    yield path, value
    if type(value) in (list, tuple):
        yield from ((f"{path}[{i}]", v) for i, v in enumerate(value[:HELPERS]))
    elif type(value) is dict:
        items = list(value.items())[:HELPERS]
        yield from ((f"{path}[{_key(k)}]", v) for k, v in items)


def _key(key: Any) -> str:
    return repr(key) if type(key) in (str, int) else "…"


def _python_function_of(value: Any) -> Any:
    try:
        return python_function(value)
    except Exception:  # an object of the student's whose attributes raise
        return None


HELPERS = 64  # the most functions of one answer `own_functions` reads


def own_functions(fn: Callable) -> list[tuple[str, Callable]]:
    """`fn` (named "") and the student's own functions its code reaches, transitively,
    each with the name it was first reached by: through its globals, closure and
    default arguments, an attribute (`mylib.helper`, `tools.helper`), an item of a list
    or dict, and the methods of a class of the student's it reaches (or of an instance
    of one) that their code names (`Tools().helper`, `self.helper`), and their special
    methods (`__init__`, `__call__`).

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
    return [(name, function) for name, function, _, _ in _read_answer(fn)[0]]


def _read_answer(
    fn: Any,
) -> tuple[list[tuple[str, Any, Any, list[Seen]]], list[tuple[str, type]]]:
    """`own_functions`, each with where its first argument is found when it is a
    method, and what its code loads (`_class_attributes` added); and every class
    reached (or of an instance reached). `fn` may be an instance of the student's
    class."""
    read: list[tuple[str, Any, Any, list[Seen]]] = []
    waiting = [("", fn, None)] if is_function(_python_function_of(fn)) else []
    classes = {} if waiting else {id(fn): ("", fn)}  # the student's, reached
    spaces: dict[int, tuple[str, type]] = {}  # every class reached, or of an instance
    _note_class(spaces, "", fn)
    named: set[str] = set()  # the attributes their code names
    done: set[int] = set()
    while len(read) < HELPERS:
        waiting += _methods_named(classes.values(), named)
        waiting = [w for w in waiting if id(python_function(w[1])) not in done]
        if not waiting:
            break
        name, function, owner = waiting.pop(0)
        done.add(id(python_function(function)))
        seen = loads(function, owner)
        read.append((name, function, owner, seen))
        named |= {s.name for s in seen if s.kind == "attribute"}
        for path, value in _reached(seen):
            if is_own(_python_function_of(value)):
                waiting.append((path, value, None))
            elif any(True for _ in _methods(path, value)):
                classes.setdefault(id(value), (path, value))
            _note_class(spaces, path, value)
    read = [(*r[:3], r[3] + _class_attributes(r[3], spaces.values())) for r in read]
    return read, list(spaces.values())


def _note_class(spaces: dict[int, tuple[str, type]], path: str, value: Any) -> None:
    """Add `value`, a class, or the class of `value`, an instance, to `spaces`."""
    kind = type(value)  # never `isinstance`: a `__class__` of theirs would run
    if value is UNKNOWN or issubclass(kind, types.ModuleType | types.FunctionType):
        return
    if issubclass(kind, type):
        spaces.setdefault(id(value), (path, value))
    else:
        spaces.setdefault(id(kind), (type.__getattribute__(kind, "__name__"), kind))


def _class_attributes(
    seen: list[Seen], spaces: Iterable[tuple[str, type]]
) -> list[Seen]:
    """What an attribute read off what reading cannot tell (`T().g`: what a call
    returns) holds when a class the answer reaches holds one of that name (`T.g`,
    static methods unwrapped; a property, a named tuple's field, a slot or an
    annotation without a value holds nothing read here)."""
    spaces = list(spaces)
    return [
        Seen(f"{path}.{s.name}", value, "attribute")
        for s in seen
        if s.kind == "attribute" and s.value is UNKNOWN and s.path == s.name
        for path, cls in spaces
        if (value := class_attribute(cls, s.name)) is not UNKNOWN
    ]


def _reached(seen: list[Seen]) -> Iterator[tuple[str, Any]]:
    """What `seen` holds, items included, but a method read off the student's class or
    instance (`tools.helper`): that is read as one of its methods, with its `self`."""
    held = {s.path: s.value for s in seen}
    for s in seen:
        base = held.get(s.path.rpartition(".")[0], UNKNOWN)
        if s.kind != "attribute" or not any(True for _ in _methods("", base)):
            yield from _holdings(s.path, s.value)


def _methods_named(
    classes: Iterable[tuple[str, Any]], named: set[str]
) -> list[tuple[str, Any, Any]]:
    """The methods of `classes` whose names the code names, and their special methods."""
    return [
        method
        for path, value in classes
        for method in _methods(path, value)
        if method[0].rpartition(".")[2] in named or method[0].endswith("__")
    ]


def _methods(path: str, value: Any) -> Iterator[tuple[str, Any, Any]]:
    """The student's own methods of `value`'s class (or of `value`, a class), each with
    where its first argument is found: `value`, its class, nothing (a static method)."""
    if value is UNKNOWN or issubclass(
        type(value), types.ModuleType | types.FunctionType
    ):
        return
    cls = value if issubclass(type(value), type) else type(value)
    named: set[str] = set()  # a subclass's method hides its base's
    for klass in type.__getattribute__(cls, "__mro__"):  # no metaclass of theirs runs
        for name, attr in list(type.__getattribute__(klass, "__dict__").items()):
            if name in named:
                continue
            named.add(name)
            for function, owner in _method_functions(attr, (path, value), cls):
                if is_own(_python_function_of(function)):
                    yield f"{path}.{name}".lstrip("."), function, owner


def _method_functions(
    attr: Any, owner: tuple[str, Any], cls: type
) -> list[tuple[Any, tuple[str, Any] | None]]:
    kind = type(attr)  # never `isinstance`: a `__class__` of theirs would run
    if issubclass(kind, staticmethod):
        return [(held(attr, None), None)]
    if issubclass(kind, classmethod):
        return [(held(attr, None), (type.__getattribute__(cls, "__name__"), cls))]
    if issubclass(kind, property):
        parts = (slot(property, attr, part) for part in ("fget", "fset", "fdel"))
        return [(f, owner) for f in parts if f is not None and f is not UNKNOWN]
    return [(attr, owner)]


def uses(fn: Callable, wanted: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Where `fn` and its own helpers (`own_functions`) use one of `wanted`, a name
    and the object it names (`{"grad": jax.grad}`): each use as (the name, where the
    code finds the object, or "" where it spells the name (`jax.grad`, `j.grad`),
    the helper or "" for `fn` itself), in the order `own_functions` reads them.

    A name counts where the code finds the object, or where it is spelt off what
    reading cannot tell (`make().grad`, `m.grad` with `m` an argument,
    `__import__("jax").grad`): that may be JAX's. It is no use where it is the
    student's own (`_own_names`): an attribute of that name that a class the answer
    reaches defines (a named tuple's field `r.grad`, a dataclass field, a method), one
    their code assigns (`self.grad = ...`), or a function of theirs of that name. So
    `T().grad` is read off `T` where `T` holds `jax.grad` (see `_class_attributes`).
    A global name found nowhere counts by its spelling. What `getattr(jax, "grad")` or
    `eval` reaches is not seen.

    Example:
        >>> g = jax.grad
        >>> def helper(f):
        ...     return g(f)
        >>> uses(lambda f: helper(f)(1.0), {"grad": jax.grad, "vmap": jax.vmap})
        [('grad', 'g', 'helper')]
        >>> uses(lambda m, f: m.grad(f), {"grad": jax.grad})
        [('grad', '', '')]
    """
    read, classes = _read_answer(fn)
    own = _own_names(read, classes)
    found = []
    for helper, _, _, seen in read:
        for name, obj in wanted.items():
            held = _holding(seen, obj)
            aliases = {"" if p.rpartition(".")[2] == name else p for p in held}
            if not aliases and _spelt_unfound(seen, name, own):
                aliases = {""}
            found += [(name, alias, helper) for alias in sorted(aliases)]
    return found


def _spelt_unfound(seen: list[Seen], name: str, own: set[str]) -> bool:
    """Whether `seen` loads a global `name` that is defined nowhere reading looks, or
    reads an attribute `name` that reading cannot resolve and that is not the
    student's own (`own`)."""
    return any(
        s.name == name
        and s.value is UNKNOWN
        and (s.kind == "global" or (s.kind == "attribute" and name not in own))
        for s in seen
    )


def _own_names(
    read: list[tuple[str, Any, Any, list[Seen]]], classes: list[tuple[str, type]]
) -> set[str]:
    """The names an attribute of the student's may have: those their code assigns
    (`self.grad = ...`), their own functions' and those `classes` (and their bases)
    define: in the class's namespace (a method, a property, a slot, a named tuple's
    field, a class attribute), its annotations and its dataclass fields. Read from
    the `__dict__`s, so no metaclass or descriptor of theirs runs."""
    own = {s.name for *_, seen in read for s in seen if s.kind == "stored"}
    functions = (python_function(f) for _, f, _, _ in read)
    own |= {f.__name__ for f in functions if is_function(f)}
    for _, cls in classes:
        try:
            for klass in type.__getattribute__(cls, "__mro__"):
                own |= _defined(type.__getattribute__(klass, "__dict__"))
        except Exception:  # a class of theirs whose lookup raises
            continue
    return own


def _defined(space: Any) -> set[str]:
    """The attribute names a class's namespace `space` defines, annotated ones and
    dataclass fields included (their keys only: no annotation is evaluated)."""
    names = {k for k in space if type(k) is str}
    for key in ("__annotations__", "__dataclass_fields__"):
        if type(space.get(key)) is dict:
            names |= {k for k in space[key] if type(k) is str}
    for key in ("__annotate__", "__annotate_func__"):  # 3.14: annotations made lazily
        if type(space.get(key)) is types.FunctionType:
            consts = space[key].__code__.co_consts
            names |= {c for c in consts if type(c) is str}
    return names
