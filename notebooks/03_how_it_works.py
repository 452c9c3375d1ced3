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
# # 03 · How JAX works: tracing, jaxprs, and what XLA does with them
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/03_how_it_works.ipynb)
#
# `jax.jit` does not read your Python. It *runs* it once, with stand-in values called
# tracers, writes down every operation as a **jaxpr**, and hands that to the XLA compiler.
# You will see:
#
# - what a **tracer** is, printed from inside a function;
# - the **jaxpr** of a small function and of an MLP's training step, as text and drawn;
# - the **pure-function pitfalls** that follow: a `print` that runs once, a global that is
#   baked in, and three factorials (imperative, functional, `lax.fori_loop`);
# - the **pipeline** from Python to the device, built up in three slides;
# - **before and after XLA**: StableHLO versus compiled HLO, and what fusion means.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The road in one picture
#
# Two ideas carry the whole lesson: **tracing** turns a Python function into a jaxpr,
# and **jit** hands the jaxpr to the XLA compiler, which builds code for your device.

# %%
import math

import jax
import jax.numpy as jnp
from jax import lax

from jaxtour.viz import draw_jaxpr, draw_pipeline

step1 = draw_pipeline(step=1)
assert step1.title == "how JAX runs a function (step 1 of 3)"
step1

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Tracing: running a function on stand-ins
#
# To see what a function does, JAX calls it with **tracers**: objects that carry a shape
# and a dtype but no value, and record every operation applied to them. Printing one from
# inside the function shows it. Asking for its value fails: there is none yet.

# %%
seen = []


def f(x):
    seen.append(x)
    print("inside f, x is", x)
    return jnp.sin(x) * 2.0 + 1.0


jaxpr = jax.make_jaxpr(f)(3.0)
tracer = seen[0]
print("shape", tracer.shape, "dtype", tracer.dtype, "type", type(tracer).__name__)
assert "Tracer" in type(tracer).__name__
assert tracer.shape == () and tracer.dtype == jnp.float32
try:
    float(tracer)  # a tracer has no number inside it
    raise AssertionError("a tracer should have no concrete value")
except jax.errors.ConcretizationTypeError as err:
    print(type(err).__name__, "-", str(err).splitlines()[0])

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The jaxpr: what the tracer recorded
#
# The record is a **jaxpr**: typed inputs (`a:f32[]`), one **equation** per primitive
# operation, and the outputs. Python is gone: no `def`, no names, only `sin`, `mul`, `add`.

# %%
print(jaxpr)
primitives = [eqn.primitive.name for eqn in jaxpr.eqns]
assert primitives == ["sin", "mul", "add"], primitives
(aval,) = jaxpr.in_avals  # one input: a float32 scalar, the `a:f32[]` above
assert aval.shape == () and aval.dtype == jnp.float32

# %% [markdown] slideshow={"slide_type": "subslide"}
# The same jaxpr drawn: one node per equation, the edges carry shapes and dtypes, and the
# literals `2.0` and `1.0` are written inline.

# %%
small = draw_jaxpr(f)(3.0)
assert small.title.startswith("jaxpr of f: 3 equations")
small

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The jaxpr of a training step
#
# A real program is the same thing, bigger. `jaxtour.mlp.update` is one step of gradient
# descent with momentum for the MNIST MLP (784 → 512 → 256 → 10): the forward pass,
# `jax.value_and_grad`'s backward pass and the parameter update, all in one jaxpr. The
# matrix products (`dot_general`) are the work; everything else is small.

# %%
from jaxtour import mlp

params = mlp.init_params(jax.random.key(0))
x, y = mlp.example_batch(8)  # x: f32[8, 784], y: i32[8]; random, no download needed
step_jaxpr = jax.make_jaxpr(mlp.update)(params, x, y)
counts = {}
for eqn in step_jaxpr.eqns:
    counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
print(len(step_jaxpr.eqns), "equations:", dict(sorted(counts.items(), key=lambda kv: -kv[1])))
layers = len(mlp.SIZES) - 1
# forward: one product per layer; backward: one per layer for the weight gradients and
# one per layer but the first for the gradient flowing back to the layer's input
assert counts["dot_general"] == layers + layers + (layers - 1)
draw_jaxpr(mlp.update)(params, x, y)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Naming each stage
#
# The jaxpr is not what runs. JAX **lowers** it to **StableHLO**, the portable program it
# hands to XLA; XLA **compiles** that into optimised HLO for one device. Beside the main
# road, the **transformations** (`grad`, `vmap`, sharding) read a jaxpr and write a new one.

