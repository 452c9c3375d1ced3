"""The speed ladder: one network, one data set, five ways to train it, timed honestly.

NumPy float64 -> NumPy float32 separates the effect of the number format; JAX without
`jit` -> `jit(update)` in a Python loop -> `train_epoch` (one compiled scan per epoch)
separates the effect of the compiler. A control times the step's eight matmuls alone,
with the same shapes, in NumPy float32 (BLAS) and in jitted JAX (XLA's dot): it says
how much of a gap is the matrix-multiply library and how much the rest of the step
(elementwise work, which XLA fuses). Variants and controls run interleaved, round after
round, from the same weights over the same batches; each figure is a median over rounds,
with the fastest and slowest round kept as its spread.
"""

from __future__ import annotations

import itertools
import os
import statistics
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np

from jaxtour.data import Mnist, load_mnist
from jaxtour.mlp._ladder_runners import _RUNNERS, _MatmulControl, _Runner, _seconds
from jaxtour.mlp._model import SIZES, check_labels
from jaxtour.mlp._train import batch_indices

VARIANTS = ("numpy-f64", "numpy-f32", "jax-eager", "jax-jit-loop", "jaxtour-train")
#: The one-matmul control: one step's matmuls alone, NumPy float32 against jitted JAX.
CONTROLS = ("matmuls-numpy-f32", "matmuls-jax")
FULL_TRAIN_SIZE = 60_000


def matmul_flops(
    sizes: tuple[int, ...] = SIZES, batch_size: int = 128, steps: int = 1
) -> int:
    """The training steps' true matmul FLOPs: forward, weight gradients, and input
    gradients of every layer but the first (nothing needs d(loss)/d(pixels))."""
    pairs = list(itertools.pairwise(sizes))
    macs = 3 * sum(i * o for i, o in pairs) - pairs[0][0] * pairs[0][1]
    return 2 * macs * batch_size * steps


def matmul_rate(n: int = 2048, repeat: int = 5) -> float:
    """FLOP/s of a jitted f32[n, n] @ f32[n, n] on the default device (best of `repeat`)."""
    a = jr.normal(jr.key(1), (n, n), jnp.float32)
    matmul = jax.jit(jnp.matmul)
    matmul(a, a).block_until_ready()
    best = min(
        _seconds(lambda: matmul(a, a).block_until_ready()) for _ in range(repeat)
    )
    return 2 * n**3 / best


def run_ladder(
    data: Mnist | None = None,
    *,
    rounds: int = 3,
    train_size: int | None = None,
    eager_steps: int = 40,
    batch_size: int = 128,
    seed: int = 0,
    variants: tuple[str, ...] = VARIANTS,
    control: bool = True,
    rate_repeat: int = 5,
    log: Callable[[str], None] | None = print,
) -> dict:
    """Time one training epoch of each variant; return the figures as a dict.

    Args:
        data: MNIST; None loads it.
        rounds: each variant runs once per round; figures are medians over rounds.
        train_size: train on the first this-many images (a smoke test); seconds are
            scaled to a full 60,000-image epoch either way.
        eager_steps: JAX without `jit` is slow; time this many of its steps and scale.
        batch_size, seed: as in `train`.
        control: also time the step's matmuls alone (`CONTROLS`), NumPy f32 and JAX.
        rate_repeat: the matmul rate is the best of this many 2048² products, timed
            before and after the rounds (each 17 GFLOP: fewer for a smoke test).
        log: called with one line per measurement (None: silent).

    Returns:
        ``epoch_s`` (seconds per full epoch; the controls' rows too), ``spread_s``
        ([fastest, median, slowest] round of each), ``ratio_vs_numpy_f64``,
        ``matmul_fraction`` per variant, ``matmul_gflops``, ``compile_s_by_variant``,
        ``epoch_loss`` (each variant's mean batch loss over the first ``loss_steps``
        batches of the first round, the steps every variant ran: they should agree)
        and the headline figures for
        jaxtour's own epoch: ``speedup_vs_numpy_f64``, ``matmul_fraction``, ``compile_s``.
    """
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise ValueError(
            f"Unknown variants {unknown}; choose from {', '.join(VARIANTS)}."
        )
    data = (load_mnist() if data is None else data).subset(train_size)
    images, labels = (
        np.asarray(data.train_images),
        np.asarray(data.train_labels, np.int32),
    )
    check_labels(labels, SIZES[-1], "data.train_labels")  # before any variant runs
    steps = len(images) // batch_size
    full_steps = FULL_TRAIN_SIZE // batch_size
    # jax-eager runs fewer steps: every variant's loss is compared over the same ones
    loss_steps = min(steps, eager_steps) if "jax-eager" in variants else steps
    log = log or (lambda line: None)
    load_before = os.getloadavg()[0]
    rate = [matmul_rate(repeat=rate_repeat)]
    runners = {
        name: _RUNNERS[name](images, labels, batch_size, seed) for name in variants
    }
    if control:
        runners.update(
            (name, _MatmulControl(images, labels, batch_size, seed, name))
            for name in CONTROLS
        )
    times: dict[str, list[float]] = {name: [] for name in runners}
    losses: dict[str, float] = {}
    for r in range(rounds):
        key = jr.fold_in(jr.key(seed), r)
        order = batch_indices(
            key, len(images), batch_size
        )  # the batches train_epoch makes
        for name, runner in runners.items():
            n = min(steps, eager_steps) if name == "jax-eager" else steps
            seconds, batch_losses = runner.run(key, order[:n])
            times[name].append(seconds * full_steps / n)
            if name not in CONTROLS:
                losses.setdefault(name, float(batch_losses[:loss_steps].mean()))
            what = (
                "matmuls only, no loss"
                if name in CONTROLS
                else f"mean loss {batch_losses.mean():.4f}"
            )
            log(
                f"round {r + 1}/{rounds}  {name:<13} {times[name][-1]:8.2f} s/epoch "
                f"({n} steps timed, {what})"
            )
    rate.append(matmul_rate(repeat=rate_repeat))
    summary = _summarise(
        times,
        losses,
        max(rate),
        runners,
        batch_size,
        full_steps,
        steps,
        eager_steps,
        load_before,
        rounds,
    )
    return summary | {"loss_steps": loss_steps}


