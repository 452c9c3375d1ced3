"""Which inputs of a jaxpr its program reads: what `jax.jit` passes to the executable.

`jax.jit` (with its default `keep_unused=False`) drops the arguments its jaxpr never
reads, so their buffers never reach the compiled executable; a twin of the call that
is to cost what the real call's arguments cost must take the same ones.
"""

from __future__ import annotations

from typing import Any

from jaxtour._ir._jaxpr import is_literal


def used_inputs(closed: Any) -> list[bool]:
    """For each input of the (closed) jaxpr, whether an equation or an output reads it.

    Example:
        >>> import jax
        >>> used_inputs(jax.make_jaxpr(lambda a, b, c: (a * 2, c))(1.0, 2.0, 3.0))
        [True, False, True]
    """
    jaxpr = getattr(closed, "jaxpr", closed)
    read = {
        id(atom)
        for atoms in (*(eqn.invars for eqn in jaxpr.eqns), jaxpr.outvars)
        for atom in atoms
        if not is_literal(atom)
    }
    return [id(var) in read for var in jaxpr.invars]
