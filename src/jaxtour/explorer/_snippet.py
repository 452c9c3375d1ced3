"""How a code line names the composition, so that pasted it traces what the view did.

A code line writes the composition in JAX: ``jvp`` as the function `compose` builds,
``lambda *a: jax.jvp(f, a, jax.tree.map(jnp.ones_like, a))`` (tangents of ones; integer
and bool leaves take float0 zeros, written in a line above when the example has one).

`compose` traces a model (an Equinox module, a `jax.tree_util.Partial` of arrays) as
``apply(model, *args)``: its arrays are inputs, never differentiated or mapped. A line
saying ``grad(Normed)`` would close over them as constants (XLA folds work on them away)
and ``jax.jit(Normed)`` would not run at all; a model's line says ``apply`` instead and
passes the arrays first, its argnums and in_axes shifted by one:

    params, static = eqx.partition(Normed, eqx.is_array)
    apply = lambda params, *args: eqx.combine(params, static)(*args)
    jax.make_jaxpr(grad(apply, argnums=1))(params, *args)

An Equinox module is split so (its other leaves, a function say, held as
`eqx.filter_jit` holds them); any other model, named ``f``, is passed whole. Keyword
arguments held fixed (a `Held` model) are written inside ``apply``, ``(*args, scale=2.0)``:
``partial(Normed, scale=2.0)`` is no pytree, and would close over the arrays.
"""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

import jax

from jaxtour import _ir
from jaxtour.explorer._compose import (
    Held,
    Transforms,
    batch_code,
    has_tangent,
    held_code,
)
from jaxtour.explorer._request import Request

_SPLIT = (
    "params, static = eqx.partition({name}, eqx.is_array)\n"
    "apply = lambda params, *args: eqx.combine(params, static)(*args{held})\n"
)
_WHOLE = "apply = lambda model, *args: model(*args{held})\n"
# ones_tangents written out, for an example with an integer, bool or key leaf
_TANGENT = (
    "tangent = lambda x: jnp.ones_like(x) if jnp.issubdtype(jnp.result_type(x), "
    "jnp.inexact) else np.zeros(jnp.shape(x), jax.dtypes.float0)\n"
)


class Naming(NamedTuple):
    """What a code line writes: the lines before it, the composition, its arguments."""

    setup: str
    label: str
    args: str
    held: str = ""  # a model's arrays (or the model), passed first

    def function(self) -> str:
        """The composition as a function of the batch alone: a model's arrays held."""
        return f"partial({self.label}, {self.held})" if self.held else self.label


def named(request: Request, lens: bool = False) -> Naming:
    """How a view's line names the request's composition on what it runs on.

    `lens`: the view calls a lens, which traces a bare model as `compose` does, so its
    line may name an untransformed model as it is.
    """
    subject, transforms = request.subject, request.transforms
    held = isinstance(subject.fn, Held)  # no lens takes its keyword arguments
    fn = None if lens and transforms == Transforms() and not held else subject.fn
    batch = batch_code(transforms)
    name = subject.name if held else subject.label  # apply holds the kwargs
    return naming(fn, name, transforms, subject.args, batch)


def naming(
    f: Any, name: str, transforms: Transforms, args: tuple, batch: str
) -> Naming:
    """How a line names the composition of `f` (called `name`, with example `args`) on
    `batch`: as written for a function; through ``apply`` for a model.

    Example:
        >>> naming(abs, "abs", Transforms(grad=True), (1.0,), "args")
        Naming(setup='', label='grad(abs)', args='*args', held='')
    """
    setup, ones = tangents(args) if transforms.jvp else ("", "")
    if not _ir.is_model(f):
        label = composition(transforms, name, len(args), ones=ones)
        return Naming(setup, label, f"*{batch}")
    held = ""
    if isinstance(f, Held):  # a model's keyword arguments, held inside apply
        f, held = f.model, ", " + held_code(f.kwargs)
    if _is_equinox(f):
        setup, first = _SPLIT.format(name=name, held=held) + setup, "params"
    else:
        setup, first = _WHOLE.format(held=held) + setup, "f"
    label = composition(transforms, "apply", len(args), model=True, ones=ones)
    return Naming(setup, label, f"{first}, *{batch}", first)


def tangents(args: tuple) -> tuple[str, str]:
    """The line defining tangents of ones for `args`, as `ones_tangents` makes them, and
    the function a line maps over the primals: ``jnp.ones_like`` where every leaf is
    floating (none needed before it), ``tangent`` otherwise.

    Example:
        >>> tangents((1.0, 2.0))
        ('', 'jnp.ones_like')
    """
    if all(has_tangent(leaf) for leaf in jax.tree.leaves(args)):
        return "", "jnp.ones_like"
    return _TANGENT, "tangent"


def composition(
    transforms: Transforms,
    name: str,
    nargs: int,
    model: bool = False,
    ones: str = "jnp.ones_like",
) -> str:
    """The composition `compose` builds, written in JAX: of `name`, or for a `model`
    of ``apply(model, *args)``, its argnums and in_axes shifted by one; jvp's tangents
    are `ones` mapped over the primals.

    Example:
        >>> composition(Transforms(jvp=True, vmap=0), "f", 1)
        'vmap(lambda *a: jax.jvp(f, a, jax.tree.map(jnp.ones_like, a)), in_axes=0)'
        >>> composition(Transforms(jit=True, grad=True, vmap=0), "apply", 1, model=True)
        'jit(vmap(grad(apply, argnums=1), in_axes=(None, 0)))'
    """
    text = name
    if transforms.grad:
        text = f"grad({text}, argnums=1)" if model else f"grad({text})"
    if transforms.jvp:  # tangents of ones, a model held
        held, text = ("m, ", f"partial({text}, m)") if model else ("", text)
        text = f"lambda {held}*a: jax.jvp({text}, a, jax.tree.map({ones}, a))"
    if transforms.vmap is not None:
        axis = str(transforms.vmap)
        axes = f"({', '.join(['None', *[axis] * nargs])})" if model else axis
        text = f"vmap({text}, in_axes={axes})"
    if transforms.jit:
        text = f"jit({text})"
    return text


def _is_equinox(f: Any) -> bool:
    # an Equinox module's user has imported equinox; the kit itself never needs it
    eqx = sys.modules.get("equinox")
    return eqx is not None and isinstance(f, eqx.Module)
