"""`Diagram`: the one displayable type every jaxtour visualiser returns."""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import Any

from jaxtour import _dotgraph, _render
from jaxtour._files import write_atomically

# The root element's width: Graphviz writes points ("pt"); a bare number is px.
_SVG_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)(pt|px)?"')


class Diagram:
    """A picture of a graph: DOT source plus a title, shown as SVG in Jupyter.

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
        """Render to SVG text (system `dot` if on PATH, else embedded Graphviz)."""
        return _render.render(self._source, "svg").decode()

    @property
    def width_px(self) -> float:
        """The width the SVG asks for, in CSS pixels (a Graphviz point is 4/3 px).

        Renders (see `svg`); raises as `svg` does.

        Example:
            >>> Diagram('digraph { x -> y }').width_px > 0
            True
        """
        match = _SVG_WIDTH.search(self.svg())
        if match is None:
            raise ValueError("the renderer wrote an SVG without a width")
        number, unit = float(match.group(1)), match.group(2)
        return number * 4 / 3 if unit == "pt" else number

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture; the format follows the suffix: .svg, .dot, .png or .pdf.

        The file is written to a temporary name beside `path` and renamed, so a
        failed render never leaves a half-written file.

        Raises:
            ValueError: the suffix is not one of the formats above.
            RendererUnavailableError: no renderer here can produce that format.
        """
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in ("svg", "dot", "gv", "png", "pdf"):
            raise ValueError(
                f"Cannot save a Diagram as {path.name!r}: "
                "use a .svg, .dot, .png or .pdf suffix."
            )
        data = (
            self._source.encode()
            if fmt in ("dot", "gv")
            else _render.render(self._source, fmt)
        )
        write_atomically(path, data)
        return path

    def _repr_svg_(self) -> str | None:
        # One rich mime type only: JupyterLab ranks text/html above SVG.
        try:
            return self.svg()
        except _render.RendererUnavailableError as err:
            warnings.warn(str(err), stacklevel=2)
            return None

    def __repr__(self) -> str:
        nodes, edges = self.counts
        return (
            f"Diagram({self.title!r}, {nodes} node{'s' * (nodes != 1)}, "
            f"{edges} edge{'s' * (edges != 1)})"
        )
