"""The tracing lens: why a function retraced, what is inside it, where a NaN came from.

`explain_retraces(f)` is `jax.jit(f)` that records every call's signature and says in
words why a call traced again; `step_through(f)(*args)` runs `f`'s jaxpr one equation
at a time and keeps every value; `find_nans(f)(*args)` stops at the first equation that
makes a NaN (or an Inf) and draws where it came from.
"""

from jaxtour.tracing._nans import NanReport, find_nans
from jaxtour.tracing._report import RetraceReport
from jaxtour.tracing._retrace import Retraced, explain_retraces
from jaxtour.tracing._step_through import Steps, step_through

__all__ = [
    "NanReport",
    "RetraceReport",
    "Retraced",
    "Steps",
    "explain_retraces",
    "find_nans",
    "step_through",
]
