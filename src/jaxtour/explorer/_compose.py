"""Composing the explorer's transformations: `jit(vmap(jvp(grad(f))))`, in that order.

The explorer's toggles name JAX transformations; `compose` applies the chosen ones to
the example function with JAX's own `jax.grad`, `jax.jvp`, `jax.vmap` and `jax.jit`, and
says in one line what it built (``jit(vmap(grad(cubic), in_axes=0))``). Keyword
arguments are held fixed with a `partial` (`vmap` would map them), and code lines name
them so (`bound_name`) and call the composition on the batch it runs on (`batch_code`).
"""

from __future__ import annotations

import ast
import contextlib
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import _ir

# `vmap` maps over a batch built from the example: this many copies along the chosen axis.
BATCH = 3


@dataclass(frozen=True)
class Transforms:
    """Which transformations to apply; `vmap` is the batch axis, or None for no `vmap`.

    Example:
        >>> Transforms(jit=True, grad=True, vmap=0).describe("cubic")
        'jit(vmap(grad(cubic), in_axes=0))'
    """

    jit: bool = False
    grad: bool = False
    jvp: bool = False
    vmap: int | None = None

    def describe(self, name: str) -> str:
        """The composition as one would write it with `jax.*`, applied to `name`."""
        text = name
        if self.grad:
            text = f"grad({text})"
        if self.jvp:
            text = f"jvp({text})"
        if self.vmap is not None:
            text = f"vmap({text}, in_axes={self.vmap})"
        if self.jit:
            text = f"jit({text})"
        return text


class Composed(NamedTuple):
    """A transformed function and the example arguments to call it with."""

    fn: Callable
    args: tuple
    label: str


def bind(f: Callable, kwargs: dict) -> Callable:
    """`f` with its keyword arguments held fixed (not differentiated, not mapped): the
    `functools.partial` a code line shows (`bound_name`), so a pasted line draws the
    same picture. A model stays a model (`Held`): a `functools.partial` of it is no
    pytree, and every view would trace its arrays as constants.

    Example:
        >>> m = jax.tree_util.Partial(jnp.dot, jnp.ones(2))
        >>> type(bind(m, {"precision": None})).__name__, _ir.is_model(bind(m, {"a": 1}))
        ('Held', True)
    """
    if not kwargs:
        return f
    return Held(f, kwargs) if _ir.is_model(f) else functools.partial(f, **kwargs)


class Held:
    """A model called with keyword arguments held fixed, ``model(*args, **kwargs)``,
    still a model (`_ir.is_model`): a pytree of the model's own children at the model's
    own paths (its leaves named as the model's), the keyword arguments held fixed.

    Code lines pass such a model's arrays as ``apply``'s first argument and write the
    keyword arguments inside ``apply`` (`_snippet.naming`).
    """

    def __init__(self, model: Any, kwargs: dict, box: _Box | None = None) -> None:
        self.model, self.kwargs = model, kwargs
        self._box = _Box(kwargs) if box is None else box
        self.__name__ = _ir.function_name(model)
        self.__signature__: inspect.Signature | None = None
        with contextlib.suppress(TypeError, ValueError):  # a builtin: no signature
            self.__signature__ = inspect.signature(functools.partial(model, **kwargs))

    def __call__(self, *args: Any) -> Any:
        return self.model(*args, **self.kwargs)


class _Box:
    """A `Held`'s keyword arguments as its treedef holds them: equal to itself alone
    (they may hold arrays), the same box for every `Held` flattened from one."""

    def __init__(self, kwargs: dict) -> None:
        self.kwargs = kwargs


def _flatten_held(h: Held) -> tuple[list, tuple]:
    pairs, tree = jax.tree_util.tree_flatten_with_path(
        h.model, is_leaf=lambda x: x is not h.model
    )
    return [(path[0], child) for path, child in pairs], (tree, h._box)


def _unflatten_held(aux: tuple, children: Any) -> Held:
    tree, box = aux
    return Held(jax.tree.unflatten(tree, children), box.kwargs, box)


jax.tree_util.register_pytree_with_keys(
    Held,
    _flatten_held,
    _unflatten_held,
    lambda h: ([c for _, c in _flatten_held(h)[0]], _flatten_held(h)[1]),
)


def bound_name(name: str, kwargs: dict) -> str:
    """How code names `f` with its keyword arguments held fixed, as `bind` holds them:
    ``partial(power, n=3)``; a value Python cannot write as a literal is read from the
    example's ``kwargs``.

    Example:
        >>> bound_name("power", {"n": 3, "w": jnp.ones(2)})
        "partial(power, n=3, w=kwargs['w'])"
    """
    if not kwargs:
        return name
    return f"partial({name}, {held_code(kwargs)})"


def held_code(kwargs: dict) -> str:
    """Keyword arguments as code passes them: ``n=3``, or read from the example's
    ``kwargs`` where Python cannot write the value as a literal.

    Example:
        >>> held_code({"n": 3, "w": jnp.ones(2)})
        "n=3, w=kwargs['w']"
    """
    return ", ".join(
        f"{k}={_literal(v) or f'kwargs[{k!r}]'}" for k, v in kwargs.items()
    )


