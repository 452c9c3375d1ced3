"""`Plot`: a matplotlib figure Jupyter shows as PNG, with a title and `.save(path)`.

The kit's one plot type, beside `Diagram` (Graphviz): the cost lens and the MLP's
pictures return it. Built on a pyplot-free `Figure` (`figure`), so no global state
changes and nothing pops up in a script; Jupyter shows it through `_repr_png_`, with
no formatter registered for every `Figure`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from jaxtour._files import user_path, write_atomically

FORMATS = ("png", "svg", "pdf")


def figure(width: float, height: float) -> Any:
    """A pyplot-free matplotlib Figure: no global state, nothing pops up in a script."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=110, layout="constrained")


class Plot:
    """A picture: a matplotlib `Figure` (`.figure`) plus a one-line title.

    Jupyter shows it as PNG (its one rich repr); `save` writes .png, .svg or .pdf.
    """

    def __init__(self, fig: Any, title: str) -> None:
        self.figure = fig
        self.title = title

    def png(self) -> bytes:
        """The picture as PNG bytes."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=110)
        return buffer.getvalue()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the picture; the format follows the suffix (.png, .svg or .pdf).

        Raises:
            ValueError: the suffix is none of those.
        """
        path = user_path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in FORMATS:
            raise ValueError(
                f"Cannot save a Plot as {path.name!r}: use a .png, .svg or .pdf suffix."
            )
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format=fmt, dpi=150)
        write_atomically(path, buffer.getvalue())
        return path

    def _repr_png_(self) -> bytes:
        return self.png()

    def __repr__(self) -> str:
        return f"Plot({self.title!r})"
