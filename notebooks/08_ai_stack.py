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
# # 08 · The JAX AI stack, run for real
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/08_ai_stack.ipynb)
#
# - **Grain** feeds the MNIST MLP its batches;
# - **Optax** replaces our hand-written update, with the same weights;
# - **Flax NNX** trains the same MLP as a Python object, to the same accuracy;
# - **Orbax** saves it and restores it, bit for bit.
#
# *About 30 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour and the lessons' libraries where they are missing (Colab),
# then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None or importlib.util.find_spec("flax") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import functools
import tempfile
from pathlib import Path

import flax
import grain
import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
from flax import nnx

from jaxtour import paths
from jaxtour.exercises import check
from jaxtour.mlp import (
    LR,
    MOMENTUM,
    accuracy,
    batched_predict,
    init_params,
    load_mnist,
    loss,
    preprocess,
    update,
)
from jaxtour.viz import draw_ai_stack, draw_jaxpr

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The stack
#
# JAX and XLA at the bottom; on top, libraries that pass pytrees of arrays to pure
# functions, so they combine with `jit`, `grad`, `vmap` and with each other.

# %%
draw_ai_stack()

# %% tags=["check"] jupyter={"source_hidden": true}
stack = draw_ai_stack()
assert all(name in stack.source for name in ("JAX", "XLA", "Optax", "Flax", "Orbax", "Grain"))
assert stack.svg().lstrip().startswith("<?xml")

# %% [markdown] slideshow={"slide_type": "notes"}
# We walk up the stack with lesson 05's MLP: Grain loads the data, Optax turns gradients
# into updates, Flax NNX holds the layers, Orbax writes the weights. Each is optional and
# replaceable (Equinox for Flax, a NumPy loop for Grain). The lesson ends on this picture,
# marked with what ran.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The data: MNIST, as in lesson 05
#
# The same loader, the same standardised pixels; a slice of the training set so the
# lesson runs in a minute.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
n_train = 2048 if paths.quick() else 20_000  # CI: a smaller slice
n_test = 2000 if paths.quick() else 10_000

