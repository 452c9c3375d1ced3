"""The steps of `jaxtour tour` that need no model: diagrams and notebooks."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from tqdm.auto import tqdm

from jaxtour import lesson
from jaxtour._diagram import Diagram
from jaxtour._files import write_atomically
from jaxtour.autodiff import _gallery as autodiff_gallery
from jaxtour.mlp import _gallery as mlp_gallery
from jaxtour.viz import _gallery as viz_gallery

# file stem -> a function returning a Diagram with no arguments.
DIAGRAMS: dict[str, Callable[[], Diagram]] = {
    "pipeline_step1": viz_gallery.pipeline_step1,
    "pipeline_step2": viz_gallery.pipeline_step2,
    "pipeline_step3": viz_gallery.pipeline_step3,
    "autodiff_landscape": viz_gallery.autodiff_landscape,
    "ai_stack": viz_gallery.ai_stack,
    "mlp_pipeline": mlp_gallery.mlp_pipeline,
    "mlp_jaxpr": mlp_gallery.mlp_jaxpr,
    "mlp_hlo": mlp_gallery.mlp_hlo,
    "grad_cubic": autodiff_gallery.grad_cubic,
    "jvp_sin_times_x": autodiff_gallery.jvp_sin_times_x,
    "grad_small_mlp": mlp_gallery.grad_small_mlp,
}


def render_diagrams(args: argparse.Namespace, build_dir: Path) -> list[Path]:
    """Write every registered diagram as build/diagrams/<name>.svg."""
    written = []
    for stem, draw in tqdm(DIAGRAMS.items(), desc="diagrams", unit="svg"):
        diagram = draw()
        written.append(diagram.save(build_dir / "diagrams" / f"{stem}.svg"))
    return written


def lesson_sources(
    args: argparse.Namespace, build_dir: Path
) -> tuple[list[Path], list[Path]]:
    """(the lessons to execute, the files written to get them).

    `--notebooks DIR`, else ./notebooks (a checkout), else the lessons that came with
    jaxtour, copied to build/lessons/ so that they run outside the installed package.
    """
    folder = getattr(args, "notebooks", None)
    if folder is None and not Path("notebooks").is_dir():
        copied = lesson.copy_sources(build_dir / "lessons")
        tqdm.write(
            f"  no ./notebooks here: using the {len(copied)} lessons that came with "
            f"jaxtour (copied to {build_dir / 'lessons'})"
        )
        return copied, list(copied)  # two lists: the caller extends the second
    return lesson.find_lessons(folder), []


def execute_notebooks(args: argparse.Namespace, build_dir: Path) -> list[Path]:
    """Execute every lesson (instructor view) into build/notebooks/ as .ipynb and .html.

    Runs come from the lesson cache (build/executed/, or $JAXTOUR_EXECUTED): a lesson
    whose source, kit, JAX and mode are unchanged since its last run is not run again.
    """
    sources, written = lesson_sources(args, build_dir)
    cache = lesson.cache_dir(build_dir)
    for source in tqdm(sources, desc="notebooks", unit="nb"):
        run = lesson.cached(source, cache=cache)
        if run is None:
            tqdm.write(f"  executing {source.name}")
            start = time.perf_counter()
            run = lesson.executed(source, cache=cache)
            tqdm.write(
                f"  executed {source.name} in {time.perf_counter() - start:.1f} s"
            )
        else:
            tqdm.write(
                f"  {source.name}: unchanged since its run in {run.ipynb.parent}"
            )
        for path in run:
            target = build_dir / "notebooks" / path.name
            write_atomically(target, path.read_bytes())
            written.append(target)
    return written
