"""Tracing with JAX's own transformations: the two halves of `jax.vjp`, and `jax.jvp`.

The forward half is the jaxpr of ``jax.vjp(f, *x)``: it returns `f`'s output and the
VJP object, a pytree whose leaves are the residuals the backward pass needs (see
"First-class VJPs" in the JAX docs). The backward half is the jaxpr of calling that
object, rebuilt from its leaves, on a cotangent. Nothing here re-derives a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from jaxtour.autodiff import _args
from jaxtour.autodiff._flat import FlatJaxpr, flatten_jaxpr


@dataclass
class Call:
    """`f` split into the arguments it is differentiated in and the rest.

    `fn(diff, other)` calls `f`; arguments that are not arrays (strings, flags) are
    bound as they are. `labels` names each leaf of ``(diff, other)``.
    """

    fn: Callable
    diff: tuple
    other: tuple
    labels: list[str]

    @property
    def n_diff(self) -> int:
        return len(jax.tree.leaves(self.diff))

    def leaves(self) -> list:
        return jax.tree.leaves((self.diff, self.other))


def prepare(f: Callable, args: tuple, argnums: tuple[int, ...], who: str,
            fix: str = "leave this argument out of `argnums`") -> Call:
    """Check the arguments (`_args`), then split them as `Call` describes.

    `fix` says how to keep a non-float argument fixed (`check_differentiable`).

    Raises:
        ValueError, TypeError: as `_args.resolve_argnums` and `check_differentiable`.
    """
    argnums = _args.resolve_argnums(argnums, len(args), who)
    names = _args.arg_names(f, len(args))
    for i in argnums:
        _args.check_differentiable(args[i], names[i], i, who, fix)
    traced = [i for i in range(len(args)) if i not in argnums
              and all(_args.is_array_like(leaf) for leaf in jax.tree.leaves(args[i]))]

    def fn(diff, other):
        full = list(args)
        for i, value in [*zip(argnums, diff, strict=True), *zip(traced, other, strict=True)]:
            full[i] = value
        return f(*full)

    labels = [label for i in (*argnums, *traced) for label in _args.leaf_names(args[i], names[i])]
    # As JAX sees them: Python numbers become (weakly typed) f32/i32 arrays.
    diff, other = jax.tree.map(jnp.asarray, ([args[i] for i in argnums], [args[i] for i in traced]))
    return Call(fn, tuple(diff), tuple(other), labels)


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


def trace_vjp(call: Call, cotangent=None, values: bool = True,
              check_output: Callable | None = None) -> VJPTrace:
    """Trace `jax.vjp` of `call` and the VJP it returns; ones as cotangent by default.

    `check_output(shape)` sees the output's `ShapeDtypeStruct` pytree before the
    backward half is traced, so a bad output is reported as such.
    """
    box = {}

    def forward(diff, other):
        out, vjp_fn = jax.vjp(lambda *d: call.fn(d, other), *diff)
        residuals, box["tree"] = jax.tree.flatten(vjp_fn)
        return out, residuals

    fwd, (out_shape, res_shapes) = jax.make_jaxpr(forward, return_shape=True)(
        call.diff, call.other)
    if check_output is not None:
        check_output(out_shape)
    if cotangent is None:
        cotangent = jax.tree.map(lambda s: jnp.ones(s.shape, s.dtype), out_shape)

    def backward(residuals, ct):
        return jax.tree.unflatten(box["tree"], residuals)(ct)

    bwd = jax.make_jaxpr(backward)(res_shapes, cotangent)
    n_out = len(jax.tree.leaves(out_shape))
    fwd_flat = flatten_jaxpr(fwd, call.leaves() if values else None)
    res_values = [fwd_flat.value(v) for v in fwd_flat.outvars[n_out:]]
    bwd_args = [*res_values, *jax.tree.leaves(cotangent)] if values else None
    return VJPTrace(fwd_flat, flatten_jaxpr(bwd, bwd_args), n_out, len(res_shapes))


def trace_jvp(call: Call, tangents: tuple, values: bool = True) -> FlatJaxpr:
    """The flattened jaxpr of ``jax.jvp``: ``(primals, tangents, other) -> (out, out_dot)``."""

    def jvp(primals, tangents, other):
        return jax.jvp(lambda *p: call.fn(p, other), primals, tangents)

    closed = jax.make_jaxpr(jvp)(call.diff, tangents, call.other)
    args = jax.tree.leaves((call.diff, tangents, call.other)) if values else None
    return flatten_jaxpr(closed, args)
