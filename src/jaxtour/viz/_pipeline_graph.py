"""The pictures of `draw_pipeline`: the stages, built up in three steps or annotated
with one function's artefacts; and the slide style other concept diagrams share."""

from __future__ import annotations

from typing import Any, NamedTuple

from jaxtour._diagram import Diagram
from jaxtour._number_words import plural
from jaxtour._style import text_label

FONT = "Helvetica,Arial,sans-serif"
MONO = "Courier New,monospace"
# One colour per place the program lives: Python, JAX, XLA, the hardware.
COLOURS = {
    "python": "#fff4d6",
    "jax": "#dbe9ff",
    "transform": "#e4f5e1",
    "sharding": "#f3e6fb",
    "xla": "#fde2e1",
    "device": "#ececec",
}
# A trace is cached per function and abstract signature: shapes, dtypes, weak types,
# pytree structure, static arguments' values, shardings.
_JIT_NOTE = (
    "jax.jit(f)(x) runs these steps once per input signature, then reuses the result"
)

# stage -> (title, what it is, how to look at it (step 3), family)
_STAGES = {
    "python": ("pure Python function", "def f(x): ...", "", "python"),
    "jaxpr": (
        "jaxpr",
        "JAX's typed list of primitive equations",
        "jax.make_jaxpr(f)(x)\ntraced.jaxpr",
        "jax",
    ),
    "stablehlo": (
        "StableHLO",
        "the program JAX hands to XLA",
        "lowered.as_text()",
        "xla",
    ),
    "hlo": (
        "compiled HLO",
        "optimised by XLA: fused, laid out",
        "compiled.as_text()",
        "xla",
    ),
    "device": (
        "CPU · GPU · TPU",
        "runs the compiled executable",
        "jax.devices()",
        "device",
    ),
}
# (tail, head) -> (step-2 label: the stage's name, step-3 label: the call that gets there)
_EDGES = {
    ("python", "jaxpr"): ("tracing", "jax.jit(f).trace(x)"),
    ("jaxpr", "stablehlo"): ("lowering", "traced.lower()"),
    ("stablehlo", "hlo"): ("XLA compiles", "lowered.compile()"),
    ("hlo", "device"): ("executes", "compiled(x)"),
}
_TRANSFORMS = (
    ("grad", "jax.grad", "derivatives"),
    ("vmap", "jax.vmap", "batching"),
)
# Shardings: (step-2 lines, step-3 lines, the edge into XLA's compile step)
_SHARDING = (
    ("annotations, not a rewrite",),
    ("jit(f, in_shardings=...)",),
    ("partitioned:", "per-device code,", "collectives"),
)


def _pipeline_graph(heading: str, step: int) -> Any:
    import graphviz

    # Plain-text labels only: the embedded Graphviz draws no HTML-like labels.
    label = text_label(heading, _JIT_NOTE if step > 1 else "")
    graph = graphviz.Digraph("pipeline")
    # Two rows (JAX above, XLA below) fit a slide; newrank lets a row cross clusters.
    graph.attr(
        rankdir="LR" if step == 1 else "TB",
        newrank="true",
        nodesep="0.6",
        ranksep="0.6",
        fontname=FONT,
        label=label,
        labelloc="t",
        fontsize="20",
    )
    node_style(graph, fontsize="15", margin="0.22,0.12", color="#555555")
    graph.attr("edge", fontname=FONT, fontsize="13", color="#444444", penwidth="1.4")
    return graph


def node_style(
    graph: Any, shape: str = "box", style: str = "rounded,filled", **attrs: str
) -> None:
    """The nodes of a slide diagram: filled `shape`s in `FONT`, a 1.2-point outline,
    and `attrs` (fontsize, margin, color, ...)."""
    graph.attr("node", shape=shape, style=style, fontname=FONT, penwidth="1.2", **attrs)


def stage_label(
    title: str, lines: tuple[str, ...] = (), code: tuple[str, ...] = ()
) -> str:
    """A stage's label: its title, what it is, then the code that shows it (plain text)."""
    return text_label(title, *lines, *code)


def code_label(title: str, code: tuple[str, ...]) -> str:
    """A title over source lines, each left-aligned with its indentation kept."""
    import graphviz

    body = "".join(line.replace("\\", "\\\\") + "\\l" for line in code)
    return graphviz.nohtml(title.replace("\\", "\\\\") + "\\n" + body)


def general(step: int) -> Diagram:
    """The diagram with no function: `step` 1, 2 or 3 of building it up."""
    graph = _pipeline_graph("How JAX runs a function", step)
    if step == 1:
        _step_one(graph)
    else:
        _stages(graph, step, _labels(step, {k: (v[1],) for k, v in _STAGES.items()}))
    return Diagram.from_graph(graph, f"how JAX runs a function (step {step} of 3)")


