"""The cost lens on the MLP's training step: the kit's counts beside XLA's, the roof.

Run: .venv/bin/python benchmarks/cost.py [--batches 8 128 1024] [--repeat 3]
Prints, side by side:
  - this device's measured roof (`device_peaks(refresh=True)`) and how long measuring
    it took, then a cached call;
  - per batch size, `jaxtour.mlp.update`'s FLOPs and bytes by the kit's rules and by
    XLA's `cost_analysis()`, its intensity, its measured time and rate, and the bound;
  - fusion's saving (`fusion_traffic`) on GELU and on the step;
  - `grad_memory` of the loss per checkpoint policy;
  - each call's time, first (a new function: traced and compiled) and again
    (median of --repeat, JAX's caches warm), against the 1 s diagram target;
then a JSON object with the same figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxtour.cost import (
    cost_table,
    device_peaks,
    draw_roofline,
    fusion_traffic,
    grad_memory,
)
from jaxtour.mlp import example_batch, init_params, loss, update

TARGET_S = 1.0  # a diagram or table within a second, micro-benchmarks aside


def call_seconds(call: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """(first call, median of `repeat` later calls) in seconds."""
    start = time.perf_counter()
    call()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def row(cells: list[Any], widths: list[int]) -> str:
    return "  ".join(str(c).rjust(w) for c, w in zip(cells, widths, strict=True))


def step_figures(params: Any, batches: list[int], peaks: Any) -> list[dict]:
    figures = []
    for batch in batches:
        x, y = example_batch(batch)
        roof = draw_roofline(update, peaks=peaks)(params, x, y)
        table = roof.table
        figures.append(
            {
                "batch": batch,
                "kit_flops": table.flops,
                "xla_flops": table.xla.get("flops"),
                "kit_bytes": table.bytes,
                "xla_bytes": table.xla.get("bytes_accessed"),
                "intensity": table.intensity,
                "seconds": roof.seconds,
                "gflops_per_s": roof.flops_per_s / 1e9,
                "of_peak": roof.fraction,
                "bound": roof.bound,
            }
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[8, 128, 1024])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    params = init_params(jax.random.key(0))

    start = time.perf_counter()
    peaks = device_peaks(refresh=True)
    measure_s = time.perf_counter() - start
    cached_s = call_seconds(device_peaks, options.repeat)[1]
    print(f"{peaks} on {jax.devices()[0]}")
    print(f"measured in {measure_s:.2f} s; cached call {cached_s * 1e6:.0f} us\n")

    steps = step_figures(params, options.batches, peaks)
    head = [
        "batch",
        "FLOPs kit",
        "FLOPs XLA",
        "bytes kit",
        "bytes XLA",
        "FLOP/B",
        "ms",
        "GFLOP/s",
        "of peak",
        "bound",
    ]
    widths = [6, 11, 11, 11, 11, 7, 8, 8, 8, 8]
    print(row(head, widths))
    for f in steps:
        xla_flops = "-" if f["xla_flops"] is None else f"{f['xla_flops']:.4g}"
        xla_bytes = "-" if f["xla_bytes"] is None else f"{f['xla_bytes']:.4g}"
        cells = [
            f["batch"],
            f"{f['kit_flops']:.4g}",
            xla_flops,
            f"{f['kit_bytes']:.4g}",
            xla_bytes,
            f"{f['intensity']:.3g}",
            f"{f['seconds'] * 1e3:.3g}",
            f"{f['gflops_per_s']:.3g}",
            f"{100 * f['of_peak']:.0f} %",
            f["bound"],
        ]
        print(row(cells, widths))

    x, y = example_batch(128)
    activations = jnp.ones((128, 512))
    gelu = fusion_traffic(jax.nn.gelu)(activations)
    step = fusion_traffic(update)(params, x, y)
    print(f"\n{gelu}\n{step}\n")
    memory = grad_memory(loss)(params, x, y)
    print(memory, "\n")

    def fresh(f: Callable) -> Callable:
        """A new function object: JAX's caches miss, so it is traced and compiled."""
        return lambda *args: f(*args)

    calls = {
        "cost_table(update)": lambda f: cost_table(f)(params, x, y),
        "draw_roofline(update) + PNG": lambda f: draw_roofline(f, peaks=peaks)(
            params, x, y
        ).png(),
        "fusion_traffic(update)": lambda f: fusion_traffic(f)(params, x, y),
        "grad_memory(loss), 3 policies": lambda f: grad_memory(f)(params, x, y),
    }
    timings = {}
    for name, call in calls.items():
        f = fresh(loss if name.startswith("grad_memory") else update)
        timings[name] = call_seconds(lambda call=call, f=f: call(f), options.repeat)
    print(f"{'call':<32} {'first':>7} {'again':>7}   (target {TARGET_S:.0f} s)")
    for name, (first, again) in timings.items():
        verdict = "ok" if first < TARGET_S else "over"
        print(f"{name:<32} {first:6.3f}s {again:6.3f}s  {verdict}")

    print(
        json.dumps(
            {
                "device": str(jax.devices()[0]),
                "jax": jax.__version__,
                "peaks": {
                    "flops_per_s": peaks.flops_per_s,
                    "bytes_per_s": peaks.bytes_per_s,
                    "measure_s": measure_s,
                    "cached_s": cached_s,
                },
                "steps": steps,
                "fusion": {"gelu": gelu.saving, "update": step.saving},
                "grad_memory": [p._asdict() for p in memory.policies],
                "first_and_again_s": timings,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
