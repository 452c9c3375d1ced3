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
# # 06 · JAX against NumPy: the same network, honestly compared
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/06_jax_vs_numpy.ipynb)
#
# You will learn:
#
# - that one step of a float64 NumPy twin and of JAX agree to float32 precision;
# - the **speed ladder**, and which part of each gain is float32, the matmul library,
#   dispatch or fusion;
# - both on a measured **roofline**;
# - why float32 and float64 weights drift far apart, yet classify equally well.
#
# *About 30 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths
from jaxtour.exercises import check
from jaxtour.mlp import NumpyTwin, init_params, load_mnist, loss, preprocess, update
from jaxtour.viz import draw_jaxpr

mnist = load_mnist()


def largest_relative_difference(a, b) -> float:
    """max |a - b| / max |b| over every array of two params pytrees (in float64)."""
    return max(float(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64)).max()
                     / np.abs(np.asarray(v, np.float64)).max())
               for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


def weight_norm_differences(a, b) -> dict[str, float]:
    """||a - b|| / ||b|| of each layer's weight matrix `w`, in float64."""
    return {name: float(np.linalg.norm(np.asarray(a[name]["w"], np.float64) - b[name]["w"])
                        / np.linalg.norm(b[name]["w"]))
            for name in b}


def best_seconds(fn, repeat=3):
    """The fastest of `repeat` runs of fn() (its result waited for), in seconds."""
    jax.block_until_ready(fn())  # compile and warm up first
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return min(times)


# %% [markdown] slideshow={"slide_type": "slide"}
# ## The twin: the same weights, in float64
#
# `NumpyTwin` is lesson 05's MLP by hand in NumPy: every matmul one BLAS call, every
# buffer updated in place. One step from the same weights and batch:

# %%
params = init_params(jax.random.key(0))
x = preprocess(mnist.train_images[:128])
y = jnp.asarray(mnist.train_labels[:128], jnp.int32)

with jax.default_matmul_precision("highest"):  # full float32 on GPU/TPU too
    jax_params, _, jax_loss = update(params, x, y)
twin = NumpyTwin(params)  # float64
twin_loss = twin.step(np.asarray(x), np.asarray(y))

step_difference = largest_relative_difference(jax_params, twin.params)
print(f"loss: JAX float32 {float(jax_loss):.7f}, NumPy float64 {twin_loss:.7f}")
print(f"weights after one step differ by at most {step_difference:.1e} (relative)")

# %% tags=["check"] jupyter={"source_hidden": true}
assert twin.w[0].dtype == np.float64
assert step_difference < 1e-6  # float32 rounding, a few parts in ten million

# %% [markdown] slideshow={"slide_type": "notes"}
# The twin's `step` is `update` written out: the forward pass keeps each layer's
# activations, the backward pass multiplies by the transposed weights and by the ReLU's
# 0/1 mask, and SGD with momentum updates the arrays in place.
#
# Why `default_matmul_precision("highest")`: at JAX's *default* precision a float32
# matmul is not float32 everywhere. A TPU runs it as one bfloat16 pass (8 significant
# bits), an Ampere-or-newer NVIDIA GPU (A100, H100, L4) in TensorFloat-32 (11 bits); a T4
# or V100 and a CPU compute in full float32 (24 bits). "About 7 digits" holds for elementwise
# operations everywhere, for matmuls only at `"highest"`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The speed ladder
#
# | rung | what changes |
# | --- | --- |
# | `numpy-f64` | the reference: BLAS, in place |
# | `numpy-f32` | half the bytes, twice the numbers per SIMD instruction |
# | `jax-eager` | JAX without `jit`: one operation at a time |
# | `jax-jit-loop` | `jit` of one step, called from a Python loop |
# | `jaxtour-train` | the whole epoch one compiled `lax.scan` |
# | `matmuls-…` | control: the step's 8 matmuls alone, NumPy or JAX |

# %% [markdown] slideshow={"slide_type": "notes"}
# Every rung trains batch 128 from the same weights over the same batches; the rungs run
# interleaved, round after round, so a busy moment hits every rung, not one alone. Each time is
# scaled to a full 60,000-image epoch; the table gives the median round and the fastest
# and slowest. The two `matmuls-` rows are the control: one step's eight matrix products,
# with the same shapes and nothing else, in NumPy float32 (BLAS) and in jitted JAX (XLA's
# own dot). "of matmul" is the share of this machine's float32 matmul rate (a jitted
# 2048×2048 product, measured in the same run) that each epoch's matmuls reach.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.mlp import format_ladder, plot_ladder, run_ladder

