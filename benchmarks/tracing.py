"""The tracing lens, timed beside the JAX call it explains, on the MLP training step.

Run: .venv/bin/python benchmarks/tracing.py [--batch 128] [--repeat 20]
Pairs side by side (cold: after `jax.clear_caches()`), on `jaxtour.mlp.update`
(784-512-256-10, momentum) or its loss's gradient, with a random batch:
- a warm call: `jax.jit(update)` against `explain_retraces(update)` (a cache hit: the
  signature recorded, the globals fingerprinted, the jax.monitoring listener set);
- a first call: `jax.jit` (trace, compile, run) against `step_through` (trace, then one
  primitive at a time, each compiled on first use), cold and warm, and the step
  picture drawn to SVG;
- a NaN search on `grad(loss)`: a fresh `jit(grad)` under `jax_debug_nans` (which
  re-runs a failing jitted function op by op) against `find_nans`, on a clean batch
  (every equation checked) and on one with a NaN pixel.
Then a JSON object with the same figures. Target: a warm explained call within 2 ms of
the plain one; `step_through` and `find_nans` within 10x the first `jax.jit` call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp

from jaxtour import mlp
from jaxtour.tracing import explain_retraces, find_nans, step_through


def _seconds(thunk, repeat: int = 1, cold: bool = False) -> float:
    """The median of `repeat` timed calls (each blocked until its result is ready);
    `cold` clears JAX's caches first (compiled functions and single primitives)."""
    times = []
    for _ in range(repeat):
        if cold:
            jax.clear_caches()
        start = time.perf_counter()
        jax.block_until_ready(thunk())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def warm_calls(args: tuple, repeat: int) -> dict[str, float]:
    plain, explained = jax.jit(mlp.update), explain_retraces(mlp.update)
    plain(*args), explained(*args)  # both traced and compiled once
    return {
        "jit_warm_s": _seconds(lambda: plain(*args), repeat),
        "explain_retraces_warm_s": _seconds(lambda: explained(*args), repeat),
    }


def first_calls(args: tuple) -> dict[str, float]:
    """Cold: trace and compile (`jax.jit`) against trace and one primitive at a time,
    each primitive compiled on its first use (`step_through`); then both warm."""
    jitted, steps = jax.jit(mlp.update), []
    run = lambda: steps.append(step_through(mlp.update)(*args))
    out = {
        "jit_first_s": _seconds(lambda: jitted(*args), cold=True),
        "step_through_first_s": _seconds(run, cold=True),
        "step_through_warm_s": _seconds(run, 3),
    }
    out["steps"] = len(steps[0])
    out["step_picture_svg_s"] = _seconds(lambda: steps[0].diagram().svg())
    return out


def nan_search(params, x, y) -> dict[str, float]:
    """Both searches on a clean batch (every equation checked, nothing found) and on one
    with a NaN pixel (found at once: the first matmul already makes NaNs)."""
    grad = jax.grad(mlp.loss)
    out, reports = {}, []
    for name, batch in [("clean", x), ("nan_pixel", x.at[0, 0].set(jnp.nan))]:
        out[f"jax_debug_nans_{name}_s"] = _seconds(
            lambda b=batch: _debug_nans(grad, params, b, y), cold=True
        )
        out[f"find_nans_{name}_s"] = _seconds(
            lambda b=batch: reports.append(find_nans(grad)(params, b, y)), cold=True
        )
    clean, bad = reports
    if clean.found or not bad.found:
        raise AssertionError(
            f"find_nans: {clean!r} on the clean batch, {bad!r} on the bad"
        )
    out["gradient_steps"], out["found_at_step"] = len(clean.steps), bad.step.index
    return out


def _debug_nans(grad, params, x, y) -> int:
    """A fresh jit(grad) under `jax_debug_nans`: 1 if it raised at a NaN, else 0."""
    jax.config.update("jax_debug_nans", True)
    try:
        jax.block_until_ready(jax.jit(lambda *a: grad(*a))(params, x, y))
        return 0
    except FloatingPointError:
        return 1
    finally:
        jax.config.update("jax_debug_nans", False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=20)
    opts = parser.parse_args()
    params = mlp.init_params(jax.random.key(0))
    x, y = mlp.example_batch(opts.batch)
    velocity = jax.tree.map(jnp.zeros_like, params)
    args = (params, x, y, velocity)
    warm, first = warm_calls(args, opts.repeat), first_calls(args)
    nans = nan_search(params, x, y)
    ms = lambda s: f"{s * 1e3:9.2f} ms"
    print(
        f"MLP update step, batch {opts.batch}, JAX {jax.__version__}, "
        f"{jax.devices()[0].platform}"
    )
    print(f"{'':24}{'JAX':>14}{'jaxtour':>14}{'ratio':>9}")
    for label, a, b in [
        ("warm call", warm["jit_warm_s"], warm["explain_retraces_warm_s"]),
        ("first call, cold", first["jit_first_s"], first["step_through_first_s"]),
        ("again, warm", warm["jit_warm_s"], first["step_through_warm_s"]),
        ("NaN search, none", nans["jax_debug_nans_clean_s"], nans["find_nans_clean_s"]),
        (
            "NaN search, NaN pixel",
            nans["jax_debug_nans_nan_pixel_s"],
            nans["find_nans_nan_pixel_s"],
        ),
    ]:
        print(f"{label:<24}{ms(a):>14}{ms(b):>14}{b / a:8.2f}x")
    print(
        f"step_through ran {first['steps']} equations; its picture took "
        f"{ms(first['step_picture_svg_s']).strip()} to SVG; find_nans stopped at "
        f"step {nans['found_at_step']} of the gradient's {nans['gradient_steps']} "
        "(the first matmul already makes NaNs)"
    )
    print(json.dumps({**warm, **first, **nans}))


if __name__ == "__main__":
    main()
