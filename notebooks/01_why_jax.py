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
# # 01 · Why JAX: float32, jit, asynchronous dispatch, any device
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/01_why_jax.ipynb)
#
# - **float32** by default, and what a matmul's precision is on each device
# - **`jax.jit`** compiles a whole function
# - **asynchronous dispatch**: why naive timers lie
# - the **same code** on a CPU, a GPU or a TPU
# - where JAX sits: the **autodiff landscape**
#
# *About 30 minutes.*

# %% [markdown] slideshow={"slide_type": "notes"}
# JAX looks like NumPy, but it is built for accelerators. Everything in this lesson is
# measured live on the machine running it, and every number it prints is checked.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths
from jaxtour.exercises import check


def best_of(run, repeat=5):
    """The fastest of `repeat` calls of `run()`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


# %% [markdown] slideshow={"slide_type": "slide"}
# ## float32 by default
#
# NumPy computes in 64-bit floats unless told otherwise; JAX in 32-bit.

# %%
n = 1_000_000
x = jnp.linspace(0.0, 1.0, n)
x64 = np.linspace(0.0, 1.0, n)
print(f"JAX   {x.dtype}: {x.nbytes / 1e6:.0f} MB for {n:,} numbers")
print(f"NumPy {x64.dtype}: {x64.nbytes / 1e6:.0f} MB")

# %% tags=["check"] jupyter={"source_hidden": true}
assert x.dtype == jnp.float32 and x64.dtype == np.float64
assert x64.nbytes == 2 * x.nbytes == 8 * n

# %% [markdown] slideshow={"slide_type": "notes"}
# GPUs and TPUs are built for 32 bits and fewer, and half the bytes means half the memory
# and half the traffic between memory and the chip. `jax.config.update("jax_enable_x64",
# True)` turns 64-bit on where you need it.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### What float32 costs: digits
#
# float32 keeps 24 significant bits (about 7 decimal digits), float64 53 (about 16). The
# same mean, against an exactly rounded sum (`math.fsum`):

# %%
oracle = math.fsum(np.sin(x64) ** 2) / n
err32 = abs(float(jnp.mean(jnp.sin(x) ** 2)) - oracle) / oracle
err64 = abs(float(np.mean(np.sin(x64) ** 2)) - oracle) / oracle
print(f"relative error, JAX float32:   {err32:.1e}")
print(f"relative error, NumPy float64: {err64:.1e}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert jnp.finfo(jnp.float32).eps == 2.0**-23 and np.finfo(np.float64).eps == 2.0**-52
assert err64 < 1e-12 < err32 < 1e-5
# the notes: the same float32 terms, added one after another (NumPy's float32 running
# sum, `np.add.accumulate`, adds strictly in order)
in_order = np.cumsum(np.asarray(jnp.sin(x) ** 2), dtype=np.float32)[-1]
err_in_order = abs(float(in_order) / n - oracle) / oracle
assert err_in_order > 100 * err32, (err_in_order, err32)  # 1.2e-4 against 1.0e-7 here

# %% [markdown] slideshow={"slide_type": "notes"}
# One float32 operation rounds to about 7 digits. A sum's error also grows with its
# length and depends on the order of the additions, which XLA chooses per backend: here
# `mean` keeps nearly 7 digits; the same million terms added one after another lose
# about three (the check cell). Matrix products differ on accelerators: next slide.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A float32 matmul: precision depends on the device
#
# At default precision a TPU multiplies float32 in one bfloat16 pass, and an Ampere or
# newer GPU in TF32. `precision="highest"` asks for full float32.

# %%
a = jax.random.normal(jax.random.key(0), (512, 512))
exact = np.asarray(a, np.float64) @ np.asarray(a, np.float64)


def error(product):  # relative to the float64 product
    return float(np.linalg.norm(np.asarray(product, np.float64) - exact)
                 / np.linalg.norm(exact))


err_default, err_highest = error(a @ a), error(jnp.matmul(a, a, precision="highest"))
print(f"{jax.default_backend()}: default {err_default:.1e}, highest {err_highest:.1e}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert err_highest < 1e-5  # full float32 on every backend
assert err_default < 1e-2  # at worst one bfloat16 pass (TPU); TF32 on a recent GPU
if jax.default_backend() == "cpu":
    assert err_default < 1e-5  # a CPU computes every `Precision` level in full float32
with jax.default_matmul_precision("highest"):
    assert error(a @ a) < 1e-5  # the same for every matmul in the block
# the skip cell: a bfloat16 preset on a CPU is accepted but computed in float32
# (JAX 0.10.2 and 0.12); bfloat16 numerics need inputs really rounded to bfloat16
a_bf16 = a.astype(jnp.bfloat16).astype(jnp.float32)
err_rounded = error(jnp.matmul(a_bf16, a_bf16, precision="highest"))
assert err_rounded > 1e-3  # 8 significant bits: about 2e-3
if jax.default_backend() == "cpu" and jax.__version__.startswith(("0.10.", "0.12.")):
    assert error(jnp.matmul(a, a, precision="BF16_BF16_F32")) < 1e-5  # float32, not bf16
    with jax.default_matmul_precision("BF16_BF16_F32"):
        assert error(a @ a) < 1e-5
    try:
        jnp.matmul(a, a, precision="TF32_TF32_F32")
        raise AssertionError("a CPU should refuse the TF32 preset")
    except ValueError:
        pass

# %% [markdown] slideshow={"slide_type": "notes"}
# The default is the fastest the hardware offers: a TPU rounds float32 matmul inputs to
# bfloat16 (8 significant bits, float32 accumulation); an A100 or H100 uses TF32 (11
# bits); a T4, a V100 and every CPU compute full float32. Expect about 3 digits on a TPU.
# Where it matters, pass `precision="highest"`.

# %% [markdown] slideshow={"slide_type": "skip"}
# `precision="highest"` works on `jnp.matmul`, `jnp.dot` and `jnp.einsum`; `with
# jax.default_matmul_precision("highest"):` sets it for every matmul in a block (the check
# cell uses it). `"high"` is three bfloat16 passes on a TPU. On a CPU both errors above
# are float32's. JAX's docs now present dot-algorithm presets as the direct interface
# (`precision="F32_F32_F32"`, `"TF32_TF32_F32"`, `"BF16_BF16_F32"`, members of
# `jax.lax.DotAlgorithmPreset`) and `Precision` levels as the older one. On a CPU (JAX
# 0.10.2 and 0.12) the TF32 presets raise a `ValueError`, but `"BF16_BF16_F32"` (and its
# `_X3`, `_X6`) is accepted and computed in full float32: a laptop does not preview a
# TPU's bfloat16 numerics. Round the inputs yourself (`a.astype(jnp.bfloat16)`) to see
# them: about 2e-3 here (the check cell).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### What float32 buys: speed
#
# The same NumPy matrix product in float64 and in float32 (on the host CPU, whatever
# JAX's device), alternating, fastest of 15:

# %%
size = 1024  # big enough that arithmetic, not overhead, dominates
a64 = np.random.default_rng(0).standard_normal((size, size))
a32 = a64.astype(np.float32)
pairs = [(best_of(lambda: a64 @ a64, 1), best_of(lambda: a32 @ a32, 1)) for _ in range(15)]
t64, t32 = min(t for t, _ in pairs), min(t for _, t in pairs)
print(f"NumPy {size}×{size} matmul: float64 {t64 * 1e3:.1f} ms, float32 {t32 * 1e3:.1f} ms")

# %% tags=["check"] jupyter={"source_hidden": true}
assert t64 / t32 > 1, "float32 should be faster than float64"

# %% [markdown] slideshow={"slide_type": "notes"}
# The only difference is the dtype. `best_of` keeps the fastest of a few runs, the one
# least disturbed by whatever else the machine is doing; the two alternate, so both see
# the same machine. On a CPU, SIMD units hold twice as many float32 numbers as float64.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `jax.jit`: compile the whole function
#
# `jax.jit` traces a function once into a **jaxpr**, a list of primitive operations, and
# hands it to the XLA compiler.

# %%
def gelu(x):
    """The GELU activation (tanh approximation), as in GPT-2."""
    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x**3)))


eqns = jax.make_jaxpr(gelu)(x).jaxpr.eqns
print(f"{len(eqns)} primitive operations:", " ".join(e.primitive.name for e in eqns))

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(eqns) >= 6

# %% [markdown] slideshow={"slide_type": "notes"}
# Without `jit`, JAX runs one operation at a time, as NumPy does, and each writes a full
# intermediate array of a million numbers. Under `jit`, XLA fuses the element-wise
# operations into one loop that reads `x` once and writes the result once. JAX traces
# again only when the call's abstract signature changes (shapes, dtypes, static
# arguments, ...): lesson 03.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: read a jaxpr off its picture
#
# Draw `gelu` with `draw_jaxpr(gelu)(x)`. Write `ex_gelu_jaxpr()` returning two numbers
# read off the picture: (how many equations, how many of them are `mul`).

# %% slideshow={"slide_type": "skip"}
from jaxtour.viz import draw_jaxpr

draw_jaxpr(gelu)(x)

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_gelu_jaxpr():
    ...  # your code here: return (equations, muls)


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_gelu_jaxpr():
    return (10, 4)  # the title says 10 equations; 4 boxes read `mul`


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The picture's title counts the equations for you.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>`x**3` is one box of its own: which primitive is it?</details>

# %% slideshow={"slide_type": "skip"}
check(ex_gelu_jaxpr)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_gelu_jaxpr, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/01_why_jax.ipynb`, or the Colab badge. Hint: the picture's title counts the
# equations; `x**3` is one box of its own (`integer_pow`), not a `mul`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Measured: eager against `jit`
#
# The first call traces and compiles; later calls reuse the compiled program.

# %%
gelu_jit = jax.jit(gelu)
start = time.perf_counter()
gelu_jit(x).block_until_ready()
t_first = time.perf_counter() - start
t_eager = best_of(lambda: gelu(x).block_until_ready())
t_jit = best_of(lambda: gelu_jit(x).block_until_ready())
print(f"first jit call (trace + compile + run): {t_first * 1e3:.1f} ms")
print(f"eager {t_eager * 1e3:.2f} ms, jit {t_jit * 1e3:.2f} ms: {t_eager / t_jit:.1f}× faster")

# %% tags=["check"] jupyter={"source_hidden": true}
assert t_eager / t_jit > 1 and t_first > t_jit
np.testing.assert_allclose(gelu_jit(x), gelu(x), rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# Every timing ends with `block_until_ready()`: the next slide shows why. The speed-up
# comes from fusion (one pass over memory instead of one per operation) and from
# dispatching one compiled program instead of one operation at a time.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Asynchronous dispatch: why naive timers lie
#
# A JAX call returns as soon as the work is **queued**; Python runs ahead while the
# device computes. `block_until_ready()` waits for the result.

# %% slideshow={"slide_type": "skip"}
# Enough work that the device is still busy when the call returns. A 2000 × 2000 matmul
# is 16 GFLOP: roughly 20–150 ms on a multithreaded laptop CPU (longer on a small shared
# VM; the slide prints this machine's time), about 2 ms on a T4 GPU and less on newer
# ones, so off the CPU we take 8192 × 8192 (1.1 TFLOP).
cpu_size = 1000 if paths.quick() else 2000
size = cpu_size if jax.default_backend() == "cpu" else 8192
big = jnp.ones((size, size))
matmul = jax.jit(lambda a: a @ a)
matmul(big).block_until_ready()  # compile first

# %%
def time_call():
    start = time.perf_counter()
    result = matmul(big)  # returns once the work is queued
    returned = time.perf_counter() - start
    result.block_until_ready()  # waits until the work is done
    return returned, time.perf_counter() - start


runs = [time_call() for _ in range(5)]
returned, finished = min(r for r, _ in runs), min(f for _, f in runs)
print(f"returned after {returned * 1e3:.3f} ms; ready after {finished * 1e3:.1f} ms")

# %% tags=["check"] jupyter={"source_hidden": true}
assert finished > 10 * returned

# %% [markdown] slideshow={"slide_type": "notes"}
# A timer stopped when the call returns measures the queueing, not the work.
# `matmul(big)` hands the product to the device and returns an array whose value does
# not exist yet. The matrix is 2000 × 2000 on a CPU (1000 in a quick run), 8192 × 8192
# on a GPU or TPU: the work outlasts the call.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Timing JAX code correctly
#
# - end every timed call with `.block_until_ready()` (a pytree: `jax.block_until_ready`);
# - call a jitted function once before timing it, so compilation is not counted;
# - keep the best of a few runs.

# %% [markdown] slideshow={"slide_type": "notes"}
# Printing a result, `float(result)` or `np.asarray(result)` also waits: the value has to
# exist. That is also why a `float(loss)` every training step slows a loop down: Python
# waits for each step before it queues the next.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: time a call honestly
#
# Write `ex_time_call(f, x)`: the seconds one call `f(x)` of a jitted `f` takes,
# compilation left out, the work included.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_time_call(f, x):
    ...  # your code here: return seconds, a float


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_time_call(f, x):
    import time

    f(x).block_until_ready()  # compile (and run) once, untimed
    start = time.perf_counter()
    f(x).block_until_ready()  # wait for the work, not only the dispatch
    return time.perf_counter() - start


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The first call of a jitted function compiles it: make
# that call before you start the clock.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>`f(x)` returns before the work is done: stop the clock
# after `f(x).block_until_ready()`.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_time_call)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_time_call, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/01_why_jax.ipynb`, or the Colab badge. Hint: call `f(x)` once before starting
# the clock (that call compiles), and stop the clock only after
# `f(x).block_until_ready()`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The same code on a CPU, a GPU or a TPU
#
# Nothing above named a device: JAX put every array on its default device and XLA
# compiled for it.

# %%
device = jax.devices()[0]
y = gelu_jit(x)
print(jaxtour.describe_devices())
print(f"y lives on {y.devices()}: a {device.platform} ({device.device_kind})")

# %% slideshow={"slide_type": "skip"}
def gelu_numpy(x):  # the oracle: the same formula in float64 NumPy
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


# %% tags=["check"] jupyter={"source_hidden": true}
assert y.devices() == {device} and jax.default_backend() == device.platform
np.testing.assert_allclose(np.asarray(y), gelu_numpy(x64), rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# On a Colab TPU runtime (a TPU v5e-1, one device) or a GPU the same cells run there,
# unchanged. The result agrees with float64 NumPy to float32's precision: GELU has no
# matmul, so the default matmul precision does not enter.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where JAX sits: the autodiff landscape

# %% tags=["hide-input"]
from jaxtour.viz import draw_autodiff_landscape

landscape = draw_autodiff_landscape()
landscape

# %% tags=["check"] jupyter={"source_hidden": true}
assert all(name in landscape.source for name in ("PyTorch", "TensorFlow", "JAX"))
assert landscape.svg().lstrip().startswith("<?xml")

# %% [markdown] slideshow={"slide_type": "notes"}
# JAX's way: **trace pure functions** into jaxprs, transform them (`grad`, `vmap`), and
# compile them with XLA. TensorFlow 1 built a static graph run op by op; PyTorch records
# a tape as Python runs. Their second versions met in the middle: `tf.function` graphs,
# and `torch.compile` with JAX-like `grad` and `vmap` in `torch.func`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A derivative, checked
#
# `jax.grad(f)` is a new function, the derivative of `f` (lesson 02), here against a
# central finite difference in float64 NumPy.

# %%
dgelu = jax.grad(gelu)
h = 1e-6
finite_difference = (gelu_numpy(1.0 + h) - gelu_numpy(1.0 - h)) / (2 * h)
print(f"jax.grad(gelu)(1.0) = {float(dgelu(1.0)):.6f}; finite difference {finite_difference:.6f}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert abs(float(dgelu(1.0)) - finite_difference) < 1e-5

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.grad(gelu)` is a function like any other: here called at 1.0 and compared with a
# central finite difference of the float64 NumPy formula, which knows nothing of JAX.
# Lesson 02 opens up how it works.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: make a function jit-safe
#
# A Python `if` on an array fails under `jax.jit`. Write `ex_safe_log(x)`: log x where
# x > 0, 0 elsewhere, elementwise, traceable by `jax.jit`, with a finite `jax.grad` at 0.

# %% slideshow={"slide_type": "skip"}
def safe_log(x):  # works on one Python number, not on a traced array
    if x > 0:
        return jnp.log(x)
    return 0.0


# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_safe_log(x):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_safe_log(x):
    positive = x > 0
    # the outer where alone gives the right values; the inner one keeps jax.grad
    # finite at 0 (log sees 1.0 there, so no 0 * inf = nan in the backward pass)
    return jnp.where(positive, jnp.log(jnp.where(positive, x, 1.0)), 0.0)


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Under `jit`, `x > 0` is a traced array of booleans:
# Python's `if` cannot ask for its value. `jnp.where(condition, a, b)` chooses per
# element.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>`jnp.where` computes both branches: `jnp.log` of a
# negative number is nan and of 0 is -inf, but `where` picks 0.0 there, so the values
# are right. Its gradient is not: `jax.grad` also differentiates the branch not taken,
# and 0 × (derivative of log at 0, infinite) is nan. Give `jnp.log` a safe input with a
# second `jnp.where`.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_safe_log)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_safe_log, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/01_why_jax.ipynb`, or the Colab badge. Hint: `jnp.where(x > 0, ..., 0.0)` fixes
# the values; a second `where`, giving `jnp.log` a safe input, keeps `jax.grad` finite at
# 0 (else 0 × inf = nan).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - saw float32 by default (about 7 digits elementwise; a matmul's precision depends on
#   the device);
# - measured `jax.jit` against eager execution;
# - timed honestly with `block_until_ready()`: dispatch is asynchronous;
# - ran the same code on this device, matching float64 NumPy;
# - placed JAX in the autodiff landscape.
#
# *Next: lesson 02, `grad` and the backward pass.*
