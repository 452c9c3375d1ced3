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
import inspect
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths
from jaxtour.cost import profile
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


def seconds_of(fn):
    """Seconds one run of fn() takes, its result waited for (the first run compiles)."""
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


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
# The twin's `step` is `update` written out: forward keeping each layer's activations,
# backward through the transposed weights and the ReLU's 0/1 mask, SGD in place.
# `"highest"`: at default precision a TPU multiplies float32 in bfloat16 and an Ampere+
# GPU in TF32; only at `"highest"` is a matmul about float32 everywhere (see below).

# %% [markdown] slideshow={"slide_type": "skip"}
# Why `default_matmul_precision("highest")`: at JAX's *default* precision a float32
# matmul is not float32 everywhere. A TPU runs it as one bfloat16 pass (8 significant
# bits), an Ampere-or-newer NVIDIA GPU (A100, H100, L4) in TensorFloat-32 (11 bits); a T4
# or V100 and a CPU compute in full float32 (24 bits). At `"highest"` a GPU computes
# float32; a TPU runs several bfloat16 passes, which JAX's docs call "similar to full
# float32 precision". "About 7 digits" holds for elementwise operations everywhere, for
# matmuls only at `"highest"`.

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
# Every rung trains batch 128 from the same weights over the same batches, interleaved
# round after round, so a busy moment hits every rung. Times are scaled to a 60,000-image
# epoch. The `matmuls-` rows are the control: one step's eight matrix products alone,
# NumPy float32 (BLAS) against jitted JAX (XLA's dot).

# %% [markdown] slideshow={"slide_type": "skip"}
# The table gives each rung's median round, and its fastest and slowest. "of matmul" is
# the share of this machine's float32 matmul rate (a jitted 2048×2048 product, measured
# in the same run) that each epoch's matmuls reach. On a busy machine compare the
# fastest rounds: they are the least disturbed by other programs.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.mlp import format_ladder, plot_ladder, run_ladder

# Every rung times the same steps (eager too): a rung timed on fewer steps could catch
# a quiet moment the others never get, and its fastest round would flatter it.
if paths.quick():  # CI: three short rounds; the claims below still hold
    options = {"rounds": 3, "train_size": 2560, "eager_steps": 20}
else:  # more, shorter rounds: a better fastest round on a busy machine
    options = {"rounds": 5, "train_size": 6400, "eager_steps": 50}

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The ladder, measured here

# %%
ladder = run_ladder(mnist, log=None, **options)  # a minute or two
fastest = {name: low for name, (low, _, _) in ladder["spread_s"].items()}
print(format_ladder(ladder))
print(f"fastest of {ladder['rounds']} rounds: float32 NumPy "
      f"{fastest['numpy-f64'] / fastest['numpy-f32']:.1f}x as fast as float64; "
      f"jit in a loop {fastest['jax-eager'] / fastest['jax-jit-loop']:.0f}x as fast as eager")

# %% tags=["check"] jupyter={"source_hidden": true}
# Only claims with a large margin by mechanism, on each rung's least disturbed round:
# a compiled float32 epoch against float64 BLAS calls. float32 NumPy against float64 is
# not asserted: on a busy 2-core machine BLAS's waiting threads blur it (lesson 01 times
# it cleanly). Nor is jit against eager on a CPU: there an eager step is the same
# matmuls plus its dispatches, 2-4x a jitted one on a quiet machine, and a heavily
# loaded one (load average 17 on 2 cores) measured it the other way round once.
assert fastest["jaxtour-train"] < fastest["numpy-f64"]
if jax.default_backend() != "cpu":  # a GPU or TPU step is dispatch-bound when eager
    assert fastest["jax-jit-loop"] < fastest["jax-eager"]

# %% [markdown] slideshow={"slide_type": "notes"}
# Read the fastest rounds: on a quiet machine float32 NumPy takes about half float64's
# time (lesson 01: one matmul), and `jit` beats eager (by 2-4x on a CPU, far more on a
# GPU). On a busy machine even these can swap (BLAS threads wait for busy cores); the
# spread column shows how busy it was.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The ladder, drawn

# %%
plot_ladder(ladder)

