"""The explorer's views: each one is a call to the library's own drawing (or JAX's text).

A view takes the example (`Subject`), the chosen `Transforms` and the `Options`, and
returns what the panel shows: a `Diagram`, a `Text` or a `Table`, together with the
one line of code that makes the same thing in a notebook (`Shown.code`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax

from jaxtour.explore._compose import Composed, Transforms, stack


class Subject(NamedTuple):
    """The function being explored (keyword arguments already bound), its name and args."""

    fn: Callable
    name: str
    args: tuple


@dataclass(frozen=True)
class Options:
    """Drawing options, defaulting as `draw_jaxpr` does: depth, grouping, direction."""

    depth: int | None = 2
    group: bool = False
    rankdir: str = "TB"


class Text(NamedTuple):
    """A program printed as text (a jaxpr, StableHLO, compiled HLO)."""

    title: str
    body: str


class Table(NamedTuple):
    """Named figures, e.g. XLA's cost and memory analysis."""

    title: str
    rows: list[tuple[str, str]]


class Shown(NamedTuple):
    """What a view produced, and the code that produces it outside the explorer."""

    result: Any  # Diagram | Text | Table | whatever compare_stages returns
    code: str


class View(NamedTuple):
    """A view: its label, the options it reads, and the function that draws it."""

    label: str
    options: frozenset[str]
    draw: Callable[[Subject, Transforms, Options, Composed], Shown]


def _opts(options: Options, *, depth: bool = True, group: bool = True) -> dict:
    found: dict[str, Any] = {}
    if depth:
        found["max_depth"] = options.depth
    if group:
        found["group_by"] = "source" if options.group else None
    found["rankdir"] = options.rankdir
    return found


def _code(call: str, kwargs: dict, label: str) -> str:
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    return f"{call}({label}{extra})(*args)"


def jaxpr_graph(subject: Subject, transforms: Transforms, options: Options,
                composed: Composed) -> Shown:
    from jaxtour.viz import draw_jaxpr

    fn, args, label = composed
    kwargs = _opts(options)
    return Shown(draw_jaxpr(fn, **kwargs)(*args), _code("draw_jaxpr", kwargs, label))


def jaxpr_text(subject: Subject, transforms: Transforms, options: Options,
               composed: Composed) -> Shown:
    fn, args, label = composed
    jaxpr = jax.make_jaxpr(fn)(*args)
    title = f"jaxpr of {label}: {len(jaxpr.eqns)} top-level equations"
    return Shown(Text(title, str(jaxpr)), f"jax.make_jaxpr({label})(*args)")


def stablehlo_text(subject: Subject, transforms: Transforms, options: Options,
                   composed: Composed) -> Shown:
    from jaxtour import _ir

    fn, args, label = composed
    lowered = _ir.trace(fn, args, {}, who="explore").lower()
    ops = sum(_ir.parse_stablehlo(_ir.stablehlo_text(lowered)).op_counts().values())
    title = f"StableHLO of {label}: {ops} op{'s' * (ops != 1)}"
    return Shown(Text(title, lowered.as_text()), f"jax.jit({label}).lower(*args).as_text()")


def _hlo_graph(stage: str) -> Callable[..., Shown]:
    def draw(subject: Subject, transforms: Transforms, options: Options,
             composed: Composed) -> Shown:
        from jaxtour.viz import draw_hlo

        fn, args, label = composed
        kwargs = {"stage": stage, "max_depth": options.depth, "rankdir": options.rankdir}
        return Shown(draw_hlo(fn, **kwargs)(*args), _code("draw_hlo", kwargs, label))

    return draw


def before_after(subject: Subject, transforms: Transforms, options: Options,
                 composed: Composed) -> Shown:
    from jaxtour.viz import compare_stages

    fn, args, label = composed
    return Shown(compare_stages(fn)(*args), _code("compare_stages", {}, label))


def autodiff_graph(subject: Subject, transforms: Transforms, options: Options,
                   composed: Composed) -> Shown:
    """`draw_jvp` with jvp on; `draw_grad` for a scalar output; `draw_vjp` otherwise.

    `jit` changes nothing here (the autodiff pictures inline `jit` calls); with `vmap`
    on, the function differentiated is `vmap(f)` on the batch.
    """
    from jaxtour import autodiff

    fn, args, label = subject.fn, subject.args, subject.name
    if transforms.grad and transforms.jvp:
        fn, label = jax.grad(fn), f"grad({label})"
    if transforms.vmap is not None:
        axis = transforms.vmap
        fn, args, label = jax.vmap(fn, in_axes=axis), stack(args, axis), f"vmap({label})"
    kwargs = {"rankdir": options.rankdir}
    if transforms.jvp:
        tangents = jax.tree.map(lambda x: jax.numpy.ones_like(x), args)
        diagram = autodiff.draw_jvp(fn, **kwargs)(args, tangents)
        return Shown(diagram, f"draw_jvp({label}, rankdir={options.rankdir!r})(args, ones)")
    draw = "draw_grad" if _scalar_output(fn, args) else "draw_vjp"
    diagram = getattr(autodiff, draw)(fn, **kwargs)(*args)
    return Shown(diagram, _code(draw, kwargs, label))


def _scalar_output(fn: Callable, args: tuple) -> bool:
    out = jax.eval_shape(fn, *args)
    return isinstance(out, jax.ShapeDtypeStruct) and out.shape == () and jax.numpy.issubdtype(
        out.dtype, jax.numpy.floating)


def cost_and_memory(subject: Subject, transforms: Transforms, options: Options,
                    composed: Composed) -> Shown:
    from jaxtour import _ir

    fn, args, label = composed
    compiled = _ir.trace(fn, args, {}, who="explore").lower().compile()
    figures = _ir.cost_summary(compiled)
    rows = [(_FIGURES.get(k, k), _amount(k, v)) for k, v in figures.items()]
    title = f"XLA's cost and memory analysis of {label} on {jax.default_backend()}"
    return Shown(Table(title, rows), f"jax.jit({label}).lower(*args).compile().cost_analysis()")


_FIGURES = {
    "flops": "floating-point operations",
    "transcendentals": "transcendental functions (exp, tanh, ...)",
    "bytes_accessed": "bytes read and written",
    "argument_bytes": "argument buffers",
    "output_bytes": "output buffers",
    "temp_bytes": "temporary buffers",
}


def _amount(key: str, value: float) -> str:
    if not key.endswith("bytes") and key != "bytes_accessed":
        return f"{value:,.0f}"
    for unit in ("B", "KiB", "MiB"):
        if value < 1024 or unit == "MiB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GiB"


GRAPH_OPTIONS = frozenset({"depth", "group", "rankdir"})
HLO_OPTIONS = frozenset({"depth", "rankdir"})
VIEWS: dict[str, View] = {
    "jaxpr graph": View("jaxpr graph", GRAPH_OPTIONS, jaxpr_graph),
    "jaxpr text": View("jaxpr text", frozenset(), jaxpr_text),
    "StableHLO text": View("StableHLO text", frozenset(), stablehlo_text),
    "StableHLO graph": View("StableHLO graph", HLO_OPTIONS, _hlo_graph("stablehlo")),
    "compiled HLO": View("compiled HLO (fusions)", HLO_OPTIONS, _hlo_graph("compiled")),
    "before/after XLA": View("before/after XLA", frozenset(), before_after),
    "autodiff graph": View("autodiff graph", frozenset({"rankdir"}), autodiff_graph),
    "cost and memory": View("cost and memory", frozenset(), cost_and_memory),
}
DEFAULT_VIEW = "jaxpr graph"
