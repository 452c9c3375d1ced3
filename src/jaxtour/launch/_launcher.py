"""Data-parallel training on several JAX processes of this machine, as on many hosts.

`train_multiprocess` starts N Python processes (`python -m jaxtour.launch._worker`, the
same interpreter), each with its own simulated CPU devices, joined by
`jax.distributed.initialize` around a coordinator on 127.0.0.1. Between processes the
CPU backend runs its collectives over TCP with Gloo (jaxlib's default
`jax_cpu_collectives_implementation`, on 0.10 and 0.12 alike). The launcher watches its
children: when one fails or is killed it stops the others at once, and Ctrl-C stops
them all; each worker also declares a silent peer dead after `heartbeat` seconds, and
exits when the launcher's end of its stdin closes. The coordinator's port is claimed
(a lock file per port) from the free-port probe to the run's end, so two runs started
at once never share it; the workers' count is checked against the memory available.
Nothing is written to disk but that lock file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from jaxtour._diagram import Diagram
from jaxtour.data import check_subset_size
from jaxtour.launch._config import JoinConfig, TrainConfig, worker_options
from jaxtour.launch._procgroup import RESULT, Group, MultiprocessError
from jaxtour.mlp import LR, MOMENTUM, History, check_batch_size, check_schedule

HOST = "127.0.0.1"
WORKER_BYTES = 280 * 2**20  # one worker's resident memory, measured (MNIST, 4 devices)


class PortInUseError(OSError):
    """The coordinator's port is taken."""


@dataclass
class MultiprocessRun:
    """What process 0 of `train_multiprocess` reported."""

    history: History
    mesh: list[list[int]]  # the device ids of each process, in mesh order
    log: list[str] = field(default_factory=list)  # the lines shown (process 0's)
    all_reduces: int | None = None  # in the compiled epoch (details=True)
    all_reduce_line: str = ""  # the first all-reduce's HLO line
    unroll: int | None = None  # scan steps per trip round the compiled loop
    sharding: Diagram | None = None  # a batch's layout, devices coloured by process
    seconds: float = 0.0  # wall time, from launch to the last exit

    @property
    def all_reduce_shapes(self) -> list[str]:
        """What the first all-reduce adds up, e.g. ``["f32[512]", "f32[512,784]"]``."""
        head = self.all_reduce_line.partition(" all-reduce(")[0].partition(" = ")[2]
        return re.findall(r"[a-z]+\d*\[[\d,]*\]", head)

    @property
    def all_reduce_groups(self) -> str:
        """The first all-reduce's ``replica_groups``: which devices add together
        (a mesh axis, or lists of device ids, as this JAX version writes it)."""
        line = self.all_reduce_line
        found = re.search(r"replica_groups=(.*?)(?:, [a-z_]+=|$)", line)
        return found.group(1) if found else ""

    @property
    def all_reduce_group_size(self) -> int | None:
        """How many devices each group of the first all-reduce adds together, read
        from `all_reduce_groups` in any of the three ways XLA writes it, or None."""
        groups = self.all_reduce_groups
        if groups.startswith("mesh["):  # mesh['x'=4,'y'=2] {'x'}: the axes reduced
            shape, _, over = groups.partition("]")
            sizes = dict(re.findall(r"'(\w+)'=(\d+)", shape))
            return math.prod(int(sizes[a]) for a in re.findall(r"'(\w+)'", over))
        if iota := re.match(r"\[\d+,(\d+)\]<=", groups):  # [groups,size]<=[n]
            return int(iota.group(1))
        if groups.startswith("{{"):  # {{0,1,2,3},{4,5,6,7}}: the ids of each group
            return len(groups[2:].partition("}")[0].split(","))
        return None


def free_port(port: int | None = None) -> int:
    """`port` when it is free on 127.0.0.1, or a free one when `port` is None.

    Raises:
        ValueError: `port` is not from 1 to 65535.
        PortInUseError: `port` is taken.
    """
    if port is not None and not 1 <= port <= 65_535:
        raise ValueError(f"`port` must be from 1 to 65535 (or None); got {port}.")
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port or 0))
        except OSError:
            raise PortInUseError(
                f"Port {port} on {HOST} is in use (another program, or a run still "
                "stopping), so the coordinator cannot listen there. Pass another port, "
                "or none to let jaxtour pick a free one."
            ) from None
        return probe.getsockname()[1]


