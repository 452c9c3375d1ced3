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
# # 09 · The explorer: your function through every JAX lens
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/09_explore.ipynb)
#
# - the **gallery**: ready examples to start a workshop with no code;
# - every control is **one library call**, printed under the picture;
# - what the panel says when a combination **cannot work**;
# - **your own function** in the panel, down to XLA's fusions.
#
# *About 15 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import jax
import jax.numpy as jnp

from jaxtour import explore, mlp
from jaxtour.tracing import step_through
from jaxtour.viz import compare_stages, draw_hlo, draw_jaxpr

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The gallery
#
# `explore()` opens on the gallery's first example, the cubic x³ + 2x² − 3x + 8 at
# x = 1, drawn as its jaxpr; → turns the picture on its side.

# %%
gallery = explore()
gallery.rankdir.value = "LR"
gallery

# %% [markdown] slideshow={"slide_type": "notes"}
# Ready examples: a cubic, `tanh`, `relu`, the MLP loss, a `scan`, a `cond`, a loop.
# Pick one, tick transformations (they compose as `jit(vmap(jvp(grad(f))))`), choose a
# view, turn the picture with ↓ and →. Every control can be set from code, which is how
# this lesson checks the panel.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The panel is the library
#
# Under the picture the panel prints the call that drew it; the same call in a notebook
# draws the same picture.

# %%
def cubic(x):
    return x**3 + 2 * x**2 - 3 * x + 8


print(gallery.shown.code)

# %% tags=["check"] jupyter={"source_hidden": true}
assert gallery.shown.result.title == draw_jaxpr(cubic)(1.0).title == "jaxpr of cubic: 7 equations"
assert gallery.shown.result.counts == draw_jaxpr(cubic)(1.0).counts  # (nodes, edges)
assert "rankdir=LR" in gallery.shown.result.source  # turned on its side

# %% [markdown] slideshow={"slide_type": "notes"}
# `shown.code` is the call behind the picture: copy it into a cell to get the same
# drawing, and change its arguments from there. The panel teaches the library's calls,
# not a separate tool.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Tick `grad`
#
# The panel draws the jaxpr of `jax.grad(cubic)`: the forward computation, then the
# backward pass JAX derived from it.

# %%
steps = explore(cubic, 1.0)
steps.rankdir.value = "LR"
steps.grad.value = True
print(steps.shown.code)

# %% tags=["check"] jupyter={"source_hidden": true}
assert steps.shown.result.source == draw_jaxpr(jax.grad(cubic), rankdir="LR")(1.0).source

# %% [markdown] slideshow={"slide_type": "notes"}
# `explore(cubic, 1.0)` puts your own function in the panel, with its example argument.
# Ticking `grad` wraps it: the code line shows `jax.grad(cubic)`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The jaxpr of `grad(cubic)`

# %% tags=["hide-input"]
steps

# %% [markdown] slideshow={"slide_type": "notes"}
# In order: the forward equations (`integer_pow`, `mul`, `add`, `sub`), which also keep
# the factors 3x² and 2x for later, then the backward ones (`mul`, `add_any`) summing
# 3x² + 4x − 3. At x = 1: 4.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Tick `vmap` too
#
# The example is stacked three times: `vmap(grad(cubic))` gives per-example derivatives,
# every equation now on an `f32[3]`.

# %%
steps.vmap.value = True
batched = jax.vmap(jax.grad(cubic))(jnp.full(3, 1.0))
print(batched)  # f'(1) = 3 + 4 - 3 = 4, three times

# %% tags=["check"] jupyter={"source_hidden": true}
assert steps.shown.result.source == draw_jaxpr(
    jax.vmap(jax.grad(cubic)), rankdir="LR")(jnp.full(3, 1.0)).source
assert jnp.allclose(batched, 4.0)  # f'(1) = 3 + 4 - 3
renders = steps.renders
steps.vmap.value = False
steps.vmap.value = True
assert steps.renders == renders  # both combinations came from the cache

# %% [markdown] slideshow={"slide_type": "notes"}
# `vmap` goes outside `grad`: the derivative of one example, batched. The equations are
# those of `grad(cubic)` on `f32[3]`, plus one `broadcast_in_dim` where a constant of
# the backward pass meets batched values.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The jaxpr of `vmap(grad(cubic))`

# %% tags=["hide-input"]
steps

# %% [markdown] slideshow={"slide_type": "notes"}
# Going back to a combination you have seen costs nothing: the panel caches its
# renders, so flipping a control back and forth redraws nothing.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## When a combination cannot work
#
# `grad` needs a function that returns one number. On a vector-valued function the
# panel says why, and what to try, instead of a traceback.

# %%
def softplus(x):
    return jnp.logaddexp(x, 0.0)


mine = explore(softplus, jnp.linspace(-1.0, 1.0, 3))
mine.grad.value = True
print(mine.shown.message)
print(mine.shown.hint)

