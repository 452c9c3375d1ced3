"""What one function's code reaches by name, read from its bytecode and never run.

`loads(fn)` lists each name the code loads with what it holds there: a global, a
variable it closes over, a default argument (`g=jax.grad`), an argument a
`functools.partial` binds, a module it imports, and the attributes read off those
(`tools.g`, `mylib.helper`, `self.helper`), looked up statically: no property,
descriptor, `__getattr__`, `__getattribute__` or metaclass of the student's runs, and
no `isinstance` (which asks their `__class__`). What only running the code could
tell (an attribute of what a call returns, `Tools().g`) is listed as `UNKNOWN`. A
name read with `getattr` and a string, or through a subscript (`ops["g"]`), is no
name the code loads.
"""

from __future__ import annotations

import builtins
import collections
import dis
import functools
import inspect
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

UNKNOWN: Any = type("Unknown", (), {"__repr__": lambda self: "UNKNOWN"})()
_LOAD_GLOBAL = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"}
_LOAD_DEREF = {"LOAD_DEREF", "LOAD_CLASSDEREF", "LOAD_FROM_DICT_OR_DEREF"}
_LOAD_ATTR = {"LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"}
_STORE = {"STORE_FAST", "STORE_DEREF"}


@dataclass(frozen=True)
class Seen:
    """One name the code loads: `path` as written (`tools.g`; the bare name when
    what it is read off is unknown), the object it holds (`UNKNOWN` where reading
    cannot tell), and `kind`: "global" (a global or an imported name), "attribute",
    "variable" (an argument, a local or a closed-over variable) or "stored" (an
    attribute the code assigns, `self.g = ...`).

    Example:
        >>> Seen("tools.g", UNKNOWN, "attribute").name
        'g'
    """

    path: str
    value: Any
    kind: str

    @property
    def name(self) -> str:
        """The last name of the path: the one the code spells."""
        return self.path.rpartition(".")[2]


