"""`ADGraph`: what an autodiff picture shows, as data the tests can read.

Nodes are inputs, eqns, residuals, seeds and gradients; each carries the values JAX
computed at the example point. The drawing (`_dot.py`) only renders this graph.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jaxtour._code_groups import Group, code_groups, names_own_code, runs_call
from jaxtour._ir import (
    FlatJaxpr,
    Stack,
    host,
    is_dropvar,
    is_literal,
    source_line,
    type_str,
    user_stack,
)
from jaxtour.autodiff._format import eqn_label

KINDS = ("input", "fixed", "const", "op", "output", "residual", "seed", "gradient")


@dataclass
class ADNode:
    """One box of the picture.

    Attributes:
        id: DOT node name.
        kind: one of "input" (differentiated), "fixed" (an argument not differentiated),
            "const", "op", "output", "residual", "seed", "gradient".
        lane: "forward" / "backward" for `draw_grad` and `draw_vjp`; "primal" /
            "tangent" for `draw_jvp`.
        label: ``x``, ``mul(3.0, ·)``, ``∂f/∂x``.
        avals: one JAX type per output (``f32[3]``).
        values: one NumPy value per output, or None where not computed.
        primitive: the jaxpr primitive for "op" nodes, else "".
        scope: for "op" nodes, the `jit` calls the eqn sits in, as (number, name) pairs.
        source: for "op" nodes, the user's line that produced it ("loss.py:12"), or "".
        group: for terminals, what a folded picture calls the pytree of the leaf.
        call: for "op" nodes, the calls of the user's code the eqn was made in, as
            the labels of their groups (`Block`, `Block.attn`), outermost first.
        runs: for "op" nodes running a jaxpr (a scan): the user's call it runs.
    """

    id: str
    kind: str
    lane: str
    label: str
    avals: list = field(default_factory=list)
    values: list = field(default_factory=list)
    primitive: str = ""
    scope: tuple = ()
    source: str = ""
    group: str = ""
    call: tuple = ()
    runs: str = ""  # for a scan, loop or call of the user's code: `runs Cell`

    @property
    def value(self) -> Any:
        """The value of a one-output node."""
        return self.values[0] if self.values else None


@dataclass
class ADEdge:
    """A value flowing from `src` to `dst`; kind: primal, tangent, residual, cotangent, link."""

    src: str
    dst: str
    kind: str


@dataclass
class ADGraph:
    """A forward (or primal) lane and a backward (or tangent) lane, linked."""

    title: str = ""
    nodes: dict = field(default_factory=dict)
    edges: list = field(default_factory=list)
    note: str = ""  # under the title: e.g. which leaves were held fixed
    own_calls: bool = False  # some op's `call` names the user's own code: boxes drawn

    def add(self, node: ADNode) -> str:
        """Add `node`; returns its id."""
        self.nodes[node.id] = node
        return node.id

    def link(self, src: str, dst: str, kind: str) -> None:
        """Add an edge of `kind` from node `src` to node `dst`."""
        self.edges.append(ADEdge(src, dst, kind))

    def select(self, kind: str | None = None, lane: str | None = None) -> list[ADNode]:
        """The nodes of one kind and/or lane, in the order they were added."""
        return [
            n
            for n in self.nodes.values()
            if (kind is None or n.kind == kind) and (lane is None or n.lane == lane)
        ]

    def primitive_counts(self, lane: str) -> Counter:
        """How many eqns of each primitive one lane shows."""
        return Counter(n.primitive for n in self.select("op", lane))

    def values_of(self, kind: str) -> list[np.ndarray]:
        """The values shown on the nodes of one kind, e.g. every "gradient" node."""
        return [n.value for n in self.select(kind)]


AUX = "aux (not differentiated)"  # what f's aux is called, where f has one


def output_label(output: str, path: str, aux: bool = False) -> str:
    """One leaf of f's output, ``f(…)['a']`` (`output` names the whole output), or of
    its aux, ``aux['n'] (not differentiated)``; `path` is the leaf's place in the
    pytree, "" for a lone array."""
    return f"aux{path} (not differentiated)" if aux else output + path


def aux_note(held: list[tuple[str, Any]], limit: int = 3) -> str:
    """The picture's line naming f's aux leaves that are not arrays (a string, an
    object), by path and value: JAX returns them as they are, untraced ("" when none)."""
    if not held:
        return ""
    shown = [f"aux{path} = {_short(value)}" for path, value in held[:limit]]
    more = f" and {len(held) - limit} more" if len(held) > limit else ""
    return "not drawn (not arrays, returned as they are): " + ", ".join(shown) + more


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def add_lane(
    graph: ADGraph,
    flat: FlatJaxpr,
    lanes: Any,
    sources: dict,
    edge_kind: Any,
    values: bool,
) -> dict:
    """Add one node per eqn of `flat` (and for its consts); return var -> node id.

    Args:
        graph: the graph to extend.
        flat: a flattened jaxpr (`_flat.flatten_jaxpr`).
        lanes: the lane of the new nodes, or a list with one lane per eqn.
        sources: node ids already holding `flat`'s input vars.
        edge_kind: the kind of edge into an eqn, or a function (eqn, var) -> kind.
        values: whether nodes carry values.
    """
    sources = dict(sources)
    lanes = [lanes] * len(flat.eqns) if isinstance(lanes, str) else list(lanes)
    prefix = f"n{len(graph.nodes)}_"
    for index, var in enumerate(flat.constvars):
        sources[var] = add_terminal(
            graph,
            f"{prefix}c{index}",
            "const",
            lanes[0] if lanes else "forward",
            "const",
            flat,
            var,
            values,
        )
    calls, own = _calls(flat.eqns)
    graph.own_calls |= own
    for index, (eqn, lane) in enumerate(zip(flat.eqns, lanes, strict=True)):
        node = graph.add(_eqn_node(f"{prefix}e{index}", eqn, lane, flat, values))
        graph.nodes[node].call = calls.get(id(eqn), ())
        for var in dict.fromkeys(a for a in eqn.invars if not is_literal(a)):
            kind = edge_kind(eqn, var) if callable(edge_kind) else edge_kind
            graph.link(sources[var], node, kind)
        sources.update({v: node for v in eqn.outvars if not is_dropvar(v)})
    return sources


def _eqn_node(
    node_id: str, eqn: Any, lane: str, flat: FlatJaxpr, values: bool
) -> ADNode:
    literals = [np.asarray(a.val) if is_literal(a) else None for a in eqn.invars]
    label = eqn_label(eqn.primitive, eqn.params, literals)
    outs = [None if is_dropvar(v) else _val(flat, v, values) for v in eqn.outvars]
    line = source_line(eqn.eqn) if eqn.eqn is not None else None
    return ADNode(
        node_id,
        "op",
        lane,
        label,
        [_aval(v) for v in eqn.outvars],
        outs,
        eqn.primitive,
        tuple(zip(eqn.call_ids, eqn.scope, strict=True)),
        line.where if line else "",
        runs=runs_call(eqn.eqn, _stack(eqn)) if eqn.eqn is not None else "",
    )


def _stack(eqn: Any) -> Stack:
    return user_stack(eqn.eqn) if eqn.eqn is not None else Stack((), None)


def _calls(eqns: list) -> tuple[dict[int, tuple[str, ...]], bool]:
    """id(eqn) -> the labels of the user's calls it sits in (`_code_groups`), and
    whether they name the user's own code (`names_own_code`)."""
    out: dict[int, tuple[str, ...]] = {}
    tree = code_groups(list(eqns), stack=_stack)
    todo: list[tuple[Group, tuple[str, ...]]] = [(tree, ())]
    while todo:
        group, path = todo.pop()
        for item in group.items:
            if isinstance(item, Group):
                todo.append((item, (*path, item.label)))
            else:
                out[id(item)] = path
    return out, names_own_code(tree)


def _aval(atom: Any) -> str:
    return type_str(atom.aval)


def _val(flat: FlatJaxpr, atom: Any, values: bool) -> Any:
    if not values:
        return None
    value = flat.value(atom)
    if value is None:
        return None  # not computed
    return host(value)  # a PRNG key as its key data (NumPy cannot hold the key)


def add_terminal(
    graph: ADGraph,
    node_id: str,
    kind: str,
    lane: str,
    label: str,
    flat: FlatJaxpr,
    atom: Any,
    values: bool,
    group: str = "",
) -> str:
    """A named end of a lane (input, output, residual, seed, gradient) for one atom;
    `group` names the pytree it is a leaf of (see `ADNode`)."""
    return graph.add(
        ADNode(
            node_id,
            kind,
            lane,
            label,
            [_aval(atom)],
            [_val(flat, atom, values)],
            group=group,
        )
    )
