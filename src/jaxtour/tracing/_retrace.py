"""`explain_retraces`: `jax.jit` that says, call by call, if it traced again and why."""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax

from jaxtour import _ir
from jaxtour._ir import arg_names
from jaxtour._wait import run_interruptibly
from jaxtour.tracing._events import COMPILED_AGAIN, EAGER, UNCOUNTED, Window, trace_name
from jaxtour.tracing._jits import Jits, under_a_transformation
from jaxtour.tracing._report import RetraceReport
from jaxtour.tracing._retrace_diff import Example, abstract, diff_trace
from jaxtour.tracing._signature import (
    Cause,
    Signature,
    closest,
    defaults,
    differences,
)
from jaxtour.tracing._watched import fingerprints, mutable_fingerprints

WHO = "explain_retraces"


class _Run(NamedTuple):
    """What one call did: traced `f`, compiled a program, ran without jit; its times;
    `uncounted`: a framework's jit under a transformation, where nothing can tell."""

    traced: bool
    compiled: bool
    eager: bool
    compile_s: float
    call_s: float
    uncounted: bool = False


class Call(NamedTuple):
    """One call: where from, what jit did ("first trace", "retrace", "cache hit",
    "compiled again" for a cache hit XLA compiled anew, "not jitted" under
    `jax.disable_jit`, "not counted" for a framework's jit called under an outer
    transformation, where JAX records no trace event to count),
    why (`causes`), what it read that jit ignores (`stale`), and its costs.

    `signature` is what jit keyed the call on; `compared_with`, for a retrace, the
    `number` of the earlier traced call it was explained against (the one that
    differs least, `closest`), and for a cache hit the call whose trace it reused.
    """

    number: int
    site: _ir.SourceLine | None
    event: str
    causes: list[Cause]
    stale: list[str]
    compile_s: float
    call_s: float
    signature: Signature | None = None
    compared_with: int | None = None


