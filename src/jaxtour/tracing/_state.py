"""What to do instead, where a model passed as `f` writes to itself when called.

`explain_retraces`, `step_through` and `find_nans` hand back `f`'s results as a call of
`f` would, yet trace `f` as `jax.jit` does: a model that updates its own state (a Flax
NNX `BatchNorm`'s running statistics, the count of a module's `nnx.Rngs`) would write
to a traced copy and keep nothing. They raise instead (`_ir.Writes`), and say what
works: for `explain_retraces`, Flax's own jit, which it calls as it is and which writes
the update back; for the stepping lenses, which run the jaxpr themselves, a function
that returns the new state. Both recipes are Flax's, and are given for any Flax
model, a user's own `nnx.Module` subclass too (`is_flax`); any other model is told to
return its new state.
"""

from __future__ import annotations

from typing import Any

from jaxtour import _ir

_EVAL = "Where no update is wanted (evaluation), call model.eval() first."
_OWN_JIT = (
    "Pass Flax's own jit, which writes the update back: "
    "{who}(nnx.jit(lambda m, *args: m(*args)))(model, *args). " + _EVAL
)
_RETURNED = (
    "Pass a function that returns the new state instead: "
    "graphdef, state = nnx.split(model); def f(state, *args): "
    "m = nnx.merge(graphdef, state); return m(*args), nnx.state(m). Then "
    "{who}(f)(state, *args), and nnx.update(model, new_state) with the state it "
    "returns. " + _EVAL
)
_OTHER = (
    "Have the call return its new state rather than assign it to the model (as "
    "Equinox's stateful layers return an eqx.nn.State), and set it yourself."
)


def writes(f: Any, who: str, own_jit: bool) -> _ir.Writes:
    """The check `who` asks of a model `f` (`own_jit`: whether `who` calls a
    framework's own jit as it is, so `nnx.jit` keeps the update)."""
    if not is_flax(f):
        return _ir.Writes(who, _OTHER)
    return _ir.Writes(who, (_OWN_JIT if own_jit else _RETURNED).format(who=who))


def is_flax(f: Any) -> bool:
    """Whether `f` is a Flax object: its class, or a class it derives from, is
    Flax's (a user's `class Net(nnx.Module)` too). Read off the class's MRO, so Flax
    is never imported for a model that is none of its."""
    return any(
        isinstance(module := vars(kind).get("__module__"), str)
        and module.split(".")[0] == "flax"
        for kind in type(f).__mro__
    )
