"""Checking and naming the arguments a drawing differentiates.

Every check raises before JAX does, with what went wrong and what to do instead.
"""

from __future__ import annotations

import inspect
import numbers
import sys
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._ir import (
    dtype_of,
    function_name,
    is_array_like,
    is_differentiable,
    type_str,
)


def leaf_names(value: Any, name: str) -> list[str]:
    """One label per leaf of `value`: ``x`` or ``params['w1']`` (None is an empty
    pytree, as in JAX)."""
    paths, _ = jax.tree_util.tree_flatten_with_path(value)
    return [name + jax.tree_util.keystr(path) for path, _ in paths]


def _module_types() -> tuple[type, ...]:
    """Equinox and Flax NNX module types, where the user has imported them."""
    found: list[type] = []
    eqx = sys.modules.get("equinox")
    nnx = sys.modules.get("flax.nnx")
    if eqx is not None:
        found.append(eqx.Module)
    if nnx is not None:
        found.append(getattr(nnx, "Pytree", None) or nnx.Module)
    return tuple(found)


def is_filtered(value: Any) -> bool:
    """Whether `value` is differentiated leaf by leaf, as `eqx.filter_grad` and
    `nnx.grad` do: it holds a module, or leaves JAX cannot trace (a function, a
    string). A plain pytree of arrays is differentiated whole, as by `jax.grad`."""
    types = _module_types()
    nodes = jax.tree.leaves(value, is_leaf=lambda x: isinstance(x, types))
    return any(isinstance(n, types) or not is_array_like(n) for n in nodes)


def diff_mask(value: Any) -> list[bool]:
    """Per leaf of `value`: whether a filtered gradient takes it. Floating-point leaves,
    as `eqx.filter_grad`; inside a Flax NNX variable, only an `nnx.Param`'s, as
    `nnx.grad`'s default `wrt`."""
    nnx = sys.modules.get("flax.nnx")
    if nnx is None:
        return [is_differentiable(leaf) for leaf in jax.tree.leaves(value)]
    mask: list[bool] = []
    for node in jax.tree.leaves(value, is_leaf=lambda x: isinstance(x, nnx.Variable)):
        if isinstance(node, nnx.Variable):
            param = isinstance(node, nnx.Param)
            mask += [
                param and is_differentiable(leaf) for leaf in jax.tree.leaves(node)
            ]
        else:
            mask.append(is_differentiable(node))
    return mask


def tree_name(value: Any, name: str) -> str:
    """What a folded picture calls a pytree argument: ``params · list of 3 dicts``."""
    kind = type(value).__name__
    if isinstance(value, list | tuple | dict) and value:
        inner = {
            type(v).__name__
            for v in (value.values() if isinstance(value, dict) else value)
        }
        kind += f" of {len(value)}" + (f" {inner.pop()}s" if len(inner) == 1 else "")
    return f"{name} · {kind}"


def is_key(leaf: Any) -> bool:
    """Whether `leaf` is a typed PRNG key array (`jax.random.key`)."""
    return hasattr(leaf, "dtype") and jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)


def check_differentiable(
    value: Any,
    name: str,
    position: int,
    who: str,
    fix: str = "leave this argument out of `argnums`",
    holomorphic: bool = False,
) -> None:
    """Every leaf of argument `position` must be a floating-point array or number
    (complex, with `holomorphic`, as `jax.grad` asks).

    `fix` ends the message: how to keep a non-float argument out of differentiation.

    Raises:
        TypeError: a leaf is not an array (a string, None, an object), is a PRNG key,
            or holds integers or booleans.
    """
    leaves = jax.tree.leaves(value)
    for label, leaf in zip(leaf_names(value, name), leaves, strict=True):
        where = f"{who} cannot differentiate with respect to argument {position} (`{label}`)"
        if not is_array_like(leaf):
            what = (
                "None" if leaf is None else f"a {type(leaf).__name__} ({_short(leaf)})"
            )
            raise TypeError(
                f"{where}: it is {what}, not a number or an array. JAX differentiates "
                f"floating-point arrays only: pass e.g. 1.0 or jnp.array([...]), or {fix}."
            )
        if is_key(leaf):
            raise TypeError(
                f"{where}: it is a PRNG key ({leaf.dtype}), and JAX does not differentiate "
                f"keys (as in jax.grad); {fix}."
            )
        if holomorphic and not jnp.issubdtype(dtype_of(leaf), jnp.complexfloating):
            raise TypeError(
                f"{where}: holomorphic=True needs complex inputs (as in jax.grad); it holds "
                f"{_kind(leaf)}. Pass x.astype(jnp.complex64)."
            )
        if not is_differentiable(leaf):
            dtype = dtype_of(leaf)
            kind = (
                type(leaf).__name__ if isinstance(leaf, numbers.Number) else str(dtype)
            )
            raise TypeError(
                f"{where}: it holds {kind} values, and gradients need floating-point inputs "
                f"(as in jax.grad). Pass 1.0 rather than 1, or x.astype(jnp.float32); to "
                f"keep an integer argument fixed, {fix}."
            )


