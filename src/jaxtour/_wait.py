"""Waits that Ctrl-C (and a time limit) can end: for runs that may never finish.

A compiled `jax.lax.while_loop` whose condition never turns False runs forever, and the
thread that waits for it sits inside XLA's C++ code, where Python never gets to raise
`KeyboardInterrupt` (on a CPU the call itself runs the program; on a GPU or TPU it is
`block_until_ready` that waits). So a lens that runs the user's program (`step_through`,
`find_nans`, `explain_retraces`, `draw_roofline`) calls `run_interruptibly`: the work
runs in a helper thread, and this thread waits in short Python-level slices, where a
Ctrl-C arrives and a time limit is checked. The helper enters the caller's `with
jax.X(...)` settings that are known (THREAD_OPTIONS, `jax.set_mesh`); under any other
(`jax.threefry_partitionable`, `jax.log_compiles`, a transfer guard) the work runs in
the calling thread, as `jax.jit` would, and only Ctrl-C's reach is lost. XLA cannot
cancel a running program, so after a stop it carries on in the background until the
process ends: the message says so.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
POLL = 0.05  # seconds between looks at the helper thread
# JAX options a `with jax.X(...)` block sets for the calling thread only; the helper
# thread enters the same values, so the work runs as it would have here.
THREAD_OPTIONS = (
    "enable_x64",
    "default_device",
    "default_matmul_precision",
    "numpy_rank_promotion",
    "numpy_dtype_promotion",
    "debug_nans",
    "debug_infs",
    "disable_jit",
)
_LIMIT: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "jaxtour_time_limit", default=None
)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped the wait for a run; the message says what was running."""


class TimeLimitError(TimeoutError):
    """A run took longer than the `time_limit` set around it."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Stop any lens that runs a program inside this block after `seconds` (None: wait).

    Example:
        >>> with time_limit(30):
        ...     pass  # e.g. step_through(f)(x): TimeLimitError after 30 s
    """
    if seconds is not None and not seconds > 0:
        raise ValueError(f"`seconds` must be > 0 or None; got {seconds!r}.")
    token = _LIMIT.set(seconds)
    try:
        yield
    finally:
        _LIMIT.reset(token)


LOOP_HINT = (
    "a while_loop whose condition never turns False? XLA cannot cancel a running "
    "program, so it goes on in the background, holding a core of its device: restart "
    "Python (the Jupyter kernel) to end it."
)


def _mesh() -> Any:
    """The mesh of the caller's `with jax.set_mesh(...)` block (thread-local, as the
    options are), else None; None under `jax.jit` too, where JAX refuses to say."""
    import jax

    try:
        mesh = jax.sharding.get_mesh()
    except ValueError:  # tracing: only the abstract mesh is known
        return None
    return None if mesh.empty else mesh


def run_interruptibly(
    fn: Callable[[], T], what: str, hint: str = LOOP_HINT, calls_back: bool = True
) -> T:
    """`fn()`, and every array it returns ready, waited for so that Ctrl-C can stop it.

    Args:
        fn: the work: runs the user's program and returns its results (a pytree).
        what: what it runs, for the message, e.g. "loss's compiled program".
        hint: what a stop suggests, after the message's colon.
        calls_back: the work may call Python (a `jax.debug.print` in the loop): after a
            stop the process then ends with `os._exit` when Python exits (status 1
            after an uncaught exception, else 0), before finalisation, where the next
            call would crash it.

    Raises:
        Interrupted: Ctrl-C, with what was running and for how long.
        TimeLimitError: the block's `time_limit` passed.
        Whatever `fn` raises, as it raised it.
    """
    import jax

    options = {name: getattr(jax.config, f"jax_{name}") for name in THREAD_OPTIONS}
    mesh, settings = _mesh(), _settings()
    box: dict[str, Any] = {}

    def work() -> None:
        if _unmatched(settings):  # a `with` block the helper cannot enter: run here
            box["here"] = True
            return
        try:
            with contextlib.ExitStack() as stack:
                for name, value in options.items():
                    stack.enter_context(getattr(jax, name)(value))
                if mesh is not None:
                    stack.enter_context(jax.set_mesh(mesh))
                box["out"] = jax.block_until_ready(fn())
        except BaseException as err:  # handed to the waiting thread, which raises it
            box["err"] = err

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(work,), daemon=True)
    start, limit = time.monotonic(), _LIMIT.get()
    try:
        thread.start()  # inside: a Ctrl-C may land while it waits for the thread
        while thread.is_alive():
            thread.join(POLL)
            if limit is not None and time.monotonic() - start > limit:
                _abandon(calls_back)
                raise TimeLimitError(
                    _stopped(what, start, f"time limit of {limit:g} s", hint)
                )
    except KeyboardInterrupt:
        _abandon(calls_back)
        raise Interrupted(_stopped(what, start, "Ctrl-C", hint)) from None
    if "err" in box:
        raise box["err"]
    if "here" in box:
        return jax.block_until_ready(fn())
    return box["out"]


def _settings() -> dict[str, Any]:
    """Every JAX option this thread reads, by name: a `with jax.X(...)` block sets
    one for its own thread only (`jax.threefry_partitionable`, `jax.log_compiles`)."""
    import jax

    found = {}
    for name in jax.config.values:
        with contextlib.suppress(AttributeError):  # a flag no thread sets apart
            found[name] = getattr(jax.config, name)
    return found


def _unmatched(caller: dict[str, Any]) -> list[str]:
    """The options whose value here (a new thread: the global one) differs from the
    caller's, leaving out those `run_interruptibly` enters again (THREAD_OPTIONS)."""
    again = {f"jax_{name}" for name in THREAD_OPTIONS}
    here = _settings()
    return [
        name
        for name, value in caller.items()
        if name not in again and not _same(value, here.get(name))
    ]


def _same(a: Any, b: Any) -> bool:
    try:
        return a is b or bool(a == b)
    except Exception:  # a value that will not compare: take it as changed
        return False


def _stopped(what: str, start: float, why: str, hint: str) -> str:
    took = time.monotonic() - start
    return f"Stopped ({why}) while running {what}, after {took:.1f} s: {hint}"


def _abandon(calls_back: bool) -> None:
    """A stopped run goes on in its thread; the process must leave before Python's
    finalisation, where that thread's next Python callback (`jax.debug.print` in the
    loop) would end it with "Fatal Python error" and SIGABRT."""
    if calls_back and not _ABANDONED:
        _ABANDONED.append(True)
        atexit.register(_leave)


_ABANDONED: list[bool] = []


def _leave() -> None:
    # Runs first of the atexit handlers (the last registered). The exit status: 1
    # after an uncaught exception (Python keeps it in sys.last_value), else 0.
    failed = getattr(sys, "last_value", None) or getattr(sys, "last_exc", None)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(1 if failed is not None else 0)
