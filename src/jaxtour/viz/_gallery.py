"""Zero-argument diagrams for `jaxtour tour` and slides: `DIAGRAMS` in the tour names these.

Each factory returns a `Diagram` with nothing to configure, so the tour can render it by
name (`jaxtour.viz._gallery:pipeline_step1`).
"""

from __future__ import annotations

from jaxtour._diagram import Diagram
from jaxtour.viz._concepts import draw_ai_stack, draw_autodiff_landscape
from jaxtour.viz._pipeline import draw_pipeline


def pipeline_step1() -> Diagram:
    """The pipeline, step 1: tracing and jit."""
    return draw_pipeline(step=1)


def pipeline_step2() -> Diagram:
    """The pipeline, step 2: every stage named, with the transformations."""
    return draw_pipeline(step=2)


def pipeline_step3() -> Diagram:
    """The pipeline, step 3: the jax.* entry points that reach each stage."""
    return draw_pipeline(step=3)


def autodiff_landscape() -> Diagram:
    """TensorFlow 1, PyTorch, TensorFlow 2 and JAX: how each gets derivatives and speed."""
    return draw_autodiff_landscape()


def ai_stack() -> Diagram:
    """JAX at the centre of the libraries built on it and the things built with it."""
    return draw_ai_stack()


def _mlp_step():
    """The MLP's training step and example arguments: (update, (params, x, y))."""
    import jax

    from jaxtour import mlp

    params = mlp.init_params(jax.random.key(0))
    x, y = mlp.example_batch()
    return mlp.update, (params, x, y)


def mlp_pipeline() -> Diagram:
    """The pipeline annotated with the MLP training step's own counts."""
    update, args = _mlp_step()
    return draw_pipeline(update)(*args)


def mlp_jaxpr() -> Diagram:
    """The jaxpr of the MLP's training step."""
    from jaxtour.viz import draw_jaxpr

    update, args = _mlp_step()
    return draw_jaxpr(update)(*args)


def mlp_hlo() -> Diagram:
    """The MLP training step's compiled HLO, one box per fusion."""
    from jaxtour.viz import draw_hlo

    update, args = _mlp_step()
    return draw_hlo(update, stage="compiled")(*args)
