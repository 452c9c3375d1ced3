"""`compare_stages`: what XLA did to a function, StableHLO before versus compiled HLO after."""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from jaxtour import _ir, _palette
from jaxtour._number_words import plural, si
from jaxtour._report import Report, Reported, Table

WHO = "compare_stages"
MAX_FUSIONS = 40  # listed; the counts above cover all of them
NOTE = (
    "StableHLO: the ops JAX hands XLA. compiled: the ops XLA runs, a fusion counting "
    "once. in fusions: the ops inside them; XLA may copy a cheap op (a broadcast, a "
    "constant) into several fusions rather than store its result."
)


def compare_stages(
    f: Callable,
    *,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., StageComparison]:
    """Before versus after XLA: op counts by kind, and what each fusion absorbed.

    Traces `f` to a jaxpr, lowers it to StableHLO (what JAX hands XLA) and compiles it
    (what XLA made of it for this backend), then compares: ops of each kind before and
    after, how many ended up inside fusions, and for every fusion the ops it holds, the
    jaxpr primitives they came from and the lines of your code that wrote them.

    Args:
        f: the function to compile.
        static_argnums: positions of arguments that are not arrays (as in `jax.jit`).
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.

    Returns:
        A function taking `f`'s example arguments and returning a `StageComparison`:
        an HTML table in Jupyter, plain text in a terminal.

    Raises:
        TypeError: `f` is not callable, or an argument is not something JAX traces.

    Example:
        >>> import jax.numpy as jnp
        >>> c = compare_stages(lambda x: jnp.tanh(x) * 2.0 + 1.0)(jnp.ones(3))
        >>> c.compiled_ops < c.stablehlo_ops
        True
    """
    _ir.check_callable(f, WHO)
    trace = _ir.tracer(f, WHO, static_argnums, static_argnames)

    def compare(*args: Any, **kwargs: Any) -> StageComparison:
        import jax

        traced = trace(args, kwargs)
        lowered = traced.lower()
        compiled = lowered.compile()
        module = _ir.parse_hlo(compiled.as_text())
        return StageComparison.of(
            _ir.function_name(f),
            jax.default_backend(),
            _ir.count_eqns(_ir.unwrap_jit(traced.jaxpr).jaxpr),
            _ir.unwrap_call(_ir.parse_stablehlo(_ir.stablehlo_text(lowered))),
            module,
            _ir.cost_summary(compiled, module),
        )

    return compare


@dataclass
class Fusion:
    """One fusion of the compiled HLO and what it absorbed."""

    name: str
    kind: str
    ops: collections.Counter
    primitives: list[str]
    lines: list[_ir.SourceLine]

    def describe(self) -> dict[str, str]:
        """The fusion as table cells: name, ops, jaxpr primitives, source lines."""
        return {
            "fusion": f"{self.name} ({self.kind})" if self.kind else self.name,
            "ops fused": _counts(
                self.ops - collections.Counter(constant=self.ops["constant"]), 5
            ),
            "from jaxpr": ", ".join(self.primitives) or "-",
            "your lines": ", ".join(line.where for line in self.lines) or "-",
        }


