"""Static arguments as `jax.jit` keys them, compared field by field.

A static argument is keyed on its value (or, for an object hashed by identity, its
id). A frozen dataclass, a NamedTuple or a nested tuple of them is also read field by
field, each field's full repr kept, so a change names the field and both values
("static `cfg.activation` changed: 'gelu' → 'relu'") instead of two cut-short reprs.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

from jaxtour import _ir

DEFAULT = ("left to its default",)  # the key of a static keyword not passed


class Static(NamedTuple):
    """A static argument: where it sits, its value shown, what jit hashes, and its
    fields (``(".activation", "'gelu'")``, each value's full repr; the whole value as
    one field ``("", repr)`` where it has none)."""

    path: str
    shown: str
    key: Any
    by_identity: bool
    fields: tuple[tuple[str, str], ...] = ()
    type: str = ""  # jit's key compares the type too: 2 and 2.0 are two keys


class Cause(NamedTuple):
    """One difference between two calls, in words, and what to do about it."""

    # "structure", "shape", "dtype", "weak type", "static value", "static type" or
    # "static object"
    kind: str
    words: str
    hint: str


def read_static(name: str, value: Any) -> Static:
    """`value` as jit keys it (checked hashable by `StaticArgs.check_values`; a leaf
    held fixed that cannot be hashed is keyed by identity, as `_ir.bind` keys it)."""
    by_identity = type(value).__hash__ in (object.__hash__, None)
    return Static(
        name,
        _shown(value),
        id(value) if by_identity else value,
        by_identity,
        () if by_identity else tuple(_fields(value, "", 0)),
        _type_name(value),
    )


def _shown(value: Any) -> str:
    """`value` in a few words; a function jit or custom_jvp wraps by its name, as a
    function (``<function tanh>``), not its wrapper's repr."""
    name, kind = getattr(value, "__name__", None), type(value)
    wrapped = kind.__name__ != "function" and kind.__module__ != "builtins"
    wrapped = wrapped and not isinstance(value, type)  # a class reads as its repr
    if wrapped and callable(value) and isinstance(name, str):
        return f"<function {name}>"
    return _ir.describe(value, 30).rsplit(" (", 1)[0]


def _type_name(value: Any) -> str:
    kind = type(value)
    return kind.__name__ if kind.__module__ == "builtins" else kind.__qualname__


_DEPTH, _MANY = 6, 256  # how deep and how many fields a static value is read


def _fields(value: Any, path: str, depth: int) -> list[tuple[str, str]]:
    """`(path, repr)` of each field of a static value: a dataclass's fields, a
    NamedTuple's, a tuple's items, a dict's keys, recursively; other values whole.

    Example:
        >>> _fields((1, {"a": "x"}), "", 0)
        [('[0]', '1'), ("[1]['a']", "'x'")]
    """
    items = _children(value) if depth < _DEPTH else None
    if not items:
        return [(path, repr(value))]
    found: list[tuple[str, str]] = []
    for key, child in items:
        found += _fields(child, path + key, depth + 1)
        if len(found) > _MANY:  # too many to compare field by field: the whole value
            return [(path, repr(value))]
    return found


def _children(value: Any) -> list[tuple[str, Any]] | None:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            (f".{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)
        ]
    return container_items(value)


def container_items(value: Any) -> list[tuple[str, Any]] | None:
    """A NamedTuple's, tuple's, list's or dict's items, each with its path step
    (`.name`, `[0]`, `['key']`); None for anything else."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return [(f".{k}", getattr(value, k)) for k in value._fields]
    if isinstance(value, tuple | list):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(f"[{k!r}]", v) for k, v in value.items()]
    return None


def _said(static: Static) -> str:
    return static.shown if static.key is DEFAULT else f"passed as {static.shown}"


def changed_fields(new: Static, old: Static) -> list[tuple[str, str, str]] | None:
    """`(path, old repr, new repr)` of each field that changed, where both values are
    of one type with the same fields (None where they are not: compare them whole)."""
    if (
        new.by_identity
        or old.by_identity
        or type(new.key) is not type(old.key)
        or not new.fields
        or any(not path for path, _ in new.fields)
        or [p for p, _ in new.fields] != [p for p, _ in old.fields]
    ):
        return None
    return [
        (path, was, now)
        for (path, now), (_, was) in zip(new.fields, old.fields, strict=True)
        if now != was
    ]


def static_causes(new: Static, old: Static) -> list[Cause]:
    """The changes of one static argument: one per field that changed, each naming
    the field and both values in full; else the whole value."""
    cause = static_cause(new, old)
    if cause is None or cause.kind != "static value" or DEFAULT in (new.key, old.key):
        return [cause] if cause is not None else []
    changed = changed_fields(new, old)
    if not changed:  # no fields, or the same reprs: the whole value, untruncated
        was, now = _whole(old), _whole(new)
        return [
            cause._replace(words=f"static `{new.path}` changed value: {was} → {now}")
        ]
    return [
        cause._replace(words=f"static `{new.path}{path}` changed: {was} → {now}")
        for path, was, now in changed
    ]


def _whole(static: Static) -> str:
    if len(static.fields) == 1 and not static.fields[0][0]:
        return static.fields[0][1]
    return repr(static.key)


def static_cause(new: Static, old: Static) -> Cause | None:
    if new.by_identity == old.by_identity and new.key == old.key:
        if new.type == old.type:
            return None
        return Cause(
            "static type",
            f"static `{new.path}` changed type: {old.type} {old.shown} → {new.type} "
            f"{new.shown}: jit keys a static argument on its type as well as its "
            "value, so equal values of two types are two keys",
            f"pass `{new.path}` as one type every call (int(...) or float(...))",
        )
    if DEFAULT in (new.key, old.key):
        return Cause(
            "static value",
            f"static `{new.path}` was {_said(old)}, now {_said(new)}: jit keys a "
            "keyword passed apart from one left to its default, even of equal value",
            "pass the static keyword the same way every call (always, or never)",
        )
    if new.by_identity and new.shown.startswith("<function"):
        return Cause(
            "static object",
            f"static `{new.path}` is a new function ({new.shown}): a lambda or a "
            "closure made anew is a new cache key",
            "define the function once, outside the loop, and pass that same object",
        )
    if new.by_identity:
        return Cause(
            "static object",
            f"static `{new.path}` is a new object, hashed by identity ({new.shown})",
            "give its class __eq__ and __hash__ "
            "by value (a frozen dataclass), or reuse one object",
        )
    return Cause(
        "static value",
        f"static `{new.path}` changed value: {old.shown} → {new.shown}",
        "each new value compiles anew: pass it traced unless it sets a shape or a "
        "Python branch",
    )


def static_passed_once(static: Static, now: bool) -> Cause:
    """A static argument in one call and not in the other (a jitted `f`'s own static
    keyword left to its default, a position counted from the end): `now`, in this
    call."""
    path, shown = static.path, static.shown
    words = (
        f"static `{path}` is {shown} now; the call compared passed no static `{path}`"
        if now
        else f"`{path}` is not static now; the call compared passed it as static {shown}"
    )
    return Cause(
        "static value",
        f"{words}: jit keys which arguments are static and their values",
        "pass the same arguments, the same way, every call",
    )
