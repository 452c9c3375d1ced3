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
# # 07 · Parallelism: one program, many devices
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/07_parallelism.ipynb)
#
# - **SPMD**, a **mesh**, **sharded arrays**, drawn;
# - the MLP's step **Auto**, **Explicit**, **Manual**;
# - **constraints**, **`auto_axes`**, **donated** state;
# - why `shard_map` needs **`pcast`**;
# - a **2-D mesh** (data × model);
# - **FSDP**: `all_gather`, `psum_scatter`, `ppermute`, a cost model;
# - training that follows the single-device run;
# - **two JAX processes**, one mesh, on a laptop.
#
# *About 70 minutes.*

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab); ask for 8 simulated CPU devices.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jax

# Split the CPU into 8 simulated devices. This must happen before JAX computes anything
# (the same as XLA_FLAGS=--xla_force_host_platform_device_count=8 before `import jax`).
# It changes only the CPU backend: a TPU's chips or your GPUs are left as they are.
try:
    jax.config.update("jax_num_cpu_devices", 8)
except RuntimeError:
    print("JAX had already started: restart the kernel and run this cell first.")
# Full float32 matmuls on every backend (a TPU's default is one bfloat16 pass, an Ampere
# GPU's TF32), so that the sharded and single-device results agree to float32 rounding.
jax.config.update("jax_default_matmul_precision", "highest")

import collections
import contextlib
import functools
import io
import math
import re
import warnings

import jax.numpy as jnp
import matplotlib.pyplot as plt
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import jaxtour
from jaxtour import launch, mlp, paths
from jaxtour.exercises import check
from jaxtour.viz import draw_hlo, draw_sharding

# %matplotlib inline
print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# The collectives in a compiled program, by kind. A CPU runs each as one op; GPUs and
# TPUs run it asynchronously, as a `-start` (the data leave) and a `-done` (the result
# arrives): we count the starts, so each collective counts once on every backend.
COLLECTIVE = re.compile(
    r" (all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)(?:-start)?\(")


def collectives(jitted, *args):
    """{'all-reduce': 1, ...}: the collectives XLA put in `jitted`'s program for `args`."""
    return collectives_in(jitted.lower(*args).compile())


def collectives_in(compiled):
    """The same count for a program already compiled (`jax.jit(f).lower(x).compile()`)."""
    return collections.Counter(COLLECTIVE.findall(compiled.as_text()))


def only_all_reduces(count):
    """At least one all-reduce and no other collective. How many all-reduces XLA makes
    of the gradients is a pass with size thresholds: it may differ by backend."""
    return count["all-reduce"] >= 1 and set(count) == {"all-reduce"}


# %% [markdown] slideshow={"slide_type": "slide"}
# ## Which devices this lesson runs on
#
# Several accelerators: we use them. One device (a laptop, one GPU, or **Colab's TPU
# runtime: a v5e-1, one chip, one JAX device**): we use the 8 simulated CPU devices from
# the set-up. Eight real TPU chips: a Kaggle TPU v5e-8 or a Cloud TPU VM.

# %%
accelerators = jax.devices()  # the default backend's devices: GPU, TPU or CPU
if len(accelerators) > 1 and accelerators[0].platform != "cpu":
    devices = accelerators
    print(f"{len(devices)} real devices: {devices[0].device_kind}")
else:
    devices = jax.devices("cpu")
    jax.config.update("jax_default_device", devices[0])  # new arrays on the CPU too
    found = ("no accelerator" if accelerators[0].platform == "cpu"
             else f"only {len(accelerators)} {accelerators[0].device_kind}")
    print(f"{len(devices)} simulated CPU devices ({found})")
n = len(devices)

# %% tags=["check"] jupyter={"source_hidden": true}
assert n > 1, "Only one device: restart the kernel and run the set-up cell first."
if devices[0].platform == "cpu":  # simulated only when there is no second accelerator
    assert accelerators[0].platform == "cpu" or len(accelerators) == 1
else:
    assert devices == accelerators

# %% [markdown] slideshow={"slide_type": "notes"}
# With one accelerator the lesson uses the CPU, split into 8 devices by the set-up cell
# (`jax_num_cpu_devices`). Simulated devices share the CPU's cores: programs, shardings
# and collectives are real, the speed-up is not. Eight real devices: Kaggle's TPU v5e-8,
# a Cloud TPU VM, or a multi-GPU machine; Colab's TPU is one chip.

# %% [markdown] slideshow={"slide_type": "skip"}
# `jax.devices()` lists the devices of the default backend (a GPU first, then a TPU, then
# the CPU). `jax_num_cpu_devices` is the same as
# `XLA_FLAGS=--xla_force_host_platform_device_count=8`; the lesson also makes a CPU device
# JAX's default, so arrays made without a device land there too. Colab's TPU runtime
# is a TPU v5e-1: one chip, which JAX sees as one device.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## SPMD: a single program, multiple data
#
# **One** program; every device runs it on **its own slice** of the data. Where it needs
# other devices' data, it holds a **collective**, e.g. an **all-reduce** (every device
# gets the sum of all devices' values).
#
# | mode | you write | intermediates' shardings | collectives |
# |---|---|---|---|
# | Auto | global code, `jit` shardings | compiler picks | compiler |
# | Explicit | global code | in the types | compiler |
# | Manual | one device's code (`shard_map`) | yours | you |

# %% [markdown] slideshow={"slide_type": "notes"}
# The three modes of JAX's sharding guide. **Auto**: the compiler's propagation
# (Shardy) picks the inner shardings. **Explicit**: JAX computes them at trace time, in
# each type. In both, XLA's SPMD partitioner inserts the collectives. **Manual**
# (`jax.shard_map`): your code sees one device's block and you write every collective.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A mesh: the devices in a grid, with named axes
#
# `jax.make_mesh` lays the devices out in a grid and names each axis. Names, not numbers,
# are how we later say "split the batch along `x`". Since JAX 0.9 its axes are
# **Explicit** by default.

