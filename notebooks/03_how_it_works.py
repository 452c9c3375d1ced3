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
# # 03 · How JAX works: tracing, jaxprs, and what XLA does with them
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/03_how_it_works.ipynb)
#
# - what a **tracer** is, and the **jaxpr** it records
# - the **pitfalls**: a `print` run once, a baked-in global, a Python `if`, retraces
# - the **pipeline** from Python to the device, stage by stage
# - **before and after XLA**: StableHLO, compiled HLO, fusion
# - **FLOPs, bytes**, a measured **roofline**, a **profile** op by op; **memory**
#
# *About 55 minutes.*

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
import re

import jax
import jax.numpy as jnp
from jax import lax

from jaxtour import mlp
from jaxtour.cost import cost_table, draw_roofline, fusion_traffic, profile
from jaxtour.exercises import check
from jaxtour.tracing import explain_retraces
from jaxtour.viz import compare_stages, draw_hlo, draw_jaxpr, draw_pipeline

# %% [markdown] slideshow={"slide_type": "notes"}
# Lesson 02 transformed functions; this one opens the box. Two ideas carry it: tracing
# turns Python into a jaxpr, and XLA compiles that jaxpr for the device. The pitfalls
# every JAX user meets follow from the first.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The road in one picture
#
# **Tracing** turns a Python function into a jaxpr; **jit** hands the jaxpr to XLA.

# %%
draw_pipeline(step=1)

