"""JAX's own timings of one call's trace and compilation, read off `jax.monitoring`.

`jax.monitoring` listeners are process-wide: during a call they also hear what other
threads trace and compile, and what the call's own host callbacks run eagerly (each
eager `jnp` op is traced and compiled as a jit of its primitive). So a `Window` keeps
an event only when it comes from the thread that runs the call and names the function
that call's jit traces: JAX passes that name as `fun_name` (``step`` for a trace,
``jit(step)`` for lowering and compiling it, in JAX 0.10 and 0.12 alike).

JAX records these events only where no outer transformation is tracing
(`jax.grad`, `jax.vmap`, an outer `jax.jit` of a function that calls this one): there
a window hears nothing, and a framework's jit, whose traces are read only here, has
its call recorded as not counted (`explain_retraces`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import jax

from jaxtour import _ir
from jaxtour.tracing._statics import Cause

T = TypeVar("T")
_RUNNING = threading.local()  # .window: the Window whose call this thread runs
# JAX's own timings of a compilation (jax.monitoring, public): trace, lower, compile.
COMPILE_EVENTS = (
    "jaxpr_trace_duration",
    "jaxpr_to_mlir_module_duration",
    "backend_compile_duration",
)
BACKEND_COMPILE = "backend_compile_duration"  # XLA compiled a program
TRACE = "jaxpr_trace_duration"  # jit traced a function
# where a framework's jit keeps the jax.jit it calls: nnx.jit's, eqx.filter_jit's
_INNER_JITS = ("jitted_fn", "_cached")
# what a call's events (or their absence) mean, in the record's words
COMPILED_AGAIN = Cause(
    "compiled",
    "jit had traced these arguments already and reused that trace, but XLA compiled "
    "a new program for this call: the trace was made under (or this call runs "
    "under) a transformation that asks for another program from it (jax.grad, "
    "jax.vmap, an outer jax.jit), or the arguments are placed otherwise (another "
    "device, another sharding on an Auto mesh)",
    "",
)
UNCOUNTED = Cause(
    "transformed",
    "not counted: called under an outer transformation (jax.grad, jax.vmap, an "
    "outer jax.jit), where JAX records no trace event, and a framework's jit is "
    "counted only by those",
    "call it outside the transformation to see its traces",
)
EAGER = Cause(
    "disable_jit",
    "jax.disable_jit() is on: f ran op by op in Python, neither traced for jit nor "
    "compiled",
    "",
)


def trace_name(f: Any) -> str | None:
    """The name JAX's trace event gives what `f` traces (its `fun_name`): a jitted
    function's own name, or that of the `jax.jit` a framework's jit calls (`nnx.jit`
    names a `functools.partial` ``<unnamed function>``, as JAX does; `eqx.filter_jit`
    names it after the function inside). None when no name is found."""
    for inner in (f, *(getattr(f, attr, None) for attr in _INNER_JITS)):
        if _ir.is_jitted(inner):
            return getattr(inner, "__name__", None)
    return getattr(f, "__name__", None)


class Window:
    """The compile events of one call, from the threads that run it and of its
    function `name` (None: of any function): `timings` of (event, seconds).

    A thread runs the call from `__enter__` (the caller's) or `run` (a helper's);
    a window opened inside another's call (`explain_retraces` of a wrapped function,
    whose own call runs in a thread of its own) is heard by both."""

    def __init__(self, name: str | None) -> None:
        self.names = None if name is None else (name, f"jit({name})")
        self.timings: list[tuple[str, float]] = []
        self.outer: Window | None = None

    def run(self, call: Callable[[], T]) -> T:
        """`call()`, in this thread, as this window's call."""
        before = getattr(_RUNNING, "window", None)
        _RUNNING.window = self
        try:
            return call()
        finally:
            _RUNNING.window = before

    def _heard(self, event: str, duration_secs: float, **kwargs: Any) -> None:
        if not event.endswith(COMPILE_EVENTS) or not self._runs_here():
            return  # another thread's trace, or not a compilation's event
        if self.names is None or kwargs.get("fun_name") in self.names:
            self.timings.append((event, duration_secs))

    def _runs_here(self) -> bool:
        """Whether this thread runs this window's call (or one inside it)."""
        window = getattr(_RUNNING, "window", None)
        while window is not None and window is not self:
            window = window.outer
        return window is self

    def __enter__(self) -> Window:
        self.outer = getattr(_RUNNING, "window", None)
        _RUNNING.window = self
        jax.monitoring.register_event_duration_secs_listener(self._heard)
        return self

    def __exit__(self, *_: object) -> None:
        jax.monitoring.unregister_event_duration_listener(self._heard)
        _RUNNING.window = self.outer

    @property
    def traced(self) -> bool:
        """Whether JAX traced the function in this window."""
        return any(event.endswith(TRACE) for event, _ in self.timings)

    @property
    def compiled(self) -> bool:
        """Whether XLA compiled the function's program in this window."""
        return any(event.endswith(BACKEND_COMPILE) for event, _ in self.timings)

    @property
    def seconds(self) -> float:
        """The time spent tracing, lowering and compiling."""
        return sum(seconds for _, seconds in self.timings)
