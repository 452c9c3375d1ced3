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
# - a whole epoch as **one jitted `lax.scan`**;
# - a **mixed-precision** step: bfloat16 arithmetic, float32 master weights;
# - **keys** that never repeat, **`checkify`**.
#
# *About 45 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import collections

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

# %% [markdown] slideshow={"slide_type": "notes"}
# The first 16 training digits with their labels. Pixels are `uint8`, 0 to 255; the
# model sees them flattened to 784 numbers and standardised (next slides).

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
# compared in NumPy: no eager compile per leaf
assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(params),
                                                 jax.tree.leaves(same), strict=True))

# %% [markdown] slideshow={"slide_type": "notes"}
# The same key gives the same weights on the same JAX version and device kind: the check
# asserts it. JAX promises the *distribution*, not the exact values: JAX 0.5.0 changed
# every key's values (`jax_threefry_partitionable` became the default). Save the weights
# (lesson 08's Orbax) to get the very same network elsewhere.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# Write the model for one example, the way the maths reads, and let `vmap` add the batch
# dimension. `in_axes=(None, 0)`: the params are shared, the images split along axis 0.
# No reshaping, no batch loops.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `predict` on the test set

# %%
from jaxtour.mlp import batched_predict, predict, preprocess

x_test = preprocess(mnist.test_images)  # flattened, standardised
y_test = jnp.asarray(mnist.test_labels, jnp.int32)
with jax.default_matmul_precision("highest"):  # about float32 everywhere: see the notes
    one = predict(params, x_test[0])
    batch = batched_predict(params, x_test[:8])
print(one.shape, batch.shape)

# %% tags=["check"] jupyter={"source_hidden": true}
assert one.shape == (10,) and batch.shape == (8, 10)
# summation order differs (matrix-vector against matrix-matrix): the error scales
# with eps * sum|terms|, so a few test images need 1e-4 (rtol=1e-5 failed 5 of 193)
np.testing.assert_allclose(batch[0], one, rtol=1e-4, atol=1e-5)

# %% [markdown] slideshow={"slide_type": "notes"}
# `vmap` turns `predict`'s matrix-vector products into matrix-matrix ones. At default
# precision a GPU (TF32) or TPU (bfloat16 passes) may round the two differently;
# `"highest"` asks for float32 (on a TPU, bfloat16 passes close to it), so one image and
# the batch's first row agree to float32 rounding. `preprocess` flattens and standardises.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# A uniform guess over 10 digits has cross-entropy ln 10 and is right a tenth of the
# time. Random initial logits are not exactly uniform, so loss and accuracy land near
# those values, not on them.

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
# All of an epoch's batches loop *inside* the program: one call from Python per epoch. The images
# go to the device once, as `uint8`; `donate_argnums=(0, 1)` lets XLA reuse the weights'
# buffers. A Python loop would pay a dispatch per step (about 5–30 µs): hidden behind a
# CPU's milliseconds, visible on a GPU. Lesson 06 measures both.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
if paths.quick():  # CI: a slice of the data and two epochs; the assertions still hold
    data, epochs, target = mnist.subset(6_400), 2, 0.90
else:
    data, epochs, target = mnist, 10, 0.98

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Training: each epoch one compiled program

# %%
from jaxtour.mlp import train

params, history = train(data, epochs=epochs, seed=0, progress=False)
print(f"compile {history.compile_seconds:.2f} s, then "
      f"{np.mean(history.epoch_seconds):.2f} s per epoch of {len(data.train_images):,} images")
print(f"test accuracy {history.test_accuracy[-1]:.2%} after {epochs} epochs")

# %% tags=["check"] jupyter={"source_hidden": true}
assert history.test_accuracy[-1] >= target
assert history.loss[-1] < history.loss[0]

# %% [markdown] slideshow={"slide_type": "notes"}
# Compiling `train_epoch` is timed apart from the epochs. The full run: 10 epochs of
# all 60,000 images, about 98 % on the test set; a shorter run (CI's) trains on a slice
# for two epochs. The numbers printed are this run's.

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
# Two programs (this one and train's evaluation) may round near-ties differently at
# TF32 or bfloat16: allow a handful of flips among 10,000 digits, not a different model.
assert abs(np.mean(predicted == mnist.test_labels) - history.test_accuracy[-1]) <= 0.002

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