if paths.quick():  # CI: two rounds over 50 batches; the claims below still hold
    options = {"rounds": 2, "train_size": 6400, "eager_steps": 5}
else:
    options = {"rounds": 3, "train_size": 12_800, "eager_steps": 20}

# %% slideshow={"slide_type": "subslide"}
ladder = run_ladder(mnist, log=None, **options)  # a minute or two
seconds = ladder["epoch_s"]
print(format_ladder(ladder))

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The ladder, drawn

# %%
plot_ladder(ladder)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Every rung computed the same thing
#
# Each rung's mean training loss over the timed batches (JAX without `jit` timed fewer
# batches, so it is left out):

# %%
losses = {name: round(value, 5) for name, value in ladder["epoch_loss"].items()}
print(losses)

# %% tags=["check"] jupyter={"source_hidden": true}
tolerance = 1e-3 if jax.default_backend() == "cpu" else 1e-2
for name in ("numpy-f32", "jax-jit-loop", "jaxtour-train"):
    assert abs(ladder["epoch_loss"][name] / ladder["epoch_loss"]["numpy-f64"] - 1) < tolerance

# %% [markdown] slideshow={"slide_type": "notes"}
# The same weights and batches give the same numbers, within 0.1 % on a CPU. They are not
# identical: float32 rounding, and XLA's own fast `exp`/`log`, differ in the last bits,
# and a hundred SGD steps let those differences grow. The ladder runs at JAX's default
# precision, as your code does: on a GPU or TPU the matmuls' TF32 or bfloat16 rounding
# moves the JAX rungs by up to 1 %, still well inside what a different shuffle does.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where a step's time goes: matmuls and the rest
#
# The control splits each step into its eight matmuls and everything else (bias, ReLU,
# softmax, the update), which XLA fuses into a few loops and NumPy runs one pass each.

# %%
per_step = {name: 1e3 * s / ladder["steps_per_epoch"] for name, s in seconds.items()}
for label, step, matmuls in (("NumPy f32", "numpy-f32", "matmuls-numpy-f32"),
                             ("JAX scan", "jaxtour-train", "matmuls-jax")):
    print(f"{label}: {per_step[step]:.2f} ms per step = matmuls {per_step[matmuls]:.2f}"
          f" + the rest {per_step[step] - per_step[matmuls]:+.2f}")
gemm_ratio = seconds["matmuls-numpy-f32"] / seconds["matmuls-jax"]
print(f"the same matmuls: BLAS takes {gemm_ratio:.2f}x as long as XLA's dot")

# %% tags=["check"] jupyter={"source_hidden": true}
fastest = {name: low for name, (low, _, _) in ladder["spread_s"].items()}  # least disturbed
# XLA's dot keeps up with BLAS within a small factor: 2x failed once in CI's quick run on
# JAX 0.12 with a newer OpenBLAS, so the margin is 4x; a quiet machine measures about 1x.
assert fastest["matmuls-numpy-f32"] > 0.25 * fastest["matmuls-jax"]
if jax.default_backend() == "cpu":  # the compiled step is matmul-bound
    assert fastest["matmuls-jax"] > 0.5 * fastest["jaxtour-train"]

# %% [markdown] slideshow={"slide_type": "notes"}
# On a quiet CPU the two libraries multiply these batch-128 matrices at a similar rate
# (within a small factor, depending on the JAX and OpenBLAS versions), and the matmuls
# are most of a compiled step: the network is matmul-bound, and what
# XLA wins over NumPy float32 is in the rest, where fusion does in one pass over memory
# what NumPy does in several. ("The rest" can come out slightly negative: inside one
# program XLA picks the matmuls' layouts; the control calls them one by one.)
#
# On a busy CPU (other programs on the same cores) the picture changes: NumPy's BLAS
# (OpenBLAS in NumPy's wheels) runs threads that busy-wait for one another, and they lose
# far more than XLA's. Measured on this course's 2-core machine under load, the control's
# BLAS took several times as long as XLA's dot, and so did every NumPy rung. The checks
# therefore use each rung's fastest round, the one least disturbed by the rest of the
# machine. `numpy-f64` against `numpy-f32` is the number format: half the bytes, twice the
# numbers per SIMD instruction. On a GPU or TPU the matmuls themselves are the gain.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Both on this machine's roofline
#
# The same FLOPs; NumPy moves more bytes: no fusion, and float64 doubles each one.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.cost import draw_roofline

