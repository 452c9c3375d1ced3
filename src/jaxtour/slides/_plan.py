"""Which cells become slides: `slideshow` metadata (as RISE uses it), tags, or headings.

A lesson chooses its slides the way RISE and `jupyter nbconvert --to slides` read them:
each cell's ``metadata.slideshow.slide_type`` is one of ``slide``, ``subslide``,
``fragment``, ``-`` (continue), ``skip`` or ``notes``. A tag of the same name does the
same and is easier to type in a py:percent header (``# %% tags=["slide"]``). Cells that
run but are not taught never reach a slide: the deck keeps only the cell kinds
``jaxtour.lesson.KEEPS[View.DECK]`` lists (teaching cells, exercise tasks and notes), so
set-up, checks, solutions, hints, exercise stubs and ``remove-cell`` cells stay out.
An output holding an SVG shows it (`shows_svg`), even beside a ``text/html`` page.
A ``notes`` cell goes into the speaker notes (reveal.js, key S) of the slide before it.

A notebook that chooses no slide at all still makes a deck: each markdown cell that
opens with a ``#`` or ``##`` heading starts a slide, ``###`` a subslide.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from jaxtour.lesson import View, keeps
from jaxtour.slides._frame import frame, headings_only

SLIDE_TYPES = ("slide", "subslide", "fragment", "-", "skip", "notes")
_STARTS = frozenset({"slide", "subslide"})
_HEADING = re.compile(r"^(#{1,3})\s+(.+?)\s*#*\s*$", re.MULTILINE)


class SlidesError(ValueError):
    """A lesson cannot become a deck as it stands; the message says what to change."""


def explicit_slide_type(cell: Any, where: str = "a cell") -> str | None:
    """The slide type a cell asks for by metadata or tag, or None when it asks nothing.

    Raises:
        SlidesError: an unknown slide type, or two different slide-type tags.
    """
    chosen = (cell.get("metadata", {}).get("slideshow") or {}).get("slide_type")
    if chosen is not None:
        chosen = chosen or "-"  # nbconvert reads an empty slide_type as "continue"
        if chosen not in SLIDE_TYPES:
            raise SlidesError(
                f"{where} has slideshow.slide_type {chosen!r}; use one of "
                f"{', '.join(SLIDE_TYPES)}."
            )
        return chosen
    tagged = [t for t in cell.get("metadata", {}).get("tags", []) if t in SLIDE_TYPES]
    if len(set(tagged)) > 1:
        raise SlidesError(
            f"{where} is tagged with two slide types ({', '.join(tagged)}); keep one."
        )
    return tagged[0] if tagged else None


def is_hidden(cell: Any) -> bool:
    """Whether the cell stays out of the deck (the lesson's deck view leaves it out)."""
    return not keeps(View.DECK, cell)


def heading_slide_type(cell: Any) -> str:
    """The automatic choice: ``#``/``##`` heading → slide, ``###`` → subslide, else ``-``."""
    if cell.get("cell_type") != "markdown":
        return "-"
    first = next(
        (line for line in cell.get("source", "").splitlines() if line.strip()), ""
    )
    match = _HEADING.match(first)
    if not match:
        return "-"
    return "subslide" if len(match.group(1)) == 3 else "slide"


def plan_slides(notebook: Any, name: str = "the notebook") -> Any:
    """A copy of `notebook` ready for the reveal.js exporter.

    Hidden cells are dropped, and every remaining cell gets an explicit
    ``metadata.slideshow.slide_type``. When no cell asks for a ``slide`` or
    ``subslide`` itself, headings choose the slides (see the module docstring). The
    first heading cell becomes the title slide and the summary the closing slide
    (`jaxtour.slides._frame.frame`).

    Args:
        notebook: an `nbformat.NotebookNode` (executed or not).
        name: how to name the notebook in error messages.

    Returns:
        The planned copy; `notebook` itself is left as it was.

    Raises:
        SlidesError: a cell asks for an unknown slide type, or no cell is visible.

    Example:
        >>> from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
        >>> lesson = new_notebook(cells=[
        ...     new_markdown_cell("# Why JAX"),
        ...     new_code_cell("import jax", metadata={"tags": ["setup"]}),
        ...     new_markdown_cell("## float32 by default"),
        ...     new_code_cell("jnp.ones(3).dtype"),
        ... ])
        >>> planned = plan_slides(lesson)
        >>> [c.metadata.slideshow.slide_type for c in planned.cells]
        ['slide', 'slide', '-']
        >>> count_slides(planned)
        2
    """
    from nbformat import NotebookNode

    planned = copy.deepcopy(notebook)
    planned.cells = [c for c in planned.cells if not is_hidden(c)]
    for cell in planned.cells:
        for output in cell.get("outputs", ()):
            shows_svg(output)
    asked = [
        explicit_slide_type(c, f"cell {i} of {name}")
        for i, c in enumerate(planned.cells)
    ]
    use_headings = not _STARTS & set(asked)
    for cell, chosen in zip(planned.cells, asked, strict=True):
        if chosen is None:
            chosen = heading_slide_type(cell) if use_headings else "-"
        metadata = cell.setdefault("metadata", NotebookNode())
        slideshow = {**metadata.get("slideshow", {}), "slide_type": chosen}
        metadata["slideshow"] = NotebookNode(slideshow)
    if not any(str(c.source).strip() for c in notebook.cells):  # hidden ones too
        raise SlidesError(
            f"{name} shows nothing on a slide: it has no cell with text or code. Write "
            "the lesson's cells first (a markdown cell with a title opens the deck)."
        )
    planned.cells = frame(planned.cells, _markdown_cell)
    if not any(_visible(c) and _shows_something(c) for c in planned.cells):
        raise SlidesError(
            f"{name} has no cell left to show: every cell is hidden, skipped, a note "
            "or blank. Remove `skip` from at least one cell with text or code."
        )
    return planned


def shows_svg(output: Any) -> None:
    """Keep only the SVG of an output that holds one beside HTML, in place.

    A big `Diagram` carries its page (``text/html``) beside its SVG, and nbconvert ranks
    HTML first; a deck places, measures and fits the SVG to its slide instead, and does
    not carry the page.

    Example:
        >>> output = {"data": {"image/svg+xml": "<svg/>", "text/html": "<div>…</div>"}}
        >>> shows_svg(output)
        >>> sorted(output["data"])
        ['image/svg+xml']
    """
    data = output.get("data", {})
    if "image/svg+xml" in data:
        data.pop("text/html", None)
        output.get("metadata", {}).pop("text/html", None)


def _markdown_cell(source: str, metadata: dict) -> Any:
    from nbformat import from_dict
    from nbformat.v4 import new_markdown_cell

    return new_markdown_cell(source, metadata=from_dict(metadata))


def count_slides(planned: Any) -> int:
    """How many slides reveal.js will show for a planned notebook.

    The first visible cell always opens a slide (nbconvert makes it one); after it,
    every ``slide`` or ``subslide`` cell opens another.
    """
    visible = [c for c in planned.cells if _visible(c)]
    if not visible:
        return 0
    return 1 + sum(_slide_type(c) in _STARTS for c in visible[1:])


def lesson_title(notebook: Any, default: str) -> str:
    """The text of the notebook's first ``#`` heading, code marks dropped, or `default`.

    Example:
        >>> from nbformat.v4 import new_markdown_cell, new_notebook
        >>> lesson_title(new_notebook(cells=[new_markdown_cell("# 04 · `vmap`")]), "04")
        '04 · vmap'
    """
    for cell in notebook.cells:
        if cell.get("cell_type") == "markdown":
            source = headings_only(cell.get("source", ""))
            match = re.search(r"^#\s+(.+?)\s*$", source, re.MULTILINE)
            if match:
                return match.group(1).replace("`", "").replace("**", "")
    return default


def _slide_type(cell: Any) -> str:
    return cell["metadata"]["slideshow"]["slide_type"]


def _visible(cell: Any) -> bool:
    return _slide_type(cell) not in ("skip", "notes")


def _shows_something(cell: Any) -> bool:
    """Whether a deck shows anything for `cell`: text, code, or an output."""
    return bool(str(cell.source).strip() or cell.get("outputs"))
