"""`draw_jaxpr`: a jaxpr as a graph, nested jaxprs as clusters, big programs collapsed."""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import Any

from jaxtour import _fit, _io_nodes, _ir, _options, _palette, _style
from jaxtour._code_groups import names_own_code
from jaxtour._diagram import Diagram
from jaxtour._number_words import plural
from jaxtour.viz._jaxpr_code import code_diagram, code_trees
from jaxtour.viz._jaxpr_graph import Builder, group_head

WHO = "draw_jaxpr"
AUTO_CODE = 40  # past this many equations, "auto" nests them by the user's calls


def draw_jaxpr(
    f: Callable,
    *,
    rankdir: str = "TB",
    max_depth: int | None = _options.MAX_DEPTH,
    group_by: str | None = "auto",
    max_eqns: int = 150,
    edge_labels: bool | None = None,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    expand_pytrees: bool | None = None,
) -> Callable[..., Diagram]:
    """As `jax.make_jaxpr`, but the result is a picture of the jaxpr.

    Inputs are labelled with their names, shapes and dtypes; each equation is one node
    showing its primitive, its important params and any literal operands; edges carry
    the shape and dtype of the value they pass; outputs are dark. Nested jaxprs (`jit`,
    `cond` branches, `while` cond/body, `scan`, `custom_jvp`/`custom_vjp`, `remat`,
    `shard_map`) are drawn as labelled clusters. Nodes are coloured by primitive family.

    Args:
        f: the function to trace (a `jax.jit`-wrapped one is drawn as its body).
        rankdir: "TB" (top to bottom) or "LR" (left to right) for wide programs.
        max_depth: how many levels of nested jaxprs to open; deeper ones become one node
            that says how many equations it hides. None opens all.
        group_by: "code" nests equations by the calls of the user's own code that made
            them (each method, module or function a box that can be folded: `Block`,
            `Block.fc1`), opening as many levels as fit `max_eqns` nodes and 5,000 px
            both ways; "source" clusters them by line of Python; None draws them flat;
            "auto" (the default) is "code" past 40 equations; below, "code" with
            every call open when a call of your own code (a function, a method, a
            layer you named) made some of the equations, else None.
        max_eqns: past this many drawn equations the picture collapses (nested jaxprs
            first, then one node per source line) and the title says so.
        edge_labels: label edges with shape/dtype; default: when at most 60 equations.
        static_argnums: positions of arguments that are not arrays (as in `jax.jit`).
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.
        expand_pytrees: None draws an argument or result pytree of more than 8 arrays
            as one node naming its shape and leaf count; True draws every leaf, False
            folds every pytree of two leaves or more.

    Returns:
        A function taking `f`'s example arguments and returning a `jaxtour.Diagram`.

    Raises:
        TypeError: `f` is not callable, or an argument is not something JAX traces.
        ValueError: an option is out of range.

    Example:
        >>> import jax.numpy as jnp
        >>> d = draw_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
        >>> d.title
        'jaxpr of <lambda>: 2 equations'
    """
    _ir.check_callable(f, WHO)
    _check_options(rankdir, max_depth, group_by, max_eqns)
    _io_nodes.check_expand(expand_pytrees, WHO)
    trace = _ir.tracer(f, WHO, static_argnums, static_argnames)
    options: dict[str, Any] = {
        "rankdir": rankdir,
        "max_depth": max_depth,
        "group_by": group_by,
        "max_eqns": max_eqns,
        "edge_labels": edge_labels,
        "expand_pytrees": expand_pytrees,
    }

    def draw(*args: Any, **kwargs: Any) -> Diagram:
        traced = trace(args, kwargs)
        return jaxpr_diagram(traced.jaxpr, name=_ir.function_name(f), **options)

    return draw


def _check_options(
    rankdir: str,
    max_depth: int | None,
    group_by: str | None,
    max_eqns: int,
    who: str = WHO,
    count: str = "max_eqns",
) -> None:
    _options.check_rankdir(rankdir, who)
    _options.check_max_depth(max_depth, who)
    if group_by not in (None, "source", "code", "auto"):
        raise ValueError(
            f'{who}: `group_by` must be "auto", "code" (nest equations by the calls '
            f'of your code that made them), "source" (cluster them by line of Python) '
            f"or None (draw them flat); got {group_by!r}."
        )
    _options.check_count(max_eqns, count, who)


