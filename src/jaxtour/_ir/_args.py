"""Getting IR from a user's function: checked arguments, tracing, the user's own errors kept."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._ir._jaxpr import type_str
from jaxtour._ir._jit_statics import is_jitted, jit_statics
from jaxtour._ir._split import bind, is_model, model_name, split, traceable
from jaxtour._ir._static import StaticArgs, describe, static_args
from jaxtour._ir._writes import StateWriteError, Writes


def check_callable(f: Any, who: str) -> None:
    """Raise a TypeError naming `f` unless it can be traced like `jax.make_jaxpr`'s argument."""
    if not callable(f):
        raise TypeError(
            f"{who} needs a function to trace, as jax.make_jaxpr does; got {describe(f)}. "
            f"Pass the function itself, then call the result with example arguments: "
            f"{who}(loss)(params, batch)."
        )
    if isinstance(f, np.ufunc):  # jax.jit takes one, then fails on every call
        twin = f"jnp.{f.__name__}" if hasattr(jnp, f.__name__) else "its jax.numpy twin"
        raise TypeError(
            f"{who} cannot trace np.{f.__name__}: it is a NumPy ufunc, which computes on "
            f"concrete NumPy arrays, so JAX cannot trace it. Pass {twin} instead."
        )


def function_name(f: Any) -> str:
    """The name a title should use for `f` (functools.partial and jitted functions too);
    a function JAX transformed says so, as its docstring does.

    Example:
        >>> def f(x):
        ...     return x * x
        >>> function_name(f), function_name(jax.grad(f)), function_name(jax.vmap(f))
        ('f', 'grad of f', 'vmap of f')
        >>> function_name(jax.tree_util.Partial(jax.grad(f)))
        'grad of f'
    """
    for candidate in (f, getattr(f, "func", None), getattr(f, "__wrapped__", None)):
        name = getattr(candidate, "__name__", None)
        if name:  # a partial of jax.grad(f) is read by the function it holds
            return _transformed(candidate, name)
    return type(f).__name__


# How jax.grad, value_and_grad, jacfwd/jacrev/hessian and vmap begin the docstring of
# the function they return (they keep f's name, so a title would otherwise say f).
_TRANSFORMED = (
    ("Gradient of ", "grad of "),
    ("Value and gradient of ", "value_and_grad of "),
    ("Jacobian of ", "jacobian of "),
    ("Vectorized version of ", "vmap of "),
)


def _transformed(f: Any, name: str) -> str:
    doc = getattr(f, "__doc__", None)
    if not isinstance(doc, str):
        return name
    for prefix, said in _TRANSFORMED:
        if doc.startswith(f"{prefix}{name} ") or doc.startswith(f"{prefix}{name}."):
            return said + name
    return name


def arg_names(f: Any, n: int) -> list[str]:
    """Names for `f`'s first `n` positional parameters, as JAX names them: those past
    the named ones are ``rest[j]`` of a ``*rest`` (``args[i]`` where `f` has none).

    Example:
        >>> arg_names(lambda x, y=1, *rest, z: x, 4)
        ['x', 'y', 'rest[0]', 'rest[1]']
    """
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    star = next((p.name for p in params if p.kind == p.VAR_POSITIONAL), None)
    return [
        names[i]
        if i < len(names)
        else f"{star}[{i - len(names)}]"
        if star
        else f"args[{i}]"
        for i in range(n)
    ]


def check_args(
    args: tuple,
    kwargs: dict,
    statics: StaticArgs,
    who: str,
    fix: str = "name it in static_argnums= (or static_argnames=) so it is treated as a "
    "constant",
    *,
    inside: bool = True,
) -> None:
    """Raise a TypeError naming the first argument leaf that `jax.jit` cannot trace
    (for the lenses that run `f` under `jax.jit` as it is, e.g. `explain_retraces`),
    or the first static argument it cannot hash; `fix` says how, with the options the
    caller has. Without `inside`, only a whole argument is refused: leaves inside one
    (a module's activation function) are the caller's to hold fixed (`split`)."""
    static = statics.positions(len(args))
    dynamic = {f"args[{i}]": a for i, a in enumerate(args) if i not in static}
    dynamic |= {
        f"kwargs[{k!r}]": v for k, v in kwargs.items() if k not in statics.names
    }
    for where, value in dynamic.items():
        leaves, _ = jax.tree_util.tree_flatten_with_path(value)
        for path, leaf in leaves:
            if not (inside or leaf is value) or traceable(leaf):
                continue
            name = where + jax.tree_util.keystr(path)
            raise TypeError(
                f"{who} cannot trace {name}: it is {describe(leaf)}, and JAX traces only "
                f"arrays and numbers (or lists, tuples and dicts of them). Pass an array, "
                f"or {fix}."
            )


