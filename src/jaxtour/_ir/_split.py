"""Arguments split as `eqx.filter_jit` splits them: leaves JAX traces, and leaves held fixed.

A model as people write it mixes arrays with things JAX cannot trace: an Equinox
module's activation function, a string flag, a config object. Every lens traces the
arrays and holds the rest as constants of the trace, as Equinox's `filter_jit` does, so
such a model passes straight in and no one has to make it hashable for `static_argnums`.
Where nothing is held, the user's function is traced as it is.

A model called as `f` (an Equinox module, a `jax.tree_util.Partial` holding arrays: a
callable pytree with array leaves) is traced as `eqx.filter_jit(model)` traces it:
`apply(model, *args)` with the model as a first argument whose arrays are inputs and
whose other leaves are held, so XLA cannot constant-fold work on its weights.
"""

from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from jaxtour._ir._writes import Writes, check_unwritten, snapshot


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
    model: Any = None

    def called(self, args: tuple) -> tuple:
        """The user's `args` as they were traced: the model first, where `f` was one."""
        return args if self.model is None else (self.model, *args)

    def dynamic(self) -> tuple[tuple, dict]:
        """The arguments a compiled `f` takes: the static ones left out."""
        dynamic = tuple(a for i, a in enumerate(self.args) if i not in self.static)
        kw = {k: v for k, v in self.kwargs.items() if k not in self.static_names}
        return dynamic, kw

    def leaves(self) -> list:
        """The traced leaves, in the order of the jaxpr's inputs."""
        return jax.tree.leaves(self.dynamic())

    def key(self) -> tuple:
        """What the held leaves are, hashable: each slot's treedef and held leaves
        (by value where they hash, else by identity). Equal keys: one bound function.

        Example:
            >>> split((1.0, "relu"), {}).key() == split((2.0, "relu"), {}).key()
            True
        """
        return tuple(
            (slot, tree, tuple((n, _key(leaf)) for n, leaf in fixed))
            for slot, (tree, fixed) in self.slots.items()
        )

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
    model: Any = None,
) -> Split:
    """Hold every leaf `traceable` refuses, outside the static arguments (`static`:
    the call's static positions, as `StaticArgs.positions` gives them; `static_names`:
    its static keywords).

    `names` are the positional parameters' names (``args[i]`` where None). With
    `model` (`f` itself, then also ``args[0]``), every leaf of ``args[0]`` that is not
    an array is held, as `eqx.filter_jit` holds a module's Python numbers.

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
        keep = is_array if model is not None and slot == ("arg", 0) else traceable
        fixed = [(n, leaf) for n, (_, leaf) in enumerate(pathed) if not keep(leaf)]
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
        tuple(masked_args),
        masked_kwargs,
        static,
        static_names,
        slots,
        tuple(held),
        model,
    )


def is_array(leaf: Any) -> bool:
    """Whether `eqx.filter_jit` traces `leaf` (`eqx.is_array`): an array or a NumPy
    scalar; a Python number is held.

    Example:
        >>> is_array(jax.numpy.ones(2)), is_array(np.float32(1)), is_array(1.0)
        (True, True, False)
    """
    return isinstance(leaf, jax.Array | np.ndarray | np.generic)


def is_model(f: Any) -> bool:
    """Whether `f` is a callable pytree holding arrays (an Equinox module, a
    `jax.tree_util.Partial` of arrays), traced as `apply(model, *args)` (`applier`).
    A plain object JAX cannot flatten is a leaf: its arrays stay constants closed
    over, as `jax.jit` closes over them.

    Example:
        >>> is_model(jax.tree_util.Partial(jax.numpy.dot, jax.numpy.ones(2))), is_model(print)
        (True, False)
    """
    leaves = jax.tree.leaves(f)
    return leaves != [f] and any(is_array(leaf) for leaf in leaves)


def applier(f: Any, writes: Writes | None = None) -> Any:
    """``apply(model, *args, **kwargs) = model(*args, **kwargs)``, one function per
    name and signature (so JAX's caches hit on a warm call), signed as `f` with the
    model first (`model_name`), named as `f` (JAX then names its leaves
    ``MLP.layers[0].weight``). With `writes`, a call that writes to the traced model
    raises (`_writes.check_unwritten`): a lens that hands back `f`'s results says
    so rather than lose the update.

    Example:
        >>> applier(jax.tree_util.Partial(jax.numpy.dot, jax.numpy.ones(2))).__name__
        'dot'
    """
    name, first, params = _naming(f)
    key = (name, first, None if params is None else tuple(map(str, params)), writes)
    if (hit := _APPLIERS.get(key)) is None:
        hit = _APPLIERS[key] = _make_applier(name, first, params, writes)
        if len(_APPLIERS) > 64:
            _APPLIERS.popitem(last=False)
    return hit


def model_name(f: Any) -> str:
    """The name `applier(f)` gives its model parameter: `f`'s own name, or "model"
    where that is no identifier or is one of `f`'s parameters.

    Example:
        >>> model_name(jax.tree_util.Partial(jax.numpy.dot, jax.numpy.ones(2)))
        'dot'
    """
    return _naming(f)[1]


def _naming(f: Any) -> tuple[str, str, list | None]:
    """`f`'s name, its model parameter's name and `f`'s parameters (None for a
    builtin without a signature)."""
    name = next(
        (
            n
            for g in (f, getattr(f, "func", None))
            if (n := getattr(g, "__name__", None))
        ),
        type(f).__name__,
    )
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature
        params = None
    first = name if name.isidentifier() else "model"
    if params is not None and first in {p.name for p in params}:
        first = "model"
    return name, first, params


_APPLIERS: collections.OrderedDict = collections.OrderedDict()


def _make_applier(
    name: str, first: str, params: list | None, writes: Writes | None
) -> Any:
    def apply(model: Any, /, *args: Any, **kwargs: Any) -> Any:
        if writes is None:
            return model(*args, **kwargs)
        before = snapshot(model)
        out = model(*args, **kwargs)
        check_unwritten(model, before, name, writes)
        return out

    apply.__name__ = apply.__qualname__ = name
    if params is not None:
        model = inspect.Parameter(first, inspect.Parameter.POSITIONAL_ONLY)
        apply.__signature__ = inspect.Signature([model, *params])  # type: ignore[attr-defined]
    return apply


def _slot_name(slot: tuple, names: list[str] | None) -> str:
    kind, key = slot
    if kind == "kw":
        return key
    return names[key] if names and key < len(names) else f"args[{key}]"


def bind(f: Any, part: Split, writes: Writes | None = None) -> Any:
    """`f` taking `part`'s masked arguments: the held leaves filled back in (where
    `part` was split with `f` as its model, `applier(f, writes)` taking the model
    first; a function other than the model, given the model first, is bound as it
    is).

    The same `f` and held leaves give the same function, so JAX's caches of traces
    and compilations hit on a warm call. Any other `f` that cannot be hashed (a
    callable object JAX cannot flatten) is called through a plain function, one per
    object, which `jax.jit` can key its cache on: its arrays are then constants the
    trace closes over, as `jax.make_jaxpr(f)` shows them.
    """
    if part.model is not None and f is part.model:
        f = applier(f, writes)
    if not part.slots:
        return f if _hashable(f) else _called(f)
    try:
        key = (f, part.key())
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
    """`f` as a plain function, named and signed as `f` (its `__dict__` not copied);
    the same one for the same object while it is among the last 64."""
    hit = _CALLED.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]

    @functools.wraps(f, updated=())
    def called(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **kwargs)

    _CALLED[id(f)] = (f, called)  # holding f keeps its id from being reused
    if len(_CALLED) > 64:
        _CALLED.popitem(last=False)
    return called


_CALLED: collections.OrderedDict = collections.OrderedDict()


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


def split_model(
    f: Callable, args: tuple, fixed: frozenset[int], nums: tuple[int, ...]
) -> tuple[Callable, tuple, frozenset[int], tuple[int, ...]]:
    """`f` taking `args` with the leaves JAX cannot trace held (`split`), those
    masked arguments, and `fixed` and `nums` renumbered among them.

    A model passed as `f` (a callable pytree holding arrays: an Equinox module, a
    `jax.tree_util.Partial`) comes first, as `eqx.filter_jit(model)` traces it: its
    arrays are inputs, never differentiated, so XLA cannot fold work on its weights
    away as it folds constants. The positions at `fixed` are left whole (bound later).
    `grad_memory` and `mode_costs` differentiate such a model's input this way.

    Example:
        >>> m = jax.tree_util.Partial(jax.numpy.dot, jax.numpy.ones(2))
        >>> g, args, fixed, nums = split_model(m, (jax.numpy.ones(2),), frozenset(), (0,))
        >>> len(args), nums, float(g(*args))
        (2, (1,), 2.0)
    """
    model = f if is_model(f) else None
    shift = int(model is not None)
    called = args if model is None else (model, *args)
    fixed = frozenset(i + shift for i in fixed)
    part = split(called, {}, fixed, model=model)
    return bind(f, part), part.args, fixed, tuple(i + shift for i in nums)
