"""An `ADGraph` as Graphviz: one cluster per lane, residuals in between, edges by kind."""

from __future__ import annotations

import textwrap
from typing import Any

import graphviz

from jaxtour import _fit, _group_draw, _options, _palette, _render
from jaxtour import _style as style
from jaxtour._diagram import Diagram
from jaxtour._io_nodes import ROW, place_rows
from jaxtour._options import MAX_WIDTH_PX
from jaxtour.autodiff._adgraph import ADGraph, ADNode
from jaxtour.autodiff._display import DEFAULTS
from jaxtour.autodiff._fold import STEPS, fold
from jaxtour.autodiff._format import format_value

# Folding by default: pytrees of more than 8 leaves, jit calls below depth 2 (as
# draw_jaxpr), one node per source line past 150 drawn equations.
FOLD_DEFAULTS = {k: DEFAULTS[k] for k in ("expand_pytrees", "max_depth", "max_eqns")}
# lane -> (cluster title, fill, border)
LANES = {  # short: the embedded renderer under-measures text, and clusters do not grow
    "forward": ("forward pass ↓", "#F7FAFF", "#3A7BC8"),
    "backward": ("backward pass ↑", "#FFF7F7", "#C0282D"),
    "primal": ("primal lane", "#F7FAFF", "#3A7BC8"),
    "tangent": ("tangent lane", "#FAF7FF", "#7B52BD"),
}
RESIDUALS = ("residuals", "#FDF2F8", "#DB2777")
SUBTITLES = {
    "backward": "blue: primal values · pink: residuals, saved for the backward pass · red: "
    "cotangents, from the seed up to each gradient (beside its input)",
    "tangent": "blue: primal values · purple: tangents · orange dashed: primal values the "
    "tangent lane reads",
}
# kind -> node attributes; "op" nodes take their primitive family's colours (jaxtour._style).
NODES = {
    "input": style.INPUT,
    "fixed": {
        **style.INPUT,
        "color": "#7A7A7A",
        "fillcolor": "#EAEAEA",
        "style": "rounded,filled",
    },
    "const": {"fillcolor": "#EAEAEA", "color": "#7A7A7A"},
    "output": style.OUTPUT,
    "residual": {
        "shape": "cylinder",
        "style": "filled",
        "fillcolor": "#FCE7F3",
        "color": "#DB2777",
        "penwidth": "2",
    },
    "seed": {"fillcolor": "#FEE2E2", "color": "#C0282D", "penwidth": "2.5"},
    "gradient": {
        "fillcolor": "#DCFCE7",
        "color": "#15803D",
        "penwidth": "2.5",
        "peripheries": "2",
    },
}
EDGES = {
    "primal": {"color": "#3A7BC8"},
    "tangent": {"color": "#7B52BD"},
    "cross": {"color": "#E8590C", "style": "dashed"},
    "residual": {"color": "#DB2777", "style": "dashed", "penwidth": "1.8"},
    "cotangent": {"color": "#C0282D"},
    "link": {
        "color": "#15803D",
        "style": "dotted",
        "penwidth": "2",
        "constraint": "false",
        "arrowhead": "none",
    },
}


def to_digraph(
    graph: ADGraph, rankdir: str = "TB", **fold_options: Any
) -> graphviz.Digraph:
    """The Graphviz picture of `graph` (lanes as clusters, residuals between them),
    folded as `_fold.fold` says (`expand_pytrees`, `max_depth`, `max_eqns`)."""
    _options.check_rankdir(rankdir, "draw")
    return _draw(*fold(graph, **{**FOLD_DEFAULTS, **fold_options}), rankdir)


