"""One process of a multi-process data-parallel run: join the others, train, report.

Every process runs this same code (SPMD across processes, as on a TPU pod slice or a
SLURM job), started as ``python -m jaxtour.launch._worker`` (the script) or by `jaxtour
train --cluster`: it joins the others with `jax.distributed.initialize`, builds one mesh over
every process's devices, and feeds in only its own slice of each batch
(`jax.make_array_from_process_local_data`). The params are replicated; the all-reduce
that adds the gradients crosses processes. The epoch is `jaxtour.mlp`'s own scan
(`scan_updates`), fed with this process's slice of every batch.

With ``--coordinator auto``, `jax.distributed.initialize()` gets no arguments and
detects the cluster it runs in (Cloud TPU, SLURM, Open MPI); the rest is unchanged.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jaxtour.launch._procgroup import NO_CLUSTER, NoClusterError

if TYPE_CHECKING:  # JAX loads in `start`, after the command line is read
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding

    from jaxtour.mlp import Params

INIT_TIMEOUT = 60.0  # seconds to wait for every process to join (--init-timeout)
MAX_PROCESSES, DAY = 1_000_000, 86_400
BACKSTOP = 10  # JAX's own deadline comes this much later: it aborts the process
UNREACHABLE = (
    "The other processes did not join within {seconds:g} s: jax.distributed.initialize()"
    " got no answer from the coordinator{at} (process 0), or not every process started."
    " Check that process 0 runs and that its host and port are reachable from here (a "
    "firewall?), or wait longer with --init-timeout SECONDS."
)
LEFT = "this process left; the others give up when their own --init-timeout passes."


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    from jaxtour._argtypes import add_number, bounded
    from jaxtour.mlp._model import LR, MOMENTUM

    p = argparse.ArgumentParser(prog="python -m jaxtour.launch._worker")
    p.add_argument(
        "--coordinator", default="auto", help="host:port, or auto (a cluster)"
    )
    p.add_argument("--processes", type=bounded(int, 1, MAX_PROCESSES))
    p.add_argument("--process-id", type=bounded(int, 0, MAX_PROCESSES - 1))
    devices = "simulated CPU devices in this process"
    add_number(p, "--devices", int, 1, 256, devices)
    add_number(
        p, "--heartbeat", int, 1, DAY, "seconds to declare a peer dead", default=10
    )
    wait = f"seconds to wait for every process to join ({INIT_TIMEOUT:g})"
    add_number(
        p, "--init-timeout", float, 0, DAY, wait, above=True, default=INIT_TIMEOUT
    )
    for name, kind, default in [  # as train_multiprocess passes them: its own checks
        ("epochs", int, 10),
        ("batch-size", int, 128),
        ("lr", float, LR),
        ("momentum", float, MOMENTUM),
        ("seed", int, 0),
        ("train-size", int, None),  # all
        ("test-size", int, None),
    ]:
        p.add_argument(f"--{name}", type=kind, default=default)
    p.add_argument("--data-dir")
    p.add_argument("--details", action="store_true", help="add the HLO and the layout")
    p.add_argument("--watch-stdin", action="store_true", help="exit when stdin closes")
    p.add_argument(
        "--own-stdout",
        action="store_true",
        help="stdout carries this script's lines only; C++ libraries' go to stderr",
    )
    return p.parse_args(argv)


def start(args: argparse.Namespace) -> None:
    """Join the other processes; before this JAX must not have computed anything.

    The wait is jaxtour's, not JAX's: it ends after ``--init-timeout`` seconds with
    `NoClusterError` in words, and Ctrl-C ends it (JAX's own deadline, set later as a
    backstop, would end the process with a C++ stack trace).

    Raises:
        NoClusterError: no cluster detected (``auto``), or the others never answered.
        jaxtour._wait.Interrupted: Ctrl-C while waiting for them.
    """
    import jax

    from jaxtour._wait import TimeLimitError, run_interruptibly, time_limit

    if args.devices:
        jax.config.update("jax_num_cpu_devices", args.devices)
    auto = args.coordinator == "auto"  # Cloud TPU, SLURM, Open MPI: detected
    given = (
        {}
        if auto
        else dict(
            coordinator_address=args.coordinator,
            num_processes=args.processes,
            process_id=args.process_id,
            heartbeat_timeout_seconds=args.heartbeat,
        )
    )
    backstop = math.ceil(args.init_timeout) + BACKSTOP
    join = lambda: jax.distributed.initialize(initialization_timeout=backstop, **given)
    try:
        with time_limit(args.init_timeout):
            run_interruptibly(
                join, "jax.distributed.initialize()", LEFT, calls_back=False
            )
    except ValueError as err:  # e.g. "coordinator_address should be defined."
        if not auto:
            raise
        raise NoClusterError(NO_CLUSTER.format(err=err)) from None
    except TimeLimitError:
        at = "" if auto else f" at {args.coordinator}"
        raise NoClusterError(
            UNREACHABLE.format(seconds=args.init_timeout, at=at)
        ) from None


def train(args: argparse.Namespace) -> dict:
    """Train as `train_data_parallel` does, over every process's devices."""
    import jax
    import jax.random as jr
    import numpy as np
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    from jaxtour.data import load_mnist
    from jaxtour.mlp import _parallel, _train
    from jaxtour.mlp._model import init_params

    mesh = _parallel.data_mesh(jax.devices())  # every process's, in process order
    rank, count = jax.process_index(), jax.process_count()
    _parallel.check_batch_size(args.batch_size, mesh.size)
    n_local = jax.local_device_count()
    print(f"process {rank} of {count}: {n_local} of {mesh.size} devices", flush=True)
    data = load_mnist(args.data_dir, progress=False).subset(
        args.train_size, args.test_size
    )
    images = np.asarray(data.train_images)
    labels = np.asarray(data.train_labels, np.int32)
    init_key, shuffle_key = jr.split(jr.key(args.seed))  # as `train`: same start
    rep = _parallel.replicated(mesh)
    params = jax.tree.map(lambda a: _global(np.asarray(a), rep), init_params(init_key))
    velocity = jax.tree.map(lambda a: _global(np.zeros_like(a), rep), params)
    split = NamedSharding(mesh, P(None, _parallel.AXIS))  # [step, batch]: batch split
    width = args.batch_size // count  # this process's share of every batch

    def local_epoch(
        epoch: int,
    ) -> list[jax.Array]:  # only this process's slice of every batch
        key = jr.fold_in(shuffle_key, epoch)
        order = np.asarray(_train.batch_indices(key, len(images), args.batch_size))
        mine = order[:, rank * width : (rank + 1) * width]
        shape = (order.shape[0], args.batch_size)
        return [
            jax.make_array_from_process_local_data(split, a[mine], shape + a.shape[1:])
            for a in (images, labels)
        ]

    first = local_epoch(0)
    run_epoch, compile_s = _compile(mesh, split, args, params, velocity, *first)
    local = jax.local_devices()[0]
    kind = f"{count} processes × {n_local} {_train.describe(local)}"
    history = _train.History(compile_seconds=compile_s, device=kind)
    evals = [
        jax.device_put(s, local)
        for s in [
            (images[: _train.TRAIN_EVAL_SIZE], labels[: _train.TRAIN_EVAL_SIZE]),
            (np.asarray(data.test_images), np.asarray(data.test_labels, np.int32)),
        ]
    ]
    for epoch in range(args.epochs):
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
                record.append(float(_train.evaluate(mine, x, y)))
            print(
                f"epoch {epoch + 1:>2}/{args.epochs}  loss {history.loss[-1]:.4f}  "
                f"test {history.test_accuracy[-1]:.4f}  "
                f"{history.epoch_seconds[-1]:.2f} s",
                flush=True,
            )
    out = {"history": history.to_dict(), "steps": len(history.batch_loss)}
    out["mesh"] = [
        [d.id for d in mesh.devices.flat if d.process_index == p] for p in range(count)
    ]
    if args.details and rank == 0:
        out |= _details(mesh, run_epoch, args.batch_size)
    return out


