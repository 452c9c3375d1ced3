"""What `jax.jit` keys its cache on, recorded per call, and differences in plain words.

A call's `Signature`: the pytree structure of its traced arguments, each leaf's shape,
dtype and weak type, and each static argument's value (or, for an object hashed by
identity, its id), field by field for a dataclass, a NamedTuple or a nested container.
`closest(new, earlier)` picks the earlier signature that differs least (`distance`), and
`differences(new, old)` names what changed, leaf by leaf and field by field, with what
to do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, NamedTuple

import jax

from jaxtour import _ir


class Leaf(NamedTuple):
    """A traced argument leaf as jit sees it: where it sits, its type, weak or not."""

    path: str
    type: str
    weak: bool


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


class Signature(NamedTuple):
    """The part of a call that decides whether `jax.jit` traces again."""

    trees: tuple[tuple[str, str, str], ...]  # (argument, structure in words, treedef)
    leaves: tuple[Leaf, ...]
    statics: tuple[Static, ...]


class Cause(NamedTuple):
    """One difference between two calls, in words, and what to do about it."""

    # "structure", "shape", "dtype", "weak type", "static value" or "static object"
    kind: str
    words: str
    hint: str


def signature(
    names: list[str],
    args: tuple,
    kwargs: dict,
    static: tuple[int, ...],
    static_names: tuple[str, ...],
    defaults: dict | None = None,
) -> Signature:
    """The `Signature` of one call (`names`: one per positional argument; `defaults`:
    the default of each static keyword, which a call may leave out)."""
    named = {**dict(zip(names, args, strict=True)), **kwargs}
    is_static = {names[i] for i in static if i < len(names)} | set(static_names)
    trees, leaves, statics = [], [], []
    for name, value in (defaults or {}).items():
        if name in static_names and name not in named:  # jit keys "left out" apart
            statics.append(
                Static(name, f"left to its default {value!r}", DEFAULT, False)
            )
    for name, value in named.items():
        if name in is_static:
            statics.append(_static(name, value))
            continue
        trees.append((name, _structure(value), str(jax.tree.structure(value))))
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            aval = jax.typeof(leaf)
            leaves.append(
                Leaf(
                    name + jax.tree_util.keystr(path),
                    _ir.type_str(aval),
                    bool(getattr(aval, "weak_type", False)),
                )
            )
    return Signature(tuple(trees), tuple(leaves), tuple(statics))


def _static(name: str, value: Any) -> Static:
    """`value` as jit keys it (checked hashable by `StaticArgs.check_values`)."""
    by_identity = type(value).__hash__ is object.__hash__
    return Static(
        name,
        _ir.describe(value, 30).rsplit(" (", 1)[0],
        id(value) if by_identity else value,
        by_identity,
        () if by_identity else tuple(_fields(value, "", 0)),
    )


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
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple
        return [(f".{k}", getattr(value, k)) for k in value._fields]
    if isinstance(value, tuple | list):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(f"[{k!r}]", v) for k, v in value.items()]
    return None


def _said(static: Static) -> str:
    return static.shown if static.key is DEFAULT else f"passed as {static.shown}"


def _structure(value: Any) -> str:
    """A pytree's shape in words: "an array", "a list of 3", "a dict with keys a, b"."""
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, dict):
        return f"a dict with keys {', '.join(map(str, value))}"
    leaves = jax.tree.leaves(value)
    if len(leaves) == 1 and leaves[0] is value:
        return (
            "a Python number"
            if isinstance(value, int | float | complex)
            else "an array"
        )
    return f"{type(value).__name__} ({jax.tree.structure(value)})"


def distance(new: Signature, old: Signature) -> tuple[int, int]:
    """How far `old` is from `new`: (arguments whose pytree structure changed, the
    attributes that changed: each leaf's dtype, shape and weak type, each static
    field). `jax_explain_cache_misses` counts differing leaves; counting attributes
    too, a leaf that changed dtype and shape is further than one that changed dtype.

    Example:
        >>> a = Signature((), (Leaf("x", "f32[5,8]", False),), ())
        >>> b = Signature((), (Leaf("x", "bf16[7,8]", False),), ())
        >>> distance(a, b), distance(a, a)
        ((0, 2), (0, 0))
    """
    trees = sum(
        n_t != o_t
        for (_, _, n_t), (_, _, o_t) in zip(new.trees, old.trees, strict=False)
    )
    trees += [t[0] for t in new.trees] != [t[0] for t in old.trees]
    if trees or len(new.leaves) != len(old.leaves):
        return max(trees, 1), 0
    attrs = sum(
        (_dtype(a.type) != _dtype(b.type))
        + (_shape(a.type) != _shape(b.type))
        + (a.weak != b.weak)
        for a, b in zip(new.leaves, old.leaves, strict=True)
    )
    olds = {st.path: st for st in old.statics}
    for st in new.statics:
        if st.path in olds and _static_cause(st, olds[st.path]) is not None:
            attrs += max(len(_changed_fields(st, olds[st.path]) or [st]), 1)
    return 0, attrs


