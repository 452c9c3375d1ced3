"""The deck builder's legibility rule (slides/_legible, slides/_place), without a browser.

The browser half (the same decks linted in Chromium, with either Graphviz) is in
tests/test_browser.py; the lessons' own decks are linted there too.
"""

import re

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from jaxtour.slides import MIN_TEXT_PX, count_slides, measure, place_pictures
from jaxtour.slides._legible import MARGIN, TARGET_PX
from jaxtour.slides._place import ALONE_HEIGHT, MIN_HEIGHT, ROOM_WIDTH


def svg(width, height, fonts, transform="scale(1 1) rotate(0) translate(4 100)"):
    """A Graphviz-shaped SVG: texts spread down its height, in a translated group."""
    texts = "".join(
        f'<text x="{10 + i % 7 * 20}" y="{-height + 20 + i * (height - 30) / len(fonts)}"'
        f' font-size="{font:.2f}">t{i}</text>'
        for i, font in enumerate(fonts)
    )
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE svg>\n'
        f'<svg width="{width}pt" height="{height}pt" viewBox="0.00 0.00 {width} {height}"'
        ' xmlns="http://www.w3.org/2000/svg">'
        f'<g id="graph0" transform="{transform}"><g id="node1">{texts}</g></g></svg>'
    )


def slide_with(picture, code_lines=1):
    code = new_code_cell(
        "\n".join(f"line_{i} = {i}" for i in range(code_lines)),
        outputs=[
            {
                "output_type": "display_data",
                "data": {"image/svg+xml": picture},
                "metadata": {},
            }
        ],
    )
    cells = [
        new_markdown_cell("# 00 · Demo"),
        new_markdown_cell("## The picture"),
        code,
        new_markdown_cell("Say it.", metadata={"slideshow": {"slide_type": "notes"}}),
        new_markdown_cell("## After"),
    ]
    kinds = ["slide", "slide", "-", "notes", "slide"]
    for cell, kind in zip(cells, kinds, strict=True):
        cell.metadata["slideshow"] = {"slide_type": kind}
    return new_notebook(cells=cells)


def pictures(planned):
    return [
        (i, o["data"]["image/svg+xml"])
        for i, c in enumerate(planned.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if "image/svg+xml" in o.get("data", {})
    ]


def min_height(picture):
    return int(re.search(rf'{MIN_HEIGHT}="(\d+)"', picture).group(1))


def test_measure_reads_font_size_times_the_groups_scale_and_the_view_box():
    m = measure(svg(400, 200, [10, 14, 14], transform="scale(0.5) translate(4 200)"))
    assert (m.width, m.height, m.texts) == (400, 200, 3)
    assert m.median_font == 7.0  # 14 x 0.5
    # the rule, in slide pixels: the median at MIN_TEXT_PX on a screen reveal.js draws
    # the slide on at (1 - MARGIN) of its size
    assert TARGET_PX * (1 - MARGIN) >= MIN_TEXT_PX
    assert m.legible_size() == pytest.approx((400 * TARGET_PX / 7, 200 * TARGET_PX / 7))


def test_text_positions_are_in_view_box_units():
    m = measure(svg(300, 100, [14, 14]))  # translate(4 100): y = -80 sits at 20
    assert m.text_ys[0] == pytest.approx(20) and m.text_xs[0] == pytest.approx(14)


@pytest.mark.parametrize(
    "text", ["not svg", "<svg xmlns='http://www.w3.org/2000/svg'/>"]
)
def test_what_cannot_be_measured_is_left_alone(text):
    assert measure(text) is None


@pytest.mark.parametrize("unit, px", [("pt", 4 / 3), ("", 1.0)])
def test_a_picture_without_a_view_box_gets_one_so_that_its_text_grows(unit, px):
    # Without a viewBox a browser draws the text at the size written (10 px here), however
    # tall deck.js makes the picture: the lint measured 9.6 px where the plan said 12.
    texts = "".join(
        f'<text x="{10 + 25 * i}" y="20" font-size="10">w{i}</text>' for i in range(9)
    )
    bare = re.sub(r' viewBox="[^"]*"', "", svg(300, 100, [10]))
    bare = bare.replace(
        'width="300pt" height="100pt"', f'width="300{unit}" height="100{unit}"'
    )
    bare = re.sub(r"<g id=.*</svg>", f"{texts}</svg>", bare)
    m = measure(bare)  # the user space is CSS pixels: 1pt is 4/3 of one
    assert (m.width, m.height) == pytest.approx((300 * px, 100 * px))
    planned = slide_with(bare)
    place_pictures(planned)
    [(_, picture)] = pictures(planned)
    assert re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', picture).groups() == (
        f"{300 * px:g}",
        f"{100 * px:g}",
    )
    assert min_height(picture) == pytest.approx(100 * px * TARGET_PX / 10, abs=1)


