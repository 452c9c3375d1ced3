"""`draw_hlo`: StableHLO (what JAX hands XLA) or compiled HLO (what XLA made of it)."""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable
from typing import Any

from jaxtour import _ir, _style, _terminals
from jaxtour._diagram import Diagram
from jaxtour._style import plural
from jaxtour.viz._jaxpr import _check_options, add_side, static_tuple

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
    max_depth: int | None = _style.MAX_DEPTH,
    max_ops: int = 150,
    edge_labels: bool | None = None,
    static_argnums: int | tuple[int, ...] = (),
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
    _terminals.check_expand(expand_pytrees, WHO)
    static = static_tuple(static_argnums)

    def draw(*args: Any, **kwargs: Any) -> Diagram:
        traced = _ir.trace(f, args, kwargs, who=WHO, static_argnums=static)
        lowered = traced.lower()
        names = _ir.io_names(traced.jaxpr.jaxpr)
        if stage == "stablehlo":
            module, figures = _ir.parse_stablehlo(_ir.stablehlo_text(lowered)), {}
        else:
            compiled = lowered.compile()
            module, figures = (
                _ir.parse_hlo(compiled.as_text()),
                _ir.cost_summary(compiled),
            )
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
    max_depth: int | None = _style.MAX_DEPTH,
    max_ops: int = 150,
    edge_labels: bool | None = None,
    expand_pytrees: bool | None = None,
) -> Diagram:
    """Draw a parsed module (`_ir.parse_hlo` / `_ir.parse_stablehlo`): what `draw_hlo` does."""
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
        if _style.family(op) == "collective" and not op.endswith("-done")
    )
    title += f", {plural(collectives, 'collective')}" if collectives else ""
    drawn, grouped, how = _drawn(module, max_depth), False, []
    if drawn > max_ops and max_depth != 0:
        max_depth, drawn = 0, _drawn(module, 0)
    if drawn > max_ops:
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
        how.append("fusions and calls closed")
    entry = module.computations[module.entry]
    ins, outs = _terminal_names(entry, _returned(module, entry), names)
    if _terminals.folds([ins, outs], expand_pytrees):
        how.append(_terminals.FOLDED)
    title += f" (collapsed: {'; '.join(how)})" if how else ""
    graph = graphviz.Digraph(
        name="hlo",
        graph_attr=_style.graph_attrs(title, rankdir, summary(module, figures or {})),
        node_attr=_style.NODE,
        edge_attr=_style.EDGE,
    )
    builder = _Builder(
        graph,
        module,
        max_depth,
        edge_labels if edge_labels is not None else drawn <= 60,
        expand_pytrees,
    )
    env = builder.inputs(entry, ins)
    if grouped:
        builder.groups(entry, env)
    else:
        builder.computation(graph, entry, env, 0)
    builder.outputs(entry, env, outs)
    builder.finish()
    return Diagram.from_graph(graph, title)


def _returned(module: _ir.HloModule, entry: _ir.HloComputation) -> list[str]:
    """The values the entry returns: a compiled module's root tuple, unpacked."""
    root = next((op for op in entry.ops if op.name in entry.returns), None)
    if module.dialect == "hlo" and root is not None and root.opcode == "tuple":
        return list(root.operands)
    return list(entry.returns)


def _terminal_names(
    entry: _ir.HloComputation, returned: list[str], names: tuple
) -> tuple[list[str], list[str]]:
    """The inputs' and outputs' names: JAX's where they match the module, else HLO's."""
    ins, outs = (list(n or ()) for n in names)
    if len(ins) != len(entry.params):
        ins = [_param_name(entry, param, i) for i, param in enumerate(entry.params)]
    if len(outs) != len(returned):
        outs = [f"out{i}" for i in range(len(returned))]
    return ins, outs


def _drawn(module: _ir.HloModule, max_depth: int | None) -> int:
    """Ops that become nodes: not parameters, tuples or scalar constants."""
    return sum(
        1
        for depth, op in module.walk()
        if (max_depth is None or depth <= max_depth)
        and op.opcode not in _ir.BOOKKEEPING
        and not _scalar_constant(op)
    )


def summary(module: _ir.HloModule, figures: dict[str, float]) -> str:
    """One line: XLA's FLOPs, bytes accessed, temp memory, and what the fusions hold."""
    parts = []
    if "flops" in figures:
        parts.append(f"{_si(figures['flops'])}FLOP")
    if "bytes_accessed" in figures:
        parts.append(f"{_si(figures['bytes_accessed'])}B accessed")
    if "temp_bytes" in figures:
        parts.append(f"{_si(figures['temp_bytes'])}B temp memory")
    fused = module.op_counts().total() - module.op_counts(fused=False).total()
    if module.fusions():
        parts.append(f"{plural(fused, 'op')} inside the fusions")
    parts.append("scalar constants (and their broadcasts) not drawn")
    return " · ".join(parts)


