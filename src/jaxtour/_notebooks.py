"""Lessons as files: py:percent sources, their paired .ipynb, and executing them."""

from __future__ import annotations

import os
from pathlib import Path

from jaxtour._files import write_atomically

LESSON_GLOB = "[0-9][0-9]_*.py"
# Cells the exported HTML lesson leaves out: a lesson's asserts live in cells tagged `check`
# (they run, and the executed .ipynb keeps them; a reader of the HTML does not need them).
HTML_HIDDEN_TAGS = frozenset({"check"})


def find_notebooks(folder: str | os.PathLike | None = None) -> list[Path]:
    """The lesson sources `NN_topic.py` in `folder`, in lesson order.

    With no `folder`: ./notebooks when there is one (a checkout), else the lessons that
    came with jaxtour (see `jaxtour._lessons`).
    """
    if folder is None:
        from jaxtour._lessons import packaged_lessons_dir

        folder = "notebooks" if Path("notebooks").is_dir() else packaged_lessons_dir()
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"No lessons folder at {folder.resolve()}: pass --notebooks DIR (a folder of "
            "NN_topic.py lessons), or leave it out to use the lessons that came with jaxtour."
        )
    return sorted(folder.glob(LESSON_GLOB))


def paired_ipynb(source: Path) -> str:
    """The .ipynb text jupytext generates from `source` (outputs stripped)."""
    import jupytext

    notebook = jupytext.read(source)
    return jupytext.writes(notebook, fmt="ipynb")


def execute(source: Path, out_dir: Path, timeout: int = 600) -> tuple[Path, Path]:
    """Run lesson `source` top to bottom; write the executed .ipynb and its HTML.

    The kernel starts in the lesson's folder, as Jupyter would, so relative paths
    in a lesson behave the same in the tour, the tests and the user's Jupyter.
    """
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    notebook = jupytext.read(source)
    # No saved widget state: exported HTML and offline slides then show a widget's
    # static fallback picture instead of an empty box that needs JavaScript from a CDN.
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        store_widget_state=False,
        resources={"metadata": {"path": str(source.parent.resolve())}},
    )
    client.execute()
    ipynb = out_dir / f"{source.stem}.ipynb"
    html = out_dir / f"{source.stem}.html"
    write_atomically(ipynb, nbformat.writes(notebook).encode())
    body, _ = html_exporter().from_notebook_node(notebook)
    write_atomically(html, body.encode())
    return ipynb, html


def html_exporter():
    """nbconvert's HTML exporter leaving out the cells tagged in `HTML_HIDDEN_TAGS`."""
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = set(HTML_HIDDEN_TAGS)
    return HTMLExporter(config=config)
