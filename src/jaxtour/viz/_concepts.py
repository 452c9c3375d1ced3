"""Concept diagrams for slides: the autodiff landscape and the JAX AI stack.

Neither needs a function: they draw what the lessons say in words, so each is data
(the tables below) plus a few lines of layout.
"""

from __future__ import annotations

import itertools
import textwrap
from collections.abc import Mapping
from typing import Any

from jaxtour._diagram import Diagram
from jaxtour._style import text_label
from jaxtour.viz._pipeline_graph import FONT, node_style

# name -> (year of first release, how it gets derivatives and speed, advantage,
# disadvantage, colour). Years: TensorFlow Nov 2015, PyTorch Sep 2016, JAX 2018 (SysML
# paper Feb, open source Dec), TensorFlow 2.0 Sep 2019, PyTorch 2.0 Mar 2023.
LANDSCAPE = {
    "TensorFlow 1": (
        2015,
        "static graph: per-op kernels, XLA opt-in",
        "the whole program is known before it runs: optimised, exported, deployed anywhere",
        "you build a graph, not Python: sessions, placeholders, tf.cond; hard to debug",
        "#ffe0b2",
    ),
    "PyTorch": (
        2016,
        "dynamic graph: a tape recorded as Python runs",
        "plain Python: print, a debugger and any control flow work as usual",
        "op by op, the tape recorded again on every call: Python overhead between kernels",
        "#f8d7da",
    ),
    "JAX": (
        2018,
        "trace pure functions, transform, compile (XLA)",
        "grad, vmap and jit are transformations that compose; one program for CPU, GPU, TPU",
        "functions must be pure: no side effects, static shapes, explicit random keys",
        "#cfe3ff",
    ),
    "TensorFlow 2": (
        2019,
        "eager tape + tf.function graphs",
        "eager by default; tf.function graphs, and XLA (jit_compile=True) when speed matters",
        "two semantics, eager and graph, that differ in subtle ways; surprise retracing",
        "#fff3c4",
    ),
    "PyTorch 2": (
        2023,
        "eager tape + torch.compile, torch.func",
        "torch.compile compiles whole graphs of the same Python; torch.func has grad and vmap",
        "a graph break falls back to eager Python, quietly slower; two modes to debug",
        "#f3d1e8",
    ),
}
# Columns, left to right in order of release: the first generation, JAX, the second.
LANDSCAPE_COLUMNS = (
    ("TensorFlow 1", "PyTorch"),
    ("JAX",),
    ("TensorFlow 2", "PyTorch 2"),
)
# What each framework's next version changed, (tail, head) -> label; dashed: a borrowing.
LANDSCAPE_STEPS = {
    ("TensorFlow 1", "TensorFlow 2"): "eager by default",
    ("PyTorch", "PyTorch 2"): "compile the Python too",
}
LANDSCAPE_BORROWED = {("JAX", "PyTorch 2"): "JAX-like transforms"}

# The JAX AI stack, top to bottom: what is built with JAX, the libraries on it, JAX, XLA.
BUILT_WITH = ("LLMs", "solvers", "physics simulations")
LIBRARIES = {
    "neural networks": ("Flax", "Equinox"),
    "optimisers": ("Optax",),
    "checkpoints": ("Orbax",),
    "data loading": ("Grain",),
    "probabilistic\nprogramming": ("NumPyro", "BlackJAX"),
}
JAX_CORE = "jit · grad · vmap · sharding"
HARDWARE = "CPU · GPU · TPU"
# The pieces `draw_ai_stack(ran=...)` can annotate: every library, JAX, XLA, the hardware.
STACK_PIECES = (
    *(name for names in LIBRARIES.values() for name in names),
    "JAX",
    "XLA",
    "hardware",
)
_RAN_FILL, _IDLE_FILL = "#b9e6b0", "#f4f4f4"
_GREY = "#444444"
_OUTLINE = "#666666"  # of the cards and boxes
# a layer of the stack: a dashed frame, its label in grey
_LAYER = dict(style="rounded,dashed", color="#888888", fontsize="15", fontcolor=_GREY)


