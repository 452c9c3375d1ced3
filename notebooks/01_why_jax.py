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
# # 01 · Why JAX: float32, jit, asynchronous dispatch, any device
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/01_why_jax.ipynb)
#
# JAX looks like NumPy, but it is built for accelerators. You will see, measured live:
#
# - arrays are **float32** by default: half NumPy's bytes, faster, about 7 digits;
# - **`jax.jit`** compiles a whole function and runs it several times faster;
# - calls return **before the work is done** (asynchronous dispatch), so naive timers lie;
# - the **same code** runs on a CPU, a GPU or a TPU;
# - where JAX sits among the ways frameworks get derivatives: the **autodiff landscape**.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## float32 by default
#
# NumPy computes in 64-bit floats unless told otherwise; JAX in 32-bit. GPUs and TPUs are
# built for 32 bits and fewer, and half the bytes means half the memory and half the
# traffic between memory and the chip.

# %%
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths

n = 1_000_000
x = jnp.linspace(0.0, 1.0, n)
x64 = np.linspace(0.0, 1.0, n)
print(f"JAX   {x.dtype}: {x.nbytes / 1e6:.0f} MB for {n:,} numbers")
print(f"NumPy {x64.dtype}: {x64.nbytes / 1e6:.0f} MB")
assert x.dtype == jnp.float32 and x64.dtype == np.float64
assert x64.nbytes == 2 * x.nbytes == 8 * n

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### What float32 costs: digits
#
# float32 keeps 24 significant bits (about 7 decimal digits), float64 keeps 53 (about 16).
# Below, the same mean of a million numbers in both, against an exactly rounded sum
# (`math.fsum`) as the oracle.

# %%
oracle = math.fsum(np.sin(x64) ** 2) / n
err32 = abs(float(jnp.mean(jnp.sin(x) ** 2)) - oracle) / oracle
err64 = abs(float(np.mean(np.sin(x64) ** 2)) - oracle) / oracle
print(f"relative error, JAX float32:   {err32:.1e}")
print(f"relative error, NumPy float64: {err64:.1e}")
assert jnp.finfo(jnp.float32).eps == 2.0**-23 and np.finfo(np.float64).eps == 2.0**-52
assert err64 < 1e-12 < err32 < 1e-5

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### What float32 buys: speed
#
# The same matrix product in NumPy, in float64 and in float32: the only difference is
# the dtype. `best_of` keeps the fastest of a few runs, the one least disturbed by
# whatever else the machine is doing; the two alternate, so both see the same machine.

