"""What `jax.jit` keys its cache on, recorded per call, and differences in plain words.

A call's `Signature`: the pytree structure of its traced arguments, each leaf's shape,
dtype and weak type, and each static argument's value (or, for an object hashed by
identity, its id). `differences(new, old)` names what changed, with what to do.
"""

from __future__ import annotations

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
    """A static argument: where it sits, its value shown, what jit hashes."""

    path: str
    shown: str
    key: Any
    by_identity: bool


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
    try:
        hash(value)
    except TypeError:
        raise TypeError(
            f"explain_retraces: the static argument `{name}` is {_ir.describe(value)}, "
            "which jax.jit cannot hash. Pass a tuple instead of a list (or a frozen "
            "dataclass instead of a dict), or make it a traced argument."
        ) from None
    by_identity = type(value).__hash__ is object.__hash__
    return Static(
        name,
        _ir.describe(value, 30).rsplit(" (", 1)[0],
        id(value) if by_identity else value,
        by_identity,
    )


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


def differences(new: Signature, old: Signature) -> list[Cause]:
    """What changed from `old` to `new`, most structural first."""
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
    causes += [
        c
        for a in new.statics
        if a.path in olds and (c := _static_cause(a, olds[a.path]))
    ]
    return causes


def _leaf_causes(new: tuple[Leaf, ...], old: tuple[Leaf, ...]) -> list[Cause]:
    """One cause per kind of change: three list items that all changed dtype the same
    way are one cause naming the three, so the closest earlier call is the one with the
    fewest kinds of change."""
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
    if new.type.split("[")[0] != old.type.split("[")[0]:
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
