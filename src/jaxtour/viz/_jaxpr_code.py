"""A jaxpr drawn as the code that wrote it: one cluster per call of the user's code.

`CodeBuilder` is `Builder` with `group_by="code"`: each block of equations (the top
level, a jit's body, a scan's body) is nested by the user's calls (`_groups`). Groups
named in `opened` are opened as labelled clusters; the others are folded into one box
("Block.fc1: 3 equations"). It records every group it draws, with the nodes
inside it, so a page (`jaxtour._page`) can fold and open them again.
"""

from __future__ import annotations

import collections
from typing import Any

from jaxtour import _ir, _palette, _style
from jaxtour._diagram import Diagram
from jaxtour._number_words import plural
from jaxtour.viz import _fit
from jaxtour.viz._groups import Group, code_groups
from jaxtour.viz._jaxpr_graph import Builder

# A folded group's box and an open group's cluster: the source-line cluster's colours.
GROUP = {**_style.SOURCE, "style": "rounded,filled", "fillcolor": "#F7F4EC"}


class CodeBuilder(Builder):
    """`Builder` whose blocks are nested by the user's calls, folded past a level."""

    def __init__(
        self, graph: Any, *, opened: set | None, trees: dict, **kw: Any
    ) -> None:
        super().__init__(graph, group_by=None, **kw)
        self.trees = trees  # id(jaxpr) -> its groups, shared by every try at a fit
        self.open = opened  # ids of the groups drawn open (None: every group)
        self.folded_groups: list[Group] = []  # drawn as boxes, in drawing order
        self.drawn_nodes = 0
        self.level = 0  # the group level the block being drawn sits at
        self.inside: list[dict] = []  # the groups open around what is being drawn
        self.groups: list[dict] = []  # every group drawn: id, label, parent, nodes

    def new_id(self, prefix: str) -> str:
        node = super().new_id(prefix)
        kind = "clusters" if prefix.startswith("cluster") else "nodes"
        self.drawn_nodes += kind == "nodes"
        for group in self.inside:
            group[kind].append(node)
        return node

    def block(
        self, g: Any, jaxpr: Any, env: dict, depth: int, outer_line: Any = None
    ) -> None:
        used = {a for e in jaxpr.eqns for a in e.invars if not _is_lit(a)}
        used |= {a for a in jaxpr.outvars if not _is_lit(a)}
        tree = self.trees.get(id(jaxpr))
        if tree is None:
            tree = self.trees[id(jaxpr)] = code_groups(list(jaxpr.eqns))
        self.items(g, tree, env, depth, used)

    def items(self, g: Any, group: Group, env: dict, depth: int, used: set) -> None:
        for item in group.items:
            if not isinstance(item, Group):
                self.eqn(g, item, env, depth, used=used)
            elif self.open is not None and id(item) not in self.open:
                self.box(g, item, env)
            else:
                self.opened(g, item, env, depth, used)

    def opened(self, g: Any, group: Group, env: dict, depth: int, used: set) -> None:
        record = self._record(group, folded=False)
        self.level += 1
        self.inside.append(record)
        try:
            label = _style.text_label(group.label, _kind(group))
            with self.cluster(g, label, GROUP) as c:
                record["cluster"] = record["clusters"].pop(0)
                self.items(c, group, env, depth, used)
        finally:
            self.inside.pop()
            self.level -= 1

    def box(self, g: Any, group: Group, env: dict) -> None:
        """A folded group: one box its inputs enter and its results leave."""
        record = self._record(group, folded=True)
        node = self.new_id("group")
        record["nodes"].append(node)
        counts = collections.Counter(e.primitive.name for e in group.eqns())
        top = counts.most_common(1)[0][0]
        summary = ", ".join(f"{p}×{n}" for p, n in counts.most_common(3))
        g.node(
            node,
            _style.text_label(
                f"{group.label}: {plural(group.size(), 'equation')}",
                _kind(group),
                summary,
            ),
            tooltip=f"{group.label} ({group.kind}), called at {group.where}",
            **{**_palette.node_attrs(top), **GROUP, "shape": "box"},
        )
        self.folded_groups.append(group)
        self.families.add(_palette.family(top))
        for eqn in group.eqns():
            for atom in eqn.invars:
                self.connect(atom, node, env)
            for var in eqn.outvars:
                env[var] = [node]

    def _record(self, group: Group, *, folded: bool) -> dict:
        record: dict[str, Any] = {
            "id": len(self.groups),
            "key": id(group),
            "label": group.label,
            "kind": group.kind,
            "where": group.where,
            "size": group.size(),
            "level": self.level + 1,
            "parent": self.inside[-1]["id"] if self.inside else None,
            "nodes": [],
            "clusters": [],  # the clusters inside (a jit's, a scan's), its own first
            "folded": folded,
        }
        self.groups.append(record)
        return record


