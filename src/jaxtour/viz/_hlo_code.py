"""StableHLO and compiled HLO drawn as the code that wrote them.

Every op carries the call stack JAX traced it under (its MLIR location's callsite
chain, or the compiled module's stack-frame table: `_ir.op_stack`), the same stack an
equation carries, so the ops of a computation are nested by the user's calls exactly as
a jaxpr's equations are (`_groups.code_groups`): `Block` holds `CausalSelfAttention`
holds the fusions its `self.qkv(x)` became. A fusion's own body is drawn as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour import _fit, _ir, _style
from jaxtour._code_groups import Group, call_label, code_groups, names_own_code
from jaxtour._diagram import Diagram
from jaxtour._group_draw import GroupDrawing, whole_page
from jaxtour.viz._hlo_graph import Builder, _constant, _result_types


class Stacks:
    """Each op's call stack (`_ir.op_stack`); a fusion's is the calls its fused ops
    share (`_ir.common_stack`): XLA may fuse the end of one call with the start of
    the next, and such a fusion sits in their common caller. `mixed` counts them."""

    def __init__(self, module: _ir.HloModule) -> None:
        self.module, self.mixed = module, 0
        self.seen: dict[str, _ir.Stack] = {}  # fusion name -> its shared stack

    def __call__(self, op: _ir.HloOp) -> _ir.Stack:
        own = _ir.op_stack(op.frames, op.op_name)
        if op.opcode != "fusion" or op.name in self.seen:
            return self.seen.get(op.name, own)
        inner = [
            self(o)
            for c in op.called
            if c.computation in self.module.computations
            for o in self.module.computations[c.computation].ops
        ]
        inner = [s for s in inner if s.frames] or [own]
        shared = self.seen[op.name] = _ir.common_stack(inner)
        self.mixed += len({s.frames for s in inner}) > 1
        return shared


def nests(
    module: _ir.HloModule,
    computation: _ir.HloComputation,
    budget: int,
    stacks: Stacks | None = None,
) -> bool:
    """Whether the user's calls nest `computation` (or what it runs: an inner `jit`,
    a loop's body) into a picture of about `budget` nodes: some call groups its ops,
    and with every call folded at most 1.5 × `budget` nodes are left (not a long loop
    unrolled in one function)."""
    stacks = stacks or Stacks(module)
    tree = code_groups(list(computation.ops), stack=stacks)
    if not tree.groups():
        callees = [
            c.computation for op in computation.ops for c in _callees(op, module)
        ]
        return any(
            nests(module, module.computations[c], budget, stacks) for c in callees[:4]
        )
    top = sum(
        1
        for item in tree.items
        if isinstance(item, Group) or item.opcode not in _ir.BOOKKEEPING
    )
    return top <= 1.5 * budget


def names_code(module: _ir.HloModule, stacks: Stacks) -> bool:
    """Whether a box would name the user's own code (`names_own_code`) in the entry
    computation or what it runs (an inner `jit`, a loop's body; not a fusion), or a
    fusion its call (`HloCodeBuilder.call_line`)."""
    todo, seen = [module.entry], set()
    while todo:
        name = todo.pop()
        seen.add(name)
        ops = module.computations[name].ops
        if names_own_code(code_groups(list(ops), stack=stacks)):
            return True
        depths = [len(stacks(o).frames) for o in ops if o.opcode == "fusion"]
        if depths and max(depths) > shallowest(ops, stacks):
            return True
        computation = module.computations[name]
        todo += [
            c.computation
            for op in computation.ops
            for c in _callees(op, module)
            if c.computation not in seen
        ]
    return False


def shallowest(ops: Any, stacks: Stacks) -> int:
    """The fewest user frames of an op of `ops` that has any; 0 when none has (with
    JAX_TRACEBACK_IN_LOCATIONS_LIMIT=1 a library function's ops keep only its frames)."""
    return min((n for o in ops if (n := len(stacks(o).frames))), default=0)


def _callees(op: _ir.HloOp, module: _ir.HloModule) -> list[_ir.Called]:
    """What an op runs that is the user's code again, drawn open whatever the depth:
    an inner `jit` (`call`), a loop's condition and body, a branch (not a fusion)."""
    if op.opcode == "fusion" or not op.called:
        return []
    return [c for c in op.called if c.computation in module.computations]


class HloCodeBuilder(GroupDrawing, Builder):
    """`Builder` whose computations are nested by the user's calls (fusions as they are)."""

    unit = "op"

    def __init__(
        self, *args: Any, opened: set | None, trees: dict, stacks: Stacks
    ) -> None:
        super().__init__(*args)
        self.trees = trees  # computation name -> its groups, shared by every try
        self.stacks = stacks
        self.start_groups(opened)
        self.fused = 0  # inside a fusion's body: its ops drawn as they are
        self.shallow = 0  # user frames of the computation's outermost op
        self.opening: _ir.HloOp | None = None  # the fusion being opened

    def computation(
        self, g: Any, computation: _ir.HloComputation, env: Any, depth: int
    ) -> None:
        if self.fused:
            super().computation(g, computation, env, depth)
            return
        outer = self.shallow
        self.shallow = shallowest(computation.ops, self.stacks)
        try:
            self.items(g, self._tree(computation.name), env, depth)
        finally:
            self.shallow = outer

    def call_line(self, op: _ir.HloOp) -> list[str]:
        """A fusion names the call its ops share when that call is no box around it:
        deeper than the computation's own function, and a call too small for a box or
        interleaved by XLA with another's ops (`in Cell.rec`)."""
        stack, fused = self.stacks(op), self.fused - (op is self.opening)
        if op.opcode != "fusion" or fused or len(stack.frames) <= self.shallow:
            return []
        label = call_label(stack)
        around = {g["label"].rstrip("0123456789 ") for g in self.inside}
        return [] if label in around else [f"in {label}"]

    def nested(self, g: Any, op: _ir.HloOp, called: list, env: Any, depth: int) -> None:
        fusion = op.opcode == "fusion"
        self.opening = op  # its cluster is labelled inside the count below
        self.fused += fusion
        try:
            super().nested(g, op, called, env, depth)
        finally:
            self.fused -= fusion

    def leaf(self, g: Any, item: Any, *context: Any) -> None:
        env, depth = context
        self.op(g, item, env, depth)

    def primitive(self, item: Any) -> str:
        skip = item.opcode in _ir.BOOKKEEPING or item.opcode == "constant"
        return "" if skip else str(item.kind)

    def op(self, g: Any, op: _ir.HloOp, env: Any, depth: int) -> None:
        callees = [] if self.fused else _callees(op, self.module)
        if callees:  # an inner jit: its ops are the user's calls, nested in turn
            self.nested(g, op, callees, env, depth)
        else:
            super().op(g, op, env, depth)

    def weight(self, item: Any) -> int:
        """1, plus what its called computations draw when open: a fusion's ops; a
        loop's or a call's top-level calls (they are nested by the code in turn)."""
        if not item.called:
            return 1
        if item.opcode == "fusion":
            return 1 + sum(
                1
                for c in item.called
                for _, o in self.module.walk(c.computation)
                if o.opcode not in _ir.BOOKKEEPING
            ) * (self.max_depth != 0)
        return 1 + sum(len(self._tree(c.computation).items) for c in item.called)

    def _tree(self, name: str) -> Group:
        tree = self.trees.get(name)
        if tree is None:
            ops = list(self.module.computations[name].ops)
            tree = self.trees[name] = code_groups(ops, stack=self.stacks)
        return tree

    def fold_into(self, node: str, group: Group, *context: Any) -> None:
        env = context[0]
        for op in group.eqns():
            if op.opcode in ("parameter", "return"):
                continue
            if op.opcode in ("tuple", "get-tuple-element") or _constant(op, env):
                self.see_through(op, env)
                continue
            for value in op.operands:
                self.connect(value, node, env)
            for value, kind in zip(
                op.results or [op.name], _result_types(op), strict=False
            ):
                env[value] = [(node, kind)]


def coded(
    draw: Callable[[HloCodeBuilder], None],
    make: Callable[[set | None, dict], HloCodeBuilder],
    head: str,
    subtitle: str,
    budget: int,
) -> Diagram:
    """The module nested by the user's calls, opening as many groups as fit `budget`
    nodes and `_fit.MAX_PX` both ways; its page (`Diagram.save(".html")`) opens all.

    `make(opened, trees)` returns a fresh builder of an empty graph; `draw(builder)`
    draws the module into it (inputs, entry, outputs) without finishing it."""
    trees: dict = {}
    default: set[int] = set()

    def build(opened: set | None) -> HloCodeBuilder:
        builder = make(opened, trees)
        draw(builder)
        return builder

    def at(nodes: int) -> Diagram:
        builder = _fit.plan(build, nodes)
        default.clear()
        default.update(id(g) for g in builder.folded_groups)
        folded = len(builder.folded_groups)
        title = head + (f" ({folded} calls folded)" if folded > 1 else "")
        title += " (1 call folded)" if folded == 1 else ""
        builder.graph.attr(label=_style.text_label(title, subtitle))
        builder.finish()
        return Diagram.from_graph(builder.graph, title)

    diagram, _ = _fit.fit(at, budget, cap=False)  # `turned`, then capped

    diagram.whole = whole_page(lambda: build(None), lambda: default)
    return diagram
