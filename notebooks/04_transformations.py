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
# # 04 · Transformations: `vmap`, `jit`, `grad`, composed, on pytrees
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/04_transformations.ipynb)
#
# A JAX transformation takes a function and returns a new function. You will see:
#
# - **`vmap`**: write a function for one example, run it on a batch (`in_axes`);
# - **`jit`** on the `relu` example: why a Python `if` fails under it, and the fix;
# - **composition**: `jit(vmap(grad(loss)))` gives per-example gradients in one call;
# - **pytrees**: lists, dicts and your own classes as arguments, and `jax.tree`;
# - why JAX wants **pure functions** and **explicit random keys**.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `vmap`: write it for one example, run it on a batch
#
# `predict` knows nothing about batches: it takes one example `x` of 3 features.
# `jax.vmap` makes a version that takes many; `in_axes` says which arguments carry the
# batch (`0`: along their first axis) and which are shared (`None`).

# %%
import jax
import jax.numpy as jnp
import numpy as np


def predict(w, b, x):
    """One example: w f32[3], b f32[], x f32[3] -> f32[]."""
    # sum(w * x) rather than a dot: exact float32 on every backend (a TPU runs dots in bf16)
    return jnp.tanh(jnp.sum(w * x) + b)


key_w, key_x, key_t = jax.random.split(jax.random.key(0), 3)
w, b = jax.random.normal(key_w, (3,)), 0.5
xs = jax.random.normal(key_x, (8, 3))  # a batch of 8 examples
predict_batch = jax.vmap(predict, in_axes=(None, None, 0))
ys = predict_batch(w, b, xs)
print(ys.shape)
assert ys.shape == (8,)
np.testing.assert_allclose(ys, jnp.stack([predict(w, b, x) for x in xs]), rtol=1e-6)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `in_axes`: where the batch is
#
# Examples stored as columns? Batch along axis 1. Five weight vectors, one input? Batch
# the weights instead.

# %%
by_columns = jax.vmap(predict, in_axes=(None, None, 1))(w, b, xs.T)
np.testing.assert_allclose(by_columns, ys, rtol=1e-6)

five_ws = jax.random.normal(key_w, (5, 3))
five_models = jax.vmap(predict, in_axes=(0, None, None))(five_ws, b, xs[0])
print(five_models.shape)
assert five_models.shape == (5,)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### No loop: `vmap` rewrites the jaxpr
#
# `vmap` does not run `predict` eight times. It traces it once and turns every equation
# into its batched form: `mul` multiplies all 8 rows at once (a `broadcast_in_dim` first
# copies the shared `w` to each row), `reduce_sum` sums each row.

# %%
one = [e.primitive.name for e in jax.make_jaxpr(predict)(w, b, xs[0]).jaxpr.eqns]
batch = jax.make_jaxpr(predict_batch)(w, b, xs).jaxpr
print("one example:", one)
print("batched:    ", [e.primitive.name for e in batch.eqns], "->", batch.outvars[0].aval)
assert [e.primitive.name for e in batch.eqns if e.primitive.name != "broadcast_in_dim"] == one
assert not {"while", "scan"} & {e.primitive.name for e in batch.eqns}

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `jit` and the `relu` example
#
# Written the Python way, with an `if`, `relu` works eagerly but not under `jax.jit`.
# `jit` traces the function with **abstract** values: `x` is a tracer standing for any
# `f32[]`, so `x > 0` has no True or False yet.

# %%
def relu_if(x):
    if x > 0:
        return x
    return 0.0


assert relu_if(3.0) == 3.0 and relu_if(-2.0) == 0.0
try:
    jax.jit(relu_if)(3.0)
except jax.errors.TracerBoolConversionError as err:
    message = str(err)
print(message.splitlines()[0])
assert message.startswith("Attempted boolean conversion of traced array")

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The fix: let JAX choose, not Python
#
# `jnp.where` (or `jnp.maximum`) puts the choice *into* the program, as a `select`
# equation that runs on the device for every element.

# %%
def relu(x):
    return jnp.where(x > 0, x, 0.0)


relu_jit = jax.jit(relu)
assert relu_jit(3.0) == 3.0 and relu_jit(-2.0) == 0.0
np.testing.assert_array_equal(relu_jit(jnp.array([-1.0, 2.0])), [0.0, 2.0])
relu_jaxpr = str(jax.make_jaxpr(relu)(3.0))
print("the jaxpr holds a select_n equation:", "select_n" in relu_jaxpr)
assert "select_n" in relu_jaxpr

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `jit` traces once per shape and dtype
#
# The Python body runs only while tracing. A list that records each trace shows when:
# once for `f32[3]`, reused for another `f32[3]`, once more for `f32[5]`.

# %%
traces = []


@jax.jit
def relu_counted(x):
    traces.append(x.shape)  # a side effect: it happens at trace time only
    return jnp.maximum(x, 0.0)


relu_counted(jnp.ones(3))
relu_counted(-jnp.ones(3))
relu_counted(jnp.ones(5))
print(traces)
assert traces == [(3,), (5,)]

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Composition: `jit(vmap(grad(loss)))`
#
# Read it from the inside out: `grad` makes the derivative of *one* example's loss,
# `vmap` runs it for every example, `jit` compiles the lot into one program. The result:
# one gradient per example, which a batched loss alone cannot give.

# %%
def loss(w, b, x, t):
    """Squared error of one example."""
    return (predict(w, b, x) - t) ** 2


