"""MNIST: the four files made ready (`_fetch`), then parsed from the IDX format."""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jaxtour import paths
from jaxtour.data._download import MIRRORS, Budget, Mirrors
from jaxtour.data._fetch import files_in

# IDX magic numbers: 0x0000 then the element type (0x08 = unsigned byte) then the rank.
_IMAGES_MAGIC, _LABELS_MAGIC = 0x00000803, 0x00000801


class MnistFormatError(ValueError):
    """A file is not a well-formed MNIST IDX file."""


class Mnist(NamedTuple):
    """The MNIST arrays, as published: uint8 pixels 0-255 and uint8 labels 0-9."""

    train_images: np.ndarray  # u8[60000, 28, 28]
    train_labels: np.ndarray  # u8[60000]
    test_images: np.ndarray  # u8[10000, 28, 28]
    test_labels: np.ndarray  # u8[10000]

    def subset(self, n_train: int | None = None, n_test: int | None = None) -> Mnist:
        """The first `n_train` training and `n_test` test examples (None keeps all).

        Raises:
            ValueError: a size below 1 (a negative one does not count from the end).
        """
        check_subset_size("n_train", n_train)
        check_subset_size("n_test", n_test)
        return Mnist(
            self.train_images[:n_train],
            self.train_labels[:n_train],
            self.test_images[:n_test],
            self.test_labels[:n_test],
        )


def check_subset_size(name: str, size: int | None) -> None:
    """Raise a `ValueError` unless `size` is None (every example) or at least 1.

    `name` is the argument as the caller spells it. A slice would read a negative size
    as "all but the last few" and 0 as none, so neither is taken silently.

    Example:
        >>> check_subset_size("train_size", 1024)
        >>> check_subset_size("train_size", -5)
        Traceback (most recent call last):
        ...
        ValueError: `train_size` must be >= 1 (or None: all); got -5.
    """
    if size is not None and size < 1:
        raise ValueError(f"`{name}` must be >= 1 (or None: all); got {size}.")


def load_mnist(
    data_dir: str | os.PathLike | None = None,
    *,
    mirrors: tuple[str, ...] | list[str] = MIRRORS,
    progress: bool = True,
    budget: Budget | None = None,
) -> Mnist:
    """Load MNIST, downloading and checking the four original files as needed.

    The folder is `data_dir`, else ``$JAXTOUR_DATA``, else ``~/.cache/jaxtour/mnist``
    (XDG-aware). Every file's SHA-256 is checked against the published sum on every load.
    A missing file is downloaded from `mirrors` in turn (a mirror that fails or serves the
    wrong bytes is skipped) to a temporary name, renamed only once its checksum holds. A
    corrupt or truncated file is never used: it is replaced by a verified download, with
    a warning, or the load fails.

    A download never hangs: a mirror that stalls or trickles fails within its `Budget`
    and is not tried again for the other files of this load; stderr says which mirror
    failed and which one served. Temporary files left by a killed load are deleted.

    Args:
        data_dir: the folder holding (or to receive) the four ``.gz`` files.
        mirrors: base URLs to download from, tried in order.
        progress: show a progress bar while downloading.
        budget: how long one file may take from one mirror (default: `Budget()`:
            30 s without a byte, or under 20 kB/s on average after the first 30 s).

    Returns:
        `Mnist` with ``train_images`` u8[60000, 28, 28], ``train_labels`` u8[60000],
        ``test_images`` u8[10000, 28, 28] and ``test_labels`` u8[10000].

    Raises:
        TypeError: `mirrors` is one string, not a list of them.
        MnistUnavailableError: a file is missing or corrupt and no mirror could supply
            it, or cannot be read; or the folder cannot be written, or a directory
            stands where a file should be (the last two said before any request).
        MnistFormatError: a file with the right checksum does not parse (cannot happen
            with the published files; see `read_idx`).

    Example:
        >>> mnist = load_mnist()  # doctest: +SKIP
        >>> mnist.train_images.shape, mnist.test_labels[:5]  # doctest: +SKIP
        ((60000, 28, 28), array([7, 2, 1, 0, 4], dtype=uint8))
    """
    if isinstance(mirrors, str):  # tuple() would make each character a mirror
        raise TypeError(
            f"`mirrors` must be a list of base URLs, tried in order; got the string "
            f"{mirrors!r}. Pass mirrors=[{mirrors!r}]."
        )
    session = Mirrors(tuple(mirrors), budget or Budget(), progress)
    files = files_in(paths.mnist_dir(data_dir), session)
    train_images, train_labels, test_images, test_labels = (read_idx(f) for f in files)
    _check_pairs(files, train_images, train_labels, test_images, test_labels)
    return Mnist(train_images, train_labels, test_images, test_labels)


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Parse one gzipped MNIST IDX file: images u8[n, 28, 28] or labels u8[n].

    Checks the magic number, the dimensions and that the payload has exactly the bytes
    the header promises.

    Raises:
        MnistFormatError: naming the file and what is wrong with it.
    """
    path = Path(path)
    try:
        with gzip.open(path, "rb") as stream:
            raw = stream.read()
    except (OSError, EOFError, zlib.error) as err:
        raise MnistFormatError(
            f"{path.name} is not a readable gzip file: {err}"
        ) from err
    if len(raw) < 8:
        raise MnistFormatError(
            f"{path.name} is too short ({len(raw)} bytes) for an IDX header."
        )
    magic, count = struct.unpack(">II", raw[:8])
    if magic == _IMAGES_MAGIC:
        header, shape = 16, (count, *struct.unpack(">II", raw[8:16]))
        if shape[1:] != (28, 28):
            raise MnistFormatError(
                f"{path.name} holds {shape[1]}x{shape[2]} images, not 28x28."
            )
    elif magic == _LABELS_MAGIC:
        header, shape = 8, (count,)
    else:
        raise MnistFormatError(
            f"{path.name} has magic number {magic:#010x}; MNIST IDX files start with "
            f"{_IMAGES_MAGIC:#010x} (images) or {_LABELS_MAGIC:#010x} (labels)."
        )
    expected = header + int(np.prod(shape))
    if len(raw) != expected:
        raise MnistFormatError(
            f"{path.name} has {len(raw)} bytes after decompression; its header {shape} "
            f"needs {expected}."
        )
    return np.frombuffer(raw, np.uint8, offset=header).reshape(shape)


def _check_pairs(files: list[Path], *arrays: np.ndarray) -> None:
    for (images_file, labels_file), (images, labels) in zip(
        (files[:2], files[2:]), (arrays[:2], arrays[2:]), strict=True
    ):
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise MnistFormatError(
                f"{images_file.name} and {labels_file.name} do not pair up: "
                f"images {images.shape}, labels {labels.shape}."
            )
        if labels.max(initial=0) > 9:
            raise MnistFormatError(f"{labels_file.name} has a label above 9.")
