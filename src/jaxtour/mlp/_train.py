"""Training: data on the device once, one jitted `lax.scan` per epoch, donated params.

The pieces are separate so that other placements (several devices, a mesh) can reuse
them: `batch_indices` (the shuffle), `train_epoch` (the scan over `update`),
`compile_epoch` (jit + donation, timed), `evaluate`, and `train`, which strings them
together on one device.

Speed on a CPU, measured with jaxlib 0.10.2 on 2 Zen 3 cores (benchmarks/mlp_ladder.py):
an epoch of 468 steps takes 1.0 to 1.3 s, 55 to 75 % of the rate XLA reaches on one big
2048x2048 matmul; batch-128 matmuls cannot keep a CPU as busy (a scan of the step's eight
matmuls alone, nothing else, is no faster). No XLA_FLAGS are set: the alternatives tried
(XNNPACK or YNNPACK for every dot, none of them) were no faster, and flags would silently
change what a user's own JAX does. The scan is unrolled 4 steps at a time (`UNROLL`): on
an H100 that takes an epoch from 21 to 18 ms, since a GPU pays for every trip round a
loop; on a CPU it costs nothing measurable.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np

from jaxtour.data import Mnist, load_mnist
from jaxtour.mlp._model import (
    LR,
    MOMENTUM,
    SIZES,
    Params,
    accuracy,
    check_labels,
    init_params,
    preprocess,
    update,
)

PLATFORMS = ("cpu", "gpu", "tpu")
UNROLL = 4  # scan steps per loop trip: fewer trips for a GPU or TPU to pay for
TRAIN_EVAL_SIZE = 10_000  # training accuracy is measured on this many training images


@dataclass
class History:
    """What `train` measured, one entry per epoch (``batch_loss``: one per step)."""

    loss: list[float] = field(default_factory=list)  # mean training loss of the epoch
    train_accuracy: list[float] = field(
        default_factory=list
    )  # on TRAIN_EVAL_SIZE images
    test_accuracy: list[float] = field(default_factory=list)
    epoch_seconds: list[float] = field(default_factory=list)  # compile excluded
    batch_loss: list[float] = field(default_factory=list)
    compile_seconds: float = 0.0
    device: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def resolve_device(device: str | jax.Device | None = None) -> jax.Device:
    """The device to train on: JAX's default, a `jax.Device`, or a platform name.

    Raises:
        ValueError: the platform is unknown, or not present here; the message lists
            the platforms that are.
    """
    if device is None:
        return jax.devices()[0]
    if isinstance(device, jax.Device):
        return device
    name = {"cuda": "gpu", "rocm": "gpu"}.get(str(device).lower(), str(device).lower())
    if name not in PLATFORMS:
        raise ValueError(
            f"`device` must be one of {', '.join(PLATFORMS)}; got {device!r}."
        )
    try:
        return jax.devices(name)[0]
    except RuntimeError:
        present = ", ".join(
            f"{p} ({n} device{'s' * (n != 1)})" for p, n in _platforms().items()
        )
        raise ValueError(
            f"No {name.upper()} here: JAX sees {present}. Run on one of those (e.g. "
            f"--device {next(iter(_platforms()))}), or install the JAX build for your {name} "
            "(https://docs.jax.dev/en/latest/installation.html)."
        ) from None


def describe_device(device: jax.Device) -> str:
    """ "cpu", or the platform and the kind, e.g. "gpu: NVIDIA H100 80GB HBM3"."""
    kind = device.device_kind
    return (
        device.platform
        if kind.lower() == device.platform
        else f"{device.platform}: {kind}"
    )


def _platforms() -> dict[str, int]:
    found = {}
    for platform in PLATFORMS:
        with contextlib.suppress(RuntimeError):
            found[platform] = len(jax.devices(platform))
    return found


def batch_indices(key: jax.Array, n: int, batch_size: int) -> jax.Array:
    """A shuffled epoch as i32[n // batch_size, batch_size] indices; the rest is dropped."""
    steps = n // batch_size
    if steps < 1:
        raise ValueError(
            f"`batch_size` {batch_size} is larger than the {n} training images."
        )
    return jr.permutation(key, n)[: steps * batch_size].reshape(steps, batch_size)


def train_epoch(
    params: Params,
    velocity: Params,
    images: jax.Array,
    labels: jax.Array,
    key: jax.Array,
    *,
    batch_size: int = 128,
    lr: float = LR,
    momentum: float = MOMENTUM,
    unroll: int = UNROLL,
) -> tuple[Params, Params, jax.Array]:
    """One epoch as a `lax.scan` of `update` over shuffled batches (pure; jit it).

    Args:
        params, velocity: the model and its momentum.
        images: u8[n, 28, 28] training images, already on the device.
        labels: i32[n].
        key: shuffles this epoch.
        unroll: steps per trip round the compiled loop; the same numbers for any value.

    Returns:
        (params, velocity, f32[steps] loss of each batch).
    """
    return scan_epoch(
        None, params, velocity, images, labels, key, batch_size, lr, momentum, unroll
    )


def scan_epoch(
    split: jax.sharding.Sharding | None,
    params: Params,
    velocity: Params,
    images: jax.Array,
    labels: jax.Array,
    key: jax.Array,
    batch_size: int,
    lr: float,
    momentum: float,
    unroll: int,
) -> tuple[Params, Params, jax.Array]:
    """`train_epoch` and `train_epoch_sharded`'s epoch: the shuffle, then the scan.

    Args:
        split: the sharding each batch's indices are constrained to (the data-parallel
            epoch's: split over the devices, so that each gathers and processes only its
            own slice), or None to leave their placement to XLA.
        params, velocity, images, labels, key, batch_size, lr, momentum, unroll: as
            `train_epoch`.
    """
    order = batch_indices(key, images.shape[0], batch_size)

    def batch_of(idx: jax.Array) -> tuple[jax.Array, jax.Array]:
        if split is not None:
            idx = jax.lax.with_sharding_constraint(idx, split)
        return images[idx], labels[idx]

    return scan_updates(
        params, velocity, order, batch_of, lr=lr, momentum=momentum, unroll=unroll
    )


def scan_updates(
    params: Params,
    velocity: Params,
    batches: Any,
    batch_of: Callable[[Any], tuple[jax.Array, jax.Array]],
    *,
    lr: float,
    momentum: float,
    unroll: int,
) -> tuple[Params, Params, jax.Array]:
    """The one training scan: `update` on each batch, in order, as one `lax.scan`.

    Every epoch in jaxtour is this scan: one device's (`train_epoch`), every local
    device's (`train_epoch_sharded`) and each process's in a multi-process run.

    Args:
        batches: what the scan walks, one leading-axis entry per step: the shuffled
            indices (u32[steps, batch]), or the batches themselves.
        batch_of: one entry of `batches` -> (u8 images [batch, 28, 28], i32 labels).

    Returns:
        (params, velocity, f32[steps] loss of each batch).
    """

    def step(carry: tuple[Params, Params], entry: Any) -> tuple[Any, jax.Array]:
        params, velocity = carry
        x, y = batch_of(entry)
        params, velocity, batch_loss = update(
            params, preprocess(x), y, velocity, lr=lr, momentum=momentum
        )
        return (params, velocity), batch_loss

    (params, velocity), losses = jax.lax.scan(
        step, (params, velocity), batches, unroll=unroll
    )
    return params, velocity, losses


def compile_epoch(
    params: Params,
    velocity: Params,
    images: jax.Array,
    labels: jax.Array,
    key: jax.Array,
    **hyper: Any,
) -> tuple[Callable, float]:
    """`train_epoch` jitted with params and velocity donated, compiled ahead of time.

    Returns:
        (the compiled epoch, with `train_epoch`'s positional arguments; seconds spent
        tracing, lowering and compiling).
    """
    jitted = jax.jit(functools.partial(train_epoch, **hyper), donate_argnums=(0, 1))
    return compile_timed(jitted, params, velocity, images, labels, key)


def compile_timed(jitted: Any, *args: Any) -> tuple[Callable, float]:
    """`jitted` lowered for `args` and compiled ahead of time; the seconds that took."""
    start = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    return compiled, time.perf_counter() - start


@jax.jit
def evaluate(params: Params, images: jax.Array, labels: jax.Array) -> jax.Array:
    """Accuracy on u8[n, 28, 28] images and their labels, in one jitted call."""
    return accuracy(params, preprocess(images), labels)


def train(
    data: Mnist | None = None,
    *,
    epochs: int = 10,
    batch_size: int = 128,
    lr: float = LR,
    momentum: float = MOMENTUM,
    seed: int = 0,
    device: str | jax.Device | None = None,
    sizes: tuple[int, ...] = SIZES,
    progress: bool = True,
    on_epoch: Callable[[int, History], None] | None = None,
) -> tuple[Params, History]:
    """Train the MLP on MNIST with SGD + momentum; return its params and a `History`.

    The data go to the device once (as uint8); each epoch is one compiled call: a
    `lax.scan` over shuffled batches (`jax.random`, a fresh key per epoch) with the
    params' buffers donated, so nothing leaves the device until the epoch ends.

    Args:
        data: an `Mnist` (or a `subset` of one); None calls `load_mnist()`.
        epochs, batch_size, lr, momentum: the usual; a last partial batch is dropped.
        seed: for the initial weights and every shuffle.
        device: ``"cpu"``, ``"gpu"``, ``"tpu"`` or a `jax.Device`; None is JAX's default.
        sizes: layer widths, input to classes.
        progress: show a progress bar over epochs (notebook-aware).
        on_epoch: called as ``on_epoch(epoch, history)`` after each epoch.

    Returns:
        (params on the device, `History`).

    Raises:
        ValueError: an unknown or absent `device`, a bad `epochs` / `batch_size`, or a
            label in `data` that is not a class index (0 to ``sizes[-1] - 1``).

    Example:
        >>> params, history = train(epochs=10, seed=0)  # doctest: +SKIP
        >>> history.test_accuracy[-1] > 0.98  # doctest: +SKIP
        True
    """
    check_schedule(epochs, batch_size)
    target = resolve_device(device)
    data = load_mnist() if data is None else data
    check_data_labels(data, sizes[-1])
    train_x, train_y, test_x, test_y = _to_device(data, target)
    params, velocity, shuffle_key = init_state(seed, sizes, target)
    hyper = dict(batch_size=batch_size, lr=lr, momentum=momentum)
    run_epoch, compile_s = compile_epoch(
        params, velocity, train_x, train_y, shuffle_key, **hyper
    )
    history = History(compile_seconds=compile_s, device=describe_device(target))
    eval_set = (train_x[:TRAIN_EVAL_SIZE], train_y[:TRAIN_EVAL_SIZE])
    sets = ((train_x, train_y), eval_set, (test_x, test_y))
    bar = _progress_bar(epochs, progress)
    state = (params, velocity, shuffle_key)
    return run_epochs(run_epoch, state, sets, history, bar, on_epoch), history


def check_schedule(epochs: int, batch_size: int) -> None:
    """Raise a `ValueError` unless `epochs` >= 0 and `batch_size` >= 1."""
    if epochs < 0 or batch_size < 1:
        raise ValueError(
            f"`epochs` must be >= 0 and `batch_size` >= 1; got {epochs}, {batch_size}."
        )


def check_data_labels(data: Mnist, n_classes: int) -> None:
    """`check_labels` on the training and test labels of `data`, before any work."""
    check_labels(data.train_labels, n_classes, "data.train_labels")
    check_labels(data.test_labels, n_classes, "data.test_labels")


def init_state(
    seed: int, sizes: tuple[int, ...], place: jax.Device | jax.sharding.Sharding
) -> tuple[Params, Params, jax.Array]:
    """(params, velocity, shuffle key) from `seed`: the params and their zero momentum
    on `place` (a device or a sharding); the key that every epoch's shuffle folds in.
    """
    init_key, shuffle_key = jr.split(jr.key(seed))
    params = jax.device_put(init_params(init_key, sizes), place)
    return params, jax.tree.map(jnp.zeros_like, params), shuffle_key


def run_epochs(
    run_epoch: Callable,
    state: tuple[Params, Params, jax.Array],
    sets: Sequence[tuple[jax.Array, jax.Array]],
    history: History,
    bar: Any,
    on_epoch: Callable[[int, History], None] | None = None,
    for_eval: Callable[[Params], Params] = lambda params: params,
) -> Params:
    """The epoch loop `train` and `train_data_parallel` share: run each compiled epoch
    (a fresh shuffle key each time), record its time, losses and accuracies in `history`.

    `state` is (params, velocity, shuffle key); `sets`, the (images, labels) of the
    training, training-accuracy and test sets. `for_eval` moves the params to where the
    last two live (data-parallel training measures accuracy on its first device).
    """
    params, velocity, shuffle_key = state
    train_set, eval_set, test_set = sets
    for epoch in bar:
        start = time.perf_counter()
        params, velocity, losses = run_epoch(
            params, velocity, *train_set, jr.fold_in(shuffle_key, epoch)
        )
        losses = np.asarray(losses)  # waits for the epoch to finish
        history.epoch_seconds.append(time.perf_counter() - start)
        history.batch_loss += losses.tolist()
        history.loss.append(float(losses.mean()))
        evaluated = for_eval(params)
        history.train_accuracy.append(float(evaluate(evaluated, *eval_set)))
        history.test_accuracy.append(float(evaluate(evaluated, *test_set)))
        bar.set_postfix(
            loss=f"{history.loss[-1]:.4f}", test_acc=f"{history.test_accuracy[-1]:.4f}"
        )
        if on_epoch is not None:
            on_epoch(epoch, history)
    return params


def _to_device(data: Mnist, device: jax.Device) -> list[jax.Array]:
    """The four arrays on `device`, once: images stay uint8 (a quarter of float32)."""
    arrays = [
        np.asarray(data.train_images),
        np.asarray(data.train_labels, np.int32),
        np.asarray(data.test_images),
        np.asarray(data.test_labels, np.int32),
    ]
    return jax.device_put(arrays, device)


def _progress_bar(epochs: int, progress: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(range(epochs), desc="training", unit="epoch", disable=not progress)
