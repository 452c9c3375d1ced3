"""Visualisers: each draws one thing JAX does and returns a `jaxtour.Diagram`."""

from jaxtour.viz._pipeline import draw_pipeline

__all__ = ["draw_pipeline"]
