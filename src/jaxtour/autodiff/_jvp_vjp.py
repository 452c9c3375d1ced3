"""`draw_jvp` (primal and tangent lanes side by side), `draw_vjp` (forward, transpose)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Unpack

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._diagram import Diagram
from jaxtour._ir import depends_on, is_literal, type_str
from jaxtour._number_words import plural
from jaxtour.autodiff import _args
from jaxtour.autodiff._adgraph import ADGraph, add_lane, add_terminal
from jaxtour.autodiff._display import Display, display_options, lists_display_options
from jaxtour.autodiff._dot import to_diagram
from jaxtour.autodiff._grad_graph import (
    callable_and_argnums,
    function_name,
    reverse_graph,
)
from jaxtour.autodiff._trace import Call, prepare, trace_jvp, trace_vjp

# How to keep an argument out of differentiation where every argument is differentiated.
_FIX = "close over it: draw it as a function of the others, e.g. lambda x: f(x, n)"


def vjp_graph(
    f: Callable, cotangents=None, *, has_aux: bool = False, values: bool = True
) -> Callable[..., ADGraph]:
    """As `draw_vjp`, but returns the `ADGraph` model instead of its picture."""
    callable_and_argnums(f, 0, "draw_vjp")

    def build(*primals) -> ADGraph:
        call = _prepare(f, primals, "draw_vjp", has_aux)
        trace = trace_vjp(
            call,
            cotangents,
            values,
            partial(_check_like, cotangents, "draw_vjp", "cotangents", "f's output"),
        )
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
    cotangents=None,
    *,
    has_aux: bool = False,
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
        values, rankdir, max_depth, max_eqns, expand_pytrees, max_width: keyword-only display
            options, as in `draw_grad` (see `Display`).

    Returns:
        A function of `f`'s example primals returning a `Diagram`.

    Raises:
        TypeError: a primal is not a floating-point array or number, or `cotangents`
            does not match `f`'s output.

    Example:
        >>> import jax.numpy as jnp
        >>> draw_vjp(jnp.sin)(jnp.arange(3.0)).title
        'vjp of sin: 2 forward equations, 1 residual, 1 transposed equation'
    """
    options = display_options("draw_vjp", display)
    build = vjp_graph(f, cotangents, has_aux=has_aux, values=options.pop("values"))
    return lambda *primals: to_diagram(build(*primals), **options)


def jvp_graph(
    f: Callable, *, has_aux: bool = False, values: bool = True
) -> Callable[..., ADGraph]:
    """As `draw_jvp`, but returns the `ADGraph` model instead of its picture."""
    callable_and_argnums(f, 0, "draw_jvp")

    def build(primals, tangents) -> ADGraph:
        primals, tangents = _check_pair(primals, tangents)
        call = _prepare(f, primals, "draw_jvp", has_aux)
        flat, n_aux = trace_jvp(call, _diff_tangents(primals, tangents), values)
        graph = forward_mode_graph(call, flat, n_aux, values)
        tangent_eqns = sum(n.lane == "tangent" for n in graph.select("op"))
        graph.title = (
            f"jvp of {function_name(f)}: "
            f"{plural(len(flat.eqns) - tangent_eqns, 'primal equation')}, "
            f"{plural(tangent_eqns, 'tangent equation')}"
        )
        return graph

    return build


@lists_display_options
def draw_jvp(
    f: Callable,
    *,
    has_aux: bool = False,
    **display: Unpack[Display],
) -> Callable[..., Diagram]:
    """As `jax.jvp`, but draws it: the primal lane and the tangent lane side by side.

    Forward mode carries a tangent beside every primal value. The picture splits the
    jaxpr of ``jax.jvp(f, primals, tangents)`` by what each eqn reads: eqns that
    read a tangent form the tangent lane; orange dashed edges are the primal values
    (like ``cos x`` for ``sin x``) the tangent lane uses.

    Args:
        f: the function, as for `jax.jvp`. Integer, boolean and key leaves of the
            primals are drawn fixed; their tangents (float0 in JAX) are not read.
        has_aux: `f` returns ``(output, aux)``, as in `jax.jvp`.
        values, rankdir, max_depth, max_eqns, expand_pytrees, max_width: the numbers shown, the
            Graphviz direction and how a big program folds, as in `draw_vjp`.

    Returns:
        A function ``(primals, tangents) -> Diagram``, both tuples as in `jax.jvp`.

    Raises:
        TypeError: primals or tangents are not tuples, or do not match.

    Example:
        >>> import jax.numpy as jnp
        >>> draw_jvp(jnp.sin)((1.0,), (1.0,)).title
        'jvp of sin: 2 primal equations, 1 tangent equation'
    """
    options = display_options("draw_jvp", display)
    build = jvp_graph(f, has_aux=has_aux, values=options.pop("values"))
    return lambda primals, tangents: to_diagram(build(primals, tangents), **options)


