"""MNIST on disk: found, downloaded from a verified mirror, read into NumPy arrays.

`load_mnist` is the front door; `jaxtour.mlp` re-exports it and the names beside it, so
`from jaxtour.mlp import load_mnist` is the same function. The download's machinery
(file list, mirrors, locks, deadlines) stays in the private modules: `_mnist` parses,
`_fetch` makes the four files ready, `_download` fetches one from a mirror, `_http`
bounds a request in time.
"""

from jaxtour.data._download import (
    FILES,
    MIRRORS,
    Budget,
    ChecksumError,
    MnistFile,
    check,
)
from jaxtour.data._fetch import MnistUnavailableError
from jaxtour.data._mnist import (
    Mnist,
    MnistFormatError,
    check_subset_size,
    load_mnist,
)

__all__ = [
    "FILES",
    "MIRRORS",
    "Budget",
    "ChecksumError",
    "Mnist",
    "MnistFile",
    "MnistFormatError",
    "MnistUnavailableError",
    "check",
    "check_subset_size",
    "load_mnist",
]
