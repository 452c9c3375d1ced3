"""`fusion_traffic`: bytes through memory before XLA (a buffer per equation) and after.

Unfused, every jaxpr equation reads its operands from memory and writes its results
back; fused, only each compiled op's operands and results cross memory, the values
inside a fusion staying in registers. The ratio is what fusion saves on this program.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from jaxtour import _ir
from jaxtour._number_words import si
from jaxtour._report import Report, Table
from jaxtour.cost._ledger import total
from jaxtour.cost._table import build


class FusionTraffic(NamedTuple):
    """Bytes moved through memory by `name`, equation by equation vs after XLA."""

    name: str
    unfused_bytes: float  # every jaxpr equation reads and writes memory
    fused_bytes: float  # each compiled op (a fusion counts once) reads and writes
    xla_bytes: float | None  # cost_analysis()'s "bytes accessed", None if not given
    equations: int
    ops: int
    devices: int = 1

    @property
    def saving(self) -> float:
        """How many times fewer bytes the fused program moves."""
        return (
            self.unfused_bytes / self.fused_bytes if self.fused_bytes else float("inf")
        )

    def __repr__(self) -> str:
        xla = (
            f", XLA says {si(self.xla_bytes, 'B')}"
            if self.xla_bytes is not None
            else ""
        )
        where = f" (all {self.devices} devices)" if self.devices > 1 else ""
        return (
            f"FusionTraffic({self.name!r}{where}: {self.equations} equations move "
            f"{si(self.unfused_bytes, 'B')}; {self.ops} compiled ops move "
            f"{si(self.fused_bytes, 'B')}{xla}: {self.saving:.3g}x less)"
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
        where = f", all {self.devices} devices" if self.devices > 1 else ""
        return Report(
            f"Bytes through memory: {self.name}{where}",
            lead=[f"Fusion moves {self.saving:.3g}x fewer bytes."],
            tables=[Table(["moved by", "count", "bytes"], rows, align="lrr")],
        )

    # A NamedTuple takes no base class but itself: `Reported`'s three methods, by hand.
    def _repr_html_(self) -> str:
        return self.report().html()

    def __str__(self) -> str:
        return self.report().text()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the result as a web page (.html), text (.txt) or Markdown (.md)."""
        return self.report().save(path, who="FusionTraffic")


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
        per_device = table.devices  # the compiled ops are one device's share
        xla = table.xla.get("bytes_accessed")
        return FusionTraffic(
            table.name,
            unfused,
            table.bytes * per_device,
            None if xla is None else xla * per_device,
            len(table.equations),
            len(table.ops),
            per_device,
        )

    return traffic
