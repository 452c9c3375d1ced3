# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,slideshow,jupyter,-all
#     notebook_metadata_filter: kernelspec,jupytext,colab,accelerator
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 05 · An MLP on MNIST, the JAX way
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/05_mnist_mlp.ipynb)
#
# You will learn to build and train a 784-512-256-10 network on the real MNIST:
#
# - parameters as a **pytree**, made from an **explicit key**;
# - `predict` for **one** image, batched by **`vmap`**;
# - the loss and its gradient with **`value_and_grad`**, SGD with momentum;
# - a whole epoch as **one jitted `lax.scan`**.
#
# *About 25 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths
from jaxtour.exercises import check

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The data
#
# 70,000 handwritten digits: `uint8` pixels, 28×28, labels 0–9. Every file's SHA-256 is
# checked on every load.
# %%
from jaxtour.mlp import load_mnist
from jaxtour.viz import draw_jaxpr

mnist = load_mnist()
print({name: (array.shape, str(array.dtype)) for name, array in mnist._asdict().items()})

# %% tags=["check"] jupyter={"source_hidden": true}
assert mnist.train_images.shape == (60_000, 28, 28)
assert mnist.test_images.shape == (10_000, 28, 28) and mnist.test_images.dtype == np.uint8
assert sorted(set(mnist.train_labels.tolist())) == list(range(10))

# %% [markdown] slideshow={"slide_type": "notes"}
# `load_mnist` looks in `$JAXTOUR_DATA`, else in `~/.cache/jaxtour/mnist`, and downloads
# what is missing from public mirrors. A truncated or altered file fails its checksum and
# is never used.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A look at the digits

# %%
from jaxtour.mlp import plot_predictions

plot_predictions(mnist.train_images[:16], mnist.train_labels[:16], mnist.train_labels[:16])

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Parameters: a pytree with named layers, from an explicit key
#
# JAX has no hidden random state: `init_params` is a pure function of its key. The result
# is a dict of dicts, a **pytree**: `jax.tree.map` reaches every array in it.

# %%
from jaxtour.mlp import init_params

params = init_params(jax.random.key(0), sizes=(784, 512, 256, 10))
print(jax.tree.map(jnp.shape, params))
n_params = sum(leaf.size for leaf in jax.tree.leaves(params))
print(f"{n_params:,} parameters")
same = init_params(jax.random.key(0))

# %% tags=["check"] jupyter={"source_hidden": true}
assert n_params == 784 * 512 + 512 + 512 * 256 + 256 + 256 * 10 + 10 == 535_818
assert all(jnp.array_equal(a, b) for a, b in zip(jax.tree.leaves(params),
                                                  jax.tree.leaves(same), strict=True))

# %% [markdown] slideshow={"slide_type": "notes"}
# The same key gives the same weights every time you run this with the same JAX version
# on the same kind of device: that is what the check above asserts. JAX promises the
# *distribution* of its random numbers, not their exact values: JAX 0.5.0, for one,
# changed the values every key produces (`jax_threefry_partitionable` became the
# default), and the float math that turns random bits into normal samples may round
# differently on another backend. Save the weights (lesson 08's Orbax) when you need the
# very same network elsewhere.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `predict`: written for one image, batched by `vmap`
#
# ```python
# def predict(params, image):                 # image: f32[784]
#     h = image
#     for name in ("hidden1", "hidden2"):
#         h = jax.nn.relu(h @ params[name]["w"] + params[name]["b"])
#     return h @ params["output"]["w"] + params["output"]["b"]   # logits: f32[10]
#
# batched_predict = jax.vmap(predict, in_axes=(None, 0))  # params shared, images batched
# ```

# %% slideshow={"slide_type": "subslide"}
from jaxtour.mlp import batched_predict, predict, preprocess

x_test = preprocess(mnist.test_images)  # flattened, standardised
y_test = jnp.asarray(mnist.test_labels, jnp.int32)
with jax.default_matmul_precision("highest"):  # full float32 everywhere: see the notes
    one = predict(params, x_test[0])
    batch = batched_predict(params, x_test[:8])
print(one.shape, batch.shape)

