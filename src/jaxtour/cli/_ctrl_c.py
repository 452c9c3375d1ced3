"""Ctrl-C for the `jaxtour` command: noticed even where Python swallows it, said in one
line, and the process ended without a traceback.

Python's own handler only raises `KeyboardInterrupt`, and that exception can be lost:
raised inside a garbage-collector callback (JAX's `_xla_gc_callback`) it is printed as
"Exception ignored in ..." and the command carries on. Or it turns into another fault: a
notebook's kernel dies of the same Ctrl-C and nbclient raises `DeadKernelError`. So the
handler installed here also records the press, and `main` reads the record.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

STATUS = 128 + signal.SIGINT  # a shell's status for a process stopped by SIGINT (130)


class CtrlC:
    """The SIGINT handler of one `main` call: the first press raises `KeyboardInterrupt`
    and is recorded in `pressed`; a second one ends the process at once."""

    def __init__(self) -> None:
        self.pressed = False
        self.reported = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.pressed:  # the first one is being handled, or was swallowed: stop now
            exit_now("interrupted")
        self.pressed = True
        raise KeyboardInterrupt

    def caught(self) -> type[BaseException]:
        """What ends the command as interrupted: `KeyboardInterrupt`, or, once Ctrl-C
        was pressed, any exception (what it raised may have been lost, or become
        another fault in a library that was stopped halfway)."""
        return BaseException if self.pressed else KeyboardInterrupt

    def report(self, err: BaseException | None = None) -> int:
        """Say that Ctrl-C stopped the command (the `KeyboardInterrupt`'s own message
        where it has one: a stopped wait says what it stopped); return 130."""
        self.pressed = self.reported = True
        said = str(err) if isinstance(err, KeyboardInterrupt) else ""
        print(said or "interrupted", file=sys.stderr)
        return STATUS


@contextlib.contextmanager
def handled() -> Iterator[CtrlC]:
    """Handle SIGINT with a new `CtrlC` inside the block, then restore the previous
    handler (`main` may run inside a test). Outside the main thread, where no handler
    can be set, the `CtrlC` sees only the `KeyboardInterrupt`s that reach it."""
    ctrl_c = CtrlC()
    if threading.current_thread() is not threading.main_thread():
        yield ctrl_c
        return
    previous = signal.signal(signal.SIGINT, ctrl_c)
    try:
        yield ctrl_c
    finally:
        # None: a handler set outside Python, which cannot be put back; Python's own
        signal.signal(signal.SIGINT, previous or signal.default_int_handler)


def exit_now(message: str | None = None) -> None:
    """End the process with status 130 now, without the interpreter's finalisation:
    threads that XLA started can crash it (a segfault, status 139) once Python's
    state is gone. The command's `with` blocks have already closed as the exception
    unwound; what is buffered in stdout and stderr is written first."""
    if message:
        print(message, file=sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe, a replaced stream
            stream.flush()
    os._exit(STATUS)


def stop_if_pressed() -> None:
    """Raise `KeyboardInterrupt` if Ctrl-C was pressed under `main` and a library
    swallowed it (nbclient's event loop does): a long step calls this between its parts,
    so that the press stops it there instead of at the command's end."""
    handler = signal.getsignal(signal.SIGINT)
    if isinstance(handler, CtrlC) and handler.pressed:
        raise KeyboardInterrupt
