"""What `draw_jvp` and `draw_vjp` take beside the primals, checked as `jax.jvp` and
`jax.vjp` check them: the tangents (one per primal; None, or a float0 zero, at a static
one) and the cotangents, each matching in structure and shape.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._ir import type_str
from jaxtour.autodiff import _args


def diff_tangents(
    primals: tuple, tangents: tuple, static: frozenset[int] = frozenset()
) -> tuple:
    """The tangent leaves of the differentiated (floating-point) primal leaves of the
    primals that are not static."""
    keep = [i for i in range(len(primals)) if i not in static]
    pairs = zip(
        jax.tree.leaves([primals[i] for i in keep], is_leaf=_is_none),
        jax.tree.leaves([tangents[i] for i in keep], is_leaf=_is_none),
        strict=True,
    )
    return tuple(jnp.asarray(t) for p, t in pairs if _args.is_differentiable(p))


def _is_none(x: Any) -> bool:
    return x is None


def two_tuples(pair: tuple, who: str) -> tuple[Any, Any]:
    """`who`'s function takes ``(primals, tangents)``, as `jax.jvp` does.

    Raises:
        TypeError: not two arguments, naming what came.
    """
    if len(pair) != 2:
        got = ", ".join(type(a).__name__ for a in pair)
        _not_two_tuples(
            who,
            f"{len(pair)} argument{'s' * (len(pair) != 1)}"
            + (f" ({got})" if pair else ""),
        )
    return pair[0], pair[1]


def _not_two_tuples(who: str, got: str) -> None:
    raise TypeError(
        f"{who}(f)(primals, tangents) takes two tuples, as jax.jvp does; got {got}. "
        f"For one argument write {who}(f)((x,), (1.0,))."
    )


def check_pair(
    primals: Any,
    tangents: Any,
    static: frozenset[int] = frozenset(),
    who: str = "draw_jvp",
) -> tuple[tuple, tuple]:
    """The primals and one tangent per primal, as tuples; None (or, at a static
    primal, a float0 zero) stands for the float0 tangent of a primal not differentiated.

    Raises:
        TypeError: either is not a tuple, or the tangents do not match the primals.
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        _not_two_tuples(who, f"{type(primals).__name__} and {type(tangents).__name__}")
    if static:
        primals, tangents = (
            tuple(primals),
            _static_tangents(primals, tangents, static, who),
        )
    if len(tangents) == len(primals):
        tangents = tuple(
            jax.tree.map(lambda p: np.zeros(np.shape(p), jax.dtypes.float0), p)
            if t is None
            and not any(_args.is_differentiable(x) for x in jax.tree.leaves(p))
            else t
            for p, t in zip(primals, tangents, strict=True)
        )
    check_like(tuple(tangents), who, "tangents", "the primals", tuple(primals))
    return tuple(primals), tuple(tangents)


def _static_tangents(
    primals: Any, tangents: Any, static: frozenset[int], who: str
) -> tuple:
    """One tangent per primal: a static primal's is itself (never read), where the
    tangents were given for the other primals only, or as None or a float0 zero (what
    `jax.jvp` takes for an integer) at a static one.

    Raises:
        TypeError: neither one tangent per primal nor one per non-static primal, or
            a static primal's tangent that is neither None nor float0.
    """
    n, dynamic = len(primals), [i for i in range(len(primals)) if i not in static]
    if len(tangents) == len(dynamic) != n:
        given = dict(zip(dynamic, tangents, strict=True))
        return tuple(given.get(i, primals[i]) for i in range(n))
    where = f"{who}: with static arguments at positions {sorted(static)}"
    if len(tangents) != n:
        raise TypeError(
            f"{where}, pass one tangent per primal ({n}; None or a float0 zero at a "
            f"static one) or one for each of the other {len(dynamic)}; got "
            f"{len(tangents)} tangents."
        )
    wrong = [i for i in sorted(static) if not _empty_tangent(tangents[i])]
    if wrong:
        i = wrong[0]
        raise TypeError(
            f"{where}, a static primal's tangent is never read: give None (or a float0 "
            f"zero, as jax.jvp takes) at position {i}, or leave it out; got "
            f"{_describe(tangents[i])}."
        )
    return tuple(primals[i] if i in static else t for i, t in enumerate(tangents))


def _empty_tangent(tangent: Any) -> bool:
    """None, or a pytree of float0 zeros: the tangent `jax.jvp` takes where none exists."""
    leaves = jax.tree.leaves(tangent)
    return tangent is None or (
        bool(leaves)
        and all(getattr(x, "dtype", None) == jax.dtypes.float0 for x in leaves)
    )


def check_like(given: Any, who: str, what: str, like_what: str, like: Any) -> None:
    """`given` must have `like`'s tree structure and shapes (`given` None: nothing to check).

    Raises:
        TypeError: naming both structures and types.
    """
    if given is None:
        return
    same = str(jax.tree.structure(given)) == str(jax.tree.structure(like)) and all(
        np.shape(a) == tuple(b.shape if hasattr(b, "shape") else np.shape(b))
        for a, b in zip(jax.tree.leaves(given), jax.tree.leaves(like), strict=True)
    )
    if not same:
        apart = str(jax.tree.structure(given)) != str(jax.tree.structure(like))
        show = _describe_tree if apart else _describe
        raise TypeError(
            f"{who}: {what} must match {like_what} in structure and shape; expected "
            f"{show(like)}, got {show(given)}."
        )


def _describe(tree: Any) -> str:
    leaves = [type_str(_typed(x)) for x in jax.tree.leaves(tree)]
    return f"({', '.join(leaves)})" if len(leaves) != 1 else leaves[0]


class _Type(str):
    """A leaf's type, written bare where its pytree is printed: ``{'a': f32[]}``."""

    def __repr__(self) -> str:
        return str(self)


def _describe_tree(tree: Any) -> str:
    """`tree` with each leaf written as its type: ``{'a': f32[], 'b': f32[3]}``."""
    types = [_Type(type_str(_typed(x))) for x in jax.tree.leaves(tree)]
    try:
        return repr(jax.tree.unflatten(jax.tree.structure(tree), types))
    except (TypeError, ValueError):  # a pytree whose unflatten checks its leaves
        return f"{jax.tree.structure(tree)} of {_describe(tree)}"


def _typed(x: Any) -> Any:
    """`x`'s type as JAX reads it: a Python float is f32 (weakly typed), not f64."""
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return x
    dtype = jnp.result_type(x) if _args.is_array_like(x) else np.result_type(x)
    return jax.ShapeDtypeStruct(np.shape(x), dtype)
