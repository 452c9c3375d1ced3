"""StableHLO and compiled HLO ops as `_nodes.Node`s: fusions and calls seen through.

An op's fields are its result and operand types, its attributes (computation names,
channel ids and backend configs left out) and a constant's value; a fusion's also say
what it holds, so two fusions match by their contents, not their names.
"""

from __future__ import annotations

import collections
import re
from typing import Any

from jaxtour._ir._hlo import HloComputation, HloModule, split_top
from jaxtour._ir._nodes import Builder, Node, add_return, inherit_sources, user_line

# Compiled HLO attributes that name computations or number channels.
_HLO_NAMES = frozenset(
    "calls to_apply condition body branch_computations true_computation "  # noqa: SIM905
    "false_computation channel_id backend_config".split()
)


def hlo_nodes(module: HloModule) -> list[Node]:
    """The ops of a StableHLO or compiled HLO module, from its entry, as nodes.

    Parameters, tuples and `get-tuple-element` are plumbing and make no node; a fusion
    makes one node (its `holds` field counts what it fuses) and its fused ops are
    nodes of their own that read the fusion's operands.
    """
    builder = Builder()
    entry = module.computations[module.entry]
    env: dict[str, tuple] = {name: ("arg", i) for i, name in enumerate(entry.params)}
    returned = _add_computation(builder, module, entry, env, "")
    add_return(builder, _flat(returned), "program", "", "")
    inherit_sources(builder.nodes)
    for index, own in builder.fallback.items():
        builder.nodes[index].source = builder.nodes[index].source or own
    return builder.nodes


def _add_computation(
    builder: Builder,
    module: HloModule,
    computation: HloComputation,
    env: dict[str, tuple],
    scope: str,
    region: str = "",
) -> list[tuple]:
    """Add the ops of `computation`; return the origins of the values it returns."""
    types = dict(zip(computation.params, computation.param_types, strict=False))
    for op in computation.ops:
        types[op.name] = op.type
        if len(op.results) > 1:  # `%0:2 = ...`: `%0#1` is the second of a tuple type
            parts = split_top(op.type.strip("()"))
            types |= {r: t.strip() for r, t in zip(op.results, parts, strict=False)}
    for op in computation.ops:
        refs = [env.get(name, ("free",)) for name in op.operands]
        if op.opcode == "parameter":
            continue
        if op.opcode == "get-tuple-element" and refs:
            env[op.name] = _element(refs[0], op.index or 0)
            continue
        if op.opcode == "tuple":
            env[op.name] = ("tuple", tuple(refs))
            continue
        calls = [c for c in op.called if c.computation in module.computations]
        fields = _op_fields(op, module)
        fields["in"] = ", ".join(types.get(name, "?") for name in op.operands)
        # a constant's own location names where JAX made it (the call, a cond): the
        # line that reads it says more, and it keeps its own only when none does
        own = user_line(op.source)
        source = None if op.opcode == "constant" else own
        index = builder.add(Node(op.kind, fields, refs, source, scope, region))
        builder.fallback[index] = own
        if op.opcode in ("fusion", "call") and len(calls) == 1:
            inner_comp = module.computations[calls[0].computation]
            inner = {p: r for p, r in zip(inner_comp.params, refs, strict=False)}
            returned = _add_computation(
                builder, module, inner_comp, inner, f"{scope}{op.opcode} › ", region
            )
            _bind_results(env, op.results, returned)
            continue
        for called in calls:
            body = module.computations[called.computation]
            inner = {
                p: ("arg", index, called.role, k) for k, p in enumerate(body.params)
            }
            inner_scope, inner_region = (
                f"{scope}{op.opcode} › ",
                f"{region}{op.opcode}/",
            )
            returned = _add_computation(
                builder, module, body, inner, inner_scope, inner_region
            )
            add_return(builder, _flat(returned), called.role, inner_scope, inner_region)
        for k, result in enumerate(op.results):
            env[result] = ("node", index, k)
    return [env.get(name, ("free",)) for name in computation.returns]


def _flat(returned: list[tuple]) -> list[tuple]:
    """What a computation returns, its values one by one: compiled HLO returns one
    tuple where StableHLO returns several values."""
    if len(returned) == 1 and returned[0][0] == "tuple":
        return list(returned[0][1])
    return returned


def _element(ref: tuple, k: int) -> tuple:
    """Element k of a tuple-valued origin."""
    if ref[0] == "tuple":
        return ref[1][k] if k < len(ref[1]) else ("free",)
    return ("node", ref[1], k) if ref[0] == "node" else ref


def _bind_results(env: dict, results: list[str], returned: list[tuple]) -> None:
    if len(results) == 1 and len(returned) != 1:
        env[results[0]] = ("tuple", tuple(returned))
        return
    for name, ref in zip(results, returned, strict=False):
        env[name] = ref


def _op_fields(op: Any, module: HloModule) -> dict[str, str]:
    fields = {"out": op.type}
    if op.literal:
        fields["value"] = op.literal
    for part in _attr_parts(op.attrs):
        key, _, value = part.partition("=")
        key = key.strip()
        if key and key not in _HLO_NAMES and key != "kind":
            fields[key] = value.strip() or key
    if op.opcode == "fusion":
        fields["kind"] = op.fusion
        fields["holds"] = _holds(module, op)
    return fields


def _attr_parts(attrs: str) -> list[str]:
    text = attrs.strip().lstrip(",").strip()
    return [p.strip() for p in split_top(text)] if text else []


def _holds(module: HloModule, op: Any) -> str:
    counts: collections.Counter = collections.Counter()
    for called in op.called:
        if called.computation in module.computations:
            for _, inner in module.walk(called.computation):
                if inner.opcode not in ("parameter", "tuple", "get-tuple-element"):
                    counts[inner.kind] += 1
    return ", ".join(f"{k}×{n}" if n > 1 else k for k, n in sorted(counts.items()))


def module_attrs(text: str) -> dict[str, str]:
    """What a whole module says beyond its ops (buffer donation, partitions, layouts).

    From compiled HLO's `HloModule` line, or StableHLO's `module` line and `@main`'s
    signature; the module's own name is left out (it is the function's).
    """
    found: dict[str, str] = {}
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("HloModule "):
            for part in _split_braces(line.split(None, 1)[1])[1:]:
                key, _, value = part.strip().partition("=")
                found[key] = value
            return _without_fingerprints(found)
        if line.startswith("module "):
            found["module"] = re.sub(r"^module\s+@[\w.$\-]+\s*", "", line).rstrip("{ ")
        elif line.startswith("func.func public @main"):
            signature = re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", line)
            found["main"] = re.sub(r"%[\w.$\-]+", "%", signature).rstrip("{ ")
            return found
    return found


def _without_fingerprints(attrs: dict[str, str]) -> dict[str, str]:
    """`attrs` less the hash a GPU's XLA writes of the module (`fingerprint_before_lhs`
    in its frontend attributes): it differs whenever any op does, and says no more."""
    front = attrs.get("frontend_attributes")
    if front is None:
        return attrs
    kept = [
        part
        for part in _split_braces(front.strip()[1:-1])
        if part.strip() and not part.strip().startswith("fingerprint_")
    ]
    rest = {k: v for k, v in attrs.items() if k != "frontend_attributes"}
    return {**rest, "frontend_attributes": "{" + ",".join(kept) + "}"} if kept else rest


def _split_braces(text: str) -> list[str]:
    """Split at commas outside brackets (`->` in a layout is no bracket)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]
