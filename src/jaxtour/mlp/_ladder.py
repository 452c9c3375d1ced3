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
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np

from jaxtour.data import Mnist, load_mnist
from jaxtour.mlp._model import (
    LR,
    MOMENTUM,
    SIZES,
    Params,
    init_params,
    preprocess,
    update,
)
from jaxtour.mlp._numpy_twin import NumpyTwin
from jaxtour.mlp._train import batch_indices, compile_epoch

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


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


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
        log: called with one line per measurement (None: silent).

    Returns:
        ``epoch_s`` (seconds per full epoch; the controls' rows too), ``spread_s``
        ([fastest, median, slowest] round of each), ``ratio_vs_numpy_f64``,
        ``matmul_fraction`` per variant, ``matmul_gflops``, ``compile_s_by_variant``,
        ``epoch_loss`` (mean batch loss of each variant's first epoch: they should agree)
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
    steps = len(images) // batch_size
    full_steps = FULL_TRAIN_SIZE // batch_size
    log = log or (lambda line: None)
    load_before = os.getloadavg()[0]
    rate = [matmul_rate()]
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
            seconds, loss = runner.run(key, order[:n])
            times[name].append(seconds * full_steps / n)
            if name not in CONTROLS:
                losses.setdefault(name, loss)
            what = (
                "matmuls only, no loss" if name in CONTROLS else f"mean loss {loss:.4f}"
            )
            log(
                f"round {r + 1}/{rounds}  {name:<13} {times[name][-1]:8.2f} s/epoch "
                f"({n} steps timed, {what})"
            )
    rate.append(matmul_rate())
    return _summarise(
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


class _Runner:
    """Trains one variant from the same initial weights each round."""

    compile_s: float | None = None

    def __init__(self, images: Any, labels: Any, batch_size: int, seed: int) -> None:
        self.images, self.labels, self.batch_size = images, labels, batch_size
        self.params0 = init_params(jr.split(jr.key(seed))[0])

    def run(self, key: jax.Array, order: Any) -> tuple[float, float]:
        """Train over the batches `order` (= batch_indices(key, ...)[:steps]); return
        (seconds, mean batch loss)."""
        raise NotImplementedError


class _NumpyRunner(_Runner):
    dtype: type = np.float64

    def run(self, key: jax.Array, order: Any) -> tuple[float, float]:
        order = np.asarray(order)
        NumpyTwin(self.params0, dtype=self.dtype).epoch(
            self.images, self.labels, order[:2]
        )
        twin = NumpyTwin(self.params0, dtype=self.dtype)
        start = time.perf_counter()
        losses = twin.epoch(self.images, self.labels, order)
        return time.perf_counter() - start, float(losses.mean())


class _NumpyF32Runner(_NumpyRunner):
    dtype = np.float32


def _step(
    params: Params,
    velocity: Params,
    images: jax.Array,
    labels: jax.Array,
    idx: jax.Array,
) -> tuple[Params, Params, jax.Array]:
    """`train_epoch`'s scan body, for a Python loop."""
    return update(
        params, preprocess(images[idx]), labels[idx], velocity, lr=LR, momentum=MOMENTUM
    )


class _JaxRunner(_Runner):
    def __init__(self, images: Any, labels: Any, batch_size: int, seed: int) -> None:
        super().__init__(images, labels, batch_size, seed)
        self.images, self.labels = jax.device_put((images, labels))
        self.step = _step

    def fresh(self) -> tuple[Params, Params]:
        params = jax.tree.map(jnp.copy, self.params0)
        return params, jax.tree.map(jnp.zeros_like, params)

    def run(self, key: jax.Array, order: Any) -> tuple[float, float]:
        jax.block_until_ready(
            self.step(*self.fresh(), self.images, self.labels, order[0])
        )
        params, velocity = self.fresh()
        losses = []
        start = time.perf_counter()
        for idx in order:
            params, velocity, batch_loss = self.step(
                params, velocity, self.images, self.labels, idx
            )
            losses.append(batch_loss)
        jax.block_until_ready(params)
        return time.perf_counter() - start, float(np.mean(losses))


class _JitLoopRunner(_JaxRunner):
    def __init__(self, images: Any, labels: Any, batch_size: int, seed: int) -> None:
        super().__init__(images, labels, batch_size, seed)
        params, velocity = self.fresh()
        lowered = jax.jit(_step, donate_argnums=(0, 1)).lower(
            params, velocity, self.images, self.labels, jnp.zeros(batch_size, jnp.int32)
        )
        self.compile_s = _seconds(lambda: setattr(self, "step", lowered.compile()))


class _TrainEpochRunner(_JaxRunner):
    def __init__(self, images: Any, labels: Any, batch_size: int, seed: int) -> None:
        super().__init__(images, labels, batch_size, seed)
        self.epoch, self.compile_s = compile_epoch(
            *self.fresh(), self.images, self.labels, jr.key(0), batch_size=batch_size
        )

    def run(self, key: jax.Array, order: Any) -> tuple[float, float]:
        jax.block_until_ready(self.epoch(*self.fresh(), self.images, self.labels, key))
        params, velocity = self.fresh()
        start = time.perf_counter()
        params, velocity, losses = self.epoch(
            params, velocity, self.images, self.labels, key
        )
        jax.block_until_ready(losses)
        return time.perf_counter() - start, float(np.mean(losses))


def _step_matmuls(w: list[Any], x: Any, deltas: list[Any]) -> list[Any]:
    """One training step's matmuls, with its shapes, and nothing else: the forward
    products, the weight gradients, and the input gradients of every layer but the first."""
    h = [x]
    for wi in w:
        h.append(h[-1] @ wi)
    out = h[1:]
    for i in reversed(range(len(w))):
        out.append(h[i].T @ deltas[i])
        if i:
            out.append(deltas[i] @ w[i].T)
    return out


class _MatmulControl(_Runner):
    """The one-matmul control: `_step_matmuls` per batch, NumPy f32 (BLAS) or jitted JAX
    (XLA's dot), over batches preprocessed beforehand (no gather, no elementwise work)."""

    def __init__(
        self,
        images: Any,
        labels: Any,
        batch_size: int,
        seed: int,
        name: str,
    ) -> None:
        super().__init__(images, labels, batch_size, seed)
        steps = len(images) // batch_size
        xs = np.asarray(preprocess(images[: steps * batch_size]))
        self.xs = xs.reshape(steps, batch_size, -1)
        self.w = [np.asarray(self.params0[n]["w"]) for n in self.params0]
        rng = np.random.default_rng(seed)
        self.deltas = [
            rng.standard_normal((batch_size, w.shape[1])).astype(np.float32)
            for w in self.w
        ]
        self.jax = name == "matmuls-jax"
        if self.jax:
            self.xs, self.w, self.deltas = jax.device_put(
                (self.xs, self.w, self.deltas)
            )
            self.matmuls = jax.jit(lambda w, xs, i, d: _step_matmuls(w, xs[i], d))
            self.compile_s = _seconds(
                lambda: jax.block_until_ready(
                    self.matmuls(self.w, self.xs, 0, self.deltas)
                )
            )

    def run(self, key: jax.Array, order: Any) -> tuple[float, float]:
        n = len(order)
        if self.jax:
            start = time.perf_counter()
            outs = [self.matmuls(self.w, self.xs, i, self.deltas) for i in range(n)]
            jax.block_until_ready(outs)
        else:
            _step_matmuls(self.w, self.xs[0], self.deltas)
            start = time.perf_counter()
            for i in range(n):
                _step_matmuls(self.w, self.xs[i], self.deltas)
        return time.perf_counter() - start, float("nan")


_RUNNERS = {
    "numpy-f64": _NumpyRunner,
    "numpy-f32": _NumpyF32Runner,
    "jax-eager": _JaxRunner,
    "jax-jit-loop": _JitLoopRunner,
    "jaxtour-train": _TrainEpochRunner,
}


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