# %%
roof = draw_roofline(update)(params, x, y)  # the jitted step, batch 128
unfused_bytes = sum(row.bytes for row in roof.table.equations)  # one pass per equation
numpy_s = {name: ladder["spread_s"][name][0] / ladder["steps_per_epoch"]
           for name in ("numpy-f32", "numpy-f64")}  # fastest round, per step
for name, width in (("numpy-f32", 1), ("numpy-f64", 2)):  # float64: twice the bytes
    per_byte = roof.table.flops / (width * unfused_bytes)
    rate = roof.table.flops / numpy_s[name]
    roof.add(name, per_byte, rate)
    print(f"{name}: {per_byte:.3g} FLOP/B, {rate / 1e9:.3g} GFLOP/s")
print(f"jax-jit: {roof.table.intensity:.3g} FLOP/B, {roof.flops_per_s / 1e9:.3g} GFLOP/s")

# %% tags=["check"] jupyter={"source_hidden": true}
assert x.shape[0] == 128 and unfused_bytes > roof.table.bytes  # fusion saves traffic
float32_intensity = roof.table.flops / unfused_bytes
assert roof.table.flops / (2 * unfused_bytes) < float32_intensity < roof.table.intensity

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The roofline, drawn

# %%
roof

# %% [markdown] slideshow={"slide_type": "notes"}
# The diamonds are the NumPy rungs, placed by the kit's count: the step's FLOPs over the
# bytes its jaxpr would move equation by equation, which is how NumPy runs it (each
# operation reads its operands from memory and writes its result back), doubled for
# float64. Their height is their measured rate (the fastest ladder round). Float64 also
# lowers the roof itself: a SIMD instruction holds half as many float64 numbers, so a
# CPU's float64 matmul peak is about half its float32 one; the roof drawn is float32's.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Dispatch: where a scan beats a Python loop
#
# Each call of a jitted function from Python costs some microseconds to dispatch. A tiny
# model makes that cost visible: the same 2,000 steps as a loop and as one `lax.scan`.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
tiny = init_params(jax.random.key(2), sizes=(16, 16, 10))
tiny_v = jax.tree.map(jnp.zeros_like, tiny)
xs = jax.random.normal(jax.random.key(3), (2000, 8, 16))
ys = jax.random.randint(jax.random.key(4), (2000, 8), 0, 10)

# %%
@jax.jit
def tiny_step(p, v, xs, ys, i):
    return update(p, xs[i], ys[i], v)[:2]

@jax.jit
def tiny_scan(p, v, xs, ys):
    def body(carry, batch):
        p, v, batch_loss = update(*carry[:1], *batch, carry[1])
        return (p, v), batch_loss
    return jax.lax.scan(body, (p, v), (xs, ys))[0]

# %% slideshow={"slide_type": "subslide"}
def python_loop(p, v):
    for i in range(len(xs)):
        p, v = tiny_step(p, v, xs, ys, i)
    return p, v

loop_step = best_seconds(lambda: python_loop(tiny, tiny_v)) / len(xs)
scan_step = best_seconds(lambda: tiny_scan(tiny, tiny_v, xs, ys)) / len(xs)
print(f"per step: Python loop {loop_step * 1e6:.1f} µs, scan {scan_step * 1e6:.2f} µs")

# %% tags=["check"] jupyter={"source_hidden": true}
assert loop_step > 3 * scan_step  # dispatch dominates a step this small

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … and why the MLP's scan wins little on a CPU
#
# JAX dispatches asynchronously: Python queues the next step while the last one computes.
# Dispatch shows only when it takes longer than a step's compute.