def partial_name(f: functools.partial, name: str) -> str:
    """How code names a `functools.partial` of the function called `name`, with what it
    holds: ``partial(power, n=3)``; "" when it holds a value Python cannot write as a
    literal (code then names it ``f``, as a lambda).

    Example:
        >>> def power(x, n=2):
        ...     return x**n
        >>> partial_name(functools.partial(power, n=3), "power")
        'partial(power, n=3)'
    """
    held = [_literal(a) for a in f.args]
    held += [_literal(v) and f"{k}={_literal(v)}" for k, v in f.keywords.items()]
    if not all(held):
        return ""
    return f"partial({', '.join([name, *held])})"


def _literal(value: Any) -> str:
    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return ""
    return text if same is True else ""


def batch_code(transforms: Transforms) -> str:
    """The arguments a code line calls the composition with, as one expression: the
    example's ``args``, or with `vmap` on, the batch `compose` builds from them.

    Example:
        >>> batch_code(Transforms(vmap=1))
        'jax.tree.map(lambda a: jnp.stack([a] * 3, axis=1), args)'
    """
    if transforms.vmap is None:
        return "args"
    axis = transforms.vmap
    return f"jax.tree.map(lambda a: jnp.stack([a] * {BATCH}, axis={axis}), args)"


def compose(f: Callable, args: tuple, transforms: Transforms, name: str) -> Composed:
    """Apply `transforms` to `f` and batch `args` when `vmap` is on.

    A model as `f` (a callable pytree holding arrays: an Equinox module) is composed
    as ``Partial(jit(vmap(grad(apply, argnums=1), in_axes=(None, 0))), model)``: its
    arrays stay inputs of the program, never differentiated or mapped, as every lens
    traces a model (closed over by `jax.grad(model)`, XLA could fold them away).

    Raises:
        ValueError: the `vmap` axis does not fit an example argument.
    """
    fn, args, model = f, tuple(args), ()
    if _ir.is_model(f) and transforms != Transforms():
        # as eqx.filter_jit traces it: the model's arrays are inputs (its other leaves
        # held), never differentiated or mapped; closed over, XLA could fold them
        fn, called, _, _ = _ir.split_model(f, args, frozenset(), ())
        model, args = called[:1], called[1:]
    if transforms.grad:
        fn = jax.grad(fn, argnums=len(model))
    if transforms.jvp:
        fn = _jvp(fn, len(model))
    if transforms.vmap is not None:
        args = stack(args, transforms.vmap)
        axis = transforms.vmap
        fn = jax.vmap(fn, in_axes=(None, *[axis] * len(args)) if model else axis)
    if transforms.jit:
        fn = jax.jit(fn)
    if model:
        fn = jax.tree_util.Partial(fn, *model)
    return Composed(fn, args, transforms.describe(name))


def _jvp(f: Callable, held: int = 0) -> Callable:
    # The tangent is all ones: (primal_out, tangent_out) is f and its derivative along
    # 1, in the primals after the first `held` (a model's arrays: not differentiated).
    @functools.wraps(f)
    def pushforward(*primals: Any) -> tuple[Any, Any]:
        fixed, primals = primals[:held], primals[held:]
        return jax.jvp(functools.partial(f, *fixed), primals, ones_tangents(primals))

    return pushforward


def ones_tangents(primals: Any) -> Any:
    """A tangent of ones for every floating leaf of `primals`, as `jax.jvp` takes it;
    float0 zeros for integer, bool and key leaves, which have no tangent space.

    Example:
        >>> ones_tangents((jnp.zeros(2), 3))[0]
        Array([1., 1.], dtype=float32)
    """
    return jax.tree.map(_ones_tangent, primals)


def _ones_tangent(x: Any) -> Any:
    if has_tangent(x):
        return jnp.ones_like(x)
    return np.zeros(np.shape(x), dtype=jax.dtypes.float0)


def has_tangent(x: Any) -> bool:
    """Whether a leaf is floating (or complex): one `jax.jvp` gives a tangent of its dtype.

    Example:
        >>> has_tangent(0.5), has_tangent(jnp.arange(3))
        (True, False)
    """
    dtype = x.dtype if hasattr(x, "dtype") else jnp.result_type(x)
    return bool(jnp.issubdtype(dtype, jnp.inexact))


def stack(args: tuple, axis: int) -> tuple:
    """`BATCH` copies of every example leaf stacked along `axis`, as `vmap` will map.

    Raises:
        ValueError: `axis` is beyond a leaf's dimensions (a scalar has only axis 0).
    """
    leaves = jax.tree_util.tree_flatten_with_path(args)[0]
    for path, leaf in leaves:
        ndim = np.ndim(leaf)
        if not -(ndim + 1) <= axis <= ndim:
            raise ValueError(
                f"vmap over axis {axis} does not fit args{jax.tree_util.keystr(path)}, "
                f"which has {ndim} dimension{'s' * (ndim != 1)}: the batch axis can be "
                f"0 to {ndim}. Choose a smaller axis, or axis 0."
            )
    return jax.tree.map(lambda x: _stacked(x, axis), args)


def _stacked(x: Any, axis: int) -> Any:
    # A `jax.ref` Ref (mutable state) is batched as a Ref of the stacked values: `vmap`
    # maps over Refs as over arrays, and the step can still write to it.
    if _is_ref(x):
        return jax.ref.new_ref(jnp.stack([x[...]] * BATCH, axis=axis))
    return jnp.stack([jnp.asarray(x)] * BATCH, axis=axis)


def _is_ref(x: Any) -> bool:
    ref = getattr(jax, "ref", None)
    return ref is not None and isinstance(x, ref.Ref)
