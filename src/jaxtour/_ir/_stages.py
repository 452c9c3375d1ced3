"""Compiled artefacts: the StableHLO text with locations, and XLA's own cost figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import jax

from jaxtour._ir._hlo import HloModule, parse_hlo
from jaxtour._ir._hlo_cost import hlo_op_count
from jaxtour._ir._hlo_library import is_host_callback
from jaxtour._number_words import NOT_COUNTED

# The figures XLA counts op by op, and counts nothing of for a library call
NOUNS = {
    "flops": "FLOPs",
    "transcendentals": "transcendentals",
    "bytes_accessed": "bytes accessed",
}


def stablehlo_text(lowered: jax.stages.Lowered) -> str:
    """StableHLO with locations (source lines, op names) when this JAX can print them."""
    try:
        return lowered.as_text(debug_info=True)
    except TypeError:  # a JAX without the debug_info keyword
        return lowered.as_text()


class Figures(dict[str, float]):
    """XLA's figures by key (`cost_summary`), and what they leave out: `refused`, the
    keys XLA gave as -1, its word for "could not count this program"; `calls`, the
    library calls (custom calls the kit's rules cannot count either: a LAPACK
    cholesky, a CPU top_k) of which XLA counts no FLOPs, transcendentals or bytes, so
    that beside one those figures are lower bounds, and a 0 among them unknown;
    `host`, the host callbacks (a `jax.debug.print`, a `jax.pure_callback`), which do
    no device arithmetic (their figures are exact) but run Python that is not counted;
    `branched`, those of them inside a conditional's branch: XLA costs a conditional as
    its costliest branch, so whether it took a callback's -1 FLOPs and -1 bytes off is
    unknown, and FLOPs and bytes accessed are each up to `len(branched)` short."""

    def __init__(
        self,
        figures: Mapping[str, float] | None = None,
        refused: tuple = (),
        calls: tuple = (),
        host: tuple = (),
        branched: tuple = (),
    ) -> None:
        super().__init__(figures or {})
        self.refused: tuple[str, ...] = tuple(refused)
        self.calls: tuple[str, ...] = tuple(calls)
        self.host: tuple[str, ...] = tuple(host)
        self.branched: tuple[str, ...] = tuple(branched)


def figure_text(
    figures: Mapping[str, float],
    key: str,
    number: Callable[[float], str],
    named: bool = False,
) -> str | None:
    """Figure `key` in words, `number(value)`; "at least" that beside a library call
    XLA does not count (`Figures.calls`); "not counted" where XLA gave -1, or 0 beside
    such a call (``FLOPs not counted`` when `named`); None where it gave nothing.

    Example:
        >>> figures = Figures({"flops": 8.0, "transcendentals": 0.0}, calls=("cholesky.0",))
        >>> figure_text(figures, "flops", str), figure_text(figures, "transcendentals", str)
        ('at least 8.0', 'not counted')
    """
    refused = key in getattr(figures, "refused", ())
    if key not in figures and not refused:
        return None
    value = figures.get(key, 0.0)
    bound = key in NOUNS and bool(getattr(figures, "calls", ()))
    # a host callback computes nothing, but the bytes it hands over are not counted
    bound |= key == "bytes_accessed" and bool(getattr(figures, "host", ()))
    if refused or (bound and not value):
        return f"{NOUNS[key]} {NOT_COUNTED}" if named else NOT_COUNTED
    if bound:
        return f"at least {number(value)}"
    # up to one short per host callback in a conditional's branch (`Figures.branched`);
    # a rounded figure may already hold that doubt
    short = len(getattr(figures, "branched", ())) if key == "flops" else 0
    low, high = number(value), number(value + short)
    return low if low == high else f"{low} to {high}"


def left_out(figures: Mapping[str, float]) -> str:
    """'' when XLA counted every op (or `figures` is a plain dict); else which library
    calls (`Figures.calls`, named with their targets) it counted nothing of, and which
    host callbacks (`Figures.host`) ran Python that no figure counts.

    Example:
        >>> left_out(Figures({"flops": 8.0}, calls=("qr.0", "eigh.0")))
        'XLA counts no FLOPs, transcendentals or bytes of the library calls qr.0, eigh.0'
        >>> left_out(Figures({"flops": 8.0}, host=("cb.1",)))
        'host callback cb.1: its Python work, and the bytes sent to the host, are not counted'
        >>> left_out(Figures({"flops": 8.0}, host=[f"cb.{i}" for i in range(512)]))[:40]
        '512 host callbacks (cb.0, cb.1, cb.2, …)'
    """
    calls, host = getattr(figures, "calls", ()), getattr(figures, "host", ())
    branched = getattr(figures, "branched", ())
    said = []
    if calls:
        said.append(
            "XLA counts no FLOPs, transcendentals or bytes of the "
            + _listed(calls, "library call")
        )
    if host:
        its = "their" if len(host) > 1 else "its"
        said.append(
            f"{_listed(host, 'host callback')}: {its} Python work, and the bytes sent "
            "to the host, are not counted"
        )
    if branched:
        said.append(
            f"FLOPs may be up to {len(branched)} short: XLA takes 1 off per host "
            "callback, but costs a conditional as its costliest branch, which may not "
            f"be the one holding the {_listed(branched, 'host callback')}"
        )
    return "; ".join(said)


def _listed(names: tuple[str, ...], what: str, shown: int = 3) -> str:
    """`what` and `names`; past `shown` of them, their count and the first few."""
    if len(names) <= shown:
        return f"{what}{'s' if len(names) > 1 else ''} {', '.join(names)}"
    return f"{len(names)} {what}s ({', '.join(names[:shown])}, …)"


def cost_summary(
    compiled: jax.stages.Compiled, module: HloModule | None = None
) -> Figures:
    """XLA's own figures: flops, transcendentals, bytes_accessed, temp/argument/output bytes.

    Keys a backend does not report are left out (some report no cost analysis at all),
    and so is a figure XLA gives as negative: -1 is its word for "could not count this
    program" (a `top_k`, say), not an amount; `Figures.refused` names it. XLA leaves
    out a count that is zero (a program of only `cos` has no "flops" key): where it
    counted the program (its "bytes accessed" is given), a missing FLOP or
    transcendental count is 0. `Figures.calls` names the library calls XLA counts
    nothing of (read from `module`, the compiled HLO, parsed here when not given):
    `figure_text` says their figures are lower bounds. A host callback
    (`Figures.host`) does no device arithmetic: XLA gives each custom call -1 FLOPs
    and -1 bytes and adds them in (a `jax.debug.print` made 524,288 FLOPs 524,287),
    so its -1s are taken back out and the figures stay exact. Not so for one inside a
    conditional's branch (`Figures.branched`): XLA costs a conditional as its
    costliest branch, and that one's -1 is in the figure only if its branch was the
    costliest, which cost_analysis() does not say; its -1 is left in, and
    `figure_text` gives FLOPs as a range.
    """
    if module is None:
        try:
            module = parse_hlo(compiled.as_text() or "")
        except Exception:  # no text on this backend: nothing to name
            module = None
    calls, host, branched = _custom_calls(module)
    figures, refused = {}, []
    try:
        cost = compiled.cost_analysis()
    except Exception:  # backends may not implement it
        cost = None
    cost = cost[0] if isinstance(cost, list | tuple) and cost else cost
    cost = cost if isinstance(cost, dict) else {}
    counted = float(cost.get("bytes accessed", -1.0)) >= 0
    for key in ("flops", "transcendentals", "bytes accessed"):
        figure = float(cost.get(key, 0.0 if counted else -1.0))
        if key in cost and key != "transcendentals":
            figure += len(host) - len(branched)  # XLA's -1 per host callback
        if figure >= 0:
            figures[key.replace(" ", "_")] = figure
        elif key in cost:
            refused.append(key.replace(" ", "_"))
    try:
        memory = compiled.memory_analysis()
    except Exception:  # backends may not implement it
        memory = None
    for kind in ("temp", "argument", "output"):
        value = getattr(memory, f"{kind}_size_in_bytes", None)
        if value is not None:
            figures[f"{kind}_bytes"] = float(value)
    return Figures(figures, tuple(refused), calls, host, branched)


def _custom_calls(
    module: HloModule | None,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The custom calls in the compiled program that the kit's rules cannot count (a
    LAPACK cholesky, a CPU top_k; not a GPU's cuBLAS GEMM, which both count), of which
    XLA's cost_analysis() counts no FLOPs, transcendentals or bytes; and its host
    callbacks (`is_host_callback`), which compute nothing on the device; and those of
    them inside a conditional's branch (at any depth of calls below it)."""
    calls: list[str] = []
    host: list[str] = []
    branched: list[str] = []
    inside = _in_branches(module) if module else set()
    for computation in module.computations.values() if module else ():
        types = {op.name: op.type for op in computation.ops}
        for op in computation.ops:
            if op.opcode != "custom-call":
                continue
            if is_host_callback(op.target):
                host.append(op.name)
                if computation.name in inside:
                    branched.append(op.name)
            elif hlo_op_count(op, types).flops is None:
                calls.append(f"{op.name} ({op.target})" if op.target else op.name)
    return tuple(calls), tuple(host), tuple(branched)


def _in_branches(module: HloModule) -> set[str]:
    """The computations a conditional's branch runs: the branches and all they call."""
    found: set[str] = set()
    todo = [
        called.computation
        for computation in module.computations.values()
        for op in computation.ops
        for called in op.called
        if op.opcode == "conditional"
    ]
    while todo:
        name = todo.pop()
        if name in found or name not in module.computations:
            continue
        found.add(name)
        todo += [
            c.computation for op in module.computations[name].ops for c in op.called
        ]
    return found