def closest(new: Signature, earlier: Sequence[Signature]) -> int | None:
    """The index in `earlier` of the signature that differs least from `new`
    (`distance`); of equals, the latest. None when there is none.

    Example:
        >>> x = lambda t: Signature((), (Leaf("x", t, False),), ())
        >>> closest(x("bf16[5,8]"), [x("f32[5,8]"), x("f32[7,8]")])
        0
    """
    if not earlier:
        return None
    order = range(len(earlier) - 1, -1, -1)
    return min(order, key=lambda i: distance(new, earlier[i]))


def differences(new: Signature, old: Signature) -> list[Cause]:
    """What changed from `old` to `new`, most structural first: leaf by leaf (leaves
    that changed alike are one cause) and static field by field."""
    causes = [
        Cause(
            "structure",
            f"`{name}` was {old_s}, now {new_s}",
            "pass one array (jnp.asarray) instead of a list of numbers, or keep "
            "the structure fixed",
        )
        for (name, new_s, new_t), (_, old_s, old_t) in zip(
            new.trees, old.trees, strict=False
        )
        if new_t != old_t
    ]
    if [t[0] for t in new.trees] != [t[0] for t in old.trees]:
        causes.append(
            Cause(
                "structure",
                "the traced arguments are not the same ones "
                "(a keyword argument added or dropped)",
                "call with the same arguments each time",
            )
        )
    if not causes and len(new.leaves) == len(old.leaves):
        causes += _leaf_causes(new.leaves, old.leaves)
    olds = {st.path: st for st in old.statics}
    for a in new.statics:
        if a.path in olds:
            causes += _static_causes(a, olds[a.path])
    return causes


def _dtype(type_: str) -> str:
    return type_.split("[")[0]


def _shape(type_: str) -> str:
    return type_[len(_dtype(type_)) :]


def _leaf_causes(new: tuple[Leaf, ...], old: tuple[Leaf, ...]) -> list[Cause]:
    """One cause per kind of change: three list items that all changed dtype the same
    way are one cause naming the three (which earlier call is closest is `distance`'s
    count, leaf by leaf)."""
    groups: dict[Cause, list[str]] = {}
    for a, b in zip(new, old, strict=True):
        if (cause := _leaf_cause(a, b)) is not None:
            groups.setdefault(cause, []).append(a.path)
    merged = []
    for cause, paths in groups.items():
        names = ", ".join(f"`{p}`" for p in paths[:3])
        names += f" and {len(paths) - 3} more" if len(paths) > 3 else ""
        words = (
            cause.words if len(paths) == 1 else cause.words.replace("\0 was", "\0 were")
        )
        merged.append(cause._replace(words=words.replace("\0", names)))
    return merged


def _leaf_cause(new: Leaf, old: Leaf) -> Cause | None:
    """What changed in one leaf; where its name goes, a NUL for `_leaf_causes`."""
    if _dtype(new.type) != _dtype(old.type) and _shape(new.type) != _shape(old.type):
        return Cause(
            "dtype and shape",
            f"\0 changed dtype and shape: {old.type} → {new.type}",
            "pass the same dtype every call (1.0, not 1); jit compiles once per "
            "shape: pad to a few fixed sizes",
        )
    if _dtype(new.type) != _dtype(old.type):
        return Cause(
            "dtype",
            f"\0 changed dtype: {old.type} → {new.type}",
            "pass the same dtype every call (1.0, not 1)",
        )
    if new.type != old.type:
        return Cause(
            "shape",
            f"\0 changed shape: {old.type} → {new.type}",
            "jit compiles once per shape: pad to a few fixed sizes",
        )
    if new.weak != old.weak:
        what = lambda weak: "a Python scalar (weakly typed)" if weak else "an array"
        return Cause(
            "weak type",
            f"\0 was {what(old.weak)}, now {what(new.weak)}: {new.type} either way",
            "pass the same kind each call: always an array, or always a number",
        )
    return None


def _changed_fields(new: Static, old: Static) -> list[tuple[str, str, str]] | None:
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


def _static_causes(new: Static, old: Static) -> list[Cause]:
    """The changes of one static argument: one per field that changed, each naming
    the field and both values in full; else the whole value."""
    cause = _static_cause(new, old)
    if cause is None or cause.kind != "static value" or DEFAULT in (new.key, old.key):
        return [cause] if cause is not None else []
    changed = _changed_fields(new, old)
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


def _static_cause(new: Static, old: Static) -> Cause | None:
    if new.by_identity == old.by_identity and new.key == old.key:
        return None
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