def _draw(
    graph: ADGraph, rep: dict, rankdir: str, calls: bool = True
) -> graphviz.Digraph:
    lanes = list(dict.fromkeys(n.lane for n in graph.nodes.values()))
    dot = graphviz.Digraph("autodiff")
    attrs = style.graph_attrs(graph.title, rankdir)
    # Plain text in short lines: the embedded renderer under-measures text and would clip.
    attrs["label"] = "\\n".join(
        [
            graph.title,
            *textwrap.wrap(graph.note, 56),
            *textwrap.wrap(SUBTITLES.get(lanes[-1], ""), 56),
        ]
    )
    attrs["fontsize"] = "16"
    dot.attr(**attrs)
    dot.attr("node", **{**style.NODE, "fontsize": "13"})
    dot.attr("edge", **{**style.EDGE, "penwidth": "1.4"})
    for lane in lanes:
        members = [n for n in graph.select(lane=lane) if n.kind != "residual"]
        _cluster(dot, lane, *LANES[lane], members, calls and graph.own_calls)
        if lane == lanes[0] and graph.select("residual"):
            _cluster(dot, "residuals", *RESIDUALS, graph.select("residual"))
    for edge in graph.edges:
        _edge(dot, graph, edge)
    _align_ends(dot, graph, rep)
    for kind in ("input", "fixed", "residual", "gradient", "output"):
        # Lanes share the width: terminals wrap at half a row, residuals at a row.
        place_rows(
            dot,
            [n.id for n in graph.select(kind)],
            None,
            per_row=ROW if kind == "residual" else ROW // 2,
        )
    return dot


def _edge(dot: graphviz.Digraph, graph: ADGraph, edge: Any) -> None:
    # The backward pass is laid out upwards, mirroring the forward pass: its edges are
    # drawn reversed (dir=back), so the seed sits beside f's output and each gradient
    # beside its input. Residuals cross over without pulling the layout.
    attrs = dict(EDGES[edge.kind])
    if edge.kind == "residual" and graph.nodes[edge.dst].lane == "backward":
        attrs["constraint"] = "false"
    if edge.kind == "cotangent":
        dot.edge(edge.dst, edge.src, dir="back", **attrs)
    else:
        dot.edge(edge.src, edge.dst, **attrs)


def _align_ends(dot: graphviz.Digraph, graph: ADGraph, rep: dict) -> None:
    grads = sorted((i for i in rep if i.startswith("grad")), key=lambda i: int(i[4:]))
    pairs = [(rep[f"in{k}"], rep[g]) for k, g in enumerate(grads)]
    pairs += [
        (o.id, s.id)
        for o, s in zip(
            graph.select("output", "forward"),
            graph.select("seed", "backward"),
            strict=False,
        )
    ]
    for a, b in dict.fromkeys(pairs):
        # One line, no node statements: the nodes stay in their clusters, and
        # `Diagram`'s node count stays the number of boxes.
        dot.body.append(f"\t{{rank=same {a} {b}}}\n")


def _cluster(
    dot: graphviz.Digraph,
    name: str,
    label: str,
    fill: str,
    border: str,
    members: list,
    calls: bool = False,
) -> None:
    """A lane's cluster; with `calls`, its ops nested in boxes of the user's calls
    they sit in (`ADNode.call`), as `draw_jaxpr` nests a program."""
    with dot.subgraph(name=f"cluster_{name}") as sub:
        sub.attr(
            label=label,
            style="rounded,filled",
            fillcolor=fill,
            color=border,
            fontname=style.FONT,
            fontsize="14",
            fontcolor=border,
            penwidth="1.4",
        )
        _calls(sub, f"cluster_{name}", (), members if calls else [], [])
        for node in members:
            if not (calls and node.call):
                _node(sub, node)


def _node(g: Any, node: ADNode) -> None:
    attrs = (
        _palette.node_attrs(node.primitive) if node.kind == "op" else NODES[node.kind]
    )
    g.node(node.id, label=node_label(node), **attrs)


