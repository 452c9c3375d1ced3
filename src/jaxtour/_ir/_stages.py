"""Compiled artefacts: the StableHLO text with locations, and XLA's own cost figures."""

from __future__ import annotations

import jax


def stablehlo_text(lowered: jax.stages.Lowered) -> str:
    """StableHLO with locations (source lines, op names) when this JAX can print them."""
    try:
        return lowered.as_text(debug_info=True)
    except TypeError:  # a JAX without the debug_info keyword
        return lowered.as_text()


def cost_summary(compiled: jax.stages.Compiled) -> dict[str, float]:
    """XLA's own figures: flops, transcendentals, bytes_accessed, temp/argument/output bytes.

    Keys a backend does not report are left out (some report no cost analysis at all),
    and so is a figure XLA gives as negative: -1 is its word for "could not count this
    program" (a `top_k`, say), not an amount. XLA leaves out a count that is zero (a
    program of only `cos` has no "flops" key): where it counted the program (its
    "bytes accessed" is given), a missing FLOP or transcendental count is 0.
    """
    figures: dict[str, float] = {}
    try:
        cost = compiled.cost_analysis()
    except Exception:  # backends may not implement it
        cost = None
    cost = cost[0] if isinstance(cost, list | tuple) and cost else cost
    cost = cost if isinstance(cost, dict) else {}
    counted = float(cost.get("bytes accessed", -1.0)) >= 0
    for key in ("flops", "transcendentals", "bytes accessed"):
        figure = float(cost.get(key, 0.0 if counted else -1.0))
        if figure >= 0:
            figures[key.replace(" ", "_")] = figure
    try:
        memory = compiled.memory_analysis()
    except Exception:  # backends may not implement it
        memory = None
    for kind in ("temp", "argument", "output"):
        value = getattr(memory, f"{kind}_size_in_bytes", None)
        if value is not None:
            figures[f"{kind}_bytes"] = float(value)
    return figures