def test_a_small_picture_stays_and_carries_its_legible_height():
    planned = slide_with(svg(300, 120, [14] * 5))
    place_pictures(planned)
    [(at, picture)] = pictures(planned)
    assert at == 2 and count_slides(planned) == 3
    assert min_height(picture) == pytest.approx(120 * TARGET_PX / 14, abs=1)


def test_a_picture_with_no_room_beside_its_code_gets_a_slide_of_its_own():
    big = svg(900, 500, [14] * 20)  # legible: 810 x 450 px, beside 12 lines of code
    planned = slide_with(big, code_lines=12)
    place_pictures(planned)
    [(at, picture)] = pictures(planned)
    assert planned.cells[2].outputs == []  # the code stays, its picture moves on
    assert planned.cells[at - 1].source == "## The picture"  # under the same title
    assert planned.cells[at - 1].metadata.slideshow.slide_type == "subslide"
    assert "remove-input" in planned.cells[at].metadata.tags
    assert planned.cells[at + 1].metadata.slideshow.slide_type == "notes"
    assert count_slides(planned) == 4
    assert min_height(picture) <= ALONE_HEIGHT


def test_a_picture_too_large_for_any_slide_is_cut_into_pieces_that_each_fit():
    huge = svg(2000, 1500, [14] * 60)  # legible: about 1800 x 1350 px
    planned = slide_with(huge)
    place_pictures(planned)
    found = pictures(planned)
    assert len(found) == 6  # 2 columns x 3 rows
    assert count_slides(planned) == 3 + 6
    titles = [planned.cells[at - 1].source for at, _ in found]
    assert titles == [f"## The picture ({i}/6)" for i in range(1, 7)]
    for _, piece in found:
        m = measure(piece)
        width, height = m.legible_size()
        assert width <= ROOM_WIDTH and height <= ALONE_HEIGHT
        assert min_height(piece) == pytest.approx(height, abs=1)
        assert 'id="graph0_p' in piece and 'id="graph0"' not in piece
    boxes = [measure(piece) for _, piece in found]
    assert sum(b.width * b.height for b in boxes) == pytest.approx(2000 * 1500)


@pytest.fixture(scope="module")
def jaxpr_pictures():
    """One jaxpr drawn by each Graphviz this machine has."""
    import shutil

    import jax
    import jax.numpy as jnp

    from jaxtour.viz import draw_jaxpr

    def two_layers(w1, w2, x):
        return jnp.sum(jax.nn.relu(x @ w1) @ w2)

    grad = jax.grad(two_layers, argnums=(0, 1))
    args = jnp.ones((16, 8)), jnp.ones((8, 4)), jnp.ones((2, 16))
    source = draw_jaxpr(grad)(*args).source
    found = {"embedded": drawn_by(source, "embedded")}
    if shutil.which("dot"):
        found["system"] = drawn_by(source, "system")
    return found


@pytest.mark.parametrize("which", ["embedded", "system"])
def test_either_graphviz_gets_a_legible_place(jaxpr_pictures, which):
    if which not in jaxpr_pictures:
        pytest.skip("no system Graphviz here")
    planned = slide_with(jaxpr_pictures[which], code_lines=3)
    place_pictures(planned)
    for _, picture in pictures(planned):
        width, height = measure(picture).legible_size()
        assert width <= ROOM_WIDTH and height <= ALONE_HEIGHT
        assert min_height(picture) >= height - 1


