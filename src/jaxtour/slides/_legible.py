"""How large a picture must be shown for its text to read from the back of a room.

The rule, shared by the deck builder and the slide lint: a picture's *median text size on
screen* is at least `MIN_TEXT_PX` on a 1280×720 screen. For an SVG that size is each
``<text>``'s ``font-size`` times the scale it is drawn at (the ``scale(…)`` of the groups
around it, times the ratio of the displayed width to the ``viewBox`` width): a property
of the SVG and of where the deck puts it, not of the fonts a machine has or of which
Graphviz drew it. reveal.js draws a 1280×720 slide on a 1280×720 screen at
``1 - MARGIN`` of its size, so the builder aims at ``MIN_TEXT_PX / (1 - MARGIN)`` in slide
pixels.

`measure(svg)` reads what the rule needs; `Measured.legible_size()` is the smallest
size, in slide pixels, at which the picture passes; `split(svg, columns, rows)` cuts a
picture too large for any slide into pieces along the gaps between its text.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

MIN_TEXT_PX = 12.0  # the slide lint's floor, on a 1280×720 screen
MARGIN = 0.04  # reveal.js's margin (deck.js): a slide is drawn at 96 % of the screen
# 1 % above the floor, so that rounding in the browser's layout never lands under it
TARGET_PX = MIN_TEXT_PX / (1 - MARGIN) * 1.01

_SVG = "{http://www.w3.org/2000/svg}"
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
# scale(a [b]) and translate(u [v]), in the order written (Graphviz: "scale(1 1) rotate(0)
# translate(4 438)"); a rotation other than rotate(0) is not drawn by the kit.
_TRANSFORM = re.compile(
    rf"(scale|translate)\(\s*({_NUMBER})(?:[\s,]+({_NUMBER}))?\s*\)"
)
_FONT_STYLE = re.compile(rf"font-size\s*:\s*({_NUMBER})")
_LENGTH = re.compile(rf"^\s*({_NUMBER})\s*(pt|px)?\s*$")
PX_PER_PT = 96 / 72


@dataclass(frozen=True)
class Measured:
    """What the legibility rule needs of one SVG, in its own user units.

    Attributes:
        x, y, width, height: the ``viewBox``.
        median_font: the median ``font-size`` of its non-empty texts, each times the
            scale of the groups around it (0 when it has no text).
        texts: how many non-empty texts it has.
        text_ys, text_xs: where its texts sit (viewBox units), for cutting it.
    """

    x: float
    y: float
    width: float
    height: float
    median_font: float
    texts: int
    text_ys: tuple[float, ...] = ()
    text_xs: tuple[float, ...] = ()

    def legible_scale(self) -> float:
        """Slide pixels per viewBox unit at which the median text is `TARGET_PX`."""
        return TARGET_PX / self.median_font if self.median_font else 0.0

    def legible_size(self) -> tuple[float, float]:
        """(width, height) in slide pixels of the smallest legible display."""
        scale = self.legible_scale()
        return self.width * scale, self.height * scale


def measure(svg: str) -> Measured | None:
    """The `Measured` of an SVG document, or None when it is not one we can read.

    Example:
        >>> m = measure('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 100">'
        ...             '<g transform="scale(2 2)"><text font-size="6">a</text>'
        ...             '<text font-size="7">b</text><text font-size="9">c</text></g></svg>')
        >>> m.median_font, m.texts, round(m.legible_size()[1])
        (14.0, 3, 90)
    """
    try:
        root = ElementTree.fromstring(_without_prolog(svg))
    except ElementTree.ParseError:
        return None
    box = _view_box(root)
    if box is None:
        return None
    fonts: list[float] = []
    xs: list[float] = []
    ys: list[float] = []
    _collect(root, (1.0, 1.0, 0.0, 0.0), None, (fonts, xs, ys))
    median = statistics.median(fonts) if fonts else 0.0
    return Measured(*box, median, len(fonts), tuple(ys), tuple(xs))


def _without_prolog(svg: str) -> str:
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _view_box(root: Any) -> tuple[float, float, float, float] | None:
    if root.tag != f"{_SVG}svg":
        return None
    box = root.get("viewBox")
    if box:
        numbers = [float(v) for v in re.findall(_NUMBER, box)]
        if len(numbers) == 4 and numbers[2] > 0 and numbers[3] > 0:
            return numbers[0], numbers[1], numbers[2], numbers[3]
    width, height = _length(root.get("width")), _length(root.get("height"))
    return (0.0, 0.0, width, height) if width and height else None


def _length(value: str | None) -> float | None:
    """A length in user units (CSS pixels where the root has no viewBox): 1pt is 4/3 px."""
    match = _LENGTH.match(value or "")
    if not match:
        return None
    return float(match.group(1)) * (PX_PER_PT if match.group(2) == "pt" else 1.0)


Affine = tuple[float, float, float, float]  # (sx, sy, tx, ty): x' = sx·x + tx


def _collect(element: Any, at: Affine, font: float | None, found: tuple) -> None:
    """Walk the tree: each non-empty text's scaled font size and its position."""
    at = _transformed(at, element.get("transform") or "")
    font = _font_size(element) or font
    if element.tag == f"{_SVG}text" and "".join(element.itertext()).strip():
        fonts, xs, ys = found
        sx, sy, tx, ty = at
        fonts.append((font or 16.0) * abs(sx))  # 16: the browser's default font size
        xs.append(sx * (_length(element.get("x")) or 0.0) + tx)
        ys.append(sy * (_length(element.get("y")) or 0.0) + ty)
    for child in element:
        _collect(child, at, font, found)


def _transformed(at: Affine, transform: str) -> Affine:
    sx, sy, tx, ty = at
    for kind, first, second in _TRANSFORM.findall(transform):
        a = float(first)
        b = float(second) if second else (a if kind == "scale" else 0.0)
        if kind == "scale":
            sx, sy = sx * a, sy * b
        else:
            tx, ty = tx + sx * a, ty + sy * b
    return sx, sy, tx, ty


def _font_size(element: Any) -> float | None:
    found = _FONT_STYLE.search(element.get("style") or "")
    return float(found.group(1)) if found else _length(element.get("font-size"))
