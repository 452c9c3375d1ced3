"""The student's side of the checker process: start it once, reuse it, replace it.

One worker per device count (1, or 8 CPU devices for the exercises that count
collectives) is started on the first `check` that needs it and kept for the kernel's
life. A worker that runs past the timeout is killed with everything it started, and a
worker that dies, or whose kit an answer patched, is replaced by the next `check`.
No wait is unbounded: starting has `START_TIMEOUT`, each answer its `timeout`.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from jaxtour.exercises import _worker

#: Seconds a checker process may take to start (import JAX and the kit) on a busy machine.
START_TIMEOUT = 300.0
POLL = 0.1  # seconds between the waits' returns to Python, where Ctrl-C is raised

_CLOSED = object()  # what the reader thread queues when the worker's output closes
_LAUNCH = "import sys; from jaxtour.exercises._serve import main; sys.exit(main())"
_WORKERS: dict[int, Worker] = {}
_LOCK = threading.Lock()


class Stopped(Exception):
    """The worker did not answer: it ran out of time, or it died."""

    def __init__(self, message: str, *, timed_out: bool) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class Worker:
    """A checker process with `devices` CPU devices, spoken to in framed pickles."""

    #: The worker's script (None: the checker process's), and how its replies are read.
    launch: str | None = None
    loads: Callable[[bytes], Any] = staticmethod(pickle.loads)
    dumps: Callable[[Any], bytes] | None = None  # None: a plain pickle

    def __init__(self, devices: int) -> None:
        self.devices = devices
        # What the worker says on stderr (why it could not start, say): kept for the message.
        self.log = tempfile.TemporaryFile()  # noqa: SIM115  (closed by stop())
        self.process = subprocess.Popen(
            [sys.executable, "-c", self.launch or _LAUNCH],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=_environment(devices),
            start_new_session=True,  # its own group: a kill reaches what it started
        )
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._listen, daemon=True).start()
        try:
            self.ready = self._read(START_TIMEOUT, "start")
        except BaseException:
            self.stop()
            raise

    def ask(self, job: dict, timeout: float) -> dict:
        """Send `job`; its reply, or `Stopped` after `timeout` seconds."""
        stdin: IO[bytes] | None = self.process.stdin
        try:
            if stdin is None:
                raise BrokenPipeError
            _worker.send(stdin, job, self.dumps)
        except (BrokenPipeError, OSError):
            raise Stopped("the checker process had stopped", timed_out=False) from None
        return self._read(timeout, "answer")

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """Kill the worker and whatever it started; wait for it (briefly)."""
        if hasattr(os, "killpg"):  # POSIX: its whole group
            with _suppress_lookup():
                os.killpg(self.process.pid, signal.SIGKILL)
        with _suppress_lookup():
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self.log.close()

    def last_words(self) -> str:
        """The last line the worker wrote to stderr (its error, when it died), or ""."""
        try:
            self.log.seek(max(0, self.log.seek(0, os.SEEK_END) - 2000))
            lines = self.log.read().decode(errors="replace").strip().splitlines()
        except (OSError, ValueError):
            return ""
        return lines[-1].strip() if lines else ""

    def _read(self, timeout: float, what: str) -> Any:
        # A thread reads each reply, so the wait has a timeout on every platform
        # (select() does not take pipes on Windows). The wait comes back to Python every
        # POLL seconds: a Ctrl-C that the OS hands to another thread (a kernel's
        # interrupt is sent to the process) is raised here then, not after `timeout`.
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Stopped(
                    f"no {what} within {timeout:g} s", timed_out=what == "answer"
                )
            try:
                reply = self._replies.get(timeout=min(left, POLL))
                break
            except queue.Empty:
                continue
        if reply is not _CLOSED:
            return reply
        said = self.last_words() if what == "start" else ""
        raise Stopped(
            f"the checker process died ({self._status()}"
            + (f": {said}" if said else "")
            + ")",
            timed_out=False,
        )

    def _listen(self) -> None:
        if hasattr(signal, "pthread_sigmask"):  # POSIX: a Ctrl-C is the main thread's
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        stream = self.process.stdout
        while stream is not None:
            try:
                self._replies.put(_worker.receive(stream, self.loads))
            except Exception:  # closed, cut short, or not a message: the worker is done
                break
        self._replies.put(_CLOSED)

    def _status(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "it closed its output"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"


class _suppress_lookup:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, *_: Any) -> bool:
        return kind is not None and issubclass(
            kind, ProcessLookupError | PermissionError
        )


def ask(devices: int, job: dict, timeout: float) -> dict:
    """Run `job` on the worker with `devices` devices, starting or replacing it first.

    Raises:
        Stopped: the worker did not answer in time (it is killed) or died.
    """
    with _LOCK:
        worker = _WORKERS.get(devices)
        if worker is None or not worker.alive():
            _WORKERS.pop(devices, None)
            worker = Worker(devices)  # raises Stopped when it cannot start
            _WORKERS[devices] = worker
        try:
            reply = worker.ask(job, timeout)
        except BaseException:  # a timeout, a death, or Ctrl-C in the kernel
            _retire(devices)
            raise
        if reply.get("tainted"):
            _retire(devices)
        return reply


def _retire(devices: int) -> None:
    worker = _WORKERS.pop(devices, None)
    if worker is not None:
        worker.stop()


@atexit.register
def shutdown() -> None:
    """Stop every worker (at the kernel's exit)."""
    for devices in list(_WORKERS):
        _retire(devices)


def _environment(devices: int) -> dict[str, str]:
    """The kernel's environment for a JAX on `devices` CPU devices that finds what the
    kernel imports (set before JAX starts: the kit's import already uses JAX)."""
    env = dict(os.environ)
    flags = re.sub(
        r"--xla_force_host_platform_device_count=\S+", "", env.get("XLA_FLAGS", "")
    )
    env.update(
        JAX_PLATFORMS="cpu",  # an answer is judged on the CPU: no second claim on a GPU
        XLA_FLAGS=flags.strip(),
        JAX_NUM_CPU_DEVICES=str(devices),
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
    )
    return env
