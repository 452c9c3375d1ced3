"""Tracing with JAX's own transformations: the two halves of `jax.vjp`, and `jax.jvp`.

The forward half is the jaxpr of ``jax.vjp(f, *x)``: it returns `f`'s output and the
VJP object, a pytree whose leaves are the residuals the backward pass needs (see
"First-class VJPs" in the JAX docs). The backward half is the jaxpr of calling that
object, rebuilt from its leaves, on a cotangent. Nothing here re-derives a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.tree_util import keystr

from jaxtour._ir import (
    FlatJaxpr,
    StaticArgs,
    arg_names,
    flatten_jaxpr,
    is_int_scalar,
    resolve_argnums,
)
from jaxtour.autodiff import _args


@dataclass
class Call:
    """`f` split, leaf by leaf, into the values it is differentiated in and the rest.

    `fn(diff, other)` calls `f` from two flat tuples of leaves; leaves that are not
    arrays (strings, flags) are bound as they are. `labels` names each leaf of
    ``diff + other``; `aux` is whether `f` returns ``(output, aux)``.
    """

    fn: Callable
    diff: tuple
    other: tuple
    labels: list[str]
    aux: bool = False
    groups: list[str] | None = None  # per leaf: its argument (`_args.tree_name`)
    held: list[str] = field(default_factory=list)  # of `argnums`, not differentiated
    positions: frozenset[int] = frozenset()  # the arguments with a differentiated leaf

    def held_note(self, limit: int = 4) -> str:
        """The picture's line naming the leaves held fixed ("" when none)."""
        if not self.held:
            return ""
        shown = ", ".join(self.held[:limit])
        more = len(self.held) - limit
        return (
            "held fixed (not differentiated): "
            + shown
            + (f" and {more} more" if more > 0 else "")
        )

    @property
    def n_diff(self) -> int:
        return len(self.diff)

    def leaves(self) -> list:
        return [*self.diff, *self.other]


NO_STATICS = StaticArgs()


def prepare(
    f: Callable,
    args: tuple,
    argnums: tuple[int, ...],
    who: str,
    fix: str = "leave this argument out of `argnums`",
    *,
    strict: bool = True,
    holomorphic: bool = False,
    has_aux: bool = False,
    statics: StaticArgs = NO_STATICS,
) -> Call:
    """Check the arguments (`_args`), then split them into leaves as `Call` describes.

    With `strict` (as `jax.grad`), every leaf of a plain pytree in `argnums` must be
    differentiable; a module, or a pytree holding functions or strings, is filtered as
    `eqx.filter_grad` and `nnx.grad` filter it (`_args.diff_mask`). Without `strict`
    (as `jax.vjp` and `jax.jvp`), integer, boolean and key leaves are kept fixed, as JAX
    does with its float0 tangents. Integer and boolean scalars outside `argnums`
    (Python's, NumPy's or JAX's) are bound as they are, as `jax.grad` leaves them
    (`range(n)`, `x[:n]` work); so is every leaf JAX cannot trace. None is an empty
    pytree, as in JAX. The arguments `statics` makes static (as `jax.jit` would) are
    bound as they are, never differentiated. `diff` follows `argnums`' order.

    Raises:
        ValueError, TypeError: as `resolve_argnums`, `StaticArgs.check_values` and
            `check_differentiable`.
    """
    static = statics.positions(len(args))
    argnums = resolve_argnums(argnums, len(args), who, static)
    names = arg_names(f, len(args))
    statics.check_values(args, {}, who, names)
    masks = {i: _mask(args[i], strict) for i in argnums}
    if not strict and not any(any(m) for m in masks.values()):
        for i in argnums:  # a leaf JAX cannot take at all (a string) is named
            if not all(map(_args.is_array_like, jax.tree.leaves(args[i]))):
                _args.check_differentiable(args[i], names[i], i, who, fix, holomorphic)
        _args.check_some_differentiable([args[i] for i in argnums], f, who)
    if strict:
        for i in argnums:  # all must be (as jax.grad asks)
            if not (strict and _args.is_filtered(args[i]) and any(masks[i])):
                _args.check_differentiable(args[i], names[i], i, who, fix, holomorphic)
    flat: list[Any] = []
    trees: list[Any] = []
    slots: dict[str, list] = {"diff": [], "other": [], "held": []}
    held: list[str] = []  # leaves of the arguments in `argnums` not differentiated
    for i, arg in enumerate(args):
        leaves, tree = jax.tree.flatten(arg)
        trees.append(tree)
        group = _args.tree_name(arg, names[i])
        labels = _args.leaf_names(arg, names[i])
        mask = masks.get(i, [False] * len(leaves))
        for label, leaf, take in zip(labels, leaves, mask, strict=True):
            slot = (
                "held"
                if i in static
                else "diff"
                if take
                else _fixed_slot(leaf, i in argnums)
            )
            if i in argnums and not take:
                held.append(label)
            slots[slot].append((len(flat), label, leaf, group, i))
            flat.append(leaf)
    diff = sorted(slots["diff"], key=lambda s: argnums.index(s[4]))  # as grad gives
    other = slots["other"]

    def fn(diff_leaves: Any, other_leaves: Any) -> Any:
        full = list(flat)
        for (k, *_), value in [
            *zip(diff, diff_leaves, strict=True),
            *zip(other, other_leaves, strict=True),
        ]:
            full[k] = value
        rebuilt, start = [], 0
        for tree in trees:
            rebuilt.append(
                jax.tree.unflatten(tree, full[start : start + tree.num_leaves])
            )
            start += tree.num_leaves
        return f(*rebuilt)

    return Call(
        fn,
        tuple(_as_jax(s[2]) for s in diff),
        tuple(_as_jax(s[2]) for s in other),
        [s[1] for s in (*diff, *other)],
        has_aux,
        [s[3] for s in (*diff, *other)],
        held,
        frozenset(i for i in argnums if i not in static and any(masks[i])),
    )


