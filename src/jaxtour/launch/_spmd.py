"""One process of a multi-process data-parallel run: join the others, train, report.

Every process runs this same code (SPMD across processes, as on a TPU pod slice or a
SLURM job), started as ``python -m jaxtour.launch._worker`` (the script) or by `jaxtour
train --cluster`: it joins the others with `jax.distributed.initialize` (here), then
trains (`_spmd_train.train`): one mesh over every process's devices, each process
feeding in only its own slice of each batch. The params are replicated; the all-reduce
that adds the gradients crosses processes.

With ``--coordinator auto``, `jax.distributed.initialize()` gets no arguments and
detects the cluster it runs in (Cloud TPU, SLURM, Open MPI); the rest is unchanged.
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from jaxtour.launch._config import (
    HEARTBEAT,
    INIT_TIMEOUT,
    JoinConfig,
    TrainConfig,
)
from jaxtour.launch._procgroup import NO_CLUSTER, NoClusterError

if TYPE_CHECKING:  # JAX loads in `start`, after the command line is read
    from jaxtour.mlp import History

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
    """The worker script's command line: `JoinConfig`'s and `TrainConfig`'s fields
    (`configs_of` reads them) and the script's own switches."""
    from jaxtour._argtypes import add_number, bounded

    p = argparse.ArgumentParser(prog="python -m jaxtour.launch._worker")
    p.add_argument(
        "--coordinator", default="auto", help="host:port, or auto (a cluster)"
    )
    p.add_argument("--processes", type=bounded(int, 1, MAX_PROCESSES))
    p.add_argument("--process-id", type=bounded(int, 0, MAX_PROCESSES - 1))
    devices = "simulated CPU devices in this process"
    add_number(p, "--devices", int, 1, 256, devices)
    add_number(
        p,
        "--heartbeat",
        int,
        1,
        DAY,
        "seconds to declare a peer dead",
        default=HEARTBEAT,
    )
    wait = f"seconds to wait for every process to join ({INIT_TIMEOUT:g})"
    add_number(
        p, "--init-timeout", float, 0, DAY, wait, above=True, default=INIT_TIMEOUT
    )
    defaults = TrainConfig()  # as train_multiprocess passes them: its own checks
    hyper = [("epochs", int), ("batch_size", int), ("lr", float), ("momentum", float)]
    for name, kind in [*hyper, ("seed", int)]:
        option = f"--{name.replace('_', '-')}"
        p.add_argument(option, type=kind, default=getattr(defaults, name))
    p.add_argument("--train-size", type=int)  # all
    p.add_argument("--test-size", type=int)
    p.add_argument("--data-dir")
    p.add_argument("--details", action="store_true", help="add the HLO and the layout")
    p.add_argument("--watch-stdin", action="store_true", help="exit when stdin closes")
    p.add_argument(
        "--own-stdout",
        action="store_true",
        help="stdout carries this script's lines only; C++ libraries' go to stderr",
    )
    return p.parse_args(argv)


def start(join: JoinConfig) -> None:
    """Join the other processes; before this JAX must not have computed anything.

    The wait is jaxtour's, not JAX's: it ends after `join.init_timeout` seconds with
    `NoClusterError` in words, and Ctrl-C ends it (JAX's own deadline, set later as a
    backstop, would end the process with a C++ stack trace).

    Raises:
        NoClusterError: no cluster detected (``auto``), or the others never answered.
        jaxtour._wait.Interrupted: Ctrl-C while waiting for them.
    """
    import jax

    from jaxtour._wait import TimeLimitError, run_interruptibly, time_limit

    if join.devices:
        jax.config.update("jax_num_cpu_devices", join.devices)
    auto = join.coordinator == "auto"  # Cloud TPU, SLURM, Open MPI: detected
    given: dict[str, Any] = (
        {}
        if auto
        else dict(
            coordinator_address=join.coordinator,
            num_processes=join.processes,
            process_id=join.process_id,
            heartbeat_timeout_seconds=join.heartbeat,
        )
    )
    backstop = math.ceil(join.init_timeout) + BACKSTOP
    initialize = lambda: jax.distributed.initialize(
        initialization_timeout=backstop, **given
    )
    try:
        with time_limit(join.init_timeout):
            run_interruptibly(
                initialize, "jax.distributed.initialize()", LEFT, calls_back=False
            )
    except ValueError as err:  # e.g. "coordinator_address should be defined."
        if not auto:
            raise
        raise NoClusterError(NO_CLUSTER.format(err=err)) from None
    except TimeLimitError:
        at = "" if auto else f" at {join.coordinator}"
        raise NoClusterError(
            UNREACHABLE.format(seconds=join.init_timeout, at=at)
        ) from None


def train_cluster(config: TrainConfig, join: JoinConfig | None = None) -> History:
    """Join the other processes of a cluster job, then train with them; every process
    returns the run's `History` (process 0's accuracies; the others' lists are empty).

    `jaxtour train --cluster` is this call: with the default `join` (``"auto"``),
    `jax.distributed.initialize()` finds the others from the cluster's variables.

    Raises:
        NoClusterError: no cluster detected, or the others never joined in time.
        ValueError: `config.batch_size` does not split over every process's devices.
    """
    from jaxtour.launch._spmd_train import train
    from jaxtour.mlp import History

    start(join or JoinConfig())
    return History(**train(config)["history"])
