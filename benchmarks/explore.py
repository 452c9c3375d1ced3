"""The explorer's re-render time: the MLP training step, one control changed at a time.

Run: .venv/bin/python benchmarks/explore.py [--repeat 5]
It opens `jaxtour.explore()` on the gallery's "MLP step" (jaxtour.mlp.update, 784-512-256-10,
batch 8) with `jit` on, shows the jaxpr graph and the compiled HLO once each (the warm-up:
JAX traces and compiles, the renderer starts), then times each change of an option the
view reads (direction, depth), every one a new combination, so drawn, not taken from
the panel's cache; the render cache is cleared before each change. It prints one line
per view, then a JSON object with the figures. Target: every change under 1 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from jaxtour import _render, explore

TARGET_S = 1.0
VIEWS = ("jaxpr graph", "compiled HLO")
# (control, value) changes; each leaves a combination the panel has not drawn yet.
CHANGES = (("rankdir", "LR"), ("depth", 1), ("rankdir", "TB"), ("depth", 3))


def time_view(panel, view: str, first: float | None = None) -> dict:
    """First show of `view` (warm-up; `first` if it is already shown), then each change
    in CHANGES, timed."""
    if first is None:
        start = time.perf_counter()
        panel.view.value = view
        first = time.perf_counter() - start
    changes = []
    for control, value in CHANGES:
        if getattr(panel, control).disabled:  # an option this view does not read
            continue
        _render._render_cached.cache_clear()
        renders = panel.renders
        start = time.perf_counter()
        getattr(panel, control).value = value
        changes.append(time.perf_counter() - start)
        if panel.renders != renders + 1:
            raise RuntimeError(
                f"{control}={value!r} did not redraw: the figure would be wrong"
            )
    panel.rankdir.value, panel.depth.value = "TB", 2  # back to the defaults
    return {
        "first_s": first,
        "median_s": statistics.median(changes),
        "max_s": max(changes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--repeat", type=int, default=5, help="fresh panels, medians (5)"
    )
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {view: [] for view in VIEWS}
    for _ in range(args.repeat):
        panel = explore()
        start = (
            time.perf_counter()
        )  # the panel opens on the jaxpr graph: its first show
        panel.example.value = "MLP step"
        panel.jit.value = True
        opened = time.perf_counter() - start
        for view in VIEWS:
            runs[view].append(
                time_view(panel, view, opened if view == VIEWS[0] else None)
            )
    result = {
        "renderer": _render.renderer("svg"),
        "repeat": args.repeat,
        "target_s": TARGET_S,
    }
    for view, rows in runs.items():
        worst = max(r["max_s"] for r in rows)
        figures = {
            "first_s": rows[0]["first_s"],
            "median_s": statistics.median(r["median_s"] for r in rows),
            "max_s": worst,
        }
        result[view] = figures
        verdict = "meets" if worst < TARGET_S else "MISSES"
        print(
            f"{view:<13} first show {figures['first_s']:.2f} s; a change: median "
            f"{figures['median_s']:.3f} s, worst {worst:.3f} s: {verdict} the {TARGET_S} s "
            "target"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
