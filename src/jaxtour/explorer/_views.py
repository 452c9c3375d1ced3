"""The explorer's views: each one is a call to the library's own drawing (or JAX's text).

A view takes a `Request` (the example, the chosen transformations, the function they
composed, the drawing options) and returns what the panel shows: a `Diagram`, a `Text`,
a `Table` or `compare_stages`' comparison, together with the one line of code that
makes the same thing in a notebook (`Shown.code`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxtour.explorer._compose import batch_code, ones_tangents, stack
from jaxtour.explorer._request import Request, Shown, Table, Text, View
from jaxtour.explorer._snippet import named, tangents
from jaxtour.explorer._step_through import step_view


def _jitted(label: str) -> str:
    # `jax.jit(f)`, without wrapping an already jitted composition twice.
    return f"jax.{label}" if label.startswith("jit(") else f"jax.jit({label})"


def _code(call: str, kwargs: dict, request: Request, label: str = "") -> str:
    # `label`: a composition of the view's own (the autodiff graph), on the batch
    extra = "".join(f", {k}={v!r}" for k, v in kwargs.items())
    setup, called, args, _ = named(request, lens=True)
    if label:
        setup, called, args = "", label, f"*{batch_code(request.transforms)}"
    return f"{setup}{call}({called}{extra})({args})"


def jaxpr_graph(request: Request) -> Shown:
    from jaxtour.viz import draw_jaxpr

    fn, args, _ = request.composed
    options = request.options
    kwargs: dict[str, Any] = {
        "max_depth": options.depth,
        "group_by": "source" if options.group else "auto",
        "rankdir": options.rankdir,
    }
    return Shown(draw_jaxpr(fn, **kwargs)(*args), _code("draw_jaxpr", kwargs, request))


def jaxpr_text(request: Request) -> Shown:
    from jaxtour import _ir

    fn, args, label = request.composed
    # a jitted f's own statics, as make_jaxpr must be told them
    nums = _ir.statics_for(fn, args, {}, _ir.StaticArgs()).nums
    if _ir.is_model(fn):  # its arrays the jaxpr's inputs, as every lens traces it
        fn, args, _, _ = _ir.split_model(fn, args, frozenset(), ())
    jaxpr = jax.make_jaxpr(fn, static_argnums=nums)(*args)
    title = f"jaxpr of {label}: {len(jaxpr.eqns)} top-level equations"
    told = f", static_argnums={nums}" if nums else ""
    setup, called, call, _ = named(request)
    code = f"{setup}jax.make_jaxpr({called}{told})({call})"
    return Shown(Text(title, str(jaxpr)), code)


def stablehlo_text(request: Request) -> Shown:
    from jaxtour import _ir

    fn, args, label = request.composed
    lowered = _ir.trace(fn, args, {}, who="explore").lower()
    ops = sum(_ir.parse_stablehlo(_ir.stablehlo_text(lowered)).op_counts().values())
    title = f"StableHLO of {label}: {ops} op{'s' * (ops != 1)}"
    setup, called, call, _ = named(request)
    code = f"{setup}{_jitted(called)}.lower({call}).as_text()"
    return Shown(Text(title, lowered.as_text()), code)


def _hlo_graph(stage: str) -> Callable[[Request], Shown]:
    def draw(request: Request) -> Shown:
        from jaxtour.viz import draw_hlo

        fn, args, _ = request.composed
        options = request.options
        kwargs: dict[str, Any] = {
            "stage": stage,
            "max_depth": options.depth,
            "rankdir": options.rankdir,
        }
        return Shown(draw_hlo(fn, **kwargs)(*args), _code("draw_hlo", kwargs, request))

    return draw


def before_after(request: Request) -> Shown:
    from jaxtour.viz import compare_stages

    fn, args, _ = request.composed
    return Shown(compare_stages(fn)(*args), _code("compare_stages", {}, request))


def compared(request: Request) -> Shown:
    """What the chosen transformations did to the program: the plain function on the
    example against the composition on what it runs on (`jaxtour.viz.diff_calls`)."""
    from jaxtour.viz import diff_calls

    subject, (fn, args, label) = request.subject, request.composed
    d = diff_calls(
        subject.fn,
        (subject.args, {}),
        (args, {}),
        then=fn,
        names=(subject.label, label),
    )
    batch = batch_code(request.transforms)
    then = named(request)  # a function of the batch alone: a model's arrays held
    called = then.function()
    code = f"diff_calls({subject.label}, (args, {{}}), ({batch}, {{}}), then={called})"
    return Shown(d, then.setup + code)


def autodiff_graph(request: Request) -> Shown:
    """`draw_jvp` with jvp on; `draw_grad` for a scalar output; `draw_vjp` otherwise.

    `jit` changes nothing here (the autodiff pictures inline `jit` calls); with `vmap`
    on, the function differentiated is `vmap(f)` on the batch.
    """
    from jaxtour import autodiff

    subject, transforms = request.subject, request.transforms
    fn, label, args = subject.fn, subject.label, subject.args
    if transforms.grad and transforms.jvp:  # forward over reverse
        fn, label = jax.grad(fn), f"grad({label})"
    if transforms.vmap is not None:
        axis = transforms.vmap
        fn, args, label = (
            jax.vmap(fn, in_axes=axis),
            stack(args, axis),
            f"vmap({label}, in_axes={axis})",
        )
    kwargs: dict[str, Any] = {"rankdir": request.options.rankdir}
    if transforms.jvp:
        diagram = autodiff.draw_jvp(fn, **kwargs)(args, ones_tangents(args))
        return Shown(diagram, _jvp_code(label, kwargs, subject.args, transforms))
    draw = "draw_grad" if _scalar_output(fn, args) else "draw_vjp"
    return Shown(
        getattr(autodiff, draw)(fn, **kwargs)(*args),
        _code(draw, kwargs, request, label),
    )


def _jvp_code(label: str, kwargs: dict, args: tuple, transforms: Any) -> str:
    """The line to paste: tangents of ones, as `ones_tangents` makes them (float0 zeros
    at integer leaves, written out in a line above when the example has one)."""
    batch = batch_code(transforms)
    setup, ones = tangents(args)
    call = f"draw_jvp({label}, rankdir={kwargs['rankdir']!r})"
    return f"{setup}{call}({batch}, jax.tree.map({ones}, {batch}))"


def _scalar_output(fn: Callable, args: tuple) -> bool:
    out = jax.eval_shape(fn, *args)
    return (
        isinstance(out, jax.ShapeDtypeStruct)
        and out.shape == ()
        and jnp.issubdtype(out.dtype, jnp.floating)
    )


def cost_and_memory(request: Request) -> Shown:
    from jaxtour import _ir

    fn, args, label = request.composed
    compiled = _ir.trace(fn, args, {}, who="explore").lower().compile()
    figures = _ir.cost_summary(compiled)
    # beside a library call XLA does not count: "at least", or "not counted" for a 0
    rows = [
        (name, text)
        for k, name in _FIGURES.items()
        if (text := _ir.figure_text(figures, k, functools.partial(_amount, k)))
    ]
    if left := _ir.left_out(figures):
        rows.append(("left out", left))
    title = f"XLA's cost and memory analysis of {label} on {jax.default_backend()}"
    setup, called, call, _ = named(request)
    code = f"{setup}{_jitted(called)}.lower({call}).compile().cost_analysis()"
    return Shown(Table(title, rows), code)


def cost_ledger(request: Request) -> Shown:
    from jaxtour.cost import cost_table

    fn, args, _ = request.composed
    return Shown(cost_table(fn)(*args), _code("cost_table", {}, request))


def measured_time(request: Request) -> Shown:
    from jaxtour.cost import profile

    fn, args, _ = request.composed
    drawn = profile(fn)(*args).draw(rankdir=request.options.rankdir)
    setup, called, call, _ = named(request, lens=True)
    rankdir = request.options.rankdir
    code = f"{setup}profile({called})({call}).draw(rankdir={rankdir!r})"
    return Shown(drawn, code)


_FIGURES = {
    "flops": "floating-point operations",
    "transcendentals": "transcendental functions (exp, tanh, ...)",
    "bytes_accessed": "bytes read and written",
    "temp_bytes": "temporary buffers",
    "argument_bytes": "argument buffers",
    "output_bytes": "output buffers",
}


def _amount(key: str, value: float) -> str:
    if "bytes" not in key:
        return f"{value:,.0f}"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            break
        value /= 1024
    return f"{value:,.0f} B" if unit == "B" else f"{value:,.1f} {unit}"


GRAPH_OPTIONS = frozenset({"depth", "group", "rankdir"})
HLO_OPTIONS = frozenset({"depth", "rankdir"})
VIEWS: dict[str, View] = {
    "jaxpr graph": View("jaxpr graph", GRAPH_OPTIONS, jaxpr_graph),
    "jaxpr text": View("jaxpr text", frozenset(), jaxpr_text),
    "StableHLO text": View("StableHLO text", frozenset(), stablehlo_text),
    "StableHLO graph": View("StableHLO graph", HLO_OPTIONS, _hlo_graph("stablehlo")),
    "compiled HLO": View("compiled HLO (fusions)", HLO_OPTIONS, _hlo_graph("compiled")),
    "before/after XLA": View("before/after XLA", frozenset(), before_after),
    "compare": View("compare with the untransformed function", frozenset(), compared),
    "autodiff graph": View("autodiff graph", frozenset({"rankdir"}), autodiff_graph),
    "cost and memory": View("cost and memory", frozenset(), cost_and_memory),
    "cost": View("cost (FLOPs and bytes per op)", frozenset(), cost_ledger),
    "time": View("time (measured, per op)", frozenset({"rankdir"}), measured_time),
    "step through": View(
        "step through",
        frozenset({"rankdir", "step"}),
        step_view,
    ),
}
DEFAULT_VIEW = "jaxpr graph"
