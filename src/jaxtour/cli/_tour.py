"""`jaxtour tour`: the main job. Each step writes under build/ and says what it wrote."""

from __future__ import annotations

import argparse
import importlib
import os
import time
from pathlib import Path

from jaxtour import paths
from jaxtour.cli import add_flag

# Steps run in this order; each is "module:function" taking (args, build_dir) and
# returning the paths it wrote. Later features add their step here.
STEPS: list[tuple[str, str]] = [
    ("diagrams", "jaxtour.cli._tour_steps:render_diagrams"),
    ("train", "jaxtour.cli._train:tour_step"),
    ("compare", "jaxtour.cli._compare:tour_step"),
    ("notebooks", "jaxtour.cli._tour_steps:execute_notebooks"),
    ("exercises", "jaxtour.cli._exercises:tour_step"),
    ("slides", "jaxtour.cli._slides:tour_step"),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--build-dir", type=Path, help="output folder (default: ./build)"
    )
    parser.add_argument(
        "--notebooks",
        type=Path,
        help="folder of lesson sources NN_topic.py (default: ./notebooks, "
        "else the lessons that came with jaxtour)",
    )
    parser.add_argument(
        "--only",
        choices=[name for name, _ in STEPS],
        action="append",
        help="run only this step (repeatable)",
    )
    add_flag(parser, "--quick", "shrink data and epochs, as JAXTOUR_QUICK=1 does")


def _load(target: str):
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def run(args: argparse.Namespace) -> int:
    if args.quick:
        os.environ[paths.QUICK_VARIABLE] = "1"
    build_dir = args.build_dir or paths.build_dir()
    build_dir.mkdir(parents=True, exist_ok=True)
    steps = [(n, t) for n, t in STEPS if not args.only or n in args.only]
    written: list[Path] = []
    start = time.perf_counter()
    _require_extras([name for name, _ in steps])
    for index, (name, target) in enumerate(steps, 1):
        print(f"[{index}/{len(steps)}] {name} ...", flush=True)
        step_start = time.perf_counter()
        try:
            step_paths = _load(target)(args, build_dir)
        except BaseException:
            if written:  # what is already there stays usable: say what it is
                print(
                    f"\nThe {name} step failed; the tour had written {len(written)} files:"
                )
                _list(written)
            raise
        written += step_paths
        print(
            f"[{index}/{len(steps)}] {name}: {len(step_paths)} files "
            f"in {time.perf_counter() - step_start:.1f} s",
            flush=True,
        )
    _summarise(written, build_dir, time.perf_counter() - start)
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


def _list(written: list[Path]) -> None:
    for path in written:
        print(f"  {path}", flush=True)


def _summarise(written: list[Path], build_dir: Path, seconds: float) -> None:
    print(f"\nThe tour wrote {len(written)} files in {seconds:.0f} s:")
    _list(written)
    index = build_dir / "slides" / "index.html"
    start_here = index if index.exists() else build_dir / "notebooks"
    print(
        f"\nOpen {start_here.resolve()} in a browser, or the .ipynb files in Jupyter."
    )
