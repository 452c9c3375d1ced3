"""Programs as canonical nodes: each equation or op with its fields and its operands' origins.

A `Node` is what two programs are compared by (`_match`): its primitive or opcode, its
fields (input and output types, parameters, literal inputs; never a variable's or an
instruction's name) and where each operand comes from (another node's output, an
argument of the program, a literal). Calls that only wrap a body (`pjit`, `checkpoint`,
`custom_jvp_call`, a compiled `fusion` or `call`) are seen through: their body's nodes
read the caller's values directly, so wrapping code in `jax.checkpoint` adds one node
and moves none. Bodies run differently (scan, while, cond) read their own arguments.
The program and each such body end in a `RETURN` node reading what it returns, in
order: two programs whose ops are the same but return them swapped (or whose cond
branches are swapped) differ there.
This module reads jaxprs; `_hlo_nodes` reads StableHLO and compiled HLO.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jaxtour._ir._jaxpr import (
    SourceLine,
    is_literal,
    source_line,
    sub_jaxprs,
    type_str,
    user_line,
)

# Bodies that run once per call, with the caller's values: seen through.
_LOOPING = frozenset({"scan", "while", "cond"})
# Params that name things or hold Python callables: never a difference.
_NAMES = frozenset({"name", "debug_info", "source_info", "fun_name", "module_name"})
# The label of the node that reads what a program or a body returns.
RETURN = "return"


@dataclass
class Node:
    """One equation or op, canonical: `fields` say what it is, `operands` what it reads.

    An operand is `("node", i, k)` (output k of node i), `("arg", i)` (the program's
    argument i), `("arg", i, role, k)` (argument k of node i's body `role`) or
    `("lit",)` (a literal, whose value is among the fields).
    """

    label: str
    fields: dict[str, str]
    operands: list[tuple]
    source: SourceLine | None = None
    scope: str = ""  # "scan › " for an equation inside a scan's body
    region: str = (
        ""  # the looping bodies it is in (scan, while, cond): seen-through calls not
    )
    local: int = 0  # hash of label and fields
    fp: int = 0  # hash of `local` and, recursively, its operands' fingerprints

    @property
    def where(self) -> str:
        """`file.py:N` of the line that wrote it ("" when unknown)."""
        return self.source.where if self.source else ""

    def text(self) -> str:
        """`mul f32[3] (file.py:4)`: how a report names the node."""
        out = self.fields.get("out", "")
        where = f" ({self.where})" if self.where else ""
        return f"{self.scope}{self.label} {out}".rstrip() + where


@dataclass
class Builder:
    """Nodes in program order, each hashed as it is added (operands come first)."""

    nodes: list[Node] = field(default_factory=list)
    # node → the line to fall back on when none of its readers has one
    fallback: dict[int, SourceLine | None] = field(default_factory=dict)

    def add(self, node: Node) -> int:
        node.local = hash((node.label, tuple(sorted(node.fields.items()))))
        node.fp = hash((node.local, tuple(self.key(r) for r in node.operands)))
        self.nodes.append(node)
        return len(self.nodes) - 1

    def key(self, ref: tuple) -> tuple:
        """An operand's origin by content: a node by its fingerprint, not its index."""
        if ref[0] == "node":
            return ("node", self.nodes[ref[1]].fp, ref[2])
        if ref[0] == "arg" and len(ref) == 4:
            return ("arg", self.nodes[ref[1]].fp, *ref[2:])
        if ref[0] == "tuple":
            return ("tuple", tuple(self.key(r) for r in ref[1]))
        return ref


def jaxpr_nodes(jaxpr: Any) -> list[Node]:
    """The equations of `jaxpr` (an open jaxpr), nested ones included, as nodes."""
    builder = Builder()
    env: dict[Any, tuple] = {v: ("arg", i) for i, v in enumerate(jaxpr.invars)}
    env |= {v: ("const", type_str(v.aval)) for v in jaxpr.constvars}
    _add_jaxpr(builder, jaxpr, env, "")
    _add_return(builder, jaxpr, env, "program", "", "")
    return builder.nodes


def add_return(
    builder: Builder,
    refs: list[tuple],
    role: str,
    scope: str,
    region: str,
    literals: dict[str, str] | None = None,
) -> None:
    """The `RETURN` node of a program or body (`role`: which one) reading `refs`."""
    fields = {"of": role, **(literals or {})}
    builder.add(Node(RETURN, fields, refs, None, scope, region=region))


def _add_return(
    builder: Builder, jaxpr: Any, env: dict, role: str, scope: str, region: str
) -> None:
    literals = {
        f"output {k}": _literal(v.val)
        for k, v in enumerate(jaxpr.outvars)
        if is_literal(v)
    }
    refs = [_ref(env, v) for v in jaxpr.outvars]
    add_return(builder, refs, role, scope, region, literals)


def _ref(env: dict, atom: Any) -> tuple:
    if atom is None:
        return ("none",)
    if is_literal(atom):
        return ("lit",)
    return env.get(atom, ("free", type_str(atom.aval)))


def _add_jaxpr(
    builder: Builder, jaxpr: Any, env: dict, scope: str, region: str = ""
) -> None:
    for v in jaxpr.constvars:
        env.setdefault(v, ("const", type_str(v.aval)))
    for eqn in jaxpr.eqns:
        name, subs = eqn.primitive.name, sub_jaxprs(eqn)
        node = Node(
            name,
            eqn_fields(eqn),
            [_ref(env, v) for v in eqn.invars],
            user_line(source_line(eqn)),
            scope,
            region=region,
        )
        index = builder.add(node)
        if len(subs) == 1 and name not in _LOOPING and _lines_up(eqn, subs[0]):
            sub = subs[0]
            inner = {
                v: _ref(env, a)
                for v, a in zip(sub.jaxpr.invars, sub.inputs, strict=False)
            }
            _add_jaxpr(builder, sub.jaxpr, inner, f"{scope}{name} › ", region)
            for outer, result in zip(eqn.outvars, sub.jaxpr.outvars, strict=True):
                env[outer] = _ref(inner, result)
            continue
        for sub in subs:
            inner = {
                v: ("arg", index, sub.label, k) for k, v in enumerate(sub.jaxpr.invars)
            }
            inner_scope, inner_region = f"{scope}{name} › ", f"{region}{name}/"
            _add_jaxpr(builder, sub.jaxpr, inner, inner_scope, inner_region)
            _add_return(builder, sub.jaxpr, inner, sub.label, inner_scope, inner_region)
        env |= {v: ("node", index, k) for k, v in enumerate(eqn.outvars)}


def _lines_up(eqn: Any, sub: Any) -> bool:
    return len(sub.jaxpr.invars) == len(eqn.invars) and len(sub.jaxpr.outvars) == len(
        eqn.outvars
    )


def eqn_fields(eqn: Any) -> dict[str, str]:
    """What an equation is, minus names: types in and out, params, literal inputs."""
    fields = {
        "in": ", ".join(type_str(v.aval) for v in eqn.invars),
        "out": ", ".join(type_str(v.aval) for v in eqn.outvars),
    }
    for i, atom in enumerate(eqn.invars):
        if is_literal(atom):
            fields[f"input {i}"] = _literal(atom.val)
    for key, value in eqn.params.items():
        text = _param(value)
        if key not in _NAMES and text is not None:
            fields[key] = text
    return fields


def _literal(value: Any) -> str:
    array = np.asarray(value)
    if array.ndim == 0:
        return repr(array.item())
    return f"{array.dtype}{list(array.shape)} #{hash(array.tobytes()) & 0xFFFF:04x}"


def _param(value: Any) -> str | None:
    """A param as text; None for what is not a difference (bodies, callables, names)."""
    many = value if isinstance(value, tuple | list) else [value]
    if any(hasattr(v, "eqns") or hasattr(v, "jaxpr") for v in many) or callable(value):
        return None
    text = str(value)
    return None if " at 0x" in text else text


def inherit_sources(nodes: list[Node]) -> None:
    """A node with no line of its own (a constant) takes the line of its first reader."""
    lineless = {i for i, node in enumerate(nodes) if node.source is None}
    # readers come later: walked backwards, the first reader writes last, and a chain
    # (constant → broadcast → multiply) resolves
    for node in reversed(nodes):
        for ref in node.operands:
            if ref[0] == "node" and ref[1] in lineless and node.source is not None:
                nodes[ref[1]].source = node.source
