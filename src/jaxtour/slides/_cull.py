"""A piece of a cut picture carries only the nodes, edges and clusters it shows.

`_place` cuts a picture too large for any slide into pieces, each the whole SVG under a
``viewBox`` that shows one part: a picture cut in eight made a deck carry it eight
times. `cull(body, box)` drops each of Graphviz's ``<g class="node|edge|cluster">``
groups that lies wholly outside `box`, all but its ``<text>`` elements: the legibility
rule that sized the piece, and that the slide lint checks, is the median size of every
text of the picture, seen or not. A group is kept whenever its extent cannot be
read (a transform inside it, a shape not listed here), and every extent is padded
(strokes, arrowheads, text whose width is estimated generously), so a piece shows
exactly what the uncut picture showed through the same ``viewBox``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from jaxtour.slides._legible import _NUMBER, Affine, _transformed

_BLOCK = re.compile(r'<g id="[^"]*" class="(?:node|edge|cluster)">')
_GRAPH = re.compile(r'<g id="[^"]*" class="graph" transform="([^"]*)">')
_G = re.compile(r"<g[\s>]|</g>")
_TEXT = re.compile(r"<text\b([^>]*)>([^<]*)</text>")
_SHAPE = re.compile(r"\s(?:points|d)=\"([^\"]*)\"")
_ABSOLUTE = re.compile(r"[MCL\d\s,.eE+-]*")  # x,y pairs: what Graphviz writes
_ELLIPSE = re.compile(r"<ellipse\b([^>]*)/?>")
_STROKE = re.compile(rf'\sstroke-width="({_NUMBER})')
# what a graph group's transform may hold for `_transformed` to read it: Graphviz's
# scale, translate and rotate(0); `rotate=90` (or `landscape`) writes rotate(-90), which
# `_transformed` would ignore, placing every group a quarter turn from where it is drawn
_PLAIN = re.compile(r"(?:scale|translate)\([^)]*\)|rotate\(\s*[-+]?0*\.?0*\s*\)|\s+")
_UNREAD = re.compile(r"\stransform=|<(?:image|rect|circle|use|foreignObject)\b")
PAD = 8.0  # user units around every extent: strokes, arrowheads, rounding


def cull(body: str, box: tuple[float, float, float, float]) -> str:
    """`body` (what follows the root ``<svg>`` tag) without the groups wholly outside
    `box` (x, y, width, height in the root's user units). Unchanged when its graph
    group's transform is not Graphviz's plain scale and translate (a rotated graph)."""
    graph = _GRAPH.search(body)
    if graph is None or "transform=" in body[: graph.start()]:
        return body
    if _PLAIN.sub("", graph.group(1)):
        return body  # a rotation (or another transform): not read, nothing dropped
    at = _transformed((1.0, 1.0, 0.0, 0.0), graph.group(1))
    kept, start = [], 0
    for first, last in _blocks(body, graph.end()):
        block = body[first:last]
        extent = _extent(block, at)
        if extent is not None and not _overlaps(extent, box):
            # its texts stay, unseen: the legibility rule is the median of every
            # text of the picture, here as in the slide lint (`_legible`)
            texts = "".join(m.group(0) + "\n" for m in _TEXT.finditer(block))
            kept += [body[start:first], texts]
            start = last + (body[last : last + 1] == "\n")
    return "".join(kept) + body[start:]


def _blocks(body: str, after: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each node, edge and cluster group, with the groups inside it."""
    for match in _BLOCK.finditer(body, after):
        depth, at = 1, match.end()
        while depth:
            tag = _G.search(body, at)
            if tag is None:
                return  # not well formed: keep the rest as it is
            depth += 1 if tag.group().startswith("<g") else -1
            at = tag.end()
        yield match.start(), at


def _extent(block: str, at: Affine) -> tuple[float, float, float, float] | None:
    """(left, top, right, bottom) of `block` in root units, padded; None if unread."""
    texts = _TEXT.findall(block)
    if _UNREAD.search(block) or block.count("<text") != len(texts):
        return None
    xs: list[float] = []
    ys: list[float] = []
    for shape in _SHAPE.findall(block):
        if not _ABSOLUTE.fullmatch(shape):
            return None
        numbers = [float(n) for n in re.findall(_NUMBER, shape)]
        xs += numbers[0::2]
        ys += numbers[1::2]
    for attrs in _ELLIPSE.findall(block):
        cx, cy, rx, ry = (_attr(attrs, k) for k in ("cx", "cy", "rx", "ry"))
        xs += [cx - rx, cx + rx]
        ys += [cy - ry, cy + ry]
    for attrs, text in texts:
        x, y, size = _attr(attrs, "x"), _attr(attrs, "y"), _attr(attrs, "font-size", 16)
        reach = len(text) * size  # wider than any font draws it, whatever the anchor
        xs += [x - reach, x + reach]
        ys += [y - size * 1.5, y + size]
    if not xs or len(xs) != len(ys):
        return None
    # a stroke reaches half its width past the shape, a sharp corner's mitre farther
    grow = 2 * max((float(w) for w in _STROKE.findall(block)), default=1.0)
    sx, sy, tx, ty = at
    xs, ys = [min(xs) - grow, max(xs) + grow], [min(ys) - grow, max(ys) + grow]
    left, right = sorted((sx * xs[0] + tx, sx * xs[1] + tx))
    top, bottom = sorted((sy * ys[0] + ty, sy * ys[1] + ty))
    return left - PAD, top - PAD, right + PAD, bottom + PAD


def _attr(attrs: str, name: str, default: float = 0.0) -> float:
    found = re.search(rf'\s{name}="({_NUMBER})', attrs)
    return float(found.group(1)) if found else default


def _overlaps(
    extent: tuple[float, float, float, float], box: tuple[float, float, float, float]
) -> bool:
    left, top, right, bottom = extent
    x, y, width, height = box
    return left < x + width and right > x and top < y + height and bottom > y