# %% tags=["check"] jupyter={"source_hidden": true}
assert "scalar" in mine.shown.message and "tick jvp" in mine.shown.hint

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.grad` is reverse mode for a scalar output. For a vector-valued function use
# `jax.jacrev`/`jacfwd`, `vmap` of `grad` over the elements, or `jvp` for one direction:
# the hint names the nearest one in the panel.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Forward mode has no such limit
#
# Untick `grad`, tick `jvp`, view the *autodiff graph*: the primal and the tangent of
# `jax.jvp(softplus, (x,), (ones,))` side by side.

# %%
mine.grad.value = False
mine.jvp.value = True
mine.view.value = "autodiff graph"
print(mine.shown.code)

# %% tags=["check"] jupyter={"source_hidden": true}
assert mine.shown.result.title.startswith("jvp of softplus")
mine.view.value = "jaxpr graph"
assert mine.shown.result.title.startswith("jaxpr of softplus")
mine.view.value = "autodiff graph"

# %% [markdown] slideshow={"slide_type": "notes"}
# `jvp` pushes one tangent forward with the primal: no scalar output needed. The
# autodiff graph draws both lanes; on a slide it is too crowded, so the notebook shows
# it in the next cell.

# %% [markdown] slideshow={"slide_type": "skip"}
# ### `jvp(softplus)`: primal and tangent
#
# Two lanes, too many boxes for a slide: look at it here, in the notebook.

# %% slideshow={"slide_type": "skip"}
mine

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Step through, value by value
#
# The *step through* view runs the function one equation at a time; the `step` slider
# walks the equations in order.

# %%
mine.jvp.value = False
mine.view.value = "step through"
mine.step.value = 2  # the run after step 2: later steps dashed
print(mine.shown.code)

# %% tags=["check"] jupyter={"source_hidden": true}
xs = jnp.linspace(-1.0, 1.0, 3)
assert mine.shown.result.source == step_through(softplus)(xs).diagram(upto=2).source
assert mine.step.max == len(step_through(softplus)(xs)) - 1 and not mine.step.disabled

# %% [markdown] slideshow={"slide_type": "skip"}
# ### `softplus` after step 2
#
# `jnp.logaddexp` is a `custom_jvp` of ten equations, too many boxes for a slide: look at
# it here, in the notebook, and move the slider.

# %% slideshow={"slide_type": "skip"}
mine

# %% [markdown] slideshow={"slide_type": "notes"}
# The view is `step_through(f)(*args).diagram(upto=k)` (lesson 04): each equation
# evaluated by JAX's own primitive, its value previewed, the step chosen framed red. The
# run is made once; moving the slider only redraws.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Inside XLA: one training step of the MLP
#
# The gallery's *MLP step* is `jaxtour.mlp.update`. Tick `jit`, pick *compiled HLO*:
# each box is a fusion, one kernel XLA made from several jaxpr equations.

# %%
step = explore()
step.example.value = "MLP step"
step.jit.value = True
step.view.value = "compiled HLO"
step.depth.value = 0
print(step.shown.code)

# %% tags=["check"] jupyter={"source_hidden": true}
params = mlp.init_params(jax.random.key(0))
x, y = mlp.example_batch(8)
compiled = draw_hlo(jax.jit(mlp.update), stage="compiled", max_depth=0)(params, x, y)
assert step.shown.result.title == compiled.title

# %% [markdown] slideshow={"slide_type": "skip"}
# ### XLA's fusions, each one box
#
# Too many boxes for a slide: look at it here, in the notebook.

# %% slideshow={"slide_type": "skip"}
step

# %% [markdown] slideshow={"slide_type": "notes"}
# The compiled module with every fusion closed (depth 0: one box per kernel), as
# `draw_hlo(jax.jit(mlp.update), stage="compiled", max_depth=0)(params, x, y)`; depth
# 1 or 2 opens the fusions. Which ops XLA fuses depends on the backend, so the picture
# differs from machine to machine.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Before and after XLA
#
# *before/after XLA* counts the ops JAX handed to XLA and the ops XLA runs. It compiles
# the function itself, so we untick `jit`.

# %%
step.jit.value = False
step.view.value = "before/after XLA"
print(step.shown.code)
print(step.shown.result.headline())

# %% tags=["check"] jupyter={"source_hidden": true}
comparison = step.shown.result
assert comparison.rows() == compare_stages(mlp.update)(params, x, y).rows()  # lesson 03's
assert comparison.compiled_ops < comparison.stablehlo_ops
nested = compare_stages(jax.jit(mlp.update))(params, x, y)  # jit inside jit: one `call`
assert nested.stablehlo_ops == comparison.stablehlo_ops + 1

# %% [markdown] slideshow={"slide_type": "notes"}
# The same call as lesson 03's `compare_stages(mlp.update)`, so the same counts, printed
# from this run. With `jit` ticked the panel would compile `jit(update)` inside
# `compare_stages`' own `jit`: the StableHLO gains one `call` op, and XLA inlines it.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Without a kernel
#
# Exported to HTML or shown as slides, a notebook has no kernel to redraw the panel: the
# output shows the picture the panel had, with a note that it is static.

# %%
static = gallery._repr_mimebundle_()["text/html"]
print("static picture" in static, "<svg" in static)

# %% tags=["check"] jupyter={"source_hidden": true}
assert "<svg" in static and "static picture" in static

# %% [markdown] slideshow={"slide_type": "notes"}
# A widget needs a running kernel. Without one (an HTML export, the slides)
# the panel's output falls back to an SVG of what it last drew, marked static, so a
# shared notebook still shows the picture.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - opened the explorer on its gallery and on our own functions, with `explore(f, *args)`;
# - saw that each control is one library call, printed under the picture;
# - composed `grad`, `vmap`, `jvp` and `jit`, and read why `grad` of a vector-valued
#   function cannot work;
# - looked inside XLA at one MLP training step, before and after its fusions.
