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
# # 08 · The JAX AI stack: what the ecosystem adds
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/08_ai_stack.ipynb)
#
# JAX gives transformations and a compiler; libraries built on it give the rest. You
# will see:
#
# - the **JAX AI stack**: the hardware, XLA, JAX, the libraries on JAX, what people build;
# - the MNIST MLP's hand-written update (lesson 05) rewritten with **Optax**, the
#   optimiser library, giving the same numbers;
# - what Optax adds: **Adam**, gradient clipping, a learning-rate schedule, each a
#   one-line change that leaves the training loop alone.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The stack
#
# JAX in the middle, XLA below it; above, libraries that all pass pytrees of arrays to
# pure functions, so they combine with `jit`, `grad`, `vmap` and with each other.

# %% tags=["hide-input"]
from jaxtour.viz import draw_ai_stack

stack = draw_ai_stack()
assert all(name in stack.source for name in ("JAX", "XLA", "Optax", "Flax"))
assert stack.svg().lstrip().startswith("<?xml")
stack

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The MLP from lesson 05, trained by hand
#
# `jaxtour.mlp.update` is the step we wrote ourselves: a gradient with `jax.grad`, then
# SGD with momentum as two `jax.tree.map`s (`velocity = momentum * velocity + grad`,
# `params = params - lr * velocity`). It trains on a slice of MNIST, in batches of 128.

# %%
import jax
import jax.numpy as jnp
import numpy as np
import optax

from jaxtour import paths
from jaxtour.mlp import LR, MOMENTUM, accuracy, init_params, load_mnist, loss, preprocess, update

mnist = load_mnist(progress=False)
n_train = 2048 if paths.quick() else 20_000
x_train = preprocess(mnist.train_images[:n_train])
y_train = jnp.asarray(mnist.train_labels[:n_train], jnp.int32)
x_test, y_test = preprocess(mnist.test_images[:2000]), jnp.asarray(mnist.test_labels[:2000])
batches = [(x_train[i:i + 128], y_train[i:i + 128]) for i in range(0, n_train, 128)]
print(f"{len(batches)} batches of {batches[0][0].shape}")
assert batches[0][0].shape == (128, 784)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### One epoch, by hand

# %%
by_hand = jax.jit(update)
params = init_params(jax.random.key(0))
velocity = jax.tree.map(jnp.zeros_like, params)
for x, y in batches:
    params, velocity, batch_loss = by_hand(params, x, y, velocity)
hand_params = params
print(f"{len(batches)} steps by hand: test accuracy {float(accuracy(params, x_test, y_test)):.3f}")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The same step with Optax
#
# An Optax optimiser is a pair of pure functions: `init(params)` makes its state (a
# pytree), `update(grads, state)` turns gradients into updates. `optax.sgd` with momentum
# is exactly our rule, so from the same start, on the same batches, it lands on the same
# weights.

# %%
def make_step(optimiser):
    @jax.jit
    def step(params, opt_state, x, y):
        batch_loss, grads = jax.value_and_grad(loss)(params, x, y)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, batch_loss
    return step

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Same batches, same weights

# %%
sgd = optax.sgd(learning_rate=LR, momentum=MOMENTUM)
step, params = make_step(sgd), init_params(jax.random.key(0))
opt_state = sgd.init(params)
for x, y in batches:
    params, opt_state, batch_loss = step(params, opt_state, x, y)

differences = jax.tree.map(lambda a, b: float(jnp.max(jnp.abs(a - b))), params, hand_params)
print(f"largest difference from the weights trained by hand: {max(jax.tree.leaves(differences))}")
jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5),
             params, hand_params)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What Optax adds: change the optimiser, keep the loop
#
# `train` below never changes: the optimiser is its one argument. Whatever the optimiser,
# its state is a pytree, made by `init` and threaded through every step.

# %%
def train(optimiser, epochs=2):
    step, params = make_step(optimiser), init_params(jax.random.key(0))
    opt_state, losses = optimiser.init(params), []
    for _ in range(epochs):
        for x, y in batches:
            params, opt_state, batch_loss = step(params, opt_state, x, y)
            losses.append(float(batch_loss))
    return params, opt_state, losses

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Three optimisers, one line each
#
# Plain SGD with momentum; Adam; and gradient clipping chained with AdamW under a
# warm-up-then-cosine learning-rate schedule.

# %%
total_steps = 2 * len(batches)
schedule = optax.warmup_cosine_decay_schedule(0.0, 1e-3, total_steps // 10, total_steps)
optimisers = {
    "SGD + momentum": sgd,
    "Adam": optax.adam(1e-3),
    "clip + AdamW + schedule": optax.chain(optax.clip_by_global_norm(1.0),
                                           optax.adamw(schedule, weight_decay=1e-4)),
}
results = {name: train(optimiser) for name, optimiser in optimisers.items()}

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### All three train
#
# Each run starts from the same weights. The loss of its last epoch is below that of its
# first, and the test accuracy is far above chance (10 %).

# %%
half = len(batches)
for name, (trained, _, losses) in results.items():
    test_accuracy = float(accuracy(trained, x_test, y_test))
    print(f"{name:<24} loss {np.mean(losses[:half]):.3f} → {np.mean(losses[half:]):.3f}, "
          f"test accuracy {test_accuracy:.3f}")
    assert np.mean(losses[half:]) < np.mean(losses[:half]) and test_accuracy > 0.6

# Adam's state: two running averages shaped like the parameters, and a step count.
adam_state = results["Adam"][1]
assert len(jax.tree.leaves(adam_state)) == 2 * len(jax.tree.leaves(params)) + 1

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - drew the JAX AI stack: hardware, XLA, JAX, the libraries built on it, and what is
#   built with them;
# - trained the MLP with our hand-written SGD-with-momentum step, then with `optax.sgd`,
#   and checked that both reach the same weights;
# - swapped in Adam and a clipped, scheduled AdamW without touching the training loop,
#   checked that each trains, and saw that an optimiser's state is a pytree too.