# %% tags=["check"] jupyter={"source_hidden": true}
assert draw_pipeline(step=1).title == "how JAX runs a function (step 1 of 3)"

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.jit` does not read your Python. It *runs* it once, with stand-in values called
# tracers, writes down every operation as a **jaxpr**, and hands that to the XLA compiler,
# which builds code for your device. These two ideas carry the whole lesson.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Tracing: running a function on stand-ins
#
# JAX calls the function with **tracers**: a shape and a dtype, no value.

# %%
seen = []


def f(x):
    seen.append(x)
    print("inside f, x is", x)
    return jnp.sin(x) * 2.0 + 1.0


jaxpr = jax.make_jaxpr(f)(3.0)
tracer = seen[0]
print("shape", tracer.shape, "dtype", tracer.dtype)

# %% tags=["check"] jupyter={"source_hidden": true}
assert "Tracer" in type(tracer).__name__
assert tracer.shape == () and tracer.dtype == jnp.float32

# %% [markdown] slideshow={"slide_type": "notes"}
# To see what a function does, JAX calls it with **tracers**: objects that carry a shape
# and a dtype but no value, and record every operation applied to them. Printing one from
# inside the function shows it.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## A `jit` tracer has no value
#
# Asking for a number fails: there is none yet.

# %%
def needs_a_number(x):
    return float(x) * 2.0  # asks the tracer for its value


try:
    jax.jit(needs_a_number)(3.0)
    no_value = None
except jax.errors.ConcretizationTypeError as err:
    no_value = err
    print(type(err).__name__, "-", str(err).splitlines()[0][:60])

# %% tags=["check"] jupyter={"source_hidden": true}
assert isinstance(no_value, jax.errors.ConcretizationTypeError), "a tracer has no concrete value"
assert needs_a_number(3.0) == 6.0  # without jit, x is a number: no error
assert jax.grad(lambda v: v if v > 0 else 0.0)(3.0) == 1.0  # grad alone: a value to test
try:
    jnp.sin(tracer)
    raise AssertionError("a leaked tracer should not compute")
except jax.errors.UnexpectedTracerError:
    pass  # the notes' claim: a leaked tracer has an error of its own

# %% [markdown] slideshow={"slide_type": "notes"}
# Inside `jit`, `x` stands for every `f32[]` at once, so `float(x)` has no answer:
# `ConcretizationTypeError`. Without `jit` it runs; eagerly, `grad`'s tracers even carry
# values (a Python `if` works; `float` is refused, as it would drop the derivative). A
# tracer kept after tracing is *leaked*: using it raises `UnexpectedTracerError`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The jaxpr: what the tracer recorded
#
# Typed inputs, one **equation** per primitive, the outputs. Python is gone.

# %%
print(jaxpr)

# %% tags=["check"] jupyter={"source_hidden": true}
primitives = [eqn.primitive.name for eqn in jaxpr.eqns]
assert primitives == ["sin", "mul", "add"], primitives
(aval,) = jaxpr.in_avals  # one input: a float32 scalar, the `a:f32[]` above
assert aval.shape == () and aval.dtype == jnp.float32

# %% [markdown] slideshow={"slide_type": "notes"}
# The record is a **jaxpr**: typed inputs (`a:f32[]`), one **equation** per primitive
# operation, and the outputs. No `def`, no names, only `sin`, `mul`, `add`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The same jaxpr, drawn
#
# One node per equation; edges carry shapes and dtypes; literals inline.

# %%
small = draw_jaxpr(f, rankdir="LR")(3.0)
small

# %% tags=["check"] jupyter={"source_hidden": true}
assert small.title.startswith("jaxpr of f: 3 equations")

# %% [markdown] slideshow={"slide_type": "notes"}
# `draw_jaxpr` draws the jaxpr `make_jaxpr` printed: one node per equation, edges labelled
# with shape and dtype, literals such as `2.0` inside the node that uses them. Same
# program, easier to read as it grows.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The jaxpr of a training step
#
# One step of the MNIST MLP (784 → 512 → 256 → 10): forward, backward, update.

# %%
params = mlp.init_params(jax.random.key(0))
x, y = mlp.example_batch(8)  # x: f32[8, 784], y: i32[8]; random, no download
step_jaxpr = jax.make_jaxpr(mlp.update)(params, x, y)
counts = {}
for eqn in step_jaxpr.eqns:
    counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
print(len(step_jaxpr.eqns), "top-level equations, of which", counts["dot_general"], "dot_general")

# %% tags=["check"] jupyter={"source_hidden": true}
layers = len(mlp.SIZES) - 1
# forward: one product per layer; backward: one per layer for the weight gradients and
# one per layer but the first for the gradient flowing back to the layer's input
assert counts["dot_general"] == layers + layers + (layers - 1) == 8

# %% [markdown] slideshow={"slide_type": "notes"}
# `mlp.update`, one step of SGD with momentum: forward pass, backward pass and update in
# one jaxpr. This counts its top-level equations only; those inside nested jaxprs
# (`relu`'s `custom_jvp_call`) come later. The eight `dot_general`s are the work: 3
# forward, 3 weight gradients, 2 gradients back to the hidden layers.

# %% slideshow={"slide_type": "skip"}
draw_jaxpr(mlp.update)(params, x, y)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Naming each stage
#
# jaxpr → **StableHLO** (lowering) → compiled HLO (XLA). `grad` and `vmap` rewrite
# jaxprs.

# %%
draw_pipeline(step=2)

# %% tags=["check"] jupyter={"source_hidden": true}
assert draw_pipeline(step=2).title == "how JAX runs a function (step 2 of 3)"

# %% [markdown] slideshow={"slide_type": "notes"}
# The jaxpr is not what runs. JAX **lowers** it to **StableHLO**, which XLA **compiles**
# into optimised HLO for your device(s). Beside the road, transformations (`grad`,
# `vmap`) read a jaxpr and write a new one. The drawing shows shardings as Auto mode
# has them, annotations XLA reads; the notebook shows Explicit mode too (lesson 07).

# %% [markdown] slideshow={"slide_type": "skip"}
# In **Auto** mode shardings are annotations: the jaxpr of `jax.jit(f, in_shardings=...)`
# is that of `jax.jit(f)`, the shardings travel into StableHLO, and XLA's partitioner
# (Shardy; GSPMD before it) makes per-device programs with the collectives they need. In
# **Explicit** mode (`jax.make_mesh`'s default in JAX 0.10.2 and 0.12; passed explicitly
# below) the sharding is part of each array's type, printed in the jaxpr
# (`f32[8@batch,4]`), and `jax.reshard` is an equation. Both are shown below on a
# one-device mesh; lesson 07 teaches the modes.

# %% slideshow={"slide_type": "skip"}
from jax import P
from jax.sharding import AxisType, NamedSharding

explicit_mesh = jax.make_mesh((1,), ("batch",), axis_types=(AxisType.Explicit,))
sharded = jax.device_put(jnp.ones((8, 4)), NamedSharding(explicit_mesh, P("batch")))
with jax.set_mesh(explicit_mesh):
    explicit_jaxpr = jax.make_jaxpr(lambda v: jax.reshard(v * 2.0, P()))(sharded)
print(explicit_mesh.axis_types, explicit_jaxpr)

# %% tags=["check"] jupyter={"source_hidden": true}
auto_mesh = jax.make_mesh((1,), ("batch",), axis_types=(AxisType.Auto,))
with_shardings = jax.jit(mlp.update, in_shardings=NamedSharding(auto_mesh, P()))
plain = jax.jit(mlp.update)
assert str(with_shardings.trace(params, x, y).jaxpr) == str(plain.trace(params, x, y).jaxpr)
assert "sharding" in with_shardings.lower(params, x, y).as_text()  # annotations in StableHLO
assert explicit_mesh.axis_types == (AxisType.Explicit,)
assert "f32[8@batch,4]" in str(explicit_jaxpr)  # Explicit: the sharding is in the type
assert [e.primitive.name for e in explicit_jaxpr.eqns] == ["mul", "reshard"]

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pitfall 1: a `print` runs once per trace
#
# After tracing, `jit` reuses the compiled program: your Python does not run at all.

# %%
printed = []


@jax.jit
def noisy(x):
    print("tracing noisy with", x)
    printed.append(x.shape)
    return x * 2.0


for length in (3, 3, 3, 4):  # three calls with f32[3], then a new shape
    noisy(jnp.ones(length))

# %% tags=["check"] jupyter={"source_hidden": true}
assert printed == [(3,), (4,)], printed  # four calls, two traces

# %% [markdown] slideshow={"slide_type": "notes"}
# A `print` inside a jitted function prints while tracing and then never again, until a
# call needs a new trace.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## What makes a new trace
#
# The **abstract signature**: shapes, dtypes, weak types, pytree structure, static arguments.

# %%
printed.clear()
noisy(jnp.ones(3))                # seen before: no trace
noisy(jnp.ones(3, jnp.int32))     # new dtype
noisy(2.0)                        # a Python float: weakly typed f32[]
noisy(jnp.float32(2.0))           # a strong f32[]: not the same signature
print(printed)

# %% tags=["check"] jupyter={"source_hidden": true}
assert printed == [(3,), (), ()], printed  # int32, weak f32[], strong f32[]: three traces
weak, strong = (jax.make_jaxpr(lambda v: v)(v).in_avals[0] for v in (2.0, jnp.float32(2.0)))
assert weak.weak_type and not strong.weak_type

# %% [markdown] slideshow={"slide_type": "notes"}
# `jit` caches one trace per function and abstract signature: each argument's shape,
# dtype and weak type (a Python `2.0` is a "weak" float32 that adapts to what it meets),
# the pytree structure, and the *values* of static arguments. The cache belongs to the
# function object: `jax.jit(lambda ...)` inside a loop traces every time.

# %% [markdown] slideshow={"slide_type": "skip"}
# Shardings count too: in Explicit mode (lesson 07) the sharding is part of an array's
# type, so a new one retraces; in Auto mode a new input sharding reuses the trace but
# compiles again. The cell below checks the lambda, pytree and static-argument cases.

# %% tags=["check"] jupyter={"source_hidden": true}
lambda_traces = []
for _ in range(3):
    jax.jit(lambda v: (lambda_traces.append(1), v * 2.0)[1])(jnp.ones(3))
assert len(lambda_traces) == 3  # a new function object each time: a new trace each time
pytree_traces = []
by_structure = jax.jit(lambda d: (pytree_traces.append(1), d["a"])[1])
by_structure({"a": 1.0})
by_structure({"a": 1.0, "b": 2.0})  # same leaf types, another pytree structure
assert len(pytree_traces) == 2
static_traces = []
by_static = jax.jit(lambda v, n: (static_traces.append(n), v * n)[1], static_argnums=1)
for n in (2, 2, 3):
    by_static(1.0, n)
assert static_traces == [2, 3]  # a static argument's value is part of the signature

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Why did it trace again? Ask `explain_retraces`

# %%
def total(xs, n):
    return sum(xs) * n  # Python's sum over a list: one add per item


total_jit = explain_retraces(total, static_argnums=1)
total_jit([1.0, 2.0], 2)
total_jit([1.0, 2.0], 2)       # the same signature: a cache hit
total_jit([1.0, 2.0, 3.0], 2)  # a list argument that grew
total_jit([1.0, 2.0, 3.0], 3)  # a static Python number that changed
total_jit([1, 2, 3], 3)        # Python ints, not floats
print(total_jit.report)

# %% tags=["check"] jupyter={"source_hidden": true}
calls = total_jit.calls
assert [c.event for c in calls] == ["first trace", "cache hit"] + ["retrace"] * 3
assert [[cause.kind for cause in c.causes] for c in calls[2:]] == [
    ["structure"], ["static value"], ["dtype"]]
assert calls[2].causes[0].words == "`xs` was a list of 2, now a list of 3"
assert calls[3].causes[0].words == "static `n` changed value: 2 → 3"
assert calls[4].causes[0].words.endswith("changed dtype: f32[] → i32[]")
assert total_jit.traces == 4 and all(c.compile_s > 0 for c in calls if c.causes)
assert calls[2].site.line == calls[1].site.line + 1  # each row names its call's line

# %% [markdown] slideshow={"slide_type": "notes"}
# `explain_retraces(f)` is `jax.jit(f)` that records what `jit` keys its cache on and,
# for a call that traced again, names what changed since the closest earlier call. The
# compile column is JAX's own timing, read through `jax.monitoring`. JAX's built-in
# version is a log message: `jax_explain_cache_misses`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## JAX's own: `jax_explain_cache_misses`
#
# The same question, answered by JAX in its log: one warning per trace, none on a hit.

# %%
import logging

explained = []  # JAX's log records, caught here (with no handler: printed to stderr)
handler = logging.Handler()
handler.emit = explained.append
logging.getLogger("jax").addHandler(handler)
jax.config.update("jax_explain_cache_misses", True)
total_native = jax.jit(lambda xs, n: total(xs, n), static_argnums=1)  # a fresh cache
logged = []  # how many records each call wrote
for xs, n in (([1.0, 2.0], 2), ([1.0, 2.0], 2), ([1.0, 2.0, 3.0], 2)):
    total_native(xs, n)
    logged.append(len(explained) - sum(logged))
jax.config.update("jax_explain_cache_misses", False)
logging.getLogger("jax").removeHandler(handler)
print(logged, explained[-1].getMessage())

# %% tags=["check"] jupyter={"source_hidden": true}
# three calls: a first trace, a cache hit, a retrace; JAX logs on the two traces only
# (JAX 0.10.2 and 0.12), as warnings under the `jax` logger
assert logged[0] >= 1 and logged[1] == 0 and logged[2] >= 1, logged
assert all(r.levelno == logging.WARNING and r.name.startswith("jax") for r in explained)
assert not jax.config.jax_explain_cache_misses

# %% [markdown] slideshow={"slide_type": "notes"}
# With `jax_explain_cache_misses` on, every trace logs why the cache missed: the closest
# earlier key and what differs (JAX 0.10.2 and 0.12). It speaks in the log, in JAX's
# words, for every function; `explain_retraces` wraps one function and keeps a table you
# can query and diff. Set the flag while debugging, then turn it off.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Predict, then look: what did a retrace change?
#
# Call 3 summed three floats where call 1 summed two; call 5 summed Python ints where
# call 4 summed floats. Predict: which equations appear, and which change type?

# %% [markdown] slideshow={"slide_type": "notes"}
# Give the room a minute. `sum` is a Python loop starting from 0; tracing records every
# `+`, so three floats make one more `add`. XLA drops the `0 + x` when it compiles.
# Ints: the same four equations, each now on `i32`. `report.diff(n)` compiles call `n`
# and the closest earlier trace again and matches them level by level.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `report.diff(n)`: two traces, side by side

# %%
grew, ints = total_jit.report.diff(3), total_jit.report.diff(5)
print(grew.headline())       # one add more
print(ints.jaxpr.by_line())  # every equation changed type
grew.draw("jaxpr")

# %% tags=["check"] jupyter={"source_hidden": true}
assert dict(grew.jaxpr.added) == {"add": 1} and not grew.jaxpr.removed
assert not grew.jaxpr.changed  # the shared equations did not change
assert grew.cost["jaxpr flops"][1] == grew.cost["jaxpr flops"][0] + 1
assert not ints.jaxpr.added and not ints.jaxpr.removed
assert sorted(c.name for c in ints.jaxpr.changed) == ["add", "add", "add", "mul"]
assert ints.cost["flops"][0] == ints.cost["flops"][1]  # same work, other dtype
assert grew.cost["flops"][1] == grew.cost["flops"][0] + 1  # XLA dropped 0 + x in both

# %% [markdown] slideshow={"slide_type": "notes"}
# Green added, red removed, amber changed, grey the same; in longer programs three or
# more unchanged rows fold into one. `diff(f, g)` from `jaxtour.viz` does the same for
# any two functions on the same arguments (a cast to bf16, a `jax.checkpoint`, a loop as
# `scan`) and names the lines that differ at the jaxpr, StableHLO and compiled levels.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Printing at run time: `jax.debug.print`
#
# It becomes part of the program, so it runs on every call.

# %%
@jax.jit
def honest(x):
    jax.debug.print("running honest with {x}", x=x)
    return x * 2.0


honest(jnp.ones(2))
honest_eqns = honest.trace(jnp.ones(2)).jaxpr.eqns

# %% tags=["check"] jupyter={"source_hidden": true}
assert any(eqn.primitive.name.startswith("debug") for eqn in honest_eqns)  # in the program

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.debug.print` is an equation in the jaxpr, so the compiled program prints on every
# call, with the run-time value. Use it for values; a plain `print` shows only tracers,
# once per trace.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pitfall 2: a global that changes is baked in
#
# A global read while tracing becomes a constant in the jaxpr.

