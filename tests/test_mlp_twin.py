"""The float64 NumPy twin against JAX, step by step, on real MNIST batches."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np
import pytest

from jaxtour.data._download import FILES
from jaxtour.mlp import (
    NumpyTwin,
    batch_indices,
    compile_epoch,
    init_params,
    load_mnist,
    loss,
    numpy_twin,
    preprocess,
    update,
)

SHARED = Path(
    os.environ.get("JAXTOUR_DATA") or Path(__file__).parents[2] / "shared" / "mnist"
)
pytestmark = [
    pytest.mark.skipif(
        not all((SHARED / f.name).is_file() for f in FILES),
        reason=f"MNIST files not in {SHARED}",
    ),
    pytest.mark.usefixtures("full_float32"),
]


@pytest.fixture(scope="module")
def mnist():
    return load_mnist(SHARED, mirrors=[]).subset(2560, 1000)


@pytest.fixture(scope="module")
def params():
    return init_params(jr.key(0))


def _max_relative(a, b) -> float:
    """max |a - b| / max |b| over every leaf."""
    return max(
        float(
            np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)).max()
            / np.abs(np.asarray(y, np.float64)).max()
        )
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    )


@pytest.mark.slow  # the NumPy twin against JAX on real MNIST
def test_one_sgd_step_agrees_with_jax_to_1e_4(mnist, params):
    x, y = (
        preprocess(mnist.train_images[:128]),
        np.asarray(mnist.train_labels[:128], np.int32),
    )
    new_params, velocity, batch_loss = update(params, x, y)
    twin = numpy_twin(params)
    twin_loss = twin.step(np.asarray(x), y)
    assert twin.dtype == np.float64 and twin.w[0].dtype == np.float64
    assert twin_loss == pytest.approx(float(batch_loss), rel=1e-5)
    assert _max_relative(twin.params, new_params) < 1e-4
    assert _max_relative(twin.vw, [velocity[n]["w"] for n in twin.names]) < 1e-4


@pytest.mark.slow  # the NumPy twin against JAX on real MNIST
def test_twin_gradient_matches_jax_grad_and_finite_differences(mnist, params):
    x, y = (
        preprocess(mnist.train_images[:32]),
        np.asarray(mnist.train_labels[:32], np.int32),
    )
    twin = NumpyTwin(params)
    twin_loss, grads = twin.loss_and_grads(np.asarray(x), y)
    assert twin_loss == pytest.approx(float(loss(params, x, y)), rel=1e-5)
    assert _max_relative(grads, jax.grad(loss)(params, x, y)) < 1e-4
    # Float64 central differences on a few single weights of each layer.
    rng = np.random.default_rng(0)
    for layer, w in zip(twin.names, twin.w, strict=True):
        for _ in range(3):
            i, j = rng.integers(w.shape[0]), rng.integers(w.shape[1])
            original, eps = w[i, j], 1e-6
            w[i, j] = original + eps
            up = twin.loss_and_grads(np.asarray(x), y)[0]
            w[i, j] = original - eps
            down = twin.loss_and_grads(np.asarray(x), y)[0]
            w[i, j] = original
            assert grads[layer]["w"][i, j] == pytest.approx(
                (up - down) / (2 * eps), rel=1e-5, abs=1e-9
            )


@pytest.mark.slow  # the NumPy twin against JAX on real MNIST
def test_an_epoch_of_the_twin_follows_the_compiled_scan(mnist, params):
    """Same weights, same batch order (batch_indices), 20 steps: float32 vs float64."""
    key = jr.key(7)
    images, labels = mnist.train_images, np.asarray(mnist.train_labels, np.int32)
    velocity = jax.tree.map(np.zeros_like, params)
    epoch, _ = compile_epoch(params, velocity, images, labels, key, batch_size=128)
    jax_params, _, jax_losses = epoch(
        jax.tree.map(jnp.copy, params),
        jax.tree.map(jnp.asarray, velocity),
        images,
        labels,
        key,
    )
    twin = NumpyTwin(params)
    order = np.asarray(batch_indices(key, len(images), 128))
    twin_losses = twin.epoch(images, labels, order)
    assert order.shape == (20, 128)
    np.testing.assert_allclose(twin_losses, jax_losses, rtol=1e-3)
    assert _max_relative(twin.params, jax_params) < 1e-3
    assert twin.accuracy(twin.preprocess(mnist.test_images), mnist.test_labels) > 0.8


def test_float32_twin_is_float32_and_close(mnist, params):
    x, y = (
        preprocess(mnist.train_images[:64]),
        np.asarray(mnist.train_labels[:64], np.int32),
    )
    twin32, twin64 = NumpyTwin(params, dtype=np.float32), NumpyTwin(params)
    assert twin32.step(np.asarray(x), y) == pytest.approx(
        twin64.step(np.asarray(x), y), 1e-5
    )
    assert twin32.w[0].dtype == np.float32
    assert _max_relative(twin32.params, twin64.params) < 1e-5


@pytest.mark.slow  # the NumPy twin against JAX on real MNIST
def test_twin_preprocess_matches_jax(mnist):
    twin = NumpyTwin(init_params(jr.key(1)))
    np.testing.assert_allclose(
        twin.preprocess(mnist.test_images[:10]),
        preprocess(mnist.test_images[:10]),
        rtol=1e-6,
        atol=1e-6,
    )
