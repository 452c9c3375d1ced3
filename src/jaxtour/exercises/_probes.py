"""Probes: what a checker asks of an answer where the answer runs (see `in_answer`).

Each takes the answer first and returns plain data (a list of names, an array), so
when grading it runs in the answer's process and only that data comes back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp


def primitives_of(
    fn: Callable, *traced: Any, before: tuple = (), after: tuple = ()
) -> list[str]:
    """The primitive of each top-level equation of `fn(*before, *traced, *after)`'s
    jaxpr, in order (only `traced` are traced)."""
    jaxpr = jax.make_jaxpr(lambda *a: fn(*before, *a, *after))(*traced)
    return [eqn.primitive.name for eqn in jaxpr.eqns]


def grad_of_sum(fn: Callable, x: jax.Array) -> Any:
    """`jax.grad(lambda v: jnp.sum(fn(v)))(x)`."""
    return jax.grad(lambda v: jnp.sum(fn(v)))(x)


def vmapped(fn: Callable, xs: jax.Array, axis_name: str) -> Any:
    """`jax.vmap(fn, axis_name=axis_name)(xs)`."""
    return jax.vmap(fn, axis_name=axis_name)(xs)