targets = jax.random.normal(key_t, (8,))
per_example_grads = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, None, 0, 0)))
grads = per_example_grads(w, b, xs, targets)
print(grads.shape)
assert grads.shape == (8, 3)
one_by_one = jnp.stack([jax.grad(loss)(w, b, x, t) for x, t in zip(xs, targets, strict=True)])
np.testing.assert_allclose(grads, one_by_one, rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Checked two ways
#
# The mean of the per-example gradients is the gradient of the mean loss; and the first
# example's gradient matches central finite differences in float64 NumPy.

# %%
def mean_loss(w):
    return jnp.mean(jax.vmap(loss, in_axes=(None, None, 0, 0))(w, b, xs, targets))


np.testing.assert_allclose(grads.mean(axis=0), jax.grad(mean_loss)(w), rtol=1e-5, atol=1e-6)

w64, x64, t64, h = np.asarray(w, np.float64), np.asarray(xs[0], np.float64), float(targets[0]), 1e-6


def loss64(w):
    return (np.tanh(w @ x64 + b) - t64) ** 2


finite = [(loss64(w64 + h * e) - loss64(w64 - h * e)) / (2 * h) for e in np.eye(3)]
np.testing.assert_allclose(grads[0], finite, rtol=1e-4, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pytrees: nested containers of arrays
#
# Real parameters are not one array. JAX accepts any nesting of lists, tuples and dicts
# (a **pytree**); the arrays at the bottom are its **leaves**. `jax.tree` works on them.

# %%
params = {"layers": [
    {"w": jnp.ones((3, 4)), "b": jnp.zeros(4)},
    {"w": jnp.ones((4, 1)), "b": jnp.zeros(1)},
]}
for path, leaf in jax.tree.leaves_with_path(params):
    print(f"{jax.tree_util.keystr(path):<20} {leaf.shape}")
sizes = jax.tree.map(jnp.size, params)
assert len(jax.tree.leaves(params)) == 4
assert sum(jax.tree.leaves(sizes)) == 3 * 4 + 4 + 4 * 1 + 1

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Gradients come back in the same shape
#
# `grad` of a function of a pytree returns a pytree with the same structure, so an SGD
# step is one `jax.tree.map`.

# %%
def network(params, x):
    for layer in params["layers"]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return jnp.sum(x)


param_grads = jax.grad(network)(params, jnp.ones(3))
assert jax.tree.structure(param_grads) == jax.tree.structure(params)
stepped = jax.tree.map(lambda p, g: p - 0.1 * g, params, param_grads)
assert network(stepped, jnp.ones(3)) < network(params, jnp.ones(3))

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Your own class as a pytree
#
# Register a dataclass and JAX sees through it. A field marked static is part of the
# structure (like a dict's keys), not a leaf: it is never traced or differentiated.

# %%
import dataclasses


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Linear:
    w: jax.Array
    b: jax.Array
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


layer = Linear(jnp.ones((3, 2)), jnp.zeros(2))
leaves, treedef = jax.tree.flatten(layer)
doubled = jax.tree.unflatten(treedef, [2 * leaf for leaf in leaves])
print(treedef)
assert len(leaves) == 2 and isinstance(doubled, Linear) and doubled.activation == "tanh"
layer_grads = jax.grad(lambda layer, x: jnp.sum(jnp.tanh(x @ layer.w + layer.b)))(layer, xs[0])
assert isinstance(layer_grads, Linear) and layer_grads.w.shape == (3, 2)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Why pure functions
#
# `jit` runs the Python once, to trace, then replays the compiled program. Whatever the
# function reads that is not an argument is frozen at trace time: here a global.

# %%
scale = 2.0


@jax.jit
def scaled(x):
    return scale * x  # reads a global: baked into the program when traced


assert scaled(1.0) == 2.0
scale = 3.0
print(f"scale is now {scale}, scaled(1.0) is still {scaled(1.0)}")
assert scaled(1.0) == 2.0

scaled_pure = jax.jit(lambda x, scale: scale * x)  # pure: everything it uses is an argument
assert scaled_pure(1.0, scale) == 3.0

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Explicit random keys
#
# NumPy's generator hides its state and changes it on every call, which a traced, batched
# or parallel program cannot follow. In JAX the **key** is an argument: the same key
# gives the same numbers; `split` makes new keys.

# %%
key = jax.random.key(42)
assert jnp.array_equal(jax.random.normal(key, (3,)), jax.random.normal(key, (3,)))
key_a, key_b = jax.random.split(key)
assert not jnp.array_equal(jax.random.normal(key_a, (3,)), jax.random.normal(key_b, (3,)))

rng = np.random.default_rng(42)  # NumPy: same call, different numbers
assert not np.array_equal(rng.normal(size=3), rng.normal(size=3))

samples = jax.vmap(lambda k: jax.random.normal(k))(jax.random.split(key, 5))
print(samples)
assert len(set(samples.tolist())) == 5  # one independent sample per key, in one call

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - turned a one-example function into a batched one with `vmap`, chose the batch axis
#   with `in_axes`, and saw that the batched jaxpr has no loop;
# - saw a Python `if` fail under `jit` on a tracer, fixed `relu` with `jnp.where`, and
#   counted one trace per input shape;
# - composed `jit(vmap(grad(loss)))` into per-example gradients, checked against a loop,
#   the batched gradient and finite differences;
# - passed dicts, lists and a registered dataclass as pytrees, and used `jax.tree`;
# - saw a global frozen into a jitted function, and random numbers made reproducible by
#   explicit keys.