# %% tags=["check"] jupyter={"source_hidden": true}
assert one.shape == (10,) and batch.shape == (8, 10)
np.testing.assert_allclose(batch[0], one, rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# `preprocess` flattens the pixels and standardises them with MNIST's mean and spread.
# At JAX's default precision a GPU (TF32 on Ampere or newer) or a TPU (bfloat16 passes)
# rounds a matrix-vector and a matrix-matrix product differently; `"highest"` asks for
# full float32, so that one image and the batch's first row agree to float32 rounding.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Loss and accuracy
#
# Softmax cross-entropy: minus the mean log-probability of the right digit. An untrained
# network guesses about uniformly: loss near ln 10 ≈ 2.30, accuracy near 10 %.

# %%
from jaxtour.mlp import accuracy, loss

start_loss = float(loss(params, x_test[:1000], y_test[:1000]))
start_accuracy = float(accuracy(params, x_test, y_test))
print(f"loss {start_loss:.3f} (ln 10 = {np.log(10):.3f}), accuracy {start_accuracy:.1%}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert abs(start_loss - np.log(10)) < 0.3
assert 0.02 < start_accuracy < 0.25

# %% [markdown] slideshow={"slide_type": "slide"}
# ## One step: `value_and_grad`, then SGD with momentum
#
# The gradient is a pytree shaped like `params`; the update is two `jax.tree.map`s.
# Nothing is modified in place: `update` returns new pytrees.

# %%
from jaxtour.mlp import LR, MOMENTUM, update

x, y = preprocess(mnist.train_images[:128]), jnp.asarray(mnist.train_labels[:128], jnp.int32)
value, grads = jax.value_and_grad(loss)(params, x, y)
print(jax.tree.map(jnp.shape, grads) == jax.tree.map(jnp.shape, params), float(value))
new_params, velocity, batch_loss = update(params, x, y, lr=LR, momentum=MOMENTUM)
print(f"lr {LR}, momentum {MOMENTUM}: loss on this batch {float(batch_loss):.3f} -> "
      f"{float(loss(new_params, x, y)):.3f}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert float(loss(new_params, x, y)) < float(batch_loss)
assert jnp.array_equal(params["output"]["b"], jnp.zeros(10))  # the old params are untouched

# %% [markdown] slideshow={"slide_type": "notes"}
# `update` computes `velocity = momentum * velocity + grad`, then
# `params = params - lr * velocity` (PyTorch's convention for momentum).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## An epoch as one compiled program
#
# ```python
# def train_epoch(params, velocity, images, labels, key, *, batch_size=128):
#     order = batch_indices(key, len(images), batch_size)   # a jax.random permutation
#     def step(carry, idx):
#         params, velocity = carry
#         x, y = preprocess(images[idx]), labels[idx]      # gathered on the device
#         params, velocity, batch_loss = update(params, x, y, velocity)
#         return (params, velocity), batch_loss
#     (params, velocity), losses = jax.lax.scan(step, (params, velocity), order)
#     return params, velocity, losses
# ```

# %% [markdown] slideshow={"slide_type": "notes"}
# The loop over the epoch's 468 batches is *inside* the program: one call from Python per
# epoch, the batches gathered on the device. `train` puts the images on the device once
# (as `uint8`) and compiles `train_epoch` with `jax.jit(..., donate_argnums=(0, 1))`, so
# XLA may reuse the weights' buffers for the new weights. Calling a jitted step 468 times
# from Python instead costs a dispatch per call (microseconds). On a CPU, where one step
# of this MLP takes milliseconds, asynchronous dispatch hides that cost: Python queues
# the next step while the last one computes, and the two ways take about the same time.
# On a GPU a step takes tens of microseconds and dispatch shows: on an H100 the scanned
# epoch took 17 ms, the Python loop 81 ms. Lesson 06 measures both.

# %% slideshow={"slide_type": "subslide"}
from jaxtour.mlp import train

if paths.quick():  # CI: a slice of the data and two epochs; the assertions still hold
    data, epochs, target = mnist.subset(12_800), 2, 0.90
else:
    data, epochs, target = mnist, 10, 0.98
params, history = train(data, epochs=epochs, seed=0)
print(f"compile {history.compile_seconds:.2f} s, then "
      f"{np.mean(history.epoch_seconds):.2f} s per epoch of {len(data.train_images):,} images")
print(f"test accuracy {history.test_accuracy[-1]:.2%} after {epochs} epochs")

# %% tags=["check"] jupyter={"source_hidden": true}
assert history.test_accuracy[-1] >= target
assert history.loss[-1] < history.loss[0]

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The learning curve

# %%
from jaxtour.mlp import plot_history

plot_history(history)

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(history.batch_loss) == epochs * (len(data.train_images) // 128)

# %% [markdown] slideshow={"slide_type": "notes"}
# Left, the loss of every batch (light) and of every epoch (dark); right, the accuracy on
# the training images and on the test set, which the network never trains on, against
# the 98 % a network of this size reaches.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What it predicts
#
# Test digits with the network's answer; a mistake is red, with the true label.

# %% slideshow={"slide_type": "skip"}
predicted = np.asarray(jnp.argmax(batched_predict(params, x_test), axis=-1))
wrong = np.flatnonzero(predicted[:500] != mnist.test_labels[:500])
shown = np.concatenate([wrong, np.setdiff1d(np.arange(16), wrong)])[:16]
shown.sort()
print(f"{len(wrong)} mistakes in the first 500 test digits")

# %% tags=["check"] jupyter={"source_hidden": true}
assert abs(np.mean(predicted == mnist.test_labels) - history.test_accuracy[-1]) < 1e-6

# %%
plot_predictions(mnist.test_images[shown], mnist.test_labels[shown], predicted[shown])

# %% [markdown] slideshow={"slide_type": "notes"}
# The grid shows the mistakes among the first 500 test digits (up to 16), topped up with
# the first digits it gets right.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where it ran
#
# JAX chose the device; the weights live there, and so does every array the epoch made.

# %%
device = next(iter(params["output"]["w"].devices()))
print(f"trained on {history.device}: {device}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert device == jax.devices()[0]
assert history.device.startswith(jax.default_backend())

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: per-example losses with `vmap`
#
# `example_loss(params, image, label)` is the loss of ONE example. Write
# `ex_losses_per_digit(example_loss, params, images, labels)` that returns one loss per
# example, f32[batch], using `jax.vmap`. (`check` brings its own `example_loss` and batch.)

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_losses_per_digit(example_loss, params, images, labels):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_losses_per_digit(example_loss, params, images, labels):
    return jax.vmap(example_loss, in_axes=(None, 0, 0))(params, images, labels)

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>`in_axes` has one entry per argument: which arguments carry
# the batch, and which are shared by every example?</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>`None` in `in_axes` means "the same value for every
# example".</details>

# %% slideshow={"slide_type": "skip"}
check(ex_losses_per_digit)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_losses_per_digit, quiet=True).passed

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: accuracy
#
# Write `ex_accuracy(logits, labels)`: the fraction of a batch whose largest logit
# (f32[batch, classes]) is the label (i32[batch]), as one number.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_accuracy(logits, labels):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_accuracy(logits, labels):
    return jnp.mean(jnp.argmax(logits, axis=-1) == labels)

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>`jnp.argmax` takes an `axis`: the classes are the last
# one.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>The mean of booleans is the fraction that are True.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_accuracy)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_accuracy, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `batched_predict`, drawn

# %%
one_hidden = init_params(jax.random.key(0), sizes=(784, 512, 10))
draw_jaxpr(batched_predict, max_depth=0)(one_hidden, x_test[:8])

# %% [markdown] slideshow={"slide_type": "notes"}
# What `vmap` made of `predict`, for 8 test digits: the jaxpr of a network with one hidden
# layer, so that the picture fits a slide (the real one's second layer repeats the first).

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: read a shape off the drawing
#
# In the drawing above, find the first `dot_general` and the shape of its output. Write
# `ex_first_matmul_shape(batch)` that returns that shape, as a tuple, for a batch of
# `batch` images.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_first_matmul_shape(batch):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_first_matmul_shape(batch):
    return (batch, 512)

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The label on the arrow leaving the first `dot_general` gives
# its shape for a batch of 8.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>Which of its numbers is the batch, and which the width of the
# first hidden layer?</details>

# %% slideshow={"slide_type": "skip"}
check(ex_first_matmul_shape)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_first_matmul_shape, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - loaded MNIST with every file's checksum verified;
# - made the parameters as a pytree with named layers, from an explicit key;
# - wrote `predict` for one image and batched it with `vmap`;
# - took the loss's gradient with `value_and_grad` and stepped SGD with momentum;
# - trained with one jitted `lax.scan` per epoch (98 % test accuracy in the full run).
