"""How jaxtour's Graphviz pictures look: fonts, node, edge and cluster styles, labels.

`graph_attrs(title, rankdir, subtitle)`, `NODE`, `EDGE` set up a `graphviz.Digraph`;
`NESTED`, `FUSION`, `SOURCE` style clusters, `INPUT`, `OUTPUT`, `DEAD` nodes;
`text_label(head, *lines)` makes a label both renderers draw; `add_legend` adds the
swatches of the families used. The colours by primitive family are `_palette`'s, the
canvas that fills a graph is `_canvas`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jaxtour._palette import FAMILIES

FONT = "Helvetica,Arial,sans-serif"
NODE = {
    "shape": "box",
    "style": "rounded,filled",
    "fontname": FONT,
    "fontsize": "14",
    "margin": "0.12,0.06",
    "penwidth": "1.2",
}
EDGE = {
    "fontname": FONT,
    "fontsize": "10",
    "fontcolor": "#555555",
    "color": "#777777",
    "arrowsize": "0.7",
}
# Clusters: a nested jaxpr or region, a fusion, a group of eqns from one source line.
NESTED = {
    "style": "rounded,filled",
    "fillcolor": "#F8F5FD",
    "color": "#7B52BD",
    "fontname": FONT,
    "fontsize": "13",
    "penwidth": "1.4",
}
FUSION = {
    "style": "rounded,filled",
    "fillcolor": "#FFF6DC",
    "color": "#C58B00",
    "fontname": FONT,
    "fontsize": "13",
    "penwidth": "2.2",
}
SOURCE = {
    "style": "rounded,filled",
    "fillcolor": "#F3F5F7",
    "color": "#98A4B0",
    "fontname": FONT,
    "fontsize": "12",
    "penwidth": "1.0",
}
INPUT = {
    "shape": "box",
    "style": "rounded,filled,bold",
    "fillcolor": "#FFFFFF",
    "color": "#222222",
    "fontname": FONT,
    "fontsize": "13",
}
OUTPUT = {**INPUT, "fillcolor": "#2B2B2B", "fontcolor": "#FFFFFF"}
DEAD = {
    "style": "rounded,dashed",
    "fillcolor": "#FFFFFF",
    "color": "#999999",
    "fontcolor": "#777777",
}  # an eqn whose results nothing reads


def graph_attrs(title: str, rankdir: str = "TB", subtitle: str = "") -> dict[str, str]:
    """Graph attributes: the title (and a subtitle line) on top, slide-sized fonts."""
    label = text_label(title, subtitle) if subtitle else title
    return {
        "label": label,
        "labelloc": "t",
        "labeljust": "c",
        "fontname": FONT,
        "fontsize": "20",
        "rankdir": rankdir,
        "nodesep": "0.25",
        "ranksep": "0.35",
        "newrank": "true",
        "bgcolor": "white",
    }


def text_label(head: str, *lines: str) -> str:
    """A multi-line label: `head`, then each non-empty line (plain text: the embedded
    Graphviz renders no HTML-like labels)."""
    import graphviz

    parts = [head, *(line for line in lines if line)]
    text = "\\n".join(part.replace("\\", "\\\\") for part in parts)
    return graphviz.nohtml(text)  # "<lambda>" is a name, not an HTML label


def add_legend(graph: Any, families: Iterable[str]) -> None:
    """Add a row of small swatches (`legend0`, ...) for the families used, at the end."""
    used = [name for name in FAMILIES if name in set(families)]
    if not used:
        return
    with graph.subgraph(name="legend") as g:
        g.attr(rank="sink")
        for i, name in enumerate(used):
            g.node(
                f"legend{i}",
                FAMILIES[name].label,
                fontsize="10",
                margin="0.06,0.02",
                height="0.2",
                fillcolor=FAMILIES[name].fill,
                color=FAMILIES[name].border,
                style="filled",
                shape="box",
            )
        for i in range(len(used) - 1):
            g.edge(f"legend{i}", f"legend{i + 1}", style="invis")


def tooltip(text: str) -> str:
    r"""`text` as a DOT tooltip that shows it as written. Graphviz reads a tooltip's
    backslashes twice (as an escString, then again for the SVG's title), so each is
    written four times; left alone, a line continued with `\` ended the DOT string
    in `\"` and Graphviz refused the picture.

    Example:
        >>> print(tooltip("y = a + \\"))
        y = a + \\\\
    """
    return text.replace("\\", "\\" * 4)