def draw_autodiff_landscape() -> Diagram:
    """Draw how five frameworks get derivatives and speed out of a program.

    Left to right in order of release: TensorFlow 1 (2015, static graph) and
    PyTorch (2016, a tape recorded as Python runs); JAX (2018, traced pure functions,
    transformed and compiled by XLA); TensorFlow 2 (2019, eager + `tf.function`) and
    PyTorch 2 (2023, `torch.compile` and `torch.func`). Each card weighs an
    advantage (+) against a disadvantage (−); solid arrows say what a framework's next
    version changed, the dashed one what PyTorch 2 took from JAX.

    Returns:
        A `Diagram` with one card per framework.

    Example:
        >>> draw_autodiff_landscape()
        Diagram('the autodiff landscape: 5 frameworks', 5 nodes, 7 edges)
    """
    import graphviz

    graph = graphviz.Digraph("autodiff_landscape")
    # Left to right: one column per era, so position on the page is time. (Not top-down
    # with rank=same rows: Graphviz loses flat edges between record nodes.)
    graph.attr(
        rankdir="LR",
        newrank="true",
        nodesep="0.5",
        ranksep="0.9",
        fontname=FONT,
        label=text_label(
            "The autodiff landscape",
            "how frameworks get derivatives and speed, "
            "left to right in order of release",
        ),
        labelloc="t",
        fontsize="22",
    )
    # Each card is a record (title | approach | + | −): records need no HTML labels,
    # which the embedded Graphviz cannot draw.
    node_style(
        graph, "Mrecord", "filled", fontsize="14", color=_OUTLINE, margin="0.15,0.08"
    )
    graph.attr("edge", fontname=FONT, fontsize="13", color=_GREY, penwidth="1.6")
    for name, (year, how, plus, minus, colour) in LANDSCAPE.items():
        graph.node(
            _node_id(name),
            _card(f"{name} · {year}", how, plus, minus),
            fillcolor=colour,
        )
    for column in LANDSCAPE_COLUMNS:
        with graph.subgraph() as same:
            same.attr(rank="same")
            for name in column:
                same.node(_node_id(name))
    # Invisible edges keep the columns in order, JAX's card between the two rows.
    for left, right in itertools.pairwise(LANDSCAPE_COLUMNS):
        for tail, head in itertools.product(left, right):
            graph.edge(_node_id(tail), _node_id(head), style="invis")
    for (tail, head), label in LANDSCAPE_STEPS.items():
        graph.edge(_node_id(tail), _node_id(head), label=f" {label} ")
    for (tail, head), label in LANDSCAPE_BORROWED.items():
        graph.edge(
            _node_id(tail),
            _node_id(head),
            label=f" {label} ",
            style="dashed",
            constraint="false",
        )
    return Diagram.from_graph(
        graph, f"the autodiff landscape: {len(LANDSCAPE)} frameworks"
    )


def _node_id(name: str) -> str:
    return name.lower().replace(" ", "_")


def _card(title: str, how: str, plus: str, minus: str) -> Any:
    import graphviz

    width = 34  # characters: equal widths, so the cards line up on a slide
    fields = [
        _record(title),
        _wrapped(how, width, indent=""),
        _wrapped("+ " + plus, width),
        _wrapped("− " + minus, width),
    ]
    # Left to right, a record's top-level fields stack top to bottom: no braces needed.
    return graphviz.nohtml("|".join(fields))


def _wrapped(text: str, width: int, indent: str = "  ") -> str:
    lines = textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False)
    return "".join(_record(line) + "\\l" for line in lines)


def _record(text: str) -> str:
    """Escape the characters a record label gives meaning to."""
    for char in "\\{}|<>":
        text = text.replace(char, "\\" + char)
    return text