# %% [markdown] slideshow={"slide_type": "notes"}
# Each bar is a rung's median epoch, its whisker the fastest and slowest round, on a
# log scale: the rungs span two orders of magnitude. The control's rows are hatched.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Every rung computed the same thing
#
# Each rung's mean training loss over the timed batches:

# %%
losses = {name: round(value, 5) for name, value in ladder["epoch_loss"].items()}
print(losses)

# %% tags=["check"] jupyter={"source_hidden": true}
tolerance = 1e-3 if jax.default_backend() == "cpu" else 1e-2
for name in ("numpy-f32", "jax-eager", "jax-jit-loop", "jaxtour-train"):
    assert abs(ladder["epoch_loss"][name] / ladder["epoch_loss"]["numpy-f64"] - 1) < tolerance

# %% [markdown] slideshow={"slide_type": "notes"}
# Same weights and batches, same numbers: within 0.1 % on a CPU. Not identical: float32
# rounding and XLA's own `exp`/`log` differ in the last bits, and SGD lets that grow. At
# JAX's default precision a GPU's TF32 or a TPU's bfloat16 matmuls move the JAX rungs by
# up to 1 %, well inside what another shuffle does.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The jitted step, op by op
#
# `profile` times each compiled op of the step the ladder's `jit` rungs run (batch 128)
# under `jax.profiler`, and maps it back to source lines.

# %%
step_profile = profile(update)(params, x, y)
matmul_share = sum(row.share for row in step_profile.rows
                   if row.kind == "dot" or "dot_general" in row.primitives)
for row in step_profile.rows[:5]:
    print(f"{row.op:<26} {row.share:6.1%}  {', '.join(row.lines)}")
print(f"matmul ops: {matmul_share:.0%} of the op time")

# %% tags=["check"] jupyter={"source_hidden": true}
# Mechanisms only, no timing law: every op maps back into the model's file, the rows
# come slowest first, and their shares split the summed op time.
model_file = os.path.basename(inspect.getsourcefile(update))
assert step_profile.rows
assert all(line.startswith(f"{model_file}:") for row in step_profile.rows for line in row.lines)
profiled_seconds = [row.seconds for row in step_profile.rows]
assert profiled_seconds == sorted(profiled_seconds, reverse=True)
assert abs(sum(row.share for row in step_profile.rows) - 1) < 1e-6

# %% [markdown] slideshow={"slide_type": "notes"}
# One row per compiled op, slowest first: its share of the summed op time and the lines
# of `_model.py` it came from. The matmul ops hold the share printed; the backward ones
# are named `transpose`: JAX made them by transposing the forward `dot_general`. Fused
# elementwise loops share the rest. Op names differ by backend.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The same step, coloured by measured time

# %%
step_profile.draw(max_ops=8)

# %% [markdown] slideshow={"slide_type": "notes"}
# Deep red boxes took most of the time, white ones little; the eight slowest ops are
# drawn and the rest folded into one box. An edge is a value one op hands the next.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where a step's time goes: matmuls and the rest
#
# The control splits each step (fastest rounds) into its eight matmuls and everything
# else (bias, ReLU, softmax, the update): XLA fuses that into a few loops, NumPy makes a
# pass per operation.

# %%
per_step = {name: 1e3 * s / ladder["steps_per_epoch"] for name, s in fastest.items()}
for label, step, matmuls in (("NumPy f32", "numpy-f32", "matmuls-numpy-f32"),
                             ("JAX scan", "jaxtour-train", "matmuls-jax")):
    print(f"{label}: {per_step[step]:.2f} ms per step = matmuls {per_step[matmuls]:.2f}"
          f" + the rest {per_step[step] - per_step[matmuls]:+.2f}")
gemm_ratio = fastest["matmuls-numpy-f32"] / fastest["matmuls-jax"]
print(f"the same matmuls: BLAS takes {gemm_ratio:.2f}x as long as XLA's dot (fastest rounds)")

# %% tags=["check"] jupyter={"source_hidden": true}
# XLA's dot keeps up with BLAS within a small factor: 2x failed once in CI's quick run on
# JAX 0.12 with a newer OpenBLAS, so the margin is 4x; a quiet machine measures about 1x.
assert fastest["matmuls-numpy-f32"] > 0.25 * fastest["matmuls-jax"]
if jax.default_backend() == "cpu":  # the compiled step is matmul-bound (quiet: ~1x;
    assert fastest["matmuls-jax"] > 0.2 * fastest["jaxtour-train"]  # margin for load)