def _mask(arg: Any, strict: bool) -> list[bool]:
    if strict and not _args.is_filtered(arg):
        return [True] * len(jax.tree.leaves(arg))
    if strict:
        return _args.diff_mask(arg)
    return [_args.is_differentiable(leaf) for leaf in jax.tree.leaves(arg)]


def _fixed_slot(leaf: Any, differentiated_arg: bool) -> str:
    """Where a leaf not differentiated goes: traced as a fixed input, or held as it is
    (what JAX cannot trace; an integer or boolean scalar outside `argnums`, Python's,
    NumPy's or JAX's, which `jax.grad` passes to `f` as it is: a size, a count)."""
    if not _args.is_array_like(leaf):
        return "held"
    if not differentiated_arg and is_int_scalar(leaf):
        return "held"
    return "other"


def _as_jax(leaf: Any) -> Any:
    # As JAX sees them: Python numbers become (weakly typed) f32/i32 arrays.
    return leaf if isinstance(leaf, jax.Array) else jnp.asarray(leaf)


@dataclass
class VJPTrace:
    """Both halves of reverse mode, flattened (and evaluated when asked).

    forward: ``(diff leaves, other leaves) -> (output leaves, residual leaves)``.
    backward: ``(residual leaves, cotangent leaves) -> gradient leaves``.
    """

    forward: FlatJaxpr
    backward: FlatJaxpr
    n_out: int
    n_res: int
    n_aux: int = 0
    paths: list[str] = field(default_factory=list)  # per output leaf, then aux leaf
    held_aux: list = field(default_factory=list)  # (path, value): aux JAX cannot trace