def _global(host: np.ndarray, sharding: NamedSharding) -> jax.Array:
    """A replicated global array from the same host value in every process."""
    import jax

    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def _compile(
    mesh: Mesh,
    split: NamedSharding,
    args: argparse.Namespace,
    params: Params,
    velocity: Params,
    xs: jax.Array,
    ys: jax.Array,
) -> tuple[Callable, float]:
    """The epoch over this process's batches, jitted for the mesh and compiled."""
    import jax

    from jaxtour.mlp import _parallel, _train

    step_split = _parallel.batch_sharded(mesh)
    hyper = dict(lr=args.lr, momentum=args.momentum)

    def epoch(
        params: Params, velocity: Params, xs: jax.Array, ys: jax.Array
    ) -> tuple[Params, Params, jax.Array]:
        def batch_of(batch: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
            x, y = batch  # this step's batch, split over the devices as in `train`
            constrain = jax.lax.with_sharding_constraint
            return constrain(x, step_split), constrain(y, step_split)

        return _train.scan_updates(
            params, velocity, (xs, ys), batch_of, unroll=_train.UNROLL, **hyper
        )

    rep = _parallel.replicated(mesh)
    jitted = jax.jit(
        epoch,
        in_shardings=(rep, rep, split, split),
        out_shardings=(rep, rep, rep),
        donate_argnums=(0, 1),
    )
    return _train.compile_timed(jitted, params, velocity, xs, ys)


def _details(mesh: Mesh, compiled: Any, batch_size: int) -> dict:
    """For the lesson: the all-reduces in the compiled epoch, a batch's layout."""
    import jax
    import jax.numpy as jnp

    from jaxtour import _ir
    from jaxtour.mlp import _parallel, _train
    from jaxtour.viz import draw_sharding

    text = compiled.as_text()
    lines = [line.strip() for line in text.splitlines() if " all-reduce" in line]
    batch = jax.ShapeDtypeStruct(
        (batch_size, 784), jnp.float32, sharding=_parallel.batch_sharded(mesh)
    )
    picture = draw_sharding(batch, colour_by="process")
    counts = _ir.parse_hlo(text).op_counts()
    return {
        "all_reduces": sum(v for k, v in counts.items() if k.startswith("all-reduce")),
        "all_reduce_line": lines[0] if lines else "",
        "unroll": _train.UNROLL,
        "sharding": {"source": picture.source, "title": picture.title},
    }
