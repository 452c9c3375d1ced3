"""Arguments split as `eqx.filter_jit` splits them: leaves JAX traces, and leaves held fixed.

A model as people write it mixes arrays with things JAX cannot trace: an Equinox
module's activation function, a string flag, a config object. Every lens traces the
arrays and holds the rest as constants of the trace, as Equinox's `filter_jit` does, so
such a model passes straight in and no one has to make it hashable for `static_argnums`.
Where nothing is held, the user's function is traced as it is.
"""

from __future__ import annotations

import collections
import functools
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np


def traceable(leaf: Any) -> bool:
    """Whether `jax.jit` traces `leaf`: an array, a NumPy or Python number, a key.

    Example:
        >>> traceable(1.0), traceable("relu"), traceable(jax.numpy.ones(2))
        (True, False, True)
    """
    if isinstance(
        leaf, jax.Array | np.ndarray | np.generic | bool | int | float | complex
    ):
        return True
    return hasattr(leaf, "shape") and hasattr(leaf, "dtype")  # jax.ShapeDtypeStruct too


@dataclass(frozen=True)
class Split:
    """`args`/`kwargs` with every held leaf replaced by None (an empty pytree to JAX).

    `slots` maps ``("arg", i)`` or ``("kw", name)`` to the argument's treedef and its
    held leaves by leaf index; `held` names each held leaf (``model.activation``).
    """

    args: tuple
    kwargs: dict
    static: frozenset[int] = frozenset()
    static_names: tuple[str, ...] = ()
    slots: dict = field(default_factory=dict)
    held: tuple[str, ...] = ()

    def dynamic(self) -> tuple[tuple, dict]:
        """The arguments a compiled `f` takes: the static ones left out."""
        dynamic = tuple(a for i, a in enumerate(self.args) if i not in self.static)
        kw = {k: v for k, v in self.kwargs.items() if k not in self.static_names}
        return dynamic, kw

    def leaves(self) -> list:
        """The traced leaves, in the order of the jaxpr's inputs."""
        return jax.tree.leaves(self.dynamic())

    def whole_held(self) -> list[tuple[tuple, Any]]:
        """The arguments held whole, each a `slots` key and its value: a string or
        an object passed where `jax.jit` wants an array, not a leaf inside a model.

        Example:
            >>> split((1.0, "abc", {"act": print}), {}).whole_held()
            [(('arg', 1), 'abc')]
        """
        return [
            (slot, fixed[0][1])
            for slot, (tree, fixed) in self.slots.items()
            if jax.tree_util.treedef_is_leaf(tree)
        ]


def split(
    args: tuple,
    kwargs: dict,
    static: frozenset[int] = frozenset(),
    static_names: tuple[str, ...] = (),
    names: list[str] | None = None,
) -> Split:
    """Hold every leaf `traceable` refuses, outside the static arguments (`static`:
    the call's static positions, as `StaticArgs.positions` gives them; `static_names`:
    its static keywords).

    `names` are the positional parameters' names (``args[i]`` where None).

    Example:
        >>> part = split((1.0, {"act": print, "w": 2.0}), {})
        >>> part.args, part.held
        ((1.0, {'act': None, 'w': 2.0}), ("args[1]['act']",))
    """
    masked_args, masked_kwargs = list(args), dict(kwargs)
    slots: dict = {}
    held: list[str] = []
    slot_items = [(("arg", i), a) for i, a in enumerate(args) if i not in static]
    slot_items += [(("kw", k), v) for k, v in kwargs.items() if k not in static_names]
    for slot, value in slot_items:
        pathed, tree = jax.tree_util.tree_flatten_with_path(value)
        fixed = [(n, leaf) for n, (_, leaf) in enumerate(pathed) if not traceable(leaf)]
        if not fixed:
            continue
        leaves = [leaf for _, leaf in pathed]
        for n, _ in fixed:
            leaves[n] = None
        target: Any = masked_args if slot[0] == "arg" else masked_kwargs
        target[slot[1]] = jax.tree.unflatten(tree, leaves)
        slots[slot] = (tree, tuple(fixed))
        base = _slot_name(slot, names)
        held += [base + jax.tree_util.keystr(pathed[n][0]) for n, _ in fixed]
    return Split(
        tuple(masked_args), masked_kwargs, static, static_names, slots, tuple(held)
    )


def _slot_name(slot: tuple, names: list[str] | None) -> str:
    kind, key = slot
    if kind == "kw":
        return key
    return names[key] if names and key < len(names) else f"args[{key}]"


def bind(f: Any, part: Split) -> Any:
    """`f` taking `part`'s masked arguments: the held leaves filled back in.

    The same `f` and held leaves give the same function, so JAX's caches of traces
    and compilations hit on a warm call. An `f` that cannot be hashed (an Equinox
    module, any callable object holding arrays) is called through a plain function
    made afresh each time, which `jax.jit` can key its cache on: its arrays are then
    constants the trace closes over, as `jax.make_jaxpr(f)` shows them.
    """
    if not part.slots:
        return f if _hashable(f) else _called(f)
    spec = tuple(
        (slot, tree, tuple((n, _key(leaf)) for n, leaf in fixed))
        for slot, (tree, fixed) in part.slots.items()
    )
    try:
        key = (f, spec)
        hit = _BOUND.get(key)
    except TypeError:  # f itself unhashable (a module with array fields)
        return _held_fn(f, part.slots)
    if hit is None:
        hit = _BOUND[key] = (_held_fn(f, part.slots), part.slots)
        if len(_BOUND) > 64:
            _BOUND.popitem(last=False)
    return hit[0]


_BOUND: collections.OrderedDict = collections.OrderedDict()


def _hashable(f: Any) -> bool:
    try:
        hash(f)
    except TypeError:  # an eqx.Module's hash raises on its array fields
        return False
    return True


def _called(f: Any) -> Any:
    """`f` as a plain function, named and signed as `f` (its `__dict__` not copied)."""

    @functools.wraps(f, updated=())
    def called(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)

    return called


def _key(leaf: Any) -> Any:
    try:
        hash(leaf)
        return (type(leaf), leaf)
    except TypeError:
        return ("id", id(leaf))  # kept alive by the cache entry that holds `slots`


def _held_fn(f: Any, slots: dict) -> Any:
    @functools.wraps(f)
    def held(*args: Any, **kwargs: Any) -> Any:
        args_list = list(args)
        for (kind, key), (tree, fixed) in slots.items():
            target: Any = args_list if kind == "arg" else kwargs
            target[key] = _fill(target[key], tree, fixed)
        return f(*args_list, **kwargs)

    return held


def _fill(masked: Any, tree: Any, fixed: tuple) -> Any:
    traced = iter(jax.tree.leaves(masked))
    held = dict(fixed)
    leaves = [held[n] if n in held else next(traced) for n in range(tree.num_leaves)]
    return jax.tree.unflatten(tree, leaves)
