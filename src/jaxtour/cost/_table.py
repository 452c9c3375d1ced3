"""`cost_table`: FLOPs and bytes per jaxpr equation and compiled op, beside XLA's."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from jaxtour import _ir
from jaxtour.cost._ledger import CostTable, Row, total


def equation_rows(jaxpr: Any, group_by: str | None) -> list[Row]:
    """The kit's rows for a jaxpr's equations, or summed per source line."""
    rows = []
    for _, eqn, count, times in _ir.jaxpr_counts(jaxpr):
        line = _ir.source_line(eqn)
        flops = None if count.flops is None else count.flops * times
        rows.append(
            Row(
                eqn.primitive.name,
                line.where if line else "",
                flops,
                count.transcendentals * times,
                count.bytes * times,
            )
        )
    if group_by != "source":
        return rows
    grouped: dict[str, list[Row]] = collections.defaultdict(list)
    for row in rows:
        grouped[row.where or "(no source line)"].append(row)
    return [
        Row(
            ", ".join(dict.fromkeys(r.name for r in group)),
            where,
            None if any(r.flops is None for r in group) else total(group)[0],
            *total(group)[1:],
        )
        for where, group in grouped.items()
    ]


def cost_table(
    f: Callable,
    *,
    group_by: str | None = None,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., CostTable]:
    """As `jax.jit(f).lower(*args).compile().cost_analysis()`, but per op, with reasons.

    Args:
        f: the function to cost; it is traced and compiled with `jax.jit`.
        group_by: None (one row per equation) or "source" (one per line of your code).
        static_argnums: as `jax.jit`'s.
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.

    Returns:
        A function of `f`'s example arguments returning a `CostTable`.

    Raises:
        ValueError: `group_by` is neither None nor "source".

    Example:
        >>> import jax.numpy as jnp
        >>> table = cost_table(lambda a, b: a @ b)(jnp.ones((4, 3)), jnp.ones((3, 2)))
        >>> table.flops  # 2 * 4 * 2 * 3: a multiply and an add per term
        48.0
    """
    _ir.check_callable(f, "cost_table")
    if group_by not in (None, "source"):
        raise ValueError(
            f'`group_by` must be None (one row per equation) or "source" '
            f"(one row per line of your code); got {group_by!r}."
        )
    trace = _ir.tracer(f, "cost_table", static_argnums, static_argnames)

    def table(*args: Any, **kwargs: Any) -> CostTable:
        traced = trace(args, kwargs)
        compiled = traced.lower().compile()
        return build(_ir.function_name(f), traced, compiled, group_by)

    return table


def build(
    name: str, traced: Any, compiled: Any, group_by: str | None = None
) -> CostTable:
    """The ledger of an already traced and compiled program, every loop iteration
    counted (see `_ir.hlo_trips`)."""
    import jax

    jaxpr = _ir.unwrap_jit(traced.jaxpr).jaxpr
    module = _ir.parse_hlo(compiled.as_text())
    loops = _ir.hlo_trips(module, jaxpr)
    ops = [
        Row(
            op.name,
            op.fusion or (op.source.where if op.source else op.kind),
            count.flops,
            count.transcendentals,
            count.bytes,
            op.opcode,
            tuple(_ir.uncountable(module, op)) if count.flops is None else (),
        )
        for op, count in _ir.hlo_counts(module, loops)
    ]
    figures = _ir.cost_summary(compiled, module)
    xla = {
        k: v
        for k, v in figures.items()
        if k in ("flops", "transcendentals", "bytes_accessed")
    }
    return CostTable(
        name,
        jax.default_backend(),
        equation_rows(jaxpr, group_by),
        ops,
        xla,
        devices_of(compiled),
        _ir.jaxpr_loops(jaxpr),
        list(loops.values()),
        _once(module, loops),
        _conds(jaxpr, module),
        frozenset(op.opcode for _, op in module.walk()),
        _complex_types(jaxpr),
    )


def _complex_types(jaxpr: Any) -> tuple[str, ...]:
    """The complex element types the jaxpr's equations take or give, each once."""
    types = [
        str(var.aval.dtype)
        for _, eqn in _ir.walk(jaxpr)
        for var in [*eqn.invars, *eqn.outvars]
        if "complex" in str(getattr(getattr(var, "aval", None), "dtype", ""))
    ]
    return tuple(dict.fromkeys(types))


def _conds(jaxpr: Any, module: Any) -> int:
    """How many conds the jaxpr holds or conditionals the compiled program runs."""
    eqns = sum(eqn.primitive.name == "cond" for _, eqn in _ir.walk(jaxpr))
    ops = sum(op.opcode == "conditional" for _, op in module.walk())
    return max(eqns, ops)


def _once(module: Any, loops: dict[str, Any]) -> dict[str, float]:
    """The compiled figures with each loop body counted once, as XLA's cost_analysis()
    counts it ({} when no loop runs more than once): what to set beside XLA's."""
    if all(loop.trips in (None, 1) for loop in loops.values()):
        return {}
    ones = {name: loop._replace(trips=1) for name, loop in loops.items()}
    counts = [count for _, count in _ir.hlo_counts(module, ones)]
    return {
        "flops": float(sum(c.flops or 0.0 for c in counts)),
        "bytes": float(sum(c.bytes for c in counts)),
    }


def devices_of(compiled: Any) -> int:
    """How many devices share the compiled program (1 when not sharded)."""
    try:
        shardings = [*compiled.input_shardings[0], *[compiled.output_shardings]]
    except Exception:  # an executable without shardings: one device
        return 1
    sizes = [len(s.device_set) for s in _leaves(shardings) if hasattr(s, "device_set")]
    return max(sizes, default=1)


def _leaves(tree: Any) -> list:
    import jax

    return jax.tree.leaves(tree, is_leaf=lambda x: hasattr(x, "device_set"))