@dataclass
class StageComparison(Reported):
    """The before/after-XLA comparison `compare_stages` returns.

    Attributes:
        name, platform: the function and the backend it was compiled for.
        jaxpr_eqns: equations in the jaxpr, nested ones included.
        stablehlo: StableHLO op counts by opcode.
        compiled: compiled-HLO op counts by opcode outside fusions (a fusion counts once).
        fused: op counts by opcode inside the fusions.
        fusions: each fusion with the ops, primitives and source lines it absorbed.
        figures: XLA's cost and memory analysis (flops, bytes_accessed, temp_bytes, ...).
    """

    name: str
    platform: str
    jaxpr_eqns: int
    stablehlo: collections.Counter
    compiled: collections.Counter
    fused: collections.Counter
    fusions: list[Fusion] = field(default_factory=list)
    figures: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        name: str,
        platform: str,
        eqns: int,
        before: _ir.HloModule,
        after: _ir.HloModule,
        figures: dict[str, float],
    ) -> StageComparison:
        fusions = [_fusion(after, op) for op in after.fusions()]
        fused = sum((f.ops for f in fusions), collections.Counter())
        return cls(
            name,
            platform,
            eqns,
            before.op_counts(),
            after.op_counts(fused=False),
            fused,
            fusions,
            figures,
        )

    @property
    def stablehlo_ops(self) -> int:
        """Ops JAX handed XLA."""
        return self.stablehlo.total()

    @property
    def compiled_ops(self) -> int:
        """Ops XLA runs, a fusion counted as one."""
        return self.compiled.total()

    def headline(self) -> str:
        """What XLA did, in one sentence."""
        n, standalone = len(self.fusions), self.compiled_ops - len(self.fusions)
        text = (
            f"XLA turned {plural(self.stablehlo_ops, 'StableHLO op')} into "
            f"{self.compiled_ops} for {self.platform}: {plural(n, 'fusion')} holding "
            f"{plural(self.fused.total(), 'op')}, and {plural(standalone, 'op')} "
            "left standalone"
        )
        rest = collections.Counter(
            {k: v for k, v in self.compiled.items() if k != "fusion"}
        )
        return text + (f" ({_counts(rest, 4)})." if rest else ".")

    def rows(self) -> list[tuple[str, int, int, int]]:
        """(kind, StableHLO ops, compiled standalone ops, compiled ops inside fusions)."""

        def by_family(counts: collections.Counter) -> collections.Counter:
            out: collections.Counter = collections.Counter()
            for op, n in counts.items():
                out["fusion" if op == "fusion" else _palette.family(op)] += n
            return out

        before, after, inside = (
            by_family(c) for c in (self.stablehlo, self.compiled, self.fused)
        )
        kinds = [
            k
            for k in (*_palette.FAMILIES, "fusion")
            if before[k] or after[k] or inside[k]
        ]
        rows = [(k, before[k], after[k], inside[k]) for k in kinds]
        return [
            *rows,
            ("total", self.stablehlo_ops, self.compiled_ops, self.fused.total()),
        ]

    def figures_line(self) -> str:
        """XLA's own cost and memory figures, in words: a lower bound said so, and
        the library calls XLA counts nothing of named (`_ir.left_out`)."""
        names = {
            "flops": "FLOP",
            "transcendentals": "transcendentals",
            "bytes_accessed": "B accessed",
            "temp_bytes": "B temp memory",
            "argument_bytes": "B arguments",
            "output_bytes": "B outputs",
        }
        # beside a library call XLA does not count: "at least", or "not counted"
        said = [
            _ir.figure_text(self.figures, k, partial(si, unit=unit), True)
            for k, unit in names.items()
        ]
        left = _ir.left_out(self.figures)
        return ", ".join(s for s in said if s) + (f" ({left})" if left else "")

    def report(self) -> Report:
        """Op counts by kind before and after XLA, then each fusion, as one `Report`."""
        rows = [[str(c) for c in row] for row in self.rows()]
        shades = {
            k: _palette.FAMILIES[kind].fill
            for k, (kind, *_) in enumerate(self.rows())
            if kind in _palette.FAMILIES
        }
        tables = [
            Table(
                ["kind", "StableHLO", "compiled", "in fusions"],
                rows,
                align="lrrr",
                shades=shades,
                note=NOTE,
            )
        ]
        if self.fusions:
            more = len(self.fusions) - MAX_FUSIONS
            cells = [f.describe() for f in self.fusions[:MAX_FUSIONS]]
            tables.append(
                Table(
                    list(cells[0]),
                    [list(c.values()) for c in cells],
                    heading="Fusions",
                    note=f"… and {more} more fusions" if more > 0 else "",
                )
            )
        return Report(
            f"What XLA did to {self.name}: jaxpr {plural(self.jaxpr_eqns, 'equation')} "
            f"-> StableHLO {plural(self.stablehlo_ops, 'op')} -> compiled "
            f"{plural(self.compiled_ops, 'op')}",
            lead=[self.headline()],
            tables=tables,
            notes=[f"XLA's figures: {self.figures_line()}"] if self.figures else [],
        )

    def __repr__(self) -> str:
        return (
            f"StageComparison({self.name!r} on {self.platform}: "
            f"{plural(self.stablehlo_ops, 'StableHLO op')} -> {self.compiled_ops} "
            f"compiled, {plural(len(self.fusions), 'fusion')})"
        )


def _fusion(module: _ir.HloModule, op: _ir.HloOp) -> Fusion:
    inner = [
        o
        for call in op.called
        if call.computation in module.computations
        for _, o in module.walk(call.computation)
        if o.opcode not in _ir.BOOKKEEPING and o.opcode != "fusion"
    ]  # a fusion nested in this one (GPU) is counted by what it holds
    primitives = list(dict.fromkeys(o.primitive for o in inner if o.primitive))
    lines = list({o.source[:2]: o.source for o in inner if o.source}.values())
    return Fusion(
        op.name,
        op.fusion,
        collections.Counter(o.opcode for o in inner),
        primitives,
        sorted(lines, key=lambda line: (line.file, line.line)),
    )


def _counts(counts: collections.Counter, limit: int = 6) -> str:
    items = counts.most_common()
    text = ", ".join(f"{op}×{n}" if n > 1 else op for op, n in items[:limit])
    return text + (", …" if len(items) > limit else "")