# %% [markdown] slideshow={"slide_type": "notes"}
# `train` put the data on JAX's default device, and every array the epochs made stayed
# there: nothing returned to the host until we asked. `.devices()` says where an array
# lives; `jax.device_put` moves it.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Mixed precision: a dtype policy
#
# Three dtypes, each for one kind of value: the **parameters** stay float32, matmuls
# and activations are bfloat16 (**compute**), logits and loss float32 (**output**).
# Casts go where one kind meets another.

# %%
from typing import Any, NamedTuple


class Policy(NamedTuple):
    param: Any = jnp.float32     # the master weights and their update
    compute: Any = jnp.bfloat16  # matmuls, activations
    output: Any = jnp.float32    # logits, loss


POLICY = Policy()


def logits_mixed(params, images, policy=POLICY):  # images: f32[batch, 784]
    h = images.astype(policy.compute)
    for name in ("hidden1", "hidden2", "output"):
        layer = jax.tree.map(lambda a: a.astype(policy.compute), params[name])  # per call
        z = h @ layer["w"] + layer["b"]  # bfloat16 out; the matrix unit sums in float32
        h = jax.nn.relu(z)
    return z.astype(policy.output)  # the output layer's logits, f32[batch, 10]

# %% [markdown] slideshow={"slide_type": "notes"}
# bfloat16 keeps float32's range (8 exponent bits) but 8 significant bits: no loss
# scaling, unlike float16. TPU matrix units and GPU tensor cores multiply bfloat16, add
# in float32 and round. (`preferred_element_type=jnp.float32` keeps a float32 result;
# backward matmuls then take float32 cotangents and run in float32, slower.) Flax's
# layers take the same dtypes: `param_dtype`, `dtype`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Inference with the trained float32 weights

# %%
logits_bf16 = jax.jit(logits_mixed)(params, x_test)
same = np.mean(np.argmax(logits_bf16, -1) == np.argmax(batched_predict(params, x_test), -1))
mb = sum(leaf.nbytes for leaf in jax.tree.leaves(params)) / 1e6
print(f"{logits_bf16.dtype} logits, {same:.2%} same answers; weights {mb:.2f} MB, "
      f"a bfloat16 copy {mb / 2:.2f} MB")

# %% tags=["check"] jupyter={"source_hidden": true}
assert logits_bf16.dtype == jnp.float32 and same > 0.97
matmuls = [e for e in jax.make_jaxpr(logits_mixed)(params, x_test[:2]).jaxpr.eqns
           if e.primitive.name == "dot_general"]
assert len(matmuls) == 3
assert all(str(v.aval.dtype) == "bfloat16" for e in matmuls for v in (*e.invars, *e.outvars))
assert jnp.finfo(jnp.bfloat16).nmant == 7 and jnp.finfo(jnp.bfloat16).maxexp == 128
assert all(leaf.dtype == jnp.float32 for leaf in jax.tree.leaves(params))  # not replaced

# %% [markdown] slideshow={"slide_type": "notes"}
# Almost every test digit gets the same answer as in float32. Serving often stores the
# bfloat16 copy (half the bytes); the policy casts per call, so `params` stay float32.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A mixed-precision training step
#
# The gradient of the float32 masters, computed in bfloat16; the update in float32.

# %%
def loss_mixed(masters, images, labels):  # masters: the float32 weights
    log_p = jax.nn.log_softmax(logits_mixed(masters, images))  # float32
    return -jnp.mean(jnp.take_along_axis(log_p, labels[:, None], axis=1))


@jax.jit
def step_mixed(masters, images, labels):
    value, grads = jax.value_and_grad(loss_mixed)(masters, images, labels)
    return jax.tree.map(lambda w, g: w - LR * g, masters, grads), value  # f32 update


jaxpr = jax.make_jaxpr(jax.grad(loss_mixed))(params, x, y)
casts = collections.Counter(f"{e.invars[0].aval.dtype}->{e.outvars[0].aval.dtype}"
                            for e in jaxpr.eqns if e.primitive.name == "convert_element_type")
print(dict(casts))

# %% tags=["check"] jupyter={"source_hidden": true}
converts = [(str(e.invars[0].aval.dtype), str(e.outvars[0].aval.dtype), e.outvars[0].aval.shape)
            for e in jaxpr.eqns if e.primitive.name == "convert_element_type"]
