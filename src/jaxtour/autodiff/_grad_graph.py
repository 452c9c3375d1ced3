"""`draw_grad`: the forward pass, the residuals it saves, and the backward pass, linked."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Unpack

from jaxtour import _ir
from jaxtour._diagram import Diagram
from jaxtour._number_words import plural
from jaxtour.autodiff import _args, _boxes
from jaxtour.autodiff._adgraph import (
    AUX,
    ADGraph,
    add_lane,
    add_terminal,
    aux_note,
    output_label,
)
from jaxtour.autodiff._display import Display, display_options, lists_display_options
from jaxtour.autodiff._dot import to_diagram
from jaxtour.autodiff._trace import (
    Call,
    VJPTrace,
    prepare,
    trace_vjp,
)

WHO = "draw_grad"


def grad_graph(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    *,
    values: bool = True,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., ADGraph]:
    """As `draw_grad`, but returns the `ADGraph` model instead of its picture.

    Example:
        >>> graph = grad_graph(lambda x: x**3 + 2*x**2 - 3*x + 8)(1.0)
        >>> graph.values_of("gradient")
        [array(4., dtype=float32)]
    """
    options = (argnums, has_aux, holomorphic, allow_int, values)
    return _builder("grad_graph", f, *options, static_argnums, static_argnames)


def _builder(
    who: str,
    f: Callable,
    argnums: int | tuple[int, ...],
    has_aux: bool,
    holomorphic: bool,
    allow_int: bool,
    values: bool,
    static_argnums: int | tuple[int, ...] | None,
    static_argnames: str | tuple[str, ...] | None,
) -> Callable[..., ADGraph]:
    """`grad_graph`'s builder; its errors name `who`, the lens the user called."""
    nums = callable_and_argnums(f, argnums, who)
    statics = _ir.static_args(f, static_argnums, static_argnames, who)

    def build(*args: Any, **kwargs: Any) -> ADGraph:
        # keyword arguments go to f as they are, never differentiated, as in jax.grad
        keyed = partial(f, **kwargs) if kwargs else f
        held = _ir.statics_for(f, args, kwargs, statics)  # a jitted f's own, told none
        call = prepare(
            keyed,
            args,
            nums,
            who,
            # allow_int keeps integer, boolean and key leaves fixed (their gradients
            # are float0), as jax.vjp does; holomorphic still asks for complex ones
            strict=holomorphic or not allow_int,
            holomorphic=holomorphic,
            has_aux=has_aux,
            statics=held,
        )
        try:
            trace = trace_vjp(
                call,
                None,
                values,
                partial(_args.check_scalar_output, who=who, holomorphic=holomorphic),
            )
        except _ir.CONCRETE as err:
            if not _ir.needs_concrete(err):
                raise
            static = held.positions(len(args))
            raise _ir.concrete_error(err, f, args, static, who, call.positions) from err
        return reverse_graph(call, trace, values, _grad_labels(function_name(f), call))

    return build


@lists_display_options
def draw_grad(
    f: Callable,
    argnums: int | tuple[int, ...] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    *,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
    **display: Unpack[Display],
) -> Callable[..., Diagram]:
    """As `jax.grad`, but draws the computation instead of returning the gradient.

    One picture of reverse mode at the example point: the forward pass (the jaxpr of
    ``jax.vjp(f, *args)``), the residuals it saves for the backward pass (orange),
    and the backward pass (the jaxpr of the VJP JAX returned) carrying cotangents from
    the seed 1.0 back to each input. `jit` calls are inlined (`max_depth` folds them
    again); `cond`, `scan`, `while`, `shard_map` and `checkpoint` stay one box each,
    and a `shard_map` or `checkpoint` box counts its equations (`draw_jaxpr` opens
    them: inside, each shard holds values of its own). The title counts the
    equations inside every box (each loop body once, every cond branch) and says so.

    Args:
        f: a function returning a real scalar, as for `jax.grad`.
        argnums: which positional arguments to differentiate (an int or a tuple;
            the gradients come in its order, as `jax.grad` returns them).
            Other arguments (integers, booleans, PRNG keys, flags) are drawn as fixed.
        has_aux: `f` returns ``(output, aux)``, as in `jax.grad`; aux is drawn as an
            output that is not differentiated.
        holomorphic: as in `jax.grad`: complex inputs and a complex output.
        allow_int: as in `jax.grad`: integer, boolean and key leaves of `argnums`
            are taken, their gradients float0 (empty): drawn fixed, without one.
        static_argnums: arguments held as Python constants, as `jax.jit`'s
            ``static_argnums`` holds them (a size, a loop count, a config): bound as
            they are, never traced nor differentiated. None, an int or ints;
            negative positions count from the end.
        static_argnames: the same by name (names and positions infer each other
            from `f`'s signature, as in `jax.jit`).
        values, rankdir, max_depth, max_eqns, expand_pytrees, max_width: keyword-only display
            options (the numbers, the direction, how a big program folds to fit a
            slide), shared with `draw_vjp` and `draw_jvp`; see `Display`.

    Returns:
        A function of `f`'s example arguments returning a `Diagram`; the gradient it
        shows equals ``jax.grad(f, argnums)(*args, **kwargs)``. Keyword arguments are
        passed to `f` as they are, not differentiated, as by `jax.grad`.

    Raises:
        TypeError: `f` is not callable, `argnums` is not an int or ints, or an argument
            to differentiate is not a floating-point array or number.
        ValueError: `argnums` is out of range or static, a static option names an
            argument `f` does not take, or `f` does not return a scalar (use
            `draw_vjp`, or reduce the output with ``.sum()``).

    Example:
        >>> d = draw_grad(lambda x: x**3 + 2*x**2 - 3*x + 8)(1.0)
        >>> d.title
        'grad of f: 10 forward equations, 4 residuals, 7 backward equations'
    """
    options = display_options(WHO, display)
    switches = (argnums, has_aux, holomorphic, allow_int, options.pop("values"))
    build = _builder(WHO, f, *switches, static_argnums, static_argnames)
    return lambda *args, **kwargs: to_diagram(build(*args, **kwargs), **options)