# %%
scale = 2.0


def scaled(x):
    return x * scale


scaled_jit = jax.jit(scaled)
first = scaled_jit(1.0)
scale = 3.0
print("jit:", scaled_jit(1.0), " python:", scaled(1.0))

# %% tags=["check"] jupyter={"source_hidden": true}
assert first == 2.0
assert scaled_jit(1.0) == 2.0  # still the old value: baked in at trace time
assert scaled(1.0) == 3.0

# %% [markdown] slideshow={"slide_type": "notes"}
# While tracing, `scale` was 2.0, and the jaxpr holds the constant 2.0. Changing the
# global later changes nothing for the compiled program: no retrace, and no warning. Plain
# Python reads the new value.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `explain_retraces` sees the stale global
#
# `jit` does not watch globals, so no retrace: the table says the answer is stale.

# %%
scale = 2.0
scaled_seen = explain_retraces(scaled)
scaled_seen(1.0)
scale = 3.0
scaled_seen(1.0)  # a cache hit that used scale = 2.0
print(scaled_seen.report)

# %% tags=["check"] jupyter={"source_hidden": true}
assert [c.event for c in scaled_seen.calls] == ["first trace", "cache hit"]
assert scaled_seen.traces == 1 and scaled_seen(1.0) == 2.0
assert scaled_seen.calls[1].stale[0].startswith("`scale` changed (2.0 → 3.0) but jit did")

