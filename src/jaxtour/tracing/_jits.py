"""Which `jax.jit` a call of `explain_retraces` goes to: one per set of static arguments.

Told `static_argnums`/`static_argnames`, `explain_retraces` has one jit, as `jax.jit`
has. Told none, a `jax.jit`-wrapped `f` holds static what its own jit holds, and a call
shows which those are only when it passes them (`_ir.jit_statics`): positions counted
from the end move with the number of arguments, and a call that leaves a static
keyword to its default passes none. So each call is matched to the statics it shows,
and each set of statics keeps a jit (and its cache) of its own, learned once: a call
that returns to earlier statics finds its program, as it would in `jax.jit(f)`.

Leaves JAX cannot trace inside an argument (an Equinox module's activation function)
are held fixed, as `eqx.filter_jit` and the other lenses hold them (`_ir.split`): the
jit then runs `f` with them filled back in (`_ir.bind`), one jit per held set.

A model passed as `f` (an Equinox module, a `jax.tree_util.Partial` of arrays: a
callable pytree holding arrays) is jitted as ``apply(model, *args)`` (`_ir.model_call`),
as `eqx.filter_jit(model)` jits it: its arrays are inputs, not constants, so new
weights of the same shapes hit the cache; its other leaves are held. It is read at
each call, as an argument is: a weight of a new shape, or a new activation, traces
again (`eqx.filter_jit(model)` reads it once, when wrapped; for an immutable Equinox
module the two agree).

A call of such a model that writes to the model itself (a Flax NNX `BatchNorm`
updating its statistics) would write to jit's traced copy and lose the update: it
raises instead, saying to pass `nnx.jit` (`_state`). `lower` and `trace` run nothing
and stage it as `jax.jit` would.

Each jit is kept for as long as this function is, up to `_MOST` of them: as many as
JAX's own cache of traces holds (`jax.jit` keeps a function's traces in caches of
thousands of entries, shared by every function). A call that comes back to held leaves
seen before finds its jit, so it traces again only where `jax.jit` would. Which jits
were let go is remembered for four times as many (`_REMEMBERED`: a retrace of one is
then said to be the kit's doing), and past that only how many.

A call that raises while `f` is traced is no trace: `jax.jit` keeps nothing of it, and
it is counted only once the trace succeeded.

A framework's own jit (`nnx.jit`, `eqx.filter_jit`) is not wrapped again: a `jax.jit`
around it would trace its Python away, and with it what it does besides computing (an
NNX optimizer's update of the model, written back after the call). It is called as it
is, and `explain_retraces` reads its traces off `jax.monitoring`.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Callable
from typing import Any

import jax

from jaxtour import _ir
from jaxtour.tracing._signature import Signature, signature
from jaxtour.tracing._state import writes
from jaxtour.tracing._statics import Cause
from jaxtour.tracing._watched import read_values

# jits kept, one per set of statics and held leaves: as many as JAX's cache of traces
# (`weakref_lru_cache`'s 2048 entries), so a trace jax.jit would not make is not made
_MOST = 2048
# the jits let go whose keys are remembered (4 times _MOST): a retrace of one is
# then said to be the kit's doing; past that, only how many were let go is kept
_REMEMBERED = 4 * _MOST


def own_jit(f: Any) -> str | None:
    """The package whose own jit `f` is (`flax` for `nnx.jit`, `equinox` for
    `eqx.filter_jit`): not `jax.jit`'s, but staged as one (it has `lower`). None for
    anything else."""
    if _ir.is_jitted(f) or not callable(getattr(f, "lower", None)):
        return None
    return type(f).__module__.split(".")[0]


def _own_statics(f: Any) -> _ir.StaticArgs:
    """The static positions a framework's jit shows (`nnx.jit`'s `static_argnums`)."""
    try:
        return _ir.static_args(f, getattr(f, "static_argnums", None), None, "jit")
    except (TypeError, ValueError):  # not jax.jit's reading: none read
        return _ir.StaticArgs()


class Jits:
    """The jits of one function: a counting one for calls, a plain one for `lower`,
    `trace` and `eval_shape`, per set of static arguments (`_ir.StaticArgs`) and of
    leaves held fixed; or, for a framework's own jit (`own`), `f` itself."""

    def __init__(
        self, f: Callable, told: _ir.StaticArgs, on_trace: Callable[[], None]
    ) -> None:
        self.fn, self.own = f, own_jit(f)
        # nnx.jit keeps its static_argnums (not its static_argnames) where it shows
        self.told = _own_statics(f) if self.own and told == _ir.StaticArgs() else told
        # which leaves jit traces; the others are keyed as static values
        self.traced = _ir.is_array if self.own == "equinox" else _ir.traceable
        # a model as f: jit runs apply(model, *args), its arrays traced
        self.model = not self.own and _ir.is_model(f)
        self.target = _ir.applier(f) if self.model else f  # staged: lower, trace
        self._made: collections.OrderedDict = collections.OrderedDict()
        # the hashes of the keys of the latest jits let go (`_REMEMBERED` at most,
        # the oldest forgotten), and how many were let go in all
        self._dropped: collections.OrderedDict[int, None] = collections.OrderedDict()
        self._let_go = 0
        self.remade = False  # whether the last call's jit was let go and made again
        self._names: tuple[str, ...] = ()  # every static keyword seen so far
        # a call hands back f's results: a model that writes to itself raises
        target = (
            _ir.applier(f, writes(f, "explain_retraces", True)) if self.model else f
        )

        @functools.wraps(target)
        def counted(*args: Any, **kwargs: Any) -> Any:
            out = target(*args, **kwargs)
            # runs only while jit traces (a Python side effect), and only once the
            # trace succeeded: jit keeps no trace that raised, nor does this count it
            on_trace()
            return out

        self._counted = counted

    def statics(self, args: tuple, kwargs: dict) -> _ir.StaticArgs:
        """The static arguments of this call: as told, else as `f`'s jit holds them
        (`_ir.statics_for`), read off this call."""
        statics = _ir.statics_for(self.fn, args, kwargs, self.told)
        self._names += tuple(k for k in statics.names if k not in self._names)
        return statics

    def signature(
        self,
        statics: _ir.StaticArgs,
        args: tuple,
        kwargs: dict,
        names: list[str],
        defaults: dict,
    ) -> Signature:
        """The call's `Signature` as its jit keys it (all as `applied` gives them;
        `defaults`: the static keywords'). It reads the call's static keywords and
        every one learned before: a jit's static_argnames never change, and a call
        that leaves one to its default is keyed on that, as a told lens keys it."""
        keys = statics.names + tuple(k for k in self._names if k not in statics.names)
        static = tuple(statics.positions(len(args)))
        model = names[0] if self.model else None
        return signature(
            names, args, kwargs, static, keys, defaults, self.traced, model
        )

    def reads(self) -> dict[str, Any]:
        """What `f` reads besides its arguments (`read_values`); not a model's own
        fields, which are its jit's inputs."""
        read = read_values(self.fn)
        if self.model:
            read.pop("self", None)
        return read

    @property
    def diffed(self) -> Callable:
        """The function whose traces a retrace's diff traces again: what the jit
        runs (`apply` for a model), a framework's jit's own function."""
        return getattr(self.fn, "__wrapped__", self.fn) if self.own else self.target

    def applied(
        self, statics: _ir.StaticArgs, args: tuple, names: list[str]
    ) -> tuple[_ir.StaticArgs, tuple, list[str]]:
        """The call as jit takes it: for a model as `f`, ``apply(model, *args)``
        (`_ir.model_call`: the model first, the statics shifted past it)."""
        if not self.model:
            return statics, args, names
        return _ir.model_call(self.fn, args, statics, names)

    def prepared(
        self, statics: _ir.StaticArgs, args: tuple, kwargs: dict, names: list[str]
    ) -> tuple[Any, tuple, dict]:
        """What a call runs and with what: the jit that counts each trace, for these
        statics, with the leaves it cannot trace held (`names`: the positional
        parameters'; all as `applied` gives them); a framework's own jit, `f` as it
        is."""
        self.remade = False
        if self.own:
            return self.fn, args, kwargs
        jitted, part = self._jit(self._counted, statics, args, kwargs, names)
        return jitted, part.args, part.kwargs

    def staged(self, stage: str, args: tuple, kwargs: dict) -> Any:
        """`jax.jit(f).<stage>(*args, **kwargs)` for `lower`, `trace`, `eval_shape`:
        not a call. A framework's own jit stages itself, where it can."""
        if self.own:
            if not callable(getattr(self.fn, stage, None)):
                name = _ir.function_name(self.fn)
                raise TypeError(
                    f"explain_retraces({name}) cannot {stage}: {name} is {self.own}'s "
                    f"own jit, which has no `{stage}` method. Call `{name}.lower(...)` "
                    f"where it has one, or jax.jit the function it wraps."
                )
            return getattr(self.fn, stage)(*args, **kwargs)
        names = _ir.arg_names(self.fn, len(args))
        statics, args, names = self.applied(self.statics(args, kwargs), args, names)
        jitted, part = self._jit(self.target, statics, args, kwargs, names)
        return getattr(jitted, stage)(*part.args, **part.kwargs)

    def clear_cache(self) -> None:
        """Every counting jit's cache cleared, as `jax.jit(f).clear_cache()`."""
        if self.own:
            name = _ir.function_name(self.fn)
            raise TypeError(
                f"explain_retraces({name}) cannot clear {name}'s cache: it is "
                f"{self.own}'s own jit, whose cache has no public handle. "
                "jax.clear_caches() clears every jit's, this one's too."
            )
        for (fn, _, _), jitted in self._made.items():
            if fn is self._counted:
                jitted.clear_cache()

    def traced_again(self) -> Cause:
        """Why jit traced a signature it had traced before: where this record had
        let its jit go (`remade`), that; else a cleared cache or an unwatched
        setting."""
        if self.remade:
            return Cause(
                "cache",
                "the same signature as an earlier call, yet jit traced again: "
                f"explain_retraces keeps one jit per set of static arguments and "
                f"held leaves, at most {_MOST}, and had let this one's go to make "
                f"room ({self._let_go} let go so far); jax.jit alone might not "
                "have traced again",
                "fewer distinct static values or held leaves (strings, functions "
                "inside arguments) per function",
            )
        words = (
            "the same signature as an earlier call, yet jit traced again: its cache "
            "was cleared (.clear_cache(), jax.clear_caches()), or a setting jit keys "
            "on changed that this record does not watch (it watches 64-bit mode, "
            "matmul precision and jax.set_mesh)"
        )
        if self._let_go > len(self._dropped):  # some let go were forgotten since
            words += (
                f"; or explain_retraces let this one's jit go to make room (it keeps "
                f"at most {_MOST}, and has let {self._let_go} go, too many to "
                "remember which)"
            )
        if not self.own:
            return Cause("cache", words, "")
        name = _ir.function_name(self.fn)
        return Cause(
            "cache",
            f"{words}; or {name}, {self.own}'s own jit, holds an argument static "
            "that this record traces",
            f"tell explain_retraces which, as you told {name}'s jit: "
            "static_argnums= or static_argnames=",
        )

    def _let_go_of(self, key: Any) -> None:
        """Note a jit let go (by its key's hash), forgetting the oldest noted past
        `_REMEMBERED`: what is noted stays bounded, as the jits kept are."""
        self._let_go += 1
        self._dropped[hash(key)] = None
        self._dropped.move_to_end(hash(key))
        while len(self._dropped) > _REMEMBERED:
            self._dropped.popitem(last=False)

    def _jit(
        self,
        fn: Callable,
        statics: _ir.StaticArgs,
        args: tuple,
        kwargs: dict,
        names: list[str],
    ) -> tuple[Any, _ir.Split]:
        """`jax.jit(fn)` with these statics, the leaves it cannot trace held fixed
        (one bound function per held set: `_ir.bind`), and the split arguments. The
        jit is keyed by what is held (`Split.key`), so it lives as long as this
        record keeps it, whatever `_ir.bind`'s own cache lets go."""
        static = statics.positions(len(args))
        model = self.fn if self.model else None
        part = _ir.split(args, kwargs, static, statics.names, names, model)
        key = (fn, statics, part.key())
        if key not in self._made:
            nums, keywords = statics
            bound = _ir.bind(fn, part)
            self._made[key] = jax.jit(
                bound, static_argnums=nums, static_argnames=keywords
            )
            self.remade = hash(key) in self._dropped
            if len(self._made) > _MOST:
                self._let_go_of(self._made.popitem(last=False)[0])
        self._made.move_to_end(key)
        return self._made[key], part


def under_a_transformation(values: Any) -> bool:
    """Whether `values` (the call's arguments and what `f` reads besides them) hold a
    tracer of a transformation around the call (`jax.grad`, `jax.vmap` or `jax.jit` of
    a function that calls the wrapped one): a JAX array that is not a concrete one."""
    return any(_ir.is_tracer(leaf) for leaf in jax.tree.leaves(values))
