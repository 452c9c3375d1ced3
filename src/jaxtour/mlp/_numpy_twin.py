"""The same MLP in plain NumPy (float64 by default): forward and backward by hand.

Written as well as NumPy allows, so that comparing it with JAX is fair: every matmul
is one BLAS call on a whole batch, buffers are allocated once and updated in place,
and there is no Python loop over samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jaxtour.mlp._model import (
    LR,
    MOMENTUM,
    PIXEL_MEAN,
    PIXEL_STD,
    check_labels,
    layer_names,
)


class NumpyTwin:
    """An MLP in NumPy that mirrors `init_params` / `update` / `train_epoch` step by step.

    Args:
        params: JAX params (from `init_params`); copied and converted to `dtype`.
        dtype: ``np.float64`` (the reference) or ``np.float32``.
        lr, momentum: as in `update`.

    Example:
        >>> import jax
        >>> from jaxtour.mlp import init_params, example_batch
        >>> twin = NumpyTwin(init_params(jax.random.key(0)))
        >>> x, y = example_batch(8)
        >>> round(float(twin.step(np.asarray(x), np.asarray(y))), 2) > 0
        True
    """

    def __init__(
        self,
        params: Any,
        *,
        dtype: Any = np.float64,
        lr: float = LR,
        momentum: float = MOMENTUM,
    ) -> None:
        self.dtype = np.dtype(dtype)
        self.names = layer_names(len(params))
        self.w = [np.array(params[n]["w"], self.dtype) for n in self.names]
        self.b = [np.array(params[n]["b"], self.dtype) for n in self.names]
        self.vw = [np.zeros_like(w) for w in self.w]
        self.vb = [np.zeros_like(b) for b in self.b]
        self.gw = [np.empty_like(w) for w in self.w]
        self.gb = [np.empty_like(b) for b in self.b]
        self.lr, self.momentum = self.dtype.type(lr), self.dtype.type(momentum)
        self._buffers: dict[tuple, np.ndarray] = {}

    @property
    def n_classes(self) -> int:
        """The width of the output layer: labels run from 0 to this minus 1."""
        return self.w[-1].shape[1]

    @property
    def params(self) -> dict[str, dict[str, np.ndarray]]:
        """The weights, structured like JAX's params (views, not copies)."""
        return {
            n: {"w": w, "b": b}
            for n, w, b in zip(self.names, self.w, self.b, strict=True)
        }

    def preprocess(
        self, images: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """As `jaxtour.mlp.preprocess`: u8[n, 28, 28] to standardised [n, 784] in `dtype`."""
        flat = images.reshape(len(images), -1)
        out = np.empty(flat.shape, self.dtype) if out is None else out
        np.multiply(
            flat, self.dtype.type(1 / (255 * PIXEL_STD)), out=out, casting="unsafe"
        )
        out -= self.dtype.type(PIXEL_MEAN / PIXEL_STD)
        return out

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Logits [batch, classes] of inputs [batch, 784] (not in place)."""
        h = np.asarray(x, self.dtype)
        for w, b in zip(self.w[:-1], self.b[:-1], strict=True):
            h = np.maximum(h @ w + b, 0)
        return h @ self.w[-1] + self.b[-1]

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.argmax(self.predict(x), axis=-1) == y))

    def loss_and_grads(self, x: np.ndarray, y: np.ndarray) -> tuple[float, dict]:
        """The batch's loss and its gradient, as a params-shaped dict (copies).

        Raises:
            ValueError: a label in `y` is not a class index (0-9 for MNIST).
        """
        check_labels(y, self.n_classes, "y")
        batch_loss = self._forward_backward(np.asarray(x, self.dtype), np.asarray(y))
        grads = {
            n: {"w": gw.copy(), "b": gb.copy()}
            for n, gw, gb in zip(self.names, self.gw, self.gb, strict=True)
        }
        return batch_loss, grads

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        """One SGD-with-momentum step in place, exactly as `update`; returns the loss.

        Raises:
            ValueError: a label in `y` is not a class index (0-9 for MNIST).
        """
        check_labels(y, self.n_classes, "y")
        return self._step(x, y)

    def _step(self, x: np.ndarray, y: np.ndarray) -> float:
        batch_loss = self._forward_backward(np.asarray(x, self.dtype), np.asarray(y))
        for p, v, g in zip(
            self.w + self.b, self.vw + self.vb, self.gw + self.gb, strict=True
        ):
            v *= self.momentum
            v += g  # velocity = momentum * velocity + grad
            np.multiply(v, self.lr, out=g)  # g is scratch from here on
            p -= g  # params -= lr * velocity
        return batch_loss

    def epoch(
        self, images: np.ndarray, labels: np.ndarray, order: np.ndarray
    ) -> np.ndarray:
        """`train_epoch`'s loop: one `step` per row of `order` (i32[steps, batch] indices).

        Raises:
            ValueError: a label in `labels` is not a class index (0-9 for MNIST).
        """
        check_labels(labels, self.n_classes, "labels")  # once, not in every step
        order = np.asarray(order)
        raw = self._buffer("raw", (order.shape[1], *images.shape[1:]), images.dtype)
        x = self._buffer("x", (order.shape[1], int(np.prod(images.shape[1:]))))
        losses = np.empty(len(order), self.dtype)
        for i, idx in enumerate(order):
            np.take(images, idx, axis=0, out=raw)
            losses[i] = self._step(self.preprocess(raw, out=x), labels[idx])
        return losses

    def _buffer(self, name: str, shape: tuple, dtype: Any = None) -> np.ndarray:
        key = (name, shape, dtype)
        if key not in self._buffers:
            self._buffers[key] = np.empty(shape, dtype or self.dtype)
        return self._buffers[key]

    def _forward_backward(self, x: np.ndarray, y: np.ndarray) -> float:
        """Fill self.gw / self.gb with d(loss)/d(params); return the loss."""
        n, last = len(x), len(self.w) - 1
        acts = []  # post-activation of each layer; the last holds the logits
        a = x
        for i, (w, b) in enumerate(zip(self.w, self.b, strict=True)):
            z = self._buffer(f"z{i}", (n, w.shape[1]))
            np.matmul(a, w, out=z)
            z += b
            if i < last:
                np.maximum(z, 0, out=z)  # ReLU in place
            acts.append(z)
            a = z
        delta, batch_loss = self._softmax_cross_entropy_grad(acts[-1], y)
        for i in range(last, -1, -1):
            a_prev = x if i == 0 else acts[i - 1]
            np.matmul(a_prev.T, delta, out=self.gw[i])  # dL/dW = a_prev^T delta
            np.sum(delta, axis=0, out=self.gb[i])
            if i > 0:
                back = self._buffer(f"d{i - 1}", a_prev.shape)
                np.matmul(delta, self.w[i].T, out=back)  # dL/da_prev = delta W^T
                np.multiply(back, a_prev > 0, out=back)  # ReLU'(z) = [z > 0]
                delta = back
        return batch_loss

    def _softmax_cross_entropy_grad(
        self, logits: np.ndarray, y: np.ndarray
    ) -> tuple[np.ndarray, float]:
        """In place: logits -> dL/dlogits = (softmax - onehot) / n; returns it and the loss."""
        n, rows = len(logits), np.arange(len(logits))
        logits -= logits.max(axis=1, keepdims=True)
        log_norm = np.log(np.exp(logits).sum(axis=1))
        batch_loss = float(np.mean(log_norm - logits[rows, y]))  # -mean log softmax[y]
        np.exp(logits, out=logits)
        logits /= logits.sum(axis=1, keepdims=True)
        logits[rows, y] -= 1
        logits *= self.dtype.type(1 / n)
        return logits, batch_loss