for layer in params.values():  # each master goes down to bfloat16 and its gradient comes
    shape = layer["w"].shape   # back up to float32: the cast and its transpose
    assert ("float32", "bfloat16", shape) in converts
    assert ("bfloat16", "float32", shape) in converts
dots = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
assert len(dots) == 8  # forward 3; backward 2 per layer, less the pixels' gradient
assert all(str(v.aval.dtype) == "bfloat16" for e in dots for v in e.invars)  # all of them
grad_types = jax.eval_shape(jax.grad(loss_mixed), params, x, y)  # traced, not run
assert {g.dtype for g in jax.tree.leaves(grad_types)} == {jnp.dtype(jnp.float32)}

# %% [markdown] slideshow={"slide_type": "notes"}
# Forward, images, weights and biases go down to bfloat16, the logits up to float32.
# Backward, a cast's transpose casts back: gradients are float32 in dtype, bfloat16 in
# precision. The masters keep small updates from rounding away; activations kept for
# backward are bfloat16. Counts as in JAX 0.10.2 and 0.12.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Training: float32 masters, bfloat16 arithmetic
#
# 20 steps from fresh weights; beside them the same steps in float32: `update` with
# `momentum=0` is this plain SGD step.

# %%
masters = weights_f32 = init_params(jax.random.key(1), dtype=POLICY.param)
curve_mixed, curve_f32 = [], []
for i in range(20):
    xb = preprocess(mnist.train_images[128 * i:128 * (i + 1)])
    yb = jnp.asarray(mnist.train_labels[128 * i:128 * (i + 1)], jnp.int32)
    masters, value = step_mixed(masters, xb, yb)
    curve_mixed.append(float(value))
    weights_f32, _, value = update(weights_f32, xb, yb, lr=LR, momentum=0.0)
    curve_f32.append(float(value))