def trace(f: Any, args: tuple, kwargs: dict, **options: Any) -> jax.stages.Traced:
    """`jax.jit(f, static_argnums, static_argnames).trace(*args, **kwargs)`, checked;
    `options` are `trace_split`'s: `who=` (required), `static_argnums=`, `static_argnames=`.

    Leaves JAX cannot trace (functions, strings, config objects inside a model) are
    held as constants, as `eqx.filter_jit` holds them (`_split`). An exception raised
    by `f` itself propagates unchanged, with a note saying which jaxtour call traced it
    and with what argument shapes. A `jax.jit`-wrapped `f` is traced with its own
    options where the kit adds nothing (`trace_split`'s `own`).
    """
    return trace_split(f, args, kwargs, **options, own=True)[0]


def tracer(
    f: Any, who: str, static_argnums: Any = None, static_argnames: Any = None
) -> Callable[[tuple, dict], jax.stages.Traced]:
    """`f` and the static options checked now (a lens's bad call fails where it is
    written); the function returned traces `f` at `(args, kwargs)` as `trace` does,
    a `jax.jit`-wrapped `f` with its own options where it can (`trace_split`'s `own`)."""
    check_callable(f, who)
    statics = static_args(f, static_argnums, static_argnames, who)
    return lambda args, kwargs: trace_split(
        f, args, kwargs, who, statics.nums, statics.names, own=True
    )[0]


def trace_split(
    f: Any,
    args: tuple,
    kwargs: dict,
    who: str,
    static_argnums: Any = None,
    static_argnames: Any = None,
    *,
    own: bool = False,
    writes: Writes | None = None,
) -> tuple[jax.stages.Traced, Any]:
    """As `trace`, and the `_split.Split` it traced: its `leaves()` are the jaxpr's
    inputs, its `held` names the leaves held fixed. The static options are read by
    `static_args` (as `jax.jit` reads them), and each static value is checked hashable.
    With `writes`, a model passed as `f` that writes to itself when called raises
    (`_split.applier`): a lens that hands back `f`'s results passes it.

    With `own`, a `jax.jit`-wrapped `f` is traced by itself when the kit adds nothing
    (no static option, no leaf to hold): with its own static arguments, donation and
    shardings, as `f.lower` sees it. Lenses that run the program many times leave
    `own` off: a donated argument is gone after the first run. Wrapped, a jitted `f`
    keeps the static arguments its own jit holds (`jit_statics`), unless the lens was
    told some; the `Split` returned says which were held static."""
    check_callable(f, who)
    statics = static_args(f, static_argnums, static_argnames, who)
    names = arg_names(f, len(args))
    statics.check_values(args, kwargs, who, names)
    if is_model(f):  # traced as eqx.filter_jit(f) traces it: its arrays are inputs
        shifted, part = _model_split(f, args, kwargs, statics, names)
        return _traced(f, args, kwargs, who, shifted, names, part, False, writes)
    part = split(args, kwargs, statics.positions(len(args)), statics.names, names)
    told = bool(statics.nums or statics.names)
    alone = own and is_jitted(f) and not (part.slots or told)
    # wrapped in the kit's jit, a jitted f keeps what its own jit holds static
    if not (alone or told) and (learned := jit_statics(f, args, kwargs)):
        statics = learned
        part = split(args, kwargs, statics.positions(len(args)), statics.names, names)
    return _traced(f, args, kwargs, who, statics, names, part, alone)


def _model_split(
    f: Any, args: tuple, kwargs: dict, statics: StaticArgs, names: list
) -> tuple[StaticArgs, Any]:
    """`f`, a callable pytree holding arrays, split as ``apply(f, *args)`` takes
    it (`_split.applier`): its arrays inputs, its other leaves held; the statics
    shifted past it."""
    shifted, called, named = model_call(f, args, statics, names)
    static = shifted.positions(len(called))
    return shifted, split(called, kwargs, static, shifted.names, named, f)


def model_call(
    f: Any, args: tuple, statics: StaticArgs, names: list[str]
) -> tuple[StaticArgs, tuple, list[str]]:
    """A model `f`'s call as ``apply(model, *args)`` takes it (`_split.applier`):
    the static options shifted past the model, the arguments and their names with
    the model first.

    Example:
        >>> p = jax.tree_util.Partial(jax.numpy.dot, jax.numpy.ones(2))
        >>> shifted, called, named = model_call(p, (1.0, "a"), StaticArgs((-1, 1)), ["b", "c"])
        >>> shifted, len(called), named
        (StaticArgs(nums=(-1, 2), names=()), 3, ['dot', 'b', 'c'])
    """
    nums = tuple(n + 1 if n >= 0 else n for n in statics.nums)
    return StaticArgs(nums, statics.names), (f, *args), [model_name(f), *names]


