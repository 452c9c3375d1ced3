"""Visualisers: each draws one thing JAX does and returns a `jaxtour.Diagram`."""

from jaxtour.viz._compare import StageComparison, compare_stages
from jaxtour.viz._concepts import draw_ai_stack, draw_autodiff_landscape
from jaxtour.viz._diff import ProgramDiff, diff, diff_calls
from jaxtour.viz._diff_hint import diff_hint
from jaxtour.viz._gallery import GALLERY
from jaxtour.viz._hlo import draw_hlo
from jaxtour.viz._jaxpr import draw_jaxpr
from jaxtour.viz._pipeline import draw_pipeline
from jaxtour.viz._sharding import draw_sharding

__all__ = [
    "GALLERY",
    "ProgramDiff",
    "StageComparison",
    "compare_stages",
    "diff",
    "diff_calls",
    "diff_hint",
    "draw_ai_stack",
    "draw_autodiff_landscape",
    "draw_hlo",
    "draw_jaxpr",
    "draw_pipeline",
    "draw_sharding",
]
