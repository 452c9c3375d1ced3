"""The graph of a jaxpr (`draw_jaxpr`'s picture): equations become nodes as they are
met; nested jaxprs become clusters, opened to a depth."""

from __future__ import annotations

import collections
from typing import Any

from jaxtour import _canvas, _io_nodes, _ir, _palette, _style
from jaxtour._number_words import plural

# where each side's terminals go, and how they look
_SIDES = {"in": ("source", _style.INPUT), "out": ("sink", _style.OUTPUT)}


class Builder(_canvas.Canvas):
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
            self.nested(g, eqn, subs, env, depth, line=line)
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
        attrs = {**_palette.node_attrs(name), **(_style.DEAD if dead else {})}
        g.node(
            node,
            _style.text_label(name, *lines, "result unused" if dead else ""),
            tooltip=_style.tooltip(line_label(line)) if line else name,
            **attrs,
        )
        self.families.add(_palette.family(name))
        for atom in eqn.invars:
            self.connect(atom, node, env)
        for var in eqn.outvars:
            env[var] = [node]

    def nested(
        self,
        g: Any,
        eqn: Any,
        subs: list,
        env: dict,
        depth: int,
        outer: str = "",
        line: Any = None,
    ) -> None:
        """`eqn`'s nested jaxprs (`subs`) as clusters; `outer` heads the title (the
        titles of the enclosing calls merged into this cluster)."""
        title = outer + _eqn_title(eqn)
        only = (
            subs[0].jaxpr.eqns[0]
            if len(subs) == 1 and len(subs[0].jaxpr.eqns) == 1
            else None
        )
        only_subs = _ir.sub_jaxprs(only) if only is not None else []
        if only_subs and not subs[0].jaxpr.constvars:
            inner_env = self.bind(g, subs[0], env)  # custom_jvp_call › jit: one cluster
            self.nested(g, only, only_subs, inner_env, depth, title + " › ", line)
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
                    carries = self.carry_nodes(inner, eqn, sub, sub_env)
                    # Graphviz drops an empty cluster: say it is empty
                    if not sub.jaxpr.eqns:
                        self.pass_through(inner, sub.jaxpr, sub_env)
                    self.block(inner, sub.jaxpr, sub_env, depth + 1, line)
                    self.back_edges(sub, sub_env, carries)
                    self.unbind(sub, sub_env, env)

    def carry_nodes(self, g: Any, eqn: Any, sub: Any, sub_env: dict) -> list[str]:
        """A scan's carry: one small node per carried value, fed by the initial value
        and (`back_edges`) by what the body computes for the next iteration."""
        if eqn.primitive.name != "scan":
            return []
        first, count = _ir.scan_counts(eqn)
        carried = sub.jaxpr.invars[first : first + count]
        nodes = []
        for var in carried:
            node = self.new_id("carry")
            g.node(
                node,
                _style.text_label("carry", _ir.type_str(var.aval)),
                shape="ellipse",
                fontsize="11",
                **_palette.node_attrs("scan"),
            )
            for src in sub_env.get(var, ()):
                self.edge(src, node, _ir.type_str(var.aval))
            sub_env[var] = [node]
            nodes.append(node)
        return nodes

    def back_edges(self, sub: Any, sub_env: dict, carries: list[str]) -> None:
        """The loop drawn as a loop: each new carry back to its carry node, dashed."""
        for var, node in zip(sub.jaxpr.outvars, carries, strict=False):
            if _ir.is_literal(var):
                continue
            for src in sub_env.get(var, ()):
                self.graph.edge(
                    src,
                    node,
                    label="next iteration",
                    style="dashed",
                    constraint="false",
                    color=_palette.node_attrs("scan").get("color", "#7B52BD"),
                    fontsize="10",
                )

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
            label = (
                "branch index" if eqn.primitive.name == "cond" else eqn.primitive.name
            )
            node = self.diamond(g, label)
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


def add_side(
    canvas: Any, g: Any, side: str, names: list, types: list, labels: list | None = None
) -> list[str]:
    """The input (`side` "in") or output ("out") nodes of a builder with an `expand`
    option, in subgraph `g`: `_io_nodes.add_terminals` with that side's rank and style.
    """
    rank, attrs = _SIDES[side]
    return _io_nodes.add_terminals(
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


def _line_html(line: _ir.SourceLine | None) -> str:
    """A source cluster's label: where (bold), then the code, cut to slide width."""
    if line is None:
        return ""
    where = line.where
    code = line.code
    return _style.text_label(where, code[:44] + "…" if len(code) > 45 else code)


def line_label(line: _ir.SourceLine) -> str:
    """Where a source line is, then its code cut to 48 characters (a tooltip, a group)."""
    code = line.code
    return (
        f"{line}  {code[:48] + '…' if len(code) > 49 else code}" if code else str(line)
    )


def group_head(line: _ir.SourceLine) -> list[str]:
    """A source line as a group box's head, in lines of at most about 40 characters:
    where (with the innermost function's name), then the code cut to 40. A nested
    function's full name (``update_fn.<locals>.<lambda>``) would widen a folded
    picture past a slide."""
    function = line.function.rsplit(".", 1)[-1] if line.function else ""
    head = f"{line.where} ({function})" if function else line.where
    code = line.code
    code = code[:39] + "…" if len(code) > 40 else code
    return [head, code]


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
