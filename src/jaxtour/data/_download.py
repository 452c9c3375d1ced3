"""Fetching the MNIST files: mirrors in turn, within a time budget, SHA-256 checked.

A file is streamed to a hidden ``.NAME.*.part`` file beside its final name, locked
while it is written, and renamed only once its size and SHA-256 hold. A run killed
mid-download leaves its ``.part`` file unlocked; the next load deletes it.
"""

from __future__ import annotations

import hashlib
import http.client
import math
import os
import sys
import tempfile
import time
import urllib.error
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

from jaxtour.data._http import Deadline

fcntl: ModuleType | None
try:  # POSIX: a live download holds a lock on its .part file; a dead one's lock is gone.
    import fcntl
except ImportError:  # pragma: no cover - Windows: leftovers are judged by their age
    fcntl = None

# Public mirrors of the original files, tried in order. yann.lecun.com itself now
# refuses anonymous downloads, so it is not listed.
MIRRORS: tuple[str, ...] = (
    "https://storage.googleapis.com/cvdf-datasets/mnist/",  # CVDF, used by TensorFlow
    "https://ossci-datasets.s3.amazonaws.com/mnist/",  # PyTorch's, used by torchvision
)
_CHUNK = 1 << 16
_ABANDONED_AFTER_S = 3600.0  # without file locks, a .part this old is from a dead run


@dataclass(frozen=True)
class Budget:
    """How long one file may take to download from one mirror.

    A mirror fails when it sends nothing for `stall_s` seconds (no answer to the
    request, or no byte), or when, after the first `grace_s` seconds, the file
    arrives at less than `min_rate` bytes/s on average since the request. So a
    file of ``size`` bytes never takes longer than ``grace_s + size / min_rate``
    seconds, however its bytes trickle in.
    """

    stall_s: float = 30.0
    grace_s: float = 30.0
    min_rate: float = 20_000.0

    def __post_init__(self) -> None:
        # Every field bounds the wait: none may be negative or infinite, and only the
        # grace may be zero (no wait for a byte, or no rate at all, bounds nothing).
        for name in ("stall_s", "grace_s", "min_rate"):
            value, zero_allowed = getattr(self, name), name == "grace_s"
            number = isinstance(value, int | float) and value < math.inf
            if not (number and (value >= 0 if zero_allowed else value > 0)):
                floor = "0 or more" if zero_allowed else "above 0"
                raise ValueError(
                    f"`Budget.{name}` must be a finite number {floor}; got {value!r}. "
                    "A slow line wants a larger `stall_s` and `grace_s` or a smaller "
                    "`min_rate` (bytes/s), not none: every download stays bounded."
                )

    def deadline(self, size: int) -> float:
        """The most seconds a file of `size` bytes may take."""
        return self.grace_s + size / self.min_rate


@dataclass(frozen=True)
class MnistFile:
    """One of the four published files, with the size and SHA-256 it must have."""

    name: str
    size: int
    sha256: str


