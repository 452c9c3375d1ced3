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
# # 07 · Parallelism: one program, many devices
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/07_parallelism.ipynb)
#
# A Colab TPU has 8 cores, a workstation may have several GPUs, a laptop has one CPU. JAX
# runs the same program on all of them. You will see:
#
# - **SPMD** in plain words, and a **mesh**: the devices arranged in a grid with named axes;
# - **sharded arrays**, drawn: which device holds which block;
# - the MNIST MLP's training step made **data-parallel** by adding shardings to `jax.jit`,
#   and the **all-reduce** XLA inserts, found in the compiled HLO;
# - the same step written by hand with **`jax.shard_map`** and an explicit **`psum`**;
# - **`pmap`**, the old way, side by side;
# - training on every device following the single-device run: the same first steps,
#   the same epoch losses and accuracy;
# - where **several machines** (`jax.distributed.initialize`) take over.
#
# On a laptop the lesson simulates 8 CPU devices; on a TPU or several GPUs it uses them.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jax

# Split the CPU into 8 simulated devices. This must happen before JAX computes anything;
# it changes only the CPU backend, so a TPU's cores or your GPUs are used as they are.
try:
    jax.config.update("jax_num_cpu_devices", 8)
except RuntimeError:
    print("JAX had already started: restart the kernel and run this cell first.")

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## SPMD: a single program on multiple data
#
# JAX does not write one program per device. It compiles **one** program, and every
# device runs it on **its own slice** of the data. Where the maths needs data from other
# devices (a sum over the whole batch, say) the program holds a **collective**: an
# operation all devices take part in, such as an **all-reduce**, which adds up one value
# from each device and gives every device the total.
#
# You choose how arrays are split; who computes what follows. Three ways to say it:
#
# | | you write | collectives |
# |---|---|---|
# | `jax.jit` + shardings | single-device code, and where the data lives | XLA adds them |
# | `jax.shard_map` | the code for one device and its slice | you write them (`psum`) |
# | `jax.pmap` (old) | one device's code; a leading axis of size n | you write them |
#
# First, the devices. With several accelerators we use them; with one (a laptop, a
# single-GPU Colab) we use the 8 simulated CPU devices, so there is something to share.

# %%
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

devices = jax.devices() if jax.device_count() > 1 else jax.devices("cpu")
n = len(devices)
print(f"{n} {devices[0].platform.upper()} devices:", devices)
assert n > 1, "Only one device: restart the kernel and run the set-up cell first."

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A mesh: the devices in a grid, with names for its axes
#
# `jax.make_mesh` lays the devices out in a grid and names each axis. Names, not numbers,
# are how we later say "split the batch along `x`". With 8 devices: 4 rows by 2 columns.
# (`AxisType.Auto` lets the compiler decide how the devices communicate.)