def _kind(group: Group) -> str:
    where = f"at {group.where}" if group.where else ""
    kind = group.kind if group.kind != group.label.split(" ")[0] else ""
    return " ".join(filter(None, [kind, where]))


def _is_lit(atom: Any) -> bool:
    return _ir.is_literal(atom)


def code_diagram(
    closed_jaxpr: Any,
    name: str,
    names: list[list[str]],
    subtitle: str,
    *,
    rankdir: str,
    max_depth: int | None,
    budget: int,
    edge_labels: bool | None,
    expand_pytrees: bool | None,
    strict: bool = True,
) -> Diagram | None:
    """The jaxpr nested by the user's calls, opening as many groups as fit `budget`
    nodes and `_fit.MAX_PX` both ways; its page (`Diagram.save(".html")`) opens all.
    None, unless `strict`, when even every call folded draws more than 1.5 × `budget`
    nodes (a loop of many small calls, not a model)."""
    import graphviz

    jaxpr, total = closed_jaxpr.jaxpr, _ir.count_eqns(closed_jaxpr.jaxpr)
    trees: dict = {}

    def build(opened: set | None, depth: int | None, title: str) -> CodeBuilder:
        graph = graphviz.Digraph(
            name="jaxpr",
            graph_attr=_style.graph_attrs(title, rankdir, subtitle),
            node_attr=_style.NODE,
            edge_attr=_style.EDGE,
        )
        builder = CodeBuilder(
            graph,
            opened=opened,
            trees=trees,
            max_depth=depth,
            labels=bool(edge_labels),
            expand=expand_pytrees,
        )
        env = builder.inputs(closed_jaxpr, names[0])
        builder.block(graph, jaxpr, env, 0)
        builder.outputs(jaxpr, env, names[1])
        return builder

    head = f"jaxpr of {name}: {plural(total, 'equation')}, nested by your code's calls"

    default: set[int] = set()  # the groups the picture folds: the page folds them too

    def draw(nodes: int) -> Diagram:
        builder = _fit.plan(lambda opened: build(opened, max_depth, head), nodes)
        default.clear()
        default.update(id(g) for g in builder.folded_groups)
        folded = len(builder.folded_groups)
        title = head + (f" ({plural(folded, 'call')} folded)" if folded else "")
        label = _style.text_label(title, subtitle) if subtitle else title
        builder.graph.attr(label=label)
        builder.labels = (
            edge_labels if edge_labels is not None else (builder.drawn_nodes <= 60)
        )
        builder.finish()
        return Diagram.from_graph(builder.graph, title)

    if not strict and build(set(), max_depth, head).drawn_nodes > 1.5 * budget:
        return None
    diagram, _ = _fit.fit(draw, budget)

    def whole() -> tuple[str, list]:
        builder = build(None, None, head)
        builder.finish()
        for group in builder.groups:
            group["folded"] = group["key"] in default
        return builder.graph.source, builder.groups

    diagram.whole = whole
    return diagram
