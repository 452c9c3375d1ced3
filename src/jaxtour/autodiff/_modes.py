"""Forward vs reverse mode: what `jax.jacfwd` and `jax.jacrev` cost for f: Rⁿ → Rᵐ."""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import _ir, paths
from jaxtour._number_words import plural
from jaxtour._random import drawn_flat
from jaxtour._report import Report, Reported, Table

RULE = (
    "jacfwd pushes one tangent per input (n JVPs), jacrev pulls one cotangent per output "
    "(m VJPs): forward mode wins when n < m, reverse mode when n > m, as for a loss (m = 1)."
)
MODES = {"jacfwd": jax.jacfwd, "jacrev": jax.jacrev}
UNKNOWN = "unknown"  # the winner where a cost was not measured
NO_FLOPS = (
    "unknown: XLA's cost_analysis() gave no FLOP count on this backend, so no winner "
    "is named; the wall times are measured all the same."
)
LOOPS = (
    "FLOPs count every loop iteration: XLA's cost_analysis() counts a loop body once, "
    "and the kit adds the other iterations, as the unrolled loop would count them."
)
UNCOUNTED = (
    "unknown: a loop whose trip count depends on the data is counted once (its body "
    "runs an unknown number of times), so no winner is named where one runs."
)
CALLS = (
    "unknown: a library call XLA counts no FLOPs of (a LAPACK cholesky, a CPU top_k) "
    "makes a mode's FLOPs a lower bound, so no winner is named where one runs; the "
    "wall times are measured all the same."
)


def dense_family(n: int, m: int, seed: int = 0) -> Callable:
    """f(x) = tanh(A sin x) with a fixed random A of shape (m, n): one member per (n, m)."""
    a = drawn_flat(jax.random.normal, jax.random.key(seed), (m, n)) / np.sqrt(n)
    return lambda x: jnp.tanh(a @ jnp.sin(x))


def default_sizes() -> list[tuple[int, int]]:
    """A grid of (n, m); under JAXTOUR_QUICK=1 a sweep of n (m = 16) and one of m (n = 16)."""
    if paths.quick():
        return [(2, 16), (16, 16), (128, 16), (16, 2), (16, 128)]
    axis = (2, 8, 32, 128, 512)
    return [(n, m) for n in axis for m in axis]


@dataclass(frozen=True)
class ModeCost:
    """One Jacobian: its shape (m, n), the mode, best wall time, and its FLOPs (XLA's
    count, every loop iteration included: see `loop_flops`).

    `loops` is how many loops the compiled program runs; `uncounted`, how many of them
    have a trip count that depends on the data (their body is in `flops` once);
    `calls`, the library calls XLA counts no FLOPs of (`flops` is then a lower bound).
    """

    n: int
    m: int
    mode: str
    seconds: float
    flops: float | None
    loops: int = 0
    uncounted: int = 0
    calls: tuple[str, ...] = ()


