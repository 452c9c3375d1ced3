"""Zero-argument autodiff pictures for `jaxtour tour` and slides.

Each returns a `Diagram` with nothing to configure, so the tour can render it without
arguments; `GALLERY` lists them (exported as `jaxtour.autodiff.GALLERY`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxtour._diagram import Diagram


def cubic(x: Any) -> Any:
    """f(x) = x³ + 2x² − 3x + 8, the lesson's cubic: f(1) = 8, f′(1) = 4."""
    return x**3 + 2 * x**2 - 3 * x + 8


def grad_cubic() -> Diagram:
    """Reverse mode for the cubic at x = 1: forward, residuals, backward, ∂f/∂x = 4.

    Example:
        >>> grad_cubic().title
        'grad of cubic: 10 forward equations, 4 residuals, 7 backward equations'
    """
    from jaxtour.autodiff._grad_graph import draw_grad

    return draw_grad(cubic)(1.0)


def jvp_sin_times_x() -> Diagram:
    """Forward mode for sin(x)·x at x = 1: the primal and tangent lanes side by side."""
    import jax.numpy as jnp

    from jaxtour.autodiff._jvp_vjp import draw_jvp

    def sin_times_x(x: Any) -> Any:
        return jnp.sin(x) * x

    return draw_jvp(sin_times_x)((1.0,), (1.0,))


# file stem -> picture, in the order the tour renders them
GALLERY: dict[str, Callable[[], Diagram]] = {
    "grad_cubic": grad_cubic,
    "jvp_sin_times_x": jvp_sin_times_x,
}