def explain_retraces(
    f: Callable,
    *,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Retraced:
    """As `jax.jit(f)`, but each call is recorded and a call that traces again says why.

    Each call's signature (the pytree structure of the traced arguments, each leaf's
    shape, dtype, weak type and sharding, which arguments came by keyword, each static
    argument's value or identity, and the settings jit keys on besides: 64-bit mode,
    matmul precision, `jax.set_mesh`'s mesh) is kept; a side effect in the traced
    Python counts the traces, and `jax.monitoring` times the trace and compilation. A
    retrace is compared with the closest earlier signature and its cause named: a
    changed shape, dtype, weak type or sharding, a changed pytree structure (a list
    that grew), an argument passed by keyword that came by position, a static
    argument's new value or a new object hashed by identity, a changed setting. Globals
    and closed-over values that `f` reads are fingerprinted too: jit does not watch
    them, so a changed one is reported as a stale result, not a retrace.

    JAX's own explanation is the config flag `jax_explain_cache_misses`, which logs a
    message per cache miss against the closest previous key; this wrapper makes the
    same comparison from public pieces (`jax.tree.structure`, `jax.typeof`, the static
    arguments' hashes) so that it can keep a table, time each trace and see stale reads
    that the flag cannot. Where JAX names a changed static argument as a whole, this
    names the field that changed, and where a module's static field changed its
    pytree structure, that field (``m.out_features changed: 2 → 3``).

    Leaves JAX cannot trace inside an argument (an Equinox module's activation
    function) are held fixed, as `eqx.filter_jit` and the other lenses hold them, and
    keyed as static values. A model passed as `f` (an Equinox module, a `Partial` of
    arrays) is jitted as ``apply(model, *args)``, as `eqx.filter_jit(model)` jits it:
    its arrays are inputs, read at each call, and a changed field is named
    (``MLP.layers[0].weight``). A framework's own jit (`nnx.jit`, `eqx.filter_jit`) is
    called as it is, never wrapped in another `jax.jit`: what it does besides
    computing (an NNX optimizer's update of the model) happens as without this
    wrapper; its traces are read off `jax.monitoring` (its function's events, from
    the thread that runs it; under an outer transformation JAX records none, and
    such a call is "not counted"), its signature as it keys it
    (`eqx.filter_jit` holds every non-array leaf, Python numbers too, static).

    Args:
        f: the function to jit, or a framework's jitted function.
        static_argnums: as in `jax.jit` (None, an int or ints, negative from the end).
        static_argnames: as in `jax.jit`; names and positions infer each other.
            Neither given, a `jax.jit`-wrapped `f` keeps its own static arguments.

    Returns:
        A `Retraced` function: call it as `jax.jit(f)`; `.report` (also what a notebook
        shows for it) is the table of traces; `.traces` counts them.

    Raises:
        TypeError: `f` is not callable, or a static option is not ints (strs); at a
            call, an argument JAX cannot trace (a whole one: a string passed where
            `f` wants an array) or a static argument it cannot hash; or `f` is a model
            that writes to itself (an NNX `BatchNorm`): jit would lose the update.
        ValueError: a static position `f` cannot take or a name it does not have.

    Example:
        >>> import jax.numpy as jnp
        >>> scaled = explain_retraces(lambda x, n: x * n, static_argnums=1)
        >>> for n in (2, 2, 3):
        ...     _ = scaled(jnp.ones(3), n)
        >>> scaled.traces, [c.event for c in scaled.calls]
        (2, ['first trace', 'cache hit', 'retrace'])
        >>> scaled.calls[-1].causes[0].words
        'static `n` changed value: 2 → 3'
    """
    _ir.check_callable(f, WHO)
    return Retraced(f, _ir.static_args(f, static_argnums, static_argnames, WHO))


class Retraced:
    """A jitted function that records its calls (made by `explain_retraces`)."""

    def __init__(self, f: Callable, statics: _ir.StaticArgs) -> None:
        self.fn, self.name = f, _ir.function_name(f)
        self.traces = 0
        self.calls: list[Call] = []
        self._seen: dict[Signature, dict[str, str]] = {}  # -> what f read when traced
        self._traced_by: dict[Signature, int] = {}  # -> the call that last traced it
        self._examples: dict[int, Example] = {}  # traced call -> its argument types
        self._written: set[str] = set()  # globals a trace changed: side effects
        self._defaults = defaults(f)
        self._statics_of: dict[int, _ir.StaticArgs] = {}  # traced call -> its statics
        self._jits = Jits(f, statics, self._traced)
        # __name__, __doc__, __wrapped__, as jit; not f's __dict__, which could
        # overwrite this object's own attributes
        functools.update_wrapper(self, f, updated=())

    def _traced(self) -> None:
        self.traces += 1

    def lower(self, *args: Any, **kwargs: Any) -> jax.stages.Lowered:
        """As `jax.jit(f).lower`: neither a call nor a trace in the table."""
        return self._jits.staged("lower", args, kwargs)

    def trace(self, *args: Any, **kwargs: Any) -> jax.stages.Traced:
        """As `jax.jit(f).trace`: neither a call nor a trace in the table."""
        return self._jits.staged("trace", args, kwargs)

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """As `jax.jit(f).eval_shape`: neither a call nor a trace in the table."""
        return self._jits.staged("eval_shape", args, kwargs)

    def clear_cache(self) -> None:
        """As `jax.jit(f).clear_cache`: the next call traces again (the table says
        the cache no longer held its signature)."""
        self._jits.clear_cache()

    @property
    def retraces(self) -> int:
        """Traces after the first."""
        return max(self.traces - 1, 0)

    @property
    def report(self) -> RetraceReport:
        """The table of this function's traces (and stale reads)."""
        return RetraceReport(self.name, self.calls, self._diff)

    def closest(self, number: int) -> int | None:
        """The number of the earlier traced call that call `number` (1-based, as the
        table counts calls) differs least from: what a retrace is explained against
        (`RetraceReport.closest`).

        Raises:
            IndexError: there is no call `number`.
        """
        return self.report.closest(number)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        site = _call_site(sys._getframe(1))
        statics = self._jits.statics(args, kwargs)
        names = arg_names(self.fn, len(args))
        static = statics.positions(len(args))
        self._check_held(args, kwargs, static, statics.names, names)
        statics.check_values(args, kwargs, WHO, names)
        if not self._jits.own:  # a framework's jit judges its arguments itself
            _ir.check_args(args, kwargs, statics, WHO, inside=False)
        # a model as f: jit's call is apply(model, *args), the model first
        statics, args, names = self._jits.applied(statics, args, names)
        static = statics.positions(len(args))
        sig = self._jits.signature(statics, args, kwargs, names, self._defaults)
        jitted, call_args, call_kwargs = self._jits.prepared(
            statics, args, kwargs, names
        )
        before, read = self.traces, self._jits.reads()
        held = mutable_fingerprints(read)  # what the trace itself may change
        # under jax.disable_jit, jit runs f op by op: no trace (read by name: the
        # option is not in JAX 0.10's type stubs)
        eager = bool(getattr(jax.config, "jax_disable_jit"))  # noqa: B009
        # a framework's jit is counted by JAX's events, which an outer
        # transformation silences: such a call cannot be counted
        unseen = bool(self._jits.own) and under_a_transformation(
            (args, kwargs, *read.values())
        )
        start = time.perf_counter()
        try:
            with Window(trace_name(jitted)) as window:
                out = self._call(jitted, before, call_args, call_kwargs, read, window)
        except ValueError as err:
            retold = _ir.own_statics_error(self.fn, err, WHO, args, kwargs)
            if retold is not None:
                raise retold from err
            raise
        took = time.perf_counter() - start
        if self._jits.own and window.traced and not unseen:
            self._traced()  # a framework's jit: its trace is JAX's event
        if eager:
            self.traces = before
        run = _Run(
            self.traces > before,
            window.compiled and not unseen,
            eager,
            0.0 if eager or unseen else window.seconds,
            took,
            unseen and not eager,
        )
        self.calls.append(self._record(sig, site, read, held, run))
        if self.traces > before:
            self._statics_of[len(self.calls)] = statics
            self._examples[len(self.calls)] = abstract(
                args, kwargs, tuple(static), statics.names
            )
        return out

    def _check_held(
        self, args: tuple, kwargs: dict, static: Any, keys: Any, names: list[str]
    ) -> None:
        """A static argument that arrives as a tracer: what traced the call (a lens,
        `jax.jit`) was not told it is static."""
        held = [names[i] for i in static if i < len(args) and _ir.is_tracer(args[i])]
        held += [k for k in keys if _ir.is_tracer(kwargs.get(k))]
        if held:
            which = ", ".join(f"`{name}`" for name in held)
            raise TypeError(
                f"{WHO}({self.name}) holds {which} static, but a tracer came there: "
                "what traced this call (a lens, jax.jit) traced it. Hold it static "
                "there too (static_argnums or static_argnames), as for a jax.jit "
                "function."
            )

    def _call(
        self,
        jitted: Any,
        before: int,
        args: tuple,
        kwargs: dict,
        read: dict,
        window: Window,
    ) -> Any:
        """The jitted call, in a thread Ctrl-C can leave; in this one when a
        transformation around the call traces it, as its tracers belong to this
        thread's trace (`read`: what `f` reads besides its arguments; `window`
        hears the events of the thread the call runs in)."""
        if under_a_transformation((args, kwargs, *read.values())):
            return jitted(*args, **kwargs)

        try:
            return run_interruptibly(
                lambda: window.run(lambda: jitted(*args, **kwargs)),
                f"{self.name}'s compiled program",
            )
        except jax.errors.UnexpectedTracerError:
            # a tracer reached `f` some other way (a function it calls closes over
            # one): the thread was the fault, so the call runs here. It traced once,
            # in the thread or here (jit may have kept the thread's trace).
            try:
                return jitted(*args, **kwargs)
            finally:
                self.traces = min(self.traces, before + 1)

    def _diff(self, n: int) -> Any:
        nums, names = self._statics_of.get(n, self._jits.told)
        static = {"static_argnums": nums, "static_argnames": names}
        against = self.calls[n - 1].compared_with if 1 <= n <= len(self.calls) else None
        fn = self._jits.diffed
        return diff_trace(fn, self.name, self._examples, n, static, against)

    def _record(
        self, sig: Signature, site: Any, read: dict, held: dict, run: _Run
    ) -> Call:
        """The record of one call: what jit did and why (`read`: what `f` reads
        besides its arguments; `held`: the fingerprints of those a trace may change,
        taken before the call)."""
        now, causes, stale = fingerprints(read), [], []
        if run.traced:  # a value f's trace changes is its side effect, not its input
            self._written |= {k for k, fp in held.items() if now.get(k) != fp}
        seen = list(self._seen)
        against = None
        if run.eager:
            event, causes = "not jitted", [EAGER]
        elif run.uncounted:
            event, causes = "not counted", [UNCOUNTED]
        elif not run.traced:
            event = "compiled again" if run.compiled else "cache hit"
            causes = [COMPILED_AGAIN] if run.compiled else []
            then = self._seen.get(sig, next(reversed(self._seen.values()), now))
            against = self._number(
                sig if sig in self._seen else seen[-1] if seen else None
            )
            stale = [
                f"`{name}` changed ({then[name]} → {now[name]}) but jit did not "
                "retrace: this call used the value from when it was traced"
                for name in now
                if name in then
                and now[name] != then[name]
                and name not in self._written
            ]
        elif not self._seen:
            event = "first trace"
        elif sig in self._seen:
            event, against = "retrace", self._number(sig)
            causes = [self._jits.traced_again()]
        else:
            event = "retrace"
            index = closest(sig, seen)
            old = seen[index] if index is not None else sig
            causes, against = differences(sig, old), self._number(old)
        if run.traced:
            self._seen[sig] = now
            self._traced_by[sig] = len(self.calls) + 1
        return Call(
            len(self.calls) + 1,
            site,
            event,
            causes,
            stale,
            run.compile_s,
            run.call_s,
            sig,
            against,
        )

    def _number(self, sig: Signature | None) -> int | None:
        """The number of the (latest) call that traced `sig`."""
        return None if sig is None else self._traced_by.get(sig)

    def _repr_html_(self) -> str:
        return self.report._repr_html_()

    def __str__(self) -> str:
        return str(self.report)

    def __repr__(self) -> str:
        unseen = sum(c.event == "not counted" for c in self.calls)
        return (
            f"explain_retraces({self.name}): {len(self.calls)} calls, "
            f"{self.traces} traces"
            + (
                f" ({unseen} calls not counted: under a transformation)"
                if unseen
                else ""
            )
        )


def _call_site(frame: Any) -> _ir.SourceLine:
    """The user's line that called: `frame`, or the first frame outside the libraries
    above it when a transformation (`jax.grad(retraced)`) or a lens called the
    wrapped function."""
    caller = frame
    while caller is not None and _ir.is_library(caller.f_code.co_filename):
        caller = caller.f_back
    found = caller or frame
    return _ir.SourceLine(
        found.f_code.co_filename, found.f_lineno, found.f_code.co_name
    )
