"""The MLP through the lenses: zero-argument diagrams for `jaxtour tour` and slides.

They live here, not in the lenses' galleries, because they draw this package's model:
`mlp` may look down at the lenses, a lens never looks up at a model. The tour lists
them by reference through `GALLERY` (exported as `jaxtour.mlp.GALLERY`).
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxtour._diagram import Diagram
from jaxtour.autodiff import draw_grad
from jaxtour.mlp._model import Params, example_batch, init_params, loss, update
from jaxtour.viz import draw_hlo, draw_jaxpr, draw_pipeline


def _training_step() -> tuple[Callable, tuple[Params, jax.Array, jax.Array]]:
    """The MLP's training step and example arguments: (update, (params, x, y))."""
    params = init_params(jax.random.key(0))
    x, y = example_batch()
    return update, (params, x, y)


def mlp_pipeline() -> Diagram:
    """The pipeline annotated with the MLP training step's own counts."""
    step, args = _training_step()
    return draw_pipeline(step)(*args)


def mlp_jaxpr() -> Diagram:
    """The jaxpr of the MLP's training step."""
    step, args = _training_step()
    return draw_jaxpr(step)(*args)


def mlp_hlo() -> Diagram:
    """The MLP training step's compiled HLO, one box per fusion."""
    step, args = _training_step()
    return draw_hlo(step, stage="compiled")(*args)


def grad_small_mlp() -> Diagram:
    """Reverse mode for a 4-8-3 MLP's loss on five examples (`loss`)."""
    params = init_params(jax.random.key(0), (4, 8, 3))
    x = jax.random.normal(jax.random.key(1), (5, 4))
    return draw_grad(loss)(params, x, jnp.array([0, 2, 1, 1, 0]))


# file stem -> picture, in the order the tour renders them
GALLERY: dict[str, Callable[[], Diagram]] = {
    "mlp_pipeline": mlp_pipeline,
    "mlp_jaxpr": mlp_jaxpr,
    "mlp_hlo": mlp_hlo,
    "grad_small_mlp": grad_small_mlp,
}