# %%
rows = n // 2 if n % 2 == 0 else n
mesh = jax.make_mesh((rows, n // rows), ("x", "y"), axis_types=(AxisType.Auto,) * 2,
                     devices=devices)
print(mesh)
assert dict(mesh.shape) == {"x": rows, "y": n // rows}
assert mesh.size == n

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A sharded array, drawn
#
# A `NamedSharding(mesh, P("x", "y"))` says: split dimension 0 along mesh axis `x`,
# dimension 1 along `y`. `jax.device_put` moves the array there. It is still *one* array
# to your code; each device holds one block of it, and `draw_sharding` shows which.

# %%
from jaxtour.viz import draw_sharding

x = jnp.arange(2 * rows * 4.0).reshape(2 * rows, 4)  # f32[8, 4] with 8 devices
x_sharded = jax.device_put(x, NamedSharding(mesh, P("x", "y")))

block = (x.shape[0] // rows, x.shape[1] // (n // rows))
for shard in x_sharded.addressable_shards:
    assert shard.data.shape == block
    np.testing.assert_array_equal(shard.data, x[shard.index])  # the block it claims to be
assert {s.device for s in x_sharded.addressable_shards} == set(devices)  # one block each
draw_sharding(x_sharded)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Leave an axis out and the block is copied along it
#
# `P("x")` splits the rows along `x` and says nothing about `y`: each block is then
# **replicated** on every device of its row of the mesh, drawn striped in their colours.
# `P()` says nothing at all: every device holds the whole array. That is how the MLP's
# parameters will live.

# %%
x_rows = jax.device_put(x, NamedSharding(mesh, P("x")))
copies = {}
for shard in x_rows.addressable_shards:
    copies.setdefault(str(shard.index), []).append(shard.device.id)
assert len(copies) == rows and all(len(c) == n // rows for c in copies.values())
assert jax.device_put(x, NamedSharding(mesh, P())).is_fully_replicated
draw_sharding(x_rows)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Computing on sharded arrays
#
# Code written for one device runs unchanged. An elementwise operation needs no other
# device's data: each device computes its own block, and the result keeps the layout.
# A sum over the whole array does need them: each device adds up its block, then
# **all-reduces** add the partial sums, here one along each mesh axis (`replica_groups`
# names it: `axis_0` is `x`, `axis_1` is `y`). They are there in the compiled program.

# %%
y_sharded = jnp.sin(x_sharded) * 2
assert y_sharded.sharding.spec == P("x", "y")

import re

# on CPU an all-reduce is one op; GPUs and TPUs run it asynchronously, as all-reduce-start
# (the data leaves) and all-reduce-done (the sum arrives): we count the starts.
ALL_REDUCE = re.compile(r" all-reduce(?:-start)?\(")

total = jax.jit(jnp.sum)
hlo = total.lower(x_sharded).compile().as_text()
for line in hlo.splitlines():
    if ALL_REDUCE.search(line):
        print(line.strip().split(", use_global")[0])
assert len(ALL_REDUCE.findall(hlo)) >= 1
assert "all-reduce" not in total.lower(x).compile().as_text()  # one device: no collective
np.testing.assert_allclose(total(x_sharded), x.sum())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The data-parallel MLP step
#
# Data parallelism: every device holds the whole model and a slice of the batch. We use
# a 1-D mesh with one axis, `batch` (`jaxtour.mlp.data_mesh`), the real MNIST images, and
# the MNIST MLP of `jaxtour.mlp`. Each device gets `batch_size / n` images.

# %%
from jaxtour import mlp, paths

data = mlp.load_mnist(progress=False)
batch_mesh = mlp.data_mesh(devices)
replicated = NamedSharding(batch_mesh, P())
split = NamedSharding(batch_mesh, P("batch"))

images, labels = mlp.example_batch(16 * n, data)  # f32[16n, 784], i32[16n]
params = mlp.init_params(jax.random.key(0))
velocity = jax.tree.map(jnp.zeros_like, params)
images_split = jax.device_put(images, split)
assert {s.data.shape for s in images_split.addressable_shards} == {(16, 784)}
draw_sharding(images_split)

# %% [markdown] slideshow={"slide_type": "subslide"}
# The step is `mlp.update`, **unchanged**. Only `jax.jit` learns where things live: the
# params and the momentum replicated, the images and labels split along `batch`. The loss
# is a mean over the whole batch, so its gradient needs every device's images; XLA sees
# that and adds an all-reduce. Nothing else crosses between devices.

# %%
dp_update = jax.jit(mlp.update, in_shardings=(replicated, split, split, replicated),
                    out_shardings=(replicated, replicated, replicated))
compiled = dp_update.lower(params, images, labels, velocity).compile()
hlo = compiled.as_text()
all_reduces = [line.strip() for line in hlo.splitlines() if ALL_REDUCE.search(line)]
print(f"{len(all_reduces)} all-reduce:", all_reduces[0][:110], "...")
assert len(all_reduces) == 1  # XLA bundles every gradient (and the loss) into one
assert "all-reduce" not in jax.jit(mlp.update).lower(params, images, labels, velocity) \
    .compile().as_text()

with jax.default_matmul_precision("highest"):  # float32 matmuls on TPU/GPU too
    new_params, _, batch_loss = dp_update(params, images, labels, velocity)
    one_params, _, one_loss = jax.jit(mlp.update)(params, images, labels, velocity)
np.testing.assert_allclose(batch_loss, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(new_params), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
assert new_params["hidden1"]["w"].sharding.is_fully_replicated

# %% [markdown] slideshow={"slide_type": "subslide"}
# The compiled program is the program **one** device runs: its inputs are per-device
# slices (`f32[16,784]`, not the whole batch), and the all-reduce, in red, joins the
# gradients between the backward pass and the update. (`max_depth=0` keeps each fusion
# closed, one box, so the picture fits a slide.)

# %%
from jaxtour.viz import draw_hlo

hlo_picture = draw_hlo(dp_update, max_depth=0)(params, images, labels, velocity)
assert "1 collective" in hlo_picture.title
hlo_picture

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The same step by hand: `shard_map` and `psum`
#
# `jax.shard_map` turns it around: you write what **one** device does with **its** slice
# (`in_specs` say how arguments are split, `out_specs` how results are put together), and
# you write the communication yourself. Each device takes the gradient of its own
# slice's loss; `jax.lax.psum` adds the devices' gradients (the all-reduce); dividing by
# `n` gives the mean over the whole batch, since the slices are equal.
#
# `shard_map` tracks which values differ from device to device. The params arrive the
# same everywhere; `pcast(..., to="varying")` says "from here on, this device's copy is
# its own", so the gradient stays local until our `psum`.

# %%
def per_device(params, x, y, velocity, lr=mlp.LR, momentum=mlp.MOMENTUM):
    """One device: x f32[batch / n, 784], its slice; params and velocity, whole."""
    local = jax.lax.pcast(params, "batch", to="varying")
    loss, grads = jax.value_and_grad(mlp.loss)(local, x, y)
    grads = jax.tree.map(lambda g: jax.lax.psum(g, "batch") / n, grads)  # all-reduce
    velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
    params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)
    return params, velocity, jax.lax.psum(loss, "batch") / n


sm_update = jax.jit(jax.shard_map(
    per_device, mesh=batch_mesh,
    in_specs=(P(), P("batch"), P("batch"), P()), out_specs=(P(), P(), P())))

with jax.default_matmul_precision("highest"):
    sm_params, _, sm_loss = sm_update(params, images, labels, velocity)
np.testing.assert_allclose(sm_loss, one_loss, rtol=1e-5)
for a, b in zip(jax.tree.leaves(sm_params), jax.tree.leaves(one_params), strict=True):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
sm_hlo = sm_update.lower(params, images, labels, velocity).compile().as_text()
assert len(ALL_REDUCE.findall(sm_hlo)) == 1  # our psums, bundled into one all-reduce
print("shard_map + psum: the same step, the same single all-reduce")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `pmap`: how it was done before
#
# Until 2023, data parallelism meant `jax.pmap`: the arrays carry a leading axis of
# size *number of devices*, one slice per device, and a named axis for the collectives
# (`pmean` = `psum / n`). It still runs, but since JAX 0.8 it is built on `jit` and
# `shard_map`, is in maintenance mode, and new code should use the two above. Side by
# side, the gradient step:
#
# ```python
# # then: pmap                                   # now: shard_map
# jax.pmap(step, axis_name="batch",              jax.shard_map(step, mesh=mesh,
#          in_axes=(None, 0, 0))(                    in_specs=(P(), P("batch"), P("batch")),
#     params, x.reshape(n, -1, 784),                 out_specs=P())(params, x, y)
#     y.reshape(n, -1))
# ```

# %%
import warnings


def pmap_grads(params, x, y):
    return jax.lax.pmean(jax.grad(mlp.loss)(params, x, y), "batch")


if hasattr(jax, "pmap"):  # it may leave a future JAX; the cell then says so
    with warnings.catch_warnings(record=True) as caught, \
            jax.default_matmul_precision("highest"):
        warnings.simplefilter("always")
        stacked = jax.pmap(pmap_grads, axis_name="batch", in_axes=(None, 0, 0),
                           devices=devices)(params, images.reshape(n, -1, 784),
                                            labels.reshape(n, -1))
        reference = jax.jit(jax.grad(mlp.loss))(params, images, labels)
    print("warnings:", [str(w.message)[:80] for w in caught] or "none")
    # one copy of the gradient per device, on a leading axis of size n
    assert stacked["output"]["w"].shape == (n, *params["output"]["w"].shape)
    for a, b in zip(jax.tree.leaves(stacked), jax.tree.leaves(reference), strict=True):
        np.testing.assert_allclose(a[0], b, rtol=1e-4, atol=1e-6)
else:
    print("This JAX has no jax.pmap any more: use jax.shard_map, as above.")

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Training on every device follows the run on one
#
# `mlp.train_data_parallel` is `mlp.train` with the step above: the same seed, the same
# initial weights, the same shuffles, each batch split over the devices. The only
# difference is the order in which float32 partial sums are added, so the first steps'
# losses agree to float32 rounding. SGD then amplifies those rounding differences,
# as it amplifies any small change, so late in a long run the two batch-loss curves part
# ways while their epoch means and test accuracy stay together: two equally good runs.
# A batch size must split evenly: 128 over 8 devices is 16 each.

# %%
n_train = 4096 if paths.quick() else 60_000
epochs = 2 if paths.quick() else 3
subset = data.subset(n_train, 2000)
settings = dict(epochs=epochs, batch_size=128, seed=0, progress=False)

with jax.default_matmul_precision("highest"):
    _, one = mlp.train(subset, device=devices[0], **settings)
    _, many = mlp.train_data_parallel(subset, devices=devices, **settings)

first = 10  # steps before SGD has amplified the rounding differences
gap = np.max(np.abs(np.array(many.batch_loss[:first]) - one.batch_loss[:first])
             / np.array(one.batch_loss[:first]))
print(f"1 device ({one.device}): test accuracy {one.test_accuracy[-1]:.3f}, "
      f"epoch mean losses {np.round(one.loss, 4)}")
print(f"{many.device}: test accuracy {many.test_accuracy[-1]:.3f}, "
      f"epoch mean losses {np.round(many.loss, 4)}")
print(f"largest relative difference in the first {first} batch losses: {gap:.1e}")
np.testing.assert_allclose(many.batch_loss[:first], one.batch_loss[:first], rtol=1e-4)
np.testing.assert_allclose(many.loss, one.loss, rtol=0.05)
assert abs(many.test_accuracy[-1] - one.test_accuracy[-1]) < 0.01
assert many.test_accuracy[-1] > 0.85

# %%
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(8, 3.5))
ax.plot(one.batch_loss, lw=4, alpha=0.4, label=f"1 device ({one.device})")
ax.plot(many.batch_loss, lw=1.2, color="black", label=f"{many.device}, data-parallel")
ax.set(xlabel="step", ylabel="batch loss", yscale="log",
       title="Data-parallel training follows the single-device trajectory")
ax.legend()
plt.show()

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A batch that does not split
#
# Every device must get the same number of examples. Rather than silently change your
# batch size (and with it the training), jaxtour stops and names the nearest sizes that
# work.

# %%
message = ""
try:
    mlp.train_data_parallel(subset, devices=devices, epochs=1, batch_size=8 * n + 4)
except ValueError as err:
    message = str(err)
print(message)
assert f"Use {8 * n} or {9 * n} (a multiple of {n})" in message

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### How fast?
#
# Simulated CPU devices share the same cores, so on a laptop 8 of them are not faster
# than 1: there the point is the program, not the speed. `benchmarks/data_parallel.py`
# measures steps per second for 1, 2, 4 and 8 simulated devices, each count in its own
# process, and a GPU when there is one.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Beyond one machine
#
# Everything above used the devices of **one** process. A TPU pod slice or a GPU cluster
# runs one Python process per host, and each starts with:
#
# ```python
# jax.distributed.initialize()   # finds the other processes (TPU, SLURM, ... or given)
# ```
#
# After that `jax.devices()` lists the devices of *every* host and `jax.local_devices()`
# those of this one; a mesh over `jax.devices()` spans the machines, and the same `jit`
# with shardings or `shard_map` runs unchanged, the all-reduce now crossing the network.
# Each process loads only its own part of the data and hands it over with
# `jax.make_array_from_process_local_data`. Here there is one process:

# %%
print(f"process {jax.process_index()} of {jax.process_count()}, "
      f"{jax.local_device_count()} local devices")
assert jax.process_count() == 1 and jax.process_index() == 0

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - simulated 8 devices on one CPU (`jax_num_cpu_devices`), or used a TPU's cores or GPUs;
# - arranged them in a `Mesh` with named axes and drew sharded arrays: split, replicated;
# - saw that code written for one device runs on sharded arrays, with an all-reduce
#   where a sum needs every device;
# - made the MLP step data-parallel with shardings alone, and found XLA's one all-reduce
#   in the compiled HLO;
# - wrote the same step with `shard_map` and an explicit `psum`, and met `pmap`, the old way;
# - trained on every device and followed the single-device run: the first steps to
#   float32 rounding, then the same epoch losses and accuracy as SGD amplified it;
# - saw where `jax.distributed.initialize` takes over beyond one machine.