def _step_one(graph: Any) -> None:
    # The two ideas first: tracing turns Python into a jaxpr, jit hands it to XLA.
    for name, title, family in (
        ("python", "pure Python function", "python"),
        ("jaxpr", "jaxpr", "jax"),
        ("xla", "XLA compiler", "xla"),
        ("device", "CPU · GPU · TPU", "device"),
    ):
        graph.node(name, stage_label(title), fillcolor=COLOURS[family])
    graph.edge("python", "jaxpr", label=" tracing ", fontsize="14")
    graph.edge("jaxpr", "xla", label=" jit ", fontsize="14")
    graph.edge("xla", "device")


def _labels(step: int, lines: dict[str, tuple[str, ...]]) -> dict[str, str]:
    labels = {}
    for name, (title, _, code, _) in _STAGES.items():
        code_lines = tuple(code.split("\n")) if step == 3 and code else ()
        labels[name] = stage_label(title, lines[name], code_lines)
    return labels


def _stages(graph: Any, step: int, labels: dict[str, str]) -> None:
    clusters = {"jax": "JAX (Python)", "xla": "XLA (compiler)"}
    source = {"fontname": MONO, "fontsize": "13"} if "\\l" in labels["python"] else {}
    graph.node(
        "python", labels["python"], fillcolor=COLOURS["python"], **source
    )  # leftmost
    for family, label in clusters.items():
        with graph.subgraph(name=f"cluster_{family}") as sub:
            sub.attr(
                label=label, style="dashed,rounded", color="#999999", fontsize="14"
            )
            for name in (n for n, spec in _STAGES.items() if spec[3] == family):
                sub.node(name, labels[name], fillcolor=COLOURS[family])
            if family == "jax":
                sub.node(
                    "transforms",
                    _transforms_label(step),
                    fillcolor=COLOURS["transform"],
                )
    graph.node(
        "shardings",
        _sharding_label(step),
        fillcolor=COLOURS["sharding"],
        style="rounded,filled,dashed",
    )
    graph.node("device", labels["device"], fillcolor=COLOURS["device"])
    # Rows: JAX above, XLA below. A row's own edges go inside its rank=same group.
    rows = [graph.subgraph(), graph.subgraph()]
    with rows[0] as top, rows[1] as bottom:
        top.attr(rank="same")
        bottom.attr(rank="same")
        for (tail, head), (named, entry) in _EDGES.items():
            where = {"python": top, "stablehlo": bottom, "hlo": bottom}.get(tail, graph)
            where.edge(
                tail,
                head,
                label=f" {entry if step == 3 else named} ",
                fontname=MONO if step == 3 else FONT,
            )
        top.edge("jaxpr", "transforms", label=" jaxpr → jaxpr ", dir="both")
    # Shardings do not touch the jaxpr: XLA's partitioner (GSPMD/Shardy) reads them.
    graph.edge("shardings", "hlo", label=text_label(*_SHARDING[2]), style="dashed")
    # XLA's row starts under Python's, so the picture stays narrow enough for a slide.
    graph.edge("python", "stablehlo", style="invis", weight="10")


def _sharding_label(step: int) -> str:
    return stage_label("shardings", _SHARDING[0], _SHARDING[1] if step == 3 else ())


def _transforms_label(step: int) -> str:
    lines = tuple(
        f"{api if step == 3 else name}: {what}" for name, api, what in _TRANSFORMS
    )
    return stage_label("transformations", lines)


class Artefacts(NamedTuple):
    """What one function became at each stage (private to `draw_pipeline`)."""

    name: str
    source: tuple[str, ...]
    eqns: int
    stablehlo_ops: int
    fusions: int
    hlo_ops: int
    platform: str
    device: str


def device_label(found: Artefacts, step: int) -> str:
    """The device box: the platform (CPU, GPU, TPU), then `found.device` where it
    says more (`device_words`: "NVIDIA H200", "4 × TPU v5 lite")."""
    code = ("jax.devices()",) if step == 3 else ()
    return stage_label(found.platform.upper(), (found.device,), code)


def annotated(found: Artefacts, step: int) -> Diagram:
    """The diagram (`step` 2 or 3) with each stage labelled with `found`'s artefacts."""
    graph = _pipeline_graph(f"How JAX runs {found.name}", step)
    labels = _labels(
        step,
        {
            "python": (),
            "jaxpr": (plural(found.eqns, "equation"),),
            "stablehlo": (plural(found.stablehlo_ops, "op"),),
            "hlo": (
                plural(found.fusions, "fusion"),
                plural(found.hlo_ops, "top-level op"),
            ),
            "device": (found.device,),
        },
    )
    labels["python"] = code_label(found.name, found.source)
    labels["device"] = device_label(found, step)
    _stages(graph, step, labels)
    title = (
        f"pipeline of {found.name}: {plural(found.eqns, 'equation')}, "
        f"{plural(found.stablehlo_ops, 'StableHLO op')}, {plural(found.fusions, 'fusion')} "
        f"on {found.platform}"
    )
    return Diagram.from_graph(graph, title)