@dataclass
class ModeCosts(Reported):
    """Measured costs of `jacfwd` and `jacrev` over a sweep of (n, m)."""

    records: list[ModeCost] = field(default_factory=list)
    rule: str = RULE

    def cost(self, n: int, m: int, mode: str, by: str = "flops") -> float:
        """The FLOPs (or seconds, with ``by="seconds"``) one mode took at (n, m)."""
        for r in self.records:
            if (r.n, r.m, r.mode) == (n, m, mode):
                value = r.flops if by == "flops" else r.seconds
                return float("nan") if value is None else value
        raise KeyError(f"no measurement for n={n}, m={m}, mode={mode!r}")

    def winner(self, n: int, m: int, by: str = "flops", tie: float = 0.05) -> str:
        """ "jacfwd" or "jacrev", the cheaper mode at (n, m); "tie" within `tie` (5%);
        "unknown" where either cost was not measured (a backend without FLOPs), counts
        a loop once whose trip count depends on the data, or leaves out a library call."""
        fwd, rev = self.cost(n, m, "jacfwd", by), self.cost(n, m, "jacrev", by)
        partial = by == "flops" and any(
            r.uncounted or r.calls for r in self.records if (r.n, r.m) == (n, m)
        )
        if partial or not (np.isfinite(fwd) and np.isfinite(rev)):
            return UNKNOWN
        if abs(fwd - rev) <= tie * max(fwd, rev):
            return "tie"
        return "jacfwd" if fwd < rev else "jacrev"

    @property
    def sizes(self) -> list[tuple[int, int]]:
        return list(dict.fromkeys((r.n, r.m) for r in self.records))

    def report(self) -> Report:
        """A row per (n, m): both modes' FLOPs and best times, and the winner by FLOPs
        ("not measured" and "unknown" where XLA gave no FLOPs, and a note says so)."""
        rows = []
        for n, m in self.sizes:
            f = [self.cost(n, m, k) for k in MODES]
            t = [self.cost(n, m, k, "seconds") * 1e6 for k in MODES]
            flops = (f"{v:.4g}" if np.isfinite(v) else "not measured" for v in f)
            times = (f"{v:.1f}" for v in t)
            rows.append([str(n), str(m), *flops, *times, self.winner(n, m)])
        head = ["n", "m", "jacfwd FLOPs", "jacrev FLOPs", "fwd µs", "rev µs", "winner"]
        return Report(
            f"jacfwd vs jacrev: {plural(len(self.sizes), 'size')}",
            tables=[Table(head, rows, align="rrrrrrl")],
            notes=[self.rule, *self._notes()],
        )

    def _notes(self) -> list[str]:
        """What the FLOPs leave out or add: no count, loops counted, loops not."""
        notes = []
        if any(r.flops is None for r in self.records):
            notes.append(NO_FLOPS)
        if any(r.uncounted for r in self.records):
            notes.append(UNCOUNTED)
        elif any(r.loops for r in self.records):
            notes.append(LOOPS)
        if any(r.calls for r in self.records):
            notes.append(CALLS)
        return notes

    def __repr__(self) -> str:
        return (
            f"ModeCosts({plural(len(self.sizes), 'size')}, "
            f"{plural(len(self.records), 'Jacobian')})"
        )

    def plot(self, fig: Any = None) -> Any:
        """Where each mode wins, and the cost ratio against n/m; returns the Figure."""
        from jaxtour.autodiff._modes_plot import plot_mode_costs

        return plot_mode_costs(self, fig)


def mode_costs(
    f_family: Callable[[int, int], Callable] = dense_family,
    sizes: Iterable[tuple[int, int]] | None = None,
    repeats: int | None = None,
) -> ModeCosts:
    """Measure `jax.jacfwd` and `jax.jacrev` of ``f_family(n, m)`` for each (n, m).

    Each Jacobian is jitted and compiled once; its FLOPs come from XLA's
    ``cost_analysis()``, with every loop iteration counted (`loop_flops`), and its
    time is the best of `repeats` runs.

    Args:
        f_family: ``f_family(n, m)`` returns a function from f32[n] to f32[m] (or to
            a scalar f32[] for m = 1, as a loss is; `jax.jacrev` takes both); or a
            model doing so (a callable pytree holding arrays: an Equinox module, a
            `jax.tree_util.Partial`), whose arrays are inputs of the Jacobian, not
            differentiated, as `eqx.filter_jit` traces them (closed over, XLA could
            fold the work on its weights away).
        sizes: the (n, m) pairs, at least one; `default_sizes()` when None.
        repeats: timed runs per Jacobian (default 5, 2 under JAXTOUR_QUICK=1).

    Returns:
        `ModeCosts`, with `.winner(n, m)`, `.plot()` and the rule as `.rule`.

    Raises:
        TypeError: a member of the family does not map f32[n] to f32[m].
        ValueError: `sizes` is empty or holds something other than (n, m) pairs of
            positive ints, or `repeats` is not a positive int.

    Example:
        >>> costs = mode_costs(sizes=[(64, 2), (2, 64)], repeats=1)
        >>> costs.winner(64, 2), costs.winner(2, 64)
        ('jacrev', 'jacfwd')
    """
    _ir.check_callable(f_family, "mode_costs")
    sizes = default_sizes() if sizes is None else _checked_sizes(sizes)
    if repeats is None:
        repeats = 2 if paths.quick() else 5
    elif not _positive_int(repeats):
        raise ValueError(
            "mode_costs: `repeats` must be a positive int (the timed runs per "
            f"Jacobian), or None for the default; got {repeats!r}."
        )
    costs = ModeCosts()
    for n, m in sizes:
        f, x = f_family(n, m), jnp.linspace(-1.0, 1.0, n, dtype=jnp.float32)
        _check_member(f, x, n, m)
        # a model's arrays are inputs, as eqx.filter_jit traces them: never folded
        g, args, _, (num,) = _ir.split_model(f, (x,), frozenset(), (0,))
        for mode, jac in MODES.items():
            traced = jax.jit(jac(g, argnums=num)).trace(*args)
            compiled = traced.lower().compile()
            seconds = _best_time(compiled, args, repeats)
            costs.records.append(
                ModeCost(n, m, mode, seconds, *loop_flops(traced, compiled))
            )
    return costs


