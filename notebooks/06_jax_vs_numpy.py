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
# - that one step of a float64 NumPy twin and of JAX agree to float32 precision;
# - the **speed ladder**: what float32, `jit` and a compiled epoch each gain;
# - the step **profiled**: the kit's lens beside `jax.profiler.trace`;
# - both on a **roofline** (bytes modelled, time measured);
# - why float32 and float64 weights drift far apart, yet classify equally well.
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
import inspect
import os
import pathlib
import tempfile

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths
from jaxtour.cost import draw_roofline, profile
from jaxtour.exercises import check
from jaxtour.mlp import NumpyTwin, init_params, load_mnist, loss, preprocess, update
from jaxtour.viz import draw_jaxpr

mnist = load_mnist()


def largest_relative_difference(a, b) -> float:
    """max |a - b| / max |b| over every array of two params pytrees (in float64)."""
    return max(float(np.abs(np.asarray(u, np.float64) - np.asarray(v, np.float64)).max()
                     / np.abs(np.asarray(v, np.float64)).max())
               for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))


# %% [markdown] slideshow={"slide_type": "slide"}
# ## The twin: the same weights, in float64
#
# `NumpyTwin` is lesson 05's MLP by hand in NumPy: every matmul one BLAS call, every
# buffer updated in place. One step from the same weights and batch:

# %%
params = init_params(jax.random.key(0))
x = preprocess(mnist.train_images[:128])
y = jnp.asarray(mnist.train_labels[:128], jnp.int32)

with jax.default_matmul_precision("highest"):  # about float32 on GPU/TPU too
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
# The twin's `step` is `update` written out: forward, backward through the transposed
# weights and the ReLU's 0/1 mask, SGD in place. At default precision a TPU multiplies
# float32 in one bfloat16 pass, an Ampere+ GPU in TF32; at `"highest"` a GPU computes
# float32, a TPU several bfloat16 passes ("similar to full float32", JAX 0.10.2's docs).

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
# Same weights, same batches, rungs interleaved round after round; times scaled to a
# 60,000-image epoch. On a shared CPU, NumPy's OpenBLAS threads busy-wait for one another
# and lose far more than XLA's, so rungs can swap under load: the checks read each
# rung's fastest round and assert only wide margins (lesson 01 times float32 cleanly).

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.mlp import format_ladder, run_ladder

if paths.quick():  # CI: short rounds of 5 steps; the claims below still hold
    options = {"train_size": 640, "eager_steps": 5, "rate_repeat": 1}
else:
    options = {"train_size": 6400, "eager_steps": 50}

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The ladder, measured here

# %%
ladder = run_ladder(mnist, rounds=5, log=None, **options)  # a minute or two
fastest = {name: low for name, (low, _, _) in ladder["spread_s"].items()}
print(format_ladder(ladder))
print(f"fastest of {ladder['rounds']} rounds: float32 NumPy "
      f"{fastest['numpy-f64'] / fastest['numpy-f32']:.1f}x as fast as float64; "
      f"jit in a loop {fastest['jax-eager'] / fastest['jax-jit-loop']:.0f}x as fast as eager")
print("mean loss:", {name: round(value, 5) for name, value in ladder["epoch_loss"].items()})

# %% tags=["check"] jupyter={"source_hidden": true}
assert fastest["jaxtour-train"] < fastest["numpy-f64"]  # wide margins, fastest rounds
if jax.default_backend() != "cpu":  # a GPU or TPU step is dispatch-bound when eager
    assert fastest["jax-jit-loop"] < fastest["jax-eager"]
tolerance = 1e-3 if jax.default_backend() == "cpu" else 1e-2  # every rung, the same numbers
for name in ("numpy-f32", "jax-eager", "jax-jit-loop", "jaxtour-train"):
    assert abs(ladder["epoch_loss"][name] / ladder["epoch_loss"]["numpy-f64"] - 1) < tolerance

# %% [markdown] slideshow={"slide_type": "notes"}
# Quiet, float32 NumPy takes about half float64's time, `jit` beats eager (2-4x on a CPU,
# far more on a GPU), a compiled epoch saves a dispatch per step. Mean losses agree within
# 0.1 % on a CPU. "of matmul": the share of a jitted 2048² product's rate.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The jitted step, op by op
#
# `profile` times each compiled op of the step the ladder's `jit` rungs run (batch 128)
# under `jax.profiler`, and maps it back to source lines.

# %%
step_profile = profile(update)(params, x, y)
for row in step_profile.rows[:5]:
    print(f"{row.op:<26} {row.share:6.1%}  {', '.join(row.lines)}")

