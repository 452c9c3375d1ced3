"""Zero-argument diagrams for `jaxtour tour` and slides, listed in `GALLERY`.

Each factory returns a `Diagram` with nothing to configure, so the tour can render it
without arguments. The MLP's own pictures are `jaxtour.mlp.GALLERY`.
"""

from __future__ import annotations

from collections.abc import Callable

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


# file stem -> picture, in the order the tour renders them
GALLERY: dict[str, Callable[[], Diagram]] = {
    "pipeline_step1": pipeline_step1,
    "pipeline_step2": pipeline_step2,
    "pipeline_step3": pipeline_step3,
    "autodiff_landscape": autodiff_landscape,
    "ai_stack": ai_stack,
}
