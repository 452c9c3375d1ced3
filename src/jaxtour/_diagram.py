"""`Diagram`: the one displayable type every jaxtour visualiser returns."""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jaxtour import _dotgraph, _page, _render
from jaxtour._files import user_path, write_atomically

# The root element's width: Graphviz writes points ("pt"); a bare number is px.
_SVG_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)(pt|px)?"')
_SVG_HEIGHT = re.compile(r'<svg[^>]*?\sheight="([\d.]+)(pt|px)?"')
# A slide, in CSS px. Shown at a notebook's width (about 1,000 px) a picture over twice
# a slide's width draws its text under 8 px, and one over twice its height needs a few
# screens: pan and zoom help with those.
SLIDE_PX = (1280, 720)


class Diagram:
    """A picture of a graph: DOT source plus a title, shown as SVG in Jupyter.

    Its display data holds the SVG (``image/svg+xml``: what GitHub, static renderers
    and the slide builder use) and a line of text; a picture that is `interactive`
    (with calls folded, or over twice a slide's width or height) also carries its page
    (``text/html``, see `save`), which JupyterLab, nbconvert's HTML export, Jupyter
    Book and Quarto show instead: it pans, zooms and folds with no kernel running.

    Args:
        source: Graphviz DOT text.
        title: what the picture shows, e.g. ``"jaxpr of loss: 23 equations"``.

    Example:
        >>> d = Diagram('digraph { x -> y }', title="two nodes")
        >>> d
        Diagram('two nodes', 2 nodes, 1 edge)
        >>> d.svg().startswith("<?xml")
        True
    """

    def __init__(self, source: str, title: str = "") -> None:
        if not isinstance(source, str):
            raise TypeError(
                f"Diagram source must be DOT text (str); got {type(source).__name__}."
            )
        self._source = source
        self.title = title
        self._svg: str | None = None
        # (DOT of the whole program with every group open, the groups) for the page
        # `save(".html")` writes; None draws the page from this picture
        self.whole: Callable[[], tuple[str, list[dict]]] | None = None
        self._whole_drawn: tuple[str, list[dict]] | None = None

    @classmethod
    def from_graph(cls, graph: Any, title: str = "") -> Diagram:
        """As `Diagram`, but from a `graphviz.Digraph` (or `Graph`)."""
        return cls(graph.source, title)

    @property
    def source(self) -> str:
        """The DOT text; needs no renderer."""
        return self._source

    @property
    def counts(self) -> tuple[int, int]:
        """(distinct nodes, edges) of the graph, as Graphviz reads the DOT text.

        A node counts once wherever it is named: declared, only in an edge, inside a
        subgraph, with attributes or a port.
        """
        return _dotgraph.count(self._source)

    def svg(self) -> str:
        """Render to SVG text (system `dot` if on PATH, else embedded Graphviz).

        Rendered once: the text is kept for the next call (a Diagram's source never
        changes).
        """
        if self._svg is None:
            self._svg = _render.render(self._source, "svg").decode()
        return self._svg

    @property
    def width_px(self) -> float:
        """The width the SVG asks for, in CSS pixels (a Graphviz point is 4/3 px).

        Renders (see `svg`); raises as `svg` does.

        Example:
            >>> Diagram('digraph { x -> y }').width_px > 0
            True
        """
        return self.size_px[0]

    @property
    def size_px(self) -> tuple[float, float]:
        """(width, height) the SVG asks for, in CSS pixels; renders as `width_px` does.

        Example:
            >>> w, h = Diagram('digraph { x -> y }').size_px
            >>> h > w > 0
            True
        """
        svg = self.svg()
        sides = []
        for pattern in (_SVG_WIDTH, _SVG_HEIGHT):
            match = pattern.search(svg)
            if match is None:
                raise ValueError("the renderer wrote an SVG without a width or height")
            number, unit = float(match.group(1)), match.group(2)
            sides.append(number * 4 / 3 if unit == "pt" else number)
        return sides[0], sides[1]

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture; the format follows the suffix: .svg, .dot, .png, .pdf or
        .html.

        An .html page needs no kernel and no network: the picture inline, with pan and
        zoom; for a program nested by the user's calls (`draw_jaxpr`'s default past 40
        equations), the *whole* program, every group of which can be folded and opened
        by a click.

        The file is written to a temporary name beside `path` and renamed, so a
        failed render never leaves a half-written file.

        Raises:
            ValueError: the suffix is not one of the formats above.
            RendererUnavailableError: no renderer here can produce that format.
        """
        path = user_path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in ("svg", "dot", "gv", "png", "pdf", "html"):
            raise ValueError(
                f"Cannot save a Diagram as {path.name!r}: "
                "use a .svg, .dot, .png, .pdf or .html suffix."
            )
        if fmt == "html":
            data = self.html().encode()
        elif fmt in ("dot", "gv"):
            data = self._source.encode()
        else:
            data = (
                self.svg().encode()
                if fmt == "svg"
                else _render.render(self._source, fmt)
            )
        write_atomically(path, data)
        return path

    def html(self, *, fragment: bool = False) -> str:
        """The self-contained page `save(".html")` writes (see `save`); with
        `fragment`, the same inside one ``<div>`` whose ids are its own, as a notebook's
        display data carries it."""
        whole = self._whole()
        if whole is None:
            svg, groups = self.svg(), None
        else:
            source, groups = whole
            svg = _render.render(source, "svg").decode()
        if fragment:
            return _page.fragment(svg, self.title, groups)
        return _page.page(svg, self.title, groups)

    @property
    def interactive(self) -> bool:
        """Whether Jupyter shows the page (pan, zoom, fold) rather than the SVG alone: a
        program nested by the user's calls with calls folded (the page opens them), or
        a picture over twice a slide's width or height (2,560 or 1,440 px). A smaller
        picture reads well as its SVG, and a lesson shows dozens: they carry it alone.

        Renders (see `svg`).
        """
        whole = self._whole()
        if whole is not None and any(g.get("folded") for g in whole[1]):
            return True
        width, height = self.size_px
        return width > 2 * SLIDE_PX[0] or height > 2 * SLIDE_PX[1]

    def _whole(self) -> tuple[str, list[dict]] | None:
        """`whole()`, drawn once (a Diagram never changes); None without one."""
        if self._whole_drawn is None and self.whole is not None:
            self._whole_drawn = self.whole()
        return self._whole_drawn

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> dict[str, str]:
        # SVG for static renderers and slides; the page, when it helps, for the rest
        # (JupyterLab and nbconvert rank text/html above SVG).
        bundle = {"text/plain": repr(self)}
        try:
            bundle["image/svg+xml"] = self.svg()
            wanted = (not include or "text/html" in include) and "text/html" not in (
                exclude or ()
            )
            if wanted and self.interactive:
                bundle["text/html"] = self.html(fragment=True)
        except _render.RendererUnavailableError as err:
            warnings.warn(str(err), stacklevel=2)
        return bundle

    def __repr__(self) -> str:
        nodes, edges = self.counts
        return (
            f"Diagram({self.title!r}, {nodes} node{'s' * (nodes != 1)}, "
            f"{edges} edge{'s' * (edges != 1)})"
        )
