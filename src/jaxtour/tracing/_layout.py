"""A traced argument's static fields: the part of its pytree structure that is not leaves.

A model passed to a jitted function is a pytree whose structure (`jax.tree.structure`)
holds more than where its leaves sit: an Equinox module's `eqx.field(static=True)`
fields, a Flax NNX module's sizes and flags. A change there changes the structure, and
jit traces again; the treedef printed whole is many lines of `CustomNode(...)`. Read
attribute by attribute instead (a dataclass's fields, a registered object's public
attributes, containers item by item), the fields that are not leaves name the change:
``m.out_features changed: 2 → 3``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax

from jaxtour.tracing._statics import Cause, container_items

_DEPTH, _MANY = 8, 512  # how deep and how many fields an argument is read


def layout(value: Any, name: str) -> tuple[tuple[str, str], ...]:
    """`(path, repr)` of each field of `value` that is not one of its pytree leaves:
    what its pytree structure holds besides the leaves' places.

    Example:
        >>> import dataclasses
        >>> @jax.tree_util.register_dataclass
        ... @dataclasses.dataclass
        ... class Dense:
        ...     w: jax.Array
        ...     width: int = dataclasses.field(metadata=dict(static=True))
        >>> layout({"d": Dense(jax.numpy.ones(2), 2)}, "p")
        (("p['d'].width", '2'),)
    """
    leaves = {id(leaf) for leaf in jax.tree.leaves(value)}
    found: list[tuple[str, str]] = []
    _read(value, name, 0, leaves, found)
    return tuple(found) if len(found) <= _MANY else ()


def _read(value: Any, path: str, depth: int, leaves: set, found: list) -> None:
    if id(value) in leaves or len(found) > _MANY:
        return  # a leaf: its type is in the signature, its value is not jit's key
    children = _children(value) if depth < _DEPTH else None
    if children is None:
        found.append((path, repr(value)))
        return
    for key, child in children:
        _read(child, path + key, depth + 1, leaves, found)


def _children(value: Any) -> list[tuple[str, Any]] | None:
    """A node's fields by name; None for a value read whole."""
    if (items := container_items(value)) is not None:
        return items
    if not _is_node(value):  # a function, a dtype, a config object: jit's key whole
        return None
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = [f.name for f in dataclasses.fields(value)]
        return [(f".{n}", getattr(value, n)) for n in names if hasattr(value, n)]
    attrs = getattr(value, "__dict__", None)
    if not isinstance(attrs, dict):
        return None
    # a registered object's own attributes; `_`-names are its framework's bookkeeping
    return [(f".{k}", v) for k, v in attrs.items() if not k.startswith("_")]


def _is_node(value: Any) -> bool:
    """Whether `value` is a pytree node JAX flattens (a module), not a leaf."""
    leaves = jax.tree.leaves(value, is_leaf=lambda x: x is not value)
    return not (len(leaves) == 1 and leaves[0] is value)


def changed(
    new: tuple[tuple[str, str], ...], old: tuple[tuple[str, str], ...]
) -> list[tuple[str, str, str]]:
    """`(path, old repr, new repr)` of each field both layouts have that changed, and
    of each field one of them lacks (its repr "absent")."""
    was, now = dict(old), dict(new)
    paths = [p for p, _ in old] + [p for p, _ in new if p not in was]
    absent = "absent"
    return [
        (p, was.get(p, absent), now.get(p, absent))
        for p in paths
        if was.get(p, absent) != now.get(p, absent)
    ]


_SHORT = 100  # characters of a treedef shown whole; past it, a module's dump


def structure_cause(
    name: str,
    words: tuple[str, str],
    trees: tuple[str, str],
    fields: list[tuple[str, str, str]],
) -> Cause:
    """A changed pytree structure in one line: the summaries where they differ (a
    list that grew); else the two treedefs where they are short (a None that became
    a leaf, a nested dict's keys); else the static fields that changed, by name (a
    module's size: `fields`, as `changed` finds them); else a summary that says the
    layout changed."""
    (old_s, new_s), (old_t, new_t) = words, trees
    hint = (
        "pass one array (jnp.asarray) instead of a list of numbers, or keep the "
        "structure fixed"
    )
    if old_s != new_s:
        said = f"`{name}` was {old_s}, now {new_s}"
    elif len(old_t) <= _SHORT and len(new_t) <= _SHORT:
        said = f"`{name}` changed pytree structure: {old_t} → {new_t}"
    elif fields:
        shown = [f"`{p}` changed: {_cut(was)} → {_cut(now)}" for p, was, now in fields]
        more = f"; and {len(shown) - 3} more fields" if len(shown) > 3 else ""
        said = "; ".join(shown[:3]) + more
        hint = (
            "a module's static fields (sizes, flags, functions) are part of its "
            "pytree structure, and jit traces once per value: keep them fixed"
        )
    else:
        said = (
            f"`{name}` changed pytree structure ({new_s}): where its leaves sit "
            "changed, not a field this record can name"
        )
    return Cause("structure", said, hint)


def _cut(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"