# %% [markdown] slideshow={"slide_type": "notes"}
# `jit` keys its cache on the arguments only, so the second call is a cache hit with the
# old constant. `explain_retraces` also remembers the globals the function read while
# tracing and flags the call whose answer used a stale one.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The fix: everything a function reads is an argument

# %%
def scaled_pure(x, scale):
    return x * scale


print(jax.jit(scaled_pure)(1.0, scale))

# %% tags=["check"] jupyter={"source_hidden": true}
assert jax.jit(scaled_pure)(1.0, scale) == 3.0

# %% [markdown] slideshow={"slide_type": "notes"}
# Pass `scale` in: it becomes a traced input, a new value needs no retrace, and the answer
# follows it. A function whose result depends only on its arguments is *pure*: what `jit`
# assumes.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pitfall 3: Python control flow on traced values
#
# Factorial, imperative and functional: correct Python, both fail under `jit`.

# %%
def factorial_imperative(n):
    result = 1
    while n > 1:
        result *= n
        n -= 1
    return result


def factorial_functional(n):
    return 1 if n <= 1 else n * factorial_functional(n - 1)

# %% tags=["check"] jupyter={"source_hidden": true}
assert factorial_imperative(5) == factorial_functional(5) == math.factorial(5) == 120

# %% [markdown] slideshow={"slide_type": "notes"}
# The **imperative** one loops with a Python `while` and mutates; the **functional** one
# recurses. `while n > 1` and `if n <= 1` ask a tracer for a `True` or `False` it does
# not have.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Under `jit`: `TracerBoolConversionError`

# %%
failures = {}
for factorial in (factorial_imperative, factorial_functional):
    try:
        jax.jit(factorial)(5)
    except jax.errors.TracerBoolConversionError as err:
        failures[factorial.__name__] = type(err).__name__
print(failures)

# %% tags=["check"] jupyter={"source_hidden": true}
assert failures == {name: "TracerBoolConversionError"
                    for name in ("factorial_imperative", "factorial_functional")}

# %% [markdown] slideshow={"slide_type": "notes"}
# Both versions fail the same way: the `while` test and the `if` ask a traced `n` for a
# Python `bool`. The error names the line; the next slides give two ways out.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `static_argnums`: works, but no loop is left
#
# The loop runs at trace time: every new `n` is a new trace and compile.

# %%
factorial_static = jax.jit(factorial_imperative, static_argnums=0)
print(factorial_static(5), jax.make_jaxpr(factorial_imperative, static_argnums=0)(5))

# %% tags=["check"] jupyter={"source_hidden": true}
assert factorial_static(5) == 120
assert len(jax.make_jaxpr(factorial_imperative, static_argnums=0)(5).eqns) == 0

# %% [markdown] slideshow={"slide_type": "notes"}
# Marking `n` static makes it a Python number again. The jaxpr holds no loop at all, only
# the answer.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The JAX way: a loop primitive
#
# `lax.fori_loop(lower, upper, body, init)`: the loop is *in* the jaxpr.

# %%
traces = []


@jax.jit
def factorial_loop(n):
    traces.append(n)
    return lax.fori_loop(1, n + 1, lambda i, acc: acc * i, 1)


print([int(factorial_loop(n)) for n in range(8)], "traces:", len(traces))
loop_jaxpr = jax.make_jaxpr(factorial_loop)(5)

# %% tags=["check"] jupyter={"source_hidden": true}
for n in range(13):  # 12! is the largest that fits in int32
    assert factorial_loop(n) == math.factorial(n), n
assert len(traces) == 1  # twenty-one calls, one trace
assert "while" in str(loop_jaxpr)

# %% [markdown] slideshow={"slide_type": "notes"}
# `lax.fori_loop` calls `body(i, carry)` for `i` from `lower` to `upper - 1`. With a
# traced bound it becomes a `while` primitive with a condition and a body, so one trace
# serves every `n`.

# %% slideshow={"slide_type": "skip"}
print(loop_jaxpr)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The loop, drawn
#
# A `while` cluster: a condition jaxpr and a body jaxpr.

# %%
draw_jaxpr(factorial_loop, rankdir="LR")(5)

# %% [markdown] slideshow={"slide_type": "notes"}
# The `while` cluster holds two nested jaxprs: the condition (is `i` still below the
# bound?) and the body (the product, and `i + 1`). Written once, whatever `n` is: one
# trace serves every factorial.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: make it jit-safe
#
# `leaky_relu_counted` counts its calls in a global list and branches with a Python
# `if`. Write `ex_leaky_relu(x)`: the same values (`x` where `x > 0`, else
# `0.1 * x`) for a scalar or an array, under `jax.jit`, with no side effect.