# %%
dispatch = loop_step - scan_step  # about what one call from Python costs
mlp_step = seconds["jaxtour-train"] / ladder["steps_per_epoch"]
print(f"dispatch {dispatch * 1e6:.0f} µs against one MLP step of {mlp_step * 1e3:.2f} ms")
print(f"per epoch: jit in a loop {seconds['jax-jit-loop']:.2f} s, "
      f"scan {seconds['jaxtour-train']:.2f} s, eager {seconds['jax-eager']:.1f} s")

# %% tags=["check"] jupyter={"source_hidden": true}
fastest_step = fastest["jaxtour-train"] / ladder["steps_per_epoch"]
if dispatch > fastest_step:  # dispatch shows (a fast GPU or TPU): the scan must win
    assert fastest["jaxtour-train"] < 0.8 * fastest["jax-jit-loop"]
elif jax.default_backend() == "cpu":  # dispatch hides behind a step's compute
    assert dispatch < 0.5 * fastest_step
# without jit, each of a step's hundred-odd operations is dispatched on its own: an eager
# step costs as much as dozens of jitted calls (measured: hundreds)
eager_step = fastest["jax-eager"] / ladder["steps_per_epoch"]
assert eager_step > 20 * dispatch
# float32 and a compiled program against float64 BLAS calls
assert fastest["jaxtour-train"] < fastest["numpy-f64"]

# %% [markdown] slideshow={"slide_type": "notes"}
# On a CPU one MLP step is a few milliseconds of matmuls, and dispatch (tens to hundreds
# of microseconds) hides behind it: the jitted step in a loop and the scanned epoch take
# about the same time, and which comes out ahead changes from run to run. On a GPU the
# same step takes tens of microseconds, dispatch no longer hides, and the scan wins
# several-fold (an H100, in this project's runs: 81 ms per epoch for the loop, 17 ms for
# the scan). On a busy CPU the loop can lose too: its Python thread waits for a core.
# `jax-eager` is far behind either: without `jit`, each of the step's hundred-odd
# operations goes through autodiff in Python and is dispatched alone, and none is fused.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Accuracy: float32 JAX and float64 NumPy, trained side by side
#
# Both train on the same batches (`batch_indices` gives the twin the order that
# `train_epoch` makes from its key), then classify the 10,000 test digits.

# %%
from jaxtour.mlp import batch_indices, batched_predict, train_epoch

n_train = 60_000  # one full epoch, quick or not: the drift below needs all 468 steps
images = mnist.train_images[:n_train]
labels = np.asarray(mnist.train_labels[:n_train], np.int32)
key = jax.random.key(1)
with jax.default_matmul_precision("highest"):
    velocity = jax.tree.map(jnp.zeros_like, params)
    trained, _, _ = jax.jit(train_epoch)(params, velocity, images, labels, key)
twin = NumpyTwin(params)
twin_losses = twin.epoch(images, labels, np.asarray(batch_indices(key, n_train, 128)))

# %% slideshow={"slide_type": "subslide"}
x_test = preprocess(mnist.test_images)
with jax.default_matmul_precision("highest"):
    jax_predicted = np.asarray(jnp.argmax(batched_predict(trained, x_test), axis=-1))
twin_predicted = np.argmax(twin.predict(twin.preprocess(mnist.test_images)), axis=-1)
jax_accuracy = np.mean(jax_predicted == mnist.test_labels)
twin_accuracy = np.mean(twin_predicted == mnist.test_labels)
disagree = np.mean(jax_predicted != twin_predicted)
print(f"test accuracy: JAX float32 {jax_accuracy:.2%}, NumPy float64 {twin_accuracy:.2%}")
print(f"they disagree on {disagree:.2%} of the test digits")

# %% tags=["check"] jupyter={"source_hidden": true}
assert abs(jax_accuracy - twin_accuracy) <= 0.005
assert disagree < 0.02

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where float32 and float64 differ: the weights drift apart fast
#
# Every operation rounds, so one step differs by about float32's epsilon. Training then
# amplifies that difference, step after step.

# %%
epoch_difference = largest_relative_difference(trained, twin.params)
growth = epoch_difference / step_difference
layer_differences = weight_norm_differences(trained, twin.params)
print(f"float32 epsilon {np.finfo(np.float32).eps:.1e}, float64 {np.finfo(np.float64).eps:.1e}")
print(f"weights differ by {step_difference:.1e} after 1 step, {epoch_difference:.1e} after "
      f"{n_train // 128} steps: {growth:,.0f} times as much")