# %%
step2 = draw_pipeline(step=2)
assert step2.title == "how JAX runs a function (step 2 of 3)"
step2

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pure functions: pitfall 1, a `print` runs once
#
# Tracing runs your Python **once per input shape and dtype**; afterwards `jit` reuses the
# compiled program and your Python does not run at all. So a `print` inside a jitted
# function prints while tracing, and then never again, until a new shape forces a new trace.

# %%
printed = []


@jax.jit
def noisy(x):
    print("tracing noisy with", x)
    printed.append(x.shape)
    return x * 2.0


for _ in range(3):
    noisy(jnp.ones(3))
assert printed == [(3,)], printed  # three calls, one trace
noisy(jnp.ones(4))  # a new shape: traced again
assert printed == [(3,), (4,)], printed

# %% [markdown] slideshow={"slide_type": "fragment"}
# To print values at run time, use `jax.debug.print`: it becomes part of the program.

# %%
@jax.jit
def honest(x):
    jax.debug.print("running honest with {x}", x=x)
    return x * 2.0


honest(jnp.ones(2))
honest_eqns = honest.trace(jnp.ones(2)).jaxpr.eqns
assert any(eqn.primitive.name.startswith("debug") for eqn in honest_eqns)  # in the program

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pitfall 2: a global that changes is baked in
#
# A global read while tracing is copied into the jaxpr as a constant. Change the global
# later and the compiled function does not notice; plain Python does.

# %%
scale = 2.0


def scaled(x):
    return x * scale


scaled_jit = jax.jit(scaled)
assert scaled_jit(1.0) == 2.0
scale = 3.0
print("jit:", scaled_jit(1.0), " python:", scaled(1.0))
assert scaled_jit(1.0) == 2.0  # still the old value: baked in at trace time
assert scaled(1.0) == 3.0


def scaled_pure(x, scale):  # the fix: everything a function reads is an argument
    return x * scale


assert jax.jit(scaled_pure)(1.0, scale) == 3.0

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pitfall 3: Python control flow on traced values
#
# Factorial, three ways. The **imperative** one loops with a Python `while` and mutates;
# the **functional** one recurses. Both are correct Python, and both fail under `jit`:
# `while n > 1` and `if n <= 1` ask a tracer for a `True` or `False` it does not have.

# %%
def factorial_imperative(n):
    result = 1
    while n > 1:
        result *= n
        n -= 1
    return result


def factorial_functional(n):
    return 1 if n <= 1 else n * factorial_functional(n - 1)


assert factorial_imperative(5) == factorial_functional(5) == math.factorial(5) == 120
for factorial in (factorial_imperative, factorial_functional):
    try:
        jax.jit(factorial)(5)
        raise AssertionError(f"{factorial.__name__} should not trace")
    except jax.errors.TracerBoolConversionError as err:
        print(factorial.__name__, "->", type(err).__name__)

# %% [markdown] slideshow={"slide_type": "subslide"}
# Marking `n` static (`static_argnums=0`) makes it a Python number again: it works, but
# the loop runs at trace time, so every new `n` is a new trace and a new compile, and the
# jaxpr holds no loop at all, only the answer.

# %%
factorial_static = jax.jit(factorial_imperative, static_argnums=0)
assert factorial_static(5) == 120
assert len(jax.make_jaxpr(factorial_imperative, static_argnums=0)(5).eqns) == 0

# %% [markdown] slideshow={"slide_type": "subslide"}
# The JAX way is a loop **primitive**: `lax.fori_loop(lower, upper, body, init)` calls
# `body(i, carry)` for `i` from `lower` to `upper - 1`. The loop is now *in* the jaxpr (a
# `while` with a condition and a body), so one trace serves every `n`.

# %%
traces = []


@jax.jit
def factorial_loop(n):
    traces.append(n)
    return lax.fori_loop(1, n + 1, lambda i, acc: acc * i, 1)


for n in range(13):  # 12! is the largest that fits in int32
    assert factorial_loop(n) == math.factorial(n), n
assert len(traces) == 1  # thirteen calls, one trace
loop_jaxpr = jax.make_jaxpr(factorial_loop)(5)
print(loop_jaxpr)
assert "while" in str(loop_jaxpr)
draw_jaxpr(factorial_loop)(5)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The entry points, stage by stage
#
# Every stage has a public door: `jax.make_jaxpr` (or `jax.jit(f).trace(x).jaxpr`) for the
# jaxpr, `.lower()` for StableHLO, `.compile()` for XLA's result.

