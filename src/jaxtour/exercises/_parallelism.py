"""Lesson 07's exercises: a batch's sharding, a global mean in `shard_map`, and the
all-reduces of the data-parallel step read off `draw_hlo`.

Every checker works with whatever devices the process has: the sharding is judged by
its `PartitionSpec` (on one device every spec holds the same single block), the
per-device mean runs under `jax.vmap` with an axis name, which gives `lax.psum` a
named axis of any size on one device, and the all-reduces are counted on the devices
lesson 07 uses (several accelerators, else the CPU devices).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxtour.exercises._expect import expect_returned, whole_number
from jaxtour.exercises._probes import vmapped
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._remote import in_answer

LESSON = "07_parallelism"
AXIS = "batch"
_ALL_REDUCE = re.compile(
    r" all-reduce(?:-start)?\("
)  # async pairs (GPU, TPU) count once


def lesson_devices() -> list:
    """The devices lesson 07 runs on: several accelerators, else the CPU devices."""
    found = jax.devices()
    return (
        found if len(found) > 1 and found[0].platform != "cpu" else jax.devices("cpu")
    )


def _spec(sharding: NamedSharding) -> tuple:
    # P("batch") and P("batch", None) say the same: drop trailing Nones
    entries = list(sharding.spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(entries)


def _sharding_facts(fn: Callable[..., Any]) -> dict[str, Any]:
    """What the answer makes of a one-axis mesh, as plain data (run where it runs): the
    type it returned, and for a `NamedSharding` its mesh, its spec, and the rows each
    device holds of a batch of 8 images per device."""
    devices = lesson_devices()
    mesh = jax.make_mesh((len(devices),), (AXIS,), devices=devices)
    got = fn(mesh)
    kind = "PartitionSpec" if isinstance(got, P) else type(got).__name__
    facts: dict[str, Any] = {"type": kind}
    if isinstance(got, NamedSharding):
        spec = _spec(got)
        facts.update(same_mesh=bool(got.mesh == mesh), spec=spec, shown=str(got.spec))
        if spec == (AXIS,):
            batch = jax.device_put(np.zeros((8 * len(devices), 784), np.float32), got)
            facts["rows"] = sorted({s.data.shape for s in batch.addressable_shards})
    return facts


@checks(LESSON, "ex_batch_sharding", title="shard a batch over the mesh")
def _check_batch_sharding(fn: Callable[..., Any]) -> None:
    """Practises choosing the `PartitionSpec` that splits a batch over a mesh axis."""
    facts = in_answer(fn, _sharding_facts)
    if facts["type"] == "PartitionSpec":
        raise Wrong(
            "you returned a `PartitionSpec`: it names mesh axes but no devices. "
            "Wrap it with the mesh: `NamedSharding(mesh, P(...))`."
        )
    if facts["type"] != "NamedSharding":
        raise Wrong(f"expected a `NamedSharding`, got {facts['type']}.")
    if facts["same_mesh"] is not True:
        raise Wrong(
            "the sharding is on another mesh: use the `mesh` the function is given."
        )
    spec = tuple(facts["spec"])
    if spec == ():
        raise Wrong(
            "`P()` replicates: every device would hold the whole batch. Name the "
            f'mesh axis for dimension 0, the images: `P("{AXIS}")`.'
        )
    if spec == (None, AXIS):
        raise Wrong(
            f'that splits dimension 1, the 784 pixels of each image, over "{AXIS}": '
            "each device would see a strip of every image. Split dimension 0."
        )
    if spec != (AXIS,):
        raise Wrong(
            f'expected dimension 0 split over "{AXIS}" and the pixels whole; '
            f"got {facts['shown']}."
        )
    rows = [tuple(r) for r in facts["rows"]]
    if rows != [
        (8, 784)
    ]:  # a guard on the spec test above: each device, 8 whole images
        raise Wrong(f"each device should hold 8 whole images; they hold {rows}.")


@checks(LESSON, "ex_global_mean", title="a global mean in `shard_map`")
def _check_global_mean(fn: Callable[..., Any]) -> None:
    """Practises per-device code with a collective: `lax.psum` turns local sums into a
    global mean."""
    for n_devices in (4, 2):  # a hard-coded device count is right for one of them only
        slices = (
            jnp.arange(n_devices * 6, dtype=jnp.float32).reshape(n_devices, 6) ** 1.5
        )
        want = float(jnp.mean(slices))
        # vmap with an axis name: lax.psum(..., "batch") adds over the n slices
        got = expect_returned(in_answer(fn, vmapped, slices, AXIS))
        if np.shape(got) != (n_devices,):
            raise Wrong(
                f"each device should return one number, the mean; with {n_devices} "
                f"devices the results have shape {np.shape(got)[1:]} each."
            )
        got = np.asarray(got, np.float64)
        if np.allclose(got, want, rtol=1e-5):
            continue
        where = f"with {n_devices} devices, slices of 6"
        if np.allclose(got, np.mean(slices, axis=1), rtol=1e-5):
            raise Wrong(
                f"{where}: each device returned the mean of its own slice. Add the "
                f'devices\' values with `lax.psum(..., "{AXIS}")`.'
            )
        if np.allclose(got, n_devices * want, rtol=1e-5):
            raise Wrong(
                f"{where}: {n_devices} times too big. A psum of the slices' means "
                f"adds {n_devices} means: divide by the number of devices, "
                f'`lax.psum(1, "{AXIS}")`.'
            )
        if np.allclose(got, float(jnp.sum(slices)), rtol=1e-5):
            raise Wrong(
                f"{where}: that is the sum of the whole vector; divide by the number "
                "of its elements."
            )
        if n_devices == 2:
            raise Wrong(
                "right with 4 devices, wrong with 2: count the devices with "
                f'`lax.psum(1, "{AXIS}")` rather than writing the number.'
            )
        raise Wrong(
            f"{where}: expected {want:.4f} on every device, got {got.round(4)}."
        )


_COUNT = """
from jaxtour.exercises import _parallelism
print(_parallelism.data_parallel_all_reduces())
"""


@functools.cache
def data_parallel_all_reduces() -> int:
    """The all-reduces in the compiled data-parallel MLP step on lesson 07's devices.

    With a single device there is nothing to add up, so the count is taken as the
    lesson takes it: in a fresh Python with 8 simulated CPU devices (JAX's devices are
    fixed once it has started, so this process cannot split its CPU any more). The
    devices being fixed, so is the count: it is worked out once per process, not on
    every check of a student's answer.
    """
    from jaxtour import mlp  # lazily: the mlp package is only needed by this check

    devices = lesson_devices()
    if len(devices) < 2:
        return _count_with_simulated_devices()
    mesh = mlp.data_mesh(devices)
    params = mlp.init_params(jax.random.key(0))
    velocity = jax.tree.map(jnp.zeros_like, params)
    x, y = jnp.zeros((8 * mesh.size, 784)), jnp.zeros(8 * mesh.size, jnp.int32)
    step: Any = mlp.data_parallel_update(mesh)  # a jitted function: it has .lower
    hlo = step.lower(params, x, y, velocity).compile().as_text()
    return len(_ALL_REDUCE.findall(hlo))


def _count_with_simulated_devices(n_devices: int = 8) -> int:
    import os
    import subprocess
    import sys

    prelude = f"import jax\njax.config.update('jax_num_cpu_devices', {n_devices})\n"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", prelude + _COUNT],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            "counting the all-reduces on 8 simulated CPU devices failed: "
            + proc.stderr.strip().splitlines()[-1]
        )
    return int(proc.stdout.split()[-1])


@checks(LESSON, "ex_count_all_reduces", title="all-reduces off `draw_hlo`", devices=8)
def _check_count_all_reduces(fn: Callable[..., Any]) -> None:
    """Practises reading the collectives of a compiled program off its drawing."""
    answer = fn()
    got = whole_number(answer)
    if got is None:
        raise Wrong(f"answer with a whole number, e.g. `return 3`; got {answer!r}.")
    want = data_parallel_all_reduces()
    if got == want:
        return
    raise Wrong(_count_feedback(got, want) + ELSEWHERE)


# The checker compiles for 8 CPU devices; a GPU or TPU notebook draws its own program.
ELSEWHERE = (
    " (This check counts the program compiled for 8 CPU devices: XLA may combine the "
    "gradients into another number of all-reduces on a GPU or TPU.)"
)


def _count_feedback(got: int, want: int) -> str:
    """Why `got` all-reduces is not the `want` the compiled data-parallel step holds."""
    if got <= 0:
        return (
            f"{got}: the gradients must be added up over the devices: there is at least "
            "one all-reduce between the backward pass and the update. Look again."
        )
    if got >= 6 > want:
        return (
            f"{got}: one per gradient (6 of them) and perhaps the loss would be natural, "
            "but XLA combines them into fewer. Count the red boxes."
        )
    if got == want + 1:
        return (
            f"{got}: did you give the loss an all-reduce of its own? Count the red "
            "boxes, not the values they add up: XLA bundles several into one."
        )
    return f"{got} is not what the drawing shows: count the red boxes (collectives)."