print("each weight matrix, in norm:",
      ", ".join(f"{name} {d:.1%}" for name, d in layer_differences.items()))

# %% tags=["check"] jupyter={"source_hidden": true}
assert np.float32(1) + np.float32(1e-8) == np.float32(1)  # lost below float32's epsilon
assert np.float64(1) + np.float64(1e-8) != np.float64(1)
assert growth > 1e4  # not a slow drift: orders of magnitude in one epoch
assert all(0.001 < d < 0.3 for d in layer_differences.values())  # per cents, no more

# %% [markdown] slideshow={"slide_type": "notes"}
# The difference does not creep up by an epsilon per step. Each step's gradient is
# computed from the last step's weights, so a difference in the weights becomes a
# difference in the gradient, and through the ReLUs (a unit that switches on in one run
# and off in the other) and momentum, SGD amplifies it: over one full epoch, by about a
# million, to a few per cent of each weight matrix in norm (more for the biases, which
# start at zero and stay small). Two float32 runs on different hardware, or
# in a different summation order, drift apart in the same way; it is what SGD does to
# any small perturbation, not a flaw of float32.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … and why it does not matter here
#
# Compare the two kinds of error in one gradient: rounding (one batch, float32 against
# float64) and sampling (two batches, both float64).

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

# %% tags=["check"] jupyter={"source_hidden": true}
assert sampling > 1000 * rounding

# %% [markdown] slideshow={"slide_type": "notes"}
# The batch-to-batch noise SGD lives with is thousands of times larger than what float32
# rounding adds, so the two runs end at different weights that are equally good: the
# same test accuracy, and the same answer on about 99 % of the digits. What float64
# costs (twice the memory traffic, half the SIMD width, and on GPUs and TPUs often far
# less than half the speed) buys nothing for this network. Where it would matter:
# ill-conditioned solves, long sums of numbers of very different sizes, and quantities
# that are small differences of large ones.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: float32 against a float64 oracle
#
# Write `ex_agrees(actual, expected)`: True when a float32 result `actual` agrees with a
# float64 oracle `expected` as well as float32 allows, else False.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_agrees(actual, expected):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_agrees(actual, expected):
    error = np.max(np.abs(np.asarray(actual, np.float64) - expected))
    return bool(error <= 1e-5 * np.max(np.abs(expected)))

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>float32 keeps about 7 significant digits: exact equality, or a
# tolerance like 1e-12, asks for float64's.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>An entry near zero can be far off relative to itself and still
# right: measure the error against the scale of the whole array,
# `np.max(np.abs(expected))`.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_agrees)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_agrees, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A two-layer network's gradient
#
# Two layers, no biases, to keep the picture small; the gradient with respect to both
# weight matrices is what a training step computes.

# %%
def two_layers(w1, w2, x):
    return jnp.sum(jax.nn.relu(x @ w1) @ w2)


w1, w2 = jnp.ones((784, 32)), jnp.ones((32, 10))
two_layer_grad = jax.grad(two_layers, argnums=(0, 1))

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … drawn: count the `dot_general`s

# %%
draw_jaxpr(two_layer_grad, max_depth=0)(w1, w2, x[:8])

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: how many matmuls in a step?
#
# From the drawing, count the matmuls (`dot_general`) of the two-layer gradient. Then
# write `ex_matmuls_per_step(n_layers)`: how many one training step of an `n_layers` MLP
# makes (its forward pass and its gradient).

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_matmuls_per_step(n_layers):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_matmuls_per_step(n_layers):
    return 3 * n_layers - 1

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Per layer: one product forward, one for the weights' gradient,
# one to pass the gradient back to the layer below.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>Does anything need the gradient with respect to the input
# pixels?</details>

# %% slideshow={"slide_type": "skip"}
check(ex_matmuls_per_step)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_matmuls_per_step, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - checked a float64 NumPy twin against JAX: one step agrees to float32 precision;
# - split the speed ladder's gains: float32, the matmul library, fusion, dispatch
#   (hidden on a CPU, decisive for tiny steps and on a GPU);
# - trained both to the same accuracy, though their weights drift apart fast;
# - placed JAX and NumPy on this machine's roofline;
# - saw float32 rounding stay far below SGD's own noise.
