"""A model that writes to itself when called, caught where `jax.jit` would lose the write.

A Flax NNX module updates its own state in place: `BatchNorm` its running statistics,
`Dropout` the count of its `nnx.Rngs`. Traced as `apply(model, *args)` (`_split`), the
model `apply` gets is a copy JAX rebuilt from the model's leaves, its arrays tracers:
what the call writes lands on that copy and is lost with it, so the user's model never
changes and nothing says so. A lens that hands `f`'s results back as a call of `f`
would (`explain_retraces`, `step_through`) checks the model after the call instead: a
leaf replaced, added or removed means the call wrote to the model, and it raises
`StateWriteError`, before anything ran, so the model is left as it was.

An Equinox module or a `jax.tree_util.Partial` cannot be written to (both are frozen).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax

from jaxtour._ir._values import is_tracer

_MISSING = object()
_NAMED = 4  # written leaves named in the message; the others counted


class StateWriteError(TypeError):
    """Calling a model passed as `f` wrote to the model itself, under a trace that
    would have lost the write: the model cannot run as this lens runs it."""


@dataclass(frozen=True)
class Writes:
    """Who checks a model's writes (`who`: the lens's name) and what the message
    tells the user to do instead (`fix`, its last sentences)."""

    who: str
    fix: str


def snapshot(model: Any) -> tuple[list, Any]:
    """`model`'s leaves by path and its treedef, before the call."""
    return jax.tree_util.tree_flatten_with_path(model)


def check_unwritten(
    model: Any, before: tuple[list, Any], name: str, writes: Writes
) -> None:
    """Raise `StateWriteError` where the call wrote to `model`, a traced copy
    (`before`: its `snapshot` from before the call). A model of concrete arrays (the
    user's own, under `jax.disable_jit`) keeps what it wrote: no error."""
    if not any(is_tracer(leaf) for _, leaf in before[0]):
        return
    changed = written(model, before, name)
    if changed:
        raise StateWriteError(_message(name, changed, writes))


def written(model: Any, before: tuple[list, Any], name: str) -> list[str]:
    """What the call wrote to `model`, in words: its leaves replaced, added or
    removed, each named from `name` by its path (``BatchNorm.mean.value``); where
    only its structure changed (an attribute that is no array set anew), that.

    Example:
        >>> model = {"w": jax.numpy.ones(2)}
        >>> before = snapshot(model)
        >>> model["w"] = model["w"] + 1
        >>> written(model, before, "m")
        ["`m['w']`"]
    """
    pathed, tree = before
    after, tree_after = snapshot(model)
    old = {jax.tree_util.keystr(path): leaf for path, leaf in pathed}
    new = {jax.tree_util.keystr(path): leaf for path, leaf in after}
    paths = dict.fromkeys([*old, *new])
    changed = [p for p in paths if old.get(p, _MISSING) is not new.get(p, _MISSING)]
    if changed:
        return [f"`{name}{path}`" for path in changed]
    try:
        same = tree == tree_after
    except (TypeError, ValueError):  # static fields that do not compare as bools
        same = True
    return [] if same else [f"`{name}`'s attributes that are not arrays"]


def _message(name: str, changed: list[str], writes: Writes) -> str:
    named = ", ".join(changed[:_NAMED])
    if len(changed) > _NAMED:
        named += f" and {len(changed) - _NAMED} more"
    return (
        f"{writes.who}({name}) would lose a state update: calling {name} wrote to "
        f"{named}. {writes.who} traces {name} as jax.jit does, handing it a copy "
        "whose arrays are tracers; the writes land on the copy and are lost with it, "
        f"so your {name} would be left unchanged. Nothing ran and {name} is as it "
        f"was. {writes.fix}"
    )
