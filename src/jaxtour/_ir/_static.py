"""Static arguments and `argnums`, read as `jax.jit` and `jax.grad` read them, checked once.

Every lens that takes a function takes `static_argnums` / `static_argnames` (and the
gradient lenses `argnums`); they all read them here, so they accept the same things and
refuse the same things with the same words. The reading is `jax.jit`'s: None, an int or
a sequence; negative positions count from the end (of each call's positional
arguments in JAX 0.10, of `f`'s positional parameters in JAX 0.12: whichever the
installed JAX does); names given, positions are inferred from `f`'s signature and the
other way round; a
position `f` cannot take, or a name it has no parameter for, is refused when the lens is
configured; a static value that cannot be hashed, when it is called.
"""

from __future__ import annotations

import functools
import inspect
import operator
from collections.abc import Iterable
from typing import Any, NamedTuple

import jax

_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


def describe(value: Any, width: int = 40) -> str:
    """`value` as a short repr plus its type, for error messages.

    Example:
        >>> describe([1, 2])
        '[1, 2] (list)'
    """
    text = repr(value)
    text = text if len(text) <= width else text[: width - 3] + "..."
    return f"{text} ({type(value).__name__})"


class StaticArgs(NamedTuple):
    """`static_argnums` and `static_argnames` as `jax.jit` completes them.

    `nums` may hold negative positions (resolved per call by `positions`); `names`
    includes the names of positional parameters given by position, and the other way
    round, as `jax.jit` infers them from `f`'s signature.
    """

    nums: tuple[int, ...] = ()
    names: tuple[str, ...] = ()

    def positions(self, nargs: int) -> frozenset[int]:
        """The static positions of a call with `nargs` positional arguments.

        Example:
            >>> sorted(StaticArgs((-1, 0)).positions(3))
            [0, 2]
        """
        return frozenset(i % nargs for i in self.nums if -nargs <= i < nargs)

    def check_values(
        self, args: tuple, kwargs: dict, who: str, names: list[str] | None = None
    ) -> None:
        """Raise a TypeError naming the first static argument `jax.jit` cannot hash.

        `names` are the positional parameters' names (``args[i]`` where missing).
        """
        given = [(i, args[i]) for i in sorted(self.positions(len(args)))]
        given += [(k, v) for k, v in kwargs.items() if k in self.names]
        for where, value in given:
            try:
                hash(value)
            except TypeError:
                raise TypeError(_unhashable(where, value, who, names)) from None


def _unhashable(where: int | str, value: Any, who: str, names: list[str] | None) -> str:
    if isinstance(where, int):
        name = names[where] if names and where < len(names) else f"args[{where}]"
        option = f"static_argnums={where}"
    else:
        name, option = where, f"static_argnames={where!r}"
    return (
        f"{who}: the static argument `{name}` ({option}) is {describe(value)}, which "
        "cannot be hashed, and jax.jit keys its cache on the hash of each static "
        "argument. Pass a tuple instead of a list, a frozen dataclass or NamedTuple "
        f"instead of a dict (with no arrays inside), or leave `{name}` out of the "
        "static arguments so that it is traced."
    )


def static_args(
    f: Any, static_argnums: Any = None, static_argnames: Any = None, who: str = "jit"
) -> StaticArgs:
    """`static_argnums` and `static_argnames` checked and completed as `jax.jit` does.

    An empty tuple is read as None (not given), so a lens's default never stops the
    inference from the other option.

    Raises:
        TypeError: an option is not None, an int (a str) or a sequence of them.
        ValueError: a position `f` cannot take, or a name that is not `f`'s parameter.

    Example:
        >>> def f(x, n, cfg=None):
        ...     return x
        >>> static_args(f, static_argnames="cfg"), static_args(f, 1)
        (StaticArgs(nums=(2,), names=('cfg',)), StaticArgs(nums=(1,), names=('n',)))
        >>> static_args(f, -1) in (StaticArgs((-1,), ()), StaticArgs((2,), ("cfg",)))
        True
    """
    nums = _nums(static_argnums, "static_argnums", who)
    names = _names(static_argnames, who)
    sig = _signature(f)
    if sig is None or (nums is None and names is None):
        return StaticArgs(nums or (), names or ())
    params = list(sig.parameters.items())
    if nums is None:
        nums = tuple(
            i
            for i, (k, p) in enumerate(params)
            if p.kind == p.POSITIONAL_OR_KEYWORD and k in (names or ())
        )
    elif names is None:
        # JAX 0.12 also names a negative position, counted from the last parameter
        late = any(i < 0 for i in nums) and _negative_from_signature()
        names = tuple(
            k
            for i, (k, p) in enumerate(params)
            if p.kind == p.POSITIONAL_OR_KEYWORD
            and (i in nums or (late and i - len(params) in nums))
        )
    _check_nums(sig, nums, "static_argnums", who, f)
    _check_names(sig, names or (), who, f)
    return StaticArgs(_from_signature(sig, nums), names or ())


@functools.cache
def _negative_from_signature() -> bool:
    """Whether the installed `jax.jit` reads a negative static position against the
    function's positional parameters (JAX 0.12) rather than against each call's
    positional arguments (JAX 0.10): one probe, traced once."""

    def probe(x: Any, n: Any = None) -> Any:
        return x

    traced = jax.jit(probe, static_argnums=-1).trace(1.0)
    return len(traced.jaxpr.jaxpr.invars) == 1  # -1 held `n`, not the `x` passed


