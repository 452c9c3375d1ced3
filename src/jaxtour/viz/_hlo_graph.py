"""The graph of an HLO module (`draw_hlo`'s picture): ops become nodes as they are met;
fusions, loops, branches and calls become clusters, opened to a depth."""

from __future__ import annotations

import collections
import itertools
from typing import Any

from jaxtour import _canvas, _ir, _palette, _style
from jaxtour._number_words import plural
from jaxtour.viz._jaxpr_graph import add_side

# Characters of "file:line · from primitive" kept on one line; a longer pair takes two.
ONE_LINE = 32


class Builder(_canvas.Canvas):
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
        returned = returned_values(self.module, entry)
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
                op.opcode.removeprefix("sdy."),
                *_details(op, called, self.module),
                *self.call_line(op),
            ),
            tooltip=op.op_name or op.opcode,
            **{**_palette.node_attrs(op.kind), **closed_fusion},
        )
        if not closed_fusion:
            self.families.add(_palette.family(op.kind))
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
            self.families.add(_palette.family(top))
            summary = ", ".join(f"{op}×{n}" for op, n in counts.most_common(4))
            self.graph.node(
                f"group{i}",
                _style.text_label(
                    head,
                    line.code[:48] if line else "",
                    f"{counts.total()} ops: {summary}",
                ),
                **_palette.node_attrs(top),
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
        label = _style.text_label(_cluster_label(op), *self.call_line(op))
        with self.cluster(g, label, style) as c:
            self.loose_operands(c, op, called, env)
            results: dict[str, list] = collections.defaultdict(list)
            for call in called:
                with self.cluster(
                    c, call.role, _style.NESTED, enabled=len(called) > 1
                ) as inner:
                    self.call(inner, op, call, env, depth, results)
            for value, producers in results.items():
                env[value] = producers

    def call_line(self, op: _ir.HloOp) -> list[str]:
        """Lines naming the user's call an op belongs to (none here; see `_hlo_code`)."""
        return []

    def loose_operands(self, g: Any, op: _ir.HloOp, called: list, env: Any) -> None:
        """Operands no called computation takes (a branch index, a predicate): a diamond."""
        taken = {arg for call in called for arg in call.args}
        loose = [v for v in op.operands if v not in taken and env.get(v)]
        if loose:
            label = (
                "branch index"
                if op.opcode in ("conditional", "case", "if")
                else op.opcode
            )
            node = self.diamond(g, label)
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


def returned_values(module: _ir.HloModule, entry: _ir.HloComputation) -> list[str]:
    """The values the entry returns: a compiled module's root tuple, unpacked."""
    root = next((op for op in entry.ops if op.name in entry.returns), None)
    if module.dialect == "hlo" and root is not None and root.opcode == "tuple":
        return list(root.operands)
    return list(entry.returns)


def _result_types(op: _ir.HloOp) -> list[str]:
    n = max(len(op.results), 1)
    if n == 1 or not op.type.startswith("("):
        return [op.type] * n
    return [t.strip() for t in _ir.split_top(op.type[1:-1])]


def scalar_constant(op: _ir.HloOp) -> bool:
    return op.opcode == "constant" and op.type.endswith("[]")


def _constant(op: _ir.HloOp, env: Any) -> bool:
    """A scalar constant, or a broadcast of one (an array of one repeated number): the
    polynomial coefficients of `erf_inv` would otherwise be a row of 20 nodes."""
    return scalar_constant(op) or (
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
        lines.append(f"{plural(inner, 'op')} inside")
    if op.opcode == "sdy.sharding_constraint":
        return lines  # it follows the op it constrains: that op's line says where
    where = op.source.where if op.source else ""
    origin = op.primitive if op.primitive and op.primitive != op.opcode else ""
    parts = [x for x in (where, origin and f"from {origin}") if x]
    joined = " · ".join(parts)
    # One line while short; a long pair takes two, or a row of them outgrows a slide.
    return lines + ([joined] if len(joined) <= ONE_LINE else parts)
