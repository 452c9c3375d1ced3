"""The MNIST MLP over several JAX processes, as over several hosts.

`train_multiprocess` starts N local processes (each `python -m jaxtour.launch._worker`),
joins them with `jax.distributed.initialize`, and reads process 0's report. `jaxtour
train --processes N` and `--cluster` are its command-line faces. The model, the update
and the scan epoch are `jaxtour.mlp`'s; this package only starts, joins and watches.
"""

from jaxtour.launch._launcher import (
    MultiprocessError,
    MultiprocessRun,
    PortInUseError,
    train_multiprocess,
)

__all__ = [
    "MultiprocessError",
    "MultiprocessRun",
    "PortInUseError",
    "train_multiprocess",
]
