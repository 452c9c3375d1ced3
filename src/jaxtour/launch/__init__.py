"""The MNIST MLP over several JAX processes, as over several hosts.

`train_multiprocess` starts N local processes (each `python -m jaxtour.launch._worker`),
joins them with `jax.distributed.initialize`, and reads process 0's report: `jaxtour
train --processes N`. `train_cluster` makes this process one of a cluster job's:
`jaxtour train --cluster`. What to train is a typed `TrainConfig`, how to join a
`JoinConfig`; they become options only on a worker's command line. The model, the
update and the scan epoch are `jaxtour.mlp`'s; this package only starts, joins and
watches.
"""

from jaxtour.launch._config import JoinConfig, TrainConfig
from jaxtour.launch._launcher import (
    MultiprocessError,
    MultiprocessRun,
    PortInUseError,
    train_multiprocess,
)
from jaxtour.launch._procgroup import NoClusterError
from jaxtour.launch._spmd import train_cluster

__all__ = [
    "JoinConfig",
    "MultiprocessError",
    "MultiprocessRun",
    "NoClusterError",
    "PortInUseError",
    "TrainConfig",
    "train_cluster",
    "train_multiprocess",
]