# %%
def best_of(run, repeat=5):
    """The fastest of `repeat` calls of `run()`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


size = 1024  # big enough that arithmetic, not overhead, dominates
a64 = np.random.default_rng(0).standard_normal((size, size))
a32 = a64.astype(np.float32)
pairs = [(best_of(lambda: a64 @ a64, 1), best_of(lambda: a32 @ a32, 1)) for _ in range(15)]
t64, t32 = min(t for t, _ in pairs), min(t for _, t in pairs)
print(f"NumPy {size}×{size} matmul: float64 {t64 * 1e3:.1f} ms, float32 {t32 * 1e3:.1f} ms")
assert t64 / t32 > 1, "float32 should be faster than float64"

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `jax.jit`: compile the whole function
#
# Without `jit`, JAX runs one operation at a time, as NumPy does: each writes a full
# intermediate array. `jax.jit` traces the function once into a **jaxpr**, hands it to
# the XLA compiler, which fuses the element-wise operations into one loop.

# %%
def gelu(x):
    """The GELU activation (tanh approximation), as in GPT-2."""
    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x**3)))


eqns = jax.make_jaxpr(gelu)(x).jaxpr.eqns
print(f"{len(eqns)} primitive operations:", " ".join(e.primitive.name for e in eqns))
assert len(eqns) >= 6

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Measured: eager against `jit`
#
# The first call of the jitted function traces and compiles; later calls with the same
# shape and dtype reuse the compiled program. Every timing ends with
# `block_until_ready()`: the next slide shows why.

# %%
gelu_jit = jax.jit(gelu)
start = time.perf_counter()
gelu_jit(x).block_until_ready()
t_first = time.perf_counter() - start
t_eager = best_of(lambda: gelu(x).block_until_ready())
t_jit = best_of(lambda: gelu_jit(x).block_until_ready())
print(f"first jit call (trace + compile + run): {t_first * 1e3:.1f} ms")
print(f"eager {t_eager * 1e3:.2f} ms, jit {t_jit * 1e3:.2f} ms: {t_eager / t_jit:.1f}× faster")
assert t_eager / t_jit > 1 and t_first > t_jit
np.testing.assert_allclose(gelu_jit(x), gelu(x), rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Asynchronous dispatch: why naive timers lie
#
# A JAX call returns as soon as the work is **queued** on the device; Python runs ahead
# while the device computes. A timer stopped when the call returns measures the queueing,
# not the work. `block_until_ready()` waits for the result.

# %%
# enough work that the device is still busy when the call returns: a GPU or TPU
# multiplies 2000 x 2000 matrices in well under a millisecond
cpu_size = 1000 if paths.quick() else 2000
size = cpu_size if jax.default_backend() == "cpu" else 8192
big = jnp.ones((size, size))
matmul = jax.jit(lambda a: a @ a)
matmul(big).block_until_ready()  # compile first


def time_call():
    start = time.perf_counter()
    result = matmul(big)
    returned = time.perf_counter() - start
    result.block_until_ready()
    return returned, time.perf_counter() - start


runs = [time_call() for _ in range(3)]
returned, finished = min(r for r, _ in runs), min(f for _, f in runs)
print(f"the call returned after {returned * 1e3:.3f} ms; the result was ready after "
      f"{finished * 1e3:.1f} ms")
assert finished > 10 * returned

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Timing JAX code correctly
#
# - end every timed call with `.block_until_ready()` (for a pytree of arrays:
#   `jax.block_until_ready(tree)`);
# - call a jitted function once before timing it, so compilation is not counted;
# - keep the best of a few runs.
#
# Printing a result, or `np.asarray(result)`, also waits: the value has to exist.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The same code on a CPU, a GPU or a TPU
#
# Nothing above named a device. JAX put every array on its default device and XLA
# compiled for it. On a Colab TPU runtime the same cells run on the TPU.

# %%
device = jax.devices()[0]
y = gelu_jit(x)
print(jaxtour.describe_devices())
print(f"y lives on {y.devices()}: a {device.platform} ({device.device_kind})")
assert y.devices() == {device} and jax.default_backend() == device.platform


def gelu_numpy(x):  # the oracle: the same formula in float64 NumPy
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


np.testing.assert_allclose(np.asarray(y), gelu_numpy(x64), rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where JAX sits: the autodiff landscape
#
# Every deep-learning framework must get derivatives and speed out of a program. JAX's
# way: **trace pure functions** into jaxprs, transform them (`grad`, `vmap`), and compile
# them with XLA.

# %% tags=["hide-input"]
from jaxtour.viz import draw_autodiff_landscape

landscape = draw_autodiff_landscape()
assert all(name in landscape.source for name in ("PyTorch", "TensorFlow", "JAX"))
assert landscape.svg().lstrip().startswith("<?xml")
landscape

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A derivative, checked
#
# `jax.grad(f)` is a new function: the derivative of `f`. Lesson 02 shows how it works;
# here it is checked against a central finite difference in float64 NumPy.

# %%
dgelu = jax.grad(gelu)
h = 1e-6
finite_difference = (gelu_numpy(1.0 + h) - gelu_numpy(1.0 - h)) / (2 * h)
print(f"jax.grad(gelu)(1.0) = {float(dgelu(1.0)):.6f}; finite difference {finite_difference:.6f}")
assert abs(float(dgelu(1.0)) - finite_difference) < 1e-5

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - saw that JAX arrays are float32 by default: half NumPy's bytes, faster, about 7 digits
#   against float64's 16;
# - compiled a function with `jax.jit` and measured the speed-up over running it eagerly;
# - timed a call with and without `block_until_ready()`: JAX dispatches asynchronously;
# - checked that the same code ran on this machine's device and matched float64 NumPy;
# - drew the autodiff landscape and checked a first `jax.grad` against finite differences.