def trace_vjp(
    call: Call,
    cotangent: Any = None,
    values: bool = True,
    check_output: Callable | None = None,
) -> VJPTrace:
    """Trace `jax.vjp` of `call` and the VJP it returns; ones as cotangent by default.

    `check_output(shape)` sees the output's `ShapeDtypeStruct` pytree before the
    backward half is traced, so a bad output is reported as such. With ``call.aux``,
    `f`'s aux leaves follow its outputs (and count in `n_out`).
    """
    box = {}

    def forward(diff: Any, other: Any) -> Any:
        fn = lambda *d: call.fn(d, other)
        got: tuple = (
            jax.vjp(fn, *diff, has_aux=True) if call.aux else jax.vjp(fn, *diff)
        )
        residuals, box["tree"] = jax.tree.flatten(got[1])
        aux, box["held"] = split_aux(got[2]) if call.aux else ((), [])
        box["aux"] = _args.leaf_names(aux, "")
        return (got[0], aux), residuals

    fwd, ((out_shape, _), res_shapes) = jax.make_jaxpr(forward, return_shape=True)(
        call.diff, call.other
    )
    if check_output is not None:
        check_output(out_shape)
    if cotangent is None:
        cotangent = default_cotangent(out_shape)

    def backward(residuals: Any, ct: Any) -> Any:
        return jax.tree.unflatten(box["tree"], residuals)(ct)

    bwd = jax.make_jaxpr(backward)(res_shapes, cotangent)
    paths = [*_args.leaf_names(out_shape, ""), *box["aux"]]
    n_out = len(paths)
    fwd_flat = flatten_jaxpr(fwd, call.leaves() if values else None)
    res_values = [fwd_flat.value(v) for v in fwd_flat.outvars[n_out:]]
    bwd_args = [*res_values, *jax.tree.leaves(cotangent)] if values else None
    return VJPTrace(
        fwd_flat,
        flatten_jaxpr(bwd, bwd_args),
        n_out,
        len(res_shapes),
        len(box["aux"]),
        paths,
        box["held"],
    )


def split_aux(aux: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """`aux` with the leaves JAX cannot trace (a string, an object) left out, and
    those leaves by path: `jax.grad` returns them as they are, so a trace returns the
    rest and the picture names them (`_adgraph.aux_note`)."""
    paths, tree = jax.tree_util.tree_flatten_with_path(aux)
    held = [(keystr(p), x) for p, x in paths if not _args.is_array_like(x)]
    kept = [x if _args.is_array_like(x) else None for _, x in paths]
    return jax.tree.unflatten(tree, kept), held


def default_cotangent(out_shape: Any) -> Any:
    """Ones shaped like each output, of its type and sharding (float0 zeros for an
    integer, boolean or key output, as `jax.vjp` asks)."""

    def ones(s: Any) -> Any:
        if not jnp.issubdtype(s.dtype, jnp.inexact):
            return np.zeros(s.shape, jax.dtypes.float0)
        sharding = getattr(s, "sharding", None)
        if sharding is None or not any(getattr(sharding, "spec", None) or ()):
            return jnp.ones(s.shape, s.dtype)
        # An explicitly sharded output: the cotangent must carry the same sharding.
        return jax.jit(lambda: jax.lax.full(s.shape, 1, s.dtype, sharding=sharding))()

    return jax.tree.map(ones, out_shape)


def trace_jvp(
    call: Call, tangents: tuple, values: bool = True
) -> tuple[FlatJaxpr, list[str], list[str], list[tuple[str, Any]]]:
    """The flattened jaxpr of ``jax.jvp``: ``(primals, tangents, other) -> (out, out_dot,
    aux)``, the path of each output leaf and of each aux leaf (``['a']``, "" for
    a lone array), and the aux leaves JAX cannot trace, by path (`split_aux`).

    `tangents` holds one leaf per differentiated leaf (``call.diff``).
    """
    box: dict = {"held": []}

    def jvp(primals: Any, tangents: Any, other: Any) -> Any:
        got = jax.jvp(lambda *p: call.fn(p, other), primals, tangents, has_aux=call.aux)
        if not call.aux:
            return got
        aux, box["held"] = split_aux(got[2])
        return (*got[:2], aux)

    closed, shapes = jax.make_jaxpr(jvp, return_shape=True)(
        call.diff, tangents, call.other
    )
    args = [*call.diff, *tangents, *call.other] if values else None
    aux = _args.leaf_names(shapes[2], "") if call.aux else []
    paths = _args.leaf_names(shapes[0], "")
    return flatten_jaxpr(closed, args), paths, aux, box["held"]
