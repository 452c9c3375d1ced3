"""`step_through`: a function's jaxpr run one equation at a time, every value kept."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp

from jaxtour import _ir, _options
from jaxtour._diagram import Diagram
from jaxtour._ir import Step, Stepped, step_jaxpr
from jaxtour._number_words import plural
from jaxtour._report import Report, Table
from jaxtour.tracing._draw import code_worthy, draw_run, preview
from jaxtour.tracing._state import writes

WHO = "step_through"
MAX_STEPS = 80  # a picture past this many steps shows a window of them


def step_through(
    f: Callable,
    *,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    rankdir: str = "TB",
) -> Callable[..., Steps]:
    """As `jax.jit(f)(*args)`, but one equation at a time, with every value kept.

    `f` is traced to a jaxpr, and each equation runs by its own primitive (as
    JAX's own jaxpr interpreter runs them), on concrete arrays, so every intermediate value
    can be read. `jit` calls, `custom_jvp`/`custom_vjp` functions (their primal) and
    `jax.checkpoint` are stepped inside; a `cond` steps inside the branch its index
    picks; `scan`, `while` and `shard_map` each run as one step.

    Args:
        f: the function to run (a `jax.jit`-wrapped one is stepped as its body).
        static_argnums: positions of arguments that are not arrays (as in `jax.jit`).
        static_argnames: names of keyword arguments held static, as `jax.jit`'s.
        rankdir: "TB" (top to bottom) or "LR" for the picture.

    Returns:
        A function taking `f`'s example arguments and returning `Steps`: a sequence of
        `Step`s (primitive, input and output values, source line) whose picture shows
        each equation with a preview of its value (type, min, max, mean; a small
        heatmap for a 2-D value) and the line of Python that made it.

    Raises:
        TypeError: `f` is not callable, or an argument is not something JAX traces,
            or `f` is a model that writes to itself (an NNX `BatchNorm`): the traced
            copy would lose the update.

    Example:
        >>> import jax.numpy as jnp
        >>> steps = step_through(lambda x: jnp.sin(x) * 2.0)(jnp.array([0.0, 1.0]))
        >>> [step.primitive for step in steps]
        ['sin', 'mul']
        >>> steps[-1].outputs[0].tolist() == (jnp.sin(jnp.arange(2.0)) * 2).tolist()
        True
    """
    _ir.check_callable(f, WHO)
    _options.check_rankdir(rankdir, WHO)
    statics = _ir.static_args(f, static_argnums, static_argnames, WHO)

    def run(*args: Any, **kwargs: Any) -> Steps:
        nums, names = statics
        return run_steps(f, args, kwargs, nums, WHO, names, rankdir=rankdir)

    return run


def run_steps(
    f: Callable,
    args: tuple,
    kwargs: dict,
    static: tuple[int, ...],
    who: str,
    static_names: Any = (),
    stop: Callable[[Step], bool] | None = None,
    rankdir: str = "TB",
) -> Steps:
    """Trace `f` (checked, as every jaxtour call does) and step its jaxpr."""
    check = writes(f, who, own_jit=False)  # f's results come back: no lost update
    traced, part = _ir.trace_split(
        f, args, kwargs, who, static, static_names, writes=check
    )
    closed = _ir.unwrap_jit(traced.jaxpr)
    run = step_jaxpr(closed, part.leaves(), stop)
    return Steps(
        run,
        _ir.function_name(f),
        _ir.io_names(closed.jaxpr)[0],
        jax.tree.structure(traced.out_info),
        rankdir,
    )


class Steps:
    """The equations of one run, in the order they ran; shown as a picture.

    Index it (`steps[3]`, `steps[-1]`) or loop over it for `Step`s; `outputs` holds
    `f`'s results; `diagram(upto=k)` draws the run as it stood after step k.
    """

    def __init__(
        self,
        run: Stepped,
        name: str,
        arg_names: Any,
        out_tree: Any,
        rankdir: str = "TB",
    ) -> None:
        self.run, self.name, self.arg_names = run, name, arg_names
        self.out_tree, self.rankdir = out_tree, rankdir

    def __len__(self) -> int:
        return len(self.run.steps)

    def __getitem__(self, index: int) -> Step:
        return self.run.steps[index]

    def __iter__(self) -> Iterator[Step]:
        return iter(self.run.steps)

    @property
    def outputs(self) -> Any:
        """`f`'s results as `f` returns them (None when the run stopped early)."""
        if self.run.stopped is not None:
            return None
        # an output the jaxpr holds as a literal (`lambda x: 3.0`) comes out of it as
        # JAX's own literal type, which NumPy reads as float64: an array, as from jit
        outputs = [
            x if isinstance(x, jax.Array) else jnp.asarray(x) for x in self.run.outputs
        ]
        return jax.tree.unflatten(self.out_tree, outputs)

    def diagram(
        self,
        upto: int | None = None,
        highlight: int | None = None,
        only: set[int] | None = None,
        title: str = "",
        subtitle: str = "",
    ) -> Diagram:
        """The run as a picture; steps after `upto` dashed, `highlight` framed red.

        Raises:
            TypeError, ValueError: `upto` or `highlight` is not a step's index.
        """
        upto, highlight = self._index(upto, "upto"), self._index(highlight, "highlight")
        focus = highlight if highlight is not None else upto
        whole = focus is None and code_worthy(self.run, None)  # nested, folded to fit
        if only is None and len(self) > MAX_STEPS and not whole:
            start = max(0, min((focus or 0) - MAX_STEPS // 2, len(self) - MAX_STEPS))
            only = set(range(start, start + MAX_STEPS))
            title = title or (
                f"{self.name}: steps {start}–{start + MAX_STEPS - 1} of {len(self)}"
            )
        if not title:
            title = f"{self.name} step by step: {plural(len(self), 'equation')}"
            if upto is not None and 0 <= upto < len(self):
                step = self[upto]
                where = f" at {step.line.where}" if step.line else ""
                title = (
                    f"{self.name}: step {upto} of {len(self)}, {step.primitive}{where}"
                )
        return draw_run(
            self.run,
            title,
            arg_names=self.arg_names,
            rankdir=self.rankdir,
            only=only,
            highlight=highlight if highlight is not None else upto,
            upto=upto,
            subtitle=subtitle,
        )

    def _index(self, value: Any, name: str) -> int | None:
        """`value` as a step's index (None stays None), or the error saying which are."""
        if value is None:
            return None
        steps = f"an int from 0 to {len(self) - 1}" if len(self) else "None (no steps)"
        try:
            index = operator.index(value)
        except TypeError:
            raise TypeError(
                f"{WHO}: `{name}` is a step's index, {steps}; got {value!r} "
                f"({type(value).__name__})."
            ) from None
        if not 0 <= index < len(self):
            raise ValueError(
                f"{WHO}: `{name}`={index} is not a step of {self.name}: "
                f"{plural(len(self), 'step')}, so {name} is {steps}."
            )
        return index

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        picture = self.diagram()._repr_mimebundle_(include, exclude)
        return picture | {"text/plain": repr(self)}

    def __str__(self) -> str:
        rows = [
            [
                str(s.index),
                s.primitive,
                preview(s.outputs[0]) if s.outputs else "",
                s.line.where if s.line else "",
            ]
            for s in self
        ]
        head = ["step", "primitive", "result", "line"]
        return Report(repr(self), tables=[Table(head, rows, align="r")]).text()

    def __repr__(self) -> str:
        ran = (
            "stopped early"
            if self.run.stopped is not None
            else plural(len(self.run.outputs), "output")
        )
        return f"Steps({self.name!r}: {plural(len(self), 'step')}, {ran})"
