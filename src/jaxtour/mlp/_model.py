"""The MLP as pure functions: init_params, predict, loss, accuracy, update.

In the spirit of JAX's own from-scratch MNIST code, which keeps the weights as a list of
``(w, b)`` tuples: `examples/mnist_classifier_fromscratch.py` (784-1024-1024-10, tanh, a
batched `predict`, plain SGD in a jitted step) and the documentation's "Training a simple
neural network" tutorial (784-512-512-10, ReLU, `predict` written for one image and
batched with `vmap`). Here: 784-512-256-10 with ReLU, named layers (a dict of dicts), He
initialisation from a `jax.random` key, `predict` for one image batched with `vmap`, and
SGD with momentum.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np

from jaxtour._random import drawn_flat

# {"hidden1": {"w": f32[784, 512], "b": f32[512]}, "hidden2": {...}, "output": {...}}
Params = dict[str, dict[str, jax.Array]]

SIZES = (784, 512, 256, 10)
LR = 0.05  # learning rate
MOMENTUM = 0.9  # heavy-ball momentum: velocity = momentum * velocity + grad
PIXEL_MEAN, PIXEL_STD = 0.1307, 0.3081  # of MNIST's training pixels, scaled to [0, 1]


def layer_names(n_layers: int) -> list[str]:
    """Names of the layers, input to output: hidden1, hidden2, ..., output."""
    return [f"hidden{i}" for i in range(1, n_layers)] + ["output"]


def init_params(
    key: jax.Array, sizes: tuple[int, ...] = SIZES, dtype: Any = jnp.float32
) -> Params:
    """Random weights for an MLP with layer widths `sizes`, biases zero.

    Hidden layers use He initialisation (normal, variance 2 / fan-in) so that ReLU keeps
    activations of the same scale layer to layer; the output layer uses variance
    1 / fan-in, which starts the logits small and the softmax near uniform.

    Args:
        key: a PRNG key, e.g. ``jax.random.key(0)``.
        sizes: input width, hidden widths, number of classes.
        dtype: of every array.

    Returns:
        ``{"hidden1": {"w": f32[784, 512], "b": f32[512]}, "hidden2": ..., "output": ...}``.

    Example:
        >>> params = init_params(jax.random.key(0))
        >>> {name: layer["w"].shape for name, layer in params.items()}
        {'hidden1': (784, 512), 'hidden2': (512, 256), 'output': (256, 10)}
    """
    if len(sizes) < 2 or any(int(s) < 1 for s in sizes):
        raise ValueError(
            f"`sizes` must be two or more positive widths, e.g. {SIZES}; got {sizes}."
        )
    names = layer_names(len(sizes) - 1)
    keys = jr.split(key, len(names))
    params = {}
    for name, k, fan_in, fan_out in zip(
        names, keys, sizes[:-1], sizes[1:], strict=True
    ):
        gain = 1.0 if name == "output" else 2.0
        scale = jnp.sqrt(gain / fan_in).astype(dtype)
        w = drawn_flat(jr.normal, k, (fan_in, fan_out), dtype) * scale
        params[name] = {"w": w, "b": jnp.zeros((fan_out,), dtype)}
    return params


def preprocess(images: jax.Array | np.ndarray) -> jax.Array:
    """u8[..., 28, 28] pixels to f32[..., 784] inputs, standardised by MNIST's mean, std."""
    x = jnp.asarray(images).reshape(*jnp.shape(images)[:-2], -1).astype(jnp.float32)
    return (x / 255.0 - PIXEL_MEAN) / PIXEL_STD


def predict(params: Params, image: jax.Array) -> jax.Array:
    """The logits f32[10] of ONE image f32[784]: dense + ReLU layers, then a dense layer.

    Batches come from `jax.vmap` (see `batched_predict`), not from writing the batch
    dimension by hand.
    """
    names = layer_names(len(params))
    h = image
    for name in names[:-1]:
        h = jax.nn.relu(h @ params[name]["w"] + params[name]["b"])
    return h @ params[names[-1]]["w"] + params[names[-1]]["b"]


#: As `predict`, but for a batch: f32[batch, 784] -> f32[batch, 10].
batched_predict = jax.vmap(predict, in_axes=(None, 0))


