"""One process at a time per cache entry: a file lock with a bounded wait.

filelock's `FileLock` where it is installed (the notebook extra), else the POSIX
``flock`` it wraps, so an environment built from an older lock file still works.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

LOCK_WAIT_S = 3600  # the longest a process waits for another's run of the same lesson


@contextlib.contextmanager
def locked(lock: Path, what: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the file lock `lock` while the block runs.

    Raises:
        TimeoutError: another process held it for over `wait_s` seconds (`what` says
            what it was doing); errors raised by the block itself pass through as they are.
    """
    acquired: contextlib.AbstractContextManager[object]
    try:
        from filelock import FileLock
    except ImportError:
        acquired = _flock(lock, wait_s)
    else:
        acquired = FileLock(str(lock), timeout=wait_s)
    try:
        acquired.__enter__()
    except TimeoutError:  # filelock's Timeout is one too
        raise TimeoutError(
            f"Waited {wait_s:.0f} s for another process {what} ({lock}). Stop it, or "
            "delete the lock file if no process holds it."
        ) from None
    try:
        yield
    finally:
        acquired.__exit__(None, None, None)


@contextlib.contextmanager
def _flock(lock: Path, wait_s: float) -> Iterator[None]:
    import fcntl

    with open(lock, "a") as held:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(lock) from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)