# %% [markdown] slideshow={"slide_type": "notes"}
# On a quiet CPU both libraries multiply these matrices at a similar rate (on a busy
# one BLAS loses far more: see below), and the matmuls are most of a compiled step. XLA's
# win over NumPy float32 is in the rest, fused into one pass over memory. ("The rest" can
# be negative: in one program XLA picks the matmuls' layouts.)

# %% [markdown] slideshow={"slide_type": "skip"}
# On a quiet CPU the two libraries' rates differ by a small factor that depends on the JAX
# and OpenBLAS versions. On a busy CPU (other programs on the same cores) the picture
# changes: NumPy's BLAS (OpenBLAS in NumPy's wheels) runs threads that busy-wait for one
# another, and they lose far more than XLA's. Measured on this course's 2-core machine under load, the control's
# BLAS took several times as long as XLA's dot, and so did every NumPy rung. The checks
# therefore use each rung's fastest round, the one least disturbed by the rest of the
# machine. `numpy-f64` against `numpy-f32` is the number format: half the bytes, twice the
# numbers per SIMD instruction. On a GPU or TPU the matmuls themselves are the gain.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Both on this machine's roofline
#
# The same FLOPs; unfused, NumPy would move more bytes, and float64 doubles each float.
# NumPy's bytes are *modelled*, not measured: what the jaxpr's equations would move
# unfused, each reading its operands and writing one array per op.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.cost import draw_roofline

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
inputs = sum(a.nbytes for a in jax.tree.leaves((params, x, y)))
assert modelled_bytes >= inputs  # the model reads every input at least once
if jax.default_backend() == "cpu":
    legend = [t.get_text() for t in roof.figure.legends[0].get_texts()]
    assert sum("bytes modelled" in text for text in legend) == 2  # the picture says so

# %% [markdown] slideshow={"slide_type": "notes"}
# Neither program's bytes are measured: JAX's are counted from its compiled program,
# NumPy's modelled from the jaxpr, one array per op, doubled for float64; caches change
# both. Only time is measured (each NumPy rung's fastest round), over JAX's FLOPs. On a
# GPU or TPU the roof is the accelerator's: NumPy's diamonds are left off.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The roofline, drawn

# %%
roof

# %% [markdown] slideshow={"slide_type": "notes"}
# Diamonds: the NumPy rungs, at a modelled intensity (one array per op, doubled for
# float64) and JAX's FLOPs over their measured time. The roof is a float32 matmul's at
# JAX's default precision (true float32 on a CPU); for float64 on a CPU only its flat
# part is about half as high, the bandwidth slope is the same.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Dispatch: where a scan beats a Python loop
#
# Each call of a jitted function from Python costs microseconds to dispatch. A tiny
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
        p, v = carry
        x, y = batch
        p, v, batch_loss = update(p, x, y, v)
        return (p, v), batch_loss
    return jax.lax.scan(body, (p, v), (xs, ys))[0]


# %% [markdown] slideshow={"slide_type": "notes"}
# A 16-16-10 network on batches of 8: each step is about 20 kFLOP, so what a call costs
# beyond its arithmetic is what we measure. `tiny_step` is called 2,000 times from Python;
# `tiny_scan` runs the same 2,000 steps inside one compiled loop.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A Python loop against a scan

# %%
def python_loop(p, v):
    for i in range(len(xs)):
        p, v = tiny_step(p, v, xs, ys, i)
    return p, v


# 6 runs each; the first compiles, so it is dropped
loop_times = [seconds_of(lambda: python_loop(tiny, tiny_v)) / len(xs) for _ in range(6)][1:]
scan_times = [seconds_of(lambda: tiny_scan(tiny, tiny_v, xs, ys)) / len(xs)
              for _ in range(6)][1:]
loop_step, scan_step = min(loop_times), min(scan_times)  # the least disturbed of 5
print(f"per step, fastest of 5 (slowest): Python loop {loop_step * 1e6:.1f} µs "
      f"({max(loop_times) * 1e6:.1f}), scan {scan_step * 1e6:.2f} µs "
      f"({max(scan_times) * 1e6:.2f})")

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(loop_times) == len(scan_times) == 5
if jax.default_backend() == "cpu":  # a CPU runs the tiny scan step in a few µs
    assert loop_step > 2 * scan_step  # the loop pays a dispatch per step on top
