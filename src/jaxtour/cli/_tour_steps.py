"""The steps of `jaxtour tour` that need no model: diagrams and notebooks."""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path

from tqdm.auto import tqdm

from jaxtour import lesson
from jaxtour._files import write_atomically

# file stem -> "module:function" returning a Diagram with no arguments.
DIAGRAMS: dict[str, str] = {
    "pipeline_step1": "jaxtour.viz._gallery:pipeline_step1",
    "pipeline_step2": "jaxtour.viz._gallery:pipeline_step2",
    "pipeline_step3": "jaxtour.viz._gallery:pipeline_step3",
    "autodiff_landscape": "jaxtour.viz._gallery:autodiff_landscape",
    "ai_stack": "jaxtour.viz._gallery:ai_stack",
    "mlp_pipeline": "jaxtour.viz._gallery:mlp_pipeline",
    "mlp_jaxpr": "jaxtour.viz._gallery:mlp_jaxpr",
    "mlp_hlo": "jaxtour.viz._gallery:mlp_hlo",
    "grad_cubic": "jaxtour.autodiff._gallery:grad_cubic",
    "jvp_sin_times_x": "jaxtour.autodiff._gallery:jvp_sin_times_x",
    "grad_small_mlp": "jaxtour.autodiff._gallery:grad_small_mlp",
}


def render_diagrams(args: argparse.Namespace, build_dir: Path) -> list[Path]:
    """Write every registered diagram as build/diagrams/<name>.svg."""
    written = []
    for stem, target in tqdm(DIAGRAMS.items(), desc="diagrams", unit="svg"):
        module, _, name = target.partition(":")
        diagram = getattr(importlib.import_module(module), name)()
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
