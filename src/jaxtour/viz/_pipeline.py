"""`draw_pipeline`: the road from a Python function to the device, for slides.

pure Python function → tracing → jaxpr → lowering → StableHLO → XLA → compiled HLO
→ CPU/GPU/TPU, with the transformations (`grad`, `vmap`) turning one jaxpr into
another, and shardings beside them: not a transformation (the jaxpr is the same with
and without them) but annotations that XLA's partitioner turns into per-device code
and collectives. Three progressive versions for slides, or one annotated with the
artefacts of *your* function.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any, NamedTuple, overload

from jaxtour import _ir
from jaxtour._diagram import Diagram
from jaxtour._style import plural, text_label
from jaxtour.viz._jaxpr import static_tuple

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
STEPS = (1, 2, 3)
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


@overload
def draw_pipeline(
    f: None = None, *, step: int = 3, static_argnums: int | tuple[int, ...] = ()
) -> Diagram: ...


@overload
def draw_pipeline(
    f: Callable, *, step: int = 3, static_argnums: int | tuple[int, ...] = ()
) -> Callable[..., Diagram]: ...


def draw_pipeline(
    f: Callable | None = None,
    *,
    step: int = 3,
    static_argnums: int | tuple[int, ...] = (),
) -> Diagram | Callable[..., Diagram]:
    """Draw how JAX runs a function: tracing, jaxpr, StableHLO, XLA, the device.

    Without `f` there is nothing to trace, so the general diagram comes back at
    once; `step` builds it up for slides: 1 shows tracing and jit, 2 names each
    stage, 3 adds the `jax.*` entry points that reach each stage. With `f`, it is
    configured first and then called with example arguments, as `jax.make_jaxpr`
    is; the stages are annotated with *that* function's artefacts: a source
    excerpt, the jaxpr's equation count, the StableHLO op count, the compiled
    fusion count, and the device it was compiled for.

    Args:
        f: the function to trace, or None for the general diagram.
        step: 1, 2 or 3 (see above); with `f`, 2 or 3.
        static_argnums: positions of `f`'s arguments that are constants, not arrays,
            as in `jax.jit`.

    Returns:
        A `Diagram` when `f` is None; otherwise a function of `f`'s example
        arguments returning a `Diagram`.

    Raises:
        TypeError: `f` is not callable, or an example argument is not an array.
        ValueError: `step` is not one of the values above.

    Example:
        >>> draw_pipeline(step=1)
        Diagram('how JAX runs a function (step 1 of 3)', 4 nodes, 3 edges)
        >>> import jax.numpy as jnp
        >>> draw_pipeline(jnp.sin)(1.0).title  # doctest: +ELLIPSIS
        'pipeline of sin: 1 equation, 1 StableHLO op, 1 fusion on ...'
    """
    _check_step(step)
    if f is None:
        return _general(step)
    _ir.check_callable(f, "draw_pipeline")
    if step == 1:
        raise ValueError(
            "draw_pipeline(f, step=1) has no stage to annotate with f's artefacts; "
            "use step=2 or 3 with a function, or draw_pipeline(step=1) without one."
        )

    static = static_tuple(static_argnums)

    def draw(*args, **kwargs) -> Diagram:
        found = collect(f, args, kwargs, static)
        return _annotated(found, step)

    return draw


def _check_step(step: int) -> None:
    if step not in STEPS:
        raise ValueError(
            f"`step` must be 1 (tracing and jit), 2 (every stage named) or 3 (with the "
            f"jax.* entry points); got {step!r}."
        )


def _graph(heading: str, step: int):
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


def _general(step: int) -> Diagram:
    graph = _graph("How JAX runs a function", step)
    if step == 1:
        _step_one(graph)
    else:
        _stages(graph, step, _labels(step, {k: (v[1],) for k, v in _STAGES.items()}))
    return Diagram.from_graph(graph, f"how JAX runs a function (step {step} of 3)")


def _step_one(graph) -> None:
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


def _stages(graph, step: int, labels: dict[str, str]) -> None:
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


def _annotated(found: Artefacts, step: int) -> Diagram:
    graph = _graph(f"How JAX runs {found.name}", step)
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
    labels["device"] = stage_label(
        found.platform.upper(), (found.device,), ("jax.devices()",) if step == 3 else ()
    )
    _stages(graph, step, labels)
    title = (
        f"pipeline of {found.name}: {plural(found.eqns, 'equation')}, "
        f"{plural(found.stablehlo_ops, 'StableHLO op')}, {plural(found.fusions, 'fusion')} "
        f"on {found.platform}"
    )
    return Diagram.from_graph(graph, title)


# --- f's artefacts: counted through jaxtour._ir, the one module that reads IR -------
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


def collect(
    f: Callable, args: tuple, kwargs: dict, static: tuple[int, ...] = ()
) -> Artefacts:
    """Trace, lower and compile `f` on the example arguments; count what each made."""
    # f's own errors propagate, with a note saying what was being traced.
    traced = _ir.trace(f, args, kwargs, who="draw_pipeline", static_argnums=static)
    lowered = traced.lower()
    compiled = lowered.compile()
    stablehlo = _ir.parse_stablehlo(lowered.as_text())
    hlo = _ir.parse_hlo(compiled.as_text())
    devices = _devices(compiled)
    return Artefacts(
        name=_ir.function_name(f),
        source=source_excerpt(f),
        eqns=_ir.count_eqns(traced.jaxpr.jaxpr),
        stablehlo_ops=sum(stablehlo.op_counts().values()),
        fusions=len(hlo.fusions()),
        hlo_ops=sum(hlo.op_counts(fused=False).values()),
        platform=devices[0].platform,
        device=_describe(devices),
    )


def source_excerpt(f, max_lines: int = 6, width: int = 52) -> tuple[str, ...]:
    """The first lines of `f`'s body without decorators or docstring, or ()."""
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(f)))
    except (OSError, TypeError):
        return ()
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda in a continued expression: its lines as they are
        return tuple(_shorten(line.strip(), width) for line in lines[:max_lines])
    node = tree.body[0]
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    if getattr(f, "__name__", "") == "<lambda>" and len(lambdas) == 1:
        lines = (ast.get_source_segment(source, lambdas[0]) or "").splitlines()
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        first = node.body[0]
        has_doc = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        body_start = first.end_lineno if has_doc else first.lineno - 1
        lines = (
            lines[node.lineno - 1 : node.body[0].lineno - 1][:1] + lines[body_start:]
        )
    lines = [line for line in lines if line.strip()]
    excerpt = [_shorten(line, width) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        excerpt.append("    ...")
    return tuple(excerpt)


def _shorten(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def _devices(compiled) -> list:
    import jax

    try:
        shardings = jax.tree.leaves(
            (compiled.input_shardings, compiled.output_shardings)
        )
    except ValueError:  # JAX cannot report them (a step that mutates jax.ref Refs)
        shardings = jax.tree.leaves(compiled.input_shardings)
    devices = {d for s in shardings for d in s.device_set}
    return sorted(devices, key=lambda d: d.id) or jax.devices()[:1]


def _describe(devices: list) -> str:
    kinds = sorted({f"{d.platform}: {d.device_kind}" for d in devices})
    many = f"{len(devices)} × " if len(devices) > 1 else ""
    return many + ", ".join(kinds)