# %%
step3 = draw_pipeline(step=3)
assert step3.title == "how JAX runs a function (step 3 of 3)"
step3

# %%
traced = jax.jit(mlp.update).trace(params, x, y)
lowered = traced.lower()
compiled = lowered.compile()
stablehlo_text, hlo_text = lowered.as_text(), compiled.as_text()
stablehlo_lines = [line.strip() for line in stablehlo_text.splitlines() if "stablehlo." in line]
print("\n".join(line[:110] for line in stablehlo_lines[:5]), "\n...")
assert len(traced.jaxpr.eqns) == len(step_jaxpr.eqns)  # two doors, one jaxpr
assert "stablehlo.dot_general" in stablehlo_text and "fusion" in hlo_text

# %% [markdown] slideshow={"slide_type": "subslide"}
# `draw_pipeline(mlp.update)` puts *this* function's numbers on the road: its source, how many
# equations (counting those inside nested jaxprs such as `relu`'s `custom_jvp_call`), how
# many StableHLO ops, how many fusions XLA made, and the device.

# %%
mlp_pipeline = draw_pipeline(mlp.update)(params, x, y)
print(mlp_pipeline.title)
nested = [e for e in step_jaxpr.eqns if e.primitive.name in ("jit", "custom_jvp_call")]
total_eqns = int(mlp_pipeline.title.split(": ")[1].split()[0])
assert nested and total_eqns > len(step_jaxpr.eqns)
mlp_pipeline

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Before XLA: StableHLO
#
# StableHLO is what JAX hands XLA: one op per small step, every broadcast spelled out.
# Here is one dense layer with a GELU activation, `gelu(x @ w + b)`: a matrix product and
# a chain of elementwise ops (GELU's `tanh` approximation is a handful of them).

# %%
from jaxtour.viz import compare_stages, draw_hlo


def dense_gelu(x, w, b):
    return jax.nn.gelu(x @ w + b)


layer_args = (jnp.ones((8, 784)), jnp.ones((784, 128)), jnp.ones(128))
before = draw_hlo(dense_gelu, stage="stablehlo")(*layer_args)
print(before.title)
assert before.title.startswith("StableHLO of dense_gelu")
before

# %% [markdown] slideshow={"slide_type": "slide"}
# ## After XLA: fusion
#
# XLA's biggest move is **fusion**: a chain of elementwise ops becomes one kernel that
# reads its inputs once and writes one result, instead of writing every intermediate
# array to memory and reading it back. Each box below is one fusion, holding the ops it
# absorbed; memory traffic, not arithmetic, is what it saves.

# %%
after = draw_hlo(dense_gelu, stage="compiled")(*layer_args)
layer_xla = compare_stages(dense_gelu)(*layer_args)
print(after.title)
print(layer_xla.headline())
assert layer_xla.compiled_ops < layer_xla.stablehlo_ops  # fewer ops after XLA
assert any(fusion.ops["tanh"] for fusion in layer_xla.fusions)  # GELU's tanh was fused
after

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## What XLA did to the training step
#
# `compare_stages` counts the ops of each kind before and after XLA and lists every fusion
# with the jaxpr primitives and the lines of code it absorbed. For the MLP's training
# step, a hundred-odd StableHLO ops become a few dozen: the three matrix products of the
# forward pass and the rest fused around them.

# %%
step_xla = compare_stages(mlp.update)(params, x, y)
print(step_xla.headline())
assert step_xla.jaxpr_eqns == total_eqns  # the same count draw_pipeline showed
assert step_xla.compiled_ops < step_xla.stablehlo_ops
assert len(step_xla.fusions) >= 1 and step_xla.fused.total() > len(step_xla.fusions)
step_xla

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - printed a **tracer**: a shape and a dtype with no value, recording every operation;
# - read and drew the **jaxpr** of a small function and of an MLP training step;
# - met the **pure-function pitfalls**: a `print` runs once per trace, a global is baked
#   in, Python `while`/`if` cannot branch on a tracer, and `lax.fori_loop` puts the loop
#   in the program;
# - followed the **pipeline** from Python to the device in three steps, then with the
#   MLP's own numbers;
# - compared **StableHLO with compiled HLO** and saw XLA fuse many ops into few kernels.