def loss(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """Mean softmax cross-entropy of a batch: x f32[batch, 784], y int[batch] labels.

    A label outside 0..classes-1 is one-hot encoded as no class at all, so its example
    adds 0 to the sum, silently (a jitted function cannot raise): `check_labels` is
    called where labels come in (`train`, `train_data_parallel`, `NumpyTwin`,
    `run_ladder`).
    """
    log_probs = jax.nn.log_softmax(batched_predict(params, x))
    n_classes = log_probs.shape[-1]
    return -jnp.mean(jnp.sum(jax.nn.one_hot(y, n_classes) * log_probs, axis=-1))


def check_labels(labels: Any, n_classes: int, name: str) -> None:
    """Raise a `ValueError` unless every label is a class index from 0 to n_classes - 1.

    `name` is how the caller's user spells the array. `loss` would score a bad label as
    no class at all, and NumPy's indexing reads -1 as the last class.

    Example:
        >>> check_labels(np.array([7, 2, 1]), 10, "y")
        >>> check_labels(np.array([7, 10, -1]), 10, "y")
        Traceback (most recent call last):
        ...
        ValueError: `y[1]` is 10 (and 1 more label outside 0..9); labels must be class
        indices from 0 to 9. Fix or drop those examples.
    """
    labels = np.asarray(labels).ravel()
    bad = np.flatnonzero((labels < 0) | (labels >= n_classes))
    if bad.size:
        first, more = int(bad[0]), bad.size - 1
        others = (
            f" (and {more} more label{'s' * (more != 1)} outside 0..{n_classes - 1})"
            if more
            else ""
        )
        raise ValueError(
            f"`{name}[{first}]` is {labels[first]}{others}; labels must be class "
            f"indices from 0 to {n_classes - 1}. Fix or drop those examples."
        )


def accuracy(params: Params, x: jax.Array, y: jax.Array) -> jax.Array:
    """Fraction of the batch whose largest logit is the label."""
    return jnp.mean(jnp.argmax(batched_predict(params, x), axis=-1) == y)


def update(
    params: Params,
    x: jax.Array,
    y: jax.Array,
    velocity: Params | None = None,
    *,
    lr: float = LR,
    momentum: float = MOMENTUM,
) -> tuple[Params, Params, jax.Array]:
    """One step of SGD with momentum on the batch (x, y).

    ``velocity = momentum * velocity + grad`` then ``params = params - lr * velocity``
    (PyTorch's convention); ``momentum=0`` is plain SGD. Pure: returns new pytrees.

    Args:
        params: the current weights.
        x: f32[batch, 784] inputs (see `preprocess`).
        y: int[batch] labels.
        velocity: the running average of gradients, like `params`; None starts at rest.
        lr: learning rate.
        momentum: in [0, 1).

    Returns:
        (new params, new velocity, the batch's loss before the step).

    Example:
        >>> params = init_params(jax.random.key(0))
        >>> x, y = example_batch(8)
        >>> params, velocity, batch_loss = jax.jit(update)(params, x, y)
        >>> batch_loss.shape, velocity["output"]["w"].shape
        ((), (256, 10))
    """
    if velocity is None:
        velocity = jax.tree.map(jnp.zeros_like, params)
    batch_loss, grads = jax.value_and_grad(loss)(params, x, y)
    velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)
    return params, velocity, batch_loss


def example_batch(
    n: int = 8, data: Any = None, *, seed: int = 0
) -> tuple[jax.Array, jax.Array]:
    """A small batch (x f32[n, 784], y i32[n]) to trace, draw or differentiate with.

    Args:
        n: batch size.
        data: an `Mnist`; when given, its first `n` test images. Otherwise random
            digits-shaped noise, so no download is needed to look at the program.
        seed: for the random batch.

    Example:
        >>> x, y = example_batch(4)
        >>> x.shape, x.dtype, y.shape, y.dtype
        ((4, 784), dtype('float32'), (4,), dtype('int32'))
    """
    if data is not None:
        return preprocess(data.test_images[:n]), jnp.asarray(
            data.test_labels[:n], jnp.int32
        )
    key_x, key_y = jr.split(jr.key(seed))
    images = drawn_flat(jr.randint, key_x, (n, 28, 28), 0, 256).astype(jnp.uint8)
    return preprocess(images), jr.randint(key_y, (n,), 0, 10)
