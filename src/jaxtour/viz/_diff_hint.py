"""`diff_hint`: for an exercise checker, what a student's program does differently."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour.viz._diff import diff
from jaxtour.viz._diff_levels import LEVELS


def diff_hint(
    answer: Callable,
    reference: Callable,
    *,
    limit: int = 3,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., str]:
    """What `answer` does differently from `reference`, in at most `limit` lines.

    A hook for exercise checkers: when a student's function gives the wrong numbers
    (or the right numbers the wrong way), the message can show what their program
    computes that the reference's does not, at the first level that differs (the
    jaxpr first: what they wrote). "" when the two programs are the same.

    Args:
        answer: the student's function.
        reference: the reference solution.
        limit: at most this many differences are listed.
        static_argnums: as `jax.jit`'s, for both (a loop count, a size).
        static_argnames: as `jax.jit`'s, for both.

    Returns:
        A function of the example arguments returning the text.

    Example:
        >>> import jax.numpy as jnp
        >>> print(diff_hint(jnp.sum, jnp.mean)(jnp.ones(8)))
        Your program, compared with the reference (jaxpr):
          - 1 div removed
    """
    compare = diff(
        reference,
        answer,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
    )

    def hint(*args: Any, **kwargs: Any) -> str:
        d = compare(*args, **kwargs)
        level = next((lv for lv in d.levels if not lv.same), None)
        if level is None:
            return ""
        said = level.sentences()
        lines = [f"  - {s}" for s in said[:limit]]
        if len(said) > limit:
            lines.append(f"  … and {len(said) - limit} more")
        head = f"Your program, compared with the reference ({LEVELS[level.level]}):"
        return "\n".join([head, *lines])

    return hint