# %%
calls = []


def leaky_relu_counted(x):
    calls.append(1)  # counts calls... but only while tracing, under jit
    if x > 0:  # a Python `if`: fails on a tracer
        return x
    return 0.1 * x


# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_leaky_relu(x):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_leaky_relu(x):
    return jnp.where(x > 0, x, 0.1 * x)


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The list append runs once, while tracing: a jitted function
# should only compute its result. Drop it.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary><code>jnp.where(condition, a, b)</code> chooses elementwise,
# on the device, for scalars and arrays alike.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_leaky_relu)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_leaky_relu, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/03_how_it_works.ipynb`, or the Colab badge. Hint: drop the counter (it runs only
# while tracing), and replace the `if` with `jnp.where(x > 0, x, 0.1 * x)`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The entry points, stage by stage
#
# `jax.make_jaxpr` or `.trace()`, then `.lower()` and `.compile()`.

# %%
draw_pipeline(step=3)

# %% tags=["check"] jupyter={"source_hidden": true}
assert draw_pipeline(step=3).title == "how JAX runs a function (step 3 of 3)"

# %% [markdown] slideshow={"slide_type": "notes"}
# Each stage has its own door: `.trace()` gives the jaxpr, `.lower()` the StableHLO,
# `.compile()` the executable. Calling the jitted function runs all three, cached.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Each stage in code

# %%
traced = jax.jit(mlp.update).trace(params, x, y)
lowered = traced.lower()
compiled = lowered.compile()
stablehlo_text, hlo_text = lowered.as_text(), compiled.as_text()
stablehlo_lines = [line.strip() for line in stablehlo_text.splitlines() if "stablehlo." in line]
print("\n".join(line[:60] for line in stablehlo_lines[:4]), "\n...")

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(traced.jaxpr.eqns) == len(step_jaxpr.eqns)  # two doors, one jaxpr
assert "stablehlo.dot_general" in stablehlo_text and "fusion" in hlo_text

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.jit(f).trace(...)` records the jaxpr, `.lower()` writes StableHLO, `.compile()`
# asks XLA for the executable; each object prints its program with `.as_text()`. The
# slide shows the first StableHLO lines of the training step.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## What the compiled step needs: `memory_analysis()`
#
# XLA knows every buffer before the program runs.

# %%
stats = compiled.memory_analysis()
step_inputs = sum(leaf.nbytes for leaf in jax.tree.leaves((params, x, y)))
if stats is not None:  # a backend may not report it
    print(f"arguments {stats.argument_size_in_bytes / 1e6:.2f} MB "
          f"(the inputs: {step_inputs / 1e6:.2f} MB), "
          f"outputs {stats.output_size_in_bytes / 1e6:.2f} MB, "
          f"temporaries {stats.temp_size_in_bytes / 1e6:.3f} MB")

# %% tags=["check"] jupyter={"source_hidden": true}
if stats is not None:
    step_outputs = sum(math.prod(leaf.shape) * leaf.dtype.itemsize
                       for leaf in jax.tree.leaves(jax.eval_shape(mlp.update, params, x, y)))
    assert stats.argument_size_in_bytes >= step_inputs  # equal on CPU; padded on a TPU
    assert stats.output_size_in_bytes >= step_outputs
    assert stats.temp_size_in_bytes >= 0

# %% [markdown] slideshow={"slide_type": "notes"}
# The compiled executable reports its arguments, outputs and temporary buffers: the
# memory one call needs, known before it runs. Use it to ask whether a batch size fits
# without running it. Temporaries are the intermediate buffers XLA still needs after
# fusion and buffer reuse.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## What is alive now: `save_device_memory_profile`
#
# `memory_analysis()` plans one call; the profiler lists every buffer alive on the
# device at this moment, in pprof's format.

# %%
import tempfile
from pathlib import Path

scratch_folder = tempfile.TemporaryDirectory()  # removed when the kernel shuts down cleanly
scratch = Path(scratch_folder.name)

def make_activations():
    return jnp.ones((1024, 1024))  # 4 MiB, alive while we look


activations_now = make_activations()
jax.profiler.save_device_memory_profile(scratch / "memory.prof")
print(f"{(scratch / 'memory.prof').stat().st_size:,} bytes;",
      "read it with: pprof --web", scratch / "memory.prof")

# %% tags=["check"] jupyter={"source_hidden": true}
import gzip

profile_bytes = (scratch / "memory.prof").read_bytes()
# the buffer is filed under the Python function that made it (JAX 0.10.2 and 0.12)
assert b"make_activations" in gzip.decompress(profile_bytes)
assert isinstance(jax.profiler.device_memory_profile(), bytes)  # the same, in memory

# %% [markdown] slideshow={"slide_type": "notes"}
# The profile counts live buffers by the Python line that made them: the tool for "what
# holds my GPU's memory?" (Google's `pprof` draws it). `memory_analysis()`
# instead answers, before running, what one compiled call will need.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Compile once per machine
#
# ```python
# jax.config.update("jax_compilation_cache_dir", "/tmp/jax_cache")  # before compiling
# ```

# %% [markdown] slideshow={"slide_type": "notes"}
# The persistent compilation cache stores compiled programs on disk, so a restarted
# process skips XLA for programs it has seen; set it before the first compile. On a
# GPU, mind memory too: JAX takes 75 % of it at the first operation, so `nvidia-smi`
# shows 75 % used whatever the program needs (`XLA_PYTHON_CLIENT_PREALLOCATE=false`
# turns it off).

# %% [markdown] slideshow={"slide_type": "skip"}
# Details, for JAX 0.10.2: by default only programs that took over a second to compile
# are cached (`jax_persistent_cache_min_compile_time_secs`); the cache is trusted code,
# so never share its folder with users you do not trust. `XLA_CLIENT_MEM_FRACTION`
# changes the 75 % (jaxlib 0.10.2 and 0.12 read it; the older
# `XLA_PYTHON_CLIENT_MEM_FRACTION` is a deprecated fallback, and setting both raises).
# For a timeline of every kernel, `jax.profiler.trace(folder)` writes a trace for
# TensorBoard or Perfetto; the kit's `profile`, after the roofline, reads one for you.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The training step's own numbers
#
# Its source, equations, StableHLO ops, fusions, and the device.

