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
# # 00 · Set-up: is JAX here, and what will it run on?
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/00_setup.ipynb)
#
# Run this lesson first. You will see:
#
# - the one set-up cell every lesson starts with: it installs jaxtour where it is missing
#   (Colab, a fresh Binder) and does nothing where it is already there;
# - which devices JAX found: a CPU on a laptop, a GPU, or the eight cores of a Colab TPU;
# - your first jaxtour `Diagram`: a picture JAX's own tools only print as text.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# JAX chooses its backend by itself, TPU first, then GPU, then CPU, so the same notebook
# uses whatever the runtime offers. On Colab, *Runtime → Change runtime type → TPU* before
# running gives you eight TPU cores. `jax.devices()` lists them:

# %%
import jax
import jax.numpy as jnp

devices = jax.devices()
print(devices)
assert len(devices) >= 1
assert jax.default_backend() in ("cpu", "gpu", "tpu")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A first computation
#
# `jax.numpy` looks like NumPy, but arrays live on the device and default to 32-bit floats.

# %%
x = jnp.arange(5.0)
y = jnp.sin(x) ** 2 + jnp.cos(x) ** 2
print(x.dtype, y)
assert x.dtype == jnp.float32
assert jnp.allclose(y, 1.0)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A first Diagram
#
# Every jaxtour visualiser returns a `Diagram`. In Jupyter it shows itself as a picture;
# `.save("name.svg")` writes it for your slides and `.source` is its Graphviz text. This one
# is the road every JAX program travels, from Python to the device.

# %%
from jaxtour.viz import draw_pipeline

pipeline = draw_pipeline()
assert pipeline.svg().lstrip().startswith("<?xml")
pipeline

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - installed jaxtour where it was missing and printed the devices JAX found;
# - checked that `jax.numpy` computes on them in float32;
# - drew a first `Diagram`, which every later lesson uses to show what JAX does.
