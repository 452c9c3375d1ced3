"""`find_nans`: the first equation that makes a NaN (or an Inf), and its source line."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour import _ir
from jaxtour._diagram import Diagram
from jaxtour._ir import Step
from jaxtour._number_words import plural
from jaxtour.tracing._draw import preview
from jaxtour.tracing._nans_source import Sources, statics_given
from jaxtour.tracing._step_through import Steps, run_steps

WHO = "find_nans"


def find_nans(
    f: Callable,
    *,
    include_inf: bool = True,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., NanReport]:
    """As `jax_debug_nans`, but it names the equation and draws where the NaN came from.

    `f` runs one equation at a time (`step_through`) and stops at the first equation
    whose result holds a NaN (or, with `include_inf`, an Inf). For the backward pass,
    pass the gradient function itself, `find_nans(jax.grad(loss))`: its jaxpr holds the
    forward and the backward equations, and each backward equation carries the source
    line of the forward operation it differentiates (for a `custom_vjp`'s `bwd`, the
    line that calls the function): the report says "in the backward pass of" it.

    Args:
        f: the function to run; `jax.grad(f)` (or any transformation of it) for the
            backward pass.
        include_inf: also stop at an Inf (True), or at NaNs only (False: an Inf that a
            later `where` discards is then no finding).
        static_argnums: positions of arguments that are not arrays (as in `jax.jit`).
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.

    Returns:
        A function taking `f`'s example arguments and returning a `NanReport`: its text
        names the equation, its inputs' values and the source line, and its picture
        draws that neighbourhood; it says "no NaN" when every value is finite.

    Raises:
        TypeError: `f` is not callable, `include_inf` is not a bool, an argument is
            not something JAX traces, or `f` is a model that writes to itself (an
            NNX `BatchNorm`): the traced copy would lose the update.

    Example:
        >>> import jax.numpy as jnp
        >>> report = find_nans(lambda x: x * jnp.log(x), include_inf=False)(0.0)
        >>> report.step.primitive, report.found
        ('mul', True)
    """
    _ir.check_callable(f, WHO)
    if not isinstance(include_inf, bool):
        raise TypeError(
            f"{WHO}: `include_inf` must be True (stop at a NaN or an Inf) or "
            f"False (NaNs only); got {_ir.describe(include_inf)}."
        )
    statics = _ir.static_args(f, static_argnums, static_argnames, WHO)
    bad = _bad_values(include_inf)

    def find(*args: Any, **kwargs: Any) -> NanReport:
        steps = run_steps(
            f,
            args,
            kwargs,
            statics.nums,
            WHO,
            statics.names,
            stop=_stop_at(bad),
        )

        def made_from(value: Any) -> tuple[str, Any] | None:
            return _ir.made_from_static(f, args, kwargs, statics, value)

        report = NanReport(steps, include_inf, _returned(steps, bad))
        if given := statics_given(f, args, kwargs, statics):
            report.recall_statics(given, made_from)
        return report

    return find


def _returned(steps: Steps, bad: Callable[[Any], bool]) -> Step | None:
    """The first step that made a bad value `f` returns from constants alone
    (`jnp.log(-1.0)`): `_stop_at` passed it by, yet it is the program's NaN. None if
    the run stopped, or every result `f` returns is finite (or no step made it)."""
    run = steps.run
    if run.stopped is not None:
        return None
    maker = {v: s for s in steps for v in s.outvars}
    frontier = [
        maker[v]
        for v, x in zip(run.outvars, run.outputs, strict=True)
        if not _ir.is_literal(v) and v in maker and bad(x)
    ]
    seen: dict[int, Step] = {}
    while frontier:
        step = frontier.pop()
        if step.index not in seen:
            seen[step.index] = step
            frontier += [
                maker[a] for a in step.invars if not _ir.is_literal(a) and a in maker
            ]
    made = [seen[i] for i in sorted(seen) if any(bad(x) for x in seen[i].outputs)]
    return made[0] if made else None


def _stop_at(bad: Callable[[Any], bool]) -> Callable[[Step], bool]:
    """Stop at the first step whose output is bad, unless every input is a constant:
    a NaN JAX writes into a jaxpr (`jnp.var`'s empty case, a `where` branch) and what
    is computed from constants alone are not the program's NaN until a step mixes
    them with its data (or `f` returns them: `_returned`)."""
    constant: set = set()

    def stop(step: Step) -> bool:
        if all(_ir.is_literal(a) or id(a) in constant for a in step.invars):
            constant.update(id(v) for v in step.outvars)
            return False
        return any(bad(v) for v in step.outputs)

    return stop


def _bad_values(include_inf: bool) -> Callable[[Any], bool]:
    def bad(value: Any) -> bool:
        return _ir.nonfinite(value, include_inf)  # bfloat16 and float8 too

    return bad


class NanReport:
    """Where the first NaN (or Inf) came from, or that there was none.

    `found` says whether one was; `step` is the `Step` that made it (None if not
    found), `line` its source line, `steps` the run up to there (all of it when the
    NaN was made from constants alone and only returned: `returned`). When the value was
    bad before any equation on `f`'s arguments made it (an argument, or a constant `f`
    closes over), `origin` names where it was and `step` is the first equation that
    read it. When no equation made or read a bad value `f` returns, `found` is False
    and `passed` names where that value came from (else None).
    Its text is the finding in words; in Jupyter it shows the neighbourhood of that
    equation.
    """

    def __init__(
        self, steps: Steps, include_inf: bool = True, returned: Step | None = None
    ) -> None:
        self.steps, self.include_inf = steps, include_inf
        self.step: Step | None = steps.run.stopped or returned
        self.found = self.step is not None
        self.line = self.step.line if self.step is not None else None
        self.what = "NaN or Inf" if include_inf else "NaN"
        self.sources = Sources(steps)
        self.origin = self._origin()
        self.passed = self._passed()

    def recall_statics(
        self, statics: dict[str, Any], made_from: Callable[[Any], tuple | None]
    ) -> None:
        """`f` had static arguments (`statics`, by name): a bad value may have come
        from one, computed into the program or before tracing (`Sources`)."""
        self.sources = Sources(self.steps, statics, made_from)
        self.origin, self.passed = self._origin(), self._passed()

    def _origin(self) -> str | None:
        """Where the bad value came in, when the step only read it: an argument, a
        literal, or a constant (closed over, or computed from constants alone). An
        input holding an Inf brought no NaN: `0 * inf` makes one."""
        if self.step is None:
            return None
        inf_counts = self._kind() == "Inf"
        for atom, value in zip(self.step.invars, self.step.inputs, strict=True):
            if _ir.nonfinite(value, inf_counts):
                return self._source(atom, value)
        return None

    def _passed(self) -> str | None:
        """Where a bad value `f` returns untouched came from (no equation made or
        read it: `lambda x: x` at a NaN); None when a step is the finding."""
        run = self.steps.run
        if self.step is not None:
            return None
        for atom, value in zip(run.outvars, run.outputs, strict=True):
            if _ir.nonfinite(value, self.include_inf):
                return self._source(atom, value)
        return None

    def _source(self, atom: Any, value: Any) -> str:
        return self.sources.describe(atom, value)

    def neighbourhood(self, back: int = 2) -> set[int]:
        """The step and the steps that made its inputs, `back` levels up."""
        if self.step is None:
            return set()
        maker = {v: s.index for s in self.steps for v in s.outvars}
        keep, frontier = {self.step.index}, [self.step]
        for _ in range(back):
            found = {
                maker[a]
                for s in frontier
                for a in s.invars
                if not _ir.is_literal(a) and a in maker
            }
            frontier = [self.steps[i] for i in sorted(found - keep)]
            keep |= found
        return keep

    def diagram(self, back: int = 2) -> Diagram:
        """The step that made the first NaN (framed red), its inputs, their makers
        (`back` levels of them: an int, 0 or more)."""
        if not isinstance(back, int) or isinstance(back, bool) or back < 0:
            raise ValueError(
                f"{WHO}: `back` is how many levels of the steps that made the NaN's "
                f"inputs to draw, an int from 0 up; got {back!r}."
            )
        if self.step is None:
            raise ValueError(
                f"{WHO} found no {self.what} in {self.steps.name}, so there "
                "is nothing to draw; `str(report)` says so in words."
            )
        where = f" at {self.line.where}" if self.line else ""
        made = f"read by {self.step.primitive}" if self.origin else self.step.primitive
        title = f"first {self._kind()} in {self.steps.name}: {made}{where}"
        return self.steps.diagram(
            highlight=self.step.index,
            only=self.neighbourhood(back),
            title=title,
            subtitle=self.line.code if self.line else "",
        )

    def _kind(self) -> str:
        out = self.step.outputs if self.step else []
        return "NaN" if any(_ir.nonfinite(v, include_inf=False) for v in out) else "Inf"

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        if not self.found:  # Jupyter shows the sentence
            return {"text/plain": repr(self)}
        picture = self.diagram()._repr_mimebundle_(include, exclude)
        return picture | {"text/plain": repr(self)}

    def __str__(self) -> str:
        if self.step is None and self.passed:
            return (
                f"no equation of {self.steps.name} made a {self.what}, but it returns "
                f"one untouched: already in {self.passed}."
            )
        if self.step is None:
            n = len(self.steps)
            every = {0: "it has no equation to run", 1: "its one equation gave"}.get(
                n, f"all {plural(n, 'equation')} gave"
            )
            finite = " finite values" if n else ""
            return f"no {self.what} in {self.steps.name}: {every}{finite}."
        step, where = self.step, f"{self.line}" if self.line else "no source line"
        code = f"\n    {self.line.code}" if self.line and self.line.code else ""
        inputs = "; ".join(
            _atom(a, v) for a, v in zip(step.invars, step.inputs, strict=True)
        )
        head = f"first {self._kind()} in {self.steps.name}: step {step.index}, "
        if self.origin:
            head = (
                f"first {self._kind()} in {self.steps.name}: already in {self.origin}; "
                f"first read by step {step.index}, "
            )
        backward = step.eqn is not None and _ir.user_stack(step.eqn).backward
        at = "in the backward pass of" if backward else "at"
        return (
            f"{head}{step.primitive}, {at} {where}{code}\n"
            f"  inputs: {inputs}\n  {self._result()}"
        )

    def _result(self) -> str:
        """The step's first bad result, numbered when it has several (a `scan`'s
        carry may be finite where its stacked outputs are not)."""
        outputs = self.step.outputs if self.step else []
        at = next(
            (i for i, v in enumerate(outputs) if _ir.nonfinite(v, self.include_inf)), 0
        )
        which = f" {at + 1} of {len(outputs)}" if len(outputs) > 1 else ""
        return f"result{which}: {preview(outputs[at])}"

    def __repr__(self) -> str:
        if self.step is None and self.passed:
            return f"NanReport(no {self.what} made; returned from {self.passed})"
        if self.step is None:
            return f"NanReport(no {self.what} in {self.steps.name})"
        where = f" at {self.line.where}" if self.line else ""
        origin = f"; already in {self.origin}" if self.origin else ""
        return (
            f"NanReport(first {self._kind()}: step {self.step.index}, "
            f"{self.step.primitive}{where}{origin})"
        )


def _atom(atom: Any, value: Any) -> str:
    return (
        f"{_ir.literal_str(atom)} (literal)" if _ir.is_literal(atom) else preview(value)
    )
