"""`draw_hlo`: StableHLO (what JAX hands XLA) or compiled HLO (what XLA made of it)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from jaxtour import _fit, _io_nodes, _ir, _number_words, _options, _palette, _style
from jaxtour._diagram import Diagram
from jaxtour._number_words import plural
from jaxtour.viz import _hlo_code
from jaxtour.viz._hlo_graph import Builder, returned_values, scalar_constant
from jaxtour.viz._jaxpr import _check_options

WHO = "draw_hlo"
STAGES = {"stablehlo": "StableHLO", "compiled": "compiled HLO"}
_ALIASES = {"lowered": "stablehlo", "hlo": "compiled", "optimized": "compiled"}


def check_stage(stage: Any, who: str = WHO) -> str:
    """The canonical stage name, or a ValueError saying which stages there are."""
    stage = _ALIASES.get(stage, stage) if isinstance(stage, str) else stage
    if stage not in STAGES:
        raise ValueError(
            f'{who}: `stage` must be "stablehlo" (what JAX hands XLA, before optimisation) or '
            f'"compiled" (the HLO XLA optimised for this backend); got {stage!r}.'
        )
    return stage


def draw_hlo(
    f: Callable,
    *,
    stage: str = "compiled",
    rankdir: str = "TB",
    max_depth: int | None = _options.MAX_DEPTH,
    max_ops: int = 150,
    edge_labels: bool | None = None,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    expand_pytrees: bool | None = None,
) -> Callable[..., Diagram]:
    """As `jax.jit(f).lower(*args)` (then `.compile()`), but the result is a picture.

    With `stage="stablehlo"` you see what JAX hands XLA: one op per small step, nested
    `jit`s as `call`s to functions, loops and branches as regions. With
    `stage="compiled"` you see what XLA made of it for this backend: each fusion is a
    box holding the ops it fused, collectives (all-reduce, all-gather, ...) stand out in
    red, and nodes carry the source lines the metadata has. The title counts ops and
    fusions; the subtitle gives XLA's `cost_analysis` and `memory_analysis` figures.

    Args:
        f: the function to lower (and compile).
        stage: "stablehlo" or "compiled".
        rankdir: "TB" (top to bottom) or "LR" (left to right).
        max_depth: levels of fusions, loops, branches and calls to open; deeper ones are
            one node saying how many ops they hold. None opens all.
        max_ops: past this many drawn ops, fusions and calls are drawn closed, and the
            title says so.
        edge_labels: label edges with shape/dtype; default: when at most 60 ops.
        static_argnums: positions of arguments that are not arrays (as in `jax.jit`).
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.
        expand_pytrees: as in `draw_jaxpr` (None: a pytree of more than 8 arrays is
            one node).

    Returns:
        A function of `f`'s example arguments: it lowers `f` for them (and compiles it,
        for the "compiled" stage) and returns the `jaxtour.Diagram`.

    Raises:
        TypeError: `f` is not callable, or an argument is not something JAX traces.
        ValueError: `stage` or another option is not one this function knows.

    Example:
        >>> import jax.numpy as jnp
        >>> d = draw_hlo(lambda x: jnp.sin(x) * 2.0, stage="stablehlo")(1.0)
        >>> d.title.startswith("StableHLO of <lambda>")
        True
    """
    _ir.check_callable(f, WHO)
    stage = check_stage(stage)
    _check_options(rankdir, max_depth, None, max_ops, who=WHO, count="max_ops")
    _io_nodes.check_expand(expand_pytrees, WHO)
    trace = _ir.tracer(f, WHO, static_argnums, static_argnames)

    def draw(*args: Any, **kwargs: Any) -> Diagram:
        traced = trace(args, kwargs)
        lowered = traced.lower()
        names = _ir.io_names(traced.jaxpr.jaxpr)
        if stage == "stablehlo":
            shlo = _ir.parse_stablehlo(_ir.stablehlo_text(lowered))
            module, figures = _ir.unwrap_call(shlo), _ir.Figures()
        else:
            compiled = lowered.compile()
            module = _ir.parse_hlo(compiled.as_text())
            figures = _ir.cost_summary(compiled, module)
        return hlo_diagram(
            module,
            _ir.function_name(f),
            figures=figures,
            names=names,
            rankdir=rankdir,
            max_depth=max_depth,
            max_ops=max_ops,
            edge_labels=edge_labels,
            expand_pytrees=expand_pytrees,
        )

    return draw


def hlo_diagram(
    module: _ir.HloModule,
    name: str = "f",
    *,
    figures: dict | None = None,
    names: tuple = (None, None),
    rankdir: str = "TB",
    max_depth: int | None = _options.MAX_DEPTH,
    max_ops: int = 150,
    edge_labels: bool | None = None,
    expand_pytrees: bool | None = None,
) -> Diagram:
    """Draw a parsed module (`_ir.parse_hlo` / `_ir.parse_stablehlo`): what `draw_hlo` does.

    A picture over 5,000 px either way is drawn again with fewer ops (fusions closed,
    then one node per source line) until it fits, and then, if it still does not,
    the other way round (left to right for top to bottom).
    """
    options: dict[str, Any] = {
        "figures": figures,
        "names": names,
        "rankdir": rankdir,
        "max_depth": max_depth,
        "edge_labels": edge_labels,
        "expand_pytrees": expand_pytrees,
    }

    def draw(direction: str) -> Diagram:
        options["rankdir"] = direction
        diagram, _ = _fit.fit(
            lambda budget: _hlo_diagram(module, name, max_ops=budget, **options),
            max_ops,
            cap=False,
        )
        return diagram

    return _fit.turned(draw, rankdir, draw(rankdir))


def _hlo_diagram(
    module: _ir.HloModule,
    name: str,
    *,
    figures: dict | None,
    names: tuple,
    rankdir: str,
    max_depth: int | None,
    max_ops: int,
    edge_labels: bool | None,
    expand_pytrees: bool | None,
) -> Diagram:
    import graphviz
    import jax

    stage = "compiled" if module.dialect == "hlo" else "stablehlo"
    counts = module.op_counts(fused=False)
    fusions = module.fusions()
    ops = plural(counts.total(), "op")
    title = f"{STAGES[stage]} of {name} ({jax.default_backend()}): {ops}"
    if stage == "compiled":
        title += f", {plural(len(fusions), 'fusion')}"
    # an async collective (GPU, TPU) is a -start/-done pair: one collective, counted once
    collectives = sum(
        n
        for op, n in module.op_counts().items()
        if _palette.family(op) == "collective" and not op.endswith("-done")
    )
    title += f", {plural(collectives, 'collective')}" if collectives else ""
    drawn, grouped, how = _drawn(module, max_depth), False, []
    big = drawn > max_ops
    if drawn > max_ops and max_depth != 0:
        max_depth, drawn = 0, _drawn(module, 0)
    entry = module.computations[module.entry]
    # a program too big to draw op by op is nested by the user's calls (a budget of
    # 2/5 of `max_ops`, as draw_jaxpr's); a small one when they name the user's code
    budget, stacks = max(8, max_ops * 2 // 5), _hlo_code.Stacks(module)
    code = (
        _hlo_code.nests(module, entry, budget, stacks)
        if big
        else _hlo_code.names_code(module, stacks)
    )
    if drawn > max_ops and not code:
        grouped, lines = (
            True,
            {
                op.source[:2] if op.source else None
                for op in module.computations[module.entry].ops
            },
        )
        drawn = len(lines)
        how.append(f"one node per source line, {len(lines)} lines")
    elif max_depth == 0 and _drawn(module, None) > _drawn(module, 0):
        how.append("fusions closed" if code else "fusions and calls closed")
    ins, outs = _terminal_names(entry, returned_values(module, entry), names)
    if _io_nodes.folds([ins, outs], expand_pytrees):
        how.append(_io_nodes.FOLDED)
    title += ", nested by your code's calls" if code else ""
    title += f" (collapsed: {'; '.join(how)})" if how else ""
    subtitle = summary(module, figures or {})
    if code and stacks.mixed:
        fused = plural(stacks.mixed, "fusion")
        subtitle += f" · {fused} of several calls' ops drawn in their common caller"

    def graph() -> Any:
        return graphviz.Digraph(
            name="hlo",
            graph_attr=_style.graph_attrs(title, rankdir, subtitle),
            node_attr=_style.NODE,
            edge_attr=_style.EDGE,
        )

    labels = edge_labels if edge_labels is not None else drawn <= 60
    if code:

        def make(opened: set | None, trees: dict) -> _hlo_code.HloCodeBuilder:
            return _hlo_code.HloCodeBuilder(
                graph(),
                module,
                max_depth,
                labels,
                expand_pytrees,
                opened=opened,
                trees=trees,
                stacks=stacks,
            )

        def draw(builder: Builder) -> None:
            env = builder.inputs(entry, ins)
            builder.computation(builder.graph, entry, env, 0)
            builder.outputs(entry, env, outs)

        return _hlo_code.coded(draw, make, title, subtitle, budget if big else max_ops)
    builder = Builder(graph(), module, max_depth, labels, expand_pytrees)
    env = builder.inputs(entry, ins)
    if grouped:
        builder.groups(entry, env)
    else:
        builder.computation(builder.graph, entry, env, 0)
    builder.outputs(entry, env, outs)
    builder.finish()
    return Diagram.from_graph(builder.graph, title)


def _terminal_names(
    entry: _ir.HloComputation, returned: list[str], names: tuple
) -> tuple[list[str], list[str]]:
    """The inputs' and outputs' names: JAX's where they match the module, else HLO's."""
    ins, outs = (list(n or ()) for n in names)
    if len(ins) != len(entry.params):
        ins = [_param_name(entry, param, i) for i, param in enumerate(entry.params)]
    if len(outs) != len(returned):
        outs = [f"out{i}" for i in range(len(returned))]
    return [_short_name(n) for n in ins], [_short_name(n) for n in outs]


def _short_name(name: str, most: int = 40) -> str:
    """A result path cut in the middle past `most` characters: checkify's error paths
    (`result[0][1][0][<class 'jax._src.checkify.…'>, …]`) would widen a picture by
    hundreds of pixels each."""
    if not isinstance(name, str) or len(name) <= most:
        return name
    return name[: most // 2 - 1] + "…" + name[-(most // 2) :]


def _drawn(module: _ir.HloModule, max_depth: int | None) -> int:
    """Ops that become nodes: not parameters, tuples or scalar constants."""
    return sum(
        1
        for depth, op in module.walk()
        if (max_depth is None or depth <= max_depth)
        and op.opcode not in _ir.BOOKKEEPING
        and not scalar_constant(op)
    )


_SUMMED = {
    "flops": "FLOP",
    "bytes_accessed": "B accessed",
    "temp_bytes": "B temp memory",
}


def summary(module: _ir.HloModule, figures: dict[str, float]) -> str:
    """One line: XLA's FLOPs, bytes accessed, temp memory, and what the fusions hold."""
    parts = []
    for key, unit in _SUMMED.items():  # "at least" beside a call XLA does not count
        said = _ir.figure_text(figures, key, partial(_number_words.si, unit=unit), True)
        parts += [said] if said else []
    parts += [left] if (left := _ir.left_out(figures)) else []
    # ops inside fusions, a nested fusion counted by what it holds
    every, standalone = module.op_counts(), module.op_counts(fused=False)
    fused = every.total() - every["fusion"] - standalone.total() + standalone["fusion"]
    if module.fusions():
        parts.append(f"{plural(fused, 'op')} inside the fusions")
    parts.append("scalar constants (and their broadcasts) not drawn")
    return " · ".join(parts)


def _param_name(entry: _ir.HloComputation, param: str, i: int) -> str:
    """A parameter's name in the user's code: StableHLO's loc, compiled HLO's op_name
    (JAX drops an unused argument, so positions no longer match its names)."""
    if param in entry.param_names:
        return entry.param_names[param]
    op = next((o for o in entry.ops if o.name == param), None)
    return op.op_name if op is not None and op.op_name else param or f"in{i}"