# %%
mnist = load_mnist(progress=False)
images = np.asarray(preprocess(mnist.train_images[:n_train]))
labels = mnist.train_labels[:n_train].astype(np.int32)
x_test = preprocess(mnist.test_images[:n_test])
y_test = jnp.asarray(mnist.test_labels[:n_test], jnp.int32)
print(f"train {images.shape}, test {x_test.shape}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert images.shape == (n_train, 784) and images.dtype == np.float32
assert x_test.shape == (n_test, 784) and labels.dtype == np.int32

# %% [markdown] slideshow={"slide_type": "notes"}
# The full run trains on 20,000 images and tests on all 10,000 (a shorter run, CI's, on
# fewer). The images stay a NumPy array on the host: Grain picks batches from it, and
# each batch goes to the device when the step is called.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Grain: a data pipeline
#
# A `MapDataset` is a lazy, indexable recipe: shuffle the indices, look up each example,
# stack 128 of them. A seed per epoch: a new order each epoch, the same in every run.

# %%
BATCH, EPOCHS = 128, 2


def epoch(seed):
    return (grain.MapDataset.range(n_train)
            .shuffle(seed=seed)
            .map(lambda i: (images[i], labels[i]))
            .batch(BATCH, drop_remainder=True))


print(f"{len(epoch(0))} batches of {BATCH}; {n_train % BATCH} examples left out per epoch")

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(epoch(0)) == n_train // BATCH
assert {x.shape for x, _ in epoch(0)} == {(BATCH, 784)}  # one shape: one compiled step
first_0, first_1 = epoch(0)[0], epoch(1)[0]
assert np.array_equal(first_0[1], epoch(0)[0][1])  # same seed, same batches
assert not np.array_equal(first_0[1], first_1[1])  # a new order each epoch
shuffled = grain.MapDataset.range(n_train).shuffle(seed=0)  # read by index below, not list()
order = np.asarray([shuffled[i] for i in range(BATCH)])  # the first batch's indices
assert np.array_equal(first_0[0], images[order])  # each image with its own label
assert np.array_equal(first_0[1], labels[order])
seen = np.concatenate([y for _, y in epoch(0)])
assert len(seen) == n_train - n_train % BATCH

# %% [markdown] slideshow={"slide_type": "notes"}
# `drop_remainder=True` drops the last, short batch: another shape would make `jax.jit`
# compile the step again, for one step an epoch. The order changes each epoch, so a
# different few are left out each time. Padding with masked examples is the other way
# out.

# %% [markdown] slideshow={"slide_type": "skip"}
# Grain never loads the whole epoch: `epoch(0)[5]` computes batch 5 alone. For data that
# does not fit in memory, `grain.MapDataset.source` takes any indexable source (such as
# ArrayRecord files), and `.to_iter_dataset()` with `.mp_prefetch()` moves the work to
# worker processes while the accelerator trains.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Pure JAX: the step we wrote in lesson 05
#
# `update` is `jax.grad` plus SGD with momentum written as two `jax.tree.map`s. The
# losses stay on the device; the host waits for them once per epoch.

# %%
by_hand = jax.jit(update)
params = init_params(jax.random.key(0))
velocity = jax.tree.map(jnp.zeros_like, params)
for e in range(EPOCHS):
    losses = []
    for x, y in epoch(seed=e):
        params, velocity, batch_loss = by_hand(params, x, y, velocity)
        losses.append(batch_loss)  # a device array: no waiting here
    print(f"epoch {e}: loss {float(jnp.mean(jnp.stack(losses))):.3f}")  # one wait
hand_params = params
jax_accuracy = float(accuracy(hand_params, x_test, y_test))

# %% tags=["check"] jupyter={"source_hidden": true}
assert 0.8 < jax_accuracy <= 1.0, jax_accuracy

# %% [markdown] slideshow={"slide_type": "notes"}
# `float(batch_loss)` inside the loop would make the host wait for every step before it
# queues the next one: the asynchronous dispatch of lesson 01 would be lost. Appending
# the device array costs nothing; `jnp.stack` and one `float` per epoch wait once.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Optax: an optimiser is two pure functions
#
# `init(params)` makes the optimiser's state, a pytree; `update(grads, state, params)`
# turns gradients into updates. The training step no longer knows the rule.

# %%
@functools.cache  # per optimiser object: jit caches per function, a new step compiles again
def make_step(optimiser):
    @jax.jit
    def step(params, opt_state, x, y):
        batch_loss, grads = jax.value_and_grad(loss)(params, x, y)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, batch_loss
    return step

# %% [markdown] slideshow={"slide_type": "notes"}
# An Optax optimiser is a pair of pure functions: `init` builds its state from the
# params, `update` maps gradients (and that state) to updates and a new state. The step
# is jitted once per optimiser; the rule lives in the state and in `update`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### One training loop for any optimiser

# %%
def train(optimiser):
    step, params = make_step(optimiser), init_params(jax.random.key(0))
    opt_state, epoch_losses = optimiser.init(params), []
    for e in range(EPOCHS):
        losses = []
        for x, y in epoch(seed=e):
            params, opt_state, batch_loss = step(params, opt_state, x, y)
            losses.append(batch_loss)
        epoch_losses.append(float(jnp.mean(jnp.stack(losses))))
    return params, opt_state, epoch_losses

# %% [markdown] slideshow={"slide_type": "notes"}
# The same loop as the hand-written one, with the optimiser as an argument: the same
# starting weights, the same Grain batches, one `float` per epoch.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `optax.sgd` with momentum is our rule
#
# Same start, same batches: the same weights as the step written by hand.

# %%
sgd = optax.sgd(learning_rate=LR, momentum=MOMENTUM)
sgd_params, _, _ = train(sgd)
gaps = jax.tree.map(lambda a, b: float(jnp.max(jnp.abs(a - b))), sgd_params, hand_params)
print(f"largest difference from the weights trained by hand: {max(jax.tree.leaves(gaps)):.1e}")

# the first 5 steps side by side, before SGD can amplify a rounding difference
optax_step, hand_p = make_step(sgd), init_params(jax.random.key(0))
optax_p, optax_state = hand_p, sgd.init(hand_p)
hand_v = jax.tree.map(jnp.zeros_like, hand_p)
for i in range(5):
    xb, yb = epoch(seed=0)[i]
    optax_p, optax_state, _ = optax_step(optax_p, optax_state, xb, yb)
    hand_p, hand_v, _ = by_hand(hand_p, xb, yb, hand_v)
five = max(float(jnp.max(jnp.abs(a - b)))
           for a, b in zip(jax.tree.leaves(optax_p), jax.tree.leaves(hand_p), strict=True))
print(f"after 5 steps: {five:.1e}")

# %% tags=["check"] jupyter={"source_hidden": true}
# Five steps, not the whole run: after hundreds of steps SGD amplifies a one-ulp
# difference (another fusion, an FMA, another cuBLAS algorithm) to 1e-3 and more.
for a, b in zip(jax.tree.leaves(optax_p), jax.tree.leaves(hand_p), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# Optax's momentum (`optax.trace`) keeps `velocity = momentum * velocity + grad` and its
# update is `-lr * velocity`, which `apply_updates` adds: the same arithmetic as lesson
# 05's step: after 5 steps the weights agree to float32 rounding. Over a whole run any
# rounding difference grows (lesson 06): the first gap printed is this run's.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Change the optimiser, keep the loop
#
# Adam; and gradient clipping chained with AdamW under a warm-up-then-cosine schedule.

# %%
total_steps = EPOCHS * (n_train // BATCH)
schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, total_steps // 10, total_steps)
optimisers = {
    "Adam": optax.adam(1e-3),
    "clip + AdamW + schedule": optax.chain(optax.clip_by_global_norm(1.0),
                                           optax.adamw(schedule, weight_decay=1e-4)),
}
results = {name: train(optimiser) for name, optimiser in optimisers.items()}
for name, (trained, _, losses) in results.items():
    print(f"{name:<24} loss {losses[0]:.3f} → {losses[-1]:.3f}, "
          f"test accuracy {float(accuracy(trained, x_test, y_test)):.3f}")

# %% tags=["check"] jupyter={"source_hidden": true}
for name, (trained, _, losses) in results.items():
    assert losses[-1] < losses[0], name
    assert float(accuracy(trained, x_test, y_test)) > 0.6, name
# Adam's state: two running averages shaped like the parameters, and a step count.
adam_state = results["Adam"][1]
assert len(jax.tree.leaves(adam_state)) == 2 * len(jax.tree.leaves(hand_params)) + 1

# %% [markdown] slideshow={"slide_type": "notes"}
# Each optimiser's state is a pytree made by `init` and threaded through every step:
# Adam's holds two running averages shaped like the parameters and a step count, so it
# can be checkpointed, sharded or inspected like the weights themselves.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: an Optax step
#
# Write `ex_optax_step(loss_fn, optimiser, params, opt_state, x, y)` that returns
# `(new_params, new_opt_state, loss)`: the loss of `params` on `(x, y)` and one step of
# any Optax optimiser (AdamW included).

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_optax_step(loss_fn, optimiser, params, opt_state, x, y):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_optax_step(loss_fn, optimiser, params, opt_state, x, y):
    value, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimiser.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Start from <code>make_step</code> above, without the
# <code>jax.jit</code>.</details>
# <details><summary>Hint 2</summary>AdamW's weight decay needs the parameters: pass them
# to <code>optimiser.update</code> as its third argument.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_optax_step)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_optax_step, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/08_ai_stack.ipynb`, or the Colab badge. Hint: `make_step` without the
# `jax.jit`; AdamW's weight decay needs the params as `update`'s third argument.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Flax NNX: the same MLP as a Python object
#
# Layers are attributes; each `nnx.Linear` holds its kernel and bias as `nnx.Param`s.

# %%
class MLP(nnx.Module):
    def __init__(self, rngs):
        self.hidden1 = nnx.Linear(784, 512, rngs=rngs)
        self.hidden2 = nnx.Linear(512, 256, rngs=rngs)
        self.output = nnx.Linear(256, 10, rngs=rngs)

    def __call__(self, x):
        x = jax.nn.relu(self.hidden1(x))
        x = jax.nn.relu(self.hidden2(x))
        return self.output(x)


model = MLP(nnx.Rngs(0))

# %% [markdown] slideshow={"slide_type": "notes"}
# `nnx.Rngs(0)` is a key and a counter: each layer draws a fresh key from it, lesson
# 05's explicit keys carried in an object. The `__call__` is lesson 05's `predict`,
# written on a batch.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Named streams: `nnx.Rngs` for dropout
#
# One stream per purpose: `params` initialises weights, `dropout` draws masks, each
# its own key and counter.

# %%
rngs = nnx.Rngs(params=0, dropout=1)
dropout = nnx.Dropout(0.5, rngs=rngs)  # forks the `dropout` stream
ones = jnp.ones((2, 8))
print(dropout(ones), dropout(ones), sep="\n")  # a fresh mask per call
dropout.eval()  # evaluation mode: dropout is the identity
print(dropout(ones)[0])
dropout.train()

# %% tags=["check"] jupyter={"source_hidden": true}
masks = [dropout(ones) for _ in range(2)]
assert all(set(np.unique(m).tolist()) <= {0.0, 2.0} for m in masks)  # kept: ×1/(1−0.5)
assert not np.array_equal(masks[0], masks[1])  # the stream moves on each call
seeded = {(p, d): nnx.Dropout(0.5, rngs=nnx.Rngs(params=p, dropout=d))(ones)
          for p, d in ((0, 1), (123, 1), (0, 2))}
assert np.array_equal(seeded[0, 1], seeded[123, 1])  # masks ignore the params seed
assert not np.array_equal(seeded[0, 1], seeded[0, 2])  # and follow the dropout seed
assert np.array_equal(dropout(ones, deterministic=True), ones)
dropout.eval()
assert np.array_equal(dropout(ones), ones)  # evaluation mode: the identity
dropout.train()

# %% [markdown] slideshow={"slide_type": "notes"}
# `nnx.Rngs(params=0, dropout=1)` holds named streams, each a key and a counter (lesson
# 04's `fold_in` in an object): a layer asks for its stream by name, so the masks do not
# depend on the weights' seed (the check cell). `eval()` and `train()` switch every
# `Dropout` (and `BatchNorm`) below a module (Flax 0.12).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A module is a pytree; `split` gives its functional view
#
# `jax.jit` and `jax.grad` take an NNX module as it is. `nnx.split` separates a static
# graph definition from a pytree of arrays; `nnx.merge` rebuilds the module.

# %%
print(len(jax.tree.leaves(model)), "arrays in the module;",
      "jax.jit takes it:", jax.jit(lambda m, x: m(x))(model, x_test[:2]).shape)
graphdef, state = nnx.split(model)
weights = nnx.to_pure_dict(state)
print(jax.tree.map(jnp.shape, weights))

# %% tags=["check"] jupyter={"source_hidden": true}
assert set(weights) == {"hidden1", "hidden2", "output"}
assert weights["hidden1"]["kernel"].shape == (784, 512)
assert weights["output"]["bias"].shape == (10,)
assert len(jax.tree.leaves(state)) == len(jax.tree.leaves(hand_params)) == 6
assert np.array_equal(nnx.merge(graphdef, state)(x_test[:8]), model(x_test[:8]))
assert len(jax.tree.leaves(model)) == 6  # the module itself: kernels and biases
# jit of grad: both take the module
module_grads = jax.jit(jax.grad(lambda m: jnp.sum(m(x_test[:8]))))(model)
assert isinstance(module_grads, MLP) and module_grads.hidden1.kernel.shape == (784, 512)
np.testing.assert_allclose(jax.jit(lambda m, x: m(x))(model, x_test[:8]), model(x_test[:8]),
                           rtol=1e-5, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# An NNX module is a mutable object *and*, in the pinned Flax 0.12, a pytree: JAX's
# transformations take it directly. `split`/`merge` give the functional API: a pure step
# on `(graphdef, state)`. NNX's own `nnx.jit`/`nnx.grad` also write state changes back
# into the objects. A kernel is `[in, out]`, like our `w`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Start from the pure-JAX weights
#
# Flax initialises its own way; to compare like with like, we copy in the weights
# `init_params(key(0))` gave the pure-JAX run.

# %%
start = {name: {"kernel": layer["w"], "bias": layer["b"]}
         for name, layer in init_params(jax.random.key(0)).items()}
nnx.replace_by_pure_dict(state, start)
nnx.update(model, state)  # the object changes in place

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_array_equal(
    model(x_test[:8]), batched_predict(init_params(jax.random.key(0)), x_test[:8]))

# %% [markdown] slideshow={"slide_type": "notes"}
# `replace_by_pure_dict` fills the state pytree from plain dicts, and `nnx.update`
# writes it into the module in place. The check: the NNX model and `batched_predict`
# now give the same logits.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: the NNX forward pass, by hand
#
# Write `ex_nnx_forward(weights, x)`: the logits `model(x)` computes, from
# `weights = nnx.to_pure_dict(nnx.state(model))` alone (a dict of dicts of arrays).

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_nnx_forward(weights, x):
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_nnx_forward(weights, x):
    for name in ("hidden1", "hidden2"):
        x = jax.nn.relu(x @ weights[name]["kernel"] + weights[name]["bias"])
    return x @ weights["output"]["kernel"] + weights["output"]["bias"]

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Print <code>jax.tree.map(jnp.shape, weights)</code>:
# a kernel is <code>[in, out]</code>.</details>
# <details><summary>Hint 2</summary>ReLU after each hidden layer, none after the
# output layer.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_nnx_forward)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_nnx_forward, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/08_ai_stack.ipynb`, or the Colab badge. Hint: print
# `jax.tree.map(jnp.shape, weights)`; each layer is `x @ kernel + bias`, ReLU after the
# hidden ones only.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Training with NNX
#
# `nnx.Optimizer` holds the Optax state next to the model. Under `nnx.jit`, the step
# changes both objects in place and returns only the loss.

# %%
optimizer = nnx.Optimizer(model, sgd, wrt=nnx.Param)


@nnx.jit
def nnx_step(model, optimizer, x, y):
    def batch_loss(model):
        logits = model(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    value, grads = nnx.value_and_grad(batch_loss)(model)
    optimizer.update(model, grads)
    return value

# %% [markdown] slideshow={"slide_type": "notes"}
# `nnx.Optimizer(model, sgd, wrt=nnx.Param)` keeps Optax's state for the `Param`s only.
# `nnx.value_and_grad` differentiates with respect to the model's params;
# `optimizer.update(model, grads)` changes the model in place. `nnx.jit` carries those changes out
# of the compiled step.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Same batches, same epochs

# %%
for e in range(EPOCHS):
    losses = [nnx_step(model, optimizer, x, y) for x, y in epoch(seed=e)]
    print(f"epoch {e}: loss {float(jnp.mean(jnp.stack(losses))):.3f}")

nnx_accuracy = float(jnp.mean(jnp.argmax(model(x_test), axis=-1) == y_test))
print(f"test accuracy: Flax NNX {nnx_accuracy:.2%}, pure JAX {jax_accuracy:.2%}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert abs(nnx_accuracy - jax_accuracy) <= 0.005, (nnx_accuracy, jax_accuracy)
assert optimizer.step[...] == EPOCHS * (n_train // BATCH)

# %% [markdown] slideshow={"slide_type": "notes"}
# Same data, order, optimiser and starting weights, but not the same arithmetic: Flax's
# layers and Optax's integer-label cross-entropy are other programs, rounding otherwise,
# and SGD amplifies that (lesson 06). The weights part; the accuracies agree, within 0.5
# points.

# %% [markdown] slideshow={"slide_type": "skip"}
# Flax's own initialisation (LeCun normal, where `init_params` uses He for the hidden
# layers) would start from other weights: a comparison of two different runs, not of
# two implementations of one.
#
# `nnx.jit` walks the objects on every call to split and merge them; on a fast
# accelerator that Python work can show. The tight-loop form is `nnx.split` once, a
# `jax.jit` of a pure step on `(graphdef, state)`, and `nnx.merge` at the end.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Orbax: save the trained model
#
# A checkpoint is the state pytree, written as files. Saving runs in the background;
# `wait_until_finished` waits for it.

# %%
folder = tempfile.TemporaryDirectory()
checkpoint = Path(folder.name) / "mlp"
checkpointer = ocp.StandardCheckpointer()
checkpointer.save(checkpoint, nnx.state(model))
checkpointer.wait_until_finished()
print(sorted(path.name for path in checkpoint.iterdir())[:4], "...")

# %% tags=["check"] jupyter={"source_hidden": true}
assert checkpoint.is_dir() and any(checkpoint.iterdir())

# %% [markdown] slideshow={"slide_type": "notes"}
# `nnx.state(model)` is the pytree of arrays; Orbax writes it to a folder
# (TensorStore's format) in a background thread. The folder is temporary here; a real
# run saves every few epochs (`ocp.CheckpointManager` keeps the last few).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Restore into an empty model
#
# `nnx.eval_shape` builds the model's shapes and dtypes without allocating a weight;
# Orbax fills that template from disk.

# %%
abstract = nnx.eval_shape(lambda: MLP(nnx.Rngs(1)))
graphdef, template = nnx.split(abstract)
restored = nnx.merge(graphdef, checkpointer.restore(checkpoint, template))
same = np.array_equal(restored(x_test), model(x_test))
print(f"restored model gives identical logits: {same}")

# %% tags=["check"] jupyter={"source_hidden": true}
assert same
_ = jax.tree.map(np.testing.assert_array_equal, nnx.state(restored), nnx.state(model))
checkpointer.close()
folder.cleanup()

# %% [markdown] slideshow={"slide_type": "notes"}
# `nnx.eval_shape` runs the constructor abstractly: shapes and dtypes, no memory. Orbax
# restores into that template, so a model too big for two copies never has two. The
# logits agree bit for bit.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A module, as JAX sees it
#
# A pure function of the state pytree: `nnx.merge` runs while JAX traces, so the jaxpr
# holds only the arithmetic. Here one layer, `model.hidden1`:

# %%
layer_def, layer_state = nnx.split(model.hidden1)


def layer(w, x):
    return nnx.merge(layer_def, w)(x)


draw_jaxpr(layer)(layer_state, x_test[:8])

# %% [markdown] slideshow={"slide_type": "skip"}
# The whole MLP the same way: the picture the next exercise asks about.

# %% slideshow={"slide_type": "skip"}
def forward(w, x):
    return nnx.merge(graphdef, w)(x)


draw_jaxpr(forward, max_depth=0)(nnx.state(model), x_test[:8])

# %% tags=["check"] jupyter={"source_hidden": true}
forward_jaxpr = jax.make_jaxpr(forward)(nnx.state(model), x_test[:8])
assert [e.primitive.name for e in forward_jaxpr.eqns].count("dot_general") == 3
assert len(forward_jaxpr.jaxpr.invars) == 7  # six weights and the batch
layer_jaxpr = jax.make_jaxpr(layer)(layer_state, x_test[:8])
layer_ops = [e.primitive.name for e in layer_jaxpr.eqns]
assert layer_ops.count("dot_general") == 1 and layer_ops.count("add") == 1  # x @ w + b
assert set(layer_ops) <= {"dot_general", "reshape", "broadcast_in_dim", "add"}  # no copy
kernel, bias = model.hidden1.kernel[...], model.hidden1.bias[...]
np.testing.assert_allclose(layer(layer_state, x_test[:8]), x_test[:8] @ kernel + bias,
                           rtol=1e-5, atol=1e-5)
if flax.__version__.startswith("0.12."):  # nnx.Linear's own choice, in Flax 0.12
    assert layer_ops == ["dot_general", "reshape", "add"]

# %% [markdown] slideshow={"slide_type": "notes"}
# The bias is reshaped to `[1, n]` and broadcast by `add` (Flax 0.12); nothing is
# copied. In the whole MLP's picture (`max_depth=0` keeps nested jaxprs closed),
# `jax.nn.relu` is one `custom_jvp_call` box: it is a `custom_jvp` function, whose
# derivative at 0 is defined as 0.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: read the picture
#
# From the jaxpr of the whole MLP's `forward` (in the notebook): how many matrix products
# (`dot_general`) does one forward pass run, and how many weight arrays does NNX pass in?
# Write `ex_read_the_jaxpr()` returning `{"dot_general": ..., "weights": ...}`.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_read_the_jaxpr():
    ...  # your code here

# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_read_the_jaxpr():
    return {"dot_general": 3, "weights": 6}

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The inputs are the boxes at the top; one of them is
# the batch <code>x</code>, not a weight.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_read_the_jaxpr)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_read_the_jaxpr, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/08_ai_stack.ipynb`, or the Colab badge. Hint: count the `dot_general` boxes;
# the inputs at the top are the weights plus the batch `x`.

# %% slideshow={"slide_type": "skip"}
n_linear = sum(isinstance(node, nnx.Linear) for _, node in nnx.iter_graph(model))
ran = {
    "Grain": f"Grain: batches of {BATCH}",
    "Flax": f"Flax NNX: nnx.Linear ×{n_linear}",
    "Optax": "Optax: SGD, Adam, AdamW",
    "Orbax": "Orbax: saved, restored",
    "JAX": "jit · grad · nnx.jit",
    "XLA": "compiled each step once",
    "hardware": f"ran on: {jax.default_backend()}",
}

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The stack, as this lesson ran it

# %%
draw_ai_stack(ran=ran)

# %% tags=["check"] jupyter={"source_hidden": true}
assert n_linear == 3
ran_stack = draw_ai_stack(ran=ran)
assert all(f"▶ {text}" in ran_stack.source for text in ran.values())

# %% [markdown] slideshow={"slide_type": "notes"}
# The opening picture, each layer marked with what this lesson ran on it, and the
# backend it ran on. Equinox or a hand-written loop would fill the same places.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - fed the MLP from a **Grain** pipeline: shuffled per epoch, full batches only;
# - replaced the hand-written update with **Optax** (same weights), then Adam and AdamW;
# - trained the same MLP as a **Flax NNX** module, to the pure-JAX run's accuracy;
#   drew dropout masks from a named `nnx.Rngs` stream;
# - saved and restored it with **Orbax**, bit for bit;
# - kept losses on the device, waiting once per epoch.