# On a GPU or TPU a scan step has its own per-iteration overhead (kernel launches, the
# loop condition): no ratio is guaranteed there, so none is asserted.

# %% [markdown] slideshow={"slide_type": "notes"}
# The loop pays one dispatch per step: Python hands 10 arrays (4 weights and biases, 4
# velocities, `xs`, `ys`) and an index to the step, microseconds each call (a
# one-argument jitted call: about 5–30 µs, JAX 0.10 on a CPU).
# The scan pays one dispatch for all 2,000. We show the fastest of 5 runs and the
# slowest.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … and why the MLP's scan wins little on a CPU
#
# JAX dispatches asynchronously: Python queues the next step while the last one computes.
# Dispatch shows only when it takes longer than a step's compute.

# %%
dispatch = loop_step - scan_step  # about what one call from Python costs
mlp_step = fastest["jaxtour-train"] / ladder["steps_per_epoch"]
print(f"dispatch {dispatch * 1e6:.0f} µs against one MLP step of {mlp_step * 1e3:.2f} ms")
print(f"per epoch, fastest rounds: jit in a loop {fastest['jax-jit-loop']:.2f} s, "
      f"scan {fastest['jaxtour-train']:.2f} s, eager {fastest['jax-eager']:.1f} s")

# %% tags=["check"] jupyter={"source_hidden": true}
fastest_step = mlp_step
if dispatch > 2 * fastest_step:  # dispatch shows (a fast GPU or TPU): the scan must win
    assert fastest["jaxtour-train"] < 0.8 * fastest["jax-jit-loop"]
elif jax.default_backend() == "cpu":  # dispatch hides behind a step's compute
    assert dispatch < 0.5 * fastest_step
# without jit, each of a step's hundred-odd operations is dispatched on its own: an eager
# step costs more than several jitted calls (measured on a CPU: dozens to hundreds)
eager_step = fastest["jax-eager"] / ladder["steps_per_epoch"]
assert eager_step > 5 * dispatch

# %% [markdown] slideshow={"slide_type": "notes"}
# On a quiet CPU a step is milliseconds of matmuls, dispatch hides behind it, loop and
# scan come out close; on a busy one the loop loses (Python waits for a core). On a GPU
# a step can take less than a dispatch; where it does, the scan must win clearly, and
# the check cell asserts that.

# %% [markdown] slideshow={"slide_type": "skip"}
# `jax-eager` is far behind either: without `jit`, each of the step's
# hundred-odd operations goes through autodiff in Python and is dispatched alone, and
# none is fused.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# `batch_indices(key, …)` is the shuffle `train_epoch` makes from the same key, so the
# float64 twin sees the very same batches in the same order. JAX at `"highest"`
# precision: about float32 matmuls on every backend (a TPU emulates it in bfloat16 passes).

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
# One full epoch each, quick run or not: the same 468 batches in the same order. Both
# classify as well, within half a point, and give the same answer on about 99 % of the
# digits. The next slide shows how different their weights are.

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
# Not an epsilon per step: a difference in the weights becomes one in the next gradient,
# and ReLUs switching and momentum amplify it: the growth printed above, orders of
# magnitude in one epoch. Two
# float32 runs on different hardware, or summing in another order, drift the same way:
# SGD does this to any small perturbation.

# %% [markdown] slideshow={"slide_type": "skip"}
# The weight matrices end a few per cent apart in norm; the biases, which start at zero
# and stay small, further apart relative to their size. It is not a flaw of float32.

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
two_layer_grad = jax.grad(two_layers, argnums=(0, 1))

# %% [markdown] slideshow={"slide_type": "notes"}
# `argnums=(0, 1)`: the gradient with respect to both weight matrices, not the input.
# The drawing on the next slide is this function's jaxpr.

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
# - split the speed ladder's gains: float32, the matmul library, fusion, dispatch
#   (hidden on a CPU, decisive for tiny steps and on a GPU);
# - trained both to the same accuracy, though their weights drift apart fast;
# - placed JAX and NumPy on this machine's roofline;
# - saw float32 rounding stay far below SGD's own noise.