def _from_signature(sig: inspect.Signature, nums: tuple[int, ...]) -> tuple[int, ...]:
    """`nums` with negative positions made positive against `sig`, where the
    installed JAX does so (no ``*args`` in `sig`); else as given."""
    kinds = [p.kind for p in sig.parameters.values()]
    n = sum(k in _POSITIONAL for k in kinds)
    if inspect.Parameter.VAR_POSITIONAL in kinds or not n or min(nums, default=0) >= 0:
        return nums
    if not _negative_from_signature():
        return nums
    return tuple(i % n if i < 0 else i for i in nums)


def _signature(f: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(f)
    except (TypeError, ValueError):  # some builtins have none: jax.jit checks nothing
        return None


def _nums(value: Any, option: str, who: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    items = _indices(value)
    if items is None:
        raise TypeError(
            f"{who}: `{option}` must be None, an int or a tuple of ints (positions of "
            f"the function's arguments, as in jax.jit); got {describe(value)}. Write "
            f"{option}=1 or {option}=(1, 2)."
        )
    return items or None


def _indices(value: Any) -> tuple[int, ...] | None:
    """`value` as positions, read as JAX reads them (`operator.index` on the value, else
    on each of its items): NumPy integers and integer arrays are ints too. None when it
    is not that (a float, a str, a nested sequence).

    Example:
        >>> import numpy as np
        >>> _indices(np.int64(1)), _indices(np.arange(2)), _indices([0, 1.0])
        ((1,), (0, 1), None)
    """
    try:
        return (operator.index(value),)
    except TypeError:
        pass
    if not isinstance(value, Iterable) or isinstance(value, str | bytes):
        return None
    try:
        return tuple(map(operator.index, value))
    except TypeError:
        return None


def _names(value: Any, who: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = (value,) if isinstance(value, str) else value
    ok = isinstance(items, Iterable)
    items = tuple(items) if ok else ()
    if not ok or not all(isinstance(k, str) for k in items):
        raise TypeError(
            f"{who}: `static_argnames` must be None, a str or a tuple of str (names of "
            f"the function's parameters, as in jax.jit); got {describe(value)}. Write "
            "static_argnames='cfg' or static_argnames=('cfg', 'n')."
        )
    return items or None


def _params(f: Any, sig: inspect.Signature) -> str:
    name = getattr(f, "__name__", None) or getattr(
        getattr(f, "func", None), "__name__", "f"
    )
    return f"{name}({', '.join(sig.parameters)})"


def _check_nums(
    sig: inspect.Signature, nums: tuple[int, ...], option: str, who: str, f: Any
) -> None:
    kinds = [p.kind for p in sig.parameters.values()]
    if inspect.Parameter.VAR_POSITIONAL in kinds:
        return  # *args takes any position, as jax.jit allows
    n = sum(k in _POSITIONAL for k in kinds)
    for i in nums:
        if not -n <= i < n:
            room = f"0..{n - 1} (or -{n}..-1 from the end)" if n else "none"
            raise ValueError(
                f"{who}: {option}={i} is out of range: {_params(f, sig)} takes "
                f"{n} positional argument{'s' * (n != 1)}, so a position is {room}. "
                "Give the position of one of its parameters, or name it in "
                "static_argnames=."
            )


def _check_names(
    sig: inspect.Signature, names: tuple[str, ...], who: str, f: Any
) -> None:
    params = sig.parameters
    var_kw = any(p.kind == p.VAR_KEYWORD for p in params.values())
    for k in names:
        p = params.get(k)
        if p is not None and p.kind == p.POSITIONAL_ONLY:
            at = list(params).index(k)
            raise ValueError(
                f"{who}: static_argnames={k!r} names a positional-only parameter of "
                f"{_params(f, sig)}, which cannot be passed by name. Use "
                f"static_argnums={at} instead."
            )
        if (p is None or p.kind == p.VAR_POSITIONAL) and not var_kw:
            raise ValueError(
                f"{who}: static_argnames={k!r} is not a parameter of "
                f"{_params(f, sig)}. Spell it as the signature does, or give its "
                "position in static_argnums=."
            )


def check_argnums(argnums: Any, who: str) -> tuple[int, ...]:
    """`argnums` as a tuple of ints, as `jax.grad` accepts it (an int or a sequence;
    NumPy integers too).

    Raises:
        TypeError: `argnums` is not an int or a non-empty sequence of ints.

    Example:
        >>> check_argnums(1, "draw_grad"), check_argnums([0, -1], "draw_grad")
        ((1,), (0, -1))
    """
    items = _indices(argnums)
    if not items:
        raise TypeError(
            f"{who}: `argnums` must be an int or a tuple of ints naming the positional "
            f"arguments to differentiate, as in jax.grad; got {argnums!r}."
        )
    return items


def resolve_argnums(
    argnums: tuple[int, ...], nargs: int, who: str, static: frozenset[int] = frozenset()
) -> tuple[int, ...]:
    """Non-negative positions, checked against how many arguments `f` was called with
    and against the static positions of the call (a static argument is a constant).

    Raises:
        ValueError: a position is out of range, or static too.
    """
    for i in argnums:
        if not -nargs <= i < nargs:
            valid = f"0..{nargs - 1}" if nargs else "none: pass the example arguments"
            raise ValueError(
                f"{who}: argnums={i} is out of range: f was called with {nargs} positional "
                f"argument{'s' * (nargs != 1)} (valid positions: {valid}). Pass the "
                f"example arguments in the call, e.g. {who}(f, argnums=1)(x, y)."
            )
        if i % nargs in static:
            raise ValueError(
                f"{who}: argnums={i} names a static argument (static_argnums holds "
                f"position {i % nargs}): a static argument is a constant and has no "
                "gradient. Drop it from one of the two."
            )
    return tuple(i % nargs for i in argnums)
