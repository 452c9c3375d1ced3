"""The steps of `jaxtour tour` that need no model: diagrams and notebooks."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tqdm.auto import tqdm

from jaxtour import lesson
from jaxtour._diagram import Diagram
from jaxtour._files import copy_atomically, write_atomically
from jaxtour.autodiff import GALLERY as AUTODIFF_GALLERY
from jaxtour.cli import _ctrl_c
from jaxtour.mlp import GALLERY as MLP_GALLERY
from jaxtour.viz import GALLERY as VIZ_GALLERY

# file stem -> a function returning a Diagram with no arguments: each room's gallery.
DIAGRAMS: dict[str, Callable[[], Diagram]] = {
    **VIZ_GALLERY,
    **MLP_GALLERY,
    **AUTODIFF_GALLERY,
}


def render_diagrams(build_dir: Path) -> list[Path]:
    """Write every registered diagram as build/diagrams/<name>.svg."""
    written = []
    for stem, draw in tqdm(DIAGRAMS.items(), desc="diagrams", unit="svg"):
        diagram = draw()
        written.append(diagram.save(build_dir / "diagrams" / f"{stem}.svg"))
    return written


def lesson_sources(
    notebooks: Path | None, build_dir: Path
) -> tuple[list[Path], list[Path]]:
    """(the lessons to execute, the files written to get them).

    `notebooks` (`--notebooks DIR`), else ./notebooks when it holds lessons (a
    checkout), else the lessons that came with jaxtour, copied to build/lessons/ so
    that they run outside the installed package.
    """
    if notebooks is None and lesson.checkout_lessons() is None:
        copied = lesson.copy_sources(build_dir / "lessons")
        tqdm.write(
            f"  no lessons in ./notebooks here: using the {len(copied)} lessons that came with "
            f"jaxtour (copied to {build_dir / 'lessons'})"
        )
        return copied, list(copied)  # two lists: the caller extends the second
    return lesson.find_lessons(notebooks), []


def execute_notebooks(build_dir: Path, notebooks: Path | None = None) -> list[Path]:
    """Execute every lesson (instructor view) into build/notebooks/ as .ipynb and .html.

    Runs come from the lesson cache (build/executed/, or $JAXTOUR_EXECUTED): a lesson
    whose source, kit, JAX and mode are unchanged since its last run is not run again.
    """
    sources, written = lesson_sources(notebooks, build_dir)
    cache = lesson.cache_dir(build_dir)
    for source in tqdm(sources, desc="notebooks", unit="nb"):
        _ctrl_c.stop_if_pressed()  # a Ctrl-C that nbclient swallowed ends the step here
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
        # the pictures its markdown shows from files beside it, at the same places
        for picture in lesson.local_pictures(source):
            target = build_dir / "notebooks" / picture
            copy_atomically(source.parent / picture, target)
            written.append(target)
    return written
