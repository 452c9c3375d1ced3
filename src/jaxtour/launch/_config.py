"""What a training run is asked to do, as typed values: `TrainConfig` and `JoinConfig`.

Inside one process these travel as they are (`jaxtour train --cluster` hands them to
`train_cluster`); only where a real process boundary lies, the launcher starting
``python -m jaxtour.launch._worker``, do they become command-line options
(`worker_options`), which the worker script parses back (`_spmd.parse`).
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any

from jaxtour.mlp import LR, MOMENTUM

INIT_TIMEOUT = 60.0  # seconds to wait for every process to join (--init-timeout)
HEARTBEAT = 10  # seconds after which a silent peer is declared dead


@dataclass(frozen=True)
class TrainConfig:
    """The MNIST MLP's training run, the same on one process or on several.

    Attributes:
        epochs, batch_size, lr, momentum, seed: as `jaxtour.mlp.train`'s; `batch_size`
            is the global batch, split over every device of every process.
        train_size, test_size: train and test on the first N images only (None: all).
        data_dir: the MNIST folder (None: $JAXTOUR_DATA or the cache).

    Example:
        >>> TrainConfig(epochs=2, train_size=12_800)
        TrainConfig(epochs=2, batch_size=128, lr=0.05, momentum=0.9, seed=0, \
train_size=12800, test_size=None, data_dir=None)
    """

    epochs: int = 10
    batch_size: int = 128
    lr: float = LR
    momentum: float = MOMENTUM
    seed: int = 0
    train_size: int | None = None
    test_size: int | None = None
    data_dir: str | None = None


@dataclass(frozen=True)
class JoinConfig:
    """How one process joins the others with `jax.distributed.initialize`.

    Attributes:
        coordinator: ``host:port`` of process 0, or ``"auto"``: a cluster's variables
            (Cloud TPU, SLURM, Open MPI) say where, how many and which one this is.
        processes, process_id: the count and this process's rank (None with auto).
        devices: simulated CPU devices in this process (None: the hardware's).
        heartbeat: seconds after which a silent peer is declared dead.
        init_timeout: seconds to wait for every process to join.
    """

    coordinator: str = "auto"
    processes: int | None = None
    process_id: int | None = None
    devices: int | None = None
    heartbeat: int = HEARTBEAT
    init_timeout: float = INIT_TIMEOUT


def worker_options(*configs: TrainConfig | JoinConfig) -> list[str]:
    """The worker script's options (``--batch-size=128``) for the fields that are set.

    Example:
        >>> worker_options(JoinConfig("127.0.0.1:1234", 2, 0), TrainConfig(epochs=1))[:3]
        ['--coordinator=127.0.0.1:1234', '--processes=2', '--process-id=0']
    """
    return [
        f"--{field.name.replace('_', '-')}={value}"
        for config in configs
        for field in dataclasses.fields(config)
        if (value := getattr(config, field.name)) is not None
    ]


def configs_of(options: argparse.Namespace) -> tuple[JoinConfig, TrainConfig]:
    """The two configs from the worker script's parsed command line."""

    def fields_of(kind: type) -> dict[str, Any]:
        return {f.name: getattr(options, f.name) for f in dataclasses.fields(kind)}

    return JoinConfig(**fields_of(JoinConfig)), TrainConfig(**fields_of(TrainConfig))