def _short(leaf: Any) -> str:
    text = repr(leaf)
    return text if len(text) <= 30 else text[:27] + "..."


def check_scalar_output(
    shape: jax.ShapeDtypeStruct, who: str, holomorphic: bool = False
) -> None:
    """`draw_grad`, like `jax.grad`, needs `f` to return one real scalar (a complex one
    with `holomorphic`).

    Raises:
        ValueError: `f` returned a pytree or a non-scalar array.
        TypeError: `f` returned an integer scalar, or a complex one without `holomorphic`.
    """
    leaves = jax.tree.leaves(shape)
    if (
        len(leaves) != 1
        or not isinstance(shape, jax.ShapeDtypeStruct)
        or shape.shape != ()
    ):
        types = ", ".join(type_str(s) for s in leaves)
        got = (
            type_str(shape)
            if isinstance(shape, jax.ShapeDtypeStruct)
            else f"a {type(shape).__name__} ({types})"
            if leaves
            else "nothing"
        )
        raise ValueError(
            f"{who} needs f to return a scalar, as jax.grad does; f returned {got}. To draw "
            f"the backward pass for any output, use {_vjp_lens(who)}(f)(*args); or reduce "
            f"the output to a scalar, e.g. {who}(lambda x: f(x).sum())(x)."
        )
    wanted = jnp.complexfloating if holomorphic else jnp.floating
    if not jnp.issubdtype(shape.dtype, wanted):
        raise TypeError(
            f"{who} needs f to return a {'complex' if holomorphic else 'real floating-point'} "
            f"scalar; f returned {type_str(shape)}. Return a float (e.g. "
            ".astype(jnp.float32)); use holomorphic=True for a holomorphic complex function, "
            f"or {_vjp_lens(who)} for other complex outputs."
        )


def _vjp_lens(who: str) -> str:
    """The lens for any output beside `who`: `vjp_graph` beside `grad_graph`."""
    return "vjp_graph" if who.endswith("_graph") else "draw_vjp"


def positional_statics(f: Any, statics: Any, who: str, transform: str) -> None:
    """Refuses a static name that is keyword-only in `f`: the lens's function takes
    `f`'s primals by position, as `jax.{transform}` does, so such an argument has no way
    in.

    Raises:
        TypeError: a name in `statics.names` is a keyword-only parameter of `f`.
    """
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):  # no signature Python can read: jax.jit checks
        return
    for name in statics.names:
        if name in params and params[name].kind == params[name].KEYWORD_ONLY:
            fname = getattr(f, "__name__", "f")
            raise TypeError(
                f"{who}: `{name}` is a keyword-only parameter of {fname}, and "
                f"{who}(f)(…) takes f's primals by position, as jax.{transform} does. "
                f"Bind it first: {who}(functools.partial({fname}, {name}=…))."
            )


def check_some_differentiable(primals: list[Any], f: Any, who: str) -> None:
    """`jax.vjp`, `jax.jvp` and `jax.grad(allow_int=True)` take integer primals
    (their cotangents, tangents and gradients are float0, empty); a drawing needs one
    floating-point primal to have a derivative to draw.

    Raises:
        TypeError: no leaf of `primals` is a floating-point array or number.
    """
    leaves = jax.tree.leaves(primals)
    if any(is_differentiable(leaf) for leaf in leaves):
        return
    name, fix = function_name(f), "Pass a floating-point primal (1.0 rather than 1, "
    fix += "or x.astype(jnp.float32))."
    if not leaves:
        raise TypeError(
            f"{who}: {name} got no primal arrays, so there is no derivative to draw. {fix}"
        )
    kinds = ", ".join(sorted({_kind(leaf) for leaf in leaves}))
    what = {
        "vjp": "jax.vjp takes them, but their cotangents are float0 (empty)",
        "jvp": "jax.jvp takes them only with float0 tangents, which are empty",
    }.get(
        who.removeprefix("draw_").removesuffix("_graph"),
        "jax.grad(allow_int=True) takes them, but their gradients are float0",
    )
    raise TypeError(
        f"{who}: {name}'s primals hold {kinds}, and no floating-point value: {what}, "
        f"so there is no derivative to draw. {fix}"
    )


def _kind(leaf: Any) -> str:
    """ "int32 values", "int values" (a Python number), "PRNG keys"."""
    if is_key(leaf):
        return "PRNG keys"
    python = isinstance(leaf, numbers.Number) and not isinstance(leaf, np.generic)
    return f"{type(leaf).__name__ if python else np.dtype(dtype_of(leaf)).name} values"


def refuse_keywords(f: Any, keywords: dict, who: str) -> None:
    """`jax.vjp` takes `f`'s primals by position only; so does `who`'s function.

    Raises:
        TypeError: always, naming the keywords and the positional call.
    """
    names = ", ".join(f"`{k}`" for k in keywords)
    raise TypeError(
        f"{who}(f)(…) takes {function_name(f)}'s primals by position, as "
        f"jax.{who.removeprefix('draw_')} does, and got {names} by keyword. Pass "
        "them by position (a static one too, held by static_argnames); bind a "
        f"keyword-only one first: {who}(functools.partial(f, …))."
    )
