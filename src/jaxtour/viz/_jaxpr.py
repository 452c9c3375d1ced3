"""`draw_jaxpr`: a jaxpr as a graph, nested jaxprs as clusters, big programs collapsed."""

from __future__ import annotations

import collections
import math
from collections.abc import Callable
from typing import Any

from jaxtour import _ir, _style, _terminals
from jaxtour._diagram import Diagram
from jaxtour._style import plural

WHO = "draw_jaxpr"
# where each side's terminals go, and how they look
_SIDES = {"in": ("source", _style.INPUT), "out": ("sink", _style.OUTPUT)}


def draw_jaxpr(
    f: Callable,
    *,
    rankdir: str = "TB",
    max_depth: int | None = _style.MAX_DEPTH,
    group_by: str | None = None,
    max_eqns: int = 150,
    edge_labels: bool | None = None,
    static_argnums: int | tuple[int, ...] = (),
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
        group_by: None, or "source" to cluster equations by the line of Python that
            produced them.
        max_eqns: past this many drawn equations the picture collapses (nested jaxprs
            first, then one node per source line) and the title says so.
        edge_labels: label edges with shape/dtype; default: when at most 60 equations.
        static_argnums: positions of arguments that are not arrays (as in `jax.jit`).
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
    _terminals.check_expand(expand_pytrees, WHO)
    static = static_tuple(static_argnums)
    options: dict[str, Any] = {
        "rankdir": rankdir,
        "max_depth": max_depth,
        "group_by": group_by,
        "max_eqns": max_eqns,
        "edge_labels": edge_labels,
        "expand_pytrees": expand_pytrees,
    }

    def draw(*args: Any, **kwargs: Any) -> Diagram:
        traced = _ir.trace(f, args, kwargs, who=WHO, static_argnums=static)
        return jaxpr_diagram(traced.jaxpr, name=_ir.function_name(f), **options)

    return draw


def static_tuple(static_argnums: int | tuple[int, ...]) -> tuple[int, ...]:
    """`static_argnums` as `_ir.trace` takes it: one position becomes a 1-tuple."""
    if isinstance(static_argnums, int):
        return (static_argnums,)
    return tuple(static_argnums)


def _check_options(
    rankdir: str,
    max_depth: int | None,
    group_by: str | None,
    max_eqns: int,
    who: str = WHO,
    count: str = "max_eqns",
) -> None:
    _style.check_rankdir(rankdir, who)
    _style.check_max_depth(max_depth, who)
    if group_by not in (None, "source"):
        raise ValueError(
            f'{who}: `group_by` must be None or "source" (cluster equations by '
            f"the line of Python that produced them); got {group_by!r}."
        )
    _style.check_count(max_eqns, count, who)


def jaxpr_diagram(
    closed_jaxpr: Any,
    name: str = "f",
    *,
    rankdir: str = "TB",
    max_depth: int | None = _style.MAX_DEPTH,
    group_by: str | None = None,
    max_eqns: int = 150,
    edge_labels: bool | None = None,
    expand_pytrees: bool | None = None,
) -> Diagram:
    """Draw a `ClosedJaxpr` you already have (what `draw_jaxpr` does after tracing)."""
    import graphviz

    closed_jaxpr = _ir.unwrap_jit(closed_jaxpr)
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
    folded = _terminals.FOLDED if _terminals.folds(names, expand_pytrees) else ""
    how = "; ".join(filter(None, [how, folded]))
    if how:
        title += f" (collapsed: {how})"
    graph = graphviz.Digraph(
        name="jaxpr",
        graph_attr=_style.graph_attrs(title, rankdir, _subtitle(jaxpr, total)),
        node_attr=_style.NODE,
        edge_attr=_style.EDGE,
    )
    drawn = _drawn(jaxpr, depth) if chunk is None else len(jaxpr.eqns) // max(chunk, 1)
    labels = edge_labels if edge_labels is not None else drawn <= 60
    builder = _Builder(
        graph, max_depth=depth, group_by=group_by, labels=labels, expand=expand_pytrees
    )
    env = builder.inputs(closed_jaxpr, names[0])
    if chunk is None:
        builder.block(graph, jaxpr, env, 0)
    else:
        builder.groups(jaxpr, env, chunk)
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


# --- the graph -------------------------------------------------------------------------------


class _Builder(_style.Canvas):
    """Equations become nodes as they are met; nested jaxprs become clusters."""

    def __init__(
        self,
        graph: Any,
        *,
        max_depth: int | None,
        group_by: str | None,
        labels: bool,
        expand: bool | None = None,
    ) -> None:
        super().__init__(graph, labels)
        self.max_depth, self.group_by, self.expand = max_depth, group_by, expand

    def inputs(self, closed_jaxpr: Any, names: list[str]) -> dict:
        jaxpr, env = closed_jaxpr.jaxpr, {}
        types = [_ir.type_str(var.aval) for var in jaxpr.invars]
        with self.graph.subgraph(name="inputs") as g:
            ids = add_side(self, g, "in", names, types)
            for var, node in zip(jaxpr.invars, ids, strict=True):
                env[var] = [node]
            for i, var in enumerate(jaxpr.constvars):
                g.node(
                    f"const{i}",
                    _style.text_label("const", _ir.type_str(var.aval)),
                    **{**_style.INPUT, "style": "rounded,dashed"},
                )
                env[var] = [f"const{i}"]
        return env

    def outputs(self, jaxpr: Any, env: dict, names: list[str]) -> None:
        types = [_ir.type_str(atom.aval) for atom in jaxpr.outvars]
        labels = [
            _style.text_label(
                name, kind, _ir.literal_str(atom) if _ir.is_literal(atom) else ""
            )
            for name, kind, atom in zip(names, types, jaxpr.outvars, strict=True)
        ]
        with self.graph.subgraph(name="outputs") as g:
            ids = add_side(self, g, "out", names, types, labels)
        for atom, node in zip(jaxpr.outvars, ids, strict=True):
            self.connect(atom, node, env)

    def connect(self, atom: Any, dst: str, env: dict) -> None:
        if not _ir.is_literal(atom):
            for src in env.get(atom, ()):
                self.edge(src, dst, _ir.type_str(atom.aval))

    def block(
        self, g: Any, jaxpr: Any, env: dict, depth: int, outer_line: Any = None
    ) -> None:
        used = {a for e in jaxpr.eqns for a in e.invars if not _ir.is_literal(a)}
        used |= {a for a in jaxpr.outvars if not _ir.is_literal(a)}
        if self.group_by != "source":
            for eqn in jaxpr.eqns:
                self.eqn(g, eqn, env, depth, used=used)
            return
        by_line = collections.defaultdict(list)
        for eqn in jaxpr.eqns:
            by_line[_ir.source_line(eqn)].append(eqn)
        for line, eqns in by_line.items():
            # Equations of the line that made the enclosing cluster need no cluster
            # of their own.
            with self.cluster(
                g,
                _line_html(line),
                _style.SOURCE,
                enabled=line is not None and line[:2] != (outer_line or ())[:2],
            ) as c:
                for eqn in eqns:
                    self.eqn(c, eqn, env, depth, line, used)

    def eqn(
        self,
        g: Any,
        eqn: Any,
        env: dict,
        depth: int,
        line: Any = None,
        used: set | None = None,
    ) -> None:
        subs = _ir.sub_jaxprs(eqn)
        if subs and (self.max_depth is None or depth < self.max_depth):
            self.nested(g, eqn, env, depth, line=line)
            return
        node, name = self.new_id("eqn"), eqn.primitive.name
        hidden = sum(_ir.count_eqns(s.jaxpr) for s in subs)
        lines = [
            ", ".join(_ir.important_params(eqn)[:3]),
            _literals(eqn),
            f"{plural(hidden, 'equation')} inside" if subs else "",
        ]
        line = _ir.source_line(eqn)
        dead = all(
            _ir.is_dropvar(v) or (used is not None and v not in used)
            for v in eqn.outvars
        )
        attrs = {**_style.node_attrs(name), **(_style.DEAD if dead else {})}
        g.node(
            node,
            _style.text_label(name, *lines, "result unused" if dead else ""),
            tooltip=_line_label(line) if line else name,
            **attrs,
        )
        self.families.add(_style.family(name))
        for atom in eqn.invars:
            self.connect(atom, node, env)
        for var in eqn.outvars:
            env[var] = [node]

    def nested(
        self, g: Any, eqn: Any, env: dict, depth: int, outer: str = "", line: Any = None
    ) -> None:
        """`eqn`'s nested jaxprs as clusters; `outer` heads the title (the titles of
        the enclosing calls merged into this cluster)."""
        subs, title = _ir.sub_jaxprs(eqn), outer + _eqn_title(eqn)
        only = (
            subs[0].jaxpr.eqns[0]
            if len(subs) == 1 and len(subs[0].jaxpr.eqns) == 1
            else None
        )
        if only is not None and _ir.sub_jaxprs(only) and not subs[0].jaxpr.constvars:
            inner_env = self.bind(g, subs[0], env)  # custom_jvp_call › jit: one cluster
            self.nested(g, only, inner_env, depth, title + " › ", line)
            self.unbind(subs[0], inner_env, env)
            return
        self.families.add("control flow")
        with self.cluster(g, title, _style.NESTED) as c:
            self.loose_operands(c, eqn, subs, env)
            for sub in subs:
                with self.cluster(
                    c, _sub_label(sub.label), _style.NESTED, enabled=len(subs) > 1
                ) as inner:
                    sub_env = self.bind(inner, sub, env)
                    # Graphviz drops an empty cluster: say it is empty
                    if not sub.jaxpr.eqns:
                        self.pass_through(inner, sub.jaxpr, sub_env)
                    self.block(inner, sub.jaxpr, sub_env, depth + 1, line)
                    self.unbind(sub, sub_env, env)

    def pass_through(self, g: Any, jaxpr: Any, sub_env: dict) -> None:
        """A nested jaxpr with no equations (an identity body) as one node its values cross."""
        node = self.new_id("pass")
        g.node(
            node,
            _style.text_label("no equations", "values pass through"),
            shape="plaintext",
            fontsize="11",
            style="solid",
        )
        for var in jaxpr.invars:
            for src in sub_env.get(var, ()):
                self.edge(src, node, _ir.type_str(var.aval))
            sub_env[var] = [node]

    def loose_operands(self, g: Any, eqn: Any, subs: list, env: dict) -> None:
        """Operands no nested jaxpr takes (cond's branch index) go to a small diamond."""
        taken = {id(a) for s in subs for a in s.inputs if a is not None}
        loose = [a for a in eqn.invars if id(a) not in taken and not _ir.is_literal(a)]
        if loose:
            node = self.new_id("head")
            label = (
                "branch index" if eqn.primitive.name == "cond" else eqn.primitive.name
            )
            g.node(
                node, label, shape="diamond", fontsize="11", **_style.node_attrs("cond")
            )
            for atom in loose:
                self.connect(atom, node, env)

    def bind(self, g: Any, sub: Any, env: dict) -> dict:
        """The environment of a nested jaxpr: its invars fed by the outer producers."""
        sub_env: dict = {}
        for var, outer in zip(sub.jaxpr.invars, sub.inputs, strict=True):
            if outer is not None and _ir.is_literal(outer):
                node = self.new_id("lit")
                g.node(
                    node,
                    _ir.literal_str(outer),
                    shape="plaintext",
                    fontsize="11",
                    style="solid",
                )
                sub_env[var] = [node]
            elif outer is not None:
                sub_env[var] = list(env.get(outer, ()))
        for var in sub.jaxpr.constvars:
            node = self.new_id("const")
            g.node(
                node,
                _style.text_label("const", _ir.type_str(var.aval)),
                **{**_style.INPUT, "style": "rounded,dashed"},
            )
            sub_env[var] = [node]
        return sub_env

    def unbind(self, sub: Any, sub_env: dict, env: dict) -> None:
        """The outer variables a nested jaxpr computes now come from its inner producers."""
        for inner, outer in zip(sub.jaxpr.outvars, sub.outputs, strict=True):
            if outer is not None and not _ir.is_literal(inner):
                producers = env.setdefault(outer, [])
                producers += [p for p in sub_env.get(inner, ()) if p not in producers]

    def groups(self, jaxpr: Any, env: dict, chunk: int) -> None:
        """One node per source line (chunk 0) or per `chunk` consecutive equations."""
        members: dict[Any, collections.Counter] = {}
        for index, eqn in enumerate(jaxpr.eqns):
            key = _group_key(eqn, index, chunk)
            node = (
                f"group{list(members).index(key) if key in members else len(members)}"
            )
            counts = members.setdefault(key, collections.Counter())
            counts[eqn.primitive.name] += 1
            for sub in _ir.sub_jaxprs(eqn):
                counts.update(_ir.primitive_counts(sub.jaxpr))
            for atom in eqn.invars:
                self.connect(atom, node, env)
            for var in eqn.outvars:
                env[var] = [node]
        for i, (key, counts) in enumerate(members.items()):
            head = (
                (_line_label(key) if key else "(no source line)")
                if chunk == 0
                else f"equations {key * chunk + 1}–{key * chunk + sum(counts.values())}"
            )
            top = counts.most_common(1)[0][0]
            self.families.add(_style.family(top))
            summary = ", ".join(f"{p}×{n}" for p, n in counts.most_common(4))
            self.graph.node(
                f"group{i}",
                _style.text_label(head, f"{sum(counts.values())} equations: {summary}"),
                **_style.node_attrs(top),
            )


def add_side(
    canvas: Any, g: Any, side: str, names: list, types: list, labels: list | None = None
) -> list[str]:
    """The input (`side` "in") or output ("out") nodes of a builder with an `expand`
    option, in subgraph `g`: `_terminals.add_terminals` with that side's rank and style.
    """
    rank, attrs = _SIDES[side]
    return _terminals.add_terminals(
        canvas,
        g,
        names,
        types,
        prefix=side,
        rank=rank,
        attrs=attrs,
        expand=canvas.expand,
        labels=labels,
    )


def _names(names: Any, n: int, prefix: str) -> list[str]:
    names = list(names or ())
    if len(names) != n:
        names = [None] * n
    return [name or f"{prefix}{i}" for i, name in enumerate(names)]


def _line_html(line: _ir.SourceLine | None) -> str:
    """A source cluster's label: where (bold), then the code, cut to slide width."""
    if line is None:
        return ""
    where = line.where
    code = line.code
    return _style.text_label(where, code[:44] + "…" if len(code) > 45 else code)


def _line_label(line: _ir.SourceLine) -> str:
    code = line.code
    return (
        f"{line}  {code[:48] + '…' if len(code) > 49 else code}" if code else str(line)
    )


def _literals(eqn: Any) -> str:
    if not any(_ir.is_literal(a) for a in eqn.invars):
        return ""
    return (
        "("
        + ", ".join(
            _ir.literal_str(a) if _ir.is_literal(a) else "·" for a in eqn.invars
        )
        + ")"
    )


def _eqn_title(eqn: Any) -> str:
    name = eqn.params.get("name")
    params = ", ".join(_ir.important_params(eqn)[:2])
    title = eqn.primitive.name + (f": {name}" if isinstance(name, str) else "")
    return f"{title}  {params}" if params else title


def _sub_label(label: str) -> str:
    return {"cond_jaxpr": "cond", "body_jaxpr": "body"}.get(
        label, label.replace("branches[", "branch ").rstrip("]")
    )