def unwrapped(fn: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    """The Python function under `fn`'s wrappers (a `jax.jit`, any `functools.wraps`,
    a `functools.partial`), with the positional and keyword arguments its partials bind.

    Example:
        >>> def f(x, y, z=0):
        ...     return x
        >>> unwrapped(functools.partial(functools.partial(f, 1), 2, z=3))[1:]
        ([1, 2], {'z': 3})
    """
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for _ in range(32):  # a cycle of wrappers ends somewhere
        if issubclass(
            type(fn), functools.partial
        ):  # never `isinstance`: see `attribute`
            args = [*slot(functools.partial, fn, "args"), *args]
            kwargs = {**slot(functools.partial, fn, "keywords"), **kwargs}
            inner = slot(functools.partial, fn, "func")
        else:
            inner = attribute(fn, "__wrapped__")
        if inner is None or inner is UNKNOWN:
            break
        fn = inner
    return fn, args, kwargs


def loads(fn: Any, owner: tuple[str, Any] | None = None) -> list[Seen]:
    """The names `fn`'s code (nested functions and lambdas included) loads, in order,
    each with what it holds; `owner`, for a method, is where its first argument
    (`self`, `cls`) was found and what it holds: `self.helper` reads as `tools.helper`.

    Example:
        >>> import jax
        >>> g = jax.grad
        >>> [(s.path, s.value is jax.grad) for s in loads(lambda f: g(f))]
        [('g', True)]
    """
    function, args, kwargs = unwrapped(fn)
    if type(function) is not types.FunctionType:  # no code to read; none of theirs runs
        return []
    code, scope = function.__code__, function.__globals__
    known = {**_closure(function, code), **_arguments(function, code, args, kwargs)}
    if owner is None or not code.co_argcount:
        return list(_read(code, scope, known))
    first = code.co_varnames[0]
    known[first] = owner[1]
    return [_renamed(s, first, owner[0]) for s in _read(code, scope, known)]


def _renamed(seen: Seen, name: str, path: str) -> Seen:
    """`seen` with the variable `name` at the head of its path read as `path`."""
    head, dot, rest = seen.path.partition(".")
    if head != name:
        return seen
    return Seen(f"{path}{dot}{rest}".lstrip("."), seen.value, seen.kind)


def _closure(function: types.FunctionType, code: types.CodeType) -> dict[str, Any]:
    known = {}
    cells = function.__closure__ or ()
    for name, cell in zip(code.co_freevars, cells, strict=False):
        try:
            known[name] = cell.cell_contents
        except ValueError:  # an empty cell: a variable not assigned yet
            continue
    return known


def _arguments(
    function: types.FunctionType,
    code: types.CodeType,
    args: list[Any],
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    """What the arguments hold when the caller leaves them out: the defaults, and what
    a partial binds."""
    names = code.co_varnames[: code.co_argcount]
    defaults = function.__defaults__ or ()
    known = dict(zip(reversed(names), reversed(defaults), strict=False))  # the last
    known.update(function.__kwdefaults__ or {})
    known.update(zip(names, args, strict=False))
    return {**known, **kwargs}


def _read(
    code: types.CodeType, scope: dict[str, Any], known: dict[str, Any]
) -> Iterator[Seen]:
    """Walk `code`'s instructions, following each chain of loads: a name, then the
    attributes read off it. `known` (variables to values) grows with what is stored."""
    known = dict(known)
    top: Seen | None = None  # the load on top of the stack, when it was one
    last_const: Any = None
    module: Any = UNKNOWN  # what the last import gave
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        seen = _load(op, arg, top, module, scope, known, last_const)
        if op == "IMPORT_NAME":
            module = seen.value if seen else UNKNOWN
        elif op in _STORE:
            _store(known, arg, top)
        elif op == "STORE_FAST_LOAD_FAST":  # 3.13: one store, one load
            _store(known, arg[0], top)
            seen = _load("LOAD_FAST", arg[1], None, module, scope, known, None)
        elif op == "STORE_ATTR":
            seen = Seen(arg, UNKNOWN, "stored")
        last_const = arg if op == "LOAD_CONST" else None
        top = seen
        if seen is not None and (seen.kind != "variable" or seen.value is not UNKNOWN):
            yield seen
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _read(const, scope, known)


def _load(
    op: str,
    arg: Any,
    top: Seen | None,
    module: Any,
    scope: dict[str, Any],
    known: dict[str, Any],
    fromlist: Any,
) -> Seen | None:
    """What the load `op arg` pushes, or None for an instruction that is no load."""
    if op in _LOAD_GLOBAL:
        found = scope.get(arg, vars(builtins).get(arg, UNKNOWN))
        return Seen(arg, found, "global")
    if op in _LOAD_DEREF or op.startswith("LOAD_FAST"):
        name = arg[-1] if isinstance(arg, tuple) else arg  # 3.13 loads two: the top
        return Seen(name, known.get(name, UNKNOWN), "variable")
    if op in _LOAD_ATTR:
        if top is None or top.value is UNKNOWN:
            return Seen(arg, UNKNOWN, "attribute")
        return Seen(f"{top.path}.{arg}", attribute(top.value, arg), "attribute")
    if op == "IMPORT_NAME":
        name = arg if fromlist else arg.partition(".")[0]  # `import a.b` gives `a`
        return Seen(name, sys.modules.get(name, UNKNOWN), "global")
    if op == "IMPORT_FROM":
        path = module.__name__ if type(module) is types.ModuleType else ""
        return Seen(f"{path}.{arg}".lstrip("."), attribute(module, arg), "global")
    return None


def _store(known: dict[str, Any], name: str, top: Seen | None) -> None:
    """Record what the variable `name` holds; one stored twice, differently, is unknown."""
    value = UNKNOWN if top is None else top.value
    if name in known and known[name] is not value:
        value = UNKNOWN
    known[name] = value


def attribute(obj: Any, name: str) -> Any:
    """`obj.name` looked up without running anything (no property, no `__getattr__`,
    no `__getattribute__` or descriptor of the student's): a static or class method's
    function, a slot's or a named tuple field's value; `UNKNOWN` where only running
    could tell.

    Example:
        >>> import jax
        >>> attribute(jax, "grad") is jax.grad
        True
        >>> class Tools:
        ...     size = property(len)
        >>> attribute(Tools(), "size") is UNKNOWN
        True
    """
    if obj is UNKNOWN:
        return UNKNOWN
    try:
        found = inspect.getattr_static(obj, name)
    except AttributeError:  # a module's submodule, imported but not yet an attribute
        prefix = obj.__name__ if type(obj) is types.ModuleType else None
        return sys.modules.get(f"{prefix}.{name}", UNKNOWN) if prefix else UNKNOWN
    except Exception:  # an object of the student's whose lookup raises
        return UNKNOWN
    return held(found, None if issubclass(type(obj), type) else obj)


def class_attribute(cls: type, name: str) -> Any:
    """What `cls().name` holds when `cls`'s instances hold no `name` of their own: the
    attribute of that name in the `__dict__` of `cls` or a base (read from the `__mro__`,
    no metaclass of theirs runs), as `attribute` reads it; `UNKNOWN` where none holds it.

    Example:
        >>> import jax
        >>> class Tools:
        ...     g = staticmethod(jax.grad)
        >>> class_attribute(Tools, "g") is jax.grad
        True
    """
    try:
        for klass in type.__getattribute__(cls, "__mro__"):
            space = type.__getattribute__(klass, "__dict__")
            if name in space:
                return held(space[name], None)
    except Exception:  # a class of theirs whose lookup raises
        return UNKNOWN
    return UNKNOWN


def held(found: Any, instance: Any) -> Any:
    """What a class attribute `found` gives when read off `instance` (None: off the
    class), without running anything of the student's; `UNKNOWN` where only running
    could tell (a property, a descriptor of a built-in type)."""
    kind = type(found)  # never `isinstance`: a `__class__` of theirs would run
    if issubclass(kind, staticmethod):
        return slot(staticmethod, found, "__func__")
    if issubclass(kind, classmethod):
        return slot(classmethod, found, "__func__")
    if instance is not None and kind is types.MemberDescriptorType:  # a slot
        return slot(None, instance, found)
    if instance is not None and kind is _FIELD and issubclass(type(instance), tuple):
        index = found.__reduce__()[1][0]  # a named tuple's field: an item
        return tuple.__getitem__(instance, index) if index < len(instance) else UNKNOWN
    return UNKNOWN if _computed(kind) else found


_FIELD = type(vars(collections.namedtuple("_Pair", "first"))["first"])  # a field


def slot(kind: type | None, obj: Any, name: Any) -> Any:
    """The slot `name` of `obj` (of the built-in type `kind`), read by its C descriptor
    (`name` itself where `kind` is None), never by a lookup of the student's;
    `UNKNOWN` where it is empty."""
    descriptor = name if kind is None else vars(kind)[name]
    try:
        return descriptor.__get__(obj, type(obj))
    except Exception:  # an empty slot, or one of another class
        return UNKNOWN


def _computed(kind: type) -> bool:
    """Whether what a class attribute of type `kind` gives is computed when read: a
    property, a slot (data descriptors), a method of a built-in type."""
    if kind is types.MethodDescriptorType:
        return True
    try:
        mro = type.__getattribute__(kind, "__mro__")
        spaces = [type.__getattribute__(k, "__dict__") for k in mro]
    except Exception:  # a class of theirs whose lookup raises
        return True
    return any("__set__" in space or "__delete__" in space for space in spaces)
