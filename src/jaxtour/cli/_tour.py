"""`jaxtour tour`: the main job. Each step writes under build/ and says what it wrote."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

from jaxtour import paths
from jaxtour._files import make_folder
from jaxtour.cli import add_build_dir, add_flag

# Steps run in this order; `bound_steps` gives each the values it needs, and `OPEN` says
# where to see what it wrote. Later features add their step to all three (tests check).
STEPS: tuple[str, ...] = (
    "diagrams",
    "train",
    "compare",
    "notebooks",
    "exercises",
    "slides",
)
# What to open of what each step wrote (a path in the build folder), and what it is; the
# first here is where to start. A run's closing lines name the steps it ran only.
OPEN: dict[str, tuple[str, str]] = {
    "slides": ("slides/index.html", "the decks, in a browser"),
    "notebooks": (
        "notebooks",
        "the executed lessons: .html in a browser, .ipynb in Jupyter",
    ),
    "exercises": ("student", "the student notebooks (instructor/: with solutions)"),
    "diagrams": ("diagrams", "the diagrams: .svg files, in a browser"),
    "train": ("mlp/learning_curve.png", "the learning curve"),
    "compare": ("mlp/ladder.png", "the speed ladder: NumPy to jit"),
}


def bound_steps(
    build_dir: Path, notebooks: Path | None
) -> dict[str, Callable[[], list[Path]]]:
    """Each step by name, called with what it needs; each returns the paths it wrote."""
    from jaxtour.cli import _compare, _exercises, _slides, _tour_steps, _train

    return {
        "diagrams": lambda: _tour_steps.render_diagrams(build_dir),
        "train": lambda: _train.tour_step(build_dir),
        "compare": lambda: _compare.tour_step(build_dir),
        "notebooks": lambda: _tour_steps.execute_notebooks(build_dir, notebooks),
        "exercises": lambda: _exercises.tour_step(build_dir, notebooks),
        "slides": lambda: _slides.tour_step(build_dir),
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_build_dir(parser)
    parser.add_argument(
        "--notebooks",
        type=Path,
        help="folder of lesson sources NN_topic.py (default: ./notebooks when it "
        "holds lessons, else the lessons that came with jaxtour)",
    )
    parser.add_argument(
        "--only",
        choices=STEPS,
        action="append",
        help="run only this step (repeatable)",
    )
    add_flag(parser, "--quick", "shrink data and epochs, as JAXTOUR_QUICK=1 does")


def run(args: argparse.Namespace) -> int:
    if args.quick:
        os.environ[paths.QUICK_VARIABLE] = "1"
    build_dir = args.build_dir or paths.build_dir()
    make_folder(build_dir)  # a file in the way is named before any step
    steps = [name for name in STEPS if not args.only or name in args.only]
    written: list[Path] = []
    built: list[str] = []  # the steps that wrote something
    start = time.perf_counter()
    _require_extras(steps)
    _require_lessons(steps, args.notebooks)
    bound = bound_steps(build_dir, args.notebooks)
    for index, name in enumerate(steps, 1):
        print(f"[{index}/{len(steps)}] {name} ...", flush=True)
        step_start = time.perf_counter()
        try:
            step_paths = bound[name]()
        except BaseException:
            if written:  # what is already there stays usable: say what it is
                print(
                    f"\nThe {name} step failed; the tour had written {len(written)} files:"
                )
                _list(written)
            raise
        written += step_paths
        built += [name] if step_paths else []
        print(
            f"[{index}/{len(steps)}] {name}: {len(step_paths)} files "
            f"in {time.perf_counter() - step_start:.1f} s",
            flush=True,
        )
    _summarise(written, time.perf_counter() - start)
    _say_what_to_open(built, build_dir)
    return 0


def _require_extras(step_names: list[str]) -> None:
    """Refuse, before any step runs, a tour whose later steps could not run."""
    from jaxtour.cli import _extras

    if "notebooks" in step_names:
        _extras.require(
            "jaxtour tour (executing the lessons)",
            _extras.NOTEBOOK_TOOLS + _extras.LESSON_IMPORTS,
        )
    if "exercises" in step_names:
        _extras.require(
            "jaxtour tour (the student notebooks)", ("jupytext", "nbformat")
        )
    if "slides" in step_names:
        _extras.require("jaxtour tour (building the decks)", _extras.DECK_TOOLS)


def _require_lessons(step_names: list[str], notebooks: Path | None) -> None:
    """Refuse, before any step runs, a `--notebooks` folder holding no lessons: the
    steps reading it come after training and timing (minutes of work)."""
    from jaxtour import lesson

    if notebooks is None or not {"notebooks", "exercises"} & set(step_names):
        return
    if not lesson.find_lessons(notebooks):  # FileNotFoundError where there is no folder
        raise FileNotFoundError(
            f"No lessons in {notebooks}: --notebooks takes a folder of lesson sources "
            f"named NN_topic.py ({lesson.LESSON_GLOB}), such as a clone's notebooks/ or "
            "what `jaxtour lessons --instructor DIR` writes. Leave it out to use the "
            "lessons that came with jaxtour."
        )


def _list(written: list[Path]) -> None:
    for path in written:
        print(f"  {path}", flush=True)


def _summarise(written: list[Path], seconds: float) -> None:
    print(f"\nThe tour wrote {len(written)} files in {seconds:.0f} s:")
    _list(written)


def _say_what_to_open(built: list[str], build_dir: Path) -> None:
    """Where to look at what this run built: the `OPEN` entry of each step it ran."""
    lines = [OPEN[name] for name in OPEN if name in built]
    if lines:
        print("\nOpen:")
    for where, what in lines:
        print(f"  {(build_dir / where).resolve()}  {what}")
