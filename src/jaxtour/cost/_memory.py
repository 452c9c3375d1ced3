"""`grad_memory`: what `grad` keeps from the forward pass; what `jax.checkpoint` trades.

Residual bytes are the arrays `jax.vjp`'s backward function holds (the forward values
the backward pass reads) less the inputs and arrays `f` closes over, read from a trace.
FLOPs are those of `grad(f)`'s jaxpr (what JAX asks for, recomputation included) and of
the compiled program: XLA may merge a recomputed forward pass back into the first one
(on a CPU it does for a small loss checkpointed whole), undoing the trade. XLA's memory
analysis adds the compiled temporary buffers where the backend gives one. With sharded
arguments the residuals and the jaxpr's FLOPs are global (its shapes are), the compiled
FLOPs and temporary bytes one device's: the report labels each.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax

from jaxtour import _ir
from jaxtour._number_words import si
from jaxtour._plot import Plot, figure
from jaxtour._report import Report, Reported, Table
from jaxtour.cost import _notes
from jaxtour.cost._grad_args import (
    bound,
    check_floating,
    check_scalar,
    floating,
    output_of,
    python_scalars,
    shown,
)
from jaxtour.cost._ledger import total
from jaxtour.cost._policies import AS_WRITTEN, DEFAULT, resolve, wrap
from jaxtour.cost._table import build

POLICIES = (DEFAULT, "dots_saveable", "nothing_saveable")
SHARDED = (
    "Sharded over {devices} devices: the residuals and the jaxpr's FLOPs are global "
    "(the jaxpr's shapes are), the compiled FLOPs and temporary bytes one device's; "
    "the two FLOP columns are not comparable."
)
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
    not_counted: tuple[str, ...] = ()  # what both FLOP figures leave out (lower bounds)
    conds: int = 0  # conds: each counts its costliest branch (an upper bound)
    devices: int = 1  # >1: the compiled figures are one device's share of this many


@dataclass
class GradMemory(Reported):
    """`grad(f)` under each checkpoint policy."""

    name: str
    backend: str
    policies: list[Policy]

    def policy(self, name: str) -> Policy:
        """The figures of one policy, by name ("no checkpoint", "nothing_saveable")."""
        found = [
            p
            for p in self.policies
            if p.name == name or (name == DEFAULT and p.name == AS_WRITTEN)
        ]
        if not found:
            raise KeyError(
                f"{name!r} was not measured; measured: "
                f"{', '.join(p.name for p in self.policies)}."
            )
        return found[0]

    def __repr__(self) -> str:
        return (
            f"GradMemory({self.name!r} on {self.backend}: "
            f"{', '.join(p.name for p in self.policies)})"
        )

    def notes(self) -> list[str]:
        """What the numbers mean, and what the backend did not give."""
        notes = []
        if any(p.temp_bytes is None for p in self.policies):
            notes.append(NO_MEMORY.format(backend=self.backend))
        if left := [name for p in self.policies for name in p.not_counted]:
            notes.append(_notes.not_counted(left))
        if any(p.conds for p in self.policies):
            notes.append(_notes.COND)
        if self.devices > 1:
            notes.append(SHARDED.format(devices=self.devices))
        return notes

    @property
    def devices(self) -> int:
        """How many devices the compiled gradient is split over (1: not sharded)."""
        return max((p.devices for p in self.policies), default=1)

    def report(self) -> Report:
        """A row per policy: residuals, FLOPs (jaxpr and compiled), temporary bytes."""
        rows = [
            [
                p.name,
                si(p.residual_bytes, "B"),
                str(p.residuals),
                si(p.flops),
                si(p.compiled_flops),
                "-" if p.temp_bytes is None else si(p.temp_bytes, "B"),
            ]
            for p in self.policies
        ]
        head = ["policy", "residuals", "arrays", "FLOPs", "compiled FLOPs", "temp"]
        if self.devices > 1:  # the jaxpr's shapes are global, the compiled ones a share
            head = ["policy", "residuals (global)", "arrays", "FLOPs (global)"]
            head += ["compiled FLOPs (per device)", "temp (per device)"]
        where = f", {self.devices} devices" if self.devices > 1 else ""
        return Report(
            f"Memory of grad({self.name}) on {self.backend}{where}",
            tables=[Table(head, rows, align="lrrrrr")],
            notes=self.notes(),
        )

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


def _temp_bytes(compiled: Any) -> float | None:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # backends may not implement it
        return None
    value = getattr(stats, "temp_size_in_bytes", None)
    return None if value is None else float(value)


def grad_memory(
    f: Callable,
    *,
    policies: Sequence[Any] = POLICIES,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., GradMemory]:
    """As `jax.grad(f, argnums)`, but reporting its memory and FLOPs under checkpoint
    policies.

    A function that already calls `jax.checkpoint` is measured as written first
    (labelled so), then under each policy wrapped around the whole of it. Figures are
    kept per function, policy and argument types, so a warm call compiles nothing.

    Args:
        f: a function with a scalar output; or a model with one (a callable pytree
            holding arrays: an Equinox module, a `jax.tree_util.Partial`), whose
            arrays are inputs, not differentiated, as `eqx.filter_jit(f)` traces them
            (closed over, XLA could fold the work on its weights away).
        policies: "no checkpoint", names from `jax.checkpoint_policies`, or policy
            objects (`jax.checkpoint_policies.save_only_these_names("h")`).
        argnums: which positional arguments to differentiate, as in `jax.grad`. A
            Python int or bool outside them is bound as it is, as `jax.grad` leaves
            it (`range(n)` works).
        has_aux: `f` returns ``(loss, aux)``, as in `jax.grad`. The figures are the
            loss's gradient's: the FLOPs count aux's operations (traced), the compiled
            program leaves out what only aux needs (not returned).
        holomorphic: as in `jax.grad`: complex inputs and a complex output.
        allow_int: as in `jax.grad`: arguments in `argnums` holding integers only are
            taken (their gradients float0, measured as none).
        static_argnums: arguments held as Python constants, as `jax.jit`'s
            ``static_argnums`` (None, an int or ints, negative from the end).
        static_argnames: the same by name, as in `jax.jit`.

    Returns:
        A function of `f`'s example arguments returning a `GradMemory`. Keyword
        arguments are passed to `f` as they are, as `jax.grad` passes them: neither
        differentiated nor traced (an array is a constant of the compiled program), and
        measured afresh at each call (the warm cache keys on positional arguments).

    Raises:
        ValueError: a policy name JAX does not know, a policy factory not called, or
            a bad `argnums` or static option (out of range, a name `f` lacks).
        TypeError: a policy that is neither a name nor a policy object, an option
            of the wrong type, an argument to differentiate that is no floating-point
            array (integers alone, without `allow_int`), a loss that is not a scalar,
            or a Python `if` or size on a traced value (told as `draw_grad` tells it).
    """
    who = "grad_memory"
    _ir.check_callable(f, who)
    chosen = [resolve(p) for p in policies]  # bad ones fail now, not after tracing
    given = _ir.check_argnums(argnums, who)
    statics = _ir.static_args(f, static_argnums, static_argnames, who)

    def report(*args: Any, **kwargs: Any) -> GradMemory:
        names = _ir.arg_names(f, len(args))
        nums = _ir.resolve_argnums(given, len(args), who, statics.positions(len(args)))
        statics.check_values(args, kwargs, who, names)
        check_floating(args, nums, names, allow_int)
        given_args, told = args, (statics.positions(len(args)), nums)
        fixed = statics.positions(len(args)) | python_scalars(args, nums)
        split_f, args, fixed, nums = _ir.split_model(f, args, fixed, nums)
        loss = _first_output(split_f, _ir.function_name(f)) if has_aux else split_f
        # keyword arguments go to f as they are, never differentiated, as in jax.grad
        keyed = functools.partial(loss, **kwargs) if kwargs else loss
        g, args, nums = bound(keyed, args, fixed, nums)
        check_scalar(output_of(g, args, f, given_args, told), f, has_aux)
        own = _has_checkpoint(g, args)
        h, h_args, h_nums = floating(g, args, nums)
        grad = (h_nums, holomorphic, allow_int)  # jax.grad's options
        return GradMemory(
            _ir.function_name(f),
            jax.default_backend(),
            [_cached(h, name, policy, h_args, grad, own) for name, policy in chosen],
        )

    return report


@functools.lru_cache(maxsize=32)  # the same loss for the same f: a warm call
def _first_output(f: Callable, name: str) -> Callable:
    """`f`'s loss, for an `f` (named `name`) returning ``(loss, aux)`` (`has_aux`)."""

    @functools.wraps(f)
    def loss(*args: Any, **kwargs: Any) -> Any:
        out = f(*args, **kwargs)
        if not (isinstance(out, tuple | list) and len(out) == 2):
            raise TypeError(
                "grad_memory with has_aux=True needs f to return a pair (loss, aux), "
                f"as jax.grad does; {name} returned {shown(out)}."
            )
        return out[0]

    return loss


