"""One lesson → one reveal.js deck that works offline: nbconvert's SlidesExporter, our template.

The template (``assets/templates/deck.html.j2``) is nbconvert's ``reveal`` template
without its CDN scripts (jQuery, RequireJS, MathJax, Mermaid, widgets), with reveal.js
loaded from the copy beside the deck. Outputs stay as the notebook holds them, so a
`Diagram` is inline SVG and a Matplotlib figure an inline PNG, and a markdown picture
read from a file beside the lesson is embedded too: a deck needs no network and no
file beside it but reveal.js.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from jaxtour.slides._frame import exercise_titles, lesson_minutes
from jaxtour.slides._lint import exercise_minutes
from jaxtour.slides._place import place_pictures
from jaxtour.slides._plan import SlidesError, count_slides, lesson_title, plan_slides

REVEAL_FOLDER = "reveal.js"
# Where reveal.js draws: a 16:9 slide, scaled to the screen by reveal.js.
SLIDE_WIDTH, SLIDE_HEIGHT = 1280, 720
# [![Open in Colab](https://…/badge.svg)](https://…) → [Open in Colab](https://…): the link
# stays, the badge image (fetched from the web) goes.
_BADGE = re.compile(r"\[!\[([^\]]*)\]\((?:https?:)?//[^)\s]+\)\]\(([^)\s]+)\)")
_FETCHED = {
    "img": ("src",),
    "script": ("src",),
    "iframe": ("src",),
    "source": ("src",),
    "video": ("src",),
    "audio": ("src",),
    "embed": ("src",),
    "link": ("href",),
    "object": ("data",),
    "image": ("href", "xlink:href"),
}
_TEX = re.compile(r"\$[^$\n]*\\[A-Za-z]+[^$\n]*\$")  # $...\command...$
_CSS_URL = re.compile(r"""(?:url\(|@import\s+)\s*['"]?((?:https?:)?//[^'")\s]+)""")


@dataclass(frozen=True)
class Deck:
    """A slide deck written by `build_deck`.

    Attributes:
        name: the lesson's file stem, e.g. ``"01_why_jax"``.
        title: the lesson's first heading.
        path: the deck's HTML file.
        slides: how many slides reveal.js shows (``Reveal.getTotalSlides()``).
        executed: whether the notebook had outputs (an unexecuted one shows code only).
        minutes: the time the lesson's first cell gives (``*About N minutes.*``), or None.
        exercises: the titles of the lesson's exercises (its markdown cells tagged
            ``exercise``), in order.
        handout: the deck's PDF, once `write_handouts` printed it.
        exercise_minutes: the time boxes of its "Your turn" slides, in minutes.
    """

    name: str
    title: str
    path: Path
    slides: int
    executed: bool
    minutes: int | None = None
    exercises: tuple[str, ...] = ()
    handout: Path | None = None
    exercise_minutes: int = 0


def read_notebook(path: str | os.PathLike) -> Any:
    """Read a lesson: an ``.ipynb`` (executed or not) or its py:percent ``.py`` source."""
    path = Path(path)
    if not path.is_file():
        raise SlidesError(
            f"No lesson at {path}"
            + (" (a folder)" if path.is_dir() else "")
            + ": give the path of a lesson's .ipynb (an executed one, such as "
            "build/notebooks/03_how_it_works.ipynb) or its .py source, or give none to "
            "make every lesson's deck."
        )
    if path.suffix == ".py":
        from jaxtour.lesson import read

        return read(path)
    if path.suffix != ".ipynb":
        raise SlidesError(
            f"Cannot make slides from {path.name}: give an .ipynb or a .py lesson."
        )
    try:
        return _read_ipynb(path)
    except _NotANotebook as err:
        raise SlidesError(
            f"Cannot make slides from {path}: it is not a Jupyter notebook ({err}). "
            "Give an .ipynb that Jupyter opens, or the lesson's .py source."
        ) from None


class _NotANotebook(Exception):
    """Why a file that should be a notebook is none, in a few words."""


def _read_ipynb(path: Path) -> Any:
    import nbformat

    try:
        notebook = nbformat.read(path, as_version=4)
    except (ValueError, nbformat.ValidationError) as err:  # no JSON, no nbformat, ...
        raise _NotANotebook(str(err).splitlines()[0]) from None
    except (TypeError, AttributeError):  # JSON, but no object: nbformat's own fault
        raise _NotANotebook("no JSON object holding cells") from None
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(
        isinstance(c, dict) and "cell_type" in c for c in cells
    ):
        raise _NotANotebook("its cells are no list of cells")
    return notebook


def build_deck(
    source: str | os.PathLike, out_dir: str | os.PathLike, templates: Path
) -> Deck:
    """Write ``out_dir/<name>.html``, the deck of lesson `source`.

    Args:
        source: an executed ``.ipynb`` (the tour's ``build/notebooks``), or a lesson.
        out_dir: the slides folder; reveal.js must be (or be put) in ``out_dir/reveal.js``.
        templates: the folder holding ``deck.html.j2`` (``jaxtour/slides/assets/templates``).

    Returns:
        The `Deck` written.

    Raises:
        SlidesError: the lesson cannot become slides, or its deck would fetch something
            from the network or show a file it cannot embed; nothing is written then.
    """
    from jaxtour._files import write_atomically

    deck, html = render_deck(source, out_dir, templates)
    write_atomically(deck.path, html)
    return deck


def render_deck(
    source: str | os.PathLike, out_dir: str | os.PathLike, templates: Path
) -> tuple[Deck, bytes]:
    """As `build_deck`, but write nothing: the `Deck` and the HTML to write at its path.

    `build_slides` renders every lesson first, so that a lesson that cannot become a
    deck stops the build before any file is written.
    """
    source = Path(source)
    notebook = read_notebook(source)
    planned = plan_slides(notebook, source.name)
    title = lesson_title(notebook, source.stem)
    planned.metadata["title"] = (
        f"{title} · jaxtour"  # the tab: "<title> · jaxtour slides"
    )
    for cell in planned.cells:
        if cell.cell_type == "markdown":
            cell.source = unbadge(cell.source)
    _warn_about_tex(planned, source.name)
    place_pictures(planned)
    # a picture the lesson's markdown shows from a file beside it is embedded (the
    # deck lands elsewhere, in the slides folder); one that is not there is refused
    resources = {"metadata": {"path": str(source.parent)}}
    html = _exporter(templates).from_notebook_node(planned, resources)[0]
    remote = remote_resources(html)
    if remote:
        raise SlidesError(
            f"The deck of {source.name} would fetch {', '.join(sorted(remote))} from the "
            "network, and decks must work offline. Make it a cell's output or a cell "
            "attachment (both are embedded in the deck), or remove it from the lesson."
        )
    missing = _missing_files(html)
    if missing:
        raise SlidesError(
            f"The deck of {source.name} would show {', '.join(sorted(missing))} from a "
            "file beside it, which the slides folder does not hold: the slide would show "
            "it broken. A deck embeds a markdown cell's picture (![..](path) or <img>) "
            f"found at its path relative to the lesson (in {source.parent}): put it "
            "there, or make it a cell attachment or an image output."
        )
    executed = any(c.get("outputs") for c in notebook.cells if c.cell_type == "code")
    deck = Deck(
        source.stem,
        title,
        Path(out_dir) / f"{source.stem}.html",
        count_slides(planned),
        executed,
        lesson_minutes(notebook),
        exercise_titles(notebook),
        exercise_minutes=exercise_minutes(notebook),
    )
    return deck, html.encode()


def _warn_about_tex(planned: Any, name: str) -> None:
    # MathJax would come from a CDN, so an offline deck shows TeX as typed.
    found = [
        m
        for c in planned.cells
        if c.cell_type == "markdown"
        for m in _TEX.findall(c.source)
    ]
    if found:
        warnings.warn(
            f"{name}: the deck shows TeX as typed ({found[0]}): offline decks have no "
            "MathJax. Write the maths in Unicode or as code (ln 10 ≈ 2.30).",
            stacklevel=3,
        )


def unbadge(markdown: str) -> str:
    """Replace linked badge images by their text: ``[![alt](img)](url)`` → ``[alt](url)``.

    Example:
        >>> unbadge("[![Open in Colab](https://x.org/badge.svg)](https://y.org/nb)")
        '[Open in Colab](https://y.org/nb)'
    """
    return _BADGE.sub(r"[\1](\2)", markdown)


def remote_resources(html: str) -> set[str]:
    """The URLs a browser would fetch from the network to show `html` (links not counted).

    Example:
        >>> sorted(remote_resources('<a href="https://a.org">a</a><img src="https://b.org/i.png">'
        ...                         '<script src="reveal.js/dist/reveal.js"></script>'))
        ['https://b.org/i.png']
    """
    finder = _RemoteFinder()
    finder.feed(html)
    return finder.remote


def _missing_files(html: str) -> set[str]:
    """The files beside the deck a browser would fetch to show `html`, other than
    reveal.js: what the exporter could not embed (`embed_images`) was not found."""
    finder = _RemoteFinder()
    finder.feed(html)
    return {
        url
        for url in finder.local
        if not url.startswith(f"{REVEAL_FOLDER}/")
        and not url.lower().startswith(("data:", "#", "blob:", "about:"))
    }


def _is_remote(url: str) -> bool:
    return url.strip().lower().startswith(("http:", "https:", "//"))


class _RemoteFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.remote: set[str] = set()
        self.local: set[str] = set()  # fetched from beside the page
        self._in_style = False

    def handle_starttag(self, tag: Any, attrs: Any) -> None:
        attrs = dict(attrs)
        urls = [(attrs.get(name) or "").strip() for name in _FETCHED.get(tag, ())]
        self.remote.update(url for url in urls if _is_remote(url))
        self.local.update(url for url in urls if url and not _is_remote(url))
        if "style" in attrs:
            self.remote.update(_CSS_URL.findall(attrs["style"] or ""))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: Any) -> None:
        self._in_style = False

    def handle_data(self, data: Any) -> None:
        if self._in_style:
            self.remote.update(_CSS_URL.findall(data))


