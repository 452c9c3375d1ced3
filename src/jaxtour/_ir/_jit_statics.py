"""The static arguments a `jax.jit`-wrapped function holds, read off its own trace.

A lens that runs `f` many times traces `f` inside a `jax.jit` of its own. When `f` is
already `jax.jit(g, static_argnums=1)` and the lens was not told, its jit would pass a
tracer where `f`'s jit wants a hashable value. `jax.jit` keeps no public record of its
options, but `f.trace(*args, **kwargs)` lists the arguments it traced (`args_info`):
a keyword missing there is static, and the positions missing are the one choice of
hashable arguments that leaves the rest matching `args_info`, tree, shape and dtype.
When more than one choice fits (two Python floats, one of them static), nothing is
guessed: the lens's own error asks for `static_argnums`.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import jax

from jaxtour._ir._static import StaticArgs, static_args

_MOST_CHOICES = 256  # sets of positions tried before giving up (a long *args)


def is_jitted(f: Any) -> bool:
    """Whether `f` is what `jax.jit` returns (a framework's own jit, `nnx.jit` or
    `eqx.filter_jit`, may have `trace` too, but traces to its own kind of object)."""
    return isinstance(f, _jit_type())


@functools.cache
def _jit_type() -> type:
    return type(jax.jit(lambda x: x))


def jit_statics(f: Any, args: tuple, kwargs: dict) -> StaticArgs | None:
    """The static positions and names `f`'s own `jax.jit` holds in this call (each
    completed from `f`'s signature, as `static_args` does), or None
    when `f` is not jitted, holds none, fails to trace, or the positions are ambiguous.

    Example:
        >>> import functools
        >>> @functools.partial(jax.jit, static_argnames="n")
        ... def f(x, n):
        ...     return x * n
        >>> jit_statics(f, (1.0, 2), {}) == jit_statics(f, (1.0,), {"n": 2})
        True
        >>> jit_statics(f, (1.0, 2), {})
        StaticArgs(nums=(1,), names=('n',))
    """
    if not is_jitted(f):
        return None
    if not any(_hashable(a) for a in (*args, *kwargs.values())):
        return None  # a static argument is hashable: every argument is traced
    try:
        traced_args, traced_kwargs = f.trace(*args, **kwargs).args_info
    except Exception:  # the lens's own trace reports f's error
        return None
    names = tuple(k for k in kwargs if k not in traced_kwargs)
    nums = _positions(args, traced_args)
    if nums is None or not (nums or names):
        return None
    # completed as jax.jit completes them (a position names its parameter, a name its
    # position): an explain_retraces that learned `n` by name holds it by position too
    return static_args(f, nums or None, names or None)


def statics_for(f: Any, args: Any, kwargs: dict, told: StaticArgs) -> StaticArgs:
    """The static arguments of this call: `told` when it names any, else those `f`'s
    own `jax.jit` holds (`jit_statics`), else `told`."""
    if told.nums or told.names or not isinstance(args, tuple):
        return told
    return jit_statics(f, args, kwargs) or told


def _positions(args: tuple, traced: tuple) -> tuple[int, ...] | None:
    """The one set of hashable positions whose removal leaves `args` matching the
    traced arguments' `ArgInfo`s; None if no set or several do."""
    dropped = len(args) - len(traced)
    if dropped == 0:
        return ()
    candidates = [i for i, a in enumerate(args) if _hashable(a)]
    fits = []
    choices = list(
        itertools.islice(itertools.combinations(candidates, dropped), _MOST_CHOICES + 1)
    )
    if len(choices) > _MOST_CHOICES:
        return None  # one fit among those tried is not the one fit: nothing guessed
    for choice in choices:
        kept = [a for i, a in enumerate(args) if i not in choice]
        if all(_matches(a, info) for a, info in zip(kept, traced, strict=True)):
            fits.append(choice)
    return fits[0] if len(fits) == 1 else None


def _matches(arg: Any, info: Any) -> bool:
    """Whether `arg` traces to the `ArgInfo` tree `info`: same tree, and each leaf of
    the same shape and dtype."""
    leaves, tree = jax.tree.flatten(arg)
    infos, info_tree = jax.tree.flatten(info)
    if str(tree) != str(info_tree):  # PyTreeDef is not typed comparable
        return False
    for leaf, one in zip(leaves, infos, strict=True):
        try:
            aval = jax.typeof(leaf)
        except TypeError:
            return False
        if tuple(aval.shape) != tuple(one.shape) or aval.dtype != one.dtype:
            return False
    return True


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
