"""`explore`: the one entry point. Checks its input, then builds the `Explorer` panel."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jaxtour.explorer._request import Subject


WHO = "explore"


def explore(f: Callable | None = None, /, *args: Any, **kwargs: Any) -> Any:
    """Look at a function through every JAX lens, in one interactive panel.

    As `jax.make_jaxpr`, `f` is traced at the example arguments; unlike the drawing
    functions, the arguments come straight after `f`. The panel's controls choose the
    transformations (`jit`, `grad`, `jvp`, `vmap` over an axis: composed as
    ``jit(vmap(jvp(grad(f))))``), the view (jaxpr graph, jaxpr text, StableHLO text,
    compiled HLO with its fusions, before/after XLA, autodiff graph, XLA's cost and
    memory figures) and the drawing options (depth, group by source line, direction).
    Each view is the library's own call (`draw_jaxpr`, `draw_hlo`, `compare_stages`,
    `draw_grad`, ...), shown with the line of code that makes it. A combination that
    cannot work, such as `grad` of a vector-valued function, shows why in the panel.

    With no `f`, the panel opens on the gallery (the cubic, tanh, relu, the MLP loss,
    a scan, a cond, the factorial loop); with `f`, the gallery follows it.

    Args:
        f: the function to explore, or None for the gallery alone; or a model (a
            callable pytree holding arrays: an Equinox module), whose arrays every
            view traces as inputs, as `eqx.filter_jit` does, under every toggle.
        *args: example positional arguments: arrays, numbers, pytrees of them.
        **kwargs: keyword arguments held fixed (not traced, differentiated or
            mapped), as `jax.jit`'s static_argnames holds them: a flag, a mode
            string, a loop count. Code lines bind them with `functools.partial`.

    Returns:
        An `Explorer` (an `ipywidgets.VBox`); as the last line of a cell it shows the
        panel, and exported HTML or slides show the picture it opened with.

    Raises:
        TypeError: `f` is not callable, or an argument is not something JAX traces
            (the same errors as the drawing functions give).
        Exception: whatever `f` raises when traced at the example arguments.

    Example:
        >>> def cubic(x):
        ...     return x**3 + 2*x**2 - 3*x + 8
        >>> panel = explore(cubic, 1.0)
        >>> panel.grad.value = True
        >>> panel.shown.code
        "draw_jaxpr(grad(cubic), max_depth=2, group_by='auto', rankdir='TB')(*args)"
        >>> panel.shown.result.title
        'jaxpr of grad of cubic: 17 equations'
    """
    if f is None and (args or kwargs):
        raise TypeError(
            "explore got example arguments but no function: pass the function first, "
            "explore(f, *args), or call explore() alone for the gallery."
        )
    loaders = {}
    if f is not None:
        subject = check(f, args, kwargs)
        loaders[subject.name] = lambda: subject
    from jaxtour.explorer._gallery import GALLERY
    from jaxtour.explorer._widget import Explorer

    loaders |= {
        name: functools.partial(_load, example.load)
        for name, example in GALLERY.items()
        if name not in loaders
    }
    return Explorer(loaders)


def check(f: Callable, args: tuple, kwargs: dict) -> Subject:
    """The `Subject` to explore, after the library's own checks and one trace of `f`."""
    from jax.errors import ConcretizationTypeError, TracerIntegerConversionError

    from jaxtour import _ir
    from jaxtour.explorer._compose import bind, bound_name, partial_name
    from jaxtour.explorer._request import Subject

    try:
        _ir.check_callable(f, WHO)
        _ir.check_args(
            args, {}, _ir.StaticArgs(), WHO, fix="pass it by keyword, held fixed"
        )
    except TypeError as err:
        err.add_note(
            "explore takes the example arguments right after the function, "
            "explore(loss, params, batch); keyword arguments are held fixed, as "
            "static_argnames holds them: explore(f, x, n=3)."
        )
        if _inside_only(args):
            err.add_note(_PARTITION)
        raise
    name = _ir.function_name(f)
    name = "f" if name == "<lambda>" else name
    if not args and not kwargs:  # explore(f), written as the drawing functions are
        _check_arity(f, name)
    # a partial's code line holds what it holds: `power` alone would draw another program
    code = (partial_name(f, name) or "f") if isinstance(f, functools.partial) else name
    subject = Subject(bind(f, kwargs), name, args, bound_name(code, kwargs))
    # f's own errors surface here, before any widget: traced as every view calls it
    try:
        _ir.trace(subject.fn, args, {}, who=WHO)
    except (ConcretizationTypeError, TracerIntegerConversionError) as err:
        if args:
            err.add_note(_HOLD_FIXED.format(name=name))
        raise
    return subject


# Under a positional argument f needs as a Python value (jax.jit without static_argnums
# fails alike): where the explorer's way of holding it fixed is
_HOLD_FIXED = (
    "explore traces every positional argument, as jax.jit does without static_argnums. "
    "If {name} needs one as a Python value (a loop count, a shape, a flag), pass it by "
    "keyword, held fixed as static_argnames holds it: explore({name}, x, n=3). If it "
    "branches on an array's value, use jax.lax.cond or jnp.where."
)


# Under a function or flag inside an argument (an Equinox module's activation), which
# no keyword can hold: the arrays split off and the rest closed over
_PARTITION = (
    "It sits inside an argument (a model's function or flag), where the drawing "
    "lenses hold it fixed; but explore's grad, vmap and jit run jax.grad, jax.vmap "
    "and jax.jit on the arguments themselves, which cannot take it. Pass the arrays "
    "and close over the rest: params, static = eqx.partition(model, eqx.is_array); "
    "explore(lambda p, x: loss(eqx.combine(p, static), x), params, x)."
)


def _inside_only(args: tuple) -> bool:
    """Whether every argument JAX cannot trace is a leaf inside one, not a whole one."""
    from jaxtour import _ir

    try:
        _ir.check_args(args, {}, _ir.StaticArgs(), WHO, inside=False)
    except TypeError:
        return False
    return True


def _check_arity(f: Callable, name: str) -> None:
    """`explore(f)` with no example arguments: if `f` needs some, they were meant to
    come in a second call, as the drawing functions take them; say so."""
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):  # a builtin without one: tracing will tell
        return
    try:
        signature.bind()
    except TypeError as err:
        params = ", ".join(signature.parameters)
        raise TypeError(
            f"explore: {name}({params}) cannot be called with the 0 example "
            f"argument(s) given ({err}). explore takes them right after the function, "
            f"in one call: explore({name}, x), not explore({name})(x) as the drawing "
            "functions take them."
        ) from None


def _load(load: Callable) -> Subject:
    from jaxtour import _ir
    from jaxtour.explorer._request import Subject

    fn, args = load()
    return Subject(fn, _ir.function_name(fn), args)
