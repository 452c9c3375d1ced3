"""Files the kit writes: whole or not at all.

Every picture, deck, checkpoint and notebook the kit saves goes through `write_atomically`,
so a full disk, a killed process or Ctrl-C leaves the old file (or none), never half of one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file beside it, then rename it in place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(
            tmp, 0o666 & ~_umask()
        )  # mkstemp makes 0600; a saved picture is for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
