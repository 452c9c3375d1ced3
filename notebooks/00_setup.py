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
# `JAX_PLATFORMS=cpu`, set before JAX starts, forces the CPU. On Colab, *Runtime → Change
# runtime type → TPU* gives a TPU v5e-1: one chip, one JAX device. Lesson 07 wants eight
# devices: a Kaggle TPU v5e-8 or a Cloud TPU, or eight simulated on the CPU.

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

# %% [markdown] slideshow={"slide_type": "notes"}
# `jnp` mirrors NumPy's names. The result is a `jax.Array` on the default device, in
# float32 unless you ask otherwise; sin² + cos² = 1 to float32's precision. Lesson 04
# shows where `jnp` differs from NumPy.

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
#
# *Next: lesson 01, why JAX.*
