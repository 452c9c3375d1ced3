"""Waits that Ctrl-C (and a time limit) can end: for runs that may never finish.

A compiled `jax.lax.while_loop` whose condition never turns False runs forever, and the
thread that waits for it sits inside XLA's C++ code, where Python never gets to raise
`KeyboardInterrupt` (on a CPU the call itself runs the program; on a GPU or TPU it is
`block_until_ready` that waits). So a lens that runs the user's program (`step_through`,
`find_nans`, `explain_retraces`, `draw_roofline`) calls `run_interruptibly`: the work
runs in a helper thread, and this thread waits in short Python-level slices, where a
Ctrl-C arrives and a time limit is checked. XLA cannot cancel a running program, so
after a stop it carries on in the background until the process ends: the message says
so.
"""

from __future__ import annotations

import contextlib
import contextvars
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


def run_interruptibly(fn: Callable[[], T], what: str, hint: str = LOOP_HINT) -> T:
    """`fn()`, and every array it returns ready, waited for so that Ctrl-C can stop it.

    Args:
        fn: the work: runs the user's program and returns its results (a pytree).
        what: what it runs, for the message, e.g. "loss's compiled program".
        hint: what a stop suggests, after the message's colon.

    Raises:
        Interrupted: Ctrl-C, with what was running and for how long.
        TimeLimitError: the block's `time_limit` passed.
        Whatever `fn` raises, as it raised it.
    """
    import jax

    options = {name: getattr(jax.config, f"jax_{name}") for name in THREAD_OPTIONS}
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            with contextlib.ExitStack() as stack:
                for name, value in options.items():
                    stack.enter_context(getattr(jax, name)(value))
                box["out"] = jax.block_until_ready(fn())
        except BaseException as err:  # handed to the waiting thread, which raises it
            box["err"] = err

    context = contextvars.copy_context()
    thread = threading.Thread(target=context.run, args=(work,), daemon=True)
    start, limit = time.monotonic(), _LIMIT.get()
    thread.start()
    try:
        while thread.is_alive():
            thread.join(POLL)
            if limit is not None and time.monotonic() - start > limit:
                raise TimeLimitError(
                    _stopped(what, start, f"time limit of {limit:g} s", hint)
                )
    except KeyboardInterrupt:
        raise Interrupted(_stopped(what, start, "Ctrl-C", hint)) from None
    if "err" in box:
        raise box["err"]
    return box["out"]


def _stopped(what: str, start: float, why: str, hint: str) -> str:
    took = time.monotonic() - start
    return f"Stopped ({why}) while running {what}, after {took:.1f} s: {hint}"