@contextlib.contextmanager
def claimed_port(port: int | None = None) -> Iterator[int]:
    """`free_port(port)`, held for this run until the block ends.

    The probe's socket closes before the coordinator (a worker) listens, so two runs
    started at the same moment could both find the same port free and cross-connect.
    A lock file per port (``jaxtour-port-N.lock`` in the temporary folder, locked with
    `fcntl.flock`, freed by the system if this process dies) keeps a second jaxtour
    run off a port a first one holds; the block's end deletes it.

    Raises:
        PortInUseError: `port` is taken, or held by another jaxtour run.
    """
    for _ in range(1 if port else 20):
        chosen = free_port(port)
        lock = _lock(chosen)
        if lock is not None:
            break
    else:
        raise PortInUseError(
            f"Port {port} on {HOST} is in use by another jaxtour run starting now, so "
            "the coordinator cannot listen there. Pass another port, or none to let "
            "jaxtour pick a free one."
        )
    try:
        yield free_port(chosen)  # still free, now that it is ours
    finally:
        _lock_path(chosen).unlink(missing_ok=True)  # while held: nobody else has it
        os.close(lock)


def _lock_path(port: int) -> Path:
    return Path(tempfile.gettempdir()) / f"jaxtour-port-{port}.lock"


def _lock(port: int) -> int | None:
    """A descriptor holding the port's lock, or None when another process holds it.

    A holder deletes the file before it lets go, so a lock taken on a file that is no
    longer at the path (deleted between our open and our lock) is taken again on the new
    one.
    """
    import fcntl

    path = _lock_path(port)
    flags = os.O_RDONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    while True:
        fd = os.open(path, flags, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        with contextlib.suppress(FileNotFoundError):
            if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return fd
        os.close(fd)


def check_memory(processes: int) -> str | None:
    """Refuse a run whose workers would not fit in the memory available now; warn
    (the returned line) when they would take over half of it.

    Raises:
        ValueError: the estimate (`WORKER_BYTES` per process) exceeds what is available.
    """
    available = available_memory()
    need = processes * WORKER_BYTES
    if available is None or need <= available / 2:
        return None
    said = (
        f"{processes} processes need about {need / 2**30:.1f} GiB (about "
        f"{WORKER_BYTES // 2**20} MB each, measured), and this machine has "
        f"{available / 2**30:.1f} GiB available"
    )
    if need > available:
        fits = max(int(available // WORKER_BYTES), 1)
        raise ValueError(
            f"{said}. Use at most --processes {fits}, or fewer processes with more "
            "--devices-per-process each."
        )
    return f"warning: {said}; the machine may slow down or stop a worker."


def available_memory() -> int | None:
    """Bytes of memory available now (Linux's MemAvailable), or None if unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def train_multiprocess(
    data_dir: str | None = None,
    *,
    processes: int = 2,
    devices_per_process: int = 4,
    epochs: int = 10,
    batch_size: int = 128,
    lr: float = LR,
    momentum: float = MOMENTUM,
    seed: int = 0,
    train_size: int | None = None,
    test_size: int | None = None,
    port: int | None = None,
    heartbeat: int = 10,
    init_timeout: float = 60.0,
    timeout: float | None = None,
    echo: bool = True,
    log_all: bool = False,
    details: bool = False,
) -> MultiprocessRun:
    """As `train_data_parallel`, but over `processes` JAX processes on this machine.

    Each process has `devices_per_process` simulated CPU devices and loads only its
    slice of every batch; one mesh spans them all, so a global batch of `batch_size`
    is split over ``processes * devices_per_process`` devices, in process order. Same
    seed, same shuffles: the losses follow `train_data_parallel`'s.

    Args:
        data_dir: the MNIST folder (default: $JAXTOUR_DATA or the cache).
        processes, devices_per_process: the layout, e.g. 2 × 4.
        epochs, batch_size, lr, momentum, seed: as `train`.
        train_size, test_size: train and test on the first N images only.
        port: the coordinator's port on 127.0.0.1; None picks a free one.
        heartbeat: seconds after which the workers declare a silent peer dead.
        init_timeout: seconds the workers wait for each other to join.
        timeout: seconds the whole run may take; None waits.
        echo: print process 0's lines as they come; `log_all`: every process's.
        details: also report the compiled epoch's all-reduces and a batch's layout.

    Returns:
        a `MultiprocessRun`: process 0's `History`, the mesh and what was printed.

    Raises:
        ValueError: a bad layout or schedule, a batch that does not split over the
            devices or is larger than the training set, or more processes than the
            memory available holds (`check_memory`); said before any process starts.
        PortInUseError: `port` is taken.
        MultiprocessError: a process failed (the message says which and its last
            output) or the run took longer than `timeout`; the others were stopped.
    """
    from jaxtour.data import load_mnist

    if processes < 1 or devices_per_process < 1:
        raise ValueError(
            f"`processes` and `devices_per_process` must be >= 1; got "
            f"{processes} and {devices_per_process}."
        )
    _check_run(epochs, batch_size, train_size, test_size, heartbeat, init_timeout)
    check_batch_size(batch_size, processes * devices_per_process)
    warning = check_memory(processes)
    if warning and echo:
        print(warning, file=sys.stderr)
    # download once here, not N times at once
    mnist = load_mnist(data_dir, progress=False).subset(train_size, test_size)
    if batch_size > len(mnist.train_images):
        raise ValueError(
            f"`batch_size` {batch_size} is larger than the {len(mnist.train_images)} "
            "training images: not one batch per epoch. Use a smaller batch, or a "
            "larger `train_size`."
        )
    config = TrainConfig(
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        momentum=momentum,
        seed=seed,
        train_size=train_size,
        test_size=test_size,
        data_dir=data_dir,
    )
    with claimed_port(port) as chosen:
        join = JoinConfig(
            coordinator=f"{HOST}:{chosen}",
            processes=processes,
            devices=devices_per_process,
            heartbeat=heartbeat,
            init_timeout=init_timeout,
        )
        return _launch(
            join, config, dict(echo=echo, log_all=log_all, details=details), timeout
        )


def _check_run(
    epochs: int,
    batch_size: int,
    train_size: int | None,
    test_size: int | None,
    heartbeat: int,
    init_timeout: float,
) -> None:
    """The checks a worker would make only after every process has started and joined
    (a batch of 0 divided by zero there), made here first."""
    check_schedule(epochs, batch_size)
    # `Mnist.subset` checks these too, but only once MNIST is loaded (or downloaded)
    check_subset_size("train_size", train_size)
    check_subset_size("test_size", test_size)
    if heartbeat < 1 or not init_timeout > 0:
        raise ValueError(
            "`heartbeat` must be >= 1 second and `init_timeout` above 0 seconds; got "
            f"{heartbeat} and {init_timeout}."
        )


def _launch(
    join: JoinConfig, config: TrainConfig, how: dict[str, bool], timeout: float | None
) -> MultiprocessRun:
    """Start the workers (the process boundary: the configs become options)."""
    options = [*worker_options(join, config), "--watch-stdin", "--own-stdout"]
    options += ["--details"] if how["details"] else []
    worker = [sys.executable, "-u", "-m", "jaxtour.launch._worker", *options]
    group = Group(
        [[*worker, f"--process-id={i}"] for i in range(join.processes or 1)],
        how["echo"],
        how["log_all"],
    )
    lines = group.wait(timeout)
    return _result(lines, group.seconds)


def _result(lines: list[str], seconds: float) -> MultiprocessRun:
    found = [line[len(RESULT) :] for line in lines if line.startswith(RESULT)]
    if not found:
        raise MultiprocessError(
            "Process 0 exited without a result: " + "\n".join(lines[-10:])
        )
    out = json.loads(found[-1])
    sharding = out.get("sharding")
    return MultiprocessRun(
        history=History(**out["history"]),
        mesh=out["mesh"],
        log=[line for line in lines if not line.startswith(RESULT)],
        all_reduces=out.get("all_reduces"),
        all_reduce_line=out.get("all_reduce_line", ""),
        unroll=out.get("unroll"),
        sharding=Diagram(sharding["source"], sharding["title"]) if sharding else None,
        seconds=seconds,
    )
