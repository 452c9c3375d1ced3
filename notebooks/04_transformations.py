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
# # 04 · Transformations: `vmap`, `jit`, `grad`, composed, on pytrees
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/04_transformations.ipynb)
#
# - **`vmap`**: write it for one example, run it on a batch
# - **`jit`** and a Python `if`; **composition**: per-example gradients
# - **pytrees**, **pure functions**, **explicit random keys** (typed, `fold_in`)
# - **differences from NumPy**: `.at[]`, `jax.Ref`, indexing, dtypes
# - **control flow** under `jit` and `grad`, and `custom_jvp`
# - **where a `nan` comes from**: every value of a run, the first `nan` found
#
# *About 70 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtour.exercises import check
from jaxtour.tracing import find_nans, step_through
from jaxtour.viz import compare_stages, draw_jaxpr

# %% [markdown] slideshow={"slide_type": "notes"}
# JAX's transformations take a function and return a function: `vmap` batches it, `jit`
# compiles it, `grad` differentiates it, and they compose. Everything here is checked
# against a loop, finite differences or NumPy.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `vmap`: write it for one example, run it on a batch
#
# `in_axes`: `0` batches an argument along its first axis, `None` shares it.

# %%
def predict(w, b, x):
    """One example: w f32[3], b f32[], x f32[3] -> f32[]."""
    return jnp.tanh(jnp.sum(w * x) + b)


key_w, key_x, key_t, key_ws = jax.random.split(jax.random.key(0), 4)
w, b = jax.random.normal(key_w, (3,)), 0.5
xs = jax.random.normal(key_x, (8, 3))  # a batch of 8 examples
predict_batch = jax.vmap(predict, in_axes=(None, None, 0))
ys = predict_batch(w, b, xs)
print(ys.shape)

# %% tags=["check"] jupyter={"source_hidden": true}
assert ys.shape == (8,)
np.testing.assert_allclose(ys, [predict(w, b, x) for x in np.asarray(xs)], rtol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# `predict` knows nothing about batches: it takes one example `x` of 3 features.
# `jax.vmap` makes a version that takes many. `in_axes=(None, None, 0)`: share `w` and
# `b`, map over the first axis of `xs`.

# %% [markdown] slideshow={"slide_type": "skip"}
# `predict` uses `sum(w * x)` rather than a dot product so that the comparison with a
# Python loop agrees to float32 rounding on every backend: at *default* precision a float32 matrix
# product runs as one bfloat16 pass on a TPU and in TF32 on Ampere-or-newer NVIDIA GPUs
# (pass `precision="highest"` for full float32), while elementwise ops and sums stay
# float32.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `in_axes`: where the batch is
#
# Examples as columns: axis 1. Five weight vectors, one input: batch the weights.

# %%
by_columns = jax.vmap(predict, in_axes=(None, None, 1))(w, b, xs.T)

five_ws = jax.random.normal(key_ws, (5, 3))  # a fresh key: key_w drew w
five_models = jax.vmap(predict, in_axes=(0, None, None))(five_ws, b, xs[0])
print(by_columns.shape, five_models.shape)

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_allclose(by_columns, ys, rtol=1e-6)
assert five_models.shape == (5,)
assert not (five_ws == w).all(axis=1).any()  # no row repeats w: each key is used once

# %% [markdown] slideshow={"slide_type": "notes"}
# `in_axes` names, per argument, which axis is the batch: 1 when the examples are
# columns, 0 on the weights to evaluate five models on one input. The output's batch axis
# is 0 unless `out_axes` says otherwise.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## No loop: `vmap` rewrites the jaxpr
#
# Traced once; every equation turned into its batched form.

# %%
one = [e.primitive.name for e in jax.make_jaxpr(predict)(w, b, xs[0]).jaxpr.eqns]
batch = jax.make_jaxpr(predict_batch)(w, b, xs).jaxpr
print("one example:", one)
print("batched:    ", [e.primitive.name for e in batch.eqns])

# %% tags=["check"] jupyter={"source_hidden": true}
assert [e.primitive.name for e in batch.eqns if e.primitive.name != "broadcast_in_dim"] == one
assert not {"while", "scan"} & {e.primitive.name for e in batch.eqns}
(reshape,) = [e for e in batch.eqns if e.primitive.name == "broadcast_in_dim"]
assert reshape.outvars[0].aval.shape == (1, 3)  # w is reshaped to [1, 3], not copied 8 times
if jax.default_backend() == "cpu":
    # CPU only: XLA's CPU fusion absorbs the broadcast; GPU/TPU pipelines fuse too, but
    # may keep a standalone broadcast op, so the claim elsewhere is the jaxpr's [1, 3]
    assert compare_stages(predict_batch)(w, b, xs).compiled["broadcast"] == 0

# %% [markdown] slideshow={"slide_type": "notes"}
# `vmap` does not run `predict` eight times. `mul` multiplies all 8 rows at once: the
# shared `w` is only reshaped to `[1, 3]` (the `broadcast_in_dim`), and `mul` broadcasts
# it across the rows; no copy of `w` per row is made (XLA fuses the broadcast into the
# multiply). `reduce_sum` sums each row.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `jit` and a Python `if`
#
# `x` is a tracer standing for any `f32[]`: `x > 0` has no True or False yet.

# %%
def relu_if(x):
    if x > 0:
        return x
    return 0.0


try:
    jax.jit(relu_if)(3.0)
except jax.errors.TracerBoolConversionError as err:
    message = str(err)
print(message.splitlines()[0])

# %% tags=["check"] jupyter={"source_hidden": true}
assert relu_if(3.0) == 3.0 and relu_if(-2.0) == 0.0
try:  # raised while tracing, before any compiling: make_jaxpr alone trips on it
    jax.make_jaxpr(relu_if)(3.0)
    raise AssertionError("tracing an `if` on a traced value should raise")
except jax.errors.TracerBoolConversionError:
    pass

# %% [markdown] slideshow={"slide_type": "notes"}
# Written the Python way, with an `if`, `relu` works eagerly but not under `jax.jit`:
# `jit` traces the function with **abstract** values.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The fix: let JAX choose, not Python
#
# `jnp.where` puts the choice *into* the program: a `select_n` equation.

# %%
def relu(x):
    return jnp.where(x > 0, x, 0.0)


relu_jit = jax.jit(relu)
print(relu_jit(jnp.array([-1.0, 2.0])))
relu_jaxpr = str(jax.make_jaxpr(relu)(3.0))

# %% tags=["check"] jupyter={"source_hidden": true}
assert relu_jit(3.0) == 3.0 and relu_jit(-2.0) == 0.0
np.testing.assert_array_equal(relu_jit(jnp.array([-1.0, 2.0])), [0.0, 2.0])
assert "select_n" in relu_jaxpr

# %% [markdown] slideshow={"slide_type": "notes"}
# `jnp.where(c, a, b)` computes both `a` and `b` and selects per element, on the device:
# the choice is an equation (`select_n`) in the program, so one trace serves every value
# of `x`, scalars and arrays alike.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `jit` traces once per abstract signature
#
# Once for `f32[3]`, reused for another `f32[3]`, once more for `f32[5]`.

# %%
traces = []


@jax.jit
def relu_counted(x):
    traces.append(x.shape)  # a side effect: it happens at trace time only
    return jnp.maximum(x, 0.0)


for v in (jnp.ones(3), -jnp.ones(3), jnp.ones(5)):
    relu_counted(v)
print(traces)

# %% tags=["check"] jupyter={"source_hidden": true}
assert traces == [(3,), (5,)]

# %% [markdown] slideshow={"slide_type": "notes"}
# The Python body runs only while tracing. The cache key is the function object and the
# arguments' abstract signature: shape, dtype, weak type, pytree structure, the values of
# static arguments, and with Explicit sharding the sharding (lesson 03 shows them). New
# values of the same signature never retrace; a new shape does.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Composition: `jit(vmap(grad(loss)))`
#
# Inside out: `grad` of one example's loss, `vmap` over examples, `jit` the lot.

# %%
def loss(w, b, x, t):
    """Squared error of one example."""
    return (predict(w, b, x) - t) ** 2


targets = jax.random.normal(key_t, (8,))
per_example_grads = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, None, 0, 0)))
grads = per_example_grads(w, b, xs, targets)
print(grads.shape)