def function_name(f: Callable) -> str:
    """The name titles use for `f` (as `_ir.function_name`), "f" for a lambda."""
    name = _ir.function_name(f)
    return "f" if name == "<lambda>" else name


def callable_and_argnums(
    f: Callable[..., Any], argnums: Any, who: str
) -> tuple[int, ...]:
    """Check `f` is callable and `argnums` well formed, at configure time."""
    _ir.check_callable(f, who)
    return _ir.check_argnums(argnums, who)


def _grad_labels(name: str, call: Call) -> dict:
    return {
        "title": f"grad of {name}",
        "backward": "backward",
        "seed": f"seed ∂{name}/∂{name}",
        "output": f"{name}(…)",
        "gradient": [f"∂{name}/∂{label}" for label in call.labels[: call.n_diff]],
        "of": f"∂{name}/∂",
    }


def reverse_graph(call: Call, trace: VJPTrace, values: bool, labels: dict) -> ADGraph:
    """The model of reverse mode: inputs, forward equations, residuals, backward equations.

    `labels` names the seed, the output, the gradients and the title (its "title" and
    the word for the "backward" equations); see `_grad_labels`.
    """
    graph = ADGraph(title=reverse_title(labels["title"], trace, labels["backward"]))
    graph.note = "; ".join(filter(None, (call.held_note(), aux_note(trace.held_aux))))
    fwd, bwd = trace.forward, trace.backward
    groups = call.groups or [""] * len(call.labels)
    sources = {}
    for i, (var, label) in enumerate(zip(fwd.invars, call.labels, strict=True)):
        kind = "input" if i < call.n_diff else "fixed"
        sources[var] = add_terminal(
            graph, f"in{i}", kind, "forward", label, fwd, var, values, groups[i]
        )
    sources = add_lane(graph, fwd, "forward", sources, "primal", values)
    n_main = trace.n_out - trace.n_aux
    for k, atom in enumerate(fwd.outvars[: trace.n_out]):
        aux = k >= n_main
        group = AUX if aux else labels["output"]
        out = add_terminal(
            graph,
            f"out{k}",
            "output",
            "forward",
            output_label(labels["output"], trace.paths[k], aux),
            fwd,
            atom,
            values,
            group,
        )
        _link(graph, sources, atom, out, "primal")
    saved = _add_residuals(graph, trace, sources, values)
    bsources = dict(saved)
    for k, var in enumerate(bwd.invars[trace.n_res :]):
        bsources[var] = add_terminal(
            graph,
            f"seed{k}",
            "seed",
            "backward",
            " ".join(filter(None, (labels["seed"], trace.paths[k]))),
            bwd,
            var,
            values,
            labels["seed"],
        )
    bsources = add_lane(
        graph,
        bwd,
        "backward",
        bsources,
        lambda eqn, var: "residual" if var in saved else "cotangent",
        values,
    )
    for k, atom in enumerate(bwd.outvars):
        node = add_terminal(
            graph,
            f"grad{k}",
            "gradient",
            "backward",
            labels["gradient"][k],
            bwd,
            atom,
            values,
            groups[k] and labels["of"] + groups[k],
        )
        _link(graph, bsources, atom, node, "cotangent")
        graph.link(node, f"in{k}", "link")
    return graph


def reverse_title(what: str, trace: VJPTrace, backward: str) -> str:
    """`what`, then how many forward equations, residuals and `backward` equations.

    The equations inside boxes count (`_boxes.tally`): a checkpoint box in the backward
    pass holds the forward pass it recomputes.
    """
    fwd, bwd = _boxes.tally(trace.forward)[0], _boxes.tally(trace.backward)[0]
    return (
        f"{what}: {plural(_boxes.equations(fwd), 'forward equation')}, "
        f"{plural(trace.n_res, 'residual')}, "
        f"{plural(_boxes.equations(bwd), backward + ' equation')}"
        + _boxes.caveat(fwd + bwd)
    )


def _add_residuals(
    graph: ADGraph, trace: VJPTrace, sources: dict, values: bool
) -> dict:
    saved = {}
    pairs = zip(
        trace.forward.outvars[trace.n_out :],
        trace.backward.invars[: trace.n_res],
        strict=True,
    )
    for k, (atom, var) in enumerate(pairs):
        label = f"residual {k}" + (" (constant)" if _ir.is_literal(atom) else "")
        node = add_terminal(
            graph, f"res{k}", "residual", "forward", label, trace.forward, atom, values
        )
        _link(graph, sources, atom, node, "residual")
        saved[var] = node
    return saved


def _link(graph: ADGraph, sources: dict, atom: Any, dst: str, kind: str) -> None:
    if not _ir.is_literal(atom):
        graph.link(sources[atom], dst, kind)