def _traced(
    f: Any,
    args: tuple,
    kwargs: dict,
    who: str,
    statics: StaticArgs,
    names: list,
    part: Any,
    alone: bool,
    writes: Writes | None = None,
) -> tuple[jax.stages.Traced, Any]:
    """`part` traced under `jax.jit` (`f` itself where `alone`), JAX's errors retold
    (not a model's lost write: `writes`, which says what it is)."""
    jitted = (
        f
        if alone
        else jax.jit(
            bind(f, part, writes),
            static_argnums=statics.nums,
            static_argnames=statics.names,
        )
    )
    try:
        return jitted.trace(*part.args, **part.kwargs), part
    except Exception as err:
        if (retold := own_statics_error(f, err, who, args, kwargs)) is not None:
            raise retold from err
        whole = [held for held in part.whole_held() if _implicated(held[1], err)]
        if (
            isinstance(err, TypeError)
            and whole
            and not isinstance(err, StateWriteError)
        ):
            (kind, key), value = whole[0]
            if kind == "arg" and part.model is not None:  # the model came first
                key -= 1
            retold = _held_error(
                ((kind, key), value), names, err, who, function_name(f)
            )
            _note(retold, f, args, who)
            raise retold from err
        _note(err, f, args, who)
        raise


def own_statics_error(
    f: Any, err: Exception, who: str, args: tuple, kwargs: dict
) -> TypeError | None:
    """`err` retold when it is a `jax.jit`-wrapped `f` meeting a tracer where one of
    its own static arguments goes (`who` was not told that argument is static): `f`'s
    own trace of `args` then works. Else None (a jit inside `f` raised it, say)."""
    if not (_jitted(f) and str(err).startswith("Non-hashable static arguments")):
        return None
    try:
        f.trace(*args, **kwargs)
    except Exception:  # f fails on its own: JAX's message stands
        return None
    name = function_name(f)
    return TypeError(
        f"{who} traced an argument that {name}'s own jax.jit holds static, so jit met "
        f"a tracer where it wants a hashable value. Tell {who} too, as you told "
        f"jax.jit: {who}({name}, static_argnums=…) or static_argnames=…."
    )


def _held_error(
    held: tuple, names: list[str], err: Exception, who: str, name: str
) -> TypeError:
    """`err` (JAX's words about `f`'s return value, or about an argument of a
    function `f` calls) retold as what went wrong first: an argument `jax.jit` would
    not trace, which the kit held fixed."""
    (kind, key), value = held
    where = (
        f"{key} (a keyword argument)"
        if kind == "kw"
        else f"{names[key]} (argument {key})"
    )
    said = str(err).split("\n")[0].rstrip(". ")
    return TypeError(
        f"{who} cannot trace {where}: it is {describe(value)}, and the lenses trace "
        f"arrays and numbers, as jax.jit does. Held as a constant, it made tracing "
        f"{name} fail ({said}). Pass an array or a number there, or keep it out of "
        f"what {name} computes with JAX (a value used only in Python, a mode string "
        f"compared with ==, is held and traces)."
    )


def _implicated(value: Any, err: Exception) -> bool:
    """Whether JAX's message `err` is about `value`: it names its type (`<class
    'str'>`, `'Foo'`) or shows it. A held string is not blamed for another fault."""
    said, kind = str(err), type(value)
    shown = repr(value) if len(repr(value)) <= 200 else None
    return (
        repr(kind) in said
        or f"'{kind.__name__}'" in said
        or (shown is not None and shown in said)
    )


def _jitted(f: Any) -> bool:
    """Whether `f` is `jax.jit`-wrapped (it has `trace` and `lower`)."""
    return hasattr(f, "lower") and hasattr(f, "trace")


def _note(err: Exception, f: Any, args: tuple, who: str) -> None:
    """Says, under a traceback raised inside `f`, which jaxtour call traced it and
    with what argument shapes."""
    shapes = ", ".join(_arg_summary(a) for a in args)
    err.add_note(f"(raised while {who} traced {function_name(f)}({shapes}))")


def _arg_summary(arg: Any) -> str:
    leaves = jax.tree.leaves(arg)
    if len(leaves) == 1 and hasattr(leaves[0], "shape"):
        return (
            type_str(jax.typeof(leaves[0]))
            if hasattr(jax, "typeof")
            else str(leaves[0].shape)
        )
    if len(leaves) == 1 and not hasattr(leaves[0], "shape"):
        return type(leaves[0]).__name__
    return f"<{len(leaves)} leaves>" if leaves else type(arg).__name__