print(f"loss, mixed: {curve_mixed[0]:.2f} -> {curve_mixed[-1]:.2f}; "
      f"float32: {curve_f32[0]:.2f} -> {curve_f32[-1]:.2f}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert all(w.dtype == jnp.float32 for w in jax.tree.leaves(masters))  # still f32 masters
assert np.mean(curve_mixed[-5:]) < 0.5 * curve_mixed[0]  # it learns
assert abs(np.mean(curve_mixed[-5:]) - np.mean(curve_f32[-5:])) < 0.1  # as float32 does

# %% [markdown] slideshow={"slide_type": "notes"}
# The mixed run follows the float32 run on the same batches. Speed is the accelerator's
# gain: bfloat16 halves the bytes everywhere and doubles a GPU's tensor-core rate
# against TF32; a TPU's default float32 matmul is already one bfloat16 pass. A CPU may
# emulate bfloat16 matmuls, so it is no faster here.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Why the masters stay float32

# %%
stepped, _ = step_mixed(masters, x, y)  # the float32 update of the masters
w, new_w = masters["hidden1"]["w"], stepped["hidden1"]["w"]
lost_bf16 = float(jnp.mean(new_w.astype(jnp.bfloat16) == w.astype(jnp.bfloat16)))
lost_f32 = float(jnp.mean(new_w == w))
print(f"updates that round away: {lost_bf16:.0%} in bfloat16 weights, {lost_f32:.2%} in float32")

# %% tags=["check"] jupyter={"source_hidden": true}
assert lost_bf16 > 0.1 and lost_f32 < 0.01
small_weight, small_step = jnp.float32(0.05), jnp.float32(LR * 0.002)
assert small_weight - small_step != small_weight  # float32 moves
as_bf16 = small_weight.astype(jnp.bfloat16)
assert as_bf16 - small_step.astype(jnp.bfloat16) == as_bf16  # bfloat16 does not

# %% [markdown] slideshow={"slide_type": "notes"}
# A step is about 1/1000 of a weight; bfloat16's 8 bits resolve about 1/256, so most
# updates would vanish. fp8 (`jnp.float8_e4m3fn`, `float8_e5m2`: JAX 0.10.2 has both)
# goes further: 8-bit matmul inputs with per-tensor scales, on NVIDIA Ada and Hopper
# or newer and recent AMD and TPU chips; elsewhere XLA computes in a wider type.

# %% [markdown] slideshow={"slide_type": "skip"}
# And the other way, float64: `jax.config.update("jax_enable_x64", True)` (or the
# `jax.enable_x64()` context, JAX 0.8.0 and later) allows 64-bit arrays. CPUs and GPUs
# compute float64 in hardware (most GPUs far slower than float32); TPUs have no float64
# units, so XLA emulates it there, much more slowly. Keep x64 for the few computations
# that need it (lesson 06 shows this network does not).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Keys: never use one twice
#
# Inside a `scan`, derive each step's key with `jax.random.fold_in(key, step)`.

# %%
key = jax.random.key(7)


def noise(key, steps, fresh):
    def body(carry, step):
        step_key = jax.random.fold_in(key, step) if fresh else key  # the bug: `key`
        return carry, jax.random.bernoulli(step_key, 0.5, (8,))  # e.g. a dropout mask
    return jax.lax.scan(body, None, jnp.arange(steps))[1]


reused, fresh = noise(key, 4, fresh=False), noise(key, 4, fresh=True)
for name, masks in (("reused key", reused), ("fold_in(key, step)", fresh)):
    print(f"{name:>18}:", *("".join(str(int(b)) for b in mask) for mask in masks))

# %% tags=["check"] jupyter={"source_hidden": true}
reused_masks, fresh_masks = np.asarray(reused), np.asarray(fresh)  # compared in NumPy
assert (reused_masks == reused_masks[0]).all()  # the same mask every step
assert len({tuple(row) for row in fresh_masks.tolist()}) > 1  # different masks
step_2 = jax.random.bernoulli(jax.random.fold_in(key, 2), 0.5, (8,))
assert np.array_equal(fresh_masks[2], step_2)
assert np.array_equal(noise(key, 4, fresh=True), fresh_masks)  # reproducible: a pure function

# %% [markdown] slideshow={"slide_type": "notes"}
# Reusing a key is silent: same "random" mask every step. `fold_in(key, step)` mixes an
# integer into the key: cheap, reproducible, fine with a traced step. `split` makes new
# keys. `train` does this: each epoch's shuffle folds the epoch number into one key.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `checkify`: errors from inside compiled code
#
# Compiled code cannot raise. JAX clamps an out-of-bounds index silently; `checkify`
# adds the check and returns the error as a value.

# %%
from jax.experimental import checkify


def pick(logits, label):
    return logits[label]  # label 10 does not exist


checked_pick = jax.jit(checkify.checkify(pick, errors=checkify.index_checks))
print("plain jit:", float(jax.jit(pick)(logits_bf16[0], 10)))
error, value = checked_pick(logits_bf16[0], 10)
print("checkified:", error.get())

# %% tags=["check"] jupyter={"source_hidden": true}
assert float(jax.jit(pick)(logits_bf16[0], 10)) == float(logits_bf16[0, 9])  # clamped
assert error.get() is not None  # caught (its wording is JAX's, not asserted)
assert checked_pick(logits_bf16[0], 3)[0].get() is None  # a valid label: no error
try:
    error.throw()
    raised = False
except checkify.JaxRuntimeError:  # the class is the contract
    raised = True
assert raised

# %% [markdown] slideshow={"slide_type": "notes"}
# `logits[label]` with a scalar index is a `dynamic_slice`, which clamps its start
# index: `logits[10]` reads `logits[9]`, no error.
# `checkify` adds the checks you ask for (`index_checks`, `nan_checks`, `float_checks`,
# or your own `checkify.check`) and returns an `Error`; `error.throw()` raises it in
# Python. It costs run time: use it while debugging.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/05_mnist_mlp.ipynb`, or the Colab badge. Hint: `in_axes` has one entry per
# argument; `None` for the params every example shares, `0` for images and labels.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/05_mnist_mlp.ipynb`, or the Colab badge. Hint: `jnp.argmax(logits, axis=-1)`
# gives each row's class; the mean of booleans is a fraction.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# About 3 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/05_mnist_mlp.ipynb`, or the Colab badge. Hint: read the edge leaving the
# first `dot_general` (batch 8): which number is the batch, which the layer's width?

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - loaded MNIST, every file's checksum verified;
# - made the parameters as a pytree, from an explicit key;
# - wrote `predict` for one image, batched it with `vmap`;
# - stepped SGD with momentum on `value_and_grad`;
# - trained one jitted `lax.scan` per epoch (98 % in the full run);
# - trained in bfloat16 with float32 masters, under a dtype policy;
# - folded fresh keys, caught an out-of-bounds index with `checkify`.