def forward_mode_graph(call, flat, n_aux: int, values: bool) -> ADGraph:
    """The model of forward mode: primal inputs and tangent seeds, two lanes, two outputs."""
    graph = ADGraph(note=call.held_note())
    n_primal = call.n_diff
    tangent_vars = flat.invars[n_primal : 2 * n_primal]
    labels = [
        *call.labels[:n_primal],
        *(f"tangent of {n}" for n in call.labels[:n_primal]),
        *call.labels[n_primal:],
    ]
    groups = call.groups or [""] * len(call.labels)
    groups = [
        *groups[:n_primal],
        *(g and f"tangent of {g}" for g in groups[:n_primal]),
        *groups[n_primal:],
    ]
    sources = {}
    for i, (var, label) in enumerate(zip(flat.invars, labels, strict=True)):
        kind, lane = (
            ("seed", "tangent")
            if var in tangent_vars
            else (("input" if i < n_primal else "fixed"), "primal")
        )
        sources[var] = add_terminal(
            graph, f"in{i}", kind, lane, label, flat, var, values, groups[i]
        )
    lanes = ["tangent" if hit else "primal" for hit in depends_on(flat, tangent_vars)]
    tangent = {
        v
        for e, lane in zip(flat.eqns, lanes, strict=True)
        if lane == "tangent"
        for v in e.outvars
    } | set(tangent_vars)
    lane_of = {id(e): lane for e, lane in zip(flat.eqns, lanes, strict=True)}

    def edge_kind(eqn, var):
        if var in tangent:
            return "tangent"
        return "cross" if lane_of[id(eqn)] == "tangent" else "primal"

    sources = add_lane(graph, flat, lanes, sources, edge_kind, values)
    half = (len(flat.outvars) - n_aux) // 2
    for k, atom in enumerate(flat.outvars):
        lane = "tangent" if half <= k < 2 * half else "primal"
        label = (
            "f(…)"
            if k < half
            else "tangent of f(…)"
            if k < 2 * half
            else "aux (not differentiated)"
        )
        node = add_terminal(
            graph, f"out{k}", "output", lane, label, flat, atom, values, label
        )
        if not is_literal(atom):
            graph.link(sources[atom], node, lane if lane == "tangent" else "primal")
    return graph


def _prepare(f: Callable, primals: tuple, who: str, has_aux: bool) -> Call:
    """`prepare` as `jax.vjp` and `jax.jvp` differentiate: in every positional argument,
    whose integer, boolean and key leaves stay fixed."""
    every = tuple(range(len(primals)))
    return prepare(f, primals, every, who, _FIX, strict=False, has_aux=has_aux)


def _diff_tangents(primals: tuple, tangents: tuple) -> tuple:
    """The tangent leaves of the differentiated (floating-point) primal leaves."""
    pairs = zip(
        jax.tree.leaves(primals, is_leaf=_is_none),
        jax.tree.leaves(tangents, is_leaf=_is_none),
        strict=True,
    )
    return tuple(jnp.asarray(t) for p, t in pairs if _args.is_differentiable(p))


def _is_none(x) -> bool:
    return x is None


def _check_pair(primals, tangents) -> tuple[tuple, tuple]:
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            "draw_jvp(f)(primals, tangents) takes two tuples, as jax.jvp does; got "
            f"{type(primals).__name__} and {type(tangents).__name__}. For one argument "
            "write draw_jvp(f)((x,), (1.0,))."
        )
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


def _check_like(given, who: str, what: str, like_what: str, like) -> None:
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
        raise TypeError(
            f"{who}: {what} must match {like_what} in structure and shape; expected "
            f"{_describe(like)}, got {_describe(given)}."
        )


def _describe(tree) -> str:
    leaves = [type_str(_typed(x)) for x in jax.tree.leaves(tree)]
    return f"({', '.join(leaves)})" if len(leaves) != 1 else leaves[0]


def _typed(x):
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return x
    return jax.ShapeDtypeStruct(np.shape(x), np.result_type(x))
