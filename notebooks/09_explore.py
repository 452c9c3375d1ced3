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
# # 09 · The explorer: your function through every JAX lens
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/09_explore.ipynb)
#
# The earlier lessons each drew one thing JAX does. `jaxtour.explore` puts them all in one
# panel, so you can look at a function without writing drawing code. You will see:
#
# - the **gallery**: ready examples (a cubic, `tanh`, `relu`, the MLP loss, a `scan`, a
#   `cond`, a factorial loop) to start a workshop with no code;
# - that every control is **one library call**, printed under the picture, so anything
#   you find in the panel you can reproduce in a notebook;
# - what the panel says when a combination **cannot work**, such as `grad` of a function
#   that returns a vector;
# - **your own function** in the panel.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The gallery
#
# `explore()` with no arguments opens on the gallery's first example, the cubic
# $x^3 + 2x^2 - 3x + 8$ at $x = 1$, drawn as its jaxpr. Pick another example, tick a
# transformation (`jit`, `grad`, `jvp`, `vmap` over an axis: they compose as
# `jit(vmap(jvp(grad(f))))`), choose a view, or turn the picture with ↓ and →.

# %%
import jax
import jax.numpy as jnp

from jaxtour import explore
from jaxtour.viz import draw_jaxpr

gallery = explore()
gallery

# %% [markdown]
# The picture is exactly what `draw_jaxpr` draws for the same function: the panel calls
# the library and shows the call underneath.

# %%
def cubic(x):
    return x**3 + 2 * x**2 - 3 * x + 8


print(gallery.shown.code)
assert gallery.shown.result.title == draw_jaxpr(cubic)(1.0).title == "jaxpr of cubic: 7 equations"
assert gallery.shown.result.counts == draw_jaxpr(cubic)(1.0).counts  # (nodes, edges)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Every control is a library call
#
# The controls are attributes you can also set from code, which is how this lesson
# checks them. Tick `grad` and the panel draws the jaxpr of `jax.grad(cubic)`: the
# forward computation and, after it, the backward pass JAX derived from it.

# %%
steps = explore(cubic, 1.0)
steps.grad.value = True
print(steps.shown.code)
assert steps.shown.result.source == draw_jaxpr(jax.grad(cubic))(1.0).source
steps

# %% [markdown]
# Tick `vmap` too and the example is stacked three times along the chosen axis, so the
# panel draws `vmap(grad(cubic))`: per-example derivatives, every equation now on a
# `f32[3]`. Going back to a combination you have seen costs nothing: renders are cached.

# %%
steps.vmap.value = True
batched = jax.vmap(jax.grad(cubic))(jnp.full(3, 1.0))
assert steps.shown.result.source == draw_jaxpr(jax.vmap(jax.grad(cubic)))(jnp.full(3, 1.0)).source
assert jnp.allclose(batched, 4.0)  # f'(1) = 3 + 4 - 3

renders = steps.renders
steps.vmap.value = False
steps.vmap.value = True
assert steps.renders == renders  # both combinations came from the cache

# %% [markdown] slideshow={"slide_type": "slide"}
# ## When a combination cannot work
#
# `grad` needs a function that returns one number. Explore your own function on a
# vector, tick `grad`, and the panel says why it cannot draw that, and what to try,
# instead of a traceback.

# %%
def softplus(x):
    return jnp.logaddexp(x, 0.0)


mine = explore(softplus, jnp.linspace(-2.0, 2.0, 5))
mine.grad.value = True
print(mine.shown.message)
assert "scalar" in mine.shown.message and "tick jvp" in mine.shown.hint
mine

# %% [markdown]
# Forward mode has no such limit: untick `grad`, tick `jvp`, and the panel draws the
# jaxpr of `jax.jvp(softplus, (x,), (ones,))`, the primal and the tangent side by side.

# %%
mine.grad.value = False
mine.jvp.value = True
assert mine.shown.result.title.startswith("jaxpr of softplus")
mine.view.value = "autodiff graph"
assert mine.shown.result.title.startswith("jvp of softplus")
mine

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Inside XLA: one training step of the MLP
#
# The gallery's *MLP step* is `jaxtour.mlp.update`: the loss, its gradient and the SGD
# update of every weight. Tick `jit` and pick *compiled HLO*: each box is a fusion, a
# kernel XLA made from several jaxpr equations. *before/after XLA* counts them.

# %%
from jaxtour import mlp
from jaxtour.viz import compare_stages, draw_hlo

params = mlp.init_params(jax.random.key(0))
x, y = mlp.example_batch(8)

step = explore()
step.example.value = "MLP step"
step.jit.value = True
step.view.value = "compiled HLO"
compiled = draw_hlo(jax.jit(mlp.update), stage="compiled", max_depth=2)(params, x, y)
assert step.shown.result.title == compiled.title
print(compiled.title)
step

# %% [markdown]
# XLA runs far fewer ops than JAX handed it: most of them went into fusions.

# %%
step.view.value = "before/after XLA"
comparison = step.shown.result
assert comparison.rows() == compare_stages(jax.jit(mlp.update))(params, x, y).rows()
assert comparison.compiled_ops < comparison.stablehlo_ops
print(comparison.headline())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Without a kernel
#
# Exported to HTML or shown as slides, a notebook has no kernel to redraw the panel; the
# output then shows the picture the panel had, with a note saying it is static.

# %%
static = gallery._repr_mimebundle_()["text/html"]
assert "<svg" in static and "static picture" in static

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - opened the explorer on its gallery and on our own functions, with `explore(f, *args)`;
# - saw that each control is one library call (`draw_jaxpr`, `draw_grad`, ...), printed
#   under the picture and equal to what the call draws;
# - composed `grad`, `jvp`, `vmap` and `jit`, and read the panel's message when a
#   combination (`grad` of a vector-valued function) cannot work;
# - looked inside XLA at one MLP training step: its fusions, before and after;
# - checked that exported HTML and slides still show a picture.