@functools.cache
def _exporter(templates: Path) -> Any:
    """The deck exporter for the templates in `templates`, made once a process: its Jinja
    environment keeps the templates it compiled (13 a deck: compiling them for each deck
    again was about a seventh of building the ten lessons' decks). Jinja reloads a
    template whose file changed."""
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_input_tags = {"hide-input", "remove-input"}
    config.TagRemovePreprocessor.remove_all_outputs_tags = {
        "hide-output",
        "remove-output",
    }
    exporter = SlidesExporter(
        config=config,
        extra_template_paths=[str(templates)],
        template_file="deck.html.j2",
        reveal_url_prefix=REVEAL_FOLDER,
        reveal_theme="white",
        reveal_transition="none",
        reveal_number="c/t",
        reveal_width=str(SLIDE_WIDTH),
        reveal_height=str(SLIDE_HEIGHT),
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        exclude_anchor_links=True,
        embed_images=True,
    )
    exporter.register_filter("inline_svg", inline_svg)
    return exporter


def inline_svg(svg: str) -> str:
    """SVG text ready to sit inside HTML: from ``<svg`` on, without the XML prolog.

    Example:
        >>> inline_svg('<?xml version="1.0"?>\\n<!DOCTYPE svg>\\n<svg width="1pt"></svg>\\n')
        '<svg width="1pt"></svg>'
    """
    start = svg.find("<svg")
    if start < 0:
        raise SlidesError(
            "An image/svg+xml output holds no <svg> element; re-run the lesson."
        )
    return svg[start:].strip()