# %%
mlp_pipeline = draw_pipeline(mlp.update)(params, x, y)
mlp_pipeline

# %% tags=["check"] jupyter={"source_hidden": true}
nested = [e for e in step_jaxpr.eqns if e.primitive.name in ("jit", "custom_jvp_call")]
total_eqns = int(mlp_pipeline.title.split(": ")[1].split()[0])
assert nested and total_eqns > len(step_jaxpr.eqns)

# %% [markdown] slideshow={"slide_type": "notes"}
# `draw_pipeline(mlp.update)` puts *this* function's numbers on the road. Its equation
# count includes those inside nested jaxprs, such as `relu`'s `custom_jvp_call`: more
# than the top-level count printed earlier, for the same function.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Before XLA: StableHLO
#
# One op per small step, every broadcast spelled out: `tanh(x @ w + b)`.

# %%
def dense_tanh(x, w, b):
    return jnp.tanh(x @ w + b)


small_args = (jnp.ones((8, 4)), jnp.ones((4, 3)), jnp.ones(3))
draw_hlo(dense_tanh, stage="stablehlo", rankdir="LR")(*small_args)

# %% tags=["check"] jupyter={"source_hidden": true}
small_before = compare_stages(dense_tanh)(*small_args)
assert small_before.stablehlo["broadcast_in_dim"] >= 1  # b's broadcast is spelled out
assert small_before.stablehlo["dot_general"] == 1 and small_before.stablehlo["tanh"] == 1

# %% [markdown] slideshow={"slide_type": "notes"}
# StableHLO is what JAX hands XLA. Adding `b` (shape `[3]`) to `x @ w` (shape `[8, 3]`)
# needs `b` broadcast first, and StableHLO writes that step down. In the notebook, the
# cells below draw a real dense layer, `gelu(x @ w + b)` at MNIST size: GELU's `tanh`
# approximation adds a chain of elementwise ops (powers, products, sums, a `tanh`).

# %% slideshow={"slide_type": "skip"}
def dense_gelu(x, w, b):
    return jax.nn.gelu(x @ w + b)


layer_args = (jnp.ones((8, 784)), jnp.ones((784, 128)), jnp.ones(128))
before = draw_hlo(dense_gelu, stage="stablehlo")(*layer_args)
print(before.title)
before

# %% tags=["check"] jupyter={"source_hidden": true}
assert before.title.startswith("StableHLO of dense_gelu")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## After XLA: fusion
#
# The elementwise chain becomes **one kernel**: read once, write once.

# %%
draw_hlo(dense_tanh, stage="compiled", rankdir="LR")(*small_args)

# %% tags=["check"] jupyter={"source_hidden": true}
assert small_before.compiled_ops < small_before.stablehlo_ops
assert any(fusion.ops["tanh"] for fusion in small_before.fusions)  # every backend
if small_before.platform == "cpu":  # a GPU may fold the bias add into its matmul call
    assert any(fusion.ops["tanh"] and fusion.ops["add"] for fusion in small_before.fusions)

# %% [markdown] slideshow={"slide_type": "notes"}
# **Fusion**, one of XLA's most important optimisations: a chain of elementwise ops
# becomes one kernel that reads its inputs once and writes one result, instead of
# writing every intermediate to memory and reading it back. Each box is one fusion with
# the ops it absorbed; it saves memory traffic, not arithmetic.

# %% slideshow={"slide_type": "skip"}
after = draw_hlo(dense_gelu, stage="compiled")(*layer_args)
layer_xla = compare_stages(dense_gelu)(*layer_args)
print(layer_xla.headline())
after

# %% tags=["check"] jupyter={"source_hidden": true}
assert layer_xla.compiled_ops < layer_xla.stablehlo_ops  # fewer ops after XLA
assert any(fusion.ops["tanh"] for fusion in layer_xla.fusions)  # GELU's tanh was fused

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## XLA's own record: `--xla_dump_to`
#
# `XLA_FLAGS=--xla_dump_to=DIR python train.py` makes XLA write every program it
# compiles, before and after its passes. For one program, as a compiler option:

# %%
dump = scratch / "xla_dump"
lowered_tanh = jax.jit(dense_tanh).lower(*small_args)
lowered_tanh.compile(compiler_options={"xla_dump_to": str(dump)})
dumped = sorted(path.name for path in dump.iterdir())
print(len(dumped), "files, among them:", *[n for n in dumped if n.endswith(".txt")][:3],
      sep="\n")

# %% tags=["check"] jupyter={"source_hidden": true}
dumped_hlo = [path.read_text() for path in dump.glob("*.txt")]
assert dumped and any("ENTRY" in text and "fusion" in text for text in dumped_hlo)
assert any("tanh" in text for text in dumped_hlo)  # dense_tanh's own program

# %% [markdown] slideshow={"slide_type": "notes"}
# The dump is the compiled HLO `draw_hlo` draws, as text files XLA writes itself, plus
# what it did between (buffer assignment, the program before its passes). `XLA_FLAGS`
# must be set before the first computation starts the backend; `compiler_options` works
# per compile (JAX 0.10.2, 0.12). A program served from the persistent cache is not
# compiled, so not dumped.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What XLA did to the training step
#
# `compare_stages`: ops before and after XLA, and every fusion with what it absorbed.

# %%
step_xla = compare_stages(mlp.update)(params, x, y)
print(step_xla.headline())

