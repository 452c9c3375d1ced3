"""What `grad_memory` does to `f`'s arguments before it differentiates, as `jax.grad`
would take them: a model passed as `f` made the first argument (its arrays inputs, not
constants), leaves JAX cannot trace held, Python ints bound, the floating leaves of the
differentiated ones picked."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

from jaxtour import _ir


def python_scalars(args: tuple, nums: tuple[int, ...]) -> frozenset[int]:
    """Arguments outside `nums` that are Python ints or bools: `jax.grad` passes them
    on as they are, so they are bound, not traced."""
    return frozenset(
        i for i, a in enumerate(args) if i not in nums and isinstance(a, int)
    )


def bound(
    f: Callable, args: tuple, fixed: frozenset[int], nums: tuple[int, ...]
) -> tuple[Callable, tuple, tuple[int, ...]]:
    """`f` with the arguments at `fixed` bound, its other arguments, and `nums`
    renumbered among them (the same bound values give the same function: warm)."""
    if not fixed:
        return f, args, nums
    kept = [i for i in range(len(args)) if i not in fixed]
    values = tuple((i, args[i]) for i in sorted(fixed))
    try:
        g = _bind(f, values, len(args))
    except TypeError:  # f itself unhashable
        g = _bind.__wrapped__(f, values, len(args))
    return g, tuple(args[i] for i in kept), tuple(kept.index(i) for i in nums)


@functools.lru_cache(maxsize=32)
def _bind(f: Callable, values: tuple, nargs: int) -> Callable:
    bound = dict(values)

    @functools.wraps(f)
    def g(*dynamic: Any) -> Any:
        rest = iter(dynamic)
        return f(*(bound[i] if i in bound else next(rest) for i in range(nargs)))

    del g.__wrapped__  # its signature is the dynamic arguments', not f's
    return g


def check_floating(
    args: tuple, nums: tuple[int, ...], names: list[str], allow_int: bool = False
) -> None:
    """Some leaf of the differentiated arguments must be floating, as `jax.grad` asks:
    integer leaves alone would give an empty report, not an error. An empty pytree
    (``{}``, None) is taken, as `jax.grad` takes it; integer leaves alone too, with
    `allow_int` (their gradients float0)."""
    leaves = [leaf for i in nums for leaf in jax.tree.leaves(args[i])]
    if not leaves or any(_ir.is_differentiable(leaf) for leaf in leaves):
        return  # the others are held fixed (`floating`), as `eqx.filter_grad` holds them
    which = ", ".join(f"{i} (`{names[i]}`)" for i in nums)
    where = f"grad_memory cannot differentiate with respect to argument {which}"
    shapes = [leaf for leaf in leaves if isinstance(leaf, jax.ShapeDtypeStruct)]
    if shapes:  # a shape without values: jax.grad takes none
        raise TypeError(
            f"{where}: it holds a ShapeDtypeStruct ({_ir.type_str(shapes[0])}), a shape "
            "without values, and jax.grad differentiates arrays. Pass an array of "
            "that shape: jnp.zeros(s.shape, s.dtype)."
        )
    for leaf in leaves:
        if not _ir.is_array_like(leaf):
            raise TypeError(
                f"{where}: it holds {_ir.describe(leaf, 30)}, not a number or an array, "
                "and jax.grad differentiates floating-point arrays. Pass e.g. 1.0 or "
                "jnp.array([...]), or leave this argument out of `argnums`."
            )
    if not allow_int:
        raise TypeError(
            f"{where}: it holds no floating-point values, and gradients need "
            "floating-point inputs (as in jax.grad). Pass 1.0 rather than 1, or "
            "x.astype(jnp.float32); or allow_int=True, as jax.grad takes (their "
            "gradients float0)."
        )


def output_of(g: Callable, args: tuple, f: Callable, given: tuple, told: tuple) -> Any:
    """`g`'s output shapes (`jax.eval_shape`); a value `f` needed in Python that was
    traced (a Python `if` on an argument) retold as `draw_grad` tells it.

    `given` holds the arguments `f` was called with, and `told` their static positions
    and those differentiated.
    """
    try:
        return jax.eval_shape(g, *args)
    except _ir.CONCRETE as err:
        if not _ir.needs_concrete(err):
            raise
        static, nums = told
        raise _ir.concrete_error(
            err, f, given, static, "grad_memory", frozenset(nums)
        ) from err


def check_scalar(out: Any, f: Callable, has_aux: bool) -> None:
    """`f`'s loss must be a scalar, as `jax.grad` asks; named by type (``f32[3]``).

    Raises:
        TypeError: the loss (`out`, its shapes) is not a scalar.
    """
    if getattr(out, "shape", None) == ():
        return
    raise TypeError(
        f"grad_memory needs f to return a scalar, as jax.grad does; "
        f"{_ir.function_name(f)} returns {shown(out)}. Reduce it first (e.g. .sum())"
        + ("." if has_aux else "; if it returns (loss, aux), pass has_aux=True.")
    )


def shown(out: Any) -> str:
    """What `f` returned, by type: ``f32[3]``, ``a tuple (f32[3], f32[])``; a value
    that is not arrays as itself."""
    leaves = jax.tree.leaves(out)
    if not leaves or not all(
        hasattr(x, "shape") and hasattr(x, "dtype") for x in leaves
    ):
        return _ir.describe(out)
    types = ", ".join(_ir.type_str(x) for x in leaves)
    return types if leaves == [out] else f"a {type(out).__name__} ({types})"


def floating(g: Callable, args: tuple, nums: tuple) -> tuple[Callable, tuple, tuple]:
    """`g` differentiated in the floating leaves of `args[nums]` only, as `nnx.grad`
    and `eqx.filter_grad` take a model with integer leaves (an NNX `Rngs` counter)."""
    leaves, tree = jax.tree.flatten(tuple(args[i] for i in nums))
    take = [k for k, leaf in enumerate(leaves) if _ir.is_differentiable(leaf)]
    if len(take) == len(leaves):
        return g, args, nums
    try:
        h = _floating_fn(g, tree, tuple(take), nums)
    except TypeError:  # an unhashable g: a fresh function (no warm cache)
        h = _floating_fn.__wrapped__(g, tree, tuple(take), nums)
    return h, ([leaves[k] for k in take], *args), (0,)


@functools.lru_cache(maxsize=32)
def _floating_fn(g: Callable, tree: Any, take: tuple, nums: tuple) -> Callable:
    def h(diff: list, *full: Any) -> Any:
        fixed = jax.tree.leaves(tuple(full[i] for i in nums))
        for k, value in zip(take, diff, strict=True):
            fixed[k] = value
        rebuilt = list(full)
        for i, value in zip(nums, jax.tree.unflatten(tree, fixed), strict=True):
            rebuilt[i] = value
        return g(*rebuilt)

    return h
