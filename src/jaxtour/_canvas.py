"""`Canvas`: a `graphviz.Digraph` being filled with fresh ids, clusters and edges."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from typing import Any

from jaxtour._palette import node_attrs
from jaxtour._style import add_legend


class Canvas:
    """A `graphviz.Digraph` being filled: fresh ids, clusters, edges drawn last, a legend.

    Edges are kept until `finish`, so declaring one never pulls a node into the cluster
    being drawn, and a repeated edge is drawn once.
    """

    def __init__(self, graph: Any, labels: bool = True) -> None:
        self.graph, self.labels = graph, labels
        self.ids = itertools.count()
        self.edges: dict[tuple[str, str], str] = {}
        self.families: set[str] = set()
        self.folded: set[str] = set()  # nodes for many values: edges unlabelled

    def new_id(self, prefix: str) -> str:
        """A node or cluster id never used before: `eqn7`, `cluster_8`."""
        return f"{prefix}{next(self.ids)}"

    def edge(self, src: str, dst: str, label: str = "") -> None:
        """Remember an edge (self-loops dropped); the first label given wins, and an
        edge to or from a folded node has none (its values have many types)."""
        if src != dst:
            folded = src in self.folded or dst in self.folded
            self.edges.setdefault((src, dst), "" if folded else label)

    def diamond(self, g: Any, label: str) -> str:
        """A small diamond in `g` for operands no nested computation takes (a branch
        index, a predicate); its id."""
        node = self.new_id("head")
        g.node(node, label, shape="diamond", fontsize="11", **node_attrs("cond"))
        return node

    @contextlib.contextmanager
    def cluster(
        self, g: Any, label: str, attrs: dict, enabled: bool = True
    ) -> Iterator[Any]:
        """A labelled cluster inside `g` (or `g` itself when not `enabled`)."""
        if not enabled:
            yield g
            return
        with g.subgraph(name=self.new_id("cluster_")) as c:
            c.attr(label=label, **attrs)
            yield c

    def finish(self) -> None:
        """Draw the remembered edges and a legend of the families used. Edges of a
        folded node do not pull the layout (50 of them fan out from one box: as
        constraints they skew the picture and slow Graphviz tenfold)."""
        for (src, dst), label in self.edges.items():
            loose = src in self.folded or dst in self.folded
            self.graph.edge(
                src,
                dst,
                label=label if self.labels and label else None,
                constraint="false" if loose else None,
            )
        add_legend(self.graph, self.families)
