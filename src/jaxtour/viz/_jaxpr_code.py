"""A jaxpr drawn as the code that wrote it: one cluster per call of the user's code.

`CodeBuilder` is `Builder` with `group_by="code"`: each block of equations (the top
level, a jit's body, a scan's body) is nested by the user's calls (`_groups`). Groups
named in `opened` are opened as labelled clusters; the others are folded into one box
("Block.fc1: 3 equations"). It records every group it draws, with the nodes
inside it, so a page (`jaxtour._page`) can fold and open them again.
"""

from __future__ import annotations

from typing import Any

from jaxtour import _fit, _io_nodes, _ir, _style
from jaxtour._code_groups import Group, code_groups
from jaxtour._diagram import Diagram
from jaxtour._group_draw import GroupDrawing, whole_page
from jaxtour._number_words import plural
from jaxtour.viz._jaxpr_graph import Builder


class CodeBuilder(GroupDrawing, Builder):
    """`Builder` whose blocks are nested by the user's calls, folded past a level."""

    def __init__(
        self, graph: Any, *, opened: set | None, trees: dict, **kw: Any
    ) -> None:
        super().__init__(graph, group_by=None, **kw)
        self.trees = trees  # id(jaxpr) -> its groups, shared by every try at a fit
        self.start_groups(opened)

    def block(
        self, g: Any, jaxpr: Any, env: dict, depth: int, outer_line: Any = None
    ) -> None:
        used = {a for e in jaxpr.eqns for a in e.invars if not _ir.is_literal(a)}
        used |= {a for a in jaxpr.outvars if not _ir.is_literal(a)}
        tree = self.trees.get(id(jaxpr))
        if tree is None:
            tree = self.trees[id(jaxpr)] = code_groups(list(jaxpr.eqns))
        self.items(g, tree, env, depth, used)

    def leaf(self, g: Any, item: Any, *context: Any) -> None:
        env, depth, used = context
        self.eqn(g, item, env, depth, used=used)

    def primitive(self, item: Any) -> str:
        return str(item.primitive.name)

    def weight(self, item: Any) -> int:
        subs = _ir.sub_jaxprs(item)
        return max(1, sum(_ir.count_eqns(s.jaxpr) for s in subs)) if subs else 1

    def fold_into(self, node: str, group: Group, *context: Any) -> None:
        env = context[0]
        for eqn in group.eqns():
            for atom in eqn.invars:
                self.connect(atom, node, env)
            for var in eqn.outvars:
                env[var] = [node]


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
    trees: dict | None = None,
    fit: bool = True,
) -> Diagram | None:
    """The jaxpr nested by the user's calls, opening as many groups as fit `budget`
    nodes and `_fit.MAX_PX` both ways; its page (`Diagram.save(".html")`) opens all.
    None, unless `strict`, when even every call folded draws more than 1.5 × `budget`
    nodes (a loop of many small calls, not a model). Not `fit`: every group open, and
    no layout measured (a small program). `trees`: blocks' groups already read."""
    import graphviz

    jaxpr, total = closed_jaxpr.jaxpr, _ir.count_eqns(closed_jaxpr.jaxpr)
    trees = {} if trees is None else trees

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
    if _io_nodes.folds(names, expand_pytrees):
        head += f" (collapsed: {_io_nodes.FOLDED})"

    default: set[int] = set()  # the groups the picture folds: the page folds them too

    def draw(nodes: int) -> Diagram:
        builder = (
            _fit.plan(lambda opened: build(opened, max_depth, head), nodes)
            if fit
            else build(None, max_depth, head)
        )
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
    diagram = _fit.fit(draw, budget)[0] if fit else draw(budget)

    diagram.whole = whole_page(lambda: build(None, None, head), lambda: default)
    return diagram


def code_trees(jaxpr: Any) -> dict:
    """id(block) -> its equations nested by the user's calls, for `jaxpr` and every
    jaxpr nested in it (what `CodeBuilder` reads)."""
    trees = {id(jaxpr): code_groups(list(jaxpr.eqns))}
    for _, eqn in _ir.walk(jaxpr):
        for sub in _ir.sub_jaxprs(eqn):
            trees[id(sub.jaxpr)] = code_groups(list(sub.jaxpr.eqns))
    return trees
