# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,slideshow,-all
#     formats: ipynb,py:percent
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
# # 06 · JAX against NumPy: the same network, honestly compared
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/06_jax_vs_numpy.ipynb)
#
# Lesson 05's MLP has a twin written in plain NumPy, in float64: forward and backward pass
# by hand, every matmul one BLAS call on the whole batch, every buffer updated in place.
# Starting from the same weights and fed the same batches, the two can be compared step
# by step. You will see:
#
# - that one step of the twin and of JAX agree to a few parts in ten million;
# - the **speed ladder**: NumPy float64 → NumPy float32 → JAX without `jit` → `jit` in a
#   Python loop → one compiled `lax.scan` per epoch, which separates what float32 buys
#   from what the compiler buys;
# - that both reach the same accuracy, and where float32 and float64 do differ, and why
#   it does not matter for this network.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The twin: same weights, converted to float64
#
# `NumpyTwin(params)` copies JAX's initial weights into float64 NumPy arrays. Its `step`
# is `update` written out by hand: the forward pass keeps each layer's activations, the
# backward pass multiplies by the transposed weights and by the ReLU's 0/1 mask, and SGD
# with momentum updates the arrays in place.
#
# By default a GPU rounds a float32 matmul's inputs to TensorFloat-32 (10 bits of
# mantissa) and a TPU runs it as bfloat16 passes; the step-by-step comparisons below ask
# for full float32 with `jax.default_matmul_precision("highest")` (on a CPU it changes
# nothing).

# %%
import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths
from jaxtour.mlp import NumpyTwin, init_params, load_mnist, loss, preprocess, update

mnist = load_mnist()
params = init_params(jax.random.key(0))
x = preprocess(mnist.train_images[:128])
y = jnp.asarray(mnist.train_labels[:128], jnp.int32)

with jax.default_matmul_precision("highest"):
    jax_params, _, jax_loss = update(params, x, y)
twin = NumpyTwin(params)  # float64
twin_loss = twin.step(np.asarray(x), np.asarray(y))


def largest_relative_difference(a, b) -> float:
    """max |a - b| / max |b| over every array of two params pytrees."""
    return max(float(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64)).max()
                     / np.abs(np.asarray(v, np.float64)).max())
               for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


step_difference = largest_relative_difference(jax_params, twin.params)
print(f"loss: JAX float32 {float(jax_loss):.7f}, NumPy float64 {twin_loss:.7f}")
print(f"weights after one step differ by at most {step_difference:.1e} (relative)")
assert twin.w[0].dtype == np.float64
assert step_difference < 1e-6  # float32 rounding, a few parts in ten million

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The speed ladder
#
# Five ways to run the same epoch, batch 128, from the same weights over the same
# batches, interleaved round after round; each time is a median, scaled to a full
# 60,000-image epoch:
#
# | rung | what changes |
# | --- | --- |
# | `numpy-f64` | the reference: BLAS matmuls, in place, no loop over samples |
# | `numpy-f32` | half the bytes, twice the numbers per SIMD instruction |
# | `jax-eager` | JAX without `jit`: every operation dispatched one by one from Python |
# | `jax-jit-loop` | `jit` of one step (the scan's body), called from a Python loop |
# | `jaxtour-train` | `train_epoch`: the whole epoch is one compiled program |
#
# "of matmul" is how much of this machine's float32 matrix-multiply rate (a jitted
# 2048×2048 matmul, measured in the same run) the epoch's own matmuls reach.

# %%
from jaxtour.mlp import format_ladder, plot_ladder, run_ladder

if paths.quick():  # CI: two rounds over 50 batches; the claims below still hold
    options = {"rounds": 2, "train_size": 6400, "eager_steps": 3}
else:
    options = {"rounds": 3, "train_size": 12_800, "eager_steps": 20}
ladder = run_ladder(mnist, log=None, **options)
print(format_ladder(ladder))
seconds = ladder["epoch_s"]
assert seconds["jaxtour-train"] < seconds["jax-jit-loop"] < seconds["jax-eager"]
assert seconds["jaxtour-train"] < seconds["numpy-f64"]

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The ladder, drawn

# %%
plot_ladder(ladder)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Every rung computed the same thing
#
# Each rung's mean training loss over the timed batches: the same weights and batches give
# the same numbers, within 0.1 % on a CPU (JAX without `jit` timed fewer batches, so it is
# left out). They are not identical: float32 rounding, and XLA's own fast `exp`/`log`,
# differ in the last bits, and a hundred SGD steps let those differences grow a little.
# The ladder runs at JAX's default precision, as your code does: on a GPU or TPU the
# matmuls' TF32 or bfloat16 rounding moves the JAX rungs by up to 1 %, still well inside
# what a different shuffle does to a loss.