def _si(value: float) -> str:
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}"
    return f"{value:.3g} "


class _Builder(_style.Canvas):
    """Ops become nodes as they are met; fusions, loops, branches and calls clusters."""

    def __init__(
        self,
        graph: Any,
        module: _ir.HloModule,
        max_depth: int | None,
        labels: bool,
        expand: bool | None,
    ) -> None:
        super().__init__(graph, labels)
        self.module, self.max_depth, self.expand = module, max_depth, expand
        # a tuple-shaped HLO value -> the producers of each element
        self.parts: dict[str, list] = {}

    def inputs(self, entry: _ir.HloComputation, names: list[str]) -> dict:
        kinds = [
            kind or ""
            for _, kind in itertools.zip_longest(entry.params, entry.param_types)
        ]
        with self.graph.subgraph(name="inputs") as g:
            ids = add_side(self, g, "in", names, kinds)
        return {
            param: [(node, kind)]
            for param, node, kind in zip(entry.params, ids, kinds, strict=True)
        }

    def outputs(self, entry: _ir.HloComputation, env: dict, paths: list[str]) -> None:
        returned = _returned(self.module, entry)
        kinds = [next((k for _, k in env.get(value, ())), "") for value in returned]
        with self.graph.subgraph(name="outputs") as g:
            ids = add_side(self, g, "out", paths, kinds)
        for value, node in zip(returned, ids, strict=True):
            self.connect(value, node, env)

    def connect(self, value: str, dst: str, env: Any) -> None:
        for src, kind in env.get(value, ()):
            self.edge(src, dst, kind)

    def computation(
        self, g: Any, computation: _ir.HloComputation, env: Any, depth: int
    ) -> None:
        for op in computation.ops:
            self.op(g, op, env, depth)

    def op(self, g: Any, op: _ir.HloOp, env: Any, depth: int) -> None:
        kinds = _result_types(op)
        if op.opcode in ("parameter", "return"):
            return
        if op.opcode in ("tuple", "get-tuple-element") or _constant(op, env):
            self.see_through(op, env)  # bookkeeping, not computation: no node
            return
        called = [c for c in op.called if c.computation in self.module.computations]
        if called and (self.max_depth is None or depth < self.max_depth):
            self.nested(g, op, called, env, depth)
            return
        node = self.new_id("op")
        closed_fusion = (
            {
                "fillcolor": _style.FUSION["fillcolor"],
                "color": _style.FUSION["color"],
                "penwidth": "2",
            }
            if op.opcode == "fusion"
            else {}
        )
        g.node(
            node,
            _style.text_label(
                op.opcode.removeprefix("sdy."), *_details(op, called, self.module)
            ),
            tooltip=op.op_name or op.opcode,
            **{**_style.node_attrs(op.kind), **closed_fusion},
        )
        if not closed_fusion:
            self.families.add(_style.family(op.kind))
        for value in op.operands:
            self.connect(value, node, env)
        for value, kind in zip(op.results or [op.name], kinds, strict=False):
            env[value] = [(node, kind)]

    def groups(self, entry: _ir.HloComputation, env: Any) -> None:
        """One node per source line of the entry's ops (a program too big to draw op by op)."""
        members: dict[Any, collections.Counter] = {}
        for op in entry.ops:
            if op.opcode in (
                "parameter",
                "return",
                "tuple",
                "get-tuple-element",
            ) or _constant(op, env):
                self.see_through(op, env)
                continue
            key = op.source[:2] if op.source else None
            node = (
                f"group{list(members).index(key) if key in members else len(members)}"
            )
            counts = members.setdefault(key, collections.Counter())
            counts[op.opcode] += 1
            for call in op.called:
                counts.update(
                    o.opcode
                    for _, o in self.module.walk(call.computation)
                    if o.opcode not in _ir.BOOKKEEPING
                )
            for value in op.operands:
                self.connect(value, node, env)
            for value, kind in zip(
                op.results or [op.name], _result_types(op), strict=False
            ):
                env[value] = [(node, kind)]
        for i, (key, counts) in enumerate(members.items()):
            line = _ir.SourceLine(*key) if key else None
            head = line.where if line else "(no source line)"
            top = counts.most_common(1)[0][0]
            self.families.add(_style.family(top))
            summary = ", ".join(f"{op}×{n}" for op, n in counts.most_common(4))
            self.graph.node(
                f"group{i}",
                _style.text_label(
                    head,
                    line.code[:48] if line else "",
                    f"{counts.total()} ops: {summary}",
                ),
                **_style.node_attrs(top),
            )

    def see_through(self, op: _ir.HloOp, env: Any) -> None:
        """Tuples and get-tuple-element pass producers on, element by element."""
        if op.opcode == "tuple":
            self.parts[op.name] = [list(env.get(v, ())) for v in op.operands]
            env[op.name] = [p for part in self.parts[op.name] for p in part]
            return
        parts = self.parts.get(op.operands[0]) if op.operands else None
        if (
            op.opcode == "get-tuple-element"
            and parts
            and op.index is not None
            and op.index < len(parts)
        ):
            env[op.name] = [(src, op.type) for src, _ in parts[op.index]]
        else:
            env[op.name] = [
                (src, op.type) for v in op.operands for src, _ in env.get(v, ())
            ]

    def nested(self, g: Any, op: _ir.HloOp, called: list, env: Any, depth: int) -> None:
        fusion = op.opcode == "fusion"
        if not fusion:
            self.families.add("control flow")
        style = _style.FUSION if fusion else _style.NESTED
        with self.cluster(g, _cluster_label(op), style) as c:
            self.loose_operands(c, op, called, env)
            results: dict[str, list] = collections.defaultdict(list)
            for call in called:
                with self.cluster(
                    c, call.role, _style.NESTED, enabled=len(called) > 1
                ) as inner:
                    self.call(inner, op, call, env, depth, results)
            for value, producers in results.items():
                env[value] = producers

    def loose_operands(self, g: Any, op: _ir.HloOp, called: list, env: Any) -> None:
        """Operands no called computation takes (a branch index, a predicate): a diamond."""
        taken = {arg for call in called for arg in call.args}
        loose = [v for v in op.operands if v not in taken and env.get(v)]
        if loose:
            node = self.new_id("head")
            label = (
                "branch index"
                if op.opcode in ("conditional", "case", "if")
                else op.opcode
            )
            g.node(
                node, label, shape="diamond", fontsize="11", **_style.node_attrs("cond")
            )
            for value in loose:
                self.connect(value, node, env)

    def call(
        self,
        g: Any,
        op: _ir.HloOp,
        call: _ir.Called,
        env: Any,
        depth: int,
        results: dict,
    ) -> None:
        inner = self.module.computations[call.computation]
        regions = self.module.dialect == "stablehlo" and call.role != "callee"
        # MLIR regions may read the enclosing values directly; functions and HLO may not.
        sub_env = collections.ChainMap({}, env) if regions else {}
        for param, arg in zip(inner.params, call.args, strict=False):
            sub_env[param] = list(env.get(arg, ()))
            if arg in self.parts:
                self.parts[param] = self.parts[arg]
        self.computation(g, inner, sub_env, depth + 1)
        if call.role in ("cond", "condition"):
            return
        outs = op.results or [op.name]
        returned = (
            inner.returns if len(inner.returns) == len(outs) else inner.returns[:1]
        )
        for value, ret in zip(outs, returned, strict=False):
            results[value] += [
                p for p in sub_env.get(ret, ()) if p not in results[value]
            ]
            if ret in self.parts:
                self.parts[value] = self.parts[ret]


