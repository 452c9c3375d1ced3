"""`grad_memory`: what `grad` keeps from the forward pass; what `jax.checkpoint` trades.

Residual bytes are the arrays `jax.vjp`'s backward function holds (the forward values
the backward pass reads), the inputs themselves left out, read from a trace. FLOPs are
those of `grad(f)`'s jaxpr (what JAX asks for, recomputation included) and of the
compiled program: XLA may merge a recomputed forward pass back into the first one (on
a CPU it does for a small loss checkpointed whole), undoing the trade. XLA's memory
analysis adds the compiled temporary buffers where the backend gives one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax

from jaxtour import _ir
from jaxtour._plot import Plot, figure
from jaxtour._wording import si
from jaxtour.cost._ledger import total
from jaxtour.cost._table import build

DEFAULT = "no checkpoint"
POLICIES = (DEFAULT, "dots_saveable", "nothing_saveable")
NO_MEMORY = (
    "XLA gives no memory_analysis() on {backend}: temporary buffers are not "
    "shown; the residual bytes come from jax.vjp and hold on every backend."
)


class Policy(NamedTuple):
    """One way to differentiate: its residuals, FLOPs and compiled temporary bytes."""

    name: str
    residual_bytes: float
    residuals: int
    flops: float  # the jaxpr's: what JAX asks to compute, recomputation included
    compiled_flops: float  # after XLA, which may merge a recomputation back
    temp_bytes: float | None  # None: the backend gives no memory analysis


@dataclass
class GradMemory:
    """`grad(f)` under each checkpoint policy."""

    name: str
    backend: str
    policies: list[Policy]

    def policy(self, name: str) -> Policy:
        """The figures of one policy, by name ("no checkpoint", "nothing_saveable")."""
        found = [p for p in self.policies if p.name == name]
        if not found:
            raise KeyError(
                f"{name!r} was not measured; measured: "
                f"{', '.join(p.name for p in self.policies)}."
            )
        return found[0]

    def __repr__(self) -> str:
        return str(self)

    def notes(self) -> list[str]:
        """What the numbers mean, and what the backend did not give."""
        notes = []
        if any(p.temp_bytes is None for p in self.policies):
            notes.append(NO_MEMORY.format(backend=self.backend))
        return notes

    def __str__(self) -> str:
        lines = [f"Memory of grad({self.name}) on {self.backend}:"]
        for p in self.policies:
            temp = "-" if p.temp_bytes is None else si(p.temp_bytes, "B")
            lines.append(
                f"  {p.name:<20} residuals {si(p.residual_bytes, 'B'):>9} "
                f"({p.residuals:>2} arrays)  FLOPs {si(p.flops):>8} "
                f"(compiled {si(p.compiled_flops)})  temp {temp}"
            )
        return "\n".join(lines + self.notes())

    def plot(self) -> Plot:
        """Residual bytes (memory) against FLOPs (compute), one point per policy."""
        fig = figure(7.5, 4.5)
        ax = fig.subplots()
        for p in self.policies:
            ax.scatter(p.residual_bytes / 1e6, p.flops / 1e6, s=90, zorder=3)
            ax.annotate(
                p.name,
                (p.residual_bytes / 1e6, p.flops / 1e6),
                fontsize=12,
                textcoords="offset points",
                xytext=(8, 4),
            )
        ax.set_xlabel("residuals kept for the backward pass (MB)", fontsize=12)
        ax.set_ylabel("FLOPs of one grad, jaxpr (millions)", fontsize=12)
        ax.set_title(
            f"jax.checkpoint trades memory for FLOPs: grad({self.name})", fontsize=13
        )
        ax.margins(0.25)
        ax.grid(alpha=0.3)
        return Plot(
            fig, f"memory vs FLOPs of grad({self.name}), {len(self.policies)} policies"
        )


def _policy(f: Callable, name: str) -> Callable:
    if name == DEFAULT:
        return f
    policy = getattr(jax.checkpoint_policies, name, None)
    if policy is None or not callable(policy):
        names = [n for n in dir(jax.checkpoint_policies) if n.endswith("saveable")]
        raise ValueError(
            f"{name!r} is not a policy in jax.checkpoint_policies; use "
            f"{DEFAULT!r} or one of: {', '.join(sorted(names))}."
        )
    return jax.checkpoint(f, policy=policy)


def _temp_bytes(compiled: Any) -> float | None:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # backends may not implement it
        return None
    value = getattr(stats, "temp_size_in_bytes", None)
    return None if value is None else float(value)


def grad_memory(
    f: Callable, *, policies: Sequence[str] = POLICIES
) -> Callable[..., GradMemory]:
    """As `jax.grad(f)`, but reporting its memory and FLOPs under checkpoint policies.

    Args:
        f: a function with a scalar output, differentiated in its first argument.
        policies: "no checkpoint" and names from `jax.checkpoint_policies`.

    Returns:
        A function of `f`'s example arguments returning a `GradMemory`.

    Raises:
        ValueError: a policy name JAX does not know.
    """
    _ir.check_callable(f, "grad_memory")
    for name in policies:
        _policy(f, name)  # unknown names fail now, not after tracing

    def report(*args: Any) -> GradMemory:
        _ir.check_args(args, {}, (), "grad_memory")
        out = jax.eval_shape(f, *args)
        if getattr(out, "shape", None) != ():
            raise TypeError(
                f"grad_memory needs f to return a scalar, as jax.grad "
                f"does; {_ir.function_name(f)} returns "
                f"{_ir.describe(out)}. Reduce it first (e.g. .sum())."
            )
        return GradMemory(
            _ir.function_name(f),
            jax.default_backend(),
            [_measure(f, name, args) for name in policies],
        )

    return report


def residuals(g: Callable, args: tuple) -> list[Any]:
    """The avals of what `jax.vjp(g, *args)`'s backward function holds, inputs left out.

    Traced, not run: the backward function is a pytree whose leaves are the residuals,
    so they are the outputs of a jaxpr returning it; an output that is one of the
    jaxpr's inputs is an argument passed through, and a literal is no buffer.
    """
    jaxpr = jax.make_jaxpr(lambda *a: jax.vjp(g, *a)[1])(*args).jaxpr
    inputs = {id(var) for var in jaxpr.invars}
    return [
        var.aval
        for var in jaxpr.outvars
        if id(var) not in inputs and not _ir.is_literal(var)
    ]


def _measure(f: Callable, name: str, args: tuple) -> Policy:
    g = _policy(f, name)
    kept = residuals(g, args)
    traced = jax.jit(jax.grad(g)).trace(*args)
    compiled = traced.lower().compile()
    table = build(name, traced, compiled)
    flops = total(table.equations)[0]
    return Policy(
        name,
        float(sum(aval.size * aval.dtype.itemsize for aval in kept)),
        len(kept),
        flops,
        table.flops,
        _temp_bytes(compiled),
    )
