"""`draw_jvp` (primal and tangent lanes side by side), `draw_vjp` (forward, transpose)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Unpack

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._diagram import Diagram
from jaxtour._ir import StaticArgs, static_args, statics_for, type_str
from jaxtour.autodiff import _args
from jaxtour.autodiff._adgraph import ADGraph
from jaxtour.autodiff._display import Display, display_options, lists_display_options
from jaxtour.autodiff._dot import to_diagram
from jaxtour.autodiff._forward_mode import forward_mode_graph
from jaxtour.autodiff._grad_graph import (
    callable_and_argnums,
    function_name,
    reverse_graph,
)
from jaxtour.autodiff._trace import (
    CONCRETE,
    Call,
    concrete_error,
    needs_concrete,
    prepare,
    trace_jvp,
    trace_vjp,
)

# How to keep an argument out of differentiation where every argument is differentiated.
_FIX = "close over it: draw it as a function of the others, e.g. lambda x: f(x, n)"


def vjp_graph(
    f: Callable,
    cotangents: Any = None,
    *,
    has_aux: bool = False,
    values: bool = True,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., ADGraph]:
    """As `draw_vjp`, but returns the `ADGraph` model instead of its picture."""
    callable_and_argnums(f, 0, "draw_vjp")
    statics = static_args(f, static_argnums, static_argnames, "draw_vjp")
    _args.positional_statics(f, statics, "draw_vjp", "vjp")

    def build(*primals: Any) -> ADGraph:
        held = statics_for(f, primals, {}, statics)  # a jitted f's own, told none
        call = _prepare(f, primals, "draw_vjp", has_aux, held)
        try:
            trace = trace_vjp(
                call,
                cotangents,
                values,
                partial(
                    _check_like, cotangents, "draw_vjp", "cotangents", "f's output"
                ),
            )
        except CONCRETE as err:
            if not needs_concrete(err):
                raise
            static = _static_of(primals, held)
            raise concrete_error(
                err, f, primals, static, "draw_vjp", call.positions
            ) from err
        labels = {
            "title": f"vjp of {function_name(f)}",
            "backward": "transposed",
            "seed": "cotangent in",
            "output": f"{function_name(f)}(…)",
            "gradient": [f"cotangent of {name}" for name in call.labels],
            "of": "cotangent of ",
        }
        return reverse_graph(call, trace, values, labels)

    return build


@lists_display_options
def draw_vjp(
    f: Callable,
    cotangents: Any = None,
    *,
    has_aux: bool = False,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    **display: Unpack[Display],
) -> Callable[..., Diagram]:
    """As `jax.vjp`, but draws it: the forward pass, then the transposed linear map.

    Works for any output (a vector, a pytree), where `draw_grad` needs a scalar.

    Args:
        f: the function, differentiated in every floating-point leaf of its positional
            arguments (as `jax.vjp`; integer, boolean and key leaves are drawn fixed).
        cotangents: the cotangent fed to the VJP, shaped like `f`'s output; by
            default ones everywhere, of the output's type and sharding (so each input's
            cotangent sums the Jacobian's rows).
        has_aux: `f` returns ``(output, aux)``, as in `jax.vjp`.
        static_argnums: primals held as Python constants (a size, a loop count, a
            config), as `jax.jit`'s ``static_argnums``: bound as they are, with no
            cotangent. None, an int or ints; negative positions count from the end.
        static_argnames: the same by name, as in `jax.jit`: positional parameters only,
            as the drawing takes primals by position (bind a keyword-only one with
            `functools.partial`).
        values, rankdir, max_depth, max_eqns, expand_pytrees, max_width: keyword-only display
            options, as in `draw_grad` (see `Display`).

    Returns:
        A function of `f`'s example primals returning a `Diagram`.

    Raises:
        TypeError: a primal is not a floating-point array or number, `cotangents`
            does not match `f`'s output, or a static name is keyword-only.

    Example:
        >>> import jax.numpy as jnp
        >>> draw_vjp(jnp.sin)(jnp.arange(3.0)).title
        'vjp of sin: 2 forward equations, 1 residual, 1 transposed equation'
    """
    options = display_options("draw_vjp", display)
    build = vjp_graph(
        f,
        cotangents,
        has_aux=has_aux,
        values=options.pop("values"),
        static_argnums=static_argnums,
        static_argnames=static_argnames,
    )

    def draw(*primals: Any, **keywords: Any) -> Diagram:
        if keywords:
            _args.refuse_keywords(f, keywords, "draw_vjp")
        return to_diagram(build(*primals), **options)

    return draw


def jvp_graph(
    f: Callable,
    *,
    has_aux: bool = False,
    values: bool = True,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., ADGraph]:
    """As `draw_jvp`, but returns the `ADGraph` model instead of its picture."""
    callable_and_argnums(f, 0, "draw_jvp")
    statics = static_args(f, static_argnums, static_argnames, "draw_jvp")
    _args.positional_statics(f, statics, "draw_jvp", "jvp")

    def build(primals: Any, tangents: Any) -> ADGraph:
        held = statics_for(f, primals, {}, statics)  # a jitted f's own, told none
        static = _static_of(primals, held)
        primals, tangents = _check_pair(primals, tangents, static)
        call = _prepare(f, primals, "draw_jvp", has_aux, held)
        diff = _diff_tangents(primals, tangents, static)
        try:
            flat, paths, aux = trace_jvp(call, diff, values)
        except CONCRETE as err:
            if not needs_concrete(err):
                raise
            raise concrete_error(
                err, f, primals, static, "draw_jvp", call.positions
            ) from err
        return forward_mode_graph(call, flat, paths, aux, values, function_name(f))

    return build


@lists_display_options
def draw_jvp(
    f: Callable,
    *,
    has_aux: bool = False,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    **display: Unpack[Display],
) -> Callable[..., Diagram]:
    """As `jax.jvp`, but draws it: the primal lane and the tangent lane side by side.

    Forward mode carries a tangent beside every primal value. The picture splits the
    jaxpr of ``jax.jvp(f, primals, tangents)`` by what each eqn reads: eqns that
    read a tangent form the tangent lane; orange dashed edges are the primal values
    (like ``cos x`` for ``sin x``) the tangent lane uses. JAX's JVP of a `scan`,
    `while` or `cond` is one box computing both lanes: the title counts its
    equations in the lane each belongs to, and says which boxes hold both.

    Args:
        f: the function, as for `jax.jvp`. Integer, boolean and key leaves of the
            primals are drawn fixed; their tangents (float0 in JAX) are not read.
        has_aux: `f` returns ``(output, aux)``, as in `jax.jvp`.
        static_argnums: primals held as Python constants, as `jax.jit`'s
            ``static_argnums`` (None, an int or ints, negative from the end). Their
            tangents are left out, or given as None.
        static_argnames: the same by name, as in `jax.jit` (positional parameters
            only, as in `draw_vjp`).
        values, rankdir, max_depth, max_eqns, expand_pytrees, max_width: the numbers shown, the
            Graphviz direction and how a big program folds, as in `draw_vjp`.

    Returns:
        A function ``(primals, tangents) -> Diagram``, both tuples as in `jax.jvp`.

    Raises:
        TypeError: primals or tangents are not tuples, or do not match; a static
            name is keyword-only.

    Example:
        >>> import jax.numpy as jnp
        >>> draw_jvp(jnp.sin)((1.0,), (1.0,)).title
        'jvp of sin: 2 primal equations, 1 tangent equation'
    """
    options = display_options("draw_jvp", display)
    build = jvp_graph(
        f,
        has_aux=has_aux,
        values=options.pop("values"),
        static_argnums=static_argnums,
        static_argnames=static_argnames,
    )

    def draw(primals: Any, tangents: Any, **keywords: Any) -> Diagram:
        if keywords:
            _args.refuse_keywords(f, keywords, "draw_jvp")
        return to_diagram(build(primals, tangents), **options)

    return draw


def _prepare(
    f: Callable, primals: tuple, who: str, has_aux: bool, statics: StaticArgs
) -> Call:
    """`prepare` as `jax.vjp` and `jax.jvp` differentiate: in every positional argument
    that is not static, whose integer, boolean and key leaves stay fixed."""
    static = _static_of(primals, statics)
    every = tuple(i for i in range(len(primals)) if i not in static)
    return prepare(
        f, primals, every, who, _FIX, strict=False, has_aux=has_aux, statics=statics
    )


def _static_of(primals: Any, statics: StaticArgs) -> frozenset[int]:
    n = len(primals) if isinstance(primals, tuple | list) else 0
    return statics.positions(n)


def _diff_tangents(
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


def _check_pair(
    primals: Any, tangents: Any, static: frozenset[int] = frozenset()
) -> tuple[tuple, tuple]:
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            "draw_jvp(f)(primals, tangents) takes two tuples, as jax.jvp does; got "
            f"{type(primals).__name__} and {type(tangents).__name__}. For one argument "
            "write draw_jvp(f)((x,), (1.0,))."
        )
    if static:
        primals, tangents = tuple(primals), _static_tangents(primals, tangents, static)
    # None stands for the (float0) tangent of a primal that is not differentiated.
    if len(tangents) == len(primals):
        tangents = tuple(
            jax.tree.map(lambda p: np.zeros(np.shape(p), jax.dtypes.float0), p)
            if t is None
            and not any(_args.is_differentiable(x) for x in jax.tree.leaves(p))
            else t
            for p, t in zip(primals, tangents, strict=True)
        )
    _check_like(tuple(tangents), "draw_jvp", "tangents", "the primals", tuple(primals))
    return tuple(primals), tuple(tangents)


def _static_tangents(primals: Any, tangents: Any, static: frozenset[int]) -> tuple:
    """One tangent per primal: a static primal's is itself (never read), where the
    tangents were given for the other primals only or as None for a static one.

    Raises:
        TypeError: neither one tangent per primal nor one per non-static primal, or
            a static primal's tangent that is not None.
    """
    n, dynamic = len(primals), [i for i in range(len(primals)) if i not in static]
    if len(tangents) == len(dynamic) != n:
        given = dict(zip(dynamic, tangents, strict=True))
        return tuple(given.get(i, primals[i]) for i in range(n))
    if len(tangents) == n and all(tangents[i] is None for i in static):
        return tuple(primals[i] if i in static else t for i, t in enumerate(tangents))
    raise TypeError(
        f"draw_jvp: with static arguments at positions {sorted(static)}, pass a tangent "
        f"for each of the other {len(dynamic)} primals (or one per primal, None at a "
        f"static one); got {len(tangents)} tangents for {n} primals."
    )


def _check_like(given: Any, who: str, what: str, like_what: str, like: Any) -> None:
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
