"""How a code line names a model's composition, so that pasted it traces what the view did.

`compose` traces a model (an Equinox module, a `jax.tree_util.Partial` of arrays) as
``apply(model, *args)``: its arrays are inputs, never differentiated or mapped. A line
saying ``grad(Normed)`` would close over them as constants (XLA folds work on them away)
and ``jax.jit(Normed)`` would not run at all; a model's line says ``apply`` instead and
passes the arrays first, its argnums and in_axes shifted by one:

    params, static = eqx.partition(Normed, eqx.is_array)
    apply = lambda params, *args: eqx.combine(params, static)(*args)
    jax.make_jaxpr(grad(apply, argnums=1))(params, *args)

An Equinox module is split so (its other leaves, a function say, held as
`eqx.filter_jit` holds them); any other model, named ``f``, is passed whole.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from jaxtour import _ir
from jaxtour.explorer._compose import Transforms

_SPLIT = (
    "params, static = eqx.partition({name}, eqx.is_array)\n"
    "apply = lambda params, *args: eqx.combine(params, static)(*args)\n"
)
_WHOLE = "apply = lambda model, *args: model(*args)\n"


class Naming(NamedTuple):
    """What a code line writes: the lines before it, the composition, its arguments."""

    setup: str
    label: str
    args: str


def naming(f: Any, name: str, transforms: Transforms, nargs: int, batch: str) -> Naming:
    """How a line names the composition of `f` (called `name`) on `batch`: as written
    for a function; through ``apply`` for a model.

    Example:
        >>> naming(abs, "abs", Transforms(grad=True), 1, "args")
        Naming(setup='', label='grad(abs)', args='*args')
    """
    if not _ir.is_model(f):
        return Naming("", transforms.describe(name), f"*{batch}")
    if _is_equinox(f):
        setup, first = _SPLIT.format(name=name), "params"
    else:
        setup, first = _WHOLE, "f"
    return Naming(setup, model_label(transforms, nargs), f"{first}, *{batch}")


def model_label(transforms: Transforms, nargs: int) -> str:
    """The composition `compose` builds for a model, applied to ``apply(model, *args)``.

    Example:
        >>> model_label(Transforms(jit=True, grad=True, vmap=0), 1)
        'jit(vmap(grad(apply, argnums=1), in_axes=(None, 0)))'
    """
    text = "apply"
    if transforms.grad:
        text = f"grad({text}, argnums=1)"
    if transforms.jvp:  # tangents of ones, the model held
        ones = "jax.tree.map(jnp.ones_like, a)"
        text = f"lambda m, *a: jax.jvp(partial({text}, m), a, {ones})"
    if transforms.vmap is not None:
        axes = ", ".join(["None", *[str(transforms.vmap)] * nargs])
        text = f"vmap({text}, in_axes=({axes}))"
    if transforms.jit:
        text = f"jit({text})"
    return text


def _is_equinox(f: Any) -> bool:
    # an Equinox module's user has imported equinox; the kit itself never needs it
    eqx = sys.modules.get("equinox")
    return eqx is not None and isinstance(f, eqx.Module)
