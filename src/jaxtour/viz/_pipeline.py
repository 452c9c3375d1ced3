"""`draw_pipeline`: the road from a Python function to the device, for slides.

pure Python function → tracing → jaxpr → lowering → StableHLO → XLA → compiled HLO
→ CPU/GPU/TPU, with the transformations (`grad`, `vmap`) turning one jaxpr into
another, and shardings beside them: not a transformation (the jaxpr is the same with
and without them) but annotations that XLA's partitioner turns into per-device code
and collectives. Three progressive versions for slides, or one annotated with the
artefacts of *your* function.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Any, overload

from jaxtour import _ir
from jaxtour._diagram import Diagram
from jaxtour.viz._pipeline_graph import Artefacts, annotated, general

STEPS = (1, 2, 3)


@overload
def draw_pipeline(
    f: None = None,
    *,
    step: int = 3,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Diagram: ...


@overload
def draw_pipeline(
    f: Callable,
    *,
    step: int = 3,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., Diagram]: ...


def draw_pipeline(
    f: Callable | None = None,
    *,
    step: int = 3,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Diagram | Callable[..., Diagram]:
    """Draw how JAX runs a function: tracing, jaxpr, StableHLO, XLA, the device.

    Without `f` there is nothing to trace, so the general diagram comes back at
    once; `step` builds it up for slides: 1 shows tracing and jit, 2 names each
    stage, 3 adds the `jax.*` entry points that reach each stage. With `f`, it is
    configured first and then called with example arguments, as `jax.make_jaxpr`
    is; the stages are annotated with *that* function's artefacts: a source
    excerpt, the jaxpr's equation count, the StableHLO op count, the compiled
    fusion count, and the device it was compiled for.

    Args:
        f: the function to trace, or None for the general diagram.
        step: 1, 2 or 3 (see above); with `f`, 2 or 3.
        static_argnums: positions of `f`'s arguments that are constants, not arrays,
            as in `jax.jit`.

    Returns:
        A `Diagram` when `f` is None; otherwise a function of `f`'s example
        arguments returning a `Diagram`.

    Raises:
        TypeError: `f` is not callable, or an example argument is not an array.
        ValueError: `step` is not one of the values above.

    Example:
        >>> draw_pipeline(step=1)
        Diagram('how JAX runs a function (step 1 of 3)', 4 nodes, 3 edges)
        >>> import jax.numpy as jnp
        >>> draw_pipeline(jnp.sin)(1.0).title  # doctest: +ELLIPSIS
        'pipeline of sin: 1 equation, 1 StableHLO op, 1 fusion on ...'
    """
    _check_step(step)
    if f is None:
        return general(step)
    _ir.check_callable(f, "draw_pipeline")
    if step == 1:
        raise ValueError(
            "draw_pipeline(f, step=1) has no stage to annotate with f's artefacts; "
            "use step=2 or 3 with a function, or draw_pipeline(step=1) without one."
        )

    statics = _ir.static_args(f, static_argnums, static_argnames, "draw_pipeline")

    def draw(*args: Any, **kwargs: Any) -> Diagram:
        found = collect(f, args, kwargs, *statics)
        return annotated(found, step)

    return draw


def _check_step(step: int) -> None:
    if step not in STEPS:
        raise ValueError(
            f"`step` must be 1 (tracing and jit), 2 (every stage named) or 3 (with the "
            f"jax.* entry points); got {step!r}."
        )


# --- f's artefacts: counted through jaxtour._ir, the one module that reads IR -------
def collect(
    f: Callable,
    args: tuple,
    kwargs: dict,
    static: tuple[int, ...] = (),
    static_names: Any = (),
) -> Artefacts:
    """Trace, lower and compile `f` on the example arguments; count what each made."""
    # f's own errors propagate, with a note saying what was being traced.
    traced = _ir.trace(
        f,
        args,
        kwargs,
        who="draw_pipeline",
        static_argnums=static,
        static_argnames=static_names,
    )
    lowered = traced.lower()
    compiled = lowered.compile()
    # a jitted f under the kit's own jax.jit: f's jaxpr and module, not the wrapper's
    stablehlo = _ir.unwrap_call(_ir.parse_stablehlo(lowered.as_text()))
    hlo = _ir.parse_hlo(compiled.as_text())
    devices = _devices(compiled)
    return Artefacts(
        name=_ir.function_name(f),
        source=source_excerpt(f),
        eqns=_ir.count_eqns(_ir.unwrap_jit(traced.jaxpr).jaxpr),
        stablehlo_ops=sum(stablehlo.op_counts().values()),
        fusions=len(hlo.fusions()),
        hlo_ops=sum(hlo.op_counts(fused=False).values()),
        platform=devices[0].platform,
        device=device_words(devices),
    )


def source_excerpt(
    f: Callable[..., Any], max_lines: int = 6, width: int = 52
) -> tuple[str, ...]:
    """The first lines of `f`'s body without decorators or docstring, or ()."""
    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(f)))
    except (OSError, TypeError):
        return ()
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda in a continued expression: its lines as they are
        return tuple(_shorten(line.strip(), width) for line in lines[:max_lines])
    node = tree.body[0]
    lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)]
    if getattr(f, "__name__", "") == "<lambda>" and len(lambdas) == 1:
        lines = (ast.get_source_segment(source, lambdas[0]) or "").splitlines()
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        first = node.body[0]
        has_doc = (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        )
        body_start = first.end_lineno if has_doc else first.lineno - 1
        lines = (
            lines[node.lineno - 1 : node.body[0].lineno - 1][:1] + lines[body_start:]
        )
    lines = [line for line in lines if line.strip()]
    excerpt = [_shorten(line, width) for line in lines[:max_lines]]
    if len(lines) > max_lines:
        excerpt.append("    ...")
    return tuple(excerpt)


def _shorten(line: str, width: int) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def _devices(compiled: Any) -> list:
    import jax

    try:
        shardings = jax.tree.leaves(
            (compiled.input_shardings, compiled.output_shardings)
        )
    except ValueError:  # JAX cannot report them (a step that mutates jax.ref Refs)
        shardings = jax.tree.leaves(compiled.input_shardings)
    devices = {d for s in shardings for d in s.device_set}
    return sorted(devices, key=lambda d: d.id) or jax.devices()[:1]


def device_words(devices: list) -> str:
    """The device box's line under its platform heading: the kinds of device
    (`device_kind`) and how many, leaving out a kind that only repeats the platform
    (a CPU's kind is "cpu"), so the box reads "CPU", "GPU / NVIDIA H200" or
    "TPU / 4 × TPU v5 lite", never "CPU / cpu: cpu".

    Example:
        >>> from types import SimpleNamespace as Device
        >>> h200 = Device(platform="gpu", device_kind="NVIDIA H200")
        >>> device_words([h200]), device_words([h200] * 8)
        ('NVIDIA H200', '8 × NVIDIA H200')
        >>> cpu = Device(platform="cpu", device_kind="cpu")
        >>> device_words([cpu]), device_words([cpu] * 8)
        ('', '8 devices')
    """
    kinds = sorted(
        {d.device_kind for d in devices if d.device_kind.lower() != d.platform.lower()}
    )
    many = len(devices) > 1
    if not kinds:
        return f"{len(devices)} devices" if many else ""
    return (f"{len(devices)} × " if many else "") + ", ".join(kinds)
