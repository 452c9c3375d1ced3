"""The training inside one process of a multi-process run, once it has joined the others
(`_spmd.start`): one mesh over every process's devices, this process's slice of each
batch fed in (`jax.make_array_from_process_local_data`), and the epoch `jaxtour.mlp`'s
own scan (`scan_updates`) of those batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jaxtour.launch._config import TrainConfig

if TYPE_CHECKING:
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding

# For the programs process 1 compiles at every launch (the start, run once, and the
# shuffle, once an epoch), on CPU: LLVM's cheapest pipeline (XLA's option;
# other backends compile them as they are).
QUICK_COMPILE: dict[str, str | bool] = {"xla_backend_optimization_level": "0"}


def train(config: TrainConfig, details: bool = False) -> dict:
    """Train as `train_data_parallel` does, over every process's devices."""
    import jax
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from jaxtour import mlp
    from jaxtour.data import load_mnist

    mesh = mlp.data_mesh(jax.devices())  # every process's, in process order
    _connect(mesh)
    rank, count = jax.process_index(), jax.process_count()
    mlp.check_batch_size(config.batch_size, mesh.size)
    n_local = jax.local_device_count()
    print(f"process {rank} of {count}: {n_local} of {mesh.size} devices", flush=True)
    data = load_mnist(config.data_dir, progress=False).subset(
        config.train_size, config.test_size
    )
    images = np.asarray(data.train_images)
    labels = np.asarray(data.train_labels, np.int32)
    start, shuffle = _programs(config.seed, len(images), config.batch_size)
    rep = mlp.replicated(mesh)
    host_params, shuffle_key = start()  # `train`'s start, to a few ulp
    params = jax.tree.map(lambda a: _global(np.asarray(a), rep), host_params)
    velocity = jax.tree.map(lambda a: _global(np.zeros_like(a), rep), params)
    split = NamedSharding(
        mesh, P(None, mesh.axis_names[0])
    )  # [step, batch]: batch split
    width = config.batch_size // count  # this process's share of every batch

    def local_epoch(
        epoch: int,
    ) -> list[jax.Array]:  # only this process's slice of every batch
        order = np.asarray(shuffle(shuffle_key, epoch))
        mine = order[:, rank * width : (rank + 1) * width]
        shape = (order.shape[0], config.batch_size)
        return [
            jax.make_array_from_process_local_data(split, a[mine], shape + a.shape[1:])
            for a in (images, labels)
        ]

    first = local_epoch(0)
    run_epoch, compile_s = mlp.compile_epoch_of_batches(
        mesh, params, velocity, *first, lr=config.lr, momentum=config.momentum
    )
    local = jax.local_devices()[0]
    kind = f"{count} processes × {n_local} {mlp.describe_device(local)}"
    history = mlp.History(compile_seconds=compile_s, device=kind)
    evals = [
        jax.device_put(s, local)
        for s in [
            (images[: mlp.TRAIN_EVAL_SIZE], labels[: mlp.TRAIN_EVAL_SIZE]),
            (np.asarray(data.test_images), np.asarray(data.test_labels, np.int32)),
        ]
    ]
    for epoch in range(config.epochs):
        begin = time.perf_counter()
        params, velocity, losses = run_epoch(params, velocity, *local_epoch(epoch))
        losses = np.asarray(losses.addressable_data(0))  # waits for the epoch
        history.epoch_seconds.append(time.perf_counter() - begin)
        history.batch_loss += losses.tolist()
        history.loss.append(float(losses.mean()))
        if rank == 0:  # accuracy on this process's first device, as `train` measures it
            mine = jax.tree.map(lambda a: a.addressable_data(0), params)
            for record, (x, y) in zip(
                [history.train_accuracy, history.test_accuracy], evals, strict=True
            ):
                record.append(float(mlp.evaluate(mine, x, y)))
            print(
                f"epoch {epoch + 1:>2}/{config.epochs}  loss {history.loss[-1]:.4f}  "
                f"test {history.test_accuracy[-1]:.4f}  "
                f"{history.epoch_seconds[-1]:.2f} s",
                flush=True,
            )
    out = {"history": history.to_dict(), "steps": len(history.batch_loss)}
    out["mesh"] = [
        [d.id for d in mesh.devices.flat if d.process_index == p] for p in range(count)
    ]
    if details and rank == 0:
        out |= _details(mesh, run_epoch, config.batch_size)
    return out


