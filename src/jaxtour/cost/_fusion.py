"""`fusion_traffic`: bytes through memory before XLA (a buffer per equation) and after.

Unfused, every jaxpr equation reads its operands from memory and writes its results
back; fused, only each compiled op's operands and results cross memory, the values
inside a fusion staying in registers. The ratio is what fusion saves on this program.

Like with like: the jaxpr's shapes are global, a sharded program's compiled ops one
device's. A sharded program is set against the same jaxpr compiled for one device
(its global fused bytes), so the saving does not change with the device count; when
that twin cannot be built (a `shard_map`, a sharding constraint inside) both figures
are per device, the jaxpr's split evenly. Loops count every iteration on both sides; a
cond its costliest branch on both (an upper bound of what runs), as the note says.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from jaxtour import _ir
from jaxtour._number_words import plural, si
from jaxtour._report import Report, Table
from jaxtour.cost import _notes
from jaxtour.cost._ledger import CostTable, total
from jaxtour.cost._table import build

# Counts closer than this (relative) read "about as many": past it a ratio printed to
# three figures reads at least 1.01x, never "1x more".
ABOUT = 0.01


class FusionTraffic(NamedTuple):
    """Bytes moved through memory by `name`, equation by equation vs after XLA."""

    name: str
    unfused_bytes: float  # every jaxpr equation reads and writes memory
    fused_bytes: float  # each compiled op (a fusion counts once) reads and writes
    xla_bytes: float | None  # cost_analysis()'s "bytes accessed", None if not given
    equations: int
    ops: int
    devices: int = 1
    basis: str = "one device"  # what both figures measure: "global" or "per device"
    per_device_bytes: float | None = None  # one device's compiled ops, when sharded
    note: str = ""  # what the figures leave out or how loops were counted

    @property
    def saving(self) -> float:
        """How many times fewer bytes the fused program moves."""
        return (
            self.unfused_bytes / self.fused_bytes if self.fused_bytes else float("inf")
        )

    @property
    def verdict(self) -> str:
        """The comparison in words: fewer bytes, as many (or about as many: within
        `ABOUT`, where a ratio would read "1x"), or more (the compiled program can move
        bytes the equations do not count, a loop's copies say, more than fusion saves)."""
        fused, unfused = si(self.fused_bytes, "B"), si(self.unfused_bytes, "B")
        if self.fused_bytes == self.unfused_bytes:
            return f"The compiled ops move as many bytes as the equations ({fused})."
        if not self.unfused_bytes:
            return (
                f"The equations move no bytes; the compiled ops move {fused} "
                "(copies XLA adds)."
            )
        if self._about():
            gap = self.fused_bytes - self.unfused_bytes
            return (
                f"The compiled ops move about as many bytes as the equations ({fused} "
                f"against {unfused}: {si(abs(gap), 'B')} {'more' if gap > 0 else 'fewer'}"
                f", within {100 * ABOUT:.0f} %)."
            )
        if self.saving > 1:
            return f"Fusion moves {self.saving:.3g}x fewer bytes."
        return (
            f"The compiled ops move {1 / self.saving:.3g}x more bytes than the "
            f"equations ({fused} against {unfused}): here the compiled program moves "
            "bytes the equations do not count, more than fusion saves."
        )

    def _about(self) -> bool:
        """The two counts are within `ABOUT` of each other (a ratio would read 1x)."""
        gap = abs(self.fused_bytes - self.unfused_bytes)
        return gap <= ABOUT * max(self.fused_bytes, self.unfused_bytes)

    def _ratio(self) -> str:
        if self.fused_bytes == self.unfused_bytes:
            return "as many"
        if not self.unfused_bytes:
            return "more"
        if self._about():
            return "about as many"
        if self.saving > 1:
            return f"{self.saving:.3g}x less"
        return f"{1 / self.saving:.3g}x more"

    def __repr__(self) -> str:
        xla = (
            f", XLA says {si(self.xla_bytes, 'B')}"
            if self.xla_bytes is not None
            else ""
        )
        where = f" ({self.basis}, {self.devices} devices)" if self.devices > 1 else ""
        note = f"; {self.note}" if self.note else ""
        return (
            f"FusionTraffic({self.name!r}{where}: {_moves(self.equations, 'equation')} "
            f"{si(self.unfused_bytes, 'B')}; {_moves(self.ops, 'compiled op')} "
            f"{si(self.fused_bytes, 'B')}{xla}: {self._ratio()}{note})"
        )

    def report(self) -> Report:
        """Bytes unfused, fused (and XLA's count), and the saving, as one `Report`."""
        unfused = ["jaxpr equations, unfused", str(self.equations)]
        fused = ["compiled ops, a fusion once", str(self.ops)]
        rows = [
            [*unfused, si(self.unfused_bytes, "B")],
            [*fused, si(self.fused_bytes, "B")],
        ]
        if self.xla_bytes is not None:
            rows.append(["XLA's cost_analysis()", "", si(self.xla_bytes, "B")])
        if self.per_device_bytes is not None:
            each = si(self.per_device_bytes, "B")
            rows.append(["compiled ops on one device (sharded)", "", each])
        where = f", {self.basis}, {self.devices} devices" if self.devices > 1 else ""
        return Report(
            f"Bytes through memory: {self.name}{where}",
            lead=[self.verdict],
            tables=[Table(["moved by", "count", "bytes"], rows, align="lrr")],
            notes=[self.note] if self.note else [],
        )

    # A NamedTuple takes no base class but itself: `Reported`'s three methods, by hand.
    def _repr_html_(self) -> str:
        return self.report().html()

    def __str__(self) -> str:
        return self.report().text()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the result as a web page (.html), text (.txt) or Markdown (.md)."""
        return self.report().save(path, who="FusionTraffic")


def _moves(n: int, what: str) -> str:
    """``"1 equation moves"``, ``"2 compiled ops move"``: the count and its verb agree."""
    return f"{plural(n, what)} {'moves' if n == 1 else 'move'}"


def fusion_traffic(
    f: Callable,
    *,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., FusionTraffic]:
    """Bytes `f` would move unfused (each equation on its own) and moves once compiled.

    Args:
        f: the function; traced and compiled with `jax.jit`.
        static_argnums: as `jax.jit`'s.
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.

    Returns:
        A function of `f`'s example arguments returning a `FusionTraffic`.

    Example:
        >>> import jax.numpy as jnp
        >>> t = fusion_traffic(lambda x: jnp.sin(x) * 2 + 1)(jnp.ones(1000))
        >>> t.unfused_bytes, t.fused_bytes  # 3 equations of 8 kB each vs 1 fusion
        (24000.0, 8000.0)
    """
    _ir.check_callable(f, "fusion_traffic")
    trace = _ir.tracer(f, "fusion_traffic", static_argnums, static_argnames)

    def traffic(*args: Any, **kwargs: Any) -> FusionTraffic:
        traced = trace(args, kwargs)
        table = build(_ir.function_name(f), traced, traced.lower().compile())
        unfused = total(table.equations)[2]  # global shapes
        basis, compared = "one device", table
        if table.devices > 1:
            twin = _unsharded(table.name, traced)
            basis, compared = ("global", twin) if twin else ("per device", table)
            unfused /= 1 if twin else table.devices  # the jaxpr split evenly
        xla = compared.xla.get("bytes_accessed")
        return FusionTraffic(
            table.name,
            unfused,
            compared.bytes,
            None if xla is None or compared.once else xla,
            len(table.equations),
            len(compared.ops),
            table.devices,
            basis,
            table.bytes if table.devices > 1 else None,
            "; ".join(
                _notes.loop_notes(table.loops, table.compiled_loops)
                + ([_notes.COND] if table.conds else [])
            ),
        )

    return traffic


def _unsharded(name: str, traced: Any) -> CostTable | None:
    """The same jaxpr compiled for one device (None when it will not leave its mesh:
    a shard_map or a sharding constraint inside keeps it on several)."""
    import jax
    from jax.extend.core import jaxpr_as_fun

    closed = traced.jaxpr
    avals = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in closed.in_avals]
    try:
        twin = jax.jit(jaxpr_as_fun(closed)).trace(*avals)
        table = build(name, twin, twin.lower().compile())
    except Exception:  # explicit shardings in the jaxpr's types: compare per device
        return None
    return table if table.devices == 1 else None
