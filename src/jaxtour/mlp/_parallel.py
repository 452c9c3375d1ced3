"""Data-parallel training: one program, every local device, each on a slice of the batch.

SPMD as JAX does it today: a 1-D `Mesh` of the devices with one axis, ``"batch"``;
the params (and the momentum) replicated on every device; each batch split along that
axis. `jax.jit` compiles one program for all of them and XLA inserts the all-reduce
that adds the devices' gradients. The mesh axis is `AxisType.Auto` (JAX's "Auto"
sharding mode): the shardings of the arguments are given to `jax.jit`, and the
compiler's propagation picks those of every intermediate. `psum_update` is the same
step written by hand with `jax.shard_map` and an explicit `jax.lax.psum`.

A global batch must split evenly: `batch_size` a multiple of the device count, or
a `ValueError` naming the nearest sizes that do (no silent adjustment, so the
trajectory stays that of single-device training with the same batch size).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from jaxtour.data import Mnist, load_mnist
from jaxtour.mlp._model import (
    LR,
    MOMENTUM,
    SIZES,
    Params,
    loss,
    update,
)
from jaxtour.mlp._train import (
    TRAIN_EVAL_SIZE,
    UNROLL,
    History,
    check_data_labels,
    check_schedule,
    compile_timed,
    describe_device,
    init_state,
    run_epochs,
    scan_epoch,
    scan_updates,
)

AXIS = "batch"
Devices = str | int | Sequence[jax.Device] | Mesh


def data_mesh(devices: Devices = "all", axis: str = AXIS) -> Mesh:
    """A 1-D mesh over the devices to train on, its one axis named `axis`.

    Args:
        devices: ``"all"`` (every local device of the default backend: the 8 chips of
            a TPU v5e-8, each GPU, or the simulated CPU devices; a Colab TPU runtime, a
            v5e-1, has one), a count (the first `n` of them), a list of `jax.Device`,
            or a 1-D `Mesh` (its devices and axis name kept, its axis made Auto:
            `jax.make_mesh` gives Explicit axes by default, and `psum_update`'s
            `shard_map` would then refuse a batch that is not already split).
        axis: the axis name the batch is split along.

    Raises:
        ValueError: a count below 1 or above the devices there are, or a mesh that is
            not 1-D.

    Example:
        >>> mesh = data_mesh(1)
        >>> dict(mesh.shape)
        {'batch': 1}
    """
    if isinstance(devices, Mesh):
        if devices.devices.ndim != 1:
            raise ValueError(
                f"Data parallelism needs a 1-D mesh; got axes {dict(devices.shape)}."
            )
        auto = (jax.sharding.AxisType.Auto,)
        return Mesh(devices.devices, devices.axis_names, axis_types=auto)
    found = jax.local_devices()
    if devices == "all":
        chosen = found
    elif isinstance(devices, int) and not isinstance(devices, bool):
        if devices < 1:
            raise ValueError(
                f"`devices` must be at least 1 (a count of devices to train on); got "
                f'{devices}. Pass "all" for every one of the {len(found)} JAX sees.'
            )
        chosen = found[:devices] if devices <= len(found) else _too_many(devices, found)
    elif isinstance(devices, Sequence) and devices and not isinstance(devices, str):
        chosen = list(devices)
    else:
        raise ValueError(
            f'`devices` must be "all", a count, a list of jax.Device or a Mesh; '
            f"got {devices!r}."
        )
    # Auto: the compiler propagates the shardings given to `jit` to every intermediate
    # (make_mesh's default since JAX 0.9 is Explicit: shardings in the types).
    auto = (jax.sharding.AxisType.Auto,)
    return jax.make_mesh((len(chosen),), (axis,), axis_types=auto, devices=chosen)


def _too_many(n: int, found: list) -> list:
    platform = found[0].platform
    hint = (
        (
            " To simulate more CPU devices, run jax.config.update('jax_num_cpu_devices', "
            f"{n}) right after `import jax`, before any computation."
        )
        if platform == "cpu"
        else ""
    )
    raise ValueError(
        f"Asked for {n} devices; JAX sees {len(found)} ({platform}).{hint}"
    )


def check_batch_size(batch_size: int, n_devices: int) -> None:
    """Check that a global batch of `batch_size` splits evenly over `n_devices`.

    Raises:
        ValueError: it does not; the message names the nearest sizes that do.

    Example:
        >>> check_batch_size(128, 8)
        >>> check_batch_size(100, 8)
        Traceback (most recent call last):
        ...
        ValueError: `batch_size` 100 does not split evenly over 8 devices: every device \