# %%
rows = n // 2 if n % 2 == 0 else n
mesh = jax.make_mesh((rows, n // rows), ("x", "y"), devices=devices)
print(mesh)

# %% tags=["check"] jupyter={"source_hidden": true}
assert dict(mesh.shape) == {"x": rows, "y": n // rows}
assert mesh.size == n
assert mesh.axis_types == (AxisType.Explicit,) * 2  # make_mesh's default since JAX 0.9

# %% [markdown] slideshow={"slide_type": "notes"}
# With 8 devices: a 4 × 2 grid, axes `x` and `y`. `make_mesh` picks an order of the
# devices that suits the hardware's links (on TPU, the torus). `AxisType.Explicit` is
# `make_mesh`'s default since JAX 0.9; `axis_types=` chooses Auto instead.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A sharded array: the sharding is in its type
#
# `P("x", "y")` splits dimension 0 along mesh axis `x`, dimension 1 along `y`. With an
# Explicit mesh set (`jax.set_mesh`), `jax.typeof` shows it: `8@x` is a dimension of 8
# split over `x`.

# %%
x = jnp.arange(2 * rows * 4.0).reshape(2 * rows, 4)  # f32[8, 4] with 8 devices
with jax.set_mesh(mesh):  # the mesh a bare `P` refers to
    x_sharded = jax.device_put(x, P("x", "y"))
print(jax.typeof(x_sharded))

# %% tags=["check"] jupyter={"source_hidden": true}
assert str(jax.typeof(x_sharded)) == f"float32[{2 * rows}@x,4@y]"
block = (x.shape[0] // rows, x.shape[1] // (n // rows))
for shard in x_sharded.addressable_shards:
    assert shard.data.shape == block
    np.testing.assert_array_equal(shard.data, x[shard.index])  # the block it claims to be
assert {s.device for s in x_sharded.addressable_shards} == set(devices)  # one block each

# %% [markdown] slideshow={"slide_type": "notes"}
# `device_put(x, P("x", "y"))` under `set_mesh` is short for a `NamedSharding(mesh,
# P("x", "y"))`. Each device holds one 2 × 2 block (8 devices); `typeof` reads the
# split from the type, `x.sharding` from the array.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Which device holds which block

# %%
draw_sharding(x_sharded)

# %% [markdown] slideshow={"slide_type": "notes"}
# Still *one* array to your code. `draw_sharding` reads `x.sharding` and colours each
# block by its device. This lesson always writes `with jax.set_mesh(mesh):`; called on
# its own line, `jax.set_mesh(mesh)` sets the mesh for the rest of the program
# (JAX 0.10.2).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Leave an axis out and the block is copied along it
#
# `P("x")` splits the rows along `x` and says nothing about `y`: each block is
# **replicated** on the devices of its row of the mesh, drawn striped in their colours.

# %%
with jax.set_mesh(mesh):
    x_rows = jax.device_put(x, P("x"))
draw_sharding(x_rows)

# %% tags=["check"] jupyter={"source_hidden": true}
copies = {}
for shard in x_rows.addressable_shards:
    copies.setdefault(str(shard.index), []).append(shard.device.id)
assert len(copies) == rows and all(len(c) == n // rows for c in copies.values())
assert str(jax.typeof(x_rows)) == f"float32[{2 * rows}@x,4]"
assert jax.device_put(x, NamedSharding(mesh, P())).is_fully_replicated

# %% [markdown] slideshow={"slide_type": "notes"}
# `P()` says nothing at all: every device holds the whole array. That is how the MLP's
# parameters will live.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Computing on sharded arrays
#
# Single-device code runs unchanged. `sin` needs no other device's data: the result keeps
# the layout. A sum over everything does: each device adds its block, then
# **all-reduces** add the partial sums. We find them in the compiled program.

# %%
total = jax.jit(jnp.sum)
with jax.set_mesh(mesh):
    print(jax.typeof(jnp.sin(x_sharded) * 2))
    sum_sharded = collectives(total, x_sharded)
sum_one = collectives(total, x)
print(sum_sharded, "- one device:", sum_one)

# %% tags=["check"] jupyter={"source_hidden": true}
with jax.set_mesh(mesh):
    assert jax.typeof(jnp.sin(x_sharded) * 2) == jax.typeof(x_sharded)
    assert sum(sum_sharded.values()) >= 1
    np.testing.assert_allclose(total(x_sharded), x.sum())
assert not sum_one  # one device: no collective

# %% [markdown] slideshow={"slide_type": "notes"}
# An all-reduce line's `replica_groups` says which devices sum together: JAX 0.10.2
# prints XLA's names (`mesh['axis_0'=8,…]`), 0.12 your axis names, others device ids. GPUs and TPUs split it into `-start`/`-done`; `collectives` counts it once.
# How many all-reduces is XLA's choice.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The MLP step, data-parallel: Auto mode
#
# Every device holds the whole model and `1/n` of the batch. `mlp.update` is
# **unchanged**; only `jax.jit` learns where things live, on a 1-D mesh with one Auto
# axis, `batch` (`mlp.data_mesh`).

# %% slideshow={"slide_type": "skip"}
# The MNIST MLP of lesson 05 and a batch of 16 real images per device.
data = mlp.load_mnist(progress=False)
images, labels = mlp.example_batch(16 * n, data)  # f32[16n, 784], i32[16n]
params = mlp.init_params(jax.random.key(0))
velocity = jax.tree.map(jnp.zeros_like, params)

# %%
batch_mesh = mlp.data_mesh(devices)  # axis "batch", AxisType.Auto
rep, split = NamedSharding(batch_mesh, P()), NamedSharding(batch_mesh, P("batch"))
auto_update = jax.jit(mlp.update, in_shardings=(rep, split, split, rep),
                      out_shardings=(rep, rep, rep))
count_dp = collectives(auto_update, params, images, labels, velocity)
print(count_dp)

# %% tags=["check"] jupyter={"source_hidden": true}
assert batch_mesh.axis_types == (AxisType.Auto,)
# Auto mode: the layout is in `.sharding`, not in the type
assert str(jax.typeof(jax.device_put(images, split))) == f"float32[{16 * n},784]"
# XLA bundles the gradients (and the loss) into all-reduces (one on CPU), nothing else
assert only_all_reduces(count_dp), count_dp
assert not collectives(jax.jit(mlp.update), params, images, labels, velocity)

auto_params, _, auto_loss = auto_update(params, images, labels, velocity)
one_params, _, one_loss = jax.jit(mlp.update)(params, images, labels, velocity)
np.testing.assert_allclose(auto_loss, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(auto_params), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
assert auto_params["hidden1"]["w"].sharding.is_fully_replicated

# %% [markdown] slideshow={"slide_type": "notes"}
# Params replicated, batch split: 16 images per device. The mean loss's gradient needs
# every device's images, so XLA adds all-reduces; on CPU it bundles the six gradients and
# the loss into one (a pass with size thresholds: a TPU may make more). Nothing else
# crosses. In Auto mode `jax.typeof` shows no sharding: it lives in `x.sharding`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The batch, split over the devices

# %%
draw_sharding(jax.device_put(images, split))

# %% [markdown] slideshow={"slide_type": "notes"}
# Each device holds 16 whole images, its slice of dimension 0; the 784 pixels stay
# together. This is all data parallelism asks of the data.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The program one device runs (a one-layer model)

# %% tags=["hide-input"]
def sgd_step(w, x, y):  # one layer: its program fits a slide
    grad = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - 0.1 * grad


small_step = jax.jit(sgd_step, in_shardings=(rep, split, split), out_shardings=rep)
small_picture = draw_hlo(small_step, max_depth=0, edge_labels=False)(
    jnp.zeros((784, 10)), images, jnp.zeros((16 * n, 10)))
small_picture

# %% [markdown] slideshow={"slide_type": "notes"}
# Each device's inputs are its slices (`x` is `f32[16,784]`); the all-reduce, in red,
# adds the devices' gradients before the update. The MLP's program (next, notebook-only
# cell) has the same shape with more boxes. `max_depth=0` keeps each fusion one box.

# %% slideshow={"slide_type": "skip"}
hlo_picture = draw_hlo(auto_update, max_depth=0)(params, images, labels, velocity)
hlo_picture

# %% tags=["check"] jupyter={"source_hidden": true}
assert "1 collective" in small_picture.title and "f32[16,784]" in small_picture.source
assert re.search(r"\b[1-9]\d* collectives?\b", hlo_picture.title), hlo_picture.title

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The same step in Explicit mode
#
# Put the data on an Explicit mesh and `jax.jit(mlp.update)` needs no shardings: they
# come with the arguments' types, and every intermediate has one too.

# %%
explicit_mesh = jax.make_mesh((n,), ("batch",), devices=devices)  # Explicit by default
with jax.set_mesh(explicit_mesh):
    x_e, y_e = jax.device_put((images, labels), P("batch"))
    params_e, velocity_e = jax.device_put((params, velocity), P())
    print("images:", jax.typeof(x_e), " w:", jax.typeof(params_e["hidden1"]["w"]))
    explicit_update = jax.jit(mlp.update)
    new_e, _, loss_e = explicit_update(params_e, x_e, y_e, velocity_e)
print("new w:", jax.typeof(new_e["hidden1"]["w"]))

# %% tags=["check"] jupyter={"source_hidden": true}
assert explicit_mesh.axis_types == (AxisType.Explicit,)
assert str(jax.typeof(x_e)) == f"float32[{16 * n}@batch,784]"
assert str(jax.typeof(new_e["hidden1"]["w"])) == "float32[784,512]"  # replicated
with jax.set_mesh(explicit_mesh):
    assert only_all_reduces(collectives(explicit_update, params_e, x_e, y_e, velocity_e))
np.testing.assert_allclose(loss_e, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(new_e), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# No `in_shardings`: the shardings travel with the arguments' types, and `jit` of
# unchanged `mlp.update` gives the same step, to float32 rounding, with all-reduces
# only. The new weights come back replicated, like the old.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Types inside the step
#
# `jax.typeof` works on traced values too: the shardings are known at trace time.

# %%
def layer_types(params, x, y):
    hidden = jax.nn.relu(x @ params["hidden1"]["w"])
    grads = jax.grad(mlp.loss)(params, x, y)
    print("hidden:", jax.typeof(hidden), " grad w:", jax.typeof(grads["hidden1"]["w"]))
    return grads


with jax.set_mesh(explicit_mesh):
    traced = jax.jit(layer_types).trace(params_e, x_e, y_e)  # traced, not run

# %% tags=["check"] jupyter={"source_hidden": true}
with jax.set_mesh(explicit_mesh), contextlib.redirect_stdout(io.StringIO()) as printed:
    jax.jit(lambda *args: layer_types(*args)).trace(params_e, x_e, y_e)  # a fresh trace
assert printed.getvalue().split() == [
    "hidden:", f"float32[{16 * n}@batch,512]", "grad", "w:", "float32[784,512]"]

# %% [markdown] slideshow={"slide_type": "notes"}
# Hidden activations split like the batch (`@batch`); the gradient of a replicated
# weight is replicated: every device's images contributed, so it is a sum over devices,
# the all-reduce we counted. JAX's docs: "cotangent types are a function of primal
# types". `trace` runs the Python (and its prints) without compiling.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### An ambiguous sharding is a type error
#
# Split both contracting dimensions of a matmul: keep the partial sums split, or add
# them? Explicit mode refuses to guess, at trace time; `out_sharding=` decides.

# %%
with jax.set_mesh(explicit_mesh):
    x_cols = jax.device_put(images, P(None, "batch"))  # pixels split over devices
    w_rows = jax.device_put(params["hidden1"]["w"], P("batch"))  # rows split too
    try:
        x_cols @ w_rows
    except Exception as err:  # its class is not in JAX's public API: we print its name
        ambiguity = f"{type(err).__name__}: {err}"
        print(ambiguity.split(". Got")[0])  # the first sentences
    summed = jnp.matmul(x_cols, w_rows, out_sharding=P())  # add them: replicated
print(jax.typeof(summed))

# %% tags=["check"] jupyter={"source_hidden": true}
refused = False
with jax.set_mesh(explicit_mesh):  # refused while tracing: no compile, no run
    try:
        jax.jit(jnp.matmul).trace(x_cols, w_rows)
    except Exception as err:  # its class is private: a name, attribute, type or value
        # error would mean a broken cell, not a refusal
        refused = not isinstance(err, (NameError, AttributeError, TypeError, ValueError))
    jax.jit(functools.partial(jnp.matmul, out_sharding=P())).trace(x_cols, w_rows)  # fine
assert refused, "Explicit mode should refuse the ambiguous matmul"
assert str(jax.typeof(summed)) == f"float32[{16 * n},512]"
np.testing.assert_allclose(summed, images @ params["hidden1"]["w"], rtol=1e-4, atol=1e-4)

# %% [markdown] slideshow={"slide_type": "notes"}
# `ShardingTypeError` (JAX 0.10.2 and 0.12; the class is not public, so we print its
# name) names both contracting specs. `out_sharding=P()` asks for the partial sums added up: an
# all-reduce. Auto mode would have let the compiler choose, silently.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `jax.reshard`: change a layout on purpose
#
# In Explicit mode a layout changes only where you say so. `jax.reshard` gathers the
# split images onto every device: an **all-gather**, written by you.

# %%
with jax.set_mesh(explicit_mesh):
    gather = jax.jit(lambda a: jax.reshard(a, P()))
    print(jax.typeof(x_e), "->", jax.typeof(gather(x_e)), collectives(gather, x_e))

# %% tags=["check"] jupyter={"source_hidden": true}
with jax.set_mesh(explicit_mesh):
    gathered = gather(x_e)
    assert "all-gather" in collectives(gather, x_e)
assert str(jax.typeof(gathered)) == f"float32[{16 * n},784]" and gathered.is_fully_replicated
np.testing.assert_array_equal(gathered, images)

# %% [markdown] slideshow={"slide_type": "notes"}
# `reshard` is an equation in the jaxpr, and a collective in the compiled program:
# Explicit mode moves data only where you write it. Auto mode's equivalent, a
# constraint, comes next.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Auto mode: `with_sharding_constraint` pins one intermediate
#
# The compiler propagates shardings from the inputs; a constraint fixes one value's.
# Here the hidden activations, gathered onto every device.

# %%
def gathered_hidden(params, x):
    hidden = jax.nn.relu(x @ params["hidden1"]["w"])  # the compiler would keep it split
    return jax.lax.with_sharding_constraint(hidden, rep)  # we ask: whole on every device


pinned = jax.jit(gathered_hidden, in_shardings=(rep, split))
print(collectives(pinned, params, images), pinned(params, images).sharding.spec)

# %% tags=["check"] jupyter={"source_hidden": true}
assert "all-gather" in collectives(pinned, params, images)
assert not collectives(jax.jit(lambda p, x: jax.nn.relu(x @ p["hidden1"]["w"]),
                               in_shardings=(rep, split)), params, images)
assert pinned(params, images).is_fully_replicated
np.testing.assert_allclose(pinned(params, images),
                           jax.nn.relu(images @ params["hidden1"]["w"]), rtol=1e-5, atol=1e-5)

# %% [markdown] slideshow={"slide_type": "notes"}
# Without the constraint the step needs no collective here; with it, an all-gather.
# `with_sharding_constraint` is Auto mode's `reshard`. At scale it is routine: large
# models constrain activations at layer and scan boundaries (MaxText; Flax's logical
# axis rules), so propagation keeps the layout they were designed for. Inside
# `shard_map` there is nothing to constrain: you hold the blocks.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `auto_axes`: let the compiler choose, inside Explicit code
#
# The ambiguous matmul again: inside `auto_axes` the mesh axes are Auto, the compiler
# picks, and the result gets the sharding you name.

# %%
with jax.set_mesh(explicit_mesh):
    auto_matmul = jax.jit(jax.sharding.auto_axes(jnp.matmul, out_sharding=P("batch")))
    rows = auto_matmul(x_cols, w_rows)
    print(jax.typeof(rows), dict(collectives(auto_matmul, x_cols, w_rows)))

# %% tags=["check"] jupyter={"source_hidden": true}
assert str(jax.typeof(rows)) == f"float32[{16 * n}@batch,512]"
np.testing.assert_allclose(rows, images @ params["hidden1"]["w"], rtol=1e-4, atol=1e-4)
with jax.set_mesh(batch_mesh):  # the reverse: Explicit types inside, called in Auto mode
    def explicit_inside(x):
        assert str(jax.typeof(x)) == f"float32[{16 * n}@batch,784]"  # typed at trace
        return jnp.sin(x)
    sines = jax.jit(jax.sharding.explicit_axes(explicit_inside, in_sharding=P("batch")))(
        images)
assert sines.sharding.spec == P("batch")
np.testing.assert_allclose(sines, jnp.sin(images), rtol=1e-6)

# %% [markdown] slideshow={"slide_type": "notes"}
# Mix modes per function: `auto_axes` (Auto inside Explicit code; on CPU one all-reduce
# here) and its reverse `explicit_axes` (Explicit types inside Auto code; the check runs
# it). Both live in `jax.sharding` (JAX 0.10.2).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Donate the sharded state
#
# `donate_argnums` lets XLA write the new params and velocity into the old buffers,
# device by device: one copy of the state in memory instead of two.

# %%
with jax.set_mesh(explicit_mesh):
    # a copy: device_put may share the buffer `params` already has on device 0
    old_params, old_velocity = jax.device_put(jax.tree.map(jnp.copy, (params, velocity)), P())
    donating_update = jax.jit(mlp.update, donate_argnums=(0, 3))  # params, velocity
    new_params, new_velocity, _ = donating_update(old_params, x_e, y_e, old_velocity)
print("old params deleted:", old_params["hidden1"]["w"].is_deleted(),
      "| new:", jax.typeof(new_params["hidden1"]["w"]))

# %% tags=["check"] jupyter={"source_hidden": true}
assert all(a.is_deleted() for a in jax.tree.leaves((old_params, old_velocity)))
assert not any(a.is_deleted() for a in jax.tree.leaves((params, velocity)))  # the copy
assert not any(a.is_deleted() for a in jax.tree.leaves((new_params, new_velocity)))
for a, b in zip(jax.tree.leaves(new_params), jax.tree.leaves(new_e), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)  # the same step as before
try:
    old_params["hidden1"]["w"] + 1
    raise AssertionError("a donated array should refuse to be used")
except RuntimeError:  # the class is the contract; the wording may change
    pass

# %% [markdown] slideshow={"slide_type": "notes"}
# Donation is a promise not to use the old arrays again: JAX deletes them, and using one
# raises an error. Without the copy, donating would delete `params` too: `device_put`
# reused its buffer on device 0 (JAX 0.10.2). Training loops donate params and optimiser
# state every step; CPU, GPU and TPU honour it.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Manual mode: `shard_map` and `psum`
#
# You write what **one** device does with **its** slice, and the communication yourself:
# each device's gradient, averaged by `lax.pmean` (an all-reduce: `psum`, divided by `n`).

# %%
def per_device(params, x, y, velocity, lr=mlp.LR, momentum=mlp.MOMENTUM):
    local = jax.lax.pcast(params, "batch", to="varying")  # see the next slides
    loss, grads = jax.value_and_grad(mlp.loss)(local, x, y)
    grads = jax.lax.pmean(grads, "batch")  # all-reduce: psum, divided by n
    velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)
    return params, velocity, jax.lax.pmean(loss, "batch")


manual_update = jax.jit(jax.shard_map(
    per_device, mesh=batch_mesh,
    in_specs=(P(), P("batch"), P("batch"), P()), out_specs=(P(), P(), P())))

# %% tags=["check"] jupyter={"source_hidden": true}
sm_params, _, sm_loss = manual_update(params, images, labels, velocity)
np.testing.assert_allclose(sm_loss, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(sm_params), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
# our pmeans, bundled into all-reduces (one on CPU)
assert only_all_reduces(collectives(manual_update, params, images, labels, velocity))

# %% [markdown] slideshow={"slide_type": "notes"}
# `in_specs` say how each argument is split, `out_specs` how results are put together.
# Inside, `x` is `f32[16,784]`, this device's slice. The same step as before, to float32
# rounding; XLA bundles our pmeans as it bundled its own (one all-reduce on CPU).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `shard_map` types say what varies between devices
#
# The params arrive the same on every device; `x` differs (`{V:batch}`, *varying*).
# `pcast(..., to="varying")` makes this device's copy of the params its own.

# %%
def types_inside(params, x, y):
    local = jax.lax.pcast(params, "batch", to="varying")
    print("w:", jax.typeof(params["output"]["w"]), " x:", jax.typeof(x),
          " after pcast:", jax.typeof(local["output"]["w"]))
    return x


traced = jax.jit(jax.shard_map(types_inside, mesh=batch_mesh, out_specs=P("batch"),
                               in_specs=(P(), P("batch"), P("batch")))).trace(
    params, images, labels)

# %% tags=["check"] jupyter={"source_hidden": true}
varying = {}  # the notes: where the type keeps the axes it varies along


def record_varying(params, x, y):
    local = jax.lax.pcast(params, "batch", to="varying")
    for name, value in (("w", params["output"]["w"]), ("x", x), ("cast", local["output"]["w"])):
        varying[name] = jax.typeof(value).manual_axis_type.varying
    return x


jax.jit(jax.shard_map(record_varying, mesh=batch_mesh, out_specs=P("batch"),
                      in_specs=(P(), P("batch"), P("batch")))).trace(params, images, labels)
assert varying == {"w": set(), "x": {"batch"}, "cast": {"batch"}}, varying

# %% [markdown] slideshow={"slide_type": "notes"}
# Each type carries the mesh axes it varies along: `jax.typeof(x).manual_axis_type.varying`
# (JAX 0.10 and 0.12; undocumented; `.vma` before 0.10, still in `check_vma=`). A `P()`
# argument is *invariant*. Where invariant meets varying, JAX inserts an implicit
# `pcast(…, to="varying")`, whose transpose is a `psum` (`jax.lax.pvary`, its old name,
# is gone).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Without `pcast`, our `psum` counts every gradient `n` times
#
# Without the cast, `grad` with respect to invariant params **already** returns the sum
# over devices. Our `psum` then sums `n` equal sums.

# %%
def mean_grad(params, x, y, *, cast):
    if cast:
        params = jax.lax.pcast(params, "batch", to="varying")
    grads = jax.grad(mlp.loss)(params, x, y)
    return jax.tree.map(lambda g: jax.lax.psum(g, "batch") / n, grads)

# %% [markdown] slideshow={"slide_type": "notes"}
# Invariant params meet varying `x`: JAX casts them implicitly, and the transpose of that
# cast is a `psum`. So `grad` already adds the devices' gradients; our `psum` adds `n`
# copies of that sum. The next slide counts it.


# %% [markdown] slideshow={"slide_type": "subslide"}
# ### ... in numbers
#
# The output layer's gradient, against the true one (`jax.grad` on the whole batch):

# %%
reference = jax.jit(jax.grad(mlp.loss))(params, images, labels)
grads, ratio = {}, {}
for cast in (True, False):
    step = jax.shard_map(functools.partial(mean_grad, cast=cast), mesh=batch_mesh,
                         in_specs=(P(), P("batch"), P("batch")), out_specs=P())
    grads[cast] = jax.jit(step)(params, images, labels)
    ratio[cast] = (np.linalg.norm(grads[cast]["output"]["w"])
                   / np.linalg.norm(reference["output"]["w"]))
    print(f"pcast={cast}: |gradient| / |true gradient| = {ratio[cast]:.2f}")

# %% tags=["check"] jupyter={"source_hidden": true}
for cast, factor in ((True, 1), (False, n)):  # every leaf, not only the one printed
    for g, r in zip(jax.tree.leaves(grads[cast]), jax.tree.leaves(reference), strict=True):
        np.testing.assert_allclose(g, factor * r, rtol=1e-4, atol=1e-6)
np.testing.assert_allclose([ratio[True], ratio[False]], [1, n], rtol=1e-4)
untracked = jax.jit(jax.shard_map(functools.partial(mean_grad, cast=False), mesh=batch_mesh,
                                  in_specs=(P(), P("batch"), P("batch")), out_specs=P(),
                                  check_vma=False))(params, images, labels)
for g, r in zip(jax.tree.leaves(untracked), jax.tree.leaves(reference), strict=True):
    np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-6)  # no tracking: local, psum once

# %% [markdown] slideshow={"slide_type": "notes"}
# With 8 devices: 8.00, steps 8 times too long. Write `pcast` and your own `psum` (the
# `pmean` of `per_device`), or drop both and divide the implicit sum by `n`; never the `psum`
# alone. With `check_vma=False` JAX tracks nothing: the gradient stays local and the
# `psum` alone is right (the check cell runs it).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A 2-D mesh: data × model
#
# Split the batch over `data` and every weight matrix's **columns** over `model`: each
# device holds 1/`m` of the model. In Explicit mode the types show it.

# %%
m = 2 if n % 2 == 0 and n >= 4 else 1
mesh_2d = jax.make_mesh((n // m, m), ("data", "model"), devices=devices)
with jax.set_mesh(mesh_2d):
    params_2d = jax.tree.map(lambda a: jax.device_put(a, P(*[None] * (a.ndim - 1), "model")),
                             params)
    velocity_2d = jax.tree.map(jnp.zeros_like, params_2d)
    x_2d, y_2d = jax.device_put((images, labels), P("data"))
    print("w:", jax.typeof(params_2d["hidden1"]["w"]),
          " hidden:", jax.typeof(x_2d @ params_2d["hidden1"]["w"]))

# %% tags=["check"] jupyter={"source_hidden": true}
assert str(jax.typeof(params_2d["hidden1"]["w"])) == "float32[784,512@model]"
with jax.set_mesh(mesh_2d):
    assert str(jax.typeof(x_2d @ params_2d["hidden1"]["w"])) == \
        f"float32[{16 * n}@data,512@model]"
assert {s.data.shape for s in params_2d["hidden1"]["w"].addressable_shards} == {(784, 512 // m)}

# %% [markdown] slideshow={"slide_type": "notes"}
# `P(None, …, "model")` splits each array's last dimension: a weight's columns, a bias's
# entries. The hidden activations come out split both ways: rows over `data`, columns
# over `model`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The first weight matrix, its columns over `model`

# %%
draw_sharding(params_2d["hidden1"]["w"])

# %% [markdown] slideshow={"slide_type": "notes"}
# Each column block is replicated over the `data` axis (the devices of one column of the
# mesh hold the same block), drawn striped. This is the simplest form of tensor (model)
# parallelism: a weight too big for one device is split, at the price of more
# communication, which the next slide counts.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The collectives a 2-D mesh costs
#
# The same `mlp.update`, jitted. Data parallelism needed only all-reduces; the model
# axis adds collectives in the forward and backward passes.

# %%
with jax.set_mesh(mesh_2d):
    update_2d = jax.jit(mlp.update)
    count_2d = collectives(update_2d, params_2d, x_2d, y_2d, velocity_2d)
print("data parallel:", dict(count_dp))
print("data × model: ", dict(count_2d))

# %% tags=["check"] jupyter={"source_hidden": true}
with jax.set_mesh(mesh_2d):
    new_2d, _, loss_2d = update_2d(params_2d, x_2d, y_2d, velocity_2d)
np.testing.assert_allclose(loss_2d, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(new_2d), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
assert str(jax.typeof(new_2d["hidden2"]["w"])) == "float32[512,256@model]"
if m > 1:  # the model axis costs communication beyond the gradients' all-reduce
    assert sum(count_2d.values()) > 1 and count_2d["all-reduce"] >= 1

# %% [markdown] slideshow={"slide_type": "notes"}
# On CPU with JAX 0.10.2: all-gathers (the next layer needs every column) and more
# all-reduces (gradients over `data`, partial products over `model`). The mix is the
# compiler's and differs by backend. Real models alternate column- and row-split layers
# (Megatron style) to need fewer collectives.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## FSDP: the parameters sharded over the data axis
#
# Each device keeps **1/n of every weight** (and of its gradient and optimiser state)
# between steps, gathers a whole layer for its matmul, and keeps only its block of the
# gradient. Data parallelism's step, for a model too big to copy onto every device.

# %%
def fsdp_spec(a):  # rows over the data axis, where they split evenly; else replicated
    return P("batch") if a.shape[0] % n == 0 else P()


def fsdp_loss(params, x, y):
    whole = jax.tree.map(lambda w: jax.reshard(w, P()), params)  # all-gather: a layer each
    return mlp.loss(whole, x, y)


@jax.jit
def fsdp_step(params, x, y):
    loss, grads = jax.value_and_grad(fsdp_loss)(params, x, y)  # grads sharded as params
    return jax.tree.map(lambda w, g: w - mlp.LR * g, params, grads), loss

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### One FSDP step: each device holds 1/n

# %%
param_bytes = sum(a.nbytes for a in jax.tree.leaves(params))
with jax.set_mesh(explicit_mesh):
    params_f = jax.tree.map(lambda a: jax.device_put(a, fsdp_spec(a)), params)
    compiled_fsdp = fsdp_step.lower(params_f, x_e, y_e).compile()  # compile once: run, read
    new_f, loss_f = compiled_fsdp(params_f, x_e, y_e)
count_fsdp = collectives_in(compiled_fsdp)
held = sum(s.data.nbytes for a in jax.tree.leaves(new_f) for s in a.addressable_shards
           if s.device == devices[0])
print("w:", jax.typeof(new_f["hidden1"]["w"]), dict(count_fsdp))
print(f"device 0 holds {held / 1e3:.0f} kB of the {param_bytes / 1e3:.0f} kB of weights")

# %% tags=["check"] jupyter={"source_hidden": true}
# the oracle: mlp.update on one device; from zero velocity its first step is plain SGD
np.testing.assert_allclose(loss_f, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(new_f), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
assert str(jax.typeof(new_f["hidden1"]["w"])) == "float32[784@batch,512]"  # stays sharded
assert held < 1.1 * param_bytes / n  # 1/n of the weights (the 10 output biases are whole)
assert count_fsdp["all-gather"] >= 1  # the layers are gathered before their matmuls

# %% [markdown] slideshow={"slide_type": "notes"}
# Here JAX emits an all-reduce of the whole gradient, then each device slices its
# block (JAX 0.10.2, 0.12); `psum_scatter` asks for a reduce-scatter. JAX keeps each
# gathered layer for the backward pass, so a step's peak holds them all; ZeRO-3 (PyTorch's
# FSDP) gathers again in backward: wrap each layer in `jax.checkpoint`.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A checkpoint that stays sharded
#
# Orbax writes each device's block of the FSDP weights. Restored into a target of
# shapes, dtypes and shardings, each block goes straight back onto its device.

# %%
import tempfile
from pathlib import Path

import orbax.checkpoint as ocp

folder = tempfile.TemporaryDirectory()  # removed when the kernel shuts down cleanly
saved_at = Path(folder.name) / "fsdp"
checkpointer = ocp.StandardCheckpointer()
checkpointer.save(saved_at, new_f)  # in the background; wait for it
checkpointer.wait_until_finished()
target = jax.tree.map(  # nothing allocated: the shardings say where each block goes
    lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), new_f)
restored_f = checkpointer.restore(saved_at, target)
print(jax.typeof(restored_f["hidden1"]["w"]))

# %% tags=["check"] jupyter={"source_hidden": true}
for a, b in zip(jax.tree.leaves(restored_f), jax.tree.leaves(new_f), strict=True):
    assert a.sharding == b.sharding  # each block back on the device that saved it
    np.testing.assert_array_equal(a, b)

# %% [markdown] slideshow={"slide_type": "notes"}
# On several hosts each process writes and reads only the blocks it holds, so no host
# ever needs the whole model. A target with other shardings than the saved ones
# reshards while restoring (orbax-checkpoint 0.11; lesson 08 restores a Flax model).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### FSDP's blocks, drawn: the kit's
#
# The second layer's weights after the FSDP step: its rows, one block per device.

# %%
draw_sharding(new_f["hidden2"]["w"])

# %% [markdown] slideshow={"slide_type": "notes"}
# The kit's picture: one colour per device, replication drawn as stripes; `.save()`
# writes it to a file.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### … and JAX's own, of a bias: one row of blocks

# %%
jax.debug.visualize_array_sharding(new_f["hidden1"]["b"])  # 512 numbers, 1/n each

# %% tags=["check"] jupyter={"source_hidden": true}
blocks = new_f["hidden2"]["w"].sharding.devices_indices_map((512, 256))  # the kit's
assert len({str(index) for index in blocks.values()}) == n  # n distinct row blocks
assert draw_sharding(new_f["hidden2"]["w"]).title.endswith(f"{n} blocks")
bias_blocks = new_f["hidden1"]["b"].sharding.devices_indices_map((512,))
assert len({str(index) for index in bias_blocks.values()}) == n  # the bias's too

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.debug.visualize_array_sharding` prints the same grid as text (through `rich`, which
# Flax brings); inside `jit`, `jax.debug.inspect_array_sharding` hands you the sharding.
# Both read `x.sharding`; its `devices_indices_map` lists the blocks they show.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### FSDP by hand: `all_gather` and `psum_scatter`
#
# In `shard_map` you write both collectives: gather each layer's blocks, take the local
# gradient, then `psum_scatter`: sum over devices, each keeping its own block.

# %%
specs = jax.tree.map(fsdp_spec, params)


def fsdp_per_device(blocks, x, y):
    whole = jax.tree.map(lambda b, s: jax.lax.all_gather(b, "batch", tiled=True)
                         if s == P("batch") else jax.lax.pcast(b, "batch", to="varying"),
                         blocks, specs)
    loss, grads = jax.value_and_grad(mlp.loss)(whole, x, y)  # this device's images
    grads = jax.tree.map(lambda g, s: jax.lax.psum_scatter(g, "batch", tiled=True)
                         if s == P("batch") else jax.lax.psum(g, "batch"), grads, specs)
    return jax.tree.map(lambda b, g: b - mlp.LR * g / n, blocks, grads), jax.lax.pmean(
        loss, "batch")


manual_fsdp = jax.jit(jax.shard_map(fsdp_per_device, mesh=batch_mesh,
                                    in_specs=(specs, P("batch"), P("batch")),
                                    out_specs=(specs, P()))).lower(params, images, labels).compile()
count_manual = collectives_in(manual_fsdp)
print(dict(count_manual))

# %% tags=["check"] jupyter={"source_hidden": true}
manual_params, manual_loss = manual_fsdp(params, images, labels)
np.testing.assert_allclose(manual_loss, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(manual_params), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
assert count_manual["all-gather"] >= 1
assert count_manual["reduce-scatter"] >= 1  # psum_scatter's own collective

# %% [markdown] slideshow={"slide_type": "notes"}
# `tiled=True` concatenates the blocks instead of stacking them. Each device's gradient
# of the whole layer is `psum_scatter`ed: summed over devices, block i to device i; `/ n`
# makes the sum a mean. The output bias (10 entries, not divisible by 8) stays whole:
# `pcast`, then `psum`, as two slides on `pcast` showed.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### An all-gather is a ring of `ppermute`s
#
# `ppermute` sends each device's block to its neighbour. After `n - 1` hops every device
# has seen every block: an all-gather, built by hand.

# %%
def ring_gather(block):  # one device's block of rows
    hops = [block]
    for _ in range(n - 1):  # pass what we last received to the next device
        hops.append(jax.lax.ppermute(hops[-1], "batch", [(i, (i + 1) % n) for i in range(n)]))
    origin = (jax.lax.axis_index("batch") - jnp.arange(n)) % n  # hop k came from i - k
    return jnp.concatenate(jnp.stack(hops)[jnp.argsort(origin)])


w2 = params["hidden2"]["w"]
ring = jax.jit(jax.shard_map(ring_gather, mesh=batch_mesh, in_specs=P("batch"),
                             out_specs=P("batch"))).lower(w2).compile()
copies = ring(w2).reshape(n, *w2.shape)  # every device's whole copy, stacked
count_ring = collectives_in(ring)
print(copies.shape, dict(count_ring))

# %% tags=["check"] jupyter={"source_hidden": true}
for copy in copies:  # each device rebuilt the whole matrix
    np.testing.assert_array_equal(copy, w2)
assert count_ring == {"collective-permute": n - 1}  # n - 1 hops of one block

# %% [markdown] slideshow={"slide_type": "notes"}
# A ring all-gather: each hop moves one block (1/n of the array) over every link at once,
# so each device receives (n − 1)/n of the array in n − 1 hops. XLA's own all-gather
# picks its algorithm by backend and topology; the ring is the textbook one.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### What a collective costs: a model
#
# Bandwidth term: bytes each device sends ÷ link bandwidth. A ring all-gather or
# reduce-scatter sends (n − 1)/n of the array; an all-reduce is both, twice that. A
# **model**, not a measurement: the bandwidth is assumed, latency left out.

# %%
link = 100e9  # bytes/s per device: assumed (TPU ICI and NVLink: this order or faster)
ring_share = (n - 1) / n
modelled = {"FSDP all-gather": ring_share * param_bytes,
            "FSDP reduce-scatter": ring_share * param_bytes,
            "DP all-reduce": 2 * ring_share * param_bytes}
for name, sent in modelled.items():
    print(f"{name:>20}: {sent / 1e6:.2f} MB per device, {sent / link * 1e6:5.1f} µs (model)")

# %% tags=["check"] jupyter={"source_hidden": true}
if jax.default_backend() == "cpu":  # the model against the ring's compiled program
    hops = re.findall(r"= (\w+)\[([\d,]+)\]\S* collective-permute\(", ring.as_text())
    sizes = [math.prod(int(d) for d in dims.split(",")) * w2.itemsize
             for kind, dims in hops if kind == "f32"]
    assert sizes == [w2.nbytes // n] * (n - 1)  # n - 1 hops of one block each
    assert math.isclose(sum(sizes), ring_share * w2.nbytes)

# %% [markdown] slideshow={"slide_type": "notes"}
# FSDP keeping its gathered layers sends what data parallelism sends; gathering again
# in backward (ZeRO-3) sends 1.5 times that. Left out: each hop's latency, several links
# per chip, two-level networks. Overlap: XLA's GPU and TPU scheduler gathers layer k + 1
# while layer k multiplies, so a step costs about max(compute, communication).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Constraints at layer boundaries
#
# Deep models `scan` over stacked layers. At scale each layer's input and output get a
# `with_sharding_constraint`: here propagation would choose the same, and the
# constraints pin it, so a change elsewhere cannot move it.

# %%
layers_w = jax.random.normal(jax.random.key(5), (4, 64, 64)) / 8  # 4 layers, FSDP rows
hidden0 = jax.random.normal(jax.random.key(6), (16 * n, 64))


def deep(layers_w, h):
    def layer(h, w):
        w = jax.lax.with_sharding_constraint(w, rep)  # gathered for the matmul
        return jax.lax.with_sharding_constraint(jnp.tanh(h @ w), split), None  # the boundary
    return jax.lax.scan(layer, h, layers_w)[0]


deep_step = jax.jit(deep, in_shardings=(NamedSharding(batch_mesh, P(None, "batch")), split))
compiled_deep = deep_step.lower(layers_w, hidden0).compile()
out_deep = compiled_deep(layers_w, hidden0)
print(out_deep.sharding.spec, dict(collectives_in(compiled_deep)))

# %% tags=["check"] jupyter={"source_hidden": true}
unrolled = hidden0
for w in layers_w:  # the oracle: the layers one after another, on one device
    unrolled = jnp.tanh(unrolled @ w)
np.testing.assert_allclose(out_deep, unrolled, rtol=1e-5, atol=1e-5)
assert out_deep.sharding.spec == P("batch")
assert collectives_in(compiled_deep)["all-gather"] >= 1  # each layer's rows gathered

# %% [markdown] slideshow={"slide_type": "notes"}
# MaxText and Flax's logical axis rules (`nn.with_logical_constraint`) do this at every
# layer: activations split over the batch, weights gathered. Left alone, propagation
# through a `scan` may pick another layout for the carry and reshard every iteration.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Random numbers under sharding
#
# A typed key (`jax.random.key`) with threefry in its partitionable form: each device
# makes only its own block, and the values match the unsharded ones.

# %%
key = jax.random.key(0)  # typed: dtype key<fry>; jax.random.PRNGKey(0) is raw uint32[2]
noise = jax.jit(lambda k: jax.random.normal(k, (16 * n, 784)), out_shardings=split)
compiled_noise = noise.lower(key).compile()
sample, count_noise = compiled_noise(key), collectives_in(compiled_noise)
print(key.dtype, jax.random.PRNGKey(0).dtype, sample.sharding.spec, dict(count_noise))

# %% tags=["check"] jupyter={"source_hidden": true}
assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
assert not jax.dtypes.issubdtype(jax.random.PRNGKey(0).dtype, jax.dtypes.prng_key)
np.testing.assert_allclose(sample, jax.random.normal(key, (16 * n, 784)), rtol=1e-6)
bits = jax.jit(lambda k: jax.random.bits(k, (16 * n, 8)), out_shardings=split)(key)
np.testing.assert_array_equal(bits, jax.random.bits(key, (16 * n, 8)))  # bit for bit
assert not count_noise  # no device waits for another's numbers
assert getattr(jax.config, "jax_threefry_partitionable", True)  # default since 0.5.0

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax_threefry_partitionable` (default since JAX 0.5.0) makes each number a function of
# its index, so a sharded draw needs no communication and equals the unsharded one.
# Typed keys carry their PRNG in the dtype and refuse integer arithmetic; `PRNGKey` is
# the legacy form.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `pmap`: how it was done before
#
# JAX's first data parallelism: a leading axis of size *n*, one slice per device. `pjit`
# (GSPMD) brought the global view in 2021, `jax.Array` made it the default in JAX 0.4.1
# (December 2022). `pmap` still runs; new code uses the modes above.
#
# ```python
# jax.pmap(step, axis_name="batch", in_axes=(None, 0, 0))(
#     params, x.reshape(n, -1, 784), y.reshape(n, -1))
# ```

# %% slideshow={"slide_type": "skip"}
def pmap_grads(params, x, y):
    return jax.lax.pmean(jax.grad(mlp.loss)(params, x, y), "batch")


if hasattr(jax, "pmap"):  # it may leave a future JAX; the cell then says so
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        stacked = jax.pmap(pmap_grads, axis_name="batch", in_axes=(None, 0, 0),
                           devices=devices)(params, images.reshape(n, -1, 784),
                                            labels.reshape(n, -1))
    print("warnings:", [str(w.message)[:80] for w in caught] or "none")
else:
    print("This JAX has no jax.pmap any more: use jax.shard_map, as above.")


# The shard_map equivalent. pmap's in_axes=None gave every device its own copy of the
# params; under shard_map's default check_vma=True, P() params are invariant, so they
# need pcast before grad, or pmean would average n equal sums: n times the gradient.
def shard_map_grads(params, x, y):
    local = jax.lax.pcast(params, "batch", to="varying")
    return jax.lax.pmean(jax.grad(mlp.loss)(local, x, y), "batch")


shard_map_step = jax.jit(jax.shard_map(shard_map_grads, mesh=batch_mesh,
                                       in_specs=(P(), P("batch"), P("batch")),
                                       out_specs=P()))

# %% tags=["check"] jupyter={"source_hidden": true}
# `reference`: the true gradient of the whole batch, from the slides on `pcast`
if hasattr(jax, "pmap"):
    # one copy of the gradient per device, on a leading axis of size n
    assert stacked["output"]["w"].shape == (n, *params["output"]["w"].shape)
    for a, b in zip(jax.tree.leaves(stacked), jax.tree.leaves(reference), strict=True):
        np.testing.assert_allclose(a[0], b, rtol=1e-4, atol=1e-6)
for a, b in zip(jax.tree.leaves(shard_map_step(params, images, labels)),
                jax.tree.leaves(reference), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)  # the mean, not n times it

# %% [markdown] slideshow={"slide_type": "notes"}
# Since JAX 0.8.0 `pmap` runs on `jit` and `shard_map`, in maintenance mode. Its
# `shard_map` twin (`shard_map_grads`, in the notebook) takes `P()` params, so it needs
# `pcast(params, "batch", to="varying")` before `grad`: without it `pmean` returns `n`
# times the gradient, as two slides back.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# A slice of MNIST and two epochs in CI (JAXTOUR_QUICK); the full run, three.
n_train = 4096 if paths.quick() else 60_000
subset = data.subset(n_train, 2000)
settings = dict(epochs=2 if paths.quick() else 3, batch_size=128, seed=0, progress=False)
# The two-process run's: 2,048 images (1,024 in CI) in batches of 64, two epochs.
n_small = 1024 if paths.quick() else 2048
small = data.subset(n_small, 1000)
settings_small = dict(epochs=2, batch_size=64, seed=0)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Training on every device follows the run on one
#
# `mlp.train_data_parallel` is `mlp.train` with the Auto step: the same seed, weights and
# shuffles, each batch of 128 split over the devices.

# %%
_, one = mlp.train(subset, device=devices[0], **settings)
_, many = mlp.train_data_parallel(subset, devices=devices, **settings)
for run in (one, many):
    print(f"{run.device}: accuracy {run.test_accuracy[-1]:.3f}, losses {np.round(run.loss, 4)}")

# %% tags=["check"] jupyter={"source_hidden": true}
first = 10  # steps before SGD has amplified the rounding differences
np.testing.assert_allclose(many.batch_loss[:first], one.batch_loss[:first], rtol=1e-4)
np.testing.assert_allclose(many.loss, one.loss, rtol=0.05)
assert abs(many.test_accuracy[-1] - one.test_accuracy[-1]) < 0.01
assert many.test_accuracy[-1] > 0.85

# %% [markdown] slideshow={"slide_type": "notes"}
# Only the order of float32 partial sums differs, so the first steps agree to rounding
# (the check: 10 steps to 1e-4). SGD amplifies any small difference (lesson 06), so late
# in the run the batch losses part ways while epoch means and test accuracy stay
# together: two equally good runs.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The two loss curves

# %% tags=["hide-input"]
fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(one.batch_loss, lw=4, alpha=0.4, label=f"1 device ({one.device})")
ax.plot(many.batch_loss, lw=1.2, color="black", label=f"{many.device}, data-parallel")
ax.set(xlabel="step", ylabel="batch loss", yscale="log")
ax.legend()
plt.show()

# %% [markdown] slideshow={"slide_type": "notes"}
# The thin black line (8 devices) lies on the thick one (1 device) for the first steps,
# then wanders within the same band: the rounding differences amplified, as the notes
# before said.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A batch that does not split
#
# Every device must get the same number of examples. Rather than silently change your
# batch size, jaxtour stops and names the nearest sizes that work.

# %%
message = ""
try:
    mlp.train_data_parallel(subset, devices=devices, epochs=1, batch_size=8 * n + 4)
except ValueError as err:
    message = str(err)
print(message)

# %% tags=["check"] jupyter={"source_hidden": true}
assert f"Use {8 * n} or {9 * n} (a multiple of {n})" in message

# %% [markdown] slideshow={"slide_type": "notes"}
# How fast? Simulated CPU devices share the same cores, so on a laptop 8 of them are not
# faster than 1: there the point is the program, not the speed.
# `benchmarks/data_parallel.py` measures steps per second for 1, 2, 4 and 8 simulated
# devices, each count in its own process, and a GPU when there is one.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## From one machine to many
#
# Many processes, one program: a TPU pod slice runs **one process per host**, a GPU
# cluster one per host or one per GPU. Each starts with `jax.distributed.initialize()`.
# This notebook is one process:

# %%
print(f"process {jax.process_index()} of {jax.process_count()}, "
      f"{jax.local_device_count()} local devices")

# %% tags=["check"] jupyter={"source_hidden": true}
assert jax.process_count() == 1 and jax.process_index() == 0

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.distributed.initialize()` joins the processes: on Cloud TPU, SLURM or Open MPI it
# finds the others itself; elsewhere give it the coordinator's address, the process
# count and this one's index. Then `jax.devices()` lists every process's devices,
# `jax.local_devices()` this one's; a mesh over `jax.devices()` spans the machines.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Two JAX processes on this machine
#
# `launch.train_multiprocess` starts 2 Python processes, 4 CPU devices each, joined at a
# coordinator on 127.0.0.1. Each feeds **only its half** of every batch.

# %%
# n_small MNIST images, batches of 64, two epochs (settings_small)
two = launch.train_multiprocess(processes=2, devices_per_process=4, details=True,
                                echo=False, train_size=n_small, test_size=1000,
                                **settings_small)
print("\n".join(two.log))  # process 0's output; the others stay quiet
print("device ids of each process:", two.mesh)

# %% tags=["check"] jupyter={"source_hidden": true}
assert [len(ids) for ids in two.mesh] == [4, 4]
assert not set(two.mesh[0]) & set(two.mesh[1])  # two processes, eight devices
assert two.log[0] == "process 0 of 2: 4 of 8 devices", two.log  # process 1's: not shown
epochs = [line.split()[:2] for line in two.log[1:]]
assert epochs == [["epoch", "1/2"], ["epoch", "2/2"]], two.log  # process 0's only
assert two.history.device == "2 processes × 4 cpu"

# %% [markdown] slideshow={"slide_type": "notes"}
# Each process runs the same worker: `jax.distributed.initialize(coordinator_address=…,
# num_processes=2, process_id=i)`, one mesh over all 8 `jax.devices()`, the same shuffle,
# and its half of each batch into `jax.make_array_from_process_local_data`: one global
# batch no process holds whole. CPU collectives between processes: Gloo over TCP.

# %% [markdown] slideshow={"slide_type": "skip"}
# The worker is `python -m jaxtour.launch._worker`. Gloo is jaxlib's default CPU collectives
# implementation (`jax_cpu_collectives_implementation`; "mpi" is the other one offered).
# The launcher watches its children: when one dies it stops the others, and each worker
# gives up on a silent peer after a heartbeat timeout. These are CPU processes whatever
# accelerator this notebook has.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### One mesh across two processes
#
# The global batch `f32[64, 784]` on the 8-device mesh, each device coloured by the
# process it belongs to.

# %%
two.sharding

# %% tags=["check"] jupyter={"source_hidden": true}
assert two.sharding.title == "f32[64,784] on 8 devices: 8 blocks"
device_fills = {line.split('fillcolor="')[1].split('"')[0]
                for line in two.sharding.source.splitlines()
                if line.strip().startswith("device") and "fillcolor" in line}
assert len(device_fills) == 2  # one colour per process
assert "process 1:" in two.sharding.source
assert len(set(two.mesh[0] + two.mesh[1])) == 8  # 8 distinct global ids
# their numbering is XLA's choice, so the figure the notes give is checked only for the
# versions it was seen in
if jax.__version__.startswith(("0.10.", "0.12.")):
    assert min(two.mesh[1]) == 2048, two.mesh

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.devices()` in either process lists all 8 devices, in the same order; each
# process computes only on its own 4 (`jax.local_devices()`). Device ids are global, not
# 0-7: process 1's CPU devices start far from 4 (2048 in JAX 0.10.2 and 0.12). The
# mesh puts the devices in process order: each process's half of the batch sits on its
# own devices.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The all-reduce crosses processes
#
# Process 0's compiled epoch: the gradients' all-reduce runs over the whole mesh axis,
# so its sum takes in both processes' devices.

# %%
print(f"{two.all_reduces} all-reduces per trip round the loop ({two.unroll} steps)")
print("adds:", ", ".join(two.all_reduce_shapes))
print("over:", two.all_reduce_groups, f"({two.all_reduce_group_size} devices)")

# %% tags=["check"] jupyter={"source_hidden": true}
assert two.all_reduces == two.unroll == 4  # one per step, as in one process
# it adds gradients: each operand is as big as a weight or bias (or the scalar loss);
# how XLA's combiner bundles them, and their layouts, are not pinned
param_sizes = {leaf.size for leaf in jax.tree.leaves(params)} | {1}
operand_sizes = {math.prod(int(d) for d in re.findall(r"\d+", shape.partition("[")[2]))
                 for shape in two.all_reduce_shapes}
assert operand_sizes and operand_sizes <= param_sizes, two.all_reduce_shapes
assert two.all_reduce_group_size == 8  # each sum takes in all 8 devices: both processes

# %% [markdown] slideshow={"slide_type": "notes"}
# The same program one process compiles for 8 devices: XLA does not care where the
# devices live. Its `replica_groups` are XLA's mesh or device ids, depending on the JAX
# version; the runtime (Gloo here, ICI/DCN on TPU, NCCL on GPU) carries the sum across.
# The scan is unrolled 4 steps per trip: 4 all-reduces.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Two processes follow one process
#
# The same seed, data and batch in one process, on 8 CPU devices:

# %%
_, one_process = mlp.train_data_parallel(small, devices=jax.devices("cpu"),
                                         progress=False, **settings_small)
for name, run in [("1 process ", one_process), ("2 processes", two.history)]:
    losses = np.round(run.loss, 4)
    print(f"{name}: accuracy {run.test_accuracy[-1]:.3f}, losses {losses}")

# %% tags=["check"] jupyter={"source_hidden": true}
np.testing.assert_allclose(two.history.batch_loss[:10], one_process.batch_loss[:10],
                           rtol=1e-4)
np.testing.assert_allclose(two.history.loss, one_process.loss, rtol=0.05)
assert abs(two.history.test_accuracy[-1] - one_process.test_accuracy[-1]) <= 0.01
assert len(two.history.batch_loss) == len(one_process.batch_loss) == 2 * n_small // 64

# %% [markdown] slideshow={"slide_type": "notes"}
# Same seed, data and global batch: the 2-process run follows the 1-process run on 8
# devices, as 8 devices followed 1. Only the order of the partial sums can differ.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The same script on a real cluster
#
# Nothing changes in the training code: every process runs the same command, and
# `jax.distributed.initialize()` with no arguments finds the others.
#
# ```sh
# gcloud compute tpus tpu-vm ssh my-slice --zone=ZONE --worker=all \
#   --command="jaxtour train --cluster --epochs=10"    # a TPU pod slice
# srun --nodes=2 --ntasks-per-node=8 --gpus-per-node=8 \
#   jaxtour train --cluster --epochs=10                # SLURM: one process per GPU
# ```

# %% [markdown] slideshow={"slide_type": "notes"}
# `initialize()` with no arguments reads a TPU slice's metadata, or SLURM's variables:
# there (JAX 0.10.2) each process sees one GPU, `local_device_ids=[SLURM_LOCALID]`, hence
# one task per GPU. No TPU slice or GPU cluster was used to write this;
# `docs/multiprocess.md` says what was tested.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: shard a batch
#
# Write `ex_batch_sharding(mesh)`: the `NamedSharding` that splits a batch of images
# `f32[B, 784]` over the mesh axis `"batch"`, one slice of whole images per device.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_batch_sharding(mesh):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_batch_sharding(mesh):
    return NamedSharding(mesh, P("batch"))


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>A <code>PartitionSpec</code> has one entry per
# dimension of the array: the mesh axis that dimension is split over.</details>
#
# <details><summary>Hint 2</summary>Dimension 0 holds the images; dimension 1, the
# pixels, stays whole.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_batch_sharding)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_batch_sharding, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/07_parallelism.ipynb`, or the Colab badge. Hint: a `NamedSharding` is a mesh
# and a `PartitionSpec` with one entry per dimension; only dimension 0 is split.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: a global mean in `shard_map`
#
# Write `ex_global_mean(x)`, the code of **one** device: `x` is its slice of a vector
# split over `"batch"`; return the mean of the **whole** vector, the same on every device.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_global_mean(x):
    ...  # your code here


# Try it on this lesson's mesh:
# jax.shard_map(ex_global_mean, mesh=batch_mesh, in_specs=P("batch"), out_specs=P())(
#     jnp.arange(4.0 * n))


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_global_mean(x):
    return jax.lax.psum(jnp.sum(x), "batch") / jax.lax.psum(x.size, "batch")


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary><code>jax.lax.psum(v, "batch")</code> adds up
# <code>v</code> over the devices and gives every device the total.</details>
#
# <details><summary>Hint 2</summary>The whole vector's mean is its total over its
# length: add up both over the devices. <code>jax.lax.psum(1, "batch")</code> counts the
# devices.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_global_mean)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_global_mean, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "notes"}
# About 6 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/07_parallelism.ipynb`, or the Colab badge. Hint: add up the sums with
# `psum`, and the element counts too (or `pmean` of the slices' means: `shard_map`
# slices are all one size).

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: read the all-reduces off the drawing
#
# Draw the data-parallel step's program:
# `draw_hlo(auto_update, max_depth=0)(params, images, labels, velocity)`.
# How many all-reduces does it hold for the six gradients and the loss? Write
# `ex_count_all_reduces()` returning that number.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_count_all_reduces():
    ...  # your answer here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_count_all_reduces():
    # the red boxes of this lesson's drawing: XLA combines the gradients and the loss
    # into fewer all-reduces (one on a CPU; another backend may make more)
    return count_dp["all-reduce"]


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Collectives are the red boxes, between the backward
# pass and the update.</details>

# %% slideshow={"slide_type": "skip"}
check(ex_count_all_reduces)

# %% tags=["check"] jupyter={"source_hidden": true}
assert ex_count_all_reduces() == count_dp["all-reduce"] >= 1
if all(d.platform == "cpu" for d in batch_mesh.devices.flat):  # the checker compiles
    assert check(ex_count_all_reduces, quiet=True).passed  # for 8 CPU devices, as here

# %% [markdown] slideshow={"slide_type": "notes"}
# About 4 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/07_parallelism.ipynb`, or the Colab badge. Hint: collectives are drawn red,
# between the backward pass and the update; on a CPU XLA bundles them into one
# (another backend may make more).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - drew sharded arrays on 8 devices; read `jax.typeof`;
# - ran the MLP step Auto, Explicit and Manual;
# - pinned an intermediate, mixed modes, donated the state;
# - saw `psum` without `pcast` give `n` times the gradient;
# - split the model too, on a 2-D mesh;
# - sharded the parameters (FSDP) and modelled its cost;
# - trained on every device, and over two processes.