def tall_picture() -> str:
    """A graph too tall for any slide, drawn by the embedded Graphviz (the same on
    every machine): a chain of 40 nodes, four to a cluster whose label is smaller
    than theirs, with labelled edges (so a piece's own texts have another median
    than the picture's)."""
    clusters = "\n".join(
        f'subgraph cluster_{c} {{ label="layer {c}"; fontsize=8; '
        + " ".join(
            f'n{i} [label="op {i}\\nf32[{i}]"];' for i in range(4 * c, 4 * c + 4)
        )
        + " }"
        for c in range(10)
    )
    edges = "\n".join(f'n{i} -> n{i + 1} [label="x{i}"];' for i in range(39))
    source = f"digraph {{ node [shape=box fontsize=14]; {clusters}\n{edges} }}"
    return drawn_by(source, "embedded")


def drawn_by(source: str, which: str) -> str:
    """`source` (DOT) drawn as SVG by one Graphviz: "embedded" or "system"."""
    import os

    from jaxtour._render import render

    before = os.environ.get("JAXTOUR_RENDERER")
    os.environ["JAXTOUR_RENDERER"] = which
    try:
        return render(source, "svg").decode()
    finally:
        os.environ.pop("JAXTOUR_RENDERER")
        if before is not None:
            os.environ["JAXTOUR_RENDERER"] = before


def cut(picture: str) -> list[str]:
    """The pieces the deck builder cuts `picture` into."""
    planned = slide_with(picture)
    place_pictures(planned)
    return [piece for _, piece in pictures(planned)]


def test_each_piece_of_a_cut_picture_carries_only_what_it_shows():
    """The browser test compares each piece with the uncut picture, pixel by pixel
    (tests/test_browser.py); here: every node is in some piece, the pieces together
    are far smaller than the picture repeated once per piece, and each keeps every
    text (so its median text size is the one it was sized by)."""
    whole = tall_picture()
    pieces = cut(whole)
    assert len(pieces) >= 3
    nodes = set(re.findall(r'<g id="(node\d+)" class="node"', whole))
    kept = [set(re.findall(r'<g id="(node\d+)_p\d+" class="node"', p)) for p in pieces]
    assert set().union(*kept) == nodes
    assert sum(map(len, kept)) < 1.5 * len(nodes)  # a node near a cut is in both
    assert sum(map(len, pieces)) < 0.75 * len(pieces) * len(whole)
    # every text stays: the piece was sized by the whole picture's median text, and
    # the slide lint measures the median of the texts the piece holds
    measured = measure(whole)
    for piece in pieces:
        assert measure(piece).median_font == measured.median_font
        assert measure(piece).texts == measured.texts


def test_a_rotated_picture_is_cut_with_nothing_dropped():
    """`rotate=90` draws the graph a quarter turn round (Graphviz writes rotate(-90) on
    the graph group): each piece keeps every group, as the uncut picture shows them
    (read as unrotated, the pieces dropped the nodes and edges they show)."""
    import jaxtour.slides._place as place

    chain = " ".join(f'n{i} [label="node number {i} with text"];' for i in range(40))
    edges = " ".join(f"n{i} -> n{i + 1};" for i in range(39))
    whole = drawn_by(f"digraph {{ rotate=90; {chain} {edges} }}", "embedded")
    assert "rotate(-90)" in whole  # the premise
    pieces = cut(whole)
    assert len(pieces) >= 2
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(place, "cull", lambda body, box: body)
        assert pieces == cut(whole)


def test_a_thick_stroke_reaching_into_a_piece_keeps_its_node():
    """A box's 40-unit stroke reaches 20 units past its outline (more at a corner):
    a piece that starts 15 units past the outline shows the stroke, one 200 units
    past shows nothing of it."""
    from jaxtour.slides._cull import cull
    from jaxtour.slides._place import _split_root

    svg = drawn_by("digraph { a [shape=box penwidth=40] }", "embedded")
    _, body = _split_root(svg)
    shift = [
        float(v) for v in re.search(r"translate\(([^)]*)\)", body).group(1).split()
    ]
    points = re.search(r'<polygon fill="none"[^>]* points="([^"]*)"', body).group(1)
    right = max(float(p.split(",")[0]) for p in points.split()) + shift[0]
    assert 'class="node"' in cull(body, (right + 15, -1000, 50, 2000))
    assert 'class="node"' not in cull(body, (right + 200, -1000, 50, 2000))
