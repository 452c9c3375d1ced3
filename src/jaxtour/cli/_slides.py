"""`jaxtour slides`: every lesson as a reveal.js deck that works offline (build/slides/)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxtour import paths
from jaxtour.cli import add_build_dir, add_flag
from jaxtour.lesson import NOTEBOOK_GLOB

EXECUTED_GLOB = NOTEBOOK_GLOB
LESSON_SUFFIXES = (".ipynb", ".py")  # what jaxtour.slides.read_notebook reads


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "lessons",
        nargs="*",
        type=lesson_path,
        metavar="LESSON",
        help="notebooks to make decks of (default: the executed lessons in "
        "BUILD/notebooks, else the sources in ./notebooks, else the lessons that came "
        "with jaxtour)",
    )
    add_build_dir(parser)
    parser.add_argument(
        "--assets",
        type=Path,
        help="templates and vendor/reveal.js (default: the copy inside jaxtour)",
    )
    add_flag(
        parser,
        "--pdf",
        "also print each deck to a PDF handout, one page per slide, "
        "with the system Chromium or Chrome ($JAXTOUR_CHROMIUM)",
    )
    add_flag(
        parser,
        "--instructor",
        "the instructor's build: the index links the instructor's and the executed "
        "notebooks (they hold the solutions) beside the student's; without it, only "
        "the student notebooks",
    )
    add_flag(
        parser,
        "--lint",
        "build nothing: list what each lesson's slides lack (titles, speaker notes, "
        "Your-turn time boxes) or show that they must not (CI code, progress bars); "
        "exit 1 when anything is found",
    )


def lesson_path(text: str) -> Path:
    """An argparse `type=`: a lesson's notebook or py:percent source, by its suffix."""
    path = Path(text)
    if path.suffix not in LESSON_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"must be a lesson's .ipynb or its .py source (none: every lesson's "
            f"deck); got {text!r}"
        )
    return path


def default_lessons(build_dir: Path) -> list[Path]:
    """The tour's executed lessons (BUILD/notebooks); else each source in ./notebooks,
    or outside a checkout each lesson that came with jaxtour (as `jaxtour tour` finds
    them), as the lesson cache last ran it (jaxtour.lesson), or the source itself when
    never run."""
    from jaxtour import lesson

    executed = sorted((build_dir / "notebooks").glob(EXECUTED_GLOB))
    if executed:
        return executed
    cache = lesson.cache_dir(build_dir)
    return [
        getattr(lesson.cached(source, cache=cache), "ipynb", source)
        for source in lesson.find_lessons()
    ]


def run(args: argparse.Namespace) -> int:
    from jaxtour.slides import SlidesError, build_slides

    build_dir = args.build_dir or paths.build_dir()
    if args.lint:
        from jaxtour import lesson

        return _lint(args.lessons or lesson.find_lessons())
    lessons = args.lessons or default_lessons(build_dir)
    if any(lesson.suffix == ".py" for lesson in lessons):
        print(
            "note: some lessons were never executed here; their decks show code without "
            "outputs (run `jaxtour tour` for decks with outputs and diagrams).",
            file=sys.stderr,
        )
    try:
        decks = build_slides(
            lessons,
            build_dir / "slides",
            args.assets,
            handouts=args.pdf,
            instructor=args.instructor,
        )
    except SlidesError as err:
        print(f"jaxtour slides: {err}", file=sys.stderr)
        return 1
    for deck in decks:
        print(f"{deck.path}  {deck.slides:3d} slides  {deck.title}")
        if deck.handout:
            print(f"{deck.handout}  handout, one page per slide")
    print(f"\nOpen {(build_dir / 'slides' / 'index.html').resolve()} in a browser.")
    return 0


def _lint(lessons: list[Path]) -> int:
    from jaxtour.slides import lint_lesson, read_notebook

    found = [
        finding
        for lesson in lessons
        for finding in lint_lesson(read_notebook(lesson), lesson.stem)
    ]
    for finding in found:
        print(finding)
    print(f"{len(found)} findings in {len(lessons)} lessons.")
    return 1 if found else 0


def tour_step(build_dir: Path, assets: Path | None = None) -> list[Path]:
    """The tour's slides step: decks of the lessons the notebooks step executed, and
    their PDF handouts where a Chromium or Chrome is found."""
    from jaxtour.slides import SlidesError, build_slides, find_chromium

    executed = sorted((build_dir / "notebooks").glob(EXECUTED_GLOB))
    if not executed:
        raise SlidesError(
            f"No executed lessons in {build_dir / 'notebooks'}: run the notebooks step first "
            "(`jaxtour tour`, or `jaxtour tour --only notebooks --only slides`)."
        )
    out_dir = build_dir / "slides"
    handouts = find_chromium() is not None
    if not handouts:
        print(
            "note: no Chromium or Chrome found, so no PDF handouts (Debian: apt install "
            "chromium; macOS: Google Chrome; or set JAXTOUR_CHROMIUM).",
            file=sys.stderr,
        )
    try:
        decks = build_slides(executed, out_dir, assets, handouts=handouts)
    except SlidesError as err:
        if not handouts:
            raise
        # Handouts are a bonus of the tour: a browser that fails to print costs the PDFs,
        # not the decks and their index.
        print(f"warning: no PDF handouts: {err}", file=sys.stderr)
        decks = build_slides(executed, out_dir, assets, handouts=False)
    pdfs = [d.handout for d in decks if d.handout]
    return (
        [d.path for d in decks]
        + pdfs
        + [out_dir / "index.html", out_dir / "decks.json"]
    )