FILES: tuple[MnistFile, ...] = (
    MnistFile(
        "train-images-idx3-ubyte.gz",
        9912422,
        "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    ),
    MnistFile(
        "train-labels-idx1-ubyte.gz",
        28881,
        "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    ),
    MnistFile(
        "t10k-images-idx3-ubyte.gz",
        1648877,
        "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    ),
    MnistFile(
        "t10k-labels-idx1-ubyte.gz",
        4542,
        "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    ),
)


class ChecksumError(OSError):
    """Bytes that are not the published file (wrong SHA-256 or size)."""


class TooSlowError(OSError):
    """A mirror that sends the file slower than the `Budget` allows."""


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
        raise ChecksumError(
            f"{path} has {size} bytes, expected {spec.size} (truncated?)"
        )
    got = sha256_of(path)
    if got != spec.sha256:
        raise ChecksumError(f"{path} has SHA-256 {got}, expected {spec.sha256}")


def check_writable(folder: Path) -> None:
    """Create `folder` if needed and write (then delete) a probe file in it.

    Raises:
        OSError: the folder cannot be created or written, with the reason.
    """
    folder.mkdir(parents=True, exist_ok=True)
    fd, probe = tempfile.mkstemp(prefix=".jaxtour-probe.", dir=folder)
    os.close(fd)
    os.unlink(probe)


def remove_leftovers(folder: Path) -> list[Path]:
    """Delete the ``.part`` files of downloads that were killed; return what went."""
    removed = []
    parts = (
        [p for f in FILES for p in folder.glob(f".{f.name}.*.part")]
        if folder.is_dir()
        else []
    )
    for part in sorted(parts):
        try:
            if _abandoned(part):
                part.unlink()
                removed.append(part)
        except OSError:  # gone already, or a folder we may not write: leave it
            continue
    return removed


def _abandoned(part: Path) -> bool:
    if fcntl is None:  # pragma: no cover
        return time.time() - part.stat().st_mtime > _ABANDONED_AFTER_S
    with open(part, "rb") as stream:
        try:
            fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a live download (this or another process) holds it
        return True


@dataclass
class Mirrors:
    """The mirrors of one load, tried in order; one that fails is not tried again.

    Tells the user (on stderr) which mirror failed and which one served a file.
    """

    urls: tuple[str, ...] | list[str] = MIRRORS
    budget: Budget = field(default_factory=Budget)
    progress: bool = True
    failed: dict[str, str] = field(default_factory=dict)

    def fetch(self, spec: MnistFile, folder: Path) -> tuple[Path | None, list[str]]:
        """Download `spec` into `folder` from the first mirror that serves the right bytes.

        Returns:
            (the file's path, or None when every mirror failed; one line per failure).
        """
        failures = []
        for mirror in self.urls:
            url = mirror.rstrip("/") + "/" + spec.name
            if mirror in self.failed:
                failures.append(
                    f"{url}: skipped, failed earlier in this load "
                    f"({self.failed[mirror]})"
                )
                continue
            try:
                path = _download_verified(url, folder / spec.name, spec, self)
            except (OSError, http.client.HTTPException, ValueError) as err:
                self.failed[mirror] = _reason(err)
                failures.append(f"{url}: {self.failed[mirror]}")
                _say(
                    f"MNIST: mirror {mirror} failed ({self.failed[mirror]}); "
                    "not trying it again in this load."
                )
                continue
            if self.failed:
                _say(
                    f"MNIST: {spec.name} from {mirror} (skipped {', '.join(self.failed)})"
                )
            return path, failures
        return None, failures


def fetch(
    spec: MnistFile,
    folder: Path,
    mirrors: tuple[str, ...] | list[str] = MIRRORS,
    progress: bool = True,
) -> tuple[Path | None, list[str]]:
    """`Mirrors.fetch` for one file, with the default budget."""
    return Mirrors(mirrors, progress=progress).fetch(spec, folder)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _reason(err: BaseException) -> str:
    if isinstance(err, urllib.error.HTTPError):
        return f"HTTP {err.code} {err.reason}"
    if isinstance(err, urllib.error.URLError):
        return f"cannot connect ({err.reason})"
    if isinstance(err, http.client.IncompleteRead):
        return f"connection closed after {len(err.partial)} bytes"
    if isinstance(err, TimeoutError):
        return f"no answer for {err.args[-1] if err.args else 'too long'}"
    return str(err) or type(err).__name__


def _download_verified(url: str, dest: Path, spec: MnistFile, mirrors: Mirrors) -> Path:
    """Stream `url` to a locked temporary file beside `dest`; rename once the SHA-256 holds."""
    budget = mirrors.budget
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{dest.name}.", suffix=".part", dir=dest.parent
    )
    tmp = Path(tmp_name)
    try:
        with (
            os.fdopen(fd, "wb") as out,
            Deadline(budget.deadline(spec.size)) as deadline,
        ):
            if fcntl is not None:
                fcntl.flock(out, fcntl.LOCK_EX)
            try:
                with deadline.open(url, timeout=budget.stall_s) as resp:
                    digest = _copy_within_budget(resp, out, spec, mirrors)
            except TimeoutError as err:
                got = f" after {out.tell()} bytes" if out.tell() else ""
                raise TimeoutError(f"{budget.stall_s:g} s{got}") from err
            except (OSError, http.client.HTTPException) as err:
                if (
                    deadline.expired
                ):  # cut at the deadline: say so, not what the cut looked like
                    raise _too_slow(out.tell(), deadline.seconds, spec, budget) from err
                raise
            if deadline.expired:
                raise _too_slow(out.tell(), deadline.seconds, spec, budget)
            if out.tell() != spec.size or digest != spec.sha256:
                raise ChecksumError(
                    f"served {out.tell()} bytes with SHA-256 {digest[:16]}…, "
                    f"not the published file ({spec.size} bytes, {spec.sha256[:16]}…)"
                )
            out.flush()
            os.chmod(tmp, 0o644)
            os.replace(
                tmp, dest
            )  # while still locked, so no other load deletes it first
        return dest
    finally:
        tmp.unlink(missing_ok=True)


def _copy_within_budget(
    resp: http.client.HTTPResponse, out: BinaryIO, spec: MnistFile, mirrors: Mirrors
) -> str:
    from tqdm.auto import tqdm

    budget, start = mirrors.budget, time.monotonic()
    digest = hashlib.sha256()
    with tqdm(
        total=spec.size,
        unit="B",
        unit_scale=True,
        desc=spec.name,
        disable=not mirrors.progress,
        leave=False,
    ) as bar:
        while chunk := resp.read1(_CHUNK):  # whatever has arrived, not a full 64 KiB
            if out.tell() + len(chunk) > spec.size:
                raise ChecksumError(f"served more than the published {spec.size} bytes")
            out.write(chunk)
            digest.update(chunk)
            bar.update(len(chunk))
            elapsed = time.monotonic() - start
            if elapsed > budget.grace_s + out.tell() / budget.min_rate:
                raise _too_slow(out.tell(), elapsed, spec, budget)
    return digest.hexdigest()


def _too_slow(
    received: int, elapsed: float, spec: MnistFile, budget: Budget
) -> TooSlowError:
    return TooSlowError(
        f"too slow: {received} of {spec.size} bytes in {elapsed:.0f} s; a mirror must "
        f"send at least {budget.min_rate / 1000:g} kB/s after the first "
        f"{budget.grace_s:g} s ({budget.deadline(spec.size):.0f} s for this file)"
    )