# %% tags=["check"] jupyter={"source_hidden": true}
assert grads.shape == (8, 3)
one_by_one = [jax.grad(loss)(w, b, x, t)
              for x, t in zip(np.asarray(xs), np.asarray(targets), strict=True)]
np.testing.assert_allclose(grads, one_by_one, rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# The result: one gradient per example, which the gradient of a batched (mean) loss
# cannot give; it only gives their mean.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Checked two ways
#
# The mean of the per-example gradients is the gradient of the mean loss.

# %%
def mean_loss(w):
    return jnp.mean(jax.vmap(loss, in_axes=(None, None, 0, 0))(w, b, xs, targets))


print(grads.mean(axis=0), jax.grad(mean_loss)(w))

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_allclose(grads.mean(axis=0), jax.grad(mean_loss)(w), rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# And the first example's gradient matches central finite differences in float64 NumPy
# (the cell below, in the notebook).

# %% slideshow={"slide_type": "skip"}
w64, x64, t64, h = np.asarray(w, np.float64), np.asarray(xs[0], np.float64), float(targets[0]), 1e-6


def loss64(w):
    return (np.tanh(w @ x64 + b) - t64) ** 2


finite = [(loss64(w64 + h * e) - loss64(w64 - h * e)) / (2 * h) for e in np.eye(3)]
print(finite)

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_allclose(grads[0], finite, rtol=1e-4, atol=1e-6)

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: one loss per example
#
# Write `ex_per_example_losses(loss, w, b, xs, ts)`: `loss(w, b, x, t)` is one example's
# loss; return one loss per row of `xs` and `ts`, shape `(n,)`, with `jax.vmap`.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_per_example_losses(loss, w, b, xs, ts):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_per_example_losses(loss, w, b, xs, ts):
    return jax.vmap(loss, in_axes=(None, None, 0, 0))(w, b, xs, ts)


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary><code>in_axes</code> has one entry per argument:
# <code>0</code> for those with one row per example, <code>None</code> for those all examples
# share.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>The weights and the bias are shared; the inputs and the
# targets are batched.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_per_example_losses)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_per_example_losses, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/04_transformations.ipynb`, or the Colab badge. Hint: `loss` is written for
# one example; `jax.vmap(loss, in_axes=...)` needs one entry per argument, `None` for
# the shared `w` and `b`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pytrees: nested containers of arrays
#
# Lists, tuples, dicts of arrays: a **pytree**; the arrays are its **leaves**.

# %%
params = {"layers": [
    {"w": jnp.ones((3, 4)), "b": jnp.zeros(4)},
    {"w": jnp.ones((4, 1)), "b": jnp.zeros(1)},
]}
for path, leaf in jax.tree.leaves_with_path(params):
    print(f"{jax.tree_util.keystr(path):<20} {leaf.shape}")
sizes = jax.tree.map(jnp.size, params)

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(jax.tree.leaves(params)) == 4
assert sum(jax.tree.leaves(sizes)) == 3 * 4 + 4 + 4 * 1 + 1

# %% [markdown] slideshow={"slide_type": "notes"}
# Every JAX transformation accepts pytrees: lists, tuples, dicts, `None` and registered
# classes, nested freely. `jax.tree.leaves_with_path` names each leaf by its path;
# `jax.tree.map` applies a function to every leaf and keeps the structure.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Gradients come back in the same shape
#
# So an SGD step is one `jax.tree.map`.

# %%
def network(params, x):
    for layer in params["layers"]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return jnp.sum(x)


param_grads = jax.grad(network)(params, jnp.ones(3))
stepped = jax.tree.map(lambda p, g: p - 0.1 * g, params, param_grads)

# %% tags=["check"] jupyter={"source_hidden": true}
assert jax.tree.structure(param_grads) == jax.tree.structure(params)
assert network(stepped, jnp.ones(3)) < network(params, jnp.ones(3))

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.grad` of a function of a pytree returns a pytree of the same structure, one
# gradient per leaf. So an update rule is written once, for any model: `jax.tree.map`
# over parameters and gradients together.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Your own class as a pytree
#
# A static field is part of the structure, not a leaf: never traced or differentiated.

# %%
@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Linear:
    w: jax.Array
    b: jax.Array
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


layer = Linear(jnp.ones((3, 2)), jnp.zeros(2))
leaves, treedef = jax.tree.flatten(layer)
print(treedef)

# %% tags=["check"] jupyter={"source_hidden": true}
doubled = jax.tree.unflatten(treedef, [2 * leaf for leaf in leaves])
assert len(leaves) == 2 and isinstance(doubled, Linear) and doubled.activation == "tanh"
layer_grads = jax.grad(lambda layer, x: jnp.sum(jnp.tanh(x @ layer.w + layer.b)))(layer, xs[0])
assert isinstance(layer_grads, Linear) and layer_grads.w.shape == (3, 2)

# %% [markdown] slideshow={"slide_type": "notes"}
# `register_dataclass` makes a dataclass a pytree: `w` and `b` are leaves; the static
# field `activation` sits in the tree structure, so changing it means a new structure,
# hence a new trace under `jit`. `jax.grad` returns a `Linear` of gradients.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Why pure functions
#
# Whatever a jitted function reads that is not an argument is frozen at trace time.

# %%
scale = 2.0


@jax.jit
def scaled(x):
    return scale * x  # reads a global: baked into the program when traced


before = scaled(1.0)
scale = 3.0
print(f"scale is now {scale}, scaled(1.0) is still {scaled(1.0)}")
scaled_pure = jax.jit(lambda x, scale: scale * x)  # pure: everything it uses is an argument

# %% tags=["check"] jupyter={"source_hidden": true}
assert before == 2.0
assert scaled(1.0) == 2.0
assert scaled_pure(1.0, scale) == 3.0

# %% [markdown] slideshow={"slide_type": "notes"}
# A jitted function runs its Python once, while tracing; the global's value then is a
# constant in the program. A pure function, everything it reads passed in, gives the
# same answer traced or not. Lesson 03 shows the same trap with `explain_retraces`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Arrays are immutable: `.at[]` instead of `x[i] = v`
#
# An update returns a new array; the old one is unchanged.

# %%
row = jnp.arange(5.0)
try:
    row[0] = 10.0
except TypeError as err:
    print("TypeError:", str(err).split(". ")[0])
print(row.at[0].set(10.0), row.at[1:3].add(1.0), row.at[jnp.array([0, 0])].add(1.0))
print(row)  # unchanged

# %% tags=["check"] jupyter={"source_hidden": true}
try:
    jnp.arange(5.0)[0] = 10.0
    raise AssertionError("item assignment should raise")
except TypeError:  # the class is the contract; the wording may change
    pass
np.testing.assert_array_equal(row.at[0].set(10.0), [10.0, 1.0, 2.0, 3.0, 4.0])
np.testing.assert_array_equal(row.at[jnp.array([0, 0])].add(1.0), [2.0, 1.0, 2.0, 3.0, 4.0])
np.testing.assert_array_equal(row, np.arange(5.0))
assert "scatter" in str(jax.make_jaxpr(lambda v: v.at[0].set(1.0))(row))
for donate, aliased in (((), False), ((0,), True)):  # the notes: an argument needs donation
    lowered = jax.jit(lambda v: v.at[0].set(1.0), donate_argnums=donate).lower(row)
    assert ("input_output_alias" in lowered.compile().as_text()) == aliased, donate

# %% [markdown] slideshow={"slide_type": "notes"}
# JAX's transformations assume pure functions, so arrays never change. `x.at[i].set(v)`,
# `.add`, `.mul`, `.min`, `.max` return a new array (a `scatter` in the jaxpr); repeated
# indices accumulate with `.add`. Under `jit` XLA can update an intermediate in place; a
# jitted function's *argument* is updated in place only if donated (`donate_argnums`).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The one mutable thing: `jax.Ref`
#
# `jax.new_ref(array)` makes a reference whose contents a jitted function may change in
# place: the change is an equation of the program.

# %%
counter = jax.new_ref(jnp.zeros(3))


@jax.jit
def accumulate(ref, x):
    ref[...] += x  # read, add, write back: no new array returned


accumulate(counter, jnp.ones(3))
accumulate(counter, jnp.ones(3))
print(counter[...], jax.make_jaxpr(accumulate)(counter, jnp.ones(3)).in_avals)

# %% tags=["check"] jupyter={"source_hidden": true}
assert isinstance(counter, jax.Ref) and not isinstance(counter, jax.Array)
np.testing.assert_array_equal(counter[...], [2.0, 2.0, 2.0])  # two calls, in place
assert accumulate(counter, jnp.ones(3)) is None  # the result is the side effect
np.testing.assert_array_equal(counter[...], [3.0, 3.0, 3.0])


def jit_refuses(fn, *args):  # ValueError in JAX 0.10.2 and 0.12 (the docs catch any)
    try:
        jax.jit(fn)(*args)
    except (ValueError, TypeError):
        return True
    return False


assert jit_refuses(lambda: jax.new_ref(jnp.zeros(2)))  # the notes' limit: no new Ref out
assert jit_refuses(lambda ref: ref, counter)  # nor the one it was given

# %% [markdown] slideshow={"slide_type": "notes"}
# In `jax` since 0.7.2 (`jax.Ref`, `jax.new_ref`; checked on 0.10.2 and 0.12). A Ref
# passed into `jit` is read and written in place; arrays stay immutable. Limits: a Ref
# is not an array (read it with `ref[...]`); a jitted function returns no Ref, not even
# one it was given, and takes one Ref once. For state threaded through steps: counters,
# caches.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Out-of-bounds indexing: no error
#
# A device cannot raise mid-program: reads clamp, writes are dropped.

# %%
print("row[10]            =", row[10])
print("row.at[10].set(99) =", row.at[10].set(99.0))
print("fill instead       =", row.at[10].get(mode="fill", fill_value=jnp.nan))

# %% tags=["check"] jupyter={"source_hidden": true}
assert row[10] == row[-1] == 4.0  # clamped to the last element
np.testing.assert_array_equal(row.at[10].set(99.0), row)  # the write is dropped
assert np.isnan(row.at[10].get(mode="fill", fill_value=jnp.nan))
assert np.isnan(jnp.take(row, 10))  # the notes: jnp.take fills by default
try:
    np.arange(5.0)[10]
    raise AssertionError("NumPy should raise")
except IndexError:
    pass

# %% [markdown] slideshow={"slide_type": "notes"}
# NumPy raises `IndexError`; JAX cannot, because the index may be a traced value known
# only on the device. By default a read clamps the index into range and a write out of
# range is skipped. `mode="fill"` returns a fill value instead (`jnp.take`'s default:
# `jnp.take(row, 10)` is nan); `jax.experimental.checkify` can raise instead.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Type promotion and weak types
#
# A Python number adapts to the array; a typed scalar does not.

# %%
half = jnp.ones(3, jnp.bfloat16)
print("bfloat16 * 2.0            ->", (half * 2.0).dtype)
print("bfloat16 * jnp.float32(2) ->", (half * jnp.float32(2.0)).dtype)
print("JAX   int32 + float16     ->", (jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float16)).dtype)
print("NumPy int32 + float16     ->", (np.ones(3, np.int32) + np.ones(3, np.float16)).dtype)

# %% tags=["check"] jupyter={"source_hidden": true}
assert (half * 2.0).dtype == jnp.bfloat16  # a Python float is weakly typed
assert (half * jnp.float32(2.0)).dtype == jnp.float32
assert (jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float16)).dtype == jnp.float16
assert (np.ones(3, np.int32) + np.ones(3, np.float16)).dtype == np.float64
assert jnp.promote_types(jnp.int8, jnp.uint8) == jnp.int16

# %% [markdown] slideshow={"slide_type": "notes"}
# A Python `2.0` is *weakly typed*: it takes the array's dtype, so bfloat16 stays
# bfloat16. A typed `float32` scalar promotes. JAX's promotion table avoids silent
# widening to 64 bits: int32 + float16 is float16 in JAX, float64 in NumPy.
# `jnp.promote_types` answers any pair.

# %% [markdown] slideshow={"slide_type": "skip"}
# JAX's promotion rules form a lattice documented in "Type promotion semantics" (JAX
# docs); NumPy 2 adopted weak Python scalars too (NEP 50), but still promotes
# mixed integer/float arrays to a float wide enough for both. Checked with JAX 0.10.2
# and NumPy 2.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "subslide"}
# ## Your turn: a histogram with `.at[].add`
#
# Write `ex_histogram(labels, n)`: how often each label 0 … n−1 occurs in `labels`, as
# an array of shape `(n,)`, with one `.at[...]` update and no Python loop.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_histogram(labels, n):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_histogram(labels, n):
    return jnp.zeros(n, jnp.int32).at[labels].add(1)  # repeated labels accumulate


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Start from <code>jnp.zeros(n, jnp.int32)</code>; an
# array of indices can go inside <code>.at[...]</code>.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary><code>.set(1)</code> writes 1 however often a label
# occurs; <code>.add(1)</code> adds once per occurrence.</details>

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/04_transformations.ipynb`, or the Colab badge. Hint: start from zeros of
# length n; which `.at[]` method counts a label that occurs twice? Then ask the room what
# happens to a label of n or more (two slides back: dropped).

# %% slideshow={"slide_type": "skip"}
check(ex_histogram)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_histogram, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Explicit random keys
#
# The key is an argument: the same key, the same numbers; `split` makes new keys.

# %%
key = jax.random.key(42)
key_a, key_b = jax.random.split(key)
print(jax.random.normal(key, (3,)), jax.random.normal(key, (3,)))
samples = jax.vmap(lambda k: jax.random.normal(k))(jax.random.split(key, 5))
print(samples)

# %% tags=["check"] jupyter={"source_hidden": true}
assert jnp.array_equal(jax.random.normal(key, (3,)), jax.random.normal(key, (3,)))
assert not jnp.array_equal(jax.random.normal(key_a, (3,)), jax.random.normal(key_b, (3,)))
rng = np.random.default_rng(42)  # NumPy: same call, different numbers
assert not np.array_equal(rng.normal(size=3), rng.normal(size=3))
assert len(set(samples.tolist())) == 5  # one independent sample per key, in one call

# %% [markdown] slideshow={"slide_type": "notes"}
# NumPy's generator hides its state and changes it on every call, which a traced, batched
# or parallel program cannot follow. In JAX the **key** is an argument. `vmap` over split
# keys draws one independent sample per key in one call. "The same numbers" holds for one
# JAX version: JAX promises the distribution, not the exact values, across versions and
# backends.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Typed keys, legacy keys, `fold_in`
#
# `jax.random.key` makes a typed key; the older `PRNGKey` a bare `uint32[2]`
# (the default threefry implementation).

# %%
typed, legacy = jax.random.key(0), jax.random.PRNGKey(0)
print(typed.dtype, typed.shape, "|", legacy.dtype, legacy.shape)
print(jax.random.key_data(typed))  # the same two words underneath
step_keys = [jax.random.fold_in(typed, step) for step in range(3)]  # a key per step
print(jax.random.normal(step_keys[0], (3,)), jax.random.normal(step_keys[1], (3,)))

# %% tags=["check"] jupyter={"source_hidden": true}
assert jnp.issubdtype(typed.dtype, jax.dtypes.prng_key) and typed.shape == ()
assert legacy.dtype == jnp.uint32 and legacy.shape == (2,)
np.testing.assert_array_equal(jax.random.key_data(typed), legacy)
assert jnp.array_equal(jax.random.normal(typed, (3,)), jax.random.normal(legacy, (3,)))
assert jax.random.wrap_key_data(legacy).dtype == typed.dtype  # legacy -> typed
try:  # a typed key is not a number: arithmetic on it is refused
    typed + 1
    raise AssertionError("arithmetic on a typed key should raise")
except TypeError:
    pass
legacy + 1  # a legacy key is two integers: the same mistake passes silently
draws = [jax.random.normal(k, (3,)) for k in step_keys]
assert len({tuple(d.tolist()) for d in draws}) == 3  # a fresh key per step
assert jnp.array_equal(draws[1], jax.random.normal(jax.random.fold_in(typed, 1), (3,)))

# %% [markdown] slideshow={"slide_type": "notes"}
# Prefer typed keys: their dtype says "key", `vmap` and shardings see one key per
# element, and arithmetic on one is an error. `key_data`/`wrap_key_data` convert.
# `fold_in(key, step)` derives a key from a number, the way a loop makes one per step;
# `split` makes several at once (JAX 0.10.2 and 0.12).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Control flow under transformations
#
# A Python `for` under `jit` runs at trace time: the loop is **unrolled**.

# %%
def sin_thrice(x):
    for _ in range(3):
        x = jnp.sin(x)
    return x


print(jax.make_jaxpr(sin_thrice)(1.0))

# %% tags=["check"] jupyter={"source_hidden": true}
unrolled = [e.primitive.name for e in jax.make_jaxpr(sin_thrice)(1.0).eqns]
assert unrolled == ["sin", "sin", "sin"]  # three copies, no loop primitive

# %% [markdown] slideshow={"slide_type": "notes"}
# Python control flow on things known at trace time (shapes, static arguments, a fixed
# `range`) runs once while tracing; the jaxpr holds its result. A `for` over 1000 steps
# writes 1000 copies of the body, slow to compile. On a traced *value* Python cannot
# decide at all. For both, JAX has control-flow primitives inside the program.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `lax.cond`: a branch inside the program
#
# Both branches are traced; the device picks one. `grad` goes through.

# %%
def sin_or_cos(x):
    return lax.cond(x > 0, jnp.sin, jnp.cos, x)


print(jax.grad(sin_or_cos)(1.0), jax.grad(sin_or_cos)(-1.0))

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_allclose(jax.grad(sin_or_cos)(1.0), np.cos(1.0), rtol=1e-6)
np.testing.assert_allclose(jax.grad(sin_or_cos)(-1.0), -np.sin(-1.0), rtol=1e-6)
assert "cond" in {e.primitive.name for e in jax.make_jaxpr(jax.jit(sin_or_cos))(1.0).eqns[0]
                  .params["jaxpr"].eqns}

# %% [markdown] slideshow={"slide_type": "notes"}
# `lax.cond` runs one branch when its predicate is one value. Under `vmap` with a batched
# predicate there is one predicate per example, so JAX runs both branches and picks per
# element with a `select_n` (checked below), as `jnp.where` does.

# %% tags=["check"] jupyter={"source_hidden": true}
batched_cond = {e.primitive.name for e in jax.make_jaxpr(jax.vmap(sin_or_cos))(xs[:, 0]).eqns}
assert "select_n" in batched_cond and "cond" not in batched_cond

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `lax.cond`, drawn
#
# A `cond` cluster: one nested jaxpr per branch, and the branch index.

# %%
draw_jaxpr(sin_or_cos)(1.0)

# %% [markdown] slideshow={"slide_type": "notes"}
# Both branches are traced into nested jaxprs, so both must return the same shapes and
# dtypes. At run time, unbatched, only the chosen branch executes; the first operand is
# the branch index computed from the predicate.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `lax.scan`: a loop with a carry
#
# `scan(f, init, xs)`: `f(carry, x) -> (carry, y)` over the rows of `xs`.

# %%
def cumulative_sum(xs):
    def step(total, x):
        total = total + x
        return total, total

    return lax.scan(step, 0.0, xs)[1]


steps = jnp.arange(5.0)
print(cumulative_sum(steps), jax.grad(lambda xs: cumulative_sum(xs).sum())(steps))

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_array_equal(cumulative_sum(jnp.arange(5.0)), np.cumsum(np.arange(5.0)))
# d/dx_i of sum_j cumsum_j = number of prefixes holding x_i = n - i
np.testing.assert_array_equal(jax.grad(lambda xs: cumulative_sum(xs).sum())(jnp.arange(5.0)),
                              [5.0, 4.0, 3.0, 2.0, 1.0])
backward = jax.make_jaxpr(jax.grad(lambda xs: cumulative_sum(xs).sum()))(steps).eqns
scans = [e for e in backward if e.primitive.name == "scan"]
assert [e.params["reverse"] for e in scans] == [False, True]  # the notes: a reversed scan

# %% [markdown] slideshow={"slide_type": "notes"}
# `scan` traces the body once, whatever the length, and reverse mode goes through it:
# the backward pass is another `scan`, run in reverse, over the values the forward one
# saved. It is the loop to reach for in training code (lesson 06 scans a whole epoch).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `lax.scan`, drawn
#
# One body, traced once: the `scan` cluster.

# %%
draw_jaxpr(cumulative_sum, rankdir="LR")(jnp.arange(5.0))

# %% [markdown] slideshow={"slide_type": "notes"}
# The `scan` cluster holds the body jaxpr once, whatever the length: compile time does not
# grow with the number of steps, unlike the unrolled Python `for`. The carry goes around;
# the stacked outputs come out below.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "subslide"}
# ## Your turn: read the scans off the drawing
#
# Draw `jax.grad(lambda xs: cumulative_sum(xs).sum())` with `draw_jaxpr`. Write
# `ex_count_scans()` returning `(scan clusters drawn for cumulative_sum, scan clusters
# drawn for its gradient)`.

# %% slideshow={"slide_type": "skip"}
draw_jaxpr(jax.grad(lambda xs: cumulative_sum(xs).sum()))(steps)

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_count_scans():
    ...  # your code here: return (forward, gradient)


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_count_scans():
    return (1, 2)


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>A <code>scan</code> cluster's label starts with
# <code>scan</code>; the gradient's drawing holds the forward pass too.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>Reverse mode runs the loop backwards: look for
# <code>reverse=True</code>.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_count_scans)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_count_scans, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/04_transformations.ipynb`, or the Colab badge. Hint: the gradient's drawing holds the
# forward pass too; count the clusters labelled `scan`, and look for `reverse=True`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `while_loop`: forward mode yes, reverse mode no
#
# The trip count is unknown until run time, so reverse mode cannot store the trips.

# %%
def power_by_loop(x, n):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]


print("jvp:", jax.jvp(lambda x: power_by_loop(x, 3), (2.0,), (1.0,)))
try:
    jax.grad(power_by_loop)(2.0, 3)
except ValueError as err:
    print("grad:", str(err)[:60])

# %% tags=["check"] jupyter={"source_hidden": true}
value, tangent = jax.jvp(lambda x: power_by_loop(x, 3), (2.0,), (1.0,))
assert (value, tangent) == (8.0, 12.0)  # x**3 and 3 x**2 at x = 2
assert jax.jacfwd(power_by_loop)(2.0, 3) == 12.0
try:
    jax.grad(power_by_loop)(2.0, 3)
    raise AssertionError("reverse mode should refuse while_loop")
except ValueError:  # the class is the contract; the wording may change
    pass

# %% [markdown] slideshow={"slide_type": "notes"}
# `while_loop` runs until its condition is false, so how many trips it makes is a run-time
# value. Forward mode (`jvp`, `jacfwd`) carries tangents along with the loop and needs
# nothing stored. Reverse mode would have to keep every trip's values for the backward
# pass without knowing how many there are: JAX raises a `ValueError` instead.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `fori_loop`: it depends on the bounds
#
# Bounds known at trace time: a `scan`, so `grad` works. Traced bounds: a `while`.

# %%
def power_fori(x, n):
    return lax.fori_loop(0, n, lambda i, acc: acc * x, 1.0)


print("static n:", jax.make_jaxpr(lambda x: power_fori(x, 3))(2.0).eqns[0].primitive)
print("grad, static n:", jax.grad(power_fori)(2.0, 3))
try:
    jax.jit(jax.grad(power_fori))(2.0, 3)  # under jit, n is traced
except ValueError as err:
    print("grad, traced n:", type(err).__name__)

# %% tags=["check"] jupyter={"source_hidden": true}
assert jax.make_jaxpr(lambda x: power_fori(x, 3))(2.0).eqns[0].primitive.name == "scan"
assert jax.make_jaxpr(power_fori)(2.0, 3).eqns[0].primitive.name == "while"
np.testing.assert_allclose(jax.grad(power_fori)(2.0, 3), 12.0)
try:
    jax.jit(jax.grad(power_fori))(2.0, 3)
    raise AssertionError("reverse mode should refuse fori_loop with traced bounds")
except ValueError:  # the class is the contract; the wording may change
    pass
assert jax.jit(jax.jacfwd(power_fori))(2.0, 3) == 12.0  # forward mode goes through

# %% [markdown] slideshow={"slide_type": "notes"}
# With Python-int bounds, `fori_loop` lowers to a `scan` of known length, which reverse
# mode handles. Under `jit` the bounds become tracers: the trip count is unknown at trace
# time, so it must be a `while`, and `grad` refuses. Forward mode works either way.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Which loop does `grad` go through?
#
# | written as | under `jit` | `jvp` | `grad` |
# | --- | --- | --- | --- |
# | Python `for` / `if` on static values | unrolled | yes | yes |
# | Python `if` on a traced value | error | eagerly only | eagerly only |
# | `lax.cond`, `lax.scan` | one primitive | yes | yes |
# | `fori_loop`, static bounds | `scan` | yes | yes |
# | `fori_loop`, traced bounds; `while_loop` | `while` | yes | **no** |

# %% tags=["check"] jupyter={"source_hidden": true}
# the table's second row: eagerly, grad and jvp tracers carry values (jit's refusal is
# checked where relu_if is defined)
assert jax.grad(relu_if)(3.0) == 1.0 and jax.jvp(relu_if, (3.0,), (1.0,))[1] == 1.0

# %% [markdown] slideshow={"slide_type": "notes"}
# Every row is checked in the notebook. Eagerly, `grad` and `jvp` tracers carry values,
# so a Python `if` works; under `jit` it fails. Where reverse mode is refused, `scan`
# with a fixed maximum number of steps (and a mask) is the usual way out.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## When autodiff is right but useless: softplus
#
# `log(1 + eˣ)` written naively: at x = 100, `exp` overflows, the gradient is `nan`.

# %%
def softplus_naive(x):
    return jnp.log1p(jnp.exp(x))


print(softplus_naive(100.0), jax.grad(softplus_naive)(100.0))

# %% tags=["check"] jupyter={"source_hidden": true}
assert np.isinf(softplus_naive(100.0)) and np.isnan(jax.grad(softplus_naive)(100.0))
# the notes' mechanism: log1p's cotangent is 0, exp's derivative inf, their product nan
log1p_cotangent = jax.grad(jnp.log1p)(jnp.exp(jnp.float32(100.0)))
assert log1p_cotangent == 0.0 and np.isinf(jnp.exp(jnp.float32(100.0)))
assert np.isnan(log1p_cotangent * jnp.exp(jnp.float32(100.0)))

# %% [markdown] slideshow={"slide_type": "notes"}
# Reverse mode goes backwards through the program: `log1p`'s derivative gives
# `1 / (1 + exp(100)) = 1 / inf = 0`, then `exp`'s multiplies by `exp(100) = inf`, and
# `0 · inf` is `nan`. The true derivative, the sigmoid, is about 1 there. Autodiff
# differentiates the program you wrote, rounding included.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `jax.custom_jvp`: you give the derivative
#
# A stable value, and the derivative written as a sigmoid.

# %%
@jax.custom_jvp
def softplus(x):
    return jnp.where(x > 30.0, x, jnp.log1p(jnp.exp(x)))  # past 30, float32 log1p(e^x) is x


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return softplus(x), jax.nn.sigmoid(x) * x_dot


print(softplus(100.0), jax.grad(softplus)(100.0))

# %% tags=["check"] jupyter={"source_hidden": true}
assert softplus(100.0) == 100.0 and jax.grad(softplus)(100.0) == 1.0
xs64, h64 = np.array([-5.0, -1.0, 0.0, 1.0, 5.0, 20.0]), 1e-6
finite_sp = (np.logaddexp(0, xs64 + h64) - np.logaddexp(0, xs64 - h64)) / (2 * h64)
np.testing.assert_allclose(jax.vmap(jax.grad(softplus))(jnp.asarray(xs64, jnp.float32)),
                           finite_sp, rtol=1e-5, atol=1e-6)
np.testing.assert_allclose(softplus(jnp.float32(20.0)), np.logaddexp(0, 20.0), rtol=1e-6)
assert jax.grad(softplus)(-100.0) == 0.0 and not np.isnan(jax.grad(jax.grad(softplus))(100.0))
assert jax.jacfwd(softplus)(100.0) == 1.0  # forward mode: the rule itself
rule_runs = []  # the notes: vmap batches the body; the rule runs only to differentiate


@jax.custom_jvp
def counted_sin(x):
    return jnp.sin(x)


@counted_sin.defjvp
def counted_sin_jvp(primals, tangents):
    rule_runs.append(1)
    return counted_sin(primals[0]), jnp.cos(primals[0]) * tangents[0]


np.testing.assert_allclose(jax.vmap(counted_sin)(jnp.arange(3.0)), jnp.sin(jnp.arange(3.0)))
assert not rule_runs  # vmap alone: the body, batched; the rule untouched
np.testing.assert_allclose(jax.vmap(jax.grad(counted_sin))(jnp.arange(3.0)),
                           jnp.cos(jnp.arange(3.0)))
assert rule_runs  # vmap of grad: the rule, batched

# %% [markdown] slideshow={"slide_type": "notes"}
# `custom_jvp` replaces JAX's derivative of `softplus` with yours: `jacfwd` uses it, and
# `grad` transposes it. `vmap` alone runs the body and never the rule; under
# `vmap(grad(…))` the rule is batched too. `where` alone would not fix the gradient:
# `grad` still goes through the side not taken, where `0 · inf` is `nan` (checked below).

# %% [markdown] slideshow={"slide_type": "skip"}
# The check above compares the custom derivative with float64 finite differences of
# `np.logaddexp(0, x)`. Lesson 02 shows the other kind, `custom_vjp`, which gives the
# backward rule directly (and has no forward mode).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `custom_jvp`, drawn
#
# The jaxpr keeps the original body in a `custom_jvp_call` cluster.

# %%
draw_jaxpr(softplus, rankdir="LR")(1.0)

# %% tags=["check"] jupyter={"source_hidden": true}
(wrapper,) = jax.make_jaxpr(softplus)(1.0).eqns  # one equation holding the body
inside = [v for v in wrapper.params.values() if hasattr(v, "eqns") or hasattr(v, "jaxpr")]
body = {e.primitive.name for e in getattr(inside[0], "jaxpr", inside[0]).eqns}
assert {"exp", "log1p"} <= body and "logistic" not in body  # the body; the rule is apart
where_only = jax.grad(lambda x: jnp.where(x > 30.0, x, jnp.log1p(jnp.exp(x))))(100.0)
assert np.isnan(where_only)  # the notes' claim: `where` alone keeps the nan gradient

# %% [markdown] slideshow={"slide_type": "notes"}
# The jaxpr holds one equation (`custom_jvp_call` in JAX 0.10.2 and 0.12) with the
# original body inside; your JVP rule is kept beside it and used only when a
# transformation differentiates. Running or compiling the function uses the body.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Every value of a run: `step_through`
#
# It runs the jaxpr one equation at a time, with JAX's own primitives, and keeps each
# value and the line that made it.

# %%
def norm(x):
    squares = jnp.sum(x**2)
    return jnp.sqrt(squares)


steps = step_through(norm)(jnp.array([3.0, 4.0]))
steps

# %% tags=["check"] jupyter={"source_hidden": true}
assert [s.primitive for s in steps] == ["integer_pow", "reduce_sum", "sqrt"]
assert steps[-1].outputs[0] == jax.jit(norm)(jnp.array([3.0, 4.0])) == 5.0
np.testing.assert_array_equal(steps[0].outputs[0], np.array([3.0, 4.0]) ** 2)
assert [s.line.code for s in steps] == ["squares = jnp.sum(x**2)"] * 2 + [
    "return jnp.sqrt(squares)"]

# %% [markdown] slideshow={"slide_type": "notes"}
# `step_through(f)(*args)` traces `f` and evaluates the jaxpr one primitive at a time on
# concrete arrays, as `eval_jaxpr` does: nothing hidden inside `jit`. Each node shows
# the value's type, min, max, mean and source line.

# %% [markdown] slideshow={"slide_type": "skip"}
# Nested `jit` calls, `custom_jvp`/`custom_vjp` functions and `checkpoint` are stepped
# inside; a `cond` steps into the branch it takes; `scan` and `while_loop` run as one
# step.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## A `nan` gradient: `find_nans`
#
# `norm` is fine at zero, its gradient is not. `find_nans` steps through `grad(norm)` and
# stops at the first `nan` or `inf`.

# %%
print(norm(jnp.zeros(2)), jax.grad(norm)(jnp.zeros(2)))
report = find_nans(jax.grad(norm))(jnp.zeros(2))
print(report)

# %% tags=["check"] jupyter={"source_hidden": true}
assert norm(jnp.zeros(2)) == 0.0 and np.isnan(jax.grad(norm)(jnp.zeros(2))).all()
assert report.found and report.step.primitive == "div"
assert report.line.code == "return jnp.sqrt(squares)"
assert np.isposinf(report.step.outputs[0])  # sqrt's derivative at 0: 0.5 / sqrt(0)
first_nan = find_nans(jax.grad(norm), include_inf=False)(jnp.zeros(2))
assert first_nan.step.primitive == "mul" and first_nan.step.index > report.step.index
assert first_nan.line.code == "squares = jnp.sum(x**2)"  # where inf meets 2·x = 0

# %% [markdown] slideshow={"slide_type": "notes"}
# ‖x‖ is 0 at the origin, but its gradient x/‖x‖ is 0/0 there. `find_nans` steps through
# `grad(norm)` and stops at the first `inf`: the `div` of `sqrt`'s derivative. The first
# `nan` comes later, where that `inf` is multiplied by zero.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The first `inf`, drawn
#
# Framed red: the equation, with the values that flowed into it.

# %%
report

# %% [markdown] slideshow={"slide_type": "notes"}
# `sqrt`'s backward pass multiplies by `0.5 / sqrt(x)`: `inf` at `x = 0`. Then `x**2`'s
# multiplies by `2·x = 0`, and `0 · inf` is `nan`. Pass the gradient function itself,
# `find_nans(jax.grad(f))`: each backward equation carries the line it differentiates.
# JAX's own switch, `jax_debug_nans`, raises at the first `nan` instead.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## JAX's own switches: `jax_debug_nans`, `disable_jit`
#
# `jax_debug_nans` makes a `nan` an error, raised where it was made.

# %%
raised = None
try:
    with jax.debug_nans(True):  # or jax.config.update("jax_debug_nans", True)
        jax.grad(norm)(jnp.zeros(2))
except FloatingPointError as err:
    raised = err
    print("FloatingPointError:", str(err).splitlines()[0][:60])
with jax.disable_jit():  # jit runs as plain Python (vmap, grad still trace)
    print(jax.jit(norm)(jnp.array([3.0, 4.0])))

# %% tags=["check"] jupyter={"source_hidden": true}
assert isinstance(raised, FloatingPointError)  # the class is the contract
with jax.debug_nans(True):  # an inf alone is not a nan: no error
    assert np.isposinf(jnp.float32(1.0) / jnp.float32(0.0))
assert not jax.config.jax_debug_nans  # the context manager restored the setting
seen = []
with jax.disable_jit():
    jax.jit(lambda v: seen.append(float(v.sum())) or v)(jnp.ones(2))  # float() of a tracer fails
assert seen == [2.0]

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax_debug_nans` checks every result for `nan` (not `inf`); in a jitted function it
# re-runs it un-jitted to raise a `FloatingPointError` at the culprit (JAX 0.10.2, 0.12):
# slower, for debugging only. `find_nans` also stops at `inf` and shows the values
# around it. `jax.disable_jit()` turns `jit` off, so `print` and `pdb` see values.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The fix: the double `where`
#
# Keep zero out of `sqrt` itself. A single `where` after `sqrt` is not enough: `grad`
# still goes through the branch not taken (as with softplus).

# %%
def norm_safe(x):
    squares = jnp.sum(x**2)
    nonzero = squares > 0
    safe = jnp.where(nonzero, squares, 1.0)  # sqrt never sees a zero
    return jnp.where(nonzero, jnp.sqrt(safe), 0.0)


print(jax.grad(norm_safe)(jnp.zeros(2)), jax.grad(norm_safe)(jnp.array([3.0, 4.0])))
print(find_nans(jax.grad(norm_safe))(jnp.zeros(2)))

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_array_equal(jax.grad(norm_safe)(jnp.zeros(2)), [0.0, 0.0])
x64 = np.array([3.0, 4.0])
np.testing.assert_allclose(jax.grad(norm_safe)(jnp.asarray(x64, jnp.float32)),
                           x64 / np.linalg.norm(x64), rtol=1e-6)  # float64 oracle
assert not find_nans(jax.grad(norm_safe))(jnp.zeros(2)).found
one_where = lambda x: jnp.where(jnp.sum(x**2) > 0, jnp.sqrt(jnp.sum(x**2)), 0.0)
assert np.isnan(jax.grad(one_where)(jnp.zeros(2))).all()  # the claim: one is not enough

# %% [markdown] slideshow={"slide_type": "notes"}
# The inner `where` keeps zero out of `sqrt`, so its derivative is finite everywhere; the
# outer `where` restores the value 0. The gradient at the origin is now 0, and elsewhere
# it still matches x/‖x‖ in float64 (the check cell).

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: a running product with `lax.scan`
#
# Write `ex_cumulative_product(xs)`: for `xs` of shape `(n,)`, the running products
# `[x0, x0·x1, x0·x1·x2, ...]`, as a `lax.scan` (so that `grad` goes through it).

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_cumulative_product(xs):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_cumulative_product(xs):
    def step(product, x):
        product = product * x
        return product, product

    return lax.scan(step, jnp.ones((), xs.dtype), xs)[1]


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The carry is the product so far; <code>step(carry, x)</code>
# returns the new carry and the value to stack.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>A product starts from 1. <code>lax.scan</code> returns
# <code>(final carry, stacked values)</code>: you want the second.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_cumulative_product)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_cumulative_product, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 6 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/04_transformations.ipynb`, or the Colab badge. Hint: copy `cumulative_sum`'s shape: the
# carry is the product so far, starting from `jnp.ones((), xs.dtype)`; return the second
# result of `lax.scan`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - batched a one-example function with `vmap`: no loop in the jaxpr;
# - fixed a Python `if` with `jnp.where`; composed per-example gradients;
# - used pytrees, pure functions, typed keys, `.at[]` and `jax.Ref`;
# - put loops and branches in the program; fixed softplus with `custom_jvp`;
# - found a `nan` gradient's first `inf` and fixed it with a double `where`.
#
# *Next: lesson 05, an MLP on MNIST.*
