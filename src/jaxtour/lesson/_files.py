"""Lessons as files: finding the sources, writing their views as .ipynb, copying them out.

A lesson's source is ``NN_topic.py`` (py:percent); everything else is made from it. A
checkout reads ``notebooks/``; a wheel holds the same files under ``jaxtour/lessons/``
(``setup.py`` copies them), for users who never cloned the repository.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import os
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from jaxtour._files import write_atomically
from jaxtour.lesson._views import View, view

LESSON_GLOB = "[0-9][0-9]_*.py"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"
_CHECKOUT = Path(__file__).resolve().parents[3] / "notebooks"


def packaged_lessons_dir() -> Path:
    """The folder holding the lessons that came with this jaxtour.

    Raises:
        FileNotFoundError: neither the installed package nor a checkout holds lessons.
    """
    from importlib import resources

    installed = Path(str(resources.files("jaxtour") / "lessons"))
    for folder in (installed, _CHECKOUT):
        if any(folder.glob(LESSON_GLOB)):
            return folder
    raise FileNotFoundError(
        f"This jaxtour has no lessons (looked in {installed} and {_CHECKOUT}). Reinstall it "
        'with pip install "jaxtour[notebook]", or pass the folder of a clone: --notebooks DIR.'
    )


def checkout_lessons() -> Path | None:
    """./notebooks when it holds lesson sources `NN_topic.py` (a checkout), else None.

    A ./notebooks of the user's own (their analyses, no lesson) is not a checkout: it
    must not hide the lessons that came with jaxtour.
    """
    here = Path("notebooks")
    return here if here.is_dir() and any(here.glob(LESSON_GLOB)) else None


def find_lessons(folder: str | os.PathLike | None = None) -> list[Path]:
    """The lesson sources `NN_topic.py` in `folder`, in lesson order.

    With no `folder`: ./notebooks when it holds lessons (a checkout), else the lessons
    that came with jaxtour.

    Raises:
        FileNotFoundError: `folder` is not a folder.
    """
    if folder is None:
        folder = checkout_lessons() or packaged_lessons_dir()
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"No lessons folder at {folder.resolve()}: pass --notebooks DIR (a folder of "
            "NN_topic.py lessons), or leave it out to use the lessons that came with jaxtour."
        )
    return sorted(folder.glob(LESSON_GLOB))


def read(source: Path) -> Any:
    """The lesson `source` (py:percent) as an nbformat notebook, every cell in it.

    Each call returns a notebook of its own; a text read before is not parsed again.
    """
    source = Path(source)
    notebook = copy.deepcopy(_parse(source.read_text(encoding="utf-8"), source.suffix))
    return stable_ids(notebook, source.stem)


@functools.lru_cache(maxsize=32)
def _parse(text: str, extension: str) -> Any:
    """jupytext's parse of a lesson's text (a tenth of a second each: a test run and the
    tour read each lesson several times)."""
    import jupytext

    return jupytext.reads(text, fmt={"extension": extension})


def notebook_text(source: Path, which: View = View.STUDENT) -> str:
    """The .ipynb text of lesson `source` as `which` shows it, outputs empty.

    The committed ``notebooks/NN_topic.ipynb`` (what Colab and Binder open) is
    ``notebook_text(source)``: the student view.
    """
    import jupytext

    shown = stable_ids(view(read(source), which), source.stem)
    return jupytext.writes(shown, fmt="ipynb")


def stable_ids(notebook: Any, name: str) -> Any:
    """`notebook` with each cell's id made from `name`, the cell's place and its source
    (8 hex digits, unique within it), so the same cells always get the same ids:
    nbformat and jupytext draw random ones, and a file written twice must not differ.

    Example:
        >>> from nbformat.v4 import new_code_cell, new_notebook
        >>> nb = new_notebook(cells=[new_code_cell("x = 1"), new_code_cell("x = 1")])
        >>> ids = [c.id for c in stable_ids(nb, "01_why_jax").cells]
        >>> ids == [c.id for c in stable_ids(nb, "01_why_jax").cells], len(set(ids))
        (True, 2)
    """
    taken: set[str] = set()
    for index, cell in enumerate(notebook.cells):
        digest = hashlib.sha256(f"{name}:{index}:{cell.source}".encode()).hexdigest()
        cell_id = digest[:8]
        if cell_id in taken:  # 8 hex digits of two cells alike: keep both apart
            cell_id = f"{digest[:8]}-{index}"
        taken.add(cell_id)
        cell["id"] = cell_id
    return notebook


def write_view(sources: list[Path], folder: Path, which: View) -> list[Path]:
    """Write each lesson of `sources` as `folder`/NN_topic.ipynb in view `which`."""
    written = []
    for source in sources:
        path = folder / f"{source.stem}.ipynb"
        write_atomically(path, notebook_text(source, which).encode())
        written.append(path)
    return written


def write_student_notebooks(folder: str | os.PathLike = "notebooks") -> list[Path]:
    """Write each lesson's committed ``NN_topic.ipynb`` beside its source: the student
    view, what Colab, Binder and ``jaxtour lessons`` hand out (``make notebooks``)."""
    sources = find_lessons(folder)
    return write_view(sources, Path(folder), View.STUDENT)


def write_notebooks(sources: list[Path], build_dir: Path) -> list[Path]:
    """Write build/instructor/NN_topic.ipynb (every cell) and build/student/ (no answers)."""
    return [
        path
        for which in (View.INSTRUCTOR, View.STUDENT)
        for path in write_view(sources, build_dir / which.value, which)
    ]


def lesson_files(which: View = View.STUDENT) -> dict[str, bytes]:
    """What `copy_lessons` writes for `which`: each file's name and bytes.

    Students get ``NN_topic.ipynb`` only (no source: it holds the solutions): the
    packaged notebooks are the student view already (the tests hold them to it), so
    they are taken as they are, which needs no jupytext. Instructors get the instructor
    notebooks and the ``NN_topic.py`` sources (``jaxtour tour --notebooks DIR`` builds
    from those).
    """
    sources = find_lessons(packaged_lessons_dir())
    packaged = [s.with_suffix(".ipynb") for s in sources]
    if which is View.STUDENT and all(p.is_file() for p in packaged):
        return {p.name: p.read_bytes() for p in packaged}
    files = {f"{s.stem}.ipynb": notebook_text(s, which).encode() for s in sources}
    if which is View.INSTRUCTOR:
        files |= {s.name: s.read_bytes() for s in sources}
    return files


def copy_lessons(dest: Path, which: View = View.STUDENT) -> list[Path]:
    """Write the packaged lessons into `dest` as `which` shows them; the files written.

    Each file is written whole or not at all; a file or symlink already in `dest` is
    replaced (never written through).
    """
    written = []
    for name, data in sorted(lesson_files(which).items()):
        write_atomically(dest / name, data)
        written.append(dest / name)
    return written


def copy_sources(dest: Path) -> list[Path]:
    """Copy the packaged lesson sources ``NN_topic.py`` into `dest` (for the tour to run)."""
    written = []
    for source in find_lessons(packaged_lessons_dir()):
        write_atomically(dest / source.name, source.read_bytes())
        written.append(dest / source.name)
    return written


def local_pictures(source: Path) -> list[Path]:
    """The files in `source`'s folder that its markdown cells show, relative to it: what
    must sit beside an executed copy of the lesson for its deck and page to show them.
    A remote or absolute address, or a path out of the folder, is not one of them.

    Each is the address as written (a link in the folder stays a link's name), found as
    the deck builder finds it: in the cell's markdown rendered by nbconvert, so a
    reference-style picture and an unquoted ``<img src=..>`` are among them."""
    folder = Path(source).parent.resolve()
    found: dict[Path, None] = {}
    for cell in read(source).cells:
        if cell.cell_type != "markdown":
            continue
        for url in _picture_addresses(str(cell.source)):
            url = url.split("#")[0].split("?")[0]
            if not url or ":" in url or url.startswith(("/", "\\")):
                continue  # remote, data:, or absolute
            if Path(os.path.normpath(url)).parts[0] == "..":
                continue  # out of the folder as written
            path = folder / url
            if path.is_file() and path.resolve().is_relative_to(folder):
                found[Path(url)] = None
    return list(found)


def _picture_addresses(markdown: str) -> list[str]:
    """The ``src`` of each ``<img>`` in `markdown` rendered as nbconvert renders it."""
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    finder = _ImageSources()
    finder.feed(markdown2html_mistune(markdown))
    return finder.sources


class _ImageSources(HTMLParser):
    """Collects the ``src`` of each ``<img>`` fed to it, in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sources: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        src = dict(attrs).get("src") if tag == "img" else None
        if src:
            self.sources.append(src.strip())