# %% tags=["check"] jupyter={"source_hidden": true}
# Mechanisms only: every op maps back into the model's file, slowest first, shares sum to 1
model_file = os.path.basename(inspect.getsourcefile(update))
assert step_profile.rows
assert all(line.startswith(f"{model_file}:") for row in step_profile.rows for line in row.lines)
profiled_seconds = [row.seconds for row in step_profile.rows]
assert profiled_seconds == sorted(profiled_seconds, reverse=True)
assert abs(sum(row.share for row in step_profile.rows) - 1) < 1e-6

# %% [markdown] slideshow={"slide_type": "notes"}
# One row per compiled op, slowest first, with the lines of `_model.py` it came from.
# Backward matmuls are named `transpose`. Op names differ by backend.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### JAX's own profiler: a trace for Perfetto or TensorBoard
#
# `profile` reads such a trace for you (`step_profile.draw()` colours the program by
# it). `jax.profiler.trace` writes one: every op on a timeline, with your annotations.

# %%
trace_folder = tempfile.TemporaryDirectory()  # removed when the kernel shuts down cleanly
trace_dir = pathlib.Path(trace_folder.name)
jitted_update = jax.jit(update)
jax.block_until_ready(jitted_update(params, x, y))  # compile before tracing
with (jax.profiler.trace(trace_dir, create_perfetto_trace=True),
      jax.profiler.TraceAnnotation("three steps")):  # a named span on the timeline
    for _ in range(3):
        jax.block_until_ready(jitted_update(params, x, y))
written = sorted(p.name for p in trace_dir.rglob("*") if p.is_file())
print(trace_dir, written, sep="\n")

# %% tags=["check"] jupyter={"source_hidden": true}
assert any(name.endswith(".xplane.pb") for name in written)  # TensorBoard's format
assert [f for f in trace_dir.rglob("perfetto_trace.json.gz") if f.stat().st_size > 0]

# %% [markdown] slideshow={"slide_type": "notes"}
# Open `perfetto_trace.json.gz` at ui.perfetto.dev, or the folder (printed; it goes
# when the kernel shuts down) in TensorBoard's profile plugin. `jax.named_scope` names
# ops in the trace; `create_perfetto_link=True` serves it to Perfetto and waits until
# you open the link. File names as in JAX 0.10.2 and 0.12.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Both on this machine's roofline: bytes modelled, time measured
#
# The same FLOPs. NumPy's bytes are a **model**: what the jaxpr's equations would move
# unfused, one array per op (doubled for float64); its time is measured.

# %%
roof = draw_roofline(update)(params, x, y)  # the jitted step, batch 128
modelled_bytes = sum(row.bytes for row in roof.table.equations)  # unfused: one array per op
numpy_s = {name: ladder["spread_s"][name][0] / ladder["steps_per_epoch"]
           for name in ("numpy-f32", "numpy-f64")}  # fastest round, per step
for name, width in (("numpy-f32", 1), ("numpy-f64", 2)):  # float64: twice the bytes
    per_byte = roof.table.flops / (width * modelled_bytes)
    rate = roof.table.flops / numpy_s[name]  # JAX's FLOPs over NumPy's measured time
    if jax.default_backend() == "cpu":  # NumPy runs on the host: only a CPU roof is its
        roof.add(f"{name}: bytes modelled, time measured", per_byte, rate)
    print(f"{name}: {per_byte:.3g} FLOP/B (modelled), {rate / 1e9:.3g} GFLOP/s")
print(f"jax-jit: {roof.table.intensity:.3g} FLOP/B, {roof.flops_per_s / 1e9:.3g} GFLOP/s")

# %% tags=["check"] jupyter={"source_hidden": true}
assert x.shape[0] == 128 and modelled_bytes > roof.table.bytes  # fusion saves traffic
jaxpr_flops = sum(row.flops or 0 for row in roof.table.equations)
assert abs(jaxpr_flops / roof.table.flops - 1) < 0.05  # the same FLOPs, fused or not
assert modelled_bytes >= sum(a.nbytes for a in jax.tree.leaves((params, x, y)))  # reads all
if jax.default_backend() == "cpu":
    legend = [t.get_text() for t in roof.figure.legends[0].get_texts()]
    assert sum("bytes modelled" in text for text in legend) == 2  # the picture says so

# %% [markdown] slideshow={"slide_type": "notes"}
# Intensity is FLOPs per byte: left of the ridge a program waits on memory, right of it
# on arithmetic. Fusion keeps JAX's intermediates out of memory; the model gives NumPy none.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The roofline, drawn

# %%
roof