# %% tags=["check"] jupyter={"source_hidden": true}
assert step_xla.jaxpr_eqns == total_eqns  # the same count draw_pipeline showed
assert step_xla.compiled_ops < step_xla.stablehlo_ops
assert len(step_xla.fusions) >= 1 and step_xla.fused.total() > len(step_xla.fusions)
assert step_xla.stablehlo["dot_general"] == 8  # all eight products reach XLA
if step_xla.platform == "cpu":
    # which products XLA:CPU wraps in fusions (its YNNPACK path) depends on the CPU's
    # features, XLA's flags and the version: only the kit's count and the total are checked
    entry = hlo_text[hlo_text.index("\nENTRY"):]
    assert len(re.findall(r"= \S+ dot\(", entry)) == step_xla.compiled["dot"]
    if jax.__version__.startswith(("0.10.", "0.12.")):  # every product is still a `dot`
        assert step_xla.compiled["dot"] + step_xla.fused["dot"] == 8

# %% [markdown] slideshow={"slide_type": "notes"}
# The headline counts the same `update`: StableHLO ops in, far fewer ops out. What holds
# on every backend: the elementwise work around the eight matrix products is fused. Where
# the products themselves end up depends on the backend, the CPU and the version (the
# notebook says more below).

# %% [markdown] slideshow={"slide_type": "skip"}
# On the x86 CPU (AVX2) that checked this lesson, with JAX 0.10.2 and 0.12, XLA wraps
# five products in one-op custom fusions (its YNNPACK matmul path) and leaves three
# standalone: the backward pass's weight-gradient products, whose `op_name` reads
# `transpose(jvp(...))`. Which ones it wraps depends on the CPU's features, XLA's flags
# and the version: the table below is this run's. On recent NVIDIA GPUs XLA autotunes
# each product between cuBLAS(Lt) library calls and Triton-generated GEMM fusions, which
# can absorb elementwise ops around them; a TPU builds fusions around them.

# %% slideshow={"slide_type": "skip"}
step_xla

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What fusion saves, in bytes
#
# GELU alone is a chain of elementwise equations. Unfused, each one reads its inputs
# from memory and writes its result back; fused, the chain reads once and writes once.

# %%
activations = jnp.ones((128, 512))
gelu_traffic = fusion_traffic(jax.nn.gelu)(activations)
gelu_traffic

# %% tags=["check"] jupyter={"source_hidden": true}
array_bytes = activations.size * 4  # one float32 array of the activations' shape
assert gelu_traffic.fused_bytes == 2 * array_bytes  # one fusion: read x, write gelu(x)
assert gelu_traffic.equations >= 5 and gelu_traffic.ops == 1
assert gelu_traffic.unfused_bytes >= 2 * gelu_traffic.equations * array_bytes * 0.5
assert gelu_traffic.saving > 4

# %% [markdown] slideshow={"slide_type": "notes"}
# `fusion_traffic` counts, from shapes and dtypes, the bytes each equation would move
# run on its own (as NumPy runs each operation), and the bytes each compiled op moves (a
# fusion counts once). The ratio is fusion's saving in memory traffic, what an
# elementwise chain is limited by. The FLOPs are the same either way.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The training step's ledger
#
# `cost_table` counts FLOPs and bytes of every op, and sets XLA's own figures beside them.

# %%
ledger = cost_table(mlp.update)(params, x, y)
print(repr(ledger))
print("XLA's cost_analysis():", {k: f"{v:.3g}" for k, v in ledger.xla.items()})

# %% tags=["check"] jupyter={"source_hidden": true}
batch = x.shape[0]
weights = sum(m * n for m, n in zip(mlp.SIZES[:-1], mlp.SIZES[1:], strict=True))
# a multiply and an add per weight and example: forward, weight gradients, and the
# gradients flowing back to the hidden layers (not to the input)
matmul_flops = 2 * batch * (2 * weights + weights - mlp.SIZES[0] * mlp.SIZES[1])
# the rest is elementwise: a few FLOPs per weight for the momentum update, a few per
# activation for bias, ReLU and softmax; under 10 % of the step even at batch 8
assert matmul_flops <= ledger.flops <= 1.1 * matmul_flops
if "flops" in ledger.xla and jax.default_backend() == "cpu":
    # CPU only: there the counts agree within 1 % (JAX 0.10.2, 0.12). GPU, TPU models count
    # elementwise ops (about 6 % of the step at batch 8) and library calls (cuBLAS)
    # their own way, so no agreement is asserted there; the notes promise none
    assert abs(ledger.flops / ledger.xla["flops"] - 1) < 0.01

# %% [markdown] slideshow={"slide_type": "notes"}
# The matrix products are almost all the FLOPs: two per weight and example forward, two
# for the weight gradients, two for the gradients back to the hidden layers. The kit
# counts from shapes by its own rules, beside XLA's `cost_analysis()` where the backend
# gives one. An op the rules do not know reads "not counted", never zero.

# %% slideshow={"slide_type": "skip"}
print(ledger)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Intensity: FLOPs per byte grows with the batch
#
# Every step reads and writes all the weights; the FLOPs grow with the batch.

# %%
# 2048 rows: x's 8, repeated (costs and timings depend on shapes, not values)
batch_x, batch_y = jnp.tile(x, (256, 1)), jnp.tile(y, 256)
intensity = {}
for size in (8, 128, 2048):
    table = cost_table(mlp.update)(params, batch_x[:size], batch_y[:size])
    intensity[size] = table.intensity
    print(f"batch {size:>4}: {intensity[size]:5.1f} FLOP per byte")

# %% tags=["check"] jupyter={"source_hidden": true}
assert intensity[8] < intensity[128] < intensity[2048]
assert intensity[8] < 4 and intensity[128] < 40  # far below a GPU's ridge (~150)

# %% [markdown] slideshow={"slide_type": "notes"}
# Intensity is FLOPs per byte moved. A device's *ridge*, peak FLOP/s over peak bytes/s,
# splits memory-bound (left) from compute-bound (right). An H100 SXM: about 495 TFLOP/s
# dense TF32 over 3.35 TB/s, a ridge near 150 FLOP/B; the step at batch 128 is far left.
# Desktop and server CPUs sit around 10–30 FLOP/B.

# %% [markdown] slideshow={"slide_type": "skip"}
# TF32 is what a float32 matmul uses on that GPU at JAX's default precision. A CPU's
# ridge depends on its cores, vector width and memory channels; the next slide measures
# this machine's, and a small shared VM can land outside that range.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The step on this device's roofline
#
# The roof is measured here (cached): peak matmul rate, memory bandwidth.