def _programs(seed: int, n: int, batch_size: int) -> tuple[Callable, Callable]:
    """The run's start and each epoch's shuffle, as `train` draws them, compiled once.

    ``start() -> (params, shuffle key)`` and ``shuffle(key, epoch) -> i32[steps, batch]``
    run on this process's first device: two compiles in place of the twenty-odd eager
    operations they hold (key, split, the draws, fold_in, permutation). A process other
    than 0 compiles them at every launch (JAX writes the persistent compilation cache
    from process 0 only, and on CPU a cache key holds the process's own topology), so
    on CPU they are compiled without LLVM's optimisations (`QUICK_COMPILE`): 2 s in place
    of 3.4 s of CPU for the draws, for the same integers and floats within a few ulp
    (relative 3e-7).
    """
    import jax
    import jax.random as jr
    import numpy as np

    from jaxtour import mlp

    def start() -> tuple[mlp.Params, jax.Array]:
        init_key, shuffle_key = jr.split(jr.key(seed))
        return mlp.init_params(init_key), shuffle_key

    def shuffle(key: jax.Array, epoch: jax.Array) -> jax.Array:
        return mlp.batch_indices(jr.fold_in(key, epoch), n, batch_size)

    options = QUICK_COMPILE if jax.default_backend() == "cpu" else {}
    started = jax.jit(start).lower().compile(options)
    key = jax.eval_shape(start)[1]
    epoch = jax.ShapeDtypeStruct((), np.int32)
    shuffled = jax.jit(shuffle).lower(key, epoch).compile(options)
    return started, lambda key, epoch: shuffled(key, np.int32(epoch))


def _connect(mesh: Mesh) -> None:
    """One tiny all-reduce over every device now, while the processes are in step.

    On CPU the collectives connect (Gloo) at the first one and wait 30 s for the other
    processes (JAX offers no setting); a process still compiling its epoch on a busy
    machine came later than that and the run failed ("Gloo context initialization
    failed: Connect timeout"). Once connected, an all-reduce over the same devices
    waits for a late process (45 s measured); the processes have just joined here.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxtour import mlp

    ones = np.ones(jax.local_device_count(), np.float32)
    split = mlp.batch_sharded(mesh, mesh.axis_names[0])
    spread = jax.make_array_from_process_local_data(split, ones, (mesh.size,))
    total = jax.jit(jnp.sum, out_shardings=mlp.replicated(mesh))(spread)
    total.addressable_data(0).block_until_ready()


def _global(host: np.ndarray, sharding: NamedSharding) -> jax.Array:
    """A replicated global array from the same host value in every process."""
    import jax

    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _details(mesh: Mesh, compiled: Any, batch_size: int) -> dict:
    """For the lesson: the all-reduces in the compiled epoch, a batch's layout."""
    import jax
    import jax.numpy as jnp

    from jaxtour import _ir, mlp
    from jaxtour.viz import draw_sharding

    text = compiled.as_text()
    lines = [line.strip() for line in text.splitlines() if " all-reduce" in line]
    batch = jax.ShapeDtypeStruct(
        (batch_size, 784), jnp.float32, sharding=mlp.batch_sharded(mesh)
    )
    picture = draw_sharding(batch, colour_by="process")
    counts = _ir.parse_hlo(text).op_counts()
    return {
        "all_reduces": sum(v for k, v in counts.items() if k.startswith("all-reduce")),
        "all_reduce_line": lines[0] if lines else "",
        "unroll": mlp.UNROLL,
        "sharding": {"source": picture.source, "title": picture.title},
    }
