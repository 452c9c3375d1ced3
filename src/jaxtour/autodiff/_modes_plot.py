"""The mode-cost figure: where jacfwd and jacrev win, and their cost ratio against n/m."""

from __future__ import annotations

import textwrap
from typing import Any

import numpy as np

FWD, REV, TIE = "#2563eb", "#dc2626", "#6b7280"
UNKNOWN = "#ffffff"  # hollow: no FLOPs measured, no winner


def plot_mode_costs(costs: Any, fig: Any = None) -> Any:
    """Two panels for `ModeCosts`: the winner over (n, m), and cost ratio vs n/m."""
    import matplotlib.pyplot as plt

    fig = fig or plt.figure(figsize=(11, 4.8))
    left, right = fig.subplots(1, 2)
    _winner_map(costs, left)
    _ratios(costs, right)
    fig.suptitle("\n".join(textwrap.wrap(costs.rule, 110)), fontsize=11)
    fig.tight_layout()
    return fig


def _winner_map(costs: Any, ax: Any) -> None:
    sizes = np.array(costs.sizes, dtype=float)
    top = sizes.max() * 2
    low = sizes.min() / 2
    ax.fill_between([low, top], [low, top], [top, top], color=FWD, alpha=0.08)
    ax.fill_between([low, top], [low, low], [low, top], color=REV, alpha=0.08)
    ax.plot([low, top], [low, top], color="#555555", lw=1, ls="--")
    colours = {"jacfwd": FWD, "jacrev": REV, "tie": TIE, "unknown": UNKNOWN}
    winners = {size: costs.winner(*size) for size in costs.sizes}
    for (n, m), winner in winners.items():
        ax.scatter(n, m, s=90, color=colours[winner], edgecolors=TIE, zorder=3)
    labels = [
        ("jacfwd", "jacfwd cheaper (FLOPs)"),
        ("jacrev", "jacrev cheaper (FLOPs)"),
        ("tie", "equal (within 5%) (FLOPs)"),
        ("unknown", _unknown_label(costs.records)),
    ]
    for name, label in labels:
        if name != "unknown" or "unknown" in winners.values():
            ax.scatter([], [], color=colours[name], edgecolors=TIE, label=label)
    ax.text(
        0.03, 0.97, "n < m: forward mode", color=FWD, va="top", transform=ax.transAxes
    )
    ax.text(
        0.97, 0.03, "n > m: reverse mode", color=REV, ha="right", transform=ax.transAxes
    )
    ax.set(
        xscale="log",
        yscale="log",
        xlim=(low, top),
        ylim=(low, top),
        xlabel="n (inputs)",
        ylabel="m (outputs)",
        title="which mode is cheaper",
    )
    ax.legend(
        loc="center left", bbox_to_anchor=(0.01, 0.75), fontsize=9, framealpha=0.9
    )


def _unknown_label(records: list) -> str:
    """Why no winner is named: no FLOP count, a loop counted once whose trip count
    depends on the data, or a library call XLA counts nothing of (as
    `ModeCosts.winner` decides)."""
    why = []
    if any(r.flops is None for r in records):
        why.append("no FLOPs measured")
    if any(r.uncounted for r in records):
        why.append("a loop of data-dependent trip count")
    if any(r.calls for r in records):
        why.append("a library call XLA does not count")
    return "unknown: " + " or ".join(why)


def _ratios(costs: Any, ax: Any) -> None:
    sizes = costs.sizes
    shape = np.array([n / m for n, m in sizes])
    for by, marker, label in (
        ("flops", "o", "FLOPs (cost_analysis)"),
        ("seconds", "s", "wall time"),
    ):
        ratio = np.array(
            [
                costs.cost(n, m, "jacfwd", by) / costs.cost(n, m, "jacrev", by)
                for n, m in sizes
            ]
        )
        ok = np.isfinite(ratio) & (ratio > 0)
        face = "#111111" if by == "flops" else "none"
        ax.scatter(
            shape[ok],
            ratio[ok],
            marker=marker,
            facecolors=face,
            edgecolors="#111111",
            label=label,
            zorder=3,
        )
    span = np.array([shape.min() / 2, shape.max() * 2])
    ax.plot(span, span, color="#888888", lw=1, ls=":", label="ratio = n/m")
    ax.axhline(1, color="#555555", lw=1, ls="--")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="n / m (Jacobian width / height)",
        ylabel="cost of jacfwd / cost of jacrev",
        title="forward over reverse",
    )
    ax.text(
        0.02, 0.97, "above 1: jacrev wins", transform=ax.transAxes, color=REV, va="top"
    )
    ax.text(
        0.98,
        0.03,
        "below 1: jacfwd wins",
        transform=ax.transAxes,
        color=FWD,
        ha="right",
    )
    ax.legend(loc="lower left", bbox_to_anchor=(0, 0.08), frameon=False, fontsize=9)