def draw_ai_stack(*, ran: Mapping[str, str] | None = None) -> Diagram:
    """Draw the JAX AI stack: JAX at the centre, libraries on it, things built with it.

    Top to bottom: what people build with JAX (LLMs, solvers, physics simulations),
    the libraries built on it (neural networks: Flax, Equinox; optimisers: Optax;
    checkpoints: Orbax; data loading: Grain; probabilistic programming: NumPyro,
    BlackJAX), JAX itself, then XLA and the hardware.

    Args:
        ran: what a lesson ran, piece by piece: a library's name (``"Flax"``,
            ``"Optax"``, ...), ``"JAX"``, ``"XLA"`` or ``"hardware"`` mapped to a short
            text, e.g. ``{"Optax": "sgd + momentum"}``. Each named piece is drawn
            highlighted with its text, and the pieces not named are greyed out, so the
            picture shows the path the lesson took through the stack.

    Returns:
        A `Diagram`: two labelled layers above the JAX node, XLA and hardware below.

    Raises:
        ValueError: `ran` names a piece that is not in the stack; the message lists them.

    Example:
        >>> stack = draw_ai_stack()
        >>> stack.title, stack.counts
        ('the JAX AI stack: 5 kinds of library, 3 kinds of application', (11, 19))
        >>> draw_ai_stack(ran={"Optax": "sgd + momentum"}).title
        'the JAX AI stack as run here: Optax'
    """
    import graphviz

    ran = _check_ran(ran)
    graph = graphviz.Digraph("ai_stack")
    graph.attr(
        rankdir="TB",
        nodesep="0.3",
        ranksep="0.5",
        fontname=FONT,
        label="The JAX AI stack" + (": what this lesson ran" if ran else ""),
        labelloc="t",
        fontsize="22",
    )
    node_style(graph, fontsize="15", margin="0.15,0.1", color=_OUTLINE)
    graph.attr("edge", color=_GREY, penwidth="1.4", arrowhead="none")
    _layer(
        graph,
        "built",
        "built with JAX",
        "#f3e5f5",
        {f"app_{i}": text_label(name) for i, name in enumerate(BUILT_WITH)},
    )
    with graph.subgraph(name="cluster_libraries") as layer:
        layer.attr(label="libraries built on JAX", **_LAYER)
        for i, (kind, names) in enumerate(LIBRARIES.items()):
            _piece(
                layer,
                f"lib_{i}",
                [*kind.split("\n"), " · ".join(names)],
                names,
                ran,
                "#e4f5e1",
                width="2.4",
            )
        _same_rank(layer, [f"lib_{i}" for i in range(len(LIBRARIES))])
    _piece(
        graph,
        "jax",
        ["JAX", JAX_CORE],
        ("JAX",),
        ran,
        "#cfe3ff",
        fontsize="22",
        penwidth="2.5",
        color="#1a4d8f",
    )
    _piece(graph, "xla", ["XLA", "the compiler"], ("XLA",), ran, "#fde2e1")
    _piece(graph, "hardware", [HARDWARE], ("hardware",), ran, "#ececec")
    # Layers stack like a cake: invisible edges keep the applications above the
    # libraries; a line joins each library to JAX.
    # each application above the gap between two libraries
    for i in range(len(BUILT_WITH)):
        for j in (i + 1, i + 2):
            graph.edge(f"app_{i}", f"lib_{min(j, len(LIBRARIES) - 1)}", style="invis")
    for i in range(len(LIBRARIES)):
        graph.edge(f"lib_{i}", "jax")
    graph.edge("jax", "xla")
    graph.edge("xla", "hardware")
    if ran:
        return Diagram.from_graph(
            graph, "the JAX AI stack as run here: " + ", ".join(ran)
        )
    return Diagram.from_graph(
        graph,
        f"the JAX AI stack: {len(LIBRARIES)} kinds of library, "
        f"{len(BUILT_WITH)} kinds of application",
    )


def _check_ran(ran: Mapping[str, str] | None) -> dict[str, str]:
    if ran is None:
        return {}
    if not isinstance(ran, Mapping):
        raise TypeError(
            "`ran` must map pieces of the stack to text, e.g. "
            f'{{"Optax": "sgd + momentum"}}; got {type(ran).__name__}.'
        )
    unknown = [name for name in ran if name not in STACK_PIECES]
    if unknown:
        raise ValueError(
            f"`ran` names {', '.join(map(repr, unknown))}, not in the stack; "
            f"the pieces are: {', '.join(STACK_PIECES)}."
        )
    return {name: str(text) for name, text in ran.items()}


def _piece(
    graph: Any,
    node_id: str,
    lines: list[str],
    names: tuple[str, ...],
    ran: dict[str, str],
    colour: str,
    **attrs: str,
) -> None:
    """One box of the stack; with `ran`, highlighted and annotated, or greyed out."""
    done = [f"▶ {ran[name]}" for name in names if name in ran]
    if ran and done:
        attrs |= {"fillcolor": _RAN_FILL, "penwidth": "2.5", "color": "#1b5e20"}
    elif ran:
        attrs |= {"fillcolor": _IDLE_FILL, "fontcolor": "#8a8a8a", "color": "#bbbbbb"}
    else:
        attrs.setdefault("fillcolor", colour)
    graph.node(node_id, text_label(*lines, *done), **attrs)


def _layer(
    graph: Any, name: str, label: str, colour: str, nodes: dict[str, str]
) -> None:
    with graph.subgraph(name=f"cluster_{name}") as layer:
        layer.attr(label=label, **_LAYER)
        for node_id, node_label in nodes.items():
            # one width for all: the layer stays symmetric
            layer.node(node_id, node_label, fillcolor=colour, width="3.1")
        _same_rank(layer, list(nodes))


def _same_rank(graph: Any, node_ids: list[str]) -> None:
    with graph.subgraph() as row:  # left to right in the order given
        row.attr(rank="same")
        for tail, head in itertools.pairwise(node_ids):
            row.edge(tail, head, style="invis")