def _summarise(
    times: dict[str, list[float]],
    losses: dict[str, float],
    rate: float,
    runners: dict[str, _Runner],
    batch_size: int,
    full_steps: int,
    steps: int,
    eager: int,
    load: float,
    rounds: int,
) -> dict[str, Any]:
    flops = matmul_flops(SIZES, batch_size, full_steps)
    epoch_s = {name: statistics.median(ts) for name, ts in times.items()}
    spread_s = {
        name: [min(ts), statistics.median(ts), max(ts)] for name, ts in times.items()
    }
    base = epoch_s.get("numpy-f64")
    result: dict[str, Any] = {
        "device": str(jax.devices()[0].device_kind),
        "platform": jax.default_backend(),
        "jax": jax.__version__,
        "numpy": np.__version__,
        "batch_size": batch_size,
        "steps_per_epoch": full_steps,
        "rounds": rounds,
        "steps_timed": {
            n: min(steps, eager) if n == "jax-eager" else steps for n in times
        },
        "loadavg_before": round(load, 2),
        "matmul_gflops": rate / 1e9,
        "epoch_flops": flops,
        "epoch_s": epoch_s,
        "spread_s": spread_s,
        "ratio_vs_numpy_f64": {n: base / s for n, s in epoch_s.items()} if base else {},
        "matmul_fraction_by_variant": {n: flops / s / rate for n, s in epoch_s.items()},
        "compile_s_by_variant": {
            n: r.compile_s for n, r in runners.items() if r.compile_s is not None
        },
        "epoch_loss": losses,
    }
    if "jaxtour-train" in epoch_s:
        result["speedup_vs_numpy_f64"] = result["ratio_vs_numpy_f64"].get(
            "jaxtour-train"
        )
        result["matmul_fraction"] = result["matmul_fraction_by_variant"][
            "jaxtour-train"
        ]
        result["compile_s"] = runners["jaxtour-train"].compile_s
    return result


def format_ladder(result: dict) -> str:
    """The ladder as a text table: seconds per epoch (median, fastest-slowest round),
    ratio to NumPy f64, % of the matmul rate; the one-matmul control below a rule."""
    lines = [
        f"{'variant':<18} {'s/epoch':>8} {'fastest-slowest':>16} {'vs numpy-f64':>13} "
        f"{'of matmul':>10}"
    ]
    for name, seconds in result["epoch_s"].items():
        if name == CONTROLS[0]:
            lines.append("control: one step's matmuls alone, same shapes")
        ratio = result["ratio_vs_numpy_f64"].get(name, float("nan"))
        fraction = result["matmul_fraction_by_variant"][name]
        low, _, high = result["spread_s"][name]
        lines.append(
            f"{name:<18} {seconds:8.3f} {low:8.3f}-{high:<7.3f} {ratio:12.2f}x "
            f"{100 * fraction:9.1f}%"
        )
    lines.append(
        f"matmul rate (jitted f32 2048x2048): {result['matmul_gflops']:.1f} GFLOP/s; "
        f"epoch = {result['epoch_flops'] / 1e9:.1f} GFLOP of matmuls"
    )
    if "compile_s" in result:
        lines.append(f"jaxtour-train compile: {result['compile_s']:.2f} s")
    return "\n".join(lines)
