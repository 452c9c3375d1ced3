"""Fetching the MNIST files: mirrors in turn, SHA-256 checked, never a partial file."""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

# Public mirrors of the original files, tried in order. yann.lecun.com itself now
# refuses anonymous downloads, so it is not listed.
MIRRORS: tuple[str, ...] = (
    "https://storage.googleapis.com/cvdf-datasets/mnist/",  # CVDF, used by TensorFlow
    "https://ossci-datasets.s3.amazonaws.com/mnist/",  # PyTorch's, used by torchvision
)
TIMEOUT_S = 30.0
_CHUNK = 1 << 16


@dataclass(frozen=True)
class MnistFile:
    """One of the four published files, with the size and SHA-256 it must have."""

    name: str
    size: int
    sha256: str


FILES: tuple[MnistFile, ...] = (
    MnistFile("train-images-idx3-ubyte.gz", 9912422,
              "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
    MnistFile("train-labels-idx1-ubyte.gz", 28881,
              "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
    MnistFile("t10k-images-idx3-ubyte.gz", 1648877,
              "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
    MnistFile("t10k-labels-idx1-ubyte.gz", 4542,
              "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
)


class ChecksumError(OSError):
    """Bytes that are not the published file (wrong SHA-256 or size)."""


def sha256_of(path: Path) -> str:
    """The SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def check(path: Path, spec: MnistFile) -> None:
    """Raise `ChecksumError` unless `path` holds exactly the published bytes."""
    size = path.stat().st_size
    if size != spec.size:
        raise ChecksumError(f"{path} has {size} bytes, expected {spec.size} (truncated?)")
    got = sha256_of(path)
    if got != spec.sha256:
        raise ChecksumError(f"{path} has SHA-256 {got}, expected {spec.sha256}")


def fetch(spec: MnistFile, folder: Path, mirrors: tuple[str, ...] | list[str] = MIRRORS,
          progress: bool = True) -> tuple[Path | None, list[str]]:
    """Download `spec` into `folder` from the first mirror that serves the right bytes.

    Returns:
        (the file's path, or None when every mirror failed; one line per failure).
    """
    failures = []
    for mirror in mirrors:
        url = mirror.rstrip("/") + "/" + spec.name
        try:
            return _download_verified(url, folder / spec.name, spec, progress), failures
        except (OSError, http.client.HTTPException, ValueError) as err:
            failures.append(f"{url}: {_reason(err)}")
    return None, failures


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"cannot connect ({err.reason})"
    if isinstance(err, http.client.IncompleteRead):
        return f"connection closed after {len(err.partial)} bytes"
    return str(err) or type(err).__name__


def _download_verified(url: str, dest: Path, spec: MnistFile, progress: bool) -> Path:
    """Stream `url` to a temporary file beside `dest`; rename only once the SHA-256 holds."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            digest = _copy_with_progress(resp, out, spec, progress)
        if tmp.stat().st_size != spec.size or digest != spec.sha256:
            raise ChecksumError(
                f"served {tmp.stat().st_size} bytes with SHA-256 {digest[:16]}…, "
                f"not the published file ({spec.size} bytes, {spec.sha256[:16]}…)"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
        return dest
    finally:
        tmp.unlink(missing_ok=True)


def _copy_with_progress(resp, out, spec: MnistFile, progress: bool) -> str:
    from tqdm.auto import tqdm

    digest = hashlib.sha256()
    with tqdm(total=spec.size, unit="B", unit_scale=True, desc=spec.name, disable=not progress,
              leave=False) as bar:
        while chunk := resp.read(_CHUNK):
            if out.tell() + len(chunk) > spec.size:
                raise ChecksumError(f"served more than the published {spec.size} bytes")
            out.write(chunk)
            digest.update(chunk)
            bar.update(len(chunk))
    return digest.hexdigest()