def _positive_int(value: Any) -> bool:
    """An int above 0 (NumPy's too), never a bool or a float."""
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and int(value) > 0
    )


def _checked_sizes(sizes: Any) -> list[tuple[int, int]]:
    """`sizes` as a list of (n, m) pairs of positive ints, or an error naming the
    first that is not one."""
    pairs = list(sizes) if isinstance(sizes, Iterable) else [sizes]
    if not pairs:
        raise ValueError(
            "mode_costs: `sizes` is empty, so there is nothing to measure. Give the "
            "(n, m) pairs to compare, e.g. sizes=[(64, 1), (1, 64)], or leave it out "
            "for the default grid."
        )
    one = len(pairs) == 2 and all(_positive_int(k) for k in pairs)
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, tuple | list) and len(pair) == 2) or not all(
            _positive_int(k) for k in pair
        ):
            hint = (
                f" (one pair goes in a list: sizes=[{tuple(pairs)!r}])" if one else ""
            )
            raise ValueError(
                "mode_costs: `sizes` must hold (n, m) pairs of positive ints, n inputs "
                f"and m outputs, e.g. sizes=[(64, 1), (1, 64)]; item {i} is {pair!r}"
                f"{hint}."
            )
    return [(int(n), int(m)) for n, m in pairs]


def _check_member(f: Callable[..., Any], x: Any, n: int, m: int) -> None:
    out = jax.eval_shape(f, x)
    shapes = [(m,), ()] if m == 1 else [(m,)]  # a scalar is m = 1, as a loss
    if not hasattr(out, "shape") or tuple(out.shape) not in shapes:
        got = _ir.type_str(out) if hasattr(out, "shape") else type(out).__name__
        to = f"f32[{m}]" + (" or a scalar f32[]" if m == 1 else "")
        raise TypeError(
            f"mode_costs: f_family({n}, {m}) must return a function from "
            f"f32[{n}] to {to}; it returned {got}."
        )


def flops(compiled: Any) -> float | None:
    """XLA's FLOP estimate for a compiled function: 0 where XLA counted the program and
    found none (it leaves the key out: a program of only `cos`), None where the backend
    gives no cost analysis or XLA could not count it (-1)."""
    return _ir.cost_summary(compiled).get("flops")


def loop_flops(
    traced: Any, compiled: Any
) -> tuple[float | None, int, int, tuple[str, ...]]:
    """(FLOPs, loops, loops of unknown trip count, library calls): XLA's `flops`
    figure, which counts each loop body once, plus the other iterations of each loop by
    the kit's count of the compiled ops (`_ir.hlo_counts`, as `jaxtour.cost`'s ledger
    counts): the figure of the unrolled loop. A loop whose trip count depends on the
    data stays counted once; the library calls XLA counts no FLOPs of are named
    (`_ir.cost_summary`'s `calls`)."""
    module = _ir.parse_hlo(compiled.as_text())
    summary = _ir.cost_summary(compiled, module)
    counted, calls = summary.get("flops"), summary.calls
    loops = _ir.hlo_trips(module, _ir.unwrap_jit(traced.jaxpr).jaxpr)
    uncounted = sum(loop.trips is None for loop in loops.values())
    if counted is None or not loops:
        return counted, len(loops), uncounted, calls
    ones = {name: loop._replace(trips=1) for name, loop in loops.items()}
    extra = _kit_flops(module, loops) - _kit_flops(module, ones)
    return counted + extra, len(loops), uncounted, calls


def _kit_flops(module: Any, loops: dict) -> float:
    return float(sum(c.flops or 0.0 for _, c in _ir.hlo_counts(module, loops)))


def _best_time(compiled: Any, args: tuple, repeats: int) -> float:
    compiled(*args).block_until_ready()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        compiled(*args).block_until_ready()
        best = min(best, time.perf_counter() - start)
    return best
