"""Worker processes watched together: one fails, all stop (`train_multiprocess`).

Each child runs in its own session, so a Ctrl-C in the terminal reaches the launcher
only, which then stops them all; their output is read by one thread each (the last
lines kept for the error message). When one exits non-zero, or is killed, the others
get SIGKILL and are reaped: no orphans. Not SIGTERM: `jax.distributed` catches it (a
preemption notice, for checkpointing) and the worker carries on; measured here, the
launcher then waited out a 2 s grace period every time. A worker has nothing to save.
"""

from __future__ import annotations

import collections
import os
import re
import signal
import subprocess
import threading
import time

POLL = 0.05  # seconds between looks at the children
RESULT = "JAXTOUR_RESULT "  # the line that carries process 0's result
# Lines not worth quoting in an error message: Gloo's connection messages ("[Gloo]
# Rank 0 is connected to 7 peer ranks. Expected number of connected peer ranks is :
# 7"), split anywhere by its threads. They reach only stderr (the worker's
# `--own-stdout`), so the log, which is stdout, never sees them.
CHATTER = re.compile(r"\[Gloo\]|peer ranks|is connected to|^Rank \d+ *$")


class MultiprocessError(RuntimeError):
    """A process of a multi-process run failed; the others were stopped."""


class NoClusterError(RuntimeError):
    """`jax.distributed.initialize()` found no cluster to join."""


NO_CLUSTER = (
    "No cluster to join: jax.distributed.initialize() found no TPU pod slice, SLURM "
    "or Open MPI job ({err}). Run this under srun or mpirun, or on every host of a "
    "TPU slice; elsewhere start `python -m jaxtour.launch._worker --coordinator "
    "HOST:PORT --processes N --process-id I` on each host. On one machine, "
    "`jaxtour train --processes N` starts the processes for you."
)


class Group:
    """The worker processes, their output read by threads, watched until all exit."""

    def __init__(self, commands: list[list[str]], echo: bool, log_all: bool) -> None:
        env = {**os.environ, "JAX_PLATFORMS": "cpu"}
        env.pop("XLA_FLAGS", None)  # the device count comes from --devices
        self.start = time.monotonic()
        self.seconds = 0.0
        self.tails: list[collections.deque[str]] = [
            collections.deque(maxlen=30) for _ in commands
        ]
        self.shown: list[str] = []
        # one reader thread per worker echoes: a lock keeps two lines from interleaving
        # (print writes a line and its newline apart)
        self.echoing = threading.Lock()
        self.procs: list[subprocess.Popen] = []
        self.threads = []
        for rank, command in enumerate(commands):
            proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,  # the worker's own lines (--own-stdout)
                stderr=subprocess.PIPE,  # the rest: warnings, tracebacks, Gloo
                env=env,
                text=True,
                start_new_session=True,
            )  # Ctrl-C reaches us only
            self.procs.append(proc)
            show = log_all or rank == 0
            self.threads += [
                threading.Thread(
                    target=self._read,
                    daemon=True,
                    args=(rank, proc, show, echo, log_all),
                ),
                threading.Thread(target=self._keep, daemon=True, args=(rank, proc)),
            ]
            for thread in self.threads[-2:]:
                thread.start()

    def _read(
        self,
        rank: int,
        proc: subprocess.Popen[str],
        show: bool,
        echo: bool,
        log_all: bool,
    ) -> None:
        for raw in proc.stdout or ():  # every worker starts with stdout=PIPE
            line = raw.rstrip("\n")
            self.tails[rank].append(line)
            if not show:
                continue
            if log_all and not line.startswith(RESULT):  # the result stays unmarked
                line = f"[process {rank}] {line}"
            self.shown.append(line)
            if echo and not line.startswith(RESULT):
                with self.echoing:
                    print(line, flush=True)

    def _keep(self, rank: int, proc: subprocess.Popen) -> None:
        """Stderr goes into the tail the error message quotes, and nowhere else."""
        for raw in proc.stderr:  # type: ignore[union-attr]
            self.tails[rank].append(raw.rstrip("\n"))

    def wait(self, timeout: float | None) -> list[str]:
        """Process 0's lines once every process has exited with 0; else stop the rest
        and raise `MultiprocessError`. Ctrl-C stops them all, then propagates."""
        try:
            failed = self._watch(timeout)
        except BaseException:
            self.stop()
            raise
        if failed is not None:
            self.stop()
            raise MultiprocessError(self._message(*failed))
        for thread in self.threads:
            thread.join(5)
        self.seconds = time.monotonic() - self.start
        return list(self.shown)

    def _watch(self, timeout: float | None) -> tuple[int, int | None] | None:
        while True:
            codes = [proc.poll() for proc in self.procs]
            bad = [(rank, code) for rank, code in enumerate(codes) if code]
            if bad:
                return bad[0]
            if all(code == 0 for code in codes):
                return None
            if timeout is not None and time.monotonic() - self.start > timeout:
                return (-1, None)
            time.sleep(POLL)

    def stop(self) -> None:
        """SIGKILL every live worker and reap them all."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                if pipe is not None:
                    pipe.close()
        self.seconds = time.monotonic() - self.start

    def _message(self, rank: int, code: int | None) -> str:
        elapsed, n = time.monotonic() - self.start, len(self.procs)
        if rank < 0:
            return (
                f"The {n} processes did not finish within the timeout "
                f"({elapsed:.0f} s); stopped them all."
            )
        how = (
            f"was killed by {signal.Signals(-code).name}"
            if code is not None and code < 0
            else f"exited with code {code}"
        )
        tail = [
            line
            for line in self.tails[rank]
            if line.strip()
            and not line.lstrip().startswith("@")
            and not CHATTER.search(line)
        ]
        said = "\n".join(f"  {line}" for line in tail[-6:]) or "  (no output)"
        return (
            f"Process {rank} of {n} {how} {elapsed:.1f} s into the run; stopped the "
            f"other {n - 1}. Its last output:\n{said}"
        )