# %%
batch_128 = batch_x[:128], batch_y[:128]  # the first 128 of that batch
roof = draw_roofline(mlp.update)(params, *batch_128)
print(roof.peaks)
print(f"the step: {roof.table.intensity:.3g} FLOP/B, {roof.flops_per_s / 1e9:.3g} GFLOP/s")

# %% tags=["check"] jupyter={"source_hidden": true}
fusions_128 = {fusion.name for fusion in compare_stages(mlp.update)(params, *batch_128).fusions}
assert fusions_128 and fusions_128 <= {point.name for point in roof.points}  # all drawn
assert roof.bound == ("memory" if roof.table.intensity < roof.peaks.ridge else "compute")
assert roof.peaks.flops_per_s > 1e8 and roof.peaks.bytes_per_s > 1e8

# %% [markdown] slideshow={"slide_type": "notes"}
# `draw_roofline` measures this device's two peaks, matmul FLOP/s and memory bytes/s,
# and places the step on them. Their ratio is the ridge printed here: a step left of it
# waits on memory, right of it on arithmetic. Compare the step's intensity printed below.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The roofline, drawn

# %%
roof

# %% [markdown] slideshow={"slide_type": "notes"}
# Each dot is one compiled op at the rate the roof allows its intensity; the star is the
# whole step, timed. The dotted line is the ridge. How far the star sits below the roof
# is time lost to neither memory nor arithmetic: launches, small ops, a busy machine.

# %% [markdown] slideshow={"slide_type": "skip"}
# `device_peaks()` times a large float32 matmul and an in-place `x + 1` over 256 MiB: a
# few seconds the first time, then cached per kind of device.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where did the time go?
#
# `profile` runs the step under `jax.profiler` and times each compiled op.

# %%
p = profile(mlp.update)(params, *batch_128)
slowest = p.rows[0]
print(f"slowest op: {slowest.op}, {slowest.share:.0%} of the op time, from",
      ", ".join(slowest.lines))
p.draw()

# %% tags=["check"] jupyter={"source_hidden": true}
assert p.rows and abs(sum(row.share for row in p.rows) - 1) < 1e-6  # shares of the op time
assert all(a.seconds >= b.seconds for a, b in zip(p.rows, p.rows[1:], strict=False))
assert any("dot_general" in row.primitives for row in p.rows)  # products are timed ops
if jax.default_backend() == "cpu":
    # CPU only: a matmul is among the three slowest ops. Quiet, it is usually the
    # slowest; under load the relu's fusion or the parameter step's (p - lr * v) has
    # come first here, once both near the top. On a GPU or TPU at batch 128 every op
    # takes microseconds and elementwise fusions may come first: no order asserted there.
    assert any("dot_general" in row.primitives for row in p.rows[:3]), p.rows[:3]

# %% [markdown] slideshow={"slide_type": "notes"}
# Each box is one compiled op of `mlp.update`, from white (little of the time) to deep
# red (most), labelled with its measured time and the source lines it came from. The
# table (`print(p)`) says the same in rows. Wall time outside every op is dispatch:
# Python, argument checks, transfers.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: which program fuses into fewer kernels?
#
# Draw both with `draw_hlo(..., stage="compiled")`. Write `ex_fewer_kernels()` returning
# a tuple: the name of the program XLA compiles into fewer kernels, and the op that
# splits the other one.

# %%
def program_a(x):
    return jnp.tanh(jnp.sin(x) * 2.0 + 1.0)


def program_b(x):
    return jnp.tanh(jnp.sort(jnp.sin(x)) * 2.0 + 1.0)


# %% slideshow={"slide_type": "skip"}
wave = jnp.linspace(-1.0, 1.0, 1000)
draw_hlo(program_a, stage="compiled", rankdir="LR")(wave)

# %% slideshow={"slide_type": "skip"}
draw_hlo(program_b, stage="compiled", rankdir="LR")(wave)

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_fewer_kernels():
    ...  # your code here: return ("program_…", "the op")


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_fewer_kernels():
    return ("program_a", "sort")


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Each box in a compiled drawing is one kernel; an op outside
# every box is a kernel of its own. <code>compare_stages(f)(wave).headline()</code> counts
# them.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>Elementwise ops fuse with each other. <code>sort</code> is
# not elementwise: each output element depends on every input element, and XLA gives it a
# kernel of its own, so the chain splits around it. That is a fact about sort, not a rule:
# reductions also read their whole input, yet a GPU fuses them with their neighbours (a
# softmax can be one kernel); a CPU's XLA does split the chain there.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_fewer_kernels)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_fewer_kernels, quiet=True).passed


def program_sum(x):  # hint 2: a reduction in the middle of the chain
    return jnp.tanh(jnp.sin(x) * 2.0 + jnp.sum(jnp.sin(x)))


if jax.default_backend() == "cpu" and jax.__version__.startswith(("0.10.", "0.12.")):
    kernel_counts = {f: compare_stages(f)(wave).compiled_ops for f in (program_a, program_sum)}
    assert kernel_counts[program_sum] > kernel_counts[program_a] == 1  # split at the sum

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/03_how_it_works.ipynb`, or the Colab badge. Hint: count the boxes in each compiled
# drawing; an op outside every box is a kernel of its own. The hint's CPU fact (a sum
# splits the chain) is XLA:CPU's in JAX 0.10.2 and 0.12; a GPU fuses reductions.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - read a **tracer**'s **jaxpr**, as text and drawn;
# - met the **pitfalls**: retraces (`explain_retraces` says why), baked-in globals,
#   Python `if`;
# - followed the **pipeline** from Python to the device;
# - compared **StableHLO with compiled HLO**: XLA fuses ops into kernels;
# - counted the step's **FLOPs, bytes, memory**; drew the **roofline**; timed ops
#   with **`profile`**;
# - met JAX's own tools: cache-miss logs, XLA dumps, memory profiles.
#
# *Next: lesson 04, transformations composed.*
