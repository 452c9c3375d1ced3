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
# # 00 · Set-up: is JAX here, and what will it run on?
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/00_setup.ipynb)
#
# - the one set-up cell every lesson starts with
# - which devices JAX found: a CPU, a GPU or a TPU
# - your first jaxtour `Diagram`
#
# *About 5 minutes.*

# %% [markdown] slideshow={"slide_type": "notes"}
# Run this lesson first. The set-up cell installs jaxtour where it is missing (Colab, a
# fresh Binder) and does nothing where it is already there; then it prints what JAX runs
# on. Every later lesson opens with the same cell.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Which devices did JAX find?
#
# JAX picks its backend by itself: a GPU if there is one, else a TPU, else the CPU.

# %%
import jax
import jax.numpy as jnp

devices = jax.devices()
print(jax.default_backend(), devices)

# %% tags=["check"] jupyter={"source_hidden": true}
assert len(devices) >= 1
assert jax.default_backend() in ("cpu", "gpu", "tpu")
assert devices[0].platform == jax.default_backend()

# %% [markdown] slideshow={"slide_type": "notes"}
# The order, GPU then TPU then CPU, is the priority each backend registers with JAX;
# `JAX_PLATFORMS=cpu` (set before JAX starts) forces one. On Colab, *Runtime → Change
# runtime type → TPU* gives a TPU v5e-1 since September 2025: one chip, one JAX device.
# Eight TPU devices, for lesson 07's parallelism on real hardware, means a Kaggle TPU
# v5e-8 or a Cloud TPU; without them lesson 07 simulates eight devices on the CPU.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A first computation
#
# `jax.numpy` looks like NumPy, but arrays live on the device and default to 32-bit floats.

# %%
x = jnp.arange(5.0)
y = jnp.sin(x) ** 2 + jnp.cos(x) ** 2
print(x.dtype, y)

# %% tags=["check"] jupyter={"source_hidden": true}
assert x.dtype == jnp.float32
assert jnp.allclose(y, 1.0)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A first Diagram
#
# Every jaxtour visualiser returns a `Diagram`: in Jupyter a picture. This one is the
# road every JAX program travels, from Python to the device.

# %%
from jaxtour.viz import draw_pipeline

pipeline = draw_pipeline()
pipeline

# %% tags=["check"] jupyter={"source_hidden": true}
assert pipeline.svg().lstrip().startswith("<?xml")

# %% [markdown] slideshow={"slide_type": "notes"}
# `.save("name.svg")` writes a `Diagram` for your own slides and `.source` is its Graphviz
# text. It renders with the system `dot` where there is one and with an embedded
# WebAssembly Graphviz otherwise, so no picture depends on a system package.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - installed jaxtour where it was missing and printed the devices JAX found;
# - checked that `jax.numpy` computes on them in float32;
# - drew a first `Diagram`, which every later lesson uses to show what JAX does.
