"""Programs the `_ir` tests share, and where their marked lines are."""

import inspect
import sys

import jax
import jax.numpy as jnp
from jax.extend import core as jex_core

from jaxtour import _ir


def line_of(marker: str, module: str = __name__) -> int:
    """The line of `module` (default: this file) that holds `marker` (in a comment)."""
    lines = inspect.getsource(sys.modules[module]).splitlines()
    return next(
        i for i, line in enumerate(lines, 1) if marker in line and "line_of" not in line
    )


def control_flow(x, y):
    z = jnp.sin(x)  # MARK-SIN
    w = jax.lax.cond(y > 0, lambda a: a + 1.0, lambda a: a * 2.0, z)
    carry, ys = jax.lax.scan(lambda c, a: (c + a, c * a), 0.0, w)
    n = jax.lax.while_loop(lambda v: v < 10.0, lambda v: v + 1.0, carry)
    r = jax.checkpoint(lambda t: jnp.exp(t) * 2.0)(w)
    return n + jax.nn.relu(r).sum() + ys.sum() + jax.jit(jnp.cos)(y)


ARGS = (jnp.arange(4.0), 1.0)


def oracle_count(jaxpr) -> int:
    """Eqns in `jaxpr` and every nested jaxpr, by JAX's own walk of eqn params."""
    return sum(
        1 + sum(oracle_count(sub) for sub in jex_core.jaxprs_in_params(e.params))
        for e in jaxpr.eqns
    )


def eqn(jaxpr, name):
    """The first eqn of primitive `name` in `jaxpr`, nested jaxprs included."""
    return next(e for _, e in _ir.walk(jaxpr) if e.primitive.name == name)