# %%
losses = {name: round(value, 5) for name, value in ladder["epoch_loss"].items()}
print(losses)
tolerance = 1e-3 if jax.default_backend() == "cpu" else 1e-2
for name in ("numpy-f32", "jax-jit-loop", "jaxtour-train"):
    assert abs(ladder["epoch_loss"][name] / ladder["epoch_loss"]["numpy-f64"] - 1) < tolerance

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Accuracy: float32 JAX and float64 NumPy, trained side by side
#
# Both train for the same batches (`batch_indices` gives the twin the order that
# `train_epoch` makes from its key), then classify the 10,000 test digits.

# %%
from jaxtour.mlp import batch_indices, batched_predict, train_epoch

n_train = 6_400 if paths.quick() else 60_000
images = mnist.train_images[:n_train]
labels = np.asarray(mnist.train_labels[:n_train], np.int32)
key = jax.random.key(1)
x_test = preprocess(mnist.test_images)

with jax.default_matmul_precision("highest"):
    velocity = jax.tree.map(jnp.zeros_like, params)
    trained, _, _ = jax.jit(train_epoch)(params, velocity, images, labels, key)
    jax_predicted = np.asarray(jnp.argmax(batched_predict(trained, x_test), axis=-1))
twin = NumpyTwin(params)
twin.epoch(images, labels, np.asarray(batch_indices(key, n_train, 128)))
twin_predicted = np.argmax(twin.predict(twin.preprocess(mnist.test_images)), axis=-1)

jax_accuracy = np.mean(jax_predicted == mnist.test_labels)
twin_accuracy = np.mean(twin_predicted == mnist.test_labels)
disagree = np.mean(jax_predicted != twin_predicted)
epoch_difference = largest_relative_difference(trained, twin.params)
print(f"test accuracy: JAX float32 {jax_accuracy:.2%}, NumPy float64 {twin_accuracy:.2%}")
print(f"they disagree on {disagree:.2%} of the test digits; weights differ by "
      f"{epoch_difference:.1e} after {n_train // 128} steps")
assert abs(jax_accuracy - twin_accuracy) <= 0.005
assert disagree < 0.01

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where float32 and float64 differ
#
# float32 keeps 24 bits of mantissa, about 7 decimal digits; float64 keeps 53, about 16.
# Each operation rounds: one step of training differs by about float32's epsilon. Each
# step starts from the last one's rounded weights, so the differences accumulate and the
# two weight sets drift apart, slowly…

# %%
print(f"float32 epsilon {np.finfo(np.float32).eps:.1e}, float64 epsilon "
      f"{np.finfo(np.float64).eps:.1e}")
print(f"after 1 step: {step_difference:.1e}; after {n_train // 128} steps: "
      f"{epoch_difference:.1e}")
assert np.float32(1) + np.float32(1e-8) == np.float32(1)  # lost below float32's epsilon
assert np.float64(1) + np.float64(1e-8) != np.float64(1)
assert epoch_difference > step_difference

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … and why it does not matter here
#
# SGD never sees the true gradient: each step uses one batch of 128 images, a noisy
# estimate. Compare the two kinds of error in a gradient: rounding (the same batch in
# float32 and in float64) against sampling (two different batches, both in float64).

# %%
twin = NumpyTwin(params)
with jax.default_matmul_precision("highest"):
    g32 = jax.grad(loss)(params, x, y)
_, g64 = twin.loss_and_grads(np.asarray(x), np.asarray(y))
x2 = preprocess(mnist.train_images[128:256])
_, g64_other = twin.loss_and_grads(np.asarray(x2), np.asarray(mnist.train_labels[128:256]))
rounding = largest_relative_difference(g32, g64)
sampling = largest_relative_difference(g64_other, g64)
print(f"rounding: {rounding:.1e}, sampling: {sampling:.1e}, ratio {sampling / rounding:,.0f}")
assert sampling > 1000 * rounding

# %% [markdown]
# The batch-to-batch noise SGD lives with is thousands of times larger than what float32
# rounding adds, and the network ends as accurate either way. What float64 costs (twice
# the memory traffic, half the SIMD width, and on GPUs and TPUs often far less than half
# the speed) buys nothing for this network. Where it would matter: ill-conditioned solves,
# long sums of numbers of very different sizes, and quantities that are small differences
# of large ones.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - checked the float64 NumPy twin against JAX: one step agrees to float32 precision;
# - climbed the speed ladder from NumPy float64 to one compiled scan per epoch, with every
#   rung computing the same losses, and measured how much of the machine's matmul rate
#   each reaches;
# - trained both side by side to the same test accuracy;
# - saw float32's rounding grow over many steps and stay far below SGD's own noise.
