"""Every lesson's deck, reveal.js beside them, and an index page linking them."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from jaxtour.slides import _pdf, _schedule
from jaxtour.slides._deck import REVEAL_FOLDER, Deck, render_deck
from jaxtour.slides._plan import SlidesError

ASSETS_VARIABLE = "JAXTOUR_SLIDES_ASSETS"
MANIFEST = "decks.json"


def assets_dir(assets: str | os.PathLike | None = None) -> Path:
    """The folder holding ``templates/`` and ``vendor/reveal.js/``.

    Looks at `assets`, then ``$JAXTOUR_SLIDES_ASSETS``, then the package's own copy
    (``jaxtour/slides/assets``, package data read with `importlib.resources`), so decks
    build from any folder after a ``pip install``.

    Raises:
        SlidesError: the folder asked for does not hold the templates and reveal.js, or
            jaxtour is installed where its files are no folder (a zip).
    """
    asked = assets or os.environ.get(ASSETS_VARIABLE)
    folder = Path(asked) if asked else _packaged()
    if (folder / "templates" / "deck.html.j2").is_file() and _reveal(folder).is_dir():
        return folder
    where = "" if asked else " (jaxtour's package data: reinstall jaxtour)"
    raise SlidesError(
        f"No slide assets (templates/deck.html.j2 and vendor/reveal.js/) in {folder}{where}. "
        f"Pass --assets DIR (or set {ASSETS_VARIABLE}) to a folder holding both, or leave "
        "both out to use the copy inside jaxtour."
    )


def _packaged() -> Path:
    from importlib.resources import files

    packaged = files("jaxtour.slides") / "assets"
    if not isinstance(packaged, Path):
        raise SlidesError(
            f"jaxtour's slide assets are inside {packaged}, not a folder: install jaxtour "
            "unzipped (pip install jaxtour), or pass --assets DIR."
        )
    return packaged


def build_slides(
    notebooks: Iterable[str | os.PathLike],
    out_dir: str | os.PathLike,
    assets: str | os.PathLike | None = None,
    handouts: bool = False,
    instructor: bool = False,
) -> list[Deck]:
    """Write one reveal.js deck per lesson, reveal.js itself, an index and a manifest.

    Args:
        notebooks: lessons, in order: executed ``.ipynb`` files (what `jaxtour tour`
            writes to ``build/notebooks``) or their sources.
        out_dir: the slides folder, e.g. ``build/slides``.
        assets: the folder of templates and reveal.js (default: see `assets_dir`).
        handouts: also print each deck to a PDF beside it (``NN_topic.pdf``, one page per
            slide) with the system Chromium (`jaxtour.slides._pdf.write_handouts`).
        instructor: the instructor's build, whose index links every notebook beside the
            slides, solutions included; else the students' build, whose index links only
            the student notebooks (see `notebook_links`).

    Returns:
        The decks written, in lesson order. ``out_dir/index.html`` links them (and their
        handouts and exercises) and ``out_dir/decks.json`` lists their names, titles and
        slide counts; both keep the decks an earlier build listed whose files are still
        in `out_dir` (rebuilding one deck leaves the others in the index).

    Raises:
        SlidesError: no lessons were given, two have one name (so one deck), one
            cannot become an offline deck, or handouts were asked for and there is no
            Chromium (the message says what to install): each found before anything is
            written; or the browser failed to print a handout.

    Example:
        >>> import tempfile, nbformat
        >>> scratch = tempfile.TemporaryDirectory()
        >>> folder = Path(scratch.name)
        >>> cells = [nbformat.v4.new_markdown_cell("# 01 · Demo"),
        ...          nbformat.v4.new_code_cell("1")]
        >>> nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / "01_demo.ipynb")
        >>> [deck] = build_slides([folder / "01_demo.ipynb"], folder / "slides")
        >>> deck.name, deck.title, deck.slides, deck.path.name
        ('01_demo', '01 · Demo', 1, '01_demo.html')
        >>> sorted(p.name for p in (folder / "slides").iterdir())
        ['01_demo.html', 'decks.json', 'index.html', 'reveal.js']
        >>> scratch.cleanup()
    """
    from jaxtour._files import write_atomically

    lessons = [Path(n) for n in notebooks]
    if not lessons:
        raise SlidesError(
            "No lessons to make slides from: give at least one .ipynb or .py."
        )
    _refuse_one_name_twice(lessons)
    chromium = _chromium_or_refuse() if handouts else None
    folder = assets_dir(assets)
    out_dir = Path(out_dir)
    # Every deck is made before anything is written: a lesson that cannot become one
    # leaves no reveal.js, no deck and no folder behind.
    rendered = [render_deck(n, out_dir, folder / "templates") for n in lessons]
    copy_reveal(folder, out_dir)
    for deck, html in rendered:
        write_atomically(deck.path, html)
    decks = [deck for deck, _ in rendered]
    if chromium:
        pdfs = _pdf.write_handouts(decks, chromium)
        decks = [
            dataclasses.replace(d, handout=pdf)
            for d, pdf in zip(decks, pdfs, strict=True)
        ]
    listed = decks + built_before(out_dir, {d.name for d in decks})
    if len(listed) > len(decks):
        listed.sort(key=lambda d: d.name)  # lesson order: NN_topic
    write_index(
        listed,
        out_dir,
        folder / "templates",
        registered_exercises([d.name for d in listed]),
        instructor,
    )
    return decks


def built_before(out_dir: Path, names: set[str]) -> list[Deck]:
    """The decks ``out_dir/decks.json`` lists, bar `names`, whose HTML is still there.

    An unreadable or foreign manifest lists none: the index then lists the decks just
    built.
    """
    try:
        entries = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        kept = [_deck_of(e, out_dir) for e in entries if e["name"] not in names]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return []
    return [d for d in kept if d.path.is_file()]


def _deck_of(entry: dict, out_dir: Path) -> Deck:
    """A `Deck` again from its `write_index` manifest entry."""
    handout = out_dir / entry["handout"] if entry.get("handout") else None
    return Deck(
        name=str(entry["name"]),
        title=str(entry["title"]),
        path=out_dir / Path(entry["file"]).name,
        slides=int(entry["slides"]),
        executed=bool(entry["executed"]),
        minutes=entry.get("minutes"),
        exercises=tuple(entry.get("exercises", ())),
        handout=handout if handout is not None and handout.is_file() else None,
        exercise_minutes=int(entry.get("exercise_minutes", 0)),
    )


def registered_exercises(names: Iterable[str]) -> dict[str, list[str]]:
    """Exercise titles by deck name, from `jaxtour.exercises`' registry.

    A lesson the registry knows no exercise of is left out (its index entry then lists
    the lesson's own ``exercise`` cells).
    """
    from jaxtour.exercises import for_lesson

    listing = {
        name: [ex.title.replace("`", "") for ex in for_lesson(name)] for name in names
    }
    return {name: titles for name, titles in listing.items() if titles}


def _refuse_one_name_twice(lessons: list[Path]) -> None:
    # A deck is named after its lesson's stem: a second lesson of that name would
    # overwrite the first's deck and be listed twice in the index.
    first: dict[str, Path] = {}
    for lesson in lessons:
        if lesson.stem in first:
            raise SlidesError(
                f"{first[lesson.stem]} and {lesson} would both make the deck "
                f"{lesson.stem}.html: give only one of them, or rename one."
            )
        first[lesson.stem] = lesson


def _chromium_or_refuse() -> str:
    # Before anything is written: no Chromium means no handouts, and nothing half-made.
    chromium = _pdf.find_chromium()
    if chromium is None:
        raise SlidesError(_pdf.INSTALL)
    return chromium


def copy_reveal(assets: Path, out_dir: Path) -> Path:
    """Copy the vendored reveal.js to ``out_dir/reveal.js`` (decks link it relatively).

    Each file is copied whole or not at all, and a symlink there is replaced, never
    written through (`jaxtour._files.copy_tree`).
    """
    from jaxtour._files import copy_tree

    target = out_dir / REVEAL_FOLDER
    copy_tree(_reveal(assets), target)
    return target


def write_index(
    decks: list[Deck],
    out_dir: Path,
    templates: Path,
    exercises: Mapping[str, Sequence[str]] | None = None,
    instructor: bool = False,
) -> Path:
    """Write ``index.html`` (a page linking every deck) and ``decks.json`` beside it.

    Args:
        decks: the decks, in lesson order.
        out_dir: the slides folder.
        templates: the folder holding ``index.html.j2``.
        exercises: exercise titles by deck name, to list instead of the ones the lessons'
            ``exercise`` cells name (`Deck.exercises`); the hook for a registry of
            exercises kept elsewhere.
        instructor: link the notebooks that hold solutions too (`notebook_links`).
    """
    import jinja2

    from jaxtour._files import write_atomically
    from jaxtour._version import __version__

    if exercises is not None:
        decks = [
            dataclasses.replace(d, exercises=tuple(exercises.get(d.name, d.exercises)))
            for d in decks
        ]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(templates), autoescape=True)
    slots = _schedule.schedule(decks)
    page = env.get_template("index.html.j2").render(
        decks=decks,
        by_name={d.name: d for d in decks},
        slots=slots,
        day=_schedule.total(slots),
        notebooks={d.name: notebook_links(out_dir, d.name, instructor) for d in decks},
        version=__version__,
    )
    index = out_dir / "index.html"
    write_atomically(index, page.encode())
    manifest = [
        {
            "name": d.name,
            "title": d.title,
            "file": d.path.name,
            "slides": d.slides,
            "executed": d.executed,
            "minutes": d.minutes,
            "exercise_minutes": d.exercise_minutes,
            "exercises": list(d.exercises),
            "handout": d.handout.name if d.handout else None,
        }
        for d in decks
    ]
    write_atomically(out_dir / MANIFEST, json.dumps(manifest, indent=2).encode())
    return index


#: The notebooks the index links beside each deck: (label, folder beside the slides').
NOTEBOOKS = (
    ("student", "student"),  # stubs and hints, no solutions
    ("instructor", "instructor"),  # every cell, solutions included
    ("executed", "notebooks"),  # run by the tour, with outputs (and solutions)
)
#: The only notebooks a students' build links: none of them holds a solution.
STUDENT_NOTEBOOKS = ("student",)


def notebook_links(
    out_dir: Path, name: str, instructor: bool = False
) -> list[tuple[str, str]]:
    """(label, relative link) of each notebook of lesson `name` that sits beside the
    slides folder (``build/student/``, ``build/instructor/``, ``build/notebooks/``):
    every one in the instructor's build, only the student notebook in a students'
    build (the others hold the solutions)."""
    return [
        (label, f"../{folder}/{name}.ipynb")
        for label, folder in NOTEBOOKS
        if (instructor or label in STUDENT_NOTEBOOKS)
        and (out_dir.parent / folder / f"{name}.ipynb").is_file()
    ]


def _reveal(assets: Path) -> Path:
    return assets / "vendor" / REVEAL_FOLDER
