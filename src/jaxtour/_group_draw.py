"""Drawing a program nested by the user's calls, whatever its items are.

`GroupDrawing` is mixed into a builder of one IR (jaxpr equations, StableHLO or
compiled HLO ops, the steps of a run): it walks a `Group` tree (`_groups.code_groups`),
drawing an opened group as a labelled cluster and a folded one as one box its inputs
enter and its results leave. The builder supplies four hooks: `leaf` draws one item,
`fold_into` wires a folded group's values to its box, `primitive` names an item for
the box's summary, `weight` says how many nodes an item draws (for `_fit.plan`). It
records every group it draws, with the nodes inside, for the page
(`Diagram.save(".html")`) to fold and open again.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from jaxtour import _palette, _style
from jaxtour._code_groups import Group
from jaxtour._number_words import plural

# A folded group's box and an open group's cluster: the source-line cluster's colours.
GROUP = {**_style.SOURCE, "style": "rounded,filled", "fillcolor": "#F7F4EC"}


class GroupDrawing:
    """Mixin: draws a `Group` tree; groups in `open` as clusters, the rest folded."""

    graph: Any
    families: set
    unit = "equation"  # what a folded box counts: equations, ops, steps

    def start_groups(self, opened: set | None) -> None:
        self.open = opened  # ids of the groups drawn open (None: every group)
        self.folded_groups: list[Group] = []  # drawn as boxes, in drawing order
        self.drawn_nodes = 0
        self.level = 0  # the group level the items being drawn sit at
        self.inside: list[dict] = []  # the groups open around what is being drawn
        self.drawn_groups: list[
            dict
        ] = []  # every group drawn: id, label, parent, nodes

    # hooks the builder of one IR defines
    def leaf(self, g: Any, item: Any, *context: Any) -> None:
        raise NotImplementedError

    def fold_into(self, node: str, group: Group, *context: Any) -> None:
        raise NotImplementedError

    def primitive(self, item: Any) -> str:
        raise NotImplementedError

    def weight(self, item: Any) -> int:
        return 1

    def new_id(self, prefix: str) -> str:
        node: str = super().new_id(prefix)  # type: ignore[misc]
        kind = "clusters" if prefix.startswith("cluster") else "nodes"
        self.drawn_nodes += kind == "nodes"
        for group in self.inside:
            group[kind].append(node)
        return node

    def items(self, g: Any, group: Group, *context: Any) -> None:
        for item in group.items:
            if not isinstance(item, Group):
                self.leaf(g, item, *context)
            elif self.open is not None and id(item) not in self.open:
                self.box(g, item, *context)
            else:
                self.opened(g, item, *context)

    def opened(self, g: Any, group: Group, *context: Any) -> None:
        record = self._record(group, folded=False)
        self.level += 1
        self.inside.append(record)
        try:
            label = _style.text_label(group.label, kind_line(group))
            with self.cluster(g, label, GROUP) as c:  # type: ignore[attr-defined]
                record["cluster"] = record["clusters"].pop(0)
                self.items(c, group, *context)
        finally:
            self.inside.pop()
            self.level -= 1

    def box(self, g: Any, group: Group, *context: Any) -> None:
        """A folded group: one box its inputs enter and its results leave."""
        record = self._record(group, folded=True)
        node = self.new_id("group")
        record["nodes"].append(node)
        counts = collections.Counter(self.primitive(e) for e in group.eqns())
        top = counts.most_common(1)[0][0]
        summary = ", ".join(f"{p}×{n}" for p, n in counts.most_common(3))
        g.node(
            node,
            _style.text_label(
                f"{group.label}: {plural(group.size(), self.unit)}",
                kind_line(group),
                summary,
            ),
            tooltip=_style.tooltip(
                f"{group.label} ({group.kind}), called at {group.where}"
            ),
            **{**_palette.node_attrs(top), **GROUP, "shape": "box"},
        )
        self.folded_groups.append(group)
        self.families.add(_palette.family(top))
        self.fold_into(node, group, *context)

    def _record(self, group: Group, *, folded: bool) -> dict:
        record: dict[str, Any] = {
            "id": len(self.drawn_groups),
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
        self.drawn_groups.append(record)
        return record


def whole_page(
    build_all: Callable[[], Any], folded: Callable[[], set]
) -> Callable[[], tuple[str, list[dict]]]:
    """`Diagram.whole` for a nested drawing: every item drawn, every group recorded,
    those in `folded()` (the default view's closed groups) marked folded."""

    def whole() -> tuple[str, list[dict]]:
        builder = build_all()
        builder.finish()
        closed = folded()
        for group in builder.drawn_groups:
            group["folded"] = group["key"] in closed
        return builder.graph.source, builder.drawn_groups

    return whole


def kind_line(group: Group) -> str:
    """`Linear at model.py:29`: what was called and where, under a group's name."""
    where = f"at {group.where}" if group.where else ""
    kind = group.kind if group.kind != group.label.split(" ")[0] else ""
    return " ".join(filter(None, [kind, where]))
