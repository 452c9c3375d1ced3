"""The speed ladder's runners: each trains one variant (or times the matmul control)
from the same initial weights over the batches it is given, and returns (seconds, the
loss of each batch).

`run_ladder` (`_ladder.py`) builds one runner per variant and calls them round after round.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np

from jaxtour.mlp._model import LR, MOMENTUM, Params, init_params, preprocess, update
from jaxtour.mlp._numpy_twin import NumpyTwin
from jaxtour.mlp._train import compile_epoch


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class _Runner:
    """Trains one variant from the same initial weights each round."""

    compile_s: float | None = None

    def __init__(self, images: Any, labels: Any, batch_size: int, seed: int) -> None:
        self.images, self.labels, self.batch_size = images, labels, batch_size
        self.params0 = init_params(jr.split(jr.key(seed))[0])

    def run(self, key: jax.Array, order: Any) -> tuple[float, np.ndarray]:
        """Train over the batches `order` (= batch_indices(key, ...)[:steps]); return
        (seconds, the loss of each batch: f[steps])."""
        raise NotImplementedError


class _NumpyRunner(_Runner):
    dtype: type = np.float64

    def run(self, key: jax.Array, order: Any) -> tuple[float, np.ndarray]:
        order = np.asarray(order)
        NumpyTwin(self.params0, dtype=self.dtype).epoch(
            self.images, self.labels, order[:2]
        )
        twin = NumpyTwin(self.params0, dtype=self.dtype)
        start = time.perf_counter()
        losses = twin.epoch(self.images, self.labels, order)
        return time.perf_counter() - start, losses


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

    def run(self, key: jax.Array, order: Any) -> tuple[float, np.ndarray]:
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
        return time.perf_counter() - start, np.asarray(losses)


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

    def run(self, key: jax.Array, order: Any) -> tuple[float, np.ndarray]:
        jax.block_until_ready(self.epoch(*self.fresh(), self.images, self.labels, key))
        params, velocity = self.fresh()
        start = time.perf_counter()
        params, velocity, losses = self.epoch(
            params, velocity, self.images, self.labels, key
        )
        jax.block_until_ready(losses)
        return time.perf_counter() - start, np.asarray(losses)


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

    def run(self, key: jax.Array, order: Any) -> tuple[float, np.ndarray]:
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
        return time.perf_counter() - start, np.full(n, np.nan)


_RUNNERS = {
    "numpy-f64": _NumpyRunner,
    "numpy-f32": _NumpyF32Runner,
    "jax-eager": _JaxRunner,
    "jax-jit-loop": _JitLoopRunner,
    "jaxtour-train": _TrainEpochRunner,
}
