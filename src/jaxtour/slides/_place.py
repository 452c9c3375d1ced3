"""Give every picture of a deck the room its text needs (`_legible`'s rule), by construction.

`place_pictures(planned)` walks a planned notebook slide by slide. For each SVG output it
knows the smallest legible size (`Measured.legible_size`) and writes it on the ``<svg>`` as
``data-jt-min-height``, which deck.js never shrinks a picture below. Then:

- a picture that fits on a slide of its own, but not beside what its slide already shows
  (title, prose, code, outputs: estimated generously), moves to a slide of its own just
  after, under the same title;
- a picture too large for any slide is cut, along the gaps between its text, into pieces
  that each fit, one slide per piece ("(2/3)" after the title), each carrying only the
  nodes, edges and clusters it shows (`_cull`).

Whichever Graphviz drew the picture and whatever fonts the machine has, the lint's rule
then holds: it measures the same ``font-size`` times scale that this module plans with.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterator
from typing import Any

from jaxtour.slides._cull import cull
from jaxtour.slides._frame import headings_only
from jaxtour.slides._legible import Measured, measure

SLIDE_HEIGHT = 720
ROOM_WIDTH = 1240  # a picture's room on a 1280 px slide: the output area is 1246 px
TITLE_HEIGHT = 90  # a slide's heading and the space under it
SLACK = 16
SHARED_SLACK = (
    48  # beside other cells: their margins, and room for the estimate's error
)
ALONE_HEIGHT = SLIDE_HEIGHT - TITLE_HEIGHT - SLACK  # a picture with only a title above
MIN_HEIGHT = "data-jt-min-height"
_REMOVED = {"hide-output", "remove-output"}
_STARTS = ("slide", "subslide")
_ID = re.compile(r'\bid="([^"]+)"')


def place_pictures(planned: Any) -> None:
    """Make room for every picture of `planned` (a `plan_slides` notebook), in place."""
    cells, out = list(planned.cells), []
    for slide in _slides(cells):
        out.extend(slide)
        out.extend(_place(slide))
    planned.cells = out


def _slides(cells: Any) -> Iterator[list]:
    """The cells of each slide in turn (a slide's notes and skipped cells with it)."""
    current: list = []
    for cell in cells:
        if _kind(cell) in _STARTS and current:
            yield current
            current = []
        current.append(cell)
    if current:
        yield current


def _place(slide: list) -> list:
    """Mark the slide's pictures legible; return the slides that must follow it."""
    following: list = []
    for cell, output, svg, measured in list(_pictures(slide)):
        svg = _scalable(svg, measured)
        width, height = measured.legible_size()
        if width <= ROOM_WIDTH and height <= ALONE_HEIGHT:
            _set_svg(output, _with_min_height(svg, height))
            if _rest_height(slide, output) + height + SHARED_SLACK <= SLIDE_HEIGHT:
                continue
            pieces = [(_with_min_height(svg, height), height)]
        else:
            pieces = list(_cut(svg, measured))
        cell.outputs.remove(output)
        title = _title(slide)
        for i, (piece, piece_height) in enumerate(pieces, 1):
            heading = title if len(pieces) == 1 else f"{title} ({i}/{len(pieces)})"
            following += _continuation(heading, output, piece, piece_height, i, pieces)
    return following


def _pictures(slide: list) -> Iterator[tuple]:
    for cell in slide:
        if cell.cell_type != "code" or _kind(cell) in ("skip", "notes"):
            continue
        if _REMOVED & set(cell.metadata.get("tags", ())):
            continue
        for output in cell.get("outputs", ()):
            svg = output.get("data", {}).get("image/svg+xml")
            if svg:
                svg = "".join(svg) if isinstance(svg, list) else svg
                measured = measure(svg)
                if measured is not None and measured.texts:
                    yield cell, output, svg, measured


def _cut(svg: str, measured: Measured) -> Iterator[tuple[str, float]]:
    """Pieces of `svg`, each legible within a slide of its own, and their heights."""
    scale = measured.legible_scale()
    m = measured
    xs = _cuts(m.x, m.width, ROOM_WIDTH / scale, m.text_xs)
    ys = _cuts(m.y, m.height, ALONE_HEIGHT / scale, m.text_ys)
    n = 0
    for top, bottom in itertools.pairwise(ys):
        for left, right in itertools.pairwise(xs):
            n += 1
            height = (bottom - top) * scale
            box = (left, top, right - left, bottom - top)
            yield _cropped(svg, box, f"_p{n}", height), height


def _cuts(start: float, length: float, room: float, texts: tuple) -> list[float]:
    """Edges along one axis cutting `length` into pieces of at most `room`, of about
    equal size, each cut in the widest gap between texts near where it falls."""
    edges, end = [start], start + length
    share = length / math.ceil(length / room)
    while end - edges[-1] > room:
        high = min(edges[-1] + share * 1.1, edges[-1] + room)
        low = high - share / 5
        points = [low, *sorted(t for t in texts if low < t < high), high]
        edges.append(
            max((b - a, (a + b) / 2) for a, b in itertools.pairwise(points))[1]
        )
    return [*edges, end]


def _cropped(svg: str, box: tuple, suffix: str, height: float) -> str:
    """`svg` showing only `box` (x, y, width, height of its viewBox), its ids renamed."""
    x, y, width, depth = box
    head, body = _split_root(svg)
    head = re.sub(r'\s(?:width|height|viewBox)="[^"]*"', "", head)
    head = head.replace(
        "<svg",
        f'<svg width="{width:.2f}pt" height="{depth:.2f}pt" '
        f'viewBox="{x:.2f} {y:.2f} {width:.2f} {depth:.2f}"',
        1,
    )
    whole = _with_min_height(head + cull(body, box), height)
    ids = set(_ID.findall(whole))
    return re.sub(
        r'(\bid="|url\(#|href="#)([^")]+)',
        lambda m: m.group(1) + m.group(2) + (suffix if m.group(2) in ids else ""),
        whole,
    )


def _split_root(svg: str) -> tuple[str, str]:
    """(the root ``<svg …>`` start tag, everything after it), the XML prolog dropped."""
    start = svg.find("<svg")
    end = svg.find(">", start) + 1
    return svg[start:end], svg[end:]


def _scalable(svg: str, measured: Measured) -> str:
    """`svg` with a ``viewBox`` (its measured one): without one, a browser draws its
    text at the size written, however tall deck.js makes the picture."""
    head, body = _split_root(svg)
    if re.search(r"\sviewBox=", head):
        return svg
    m = measured
    box = f'viewBox="{m.x:g} {m.y:g} {m.width:g} {m.height:g}"'
    return head.replace("<svg", f"<svg {box}", 1) + body


def _with_min_height(svg: str, height: float) -> str:
    head, body = _split_root(svg)
    head = re.sub(rf'\s{MIN_HEIGHT}="[^"]*"', "", head)
    return head.replace("<svg", f'<svg {MIN_HEIGHT}="{math.ceil(height)}"', 1) + body


def _set_svg(output: Any, svg: str) -> None:
    output["data"]["image/svg+xml"] = svg


def _continuation(
    heading: str, output: Any, svg: str, height: float, i: int, pieces: Any
) -> list:
    from nbformat import from_dict
    from nbformat.v4 import new_code_cell, new_markdown_cell

    picture = from_dict(
        {**output, "data": {**output["data"], "image/svg+xml": svg}, "metadata": {}}
    )
    notes = (
        "The picture of the slide before, at a size the back of the room can read."
        if len(pieces) == 1
        else f"Part {i} of {len(pieces)} of the picture: too large for one slide."
    )
    return [
        new_markdown_cell(heading, metadata={"slideshow": {"slide_type": "subslide"}}),
        new_code_cell(
            "",
            outputs=[picture],
            metadata={"slideshow": {"slide_type": "-"}, "tags": ["remove-input"]},
        ),
        new_markdown_cell(notes, metadata={"slideshow": {"slide_type": "notes"}}),
    ]


def _title(slide: list) -> str:
    for cell in slide:
        if cell.cell_type == "markdown":
            found = re.search(
                r"^(#{1,3}\s+.+?)\s*$", headings_only(cell.source), re.MULTILINE
            )
            if found:
                return found.group(1)
    return "### The picture"


def _kind(cell: Any) -> str:
    return cell["metadata"]["slideshow"]["slide_type"]


def _rest_height(slide: list, picture: Any) -> float:
    """A generous estimate of the height, in slide pixels, of all but `picture`."""
    total = 0.0
    for cell in slide:
        if _kind(cell) in ("skip", "notes"):
            continue
        if cell.cell_type == "markdown":
            total += _markdown_height(cell.source)
            continue
        tags = set(cell.metadata.get("tags", ()))
        if cell.source.strip() and not tags & {"hide-input", "remove-input"}:
            total += 32 + 22 * (cell.source.count("\n") + 1)
        for output in cell.get("outputs", ()) if not tags & _REMOVED else ():
            if output is not picture:
                total += _output_height(output)
    return total


def _markdown_height(source: str) -> float:
    height = 0.0
    for block in re.split(r"\n\s*\n", source.strip()):
        if re.match(r"#{1,3}\s", block):
            height += TITLE_HEIGHT
        else:
            lines = sum(
                math.ceil(max(len(line), 1) / 90) for line in block.splitlines()
            )
            height += 20 + 32 * lines
    return height


def _output_height(output: Any) -> float:
    data = output.get("data", {})
    svg = data.get("image/svg+xml")
    if svg:
        measured = measure("".join(svg) if isinstance(svg, list) else svg)
        return measured.legible_size()[1] if measured and measured.texts else 200
    if "image/png" in data:
        return 420  # a plot: deck.js gives it what is left, down to 200 px
    if "text/html" in data:
        html = "".join(data["text/html"])
        return 40 + 34 * max(html.count("<tr"), html.count("<p") + html.count("<li"), 1)
    text = output.get("text") or "".join(data.get("text/plain", ""))
    return 16 + 22 * min(text.count("\n") + 1, 15)  # an output box holds 340 px