def _param_name(entry: _ir.HloComputation, param: str, i: int) -> str:
    op = next((o for o in entry.ops if o.name == param), None)
    return op.op_name if op is not None and op.op_name else param or f"in{i}"


def _result_types(op: _ir.HloOp) -> list[str]:
    n = max(len(op.results), 1)
    if n == 1 or not op.type.startswith("("):
        return [op.type] * n
    return [t.strip() for t in _ir.split_top(op.type[1:-1])]


def _scalar_constant(op: _ir.HloOp) -> bool:
    return op.opcode == "constant" and op.type.endswith("[]")


def _constant(op: _ir.HloOp, env: Any) -> bool:
    """A scalar constant, or a broadcast of one (an array of one repeated number): the
    polynomial coefficients of `erf_inv` would otherwise be a row of 20 nodes."""
    return _scalar_constant(op) or (
        op.opcode in ("broadcast", "broadcast_in_dim")
        and bool(op.operands)
        and not any(env.get(v) for v in op.operands)
    )


def _cluster_label(op: _ir.HloOp) -> str:
    if op.opcode == "fusion":
        kind = op.fusion
        return f"fusion {op.name}  ({kind})" if kind else f"fusion {op.name}"
    callee = next((c.computation for c in op.called if c.role == "callee"), "")
    where = "  " + op.source.where if op.source else ""
    return (f"{op.opcode} @{callee}" if callee else op.opcode) + where


def _details(op: _ir.HloOp, called: list, module: _ir.HloModule) -> list[str]:
    lines = [op.type if len(op.type) <= 40 else op.type[:39] + "…"]
    if op.target:
        lines.append(op.target)
    if called:
        inner = sum(
            1
            for c in called
            for _, o in module.walk(c.computation)
            if o.opcode not in _ir.BOOKKEEPING
        )
        lines.append(f"{inner} ops inside")
    if op.opcode == "sdy.sharding_constraint":
        return lines  # it follows the op it constrains: that op's line says where
    where = op.source.where if op.source else ""
    origin = op.primitive if op.primitive and op.primitive != op.opcode else ""
    lines.append(" · ".join(x for x in (where, origin and f"from {origin}") if x))
    return lines