must get the same number of examples. Use 96 or 104 (a multiple of 8).
    """
    if batch_size % n_devices == 0:
        return
    below, above = (
        batch_size // n_devices * n_devices,
        -(-batch_size // n_devices) * n_devices,
    )
    sizes = f"{below} or {above}" if below else f"{above}"
    raise ValueError(
        f"`batch_size` {batch_size} does not split evenly over {n_devices} devices: every "
        f"device must get the same number of examples. Use {sizes} (a multiple of {n_devices})."
    )


def replicated(mesh: Mesh) -> NamedSharding:
    """Every device holds the whole array: how the params live."""
    return NamedSharding(mesh, P())


def batch_sharded(mesh: Mesh, axis: str = AXIS) -> NamedSharding:
    """Dimension 0 split along the mesh axis: device i holds the i-th slice of the batch."""
    return NamedSharding(mesh, P(axis))


def data_parallel_update(
    mesh: Mesh, *, lr: float = LR, momentum: float = MOMENTUM
) -> Callable[..., tuple[Params, Params, jax.Array]]:
    """As `update`, but jitted for `mesh`: params replicated, the batch split over devices.

    The code is `update`'s, unchanged: only the shardings are new. XLA sees that the
    gradient sums over a batch spread over the devices and inserts an all-reduce.

    Returns:
        ``step(params, x, y, velocity) -> (params, velocity, loss)``, x f32[batch, 784],
        y int[batch], with batch a multiple of the device count.
    """
    mesh = data_mesh(mesh)
    rep, split = replicated(mesh), batch_sharded(mesh, mesh.axis_names[0])
    step = functools.partial(update, lr=lr, momentum=momentum)
    return jax.jit(
        step, in_shardings=(rep, split, split, rep), out_shardings=(rep, rep, rep)
    )


def psum_update(
    mesh: Mesh, *, lr: float = LR, momentum: float = MOMENTUM
) -> Callable[..., tuple[Params, Params, jax.Array]]:
    """As `data_parallel_update`, written per device with `jax.shard_map` and `psum`.

    Each device sees its own slice of the batch, takes the gradient of its own mean
    loss, and `jax.lax.psum` adds the devices' gradients; divided by the device count,
    that is the gradient of the whole batch's mean loss (the slices are equal). The
    params are cast to varying (`jax.lax.pcast`) first: the gradient with respect to
    an invariant (replicated) value is already summed over the devices, and the
    `psum` would then count it `n` times.
    """
    mesh = data_mesh(mesh)
    axis = mesh.axis_names[0]
    n = mesh.shape[axis]

    def per_device(  # x: f32[batch / n, 784], this device's slice
        params: Params, x: jax.Array, y: jax.Array, velocity: Params
    ) -> tuple[Params, Params, jax.Array]:
        # The params are the same everywhere ("invariant"); each device's gradient is its
        # own ("varying") until the psum adds them.
        local = jax.lax.pcast(params, axis, to="varying")
        local_loss, grads = jax.value_and_grad(loss)(local, x, y)
        grads = jax.tree.map(lambda g: jax.lax.psum(g, axis) / n, grads)  # all-reduce
        velocity = jax.tree.map(lambda v, g: momentum * v + g, velocity, grads)
        params = jax.tree.map(lambda p, v: p - lr * v, params, velocity)
        return params, velocity, jax.lax.psum(local_loss, axis) / n

    mapped = jax.shard_map(
        per_device,
        mesh=mesh,
        in_specs=(P(), P(axis), P(axis), P()),
        out_specs=(P(), P(), P()),
    )
    return jax.jit(mapped)


def train_epoch_sharded(
    params: Params,
    velocity: Params,
    images: jax.Array,
    labels: jax.Array,
    key: jax.Array,
    *,
    mesh: Mesh,
    batch_size: int = 128,
    lr: float = LR,
    momentum: float = MOMENTUM,
    unroll: int = UNROLL,
) -> tuple[Params, Params, jax.Array]:
    """As `train_epoch`, with each batch's indices split over `mesh` (pure; jit it).

    The training set is on every device (u8, 47 MB for all of MNIST); the constraint on
    the shuffled indices makes each device gather and process only its own slice.
    """
    split = batch_sharded(mesh, mesh.axis_names[0])
    return scan_epoch(
        split, params, velocity, images, labels, key, batch_size, lr, momentum, unroll
    )


def compile_epoch_sharded(
    mesh: Mesh, params: Params, velocity: Params, *data: jax.Array, **hyper: Any
) -> tuple[Callable, float]:
    """`train_epoch_sharded` jitted for `mesh` (params donated), compiled ahead of time.

    The arguments after `mesh` are `compile_epoch`'s: params, velocity, then the
    images, labels and key (`data`), and the keywords of `train_epoch` (`hyper`).

    Returns:
        (the compiled epoch, taking `train_epoch`'s positional arguments; compile seconds).
    """
    rep = replicated(mesh)
    epoch = functools.partial(train_epoch_sharded, mesh=mesh, **hyper)
    jitted = jax.jit(epoch, in_shardings=rep, out_shardings=rep, donate_argnums=(0, 1))
    return compile_timed(jitted, params, velocity, *data)


def compile_epoch_of_batches(
    mesh: Mesh,
    params: Params,
    velocity: Params,
    xs: jax.Array,
    ys: jax.Array,
    *,
    lr: float = LR,
    momentum: float = MOMENTUM,
) -> tuple[Callable, float]:
    """An epoch over batches already laid out on `mesh`, jitted and compiled ahead of time.

    As `compile_epoch_sharded`, but the caller has gathered the epoch's batches itself:
    `xs` u8[steps, batch, 28, 28] and `ys` i32[steps, batch], split along dimension 1
    over the mesh's axis (a multi-process run feeds each process's own slice this way).
    Params and velocity are replicated and donated.

    Returns:
        (``epoch(params, velocity, xs, ys) -> (params, velocity, f32[steps] loss)``
        compiled; compile seconds).
    """
    rep = replicated(mesh)
    split = NamedSharding(mesh, P(None, mesh.axis_names[0]))  # [step, batch]
    step_split = batch_sharded(mesh, mesh.axis_names[0])

    def batch_of(batch: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        x, y = batch  # this step's batch, split over the devices as in `train`
        constrain = jax.lax.with_sharding_constraint
        return constrain(x, step_split), constrain(y, step_split)

    def epoch(
        params: Params, velocity: Params, xs: jax.Array, ys: jax.Array
    ) -> tuple[Params, Params, jax.Array]:
        return scan_updates(
            params,
            velocity,
            (xs, ys),
            batch_of,
            lr=lr,
            momentum=momentum,
            unroll=UNROLL,
        )

    jitted = jax.jit(
        epoch,
        in_shardings=(rep, rep, split, split),
        out_shardings=(rep, rep, rep),
        donate_argnums=(0, 1),
    )
    return compile_timed(jitted, params, velocity, xs, ys)


def train_data_parallel(
    data: Mnist | None = None,
    *,
    devices: Devices = "all",
    epochs: int = 10,
    batch_size: int = 128,
    lr: float = LR,
    momentum: float = MOMENTUM,
    seed: int = 0,
    sizes: tuple[int, ...] = SIZES,
    progress: bool = True,
    on_epoch: Callable[[int, History], None] | None = None,
) -> tuple[Params, History]:
    """As `train`, but data-parallel over `devices`: same seed, same losses, more devices.

    The params start as `train`'s do (same seed, same shuffles), live replicated on
    every device, and each global batch of `batch_size` is split over them. Each epoch
    is one compiled `lax.scan`; the gradient all-reduce is the only communication.
    Accuracy is measured on the first device, as `train` measures it.

    Args:
        data: an `Mnist` (or a `subset`); None calls `load_mnist()`.
        devices: see `data_mesh`: ``"all"``, a count, a list of devices or a 1-D mesh.
        epochs, batch_size, lr, momentum, seed, sizes, progress, on_epoch: as `train`;
            `batch_size` is the global batch, a multiple of the device count.

    Returns:
        (params, replicated on the mesh; `History`, its ``device`` naming the count).

    Raises:
        ValueError: `batch_size` does not split evenly over the devices (the message
            names the nearest sizes that do), too many devices, bad `epochs`, or a
            label in `data` that is not a class index.

    Example:
        >>> params, history = train_data_parallel(epochs=1)  # doctest: +SKIP
        >>> history.device  # doctest: +SKIP
        '8 × tpu: TPU v5 lite'
    """
    check_schedule(epochs, batch_size)
    mesh = data_mesh(devices)
    check_batch_size(batch_size, mesh.size)
    data = load_mnist() if data is None else data
    check_data_labels(data, sizes[-1])
    rep, first = replicated(mesh), mesh.devices.flat[0]
    train_x, train_y = jax.device_put(
        [np.asarray(data.train_images), np.asarray(data.train_labels, np.int32)], rep
    )
    test_x, test_y = jax.device_put(
        [np.asarray(data.test_images), np.asarray(data.test_labels, np.int32)], first
    )
    # as `train`: the same start, the same shuffles
    params, velocity, shuffle_key = init_state(seed, sizes, rep)
    run_epoch, compile_s = compile_epoch_sharded(
        mesh,
        params,
        velocity,
        train_x,
        train_y,
        shuffle_key,
        batch_size=batch_size,
        lr=lr,
        momentum=momentum,
    )
    history = History(
        compile_seconds=compile_s, device=f"{mesh.size} × {describe_device(first)}"
    )
    eval_set = jax.device_put(
        (train_x[:TRAIN_EVAL_SIZE], train_y[:TRAIN_EVAL_SIZE]), first
    )
    sets = ((train_x, train_y), eval_set, (test_x, test_y))
    state = (params, velocity, shuffle_key)
    bar = _epochs(epochs, progress)
    params = run_epochs(
        run_epoch,
        state,
        sets,
        history,
        bar,
        on_epoch,
        for_eval=lambda params: jax.device_put(params, first),
    )
    return params, history


def _epochs(epochs: int, progress: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(
        range(epochs),
        desc="training (data-parallel)",
        unit="epoch",
        disable=not progress,
    )