def _has_checkpoint(g: Callable, args: tuple) -> bool:
    counts = _ir.primitive_counts(jax.make_jaxpr(g)(*args).jaxpr)
    return any(p == "checkpoint" or p.startswith("remat") for p in counts)


_MEASURED: dict = {}  # (g, policy, argnums, argument types) -> Policy


def _cached(
    g: Callable, name: str, policy: Any, args: tuple, grad: tuple, own: bool
) -> Policy:
    """`_measure`, kept per function, policy, jax.grad's options (`grad`: argnums,
    holomorphic, allow_int) and argument types."""
    label = AS_WRITTEN if own and policy is None else name
    leaves, tree = jax.tree.flatten(args)
    types = tuple((jax.typeof(x), getattr(x, "weak_type", False)) for x in leaves)
    key = (g, policy, grad, tree, types)
    try:
        hit = _MEASURED.get(key)
    except TypeError:  # something unhashable: measure every time
        return _measure(g, label, policy, args, grad)
    if hit is None:
        hit = _MEASURED[key] = _measure(g, label, policy, args, grad)
        if len(_MEASURED) > 64:
            _MEASURED.pop(next(iter(_MEASURED)))
    return hit


def residuals(g: Callable, args: tuple, argnums: tuple[int, ...] = ()) -> list[Any]:
    """The avals of what `jax.vjp(g, *args)`'s backward function holds, inputs and
    constants left out (only `argnums` differentiated, as `jax.grad` does; all by default).

    Traced, not run: the backward function is a pytree whose leaves are the residuals,
    the outputs of a jaxpr returning it. One that is the jaxpr's input (an argument) or
    constant (an array `g` closes over) lives anyway, as `print_saved_residuals` says;
    a literal is no buffer.
    """
    nums = argnums or tuple(range(len(args)))

    def backward(*a: Any) -> Any:
        def of(*diff: Any) -> Any:
            full = list(a)
            for i, d in zip(nums, diff, strict=True):
                full[i] = d
            return g(*full)

        return jax.vjp(of, *(a[i] for i in nums))[1]

    jaxpr = jax.make_jaxpr(backward)(*args).jaxpr
    inputs = {id(var) for var in [*jaxpr.invars, *jaxpr.constvars]}
    return [
        var.aval
        for var in jaxpr.outvars
        if id(var) not in inputs and not _ir.is_literal(var)
    ]


def _measure(f: Callable, name: str, policy: Any, args: tuple, grad: tuple) -> Policy:
    nums, holomorphic, allow_int = grad
    g = wrap(f, policy)
    kept = residuals(g, args, nums)
    differentiated = jax.grad(g, nums, holomorphic=holomorphic, allow_int=allow_int)
    traced = jax.jit(differentiated).trace(*args)
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
        tuple(table.not_counted),
        table.conds,
        table.devices,
    )
