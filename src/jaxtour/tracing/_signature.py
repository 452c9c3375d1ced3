"""What `jax.jit` keys its cache on, recorded per call, and differences in plain words.

A call's `Signature`: the pytree structure of its traced arguments, each leaf's shape,
dtype, weak type and sharding, which arguments came by keyword, the settings around the
call that jit keys on (64-bit mode, matmul precision, `jax.set_mesh`'s mesh), and each
static argument's value (or, for an object hashed by
identity, its id), field by field for a dataclass, a NamedTuple or a nested container.
`closest(new, earlier)` picks the earlier signature that differs least (`distance`), and
`differences(new, old)` names what changed, leaf by leaf and field by field, with what
to do.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax

from jaxtour import _ir
from jaxtour.tracing._layout import changed, layout, structure_cause
from jaxtour.tracing._statics import (
    DEFAULT,
    Cause,
    Static,
    changed_fields,
    read_static,
    static_cause,
    static_causes,
    static_passed_once,
)


class Leaf(NamedTuple):
    """A traced argument leaf as jit sees it: where it sits, its type, weak or not,
    and the mesh, explicit sharding and memory space its type carries ("" for none)."""

    path: str
    type: str
    weak: bool
    sharding: str = ""


@dataclasses.dataclass(frozen=True)
class Signature:
    """The part of a call that decides whether `jax.jit` traces again; and, to name
    a changed structure, each traced argument's static fields (`_layout.layout`:
    read from the structure, so not compared apart from it)."""

    trees: tuple[tuple[str, str, str], ...]  # (argument, structure in words, treedef)
    leaves: tuple[Leaf, ...]
    statics: tuple[Static, ...]
    keywords: tuple[str, ...] = ()  # the arguments passed by keyword, sorted
    positional: tuple[str, ...] = ()  # the arguments passed by position
    context: tuple[tuple[str, str], ...] = ()  # what jit keys on besides: (name, value)
    layouts: dict[str, tuple[tuple[str, str], ...]] = dataclasses.field(
        default_factory=dict, compare=False
    )


def signature(
    names: list[str],
    args: tuple,
    kwargs: dict,
    static: tuple[int, ...],
    static_names: tuple[str, ...],
    defaults: dict | None = None,
    traced: Callable[[Any], bool] = _ir.traceable,
    model: str | None = None,
) -> Signature:
    """The `Signature` of one call (`names`: one per positional argument; `defaults`:
    the default of each static keyword, which a call may leave out; `traced`: whether
    jit traces a leaf, else it is held fixed and keyed as a static value, as
    `eqx.filter_jit` keys a module's functions; `model`: the argument that is a model
    passed as `f`, whose leaves are traced only where arrays, as `eqx.filter_jit`
    traces a module's)."""
    # jit flattens the keywords as a dict, in sorted order: the order they came in
    # changes nothing
    named = {**dict(zip(names, args, strict=True)), **dict(sorted(kwargs.items()))}
    is_static = {names[i] for i in static if i < len(names)} | set(static_names)
    trees, leaves, statics, layouts = [], [], [], {}
    for name, value in (defaults or {}).items():
        if name in static_names and name not in named:  # jit keys "left out" apart
            statics.append(
                Static(name, f"left to its default {value!r}", DEFAULT, False)
            )
    for name, value in named.items():
        if name in is_static:
            statics.append(read_static(name, value))
            continue
        trees.append((name, _structure(value), str(jax.tree.structure(value))))
        layouts[name] = layout(value, name)
        keep = _ir.is_array if name == model else traced
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            where = name + jax.tree_util.keystr(path)
            if not keep(leaf):
                statics.append(read_static(where, leaf))
                continue
            aval = jax.typeof(leaf)
            leaves.append(
                Leaf(
                    where,
                    _ir.type_str(aval),
                    bool(getattr(aval, "weak_type", False)),
                    _sharding(leaf),
                )
            )
    passed = (tuple(sorted(kwargs)), tuple(names[: len(args)]))
    return Signature(
        tuple(trees), tuple(leaves), tuple(statics), *passed, _context(), layouts
    )


def _context() -> tuple[tuple[str, str], ...]:
    """The settings around a call that jit keys its cache on, beside the arguments:
    64-bit mode, the default matmul precision and the mesh `jax.set_mesh` set."""
    mesh = jax.sharding.get_abstract_mesh()
    axes = zip(mesh.axis_names, mesh.axis_sizes, mesh.axis_types, strict=True)
    words = ", ".join(f"{n}={k} {t.name}" for n, k, t in axes) or "none"
    configs = [(name, str(getattr(jax.config, name))) for name in _CONFIGS]
    return (*configs, ("the mesh of jax.set_mesh", words))


_CONFIGS = ("jax_enable_x64", "jax_default_matmul_precision")


def _sharding(leaf: Any) -> str:
    """Where a leaf's type (`jax.typeof`, what jit keys on) puts it: the mesh of its
    sharding, with each axis's size and type, the PartitionSpec when an Explicit axis
    carries it in the type, and a memory space other than the device's; "" for a
    leaf on no mesh in device memory."""
    aval = jax.typeof(leaf)
    sharding: Any = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    words = []
    if mesh is not None and not mesh.empty:
        axes = zip(mesh.axis_names, mesh.axis_sizes, mesh.axis_types, strict=True)
        spec = sharding.spec
        split = f"{spec} " if any(axis is not None for axis in spec) else ""
        words.append(
            f"{split}on mesh ({', '.join(f'{n}={k} {t.name}' for n, k, t in axes)})"
        )
    memory = getattr(aval, "memory_space", None)
    if memory is not None and memory.name != "Device":
        words.append(f"in {memory.name.lower()} memory")
    return ", ".join(words)


def _moved(new: Signature, old: Signature) -> list[str]:
    """The arguments passed by keyword in one call and by position in the other."""
    both = (set(new.keywords) & set(old.positional)) | (
        set(new.positional) & set(old.keywords)
    )
    return sorted(both)


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
    count = "1 leaf" if len(leaves) == 1 else f"{len(leaves)} leaves"
    return f"a {type(value).__name__} of {count}"


def distance(new: Signature, old: Signature) -> tuple[int, int]:
    """How far `old` is from `new`: (arguments whose pytree structure changed or that
    one call passed and the other did not, the attributes that changed: each leaf's
    dtype, shape and weak type where the leaves line up, each static field).
    `jax_explain_cache_misses` counts differing leaves; counting attributes too, a
    leaf that changed dtype and shape is further than one that changed dtype.

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
    now, was = [t[0] for t in new.trees], [t[0] for t in old.trees]
    trees += len(set(now) ^ set(was)) or now != was  # each argument passed or not
    trees += len(_moved(new, old))
    trees += sum(a != b for a, b in zip(new.context, old.context, strict=False))
    statics = 0  # of two calls that differ in structure alike, the one whose
    olds = {st.path: st for st in old.statics}  # statics differ less is closer
    for st in new.statics:
        if st.path in olds and static_cause(st, olds[st.path]) is not None:
            statics += max(len(changed_fields(st, olds[st.path]) or [st]), 1)
    if len(new.leaves) != len(old.leaves):
        return max(trees, 1), statics
    attrs = statics + sum(
        (_dtype(a.type) != _dtype(b.type))
        + (_shape(a.type) != _shape(b.type))
        + (a.weak != b.weak)
        + (a.sharding != b.sharding)
        for a, b in zip(new.leaves, old.leaves, strict=True)
    )
    return trees, attrs


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
        structure_cause(
            name,
            (old_s, new_s),
            (old_t, new_t),
            changed(new.layouts.get(name, ()), old.layouts.get(name, ())),
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
                "the traced arguments are not the same ones" + _added(new, old),
                "call with the same arguments each time",
            )
        )
    for (name, now), (_, was) in zip(new.context, old.context, strict=False):
        if now != was:
            causes.append(
                Cause(
                    "context",
                    f"{name} changed: {was} → {now}",
                    "jit keys its cache on it too: set it once, before the calls",
                )
            )
    for name in _moved(new, old):
        was, now = (
            ("keyword", "position") if name in old.keywords else ("position", "keyword")
        )
        causes.append(
            Cause(
                "call form",
                f"`{name}` was passed by {was}, now by {now}",
                "pass each argument the same way every call: jit keys its cache on "
                "which arguments come by keyword",
            )
        )
    if not causes and len(new.leaves) == len(old.leaves):
        causes += _leaf_causes(new.leaves, old.leaves)
    olds = {st.path: st for st in old.statics}
    news = {st.path for st in new.statics}
    for a in new.statics:
        if a.path in olds:
            causes += static_causes(a, olds[a.path])
        else:
            causes.append(static_passed_once(a, now=True))
    causes += [static_passed_once(b, False) for b in old.statics if b.path not in news]
    return causes


def _added(new: Signature, old: Signature) -> str:
    """The traced arguments one call passed and the other left out, in words."""
    now, was = [t[0] for t in new.trees], [t[0] for t in old.trees]
    ticked = lambda names: ", ".join(f"`{n}`" for n in names)
    parts = [
        f"{ticked(names)} {words}"
        for names, words in (
            ([n for n in now if n not in was], "passed now, left out before"),
            ([n for n in was if n not in now], "left out now, passed before"),
        )
        if names
    ]
    return f": {'; '.join(parts)}" if parts else ""


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
    if new.sharding != old.sharding:
        return Cause(
            "sharding",
            f"\0 changed sharding: {old.sharding or 'no mesh'} → "
            f"{new.sharding or 'no mesh'}",
            "jit traces again for a new mesh, explicit sharding or memory space: give "
            "the argument the same one every call (jax.device_put with one sharding)",
        )
    if new.weak != old.weak:
        what = lambda weak: "a Python scalar (weakly typed)" if weak else "an array"
        return Cause(
            "weak type",
            f"\0 was {what(old.weak)}, now {what(new.weak)}: {new.type} either way",
            "pass the same kind each call: always an array, or always a number",
        )
    return None


def defaults(f: Callable) -> dict[str, Any]:
    """`f`'s keyword defaults (none where Python cannot read its signature)."""
    try:
        params = inspect.signature(f).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {p.name: p.default for p in params if p.default is not p.empty}
