"""`draw_jvp` (primal and tangent lanes side by side), `draw_vjp` (forward, transpose)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Unpack

from jaxtour._diagram import Diagram
from jaxtour._ir import (
    CONCRETE,
    StaticArgs,
    concrete_error,
    needs_concrete,
    static_args,
    statics_for,
)
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
from jaxtour.autodiff._tangents import check_like, check_pair, diff_tangents, two_tuples
from jaxtour.autodiff._trace import (
    Call,
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
    statics = (static_argnums, static_argnames)
    return _vjp_builder("vjp_graph", f, cotangents, has_aux, values, *statics)


def _vjp_builder(
    who: str,
    f: Callable,
    cotangents: Any,
    has_aux: bool,
    values: bool,
    static_argnums: int | tuple[int, ...] | None,
    static_argnames: str | tuple[str, ...] | None,
) -> Callable[..., ADGraph]:
    """`vjp_graph`'s builder; its errors name `who`, the lens the user called."""
    statics = _told_statics(f, who, "vjp", static_argnums, static_argnames)

    def build(*primals: Any) -> ADGraph:
        held = statics_for(f, primals, {}, statics)  # a jitted f's own, told none
        call = _prepare(f, primals, who, has_aux, held)
        check = partial(check_like, cotangents, who, "cotangents", "f's output")
        try:
            trace = trace_vjp(call, cotangents, values, check)
        except CONCRETE as err:
            if not needs_concrete(err):
                raise
            static = _static_of(primals, held)
            raise concrete_error(err, f, primals, static, who, call.positions) from err
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
    statics = (static_argnums, static_argnames)
    values = options.pop("values")
    build = _vjp_builder("draw_vjp", f, cotangents, has_aux, values, *statics)

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
    statics = (static_argnums, static_argnames)
    return _jvp_builder("jvp_graph", f, has_aux, values, *statics)


def _told_statics(
    f: Callable,
    who: str,
    mode: str,
    static_argnums: int | tuple[int, ...] | None,
    static_argnames: str | tuple[str, ...] | None,
) -> StaticArgs:
    """The static arguments `who` was told, checked once for `f` (callable; positions
    that `jax.<mode>`'s positional primals can hold)."""
    callable_and_argnums(f, 0, who)
    statics = static_args(f, static_argnums, static_argnames, who)
    _args.positional_statics(f, statics, who, mode)
    return statics


def _jvp_builder(
    who: str,
    f: Callable,
    has_aux: bool,
    values: bool,
    static_argnums: int | tuple[int, ...] | None,
    static_argnames: str | tuple[str, ...] | None,
) -> Callable[..., ADGraph]:
    """`jvp_graph`'s builder; its errors name `who`, the lens the user called."""
    statics = _told_statics(f, who, "jvp", static_argnums, static_argnames)

    def build(*pair: Any) -> ADGraph:
        primals, tangents = two_tuples(pair, who)
        held = statics_for(f, primals, {}, statics)  # a jitted f's own, told none
        static = _static_of(primals, held)
        primals, tangents = check_pair(primals, tangents, static, who)
        call = _prepare(f, primals, who, has_aux, held)
        diff = diff_tangents(primals, tangents, static)
        try:
            flat, paths, aux, held_aux = trace_jvp(call, diff, values)
        except CONCRETE as err:
            if not needs_concrete(err):
                raise
            raise concrete_error(err, f, primals, static, who, call.positions) from err
        name = function_name(f)
        return forward_mode_graph(call, flat, paths, aux, values, name, held_aux)

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
            tangents are left out, or given as None or a float0 zero (as `jax.jvp`
            takes for an integer).
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
    statics = (static_argnums, static_argnames)
    build = _jvp_builder("draw_jvp", f, has_aux, options.pop("values"), *statics)

    def draw(*pair: Any, **keywords: Any) -> Diagram:
        if keywords:
            _args.refuse_keywords(f, keywords, "draw_jvp")
        return to_diagram(build(*pair), **options)

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