# %% [markdown] slideshow={"slide_type": "notes"}
# No bytes are measured: JAX's are counted from its compiled program, NumPy's diamonds
# sit at a modelled intensity; caches change both. The roof is a float32 matmul's; on a
# GPU or TPU it is the accelerator's and NumPy's diamonds are left off.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Accuracy: float32 JAX and float64 NumPy, trained side by side
#
# One epoch each on the same batches in the same order, then the 10,000 test digits.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# A full epoch is 468 steps of 128. CI on CPU: 300 of them. The growth checked below
# (> 1e4) passed 1e6 by step 300 on 8 of 8 shuffle keys (CPU, JAX 0.10.2).
n_train = 38_400 if paths.quick() and jax.default_backend() == "cpu" else 60_000

# %%
from jaxtour.mlp import batch_indices, batched_predict, train_epoch

images = mnist.train_images[:n_train]
labels = np.asarray(mnist.train_labels[:n_train], np.int32)
key = jax.random.key(1)
with jax.default_matmul_precision("highest"):
    velocity = jax.tree.map(jnp.zeros_like, params)
    trained, _, _ = jax.jit(train_epoch)(params, velocity, images, labels, key)
twin = NumpyTwin(params)
twin_losses = twin.epoch(images, labels, np.asarray(batch_indices(key, n_train, 128)))

# %% [markdown] slideshow={"slide_type": "notes"}
# `batch_indices(key, …)` is `train_epoch`'s shuffle: the float64 twin sees the very
# same batches, all 468 (300 in a quick run).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The two models' predictions, side by side

# %%
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

# %% [markdown] slideshow={"slide_type": "notes"}
# Both classify as well, within half a point, and agree on about 99 % of the digits.
# Their weights do not.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where float32 and float64 differ: the weights drift apart fast
#
# Every operation rounds, so one step differs by about float32's epsilon. Training then
# amplifies that difference, step after step.

# %%
epoch_difference = largest_relative_difference(trained, twin.params)
growth = epoch_difference / step_difference
print(f"epsilon: float32 {np.finfo(np.float32).eps:.1e}; weights differ by "
      f"{step_difference:.1e} after 1 step, {epoch_difference:.1e} after "
      f"{n_train // 128} steps: {growth:,.0f} times as much")

# %% tags=["check"] jupyter={"source_hidden": true}
assert np.float32(1) + np.float32(1e-8) == np.float32(1)  # lost below float32's epsilon
assert np.float64(1) + np.float64(1e-8) != np.float64(1)
assert growth > 1e4  # not a slow drift: orders of magnitude within one epoch

# %% [markdown] slideshow={"slide_type": "notes"}
# A difference in the weights becomes one in the next gradient; ReLUs switching and
# momentum amplify it. Two float32 runs on different hardware, or summing in another
# order, drift the same way: SGD does this to any small perturbation, not float32.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … and why it does not matter here
#
# Two errors in one gradient: rounding (float32 against float64, one batch) and
# sampling (two batches, both float64).

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
# SGD's batch-to-batch noise is thousands of times float32's rounding, so the runs end at
# different, equally good weights. float64 (twice the traffic, half the SIMD width, far
# slower on most GPUs and TPUs) buys nothing here; it matters for ill-conditioned solves
# and small differences of large numbers.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# About 8 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/06_jax_vs_numpy.ipynb`, or the Colab badge. Hint: about 7 significant digits,
# so a relative tolerance near 1e-5, measured against the largest |expected|, not each
# entry (an entry near zero can be far off relative to itself).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A two-layer network's gradient
#
# Two layers, no biases, to keep the picture small; the gradient with respect to both
# weight matrices is what a training step computes.

# %%
def two_layers(w1, w2, x):
    return jnp.sum(jax.nn.relu(x @ w1) @ w2)


w1, w2 = jnp.ones((784, 32)), jnp.ones((32, 10))
two_layer_grad = jax.grad(two_layers, argnums=(0, 1))  # both matrices, not the input

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … drawn: count the `dot_general`s

# %%
draw_jaxpr(two_layer_grad, max_depth=0, edge_labels=False)(w1, w2, x[:8])

# %% [markdown] slideshow={"slide_type": "notes"}
# Forward: one `dot_general` per layer. Backward: one per weight gradient, and one to
# carry the cotangent down to the layer below, except below the first layer: nothing
# asks for the gradient with respect to the pixels.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/06_jax_vs_numpy.ipynb`, or the Colab badge. Hint: count per layer in the
# drawing (forward, weight gradient, cotangent down), then take away the one the first
# layer does not need.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - checked a float64 NumPy twin against JAX: one step agrees to float32 precision;
# - split the speed ladder's gains: float32, `jit`, a compiled epoch;
# - profiled the step (the kit's lens, `jax.profiler.trace`); put it on the roofline;
# - trained both to one accuracy; their weights drift apart, rounding far below SGD's noise.
