"""Which `jax.jit` a call of `explain_retraces` goes to: one per set of static arguments.

Told `static_argnums`/`static_argnames`, `explain_retraces` has one jit, as `jax.jit`
has. Told none, a `jax.jit`-wrapped `f` holds static what its own jit holds, and a call
shows which those are only when it passes them (`_ir.jit_statics`): positions counted
from the end move with the number of arguments, and a call that leaves a static
keyword to its default passes none. So each call is matched to the statics it shows,
and each set of statics keeps a jit (and its cache) of its own, learned once: a call
that returns to earlier statics finds its program, as it would in `jax.jit(f)`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax

from jaxtour import _ir


class Jits:
    """The jits of one function: a counting one for calls, a plain one for `lower`,
    `trace` and `eval_shape`, per set of static arguments (`_ir.StaticArgs`)."""

    def __init__(
        self, f: Callable, told: _ir.StaticArgs, on_trace: Callable[[], None]
    ) -> None:
        self.fn, self.told, self._on_trace = f, told, on_trace
        self._made: dict[_ir.StaticArgs, tuple[Any, Any]] = {}
        self._names: tuple[str, ...] = ()  # every static keyword seen so far

    def statics(self, args: tuple, kwargs: dict) -> _ir.StaticArgs:
        """The static arguments of this call: as told, else as `f`'s jit holds them
        (`_ir.statics_for`), read off this call."""
        statics = _ir.statics_for(self.fn, args, kwargs, self.told)
        self._names += tuple(k for k in statics.names if k not in self._names)
        return statics

    def names(self, statics: _ir.StaticArgs) -> tuple[str, ...]:
        """The static keywords a call's signature reads: its own, and every one
        learned before (a jit's static_argnames never change, and a call that leaves
        one to its default is keyed on that, as a told lens keys it)."""
        return statics.names + tuple(k for k in self._names if k not in statics.names)

    def counted(self, statics: _ir.StaticArgs) -> Any:
        """The jit that counts each trace (`on_trace`), for these statics."""
        return self._pair(statics)[0]

    def plain(self, args: tuple, kwargs: dict) -> Any:
        """The jit for `lower`, `trace` and `eval_shape` of this call: not a call."""
        return self._pair(self.statics(args, kwargs))[1]

    def clear_cache(self) -> None:
        """Every counting jit's cache cleared, as `jax.jit(f).clear_cache()`."""
        for counted, _ in self._made.values():
            counted.clear_cache()

    def _pair(self, statics: _ir.StaticArgs) -> tuple[Any, Any]:
        if statics not in self._made:
            fn, on_trace = self.fn, self._on_trace

            @functools.wraps(fn)
            def counted(*args: Any, **kwargs: Any) -> Any:
                on_trace()  # runs only while jit traces: a Python side effect
                return fn(*args, **kwargs)

            nums, names = statics
            self._made[statics] = (
                jax.jit(counted, static_argnums=nums, static_argnames=names),
                jax.jit(fn, static_argnums=nums, static_argnames=names),
            )
        return self._made[statics]