def _calls(g: Any, prefix: str, path: tuple, members: list, ids: list) -> None:
    """Boxes of the calls one level below `path`, each holding its ops and deeper calls."""
    inner = [
        n for n in members if len(n.call) > len(path) and n.call[: len(path)] == path
    ]
    for label in dict.fromkeys(n.call[len(path)] for n in inner):
        ids.append(label)
        with g.subgraph(name=f"{prefix}_{len(ids)}") as c:
            c.attr(label=label, **_group_draw.GROUP)
            for node in inner:
                if node.call == (*path, label):
                    _node(c, node)
            _calls(c, prefix, (*path, label), inner, ids)


def node_label(node: ADNode) -> str:
    """The label: the name, then one line per output (type, and value when known).

    Plain text, not an HTML label: the embedded WebAssembly Graphviz draws HTML labels
    as the bare node name, and a picture must look the same with either renderer.
    """
    lines = [node.label, *filter(None, [node.runs])]
    for aval, value in zip(node.avals, node.values, strict=True):
        lines.append(aval if value is None else f"{aval} {format_value(value)}")
    return "\\n".join(line.replace("\\", "\\\\") for line in lines)


def to_diagram(
    graph: ADGraph,
    rankdir: str = "TB",
    max_width: int | None = MAX_WIDTH_PX,
    **fold_options: Any,
) -> Diagram:
    """As `to_digraph`, wrapped in the `Diagram` every jaxtour visualiser returns.

    A picture wider than `max_width` pixels is folded a step further and drawn again,
    until one fits; if none does, the narrowest is returned, scaled down by Graphviz
    to `max_width`. The equation count alone
    does not bound the width (parallel chains, long value labels), and the values a
    program computes (a Dropout mask's random bits) change it from call to call.
    """
    options = {**FOLD_DEFAULTS, **fold_options}
    why = f"to fit {max_width:,} px" if max_width else ""
    drawn: list[tuple[float, Diagram]] = []
    boxes = len(graph.nodes) + 1
    for further in range(STEPS):
        folded, rep = fold(graph, **options, further=further, why=why)
        if len(folded.nodes) >= boxes:
            continue  # this step folds nothing more here: the same picture
        boxes = len(folded.nodes)
        # the user's calls as boxes; when they only cut one function (its own loop's
        # turns) and do not fit, the same step without them before folding further
        for calls in (True, False)[: 1 + _one_function(folded)]:
            diagram = Diagram.from_graph(
                _draw(folded, rep, rankdir, calls), folded.title
            )
            width = _width_over(diagram, folded, max_width)
            if width is None:
                return diagram
            drawn.append((width, diagram))
    return _fit.capped(min(drawn, key=lambda pair: pair[0])[1], max_width)


def _one_function(graph: ADGraph) -> bool:
    """Whether the boxes of `graph`'s calls in its first lane (the user's code run
    forward) are all one function, one level deep."""
    first = next(iter(graph.nodes.values())).lane if graph.nodes else ""
    paths = {n.call for n in graph.select("op", first) if n.call}
    names = {p[0].removesuffix(" (backward)").rstrip("0123456789 ") for p in paths}
    return graph.own_calls and all(len(p) == 1 for p in paths) and len(names) == 1


def _width_over(
    diagram: Diagram, folded: ADGraph, max_width: int | None
) -> float | None:
    """`diagram`'s width in px if over `max_width`, else None; measured only where it
    could be.

    Boxes that would fit side by side are not laid out; with no renderer (or one
    that rejects the picture, as `svg` will then say) there is nothing to measure.
    """
    if max_width is None or _side_by_side_px(folded) <= max_width:
        return None
    try:
        width = diagram.width_px
    except (_render.RendererUnavailableError, ValueError):
        return None
    return width if width > max_width else None


def _side_by_side_px(graph: ADGraph) -> float:
    """A generous width for the title beside every box in one row: 13 pt text is
    about 9.5 px a character on average; 12 px, with margins and gaps (16 pt: 15)."""
    labels = (node_label(n).split("\\n") for n in graph.nodes.values())
    boxes = sum(12 * max(map(len, lines)) + 50 for lines in labels)
    return boxes + 15 * len(graph.title)
