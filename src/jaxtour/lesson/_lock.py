"""One process at a time per cache entry: a file lock with a bounded wait."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

LOCK_WAIT_S = 3600  # the longest a process waits for another's run of the same lesson


@contextlib.contextmanager
def locked(lock: Path, what: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the file lock `lock` (filelock's `FileLock`) while the block runs.

    Raises:
        TimeoutError: another process held it for over `wait_s` seconds (`what` says
            what it was doing); errors raised by the block itself pass through as they are.
    """
    from filelock import FileLock, Timeout

    held = FileLock(str(lock), timeout=wait_s)
    try:
        held.acquire()
    except Timeout:
        raise TimeoutError(
            f"Waited {wait_s:.0f} s for another process {what} ({lock}). Stop it, or "
            "delete the lock file if no process holds it."
        ) from None
    try:
        yield
    finally:
        held.release()