def jaxpr_diagram(
    closed_jaxpr: Any,
    name: str = "f",
    *,
    rankdir: str = "TB",
    max_depth: int | None = _options.MAX_DEPTH,
    group_by: str | None = "auto",
    max_eqns: int = 150,
    edge_labels: bool | None = None,
    expand_pytrees: bool | None = None,
) -> Diagram:
    """Draw a `ClosedJaxpr` you already have (what `draw_jaxpr` does after tracing)."""
    closed_jaxpr = _ir.unwrap_jit(closed_jaxpr)
    total = _ir.count_eqns(closed_jaxpr.jaxpr)
    small = group_by == "auto" and total <= AUTO_CODE
    trees = code_trees(closed_jaxpr.jaxpr) if small else {}
    if small and not any(names_own_code(t) for t in trees.values()):
        group_by = None  # only library calls, or only the function drawn: flat
    if group_by in ("code", "auto"):
        jaxpr = closed_jaxpr.jaxpr
        diagram = code_diagram(
            closed_jaxpr,
            name,
            [
                _names(n, len(v), p)
                for n, v, p in zip(
                    _ir.io_names(jaxpr),
                    (jaxpr.invars, jaxpr.outvars),
                    ("in", "out"),
                    strict=True,
                )
            ],
            _subtitle(jaxpr, total),
            rankdir=rankdir,
            max_depth=max_depth,
            budget=max(8, max_eqns * 2 // 5),
            edge_labels=edge_labels,
            expand_pytrees=expand_pytrees,
            strict=group_by == "code" or small,
            trees=trees,
            fit=not small,  # a small program opens every call, as it is drawn flat
        )
        if diagram is not None:
            return diagram
        group_by = None  # the calls do not fold the program small enough: as before
    diagram, _ = _fit.fit(
        lambda budget: _flat_diagram(
            closed_jaxpr,
            name,
            rankdir=rankdir,
            max_depth=max_depth,
            group_by=group_by,
            max_eqns=budget,
            edge_labels=edge_labels,
            expand_pytrees=expand_pytrees,
        ),
        max_eqns,
        # a small program is drawn whole, as asked, and not laid out here
        _fit.MAX_PX if total > AUTO_CODE else None,
    )
    return diagram


def _flat_diagram(
    closed_jaxpr: Any,
    name: str,
    *,
    rankdir: str,
    max_depth: int | None,
    group_by: str | None,
    max_eqns: int,
    edge_labels: bool | None,
    expand_pytrees: bool | None,
) -> Diagram:
    import graphviz

    jaxpr, total = closed_jaxpr.jaxpr, _ir.count_eqns(closed_jaxpr.jaxpr)
    title = f"jaxpr of {name}: {plural(total, 'equation')}"
    depth, chunk, how = _plan(jaxpr, max_depth, max_eqns)
    names = [
        _names(n, len(v), p)
        for n, v, p in zip(
            _ir.io_names(jaxpr),
            (jaxpr.invars, jaxpr.outvars),
            ("in", "out"),
            strict=True,
        )
    ]
    folded = _io_nodes.FOLDED if _io_nodes.folds(names, expand_pytrees) else ""
    how = "; ".join(filter(None, [how, folded]))
    if how:
        title += f" (collapsed: {how})"
    if group_by == "source" and chunk is None:
        title += ", grouped by source line"
    graph = graphviz.Digraph(
        name="jaxpr",
        graph_attr=_style.graph_attrs(title, rankdir, _subtitle(jaxpr, total)),
        node_attr=_style.NODE,
        edge_attr=_style.EDGE,
    )
    drawn = _drawn(jaxpr, depth) if chunk is None else len(jaxpr.eqns) // max(chunk, 1)
    labels = edge_labels if edge_labels is not None else drawn <= 60
    builder = Builder(
        graph, max_depth=depth, group_by=group_by, labels=labels, expand=expand_pytrees
    )
    env = builder.inputs(closed_jaxpr, names[0])
    if chunk is None:
        builder.block(graph, jaxpr, env, 0)
    else:
        _groups(builder, jaxpr, env, chunk)
    builder.outputs(jaxpr, env, names[1])
    builder.finish()
    return Diagram.from_graph(graph, title)


def _subtitle(jaxpr: Any, total: int) -> str:
    top, nested = (
        len(jaxpr.eqns),
        sum(len(_ir.sub_jaxprs(e)) for _, e in _ir.walk(jaxpr)),
    )
    if not nested:
        return ""
    return f"{top} at top level, {total - top} inside {plural(nested, 'nested jaxpr')}"


# --- collapsing: nested jaxprs first, then one node per source line or per chunk ---------


def _drawn(jaxpr: Any, max_depth: int | None) -> int:
    return sum(1 for d, _ in _ir.walk(jaxpr) if max_depth is None or d <= max_depth)


def _plan(
    jaxpr: Any, max_depth: int | None, max_eqns: int
) -> tuple[int | None, int | None, str]:
    """(depth to open, chunk size or None, what the title should say was collapsed)."""
    if _drawn(jaxpr, max_depth) <= max_eqns:
        return max_depth, None, ""
    if len(jaxpr.eqns) <= max_eqns:
        return 0, None, "nested jaxprs drawn as single nodes"
    lines = {_ir.source_line(e) for e in jaxpr.eqns}
    if len(lines) <= max_eqns:
        return 0, 0, f"one node per source line, {len(lines)} lines"
    size = math.ceil(len(jaxpr.eqns) / 40)
    return 0, size, f"one node per {size} equations"


def _group_key(eqn: Any, index: int, chunk: int) -> Any:
    return _ir.source_line(eqn) if chunk == 0 else index // chunk


def _groups(builder: Builder, jaxpr: Any, env: dict, chunk: int) -> None:
    """One node per source line (chunk 0) or per `chunk` consecutive equations."""
    members: dict[Any, collections.Counter] = {}
    for index, eqn in enumerate(jaxpr.eqns):
        key = _group_key(eqn, index, chunk)
        node = f"group{list(members).index(key) if key in members else len(members)}"
        counts = members.setdefault(key, collections.Counter())
        counts[eqn.primitive.name] += 1
        for sub in _ir.sub_jaxprs(eqn):
            counts.update(_ir.primitive_counts(sub.jaxpr))
        for atom in eqn.invars:
            builder.connect(atom, node, env)
        for var in eqn.outvars:
            env[var] = [node]
    for i, (key, counts) in enumerate(members.items()):
        head = (
            (group_head(key) if key else ["(no source line)"])
            if chunk == 0
            else [_chunk_head(key, chunk, len(jaxpr.eqns), sum(counts.values()))]
        )
        top = counts.most_common(1)[0][0]
        builder.families.add(_palette.family(top))
        summary = ", ".join(f"{p}×{n}" for p, n in counts.most_common(3))
        builder.graph.node(
            f"group{i}",
            _style.text_label(*head, f"{sum(counts.values())} equations: {summary}"),
            **_palette.node_attrs(top),
        )


def _chunk_head(key: int, chunk: int, top_level: int, total: int) -> str:
    """Which top-level equations chunk `key` holds, and how many more are nested in
    them (`total` counts both, as the node's summary does).

    Example:
        >>> _chunk_head(1, 5, 12, 15)
        'equations 6–10 and 10 nested in them'
    """
    first, last = key * chunk + 1, min((key + 1) * chunk, top_level)
    nested = total - (last - first + 1)
    return f"equations {first}–{last}" + (
        f" and {nested} nested in them" if nested else ""
    )


def _names(names: Any, n: int, prefix: str) -> list[str]:
    names = list(names or ())
    if len(names) != n:
        names = [None] * n
    return [name or f"{prefix}{i}" for i, name in enumerate(names)]
