"""Compiled artefacts: the StableHLO text with locations, and XLA's own cost figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import jax

from jaxtour._ir._hlo import HloModule, parse_hlo
from jaxtour._ir._hlo_cost import HOST_CALLBACK_TARGETS, hlo_op_count
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
    no device arithmetic (their figures are exact) but run Python that is not counted."""

    def __init__(
        self,
        figures: Mapping[str, float] | None = None,
        refused: tuple = (),
        calls: tuple = (),
        host: tuple = (),
    ) -> None:
        super().__init__(figures or {})
        self.refused: tuple[str, ...] = tuple(refused)
        self.calls: tuple[str, ...] = tuple(calls)
        self.host: tuple[str, ...] = tuple(host)


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
    return f"at least {number(value)}" if bound else number(value)


def left_out(figures: Mapping[str, float]) -> str:
    """'' when XLA counted every op (or `figures` is a plain dict); else which library
    calls (`Figures.calls`, named with their targets) it counted nothing of, and which
    host callbacks (`Figures.host`) ran Python that no figure counts.

    Example:
        >>> left_out(Figures({"flops": 8.0}, calls=("qr.0", "eigh.0")))
        'XLA counts no FLOPs, transcendentals or bytes of the library calls qr.0, eigh.0'
        >>> left_out(Figures({"flops": 8.0}, host=("cb.1",)))
        'host callback cb.1: its Python work, and the bytes sent to the host, are not counted'
    """
    calls, host = getattr(figures, "calls", ()), getattr(figures, "host", ())
    said = []
    if calls:
        what = "library calls" if len(calls) > 1 else "library call"
        said.append(
            f"XLA counts no FLOPs, transcendentals or bytes of the {what} "
            f"{', '.join(calls)}"
        )
    if host:
        what = "host callbacks" if len(host) > 1 else "host callback"
        its = "their" if len(host) > 1 else "its"
        said.append(
            f"{what} {', '.join(host)}: {its} Python work, and the bytes sent to the "
            "host, are not counted"
        )
    return "; ".join(said)


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
    so its -1s are taken back out and the figures stay exact.
    """
    if module is None:
        try:
            module = parse_hlo(compiled.as_text() or "")
        except Exception:  # no text on this backend: nothing to name
            module = None
    calls, host = _custom_calls(module)
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
            figure += len(host)  # XLA's -1 for each host callback
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
    return Figures(figures, tuple(refused), calls, host)


def _custom_calls(module: HloModule | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The custom calls in the compiled program that the kit's rules cannot count (a
    LAPACK cholesky, a CPU top_k; not a GPU's cuBLAS GEMM, which both count), of which
    XLA's cost_analysis() counts no FLOPs, transcendentals or bytes; and its host
    callbacks (`HOST_CALLBACK_TARGETS`), which compute nothing on the device."""
    calls: list[str] = []
    host: list[str] = []
    for computation in module.computations.values() if module else ():
        types = {op.name: op.type for op in computation.ops}
        for op in computation.ops:
            if op.opcode != "custom-call":
                continue
            if op.target in HOST_CALLBACK_TARGETS:
                host.append(op.name)
            elif hlo_op_count(op, types).flops is None:
                calls.append(f"{op.name} ({op.target})" if op.target else op.name)
    return tuple(calls), tuple(host)
