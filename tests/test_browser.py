"""The decks in a real browser: Debian's Chromium, headless, with the network blocked.

Every deck is built from an EXECUTED lesson, from the lesson cache the whole run shares
(the `executed_lesson` fixture, tests/conftest.py): a lesson the notebook tests or a tour
already ran is not run again; any other is executed here (JAXTOUR_QUICK=1: 5-40 s each).
Every deck is opened from file://, as an instructor opens it in a room with no network,
and the slide lint (tests/slide_lint.py) walks every slide of every deck at 1280x720.
Screenshots go to build/screenshots/ (or $JAXTOUR_BUILD/screenshots/), failing slides'
to build/screenshots/lint/.
"""

import re
from pathlib import Path

import pytest
from browser import ARGS as CHROMIUM_ARGS
from browser import SCREENSHOTS
from browser import find_chromium as chromium
from slide_lint import LINT_SHOTS, lint_page

from jaxtour.lesson import find_lessons
from jaxtour.slides import build_slides

pytestmark = pytest.mark.browser
# The decks' machinery (the offline gate, navigation, notes, handouts, the lint itself) is
# the same on every JAX: the newest-JAX run leaves it out. What a lesson's outputs put on
# its slides (every deck's slide lint, the diagrams, the exported HTML) runs on both.
machinery = pytest.mark.plumbing

ROOT = Path(__file__).resolve().parent.parent
LESSONS = find_lessons(ROOT / "notebooks")
# lesson -> text that its diagram's SVG holds: the slides that must show a picture.
DIAGRAM_SLIDES = {
    "00_setup": "StableHLO",  # the pipeline diagram
    "01_why_jax": "PyTorch",  # the autodiff landscape
    "02_close_to_the_math": "residuals",  # the backward pass drawn by draw_grad
    "03_how_it_works": "tracing",  # the pipeline diagram, step by step
}
VIEWPORT = {"width": 1280, "height": 720}

# [[h, v], ...] of the slides holding an <svg> whose text contains `marker`.
_FIND_SVG_SLIDES = """marker => {
  const found = [];
  document.querySelectorAll('.reveal .slides > section').forEach((stack, h) => {
    const slides = stack.querySelectorAll(':scope > section');
    (slides.length ? Array.from(slides) : [stack]).forEach((slide, v) => {
      if (Array.from(slide.querySelectorAll('svg')).some(s => s.textContent.includes(marker)))
        found.push([h, v]);
    });
  });
  return found;
}"""
# Size of the current slide's diagram, and whether it is what the eye sees at its centre.
_MEASURE_SVG = """marker => {
  const svg = Array.from(Reveal.getCurrentSlide().querySelectorAll('svg'))
    .find(s => s.textContent.includes(marker));
  const box = svg.getBoundingClientRect();
  const hit = document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2);
  return {width: box.width, height: box.height, bottom: box.bottom,
          seen: !!hit && svg.contains(hit)};
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory, executed_lesson):
    """(decks by name, slides folder, exported HTML lessons) of every executed lesson."""
    out = tmp_path_factory.mktemp("tour")
    # from the middle on: the notebook tests run first to last and the exercise tests
    # last to first, so a worker beside either executes other lessons than it waits on
    half = len(LESSONS) // 2
    runs = {s: executed_lesson(s) for s in LESSONS[half:] + LESSONS[:half]}
    lessons = [runs[source] for source in LESSONS]
    decks = build_slides([ipynb for ipynb, _ in lessons], out / "slides")
    return (
        {deck.name: deck for deck in decks},
        out / "slides",
        [html for _, html in lessons],
    )


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=executable, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


@pytest.fixture
def offline_page(browser):
    """A page whose every request off this machine is aborted; yields (page, log)."""
    context = browser.new_context(viewport=VIEWPORT)
    log = {"requests": [], "blocked": [], "errors": []}

    def gate(route):
        url = route.request.url
        if url.startswith(("file://", "data:", "http://127.0.0.1")):
            route.continue_()
        else:
            log["blocked"].append(url)
            route.abort()

    context.route("**/*", gate)
    page = context.new_page()
    page.on("request", lambda request: log["requests"].append(request.url))
    page.on("pageerror", lambda error: log["errors"].append(str(error)))
    page.on("console", lambda m: m.type == "error" and log["errors"].append(m.text))
    yield page, log
    context.close()


@pytest.fixture(scope="module", autouse=True)
def chromium_or_skip():
    """Skip (or, in CI, fail) before building anything when there is no browser."""
    chromium()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)


def open_deck(page, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_selector("html[data-deck-ready=true]", timeout=15_000)


def left_the_machine(log) -> list[str]:
    local = ("file://", "data:", "http://127.0.0.1")
    return log["blocked"] + [u for u in log["requests"] if not u.startswith(local)]


@machinery
def test_the_gate_blocks_and_records_a_request_to_the_network(offline_page):
    page, log = offline_page
    with page.expect_event("requestfailed"):  # the gate aborted it
        page.set_content('<img src="https://example.org/badge.svg">')
    assert log["blocked"] == ["https://example.org/badge.svg"]


@machinery
def test_index_links_every_deck_with_its_slide_count(site, offline_page):
    decks, folder, _ = site
    page, log = offline_page
    page.goto((folder / "index.html").as_uri())
    items = page.eval_on_selector_all(
        "li.deck",
        "items => items.map(i => [i.dataset.deck, +i.dataset.slides, "
        "i.querySelector('a').getAttribute('href')])",
    )
    assert items == [[d.name, d.slides, d.path.name] for d in decks.values()]
    assert [d.name for d in decks.values()] == [s.stem for s in LESSONS]
    page.screenshot(path=SCREENSHOTS / "index.png")
    page.click(f"li.deck[data-deck='{LESSONS[0].stem}'] a")
    page.wait_for_selector("html[data-deck-ready=true]", timeout=15_000)
    assert page.url.endswith(f"/{LESSONS[0].stem}.html")
    assert left_the_machine(log) == [] and log["errors"] == []


@pytest.mark.parametrize("name", list(DIAGRAM_SLIDES))
def test_diagram_slide_shows_its_svg(site, offline_page, name):
    decks, _, _ = site
    page, log = offline_page
    marker = DIAGRAM_SLIDES[name]
    open_deck(page, decks[name].path)
    page.screenshot(path=SCREENSHOTS / f"{name}-title.png")
    found = page.evaluate(_FIND_SVG_SLIDES, marker)
    assert found, f"no slide of {name} holds an SVG mentioning {marker!r}"
    h, v = found[0]
    page.evaluate(f"Reveal.slide({h}, {v})")
    page.wait_for_function(
        f"Reveal.getIndices().h === {h} && Reveal.getIndices().v === {v}"
    )
    box = page.evaluate(_MEASURE_SVG, marker)
    page.screenshot(path=SCREENSHOTS / f"{name}-diagram.png")
    assert box["width"] > 100 and box["height"] > 50, box
    assert box["seen"], (
        f"the diagram on slide {h}.{v} of {name} is hidden or off screen"
    )
    assert box["bottom"] <= VIEWPORT["height"], (
        f"the diagram of {name} runs off the slide"
    )
    assert left_the_machine(log) == [] and log["errors"] == []


# --- the slide lint -------------------------------------------------------------------------


@pytest.mark.parametrize("name", [s.stem for s in LESSONS])
def test_every_slide_of_every_deck_passes_the_slide_lint(site, offline_page, name):
    decks, _, _ = site
    page, log = offline_page
    found = lint_page(page, decks[name].path)
    assert not found, (
        f"{len(found)} slide lint violations in {name} (screenshots in {LINT_SHOTS}; run "
        f"`python tests/slide_lint.py {decks[name].path}` by hand):\n"
        + "\n".join(str(v) for v in found)
    )
    assert left_the_machine(log) == [] and log["errors"] == []


def test_no_exported_html_lesson_shows_an_assert(site, offline_page):
    _, _, exported = site
    page, _ = offline_page
    found = [v for html in exported for v in lint_page(page, html)]
    assert [html.stem for html in exported] == [s.stem for s in LESSONS]
    assert not found, "\n".join(str(v) for v in found)


def _svg(
    font_size: float, texts: int = 12, width: int = 1200, height: int = 300
) -> str:
    words = "".join(
        f'<text x="{20 + 90 * (i % 12)}" y="{40 + 60 * (i // 12)}" '
        f'font-size="{font_size}">node{i}</text>'
        for i in range(texts)
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}pt" height="{height}pt" '
        f'viewBox="0 0 {width} {height}">{words}</svg>'
    )


def _svg_styled(font_size: float) -> str:
    """`_svg`'s picture with its text sized by a style sheet: the deck builder plans by
    font-size attributes (what Graphviz writes) and cannot see it; the lint must."""
    plain = re.sub(r' font-size="[^"]*"', "", _svg(font_size))
    style = f"<style>.styled text {{ font-size: {font_size}px }}</style>"
    return plain.replace("<svg ", '<svg class="styled" ', 1).replace(
        ">", ">" + style, 1
    )


def _png(dpi: int) -> str:
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(3, 2), dpi=dpi)
    axes.plot([0, 1], [0, 1])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


def _picture(mime: str, data: str):
    from nbformat.v4 import new_code_cell, new_output

    cell = new_code_cell("picture", metadata={"tags": ["hide-input"]})
    cell.outputs = [new_output("display_data", {mime: data, "text/plain": "picture"})]
    return cell


@pytest.fixture(scope="module")
def lint_demo(tmp_path_factory):
    """A deck with one known fault per slide, and the rule each slide must break."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    def slide(title, *cells):
        return [
            new_markdown_cell(
                f"## {title}", metadata={"slideshow": {"slide_type": "slide"}}
            ),
            *cells,
        ]

    error = new_code_cell("1 / 0")
    error.outputs = [
        new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=[
                "Traceback (most recent call last):",
                "ZeroDivisionError: division by zero",
            ],
        )
    ]
    prose = " ".join(["word"] * 75)
    wide = new_code_cell("total = " + " + ".join(f"value_{i}" for i in range(40)))
    notes = new_markdown_cell(
        " ".join(["spoken"] * 200), metadata={"slideshow": {"slide_type": "notes"}}
    )
    cells = [
        new_markdown_cell("# 03 · Lint demo\n\n- one thing\n\n*About 5 minutes.*"),
        *slide("Assert", new_code_cell("x = 1\nassert x == 1")),
        *slide("Words", new_markdown_cell(prose)),
        *slide("Tall", new_code_cell("\n".join(f"y{i} = {i}" for i in range(70)))),
        *slide("Small diagram", _picture("image/svg+xml", _svg_styled(5))),
        *slide("Traceback", error),
        *slide("Small plot", _picture("image/png", _png(40))),
        *slide(
            "Fine",
            new_code_cell("z = 2 * 3"),
            _picture("image/svg+xml", _svg(30, 6)),
            notes,
        ),
        *slide("Fine plot", _picture("image/png", _png(200))),
        *slide("Wide code", wide),
    ]
    out = tmp_path_factory.mktemp("lint")
    nbformat.write(new_notebook(cells=cells), out / "03_lint_demo.ipynb")
    [deck] = build_slides([out / "03_lint_demo.ipynb"], out / "slides")
    expected = {
        2: {"assert"},
        3: {"prose"},
        4: {"scrolls"},
        5: {"small-text"},
        6: {"traceback"},
        7: {"small-text"},
        10: {"scrolls"},
    }
    return deck, expected


@machinery
def test_the_slide_lint_finds_each_fault_on_its_slide_and_nothing_on_good_ones(
    lint_demo, offline_page, tmp_path
):
    deck, expected = lint_demo
    page, _ = offline_page
    found = lint_page(page, deck.path, tmp_path)
    by_slide = {}
    for violation in found:
        by_slide.setdefault(violation.slide, set()).add(violation.rule)
    assert by_slide == expected, "\n".join(str(v) for v in found)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f"03_lint_demo-{n:02d}.png" for n in sorted(expected)
    ]
    small = {v.slide: v.detail for v in found if v.rule == "small-text"}
    assert (
        "svg median text" in small[5] and "estimated from 10 pt at 40 dpi" in small[7]
    )
    assert next(v.detail for v in found if v.slide == 10).endswith("px to the side")


@machinery
def test_the_slide_lint_runs_by_hand_and_exits_1_on_violations(lint_demo):
    import subprocess
    import sys

    deck, _ = lint_demo
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "slide_lint.py"),
            str(deck.path),
            "--no-screenshots",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "03_lint_demo: slide 2 (1.0): assert: assert x == 1" in done.stdout
    assert done.stdout.strip().endswith("violations in 1 page.")


@machinery
def test_handout_pdf_has_one_page_per_slide(site, tmp_path):
    from jaxtour.slides._pdf import count_pages, print_deck

    decks, _, _ = site
    deck = decks[LESSONS[0].stem]
    pdf = print_deck(deck.path, tmp_path / "handout.pdf", chromium())
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and count_pages(data) == deck.slides
    assert b"/FontFile" in data  # text was printed: blank pages embed no font
    assert sorted(p.name for p in tmp_path.iterdir()) == ["handout.pdf"]


@machinery
def test_speaker_notes_open_on_s_offline(offline_page, tmp_path):
    import nbformat
    from nbformat.v4 import new_markdown_cell, new_notebook

    cells = [
        new_markdown_cell(
            "# 03 · Notes demo", metadata={"slideshow": {"slide_type": "slide"}}
        ),
        new_markdown_cell(
            "Tell the room about tracers.",
            metadata={"slideshow": {"slide_type": "notes"}},
        ),
    ]
    nbformat.write(new_notebook(cells=cells), tmp_path / "03_notes_demo.ipynb")
    [deck] = build_slides([tmp_path / "03_notes_demo.ipynb"], tmp_path / "slides")
    page, log = offline_page
    open_deck(page, deck.path)
    assert page.is_hidden("aside.notes")  # on the slide: not shown
    with page.expect_popup() as opened:
        page.keyboard.press("s")
    speaker = opened.value
    notes = speaker.wait_for_selector(".speaker-controls-notes .value", timeout=15_000)
    speaker.wait_for_function(
        "() => document.querySelector('.speaker-controls-notes .value').textContent"
        ".includes('tracers')",
        timeout=15_000,
    )
    assert "Tell the room about tracers." in notes.inner_text()
    speaker.screenshot(path=SCREENSHOTS / "speaker-view.png")
    assert left_the_machine(log) == [] and log["errors"] == []


# --- a presenter with a clicker --------------------------------------------------------------

# Where the deck is ("h.v") and whether it is at its end, in one round trip.
_WHERE = """() => { const i = Reveal.getIndices();
  return [i.h + '.' + (i.v || 0),
          Reveal.isLastSlide() && !Reveal.availableFragments().next]; }"""


def _press_to_the_end(page, key: str, limit: int) -> list[str]:
    """Press `key` (as a presenter or a clicker does) until the last slide; the slides
    shown, in order, as "h.v"."""
    page.click("body")
    here, at_the_end = page.evaluate(_WHERE)
    seen = [here]
    for _ in range(limit):
        if at_the_end:
            break
        page.keyboard.press(key)
        here, at_the_end = page.evaluate(_WHERE)
        if here != seen[-1]:
            seen.append(here)
    return seen


def _all_slides(page) -> list[str]:
    return page.evaluate(
        "() => Reveal.getSlides().map(s => { const i = Reveal.getIndices(s); "
        "return i.h + '.' + (i.v || 0); })"
    )


@machinery
@pytest.mark.parametrize("name", [s.stem for s in LESSONS])
def test_each_deck_opens_offline_and_the_right_arrow_reaches_every_slide_in_order(
    site, offline_page, name
):
    # one opening of the deck, as a presenter's: from file:// with the network blocked,
    # on its title slide, then the arrow key to the end
    decks, _, _ = site
    page, log = offline_page
    open_deck(page, decks[name].path)
    assert page.evaluate("Reveal.getTotalSlides()") == decks[name].slides
    assert page.evaluate("Reveal.isFirstSlide()")
    assert page.inner_text(".reveal .slides section.present h1") == decks[name].title
    pressed = _press_to_the_end(page, "ArrowRight", 4 * decks[name].slides)
    assert pressed == _all_slides(page), f"{name}: → skipped or reordered slides"
    assert len(pressed) == decks[name].slides
    assert page.title() == f"{decks[name].title} · jaxtour slides"
    assert left_the_machine(log) == [], (
        "a deck must not fetch anything from the network"
    )
    assert log["errors"] == []


@pytest.fixture(scope="module")
def stacked_deck(tmp_path_factory):
    """A deck of slides and vertical stacks (subslides), each slide with notes."""
    import nbformat
    from nbformat.v4 import new_markdown_cell, new_notebook

    def cell(text, kind):
        return new_markdown_cell(text, metadata={"slideshow": {"slide_type": kind}})

    cells = [cell("# 03 · Stacks demo\n\n*About 20 minutes.*", "slide")]
    for i, kind in enumerate(
        ["slide", "subslide", "subslide", "slide", "subslide", "slide"]
    ):
        cells += [
            cell(f"## Slide {i}", kind),
            cell(f"Say point {i} to the room.", "notes"),
        ]
    folder = tmp_path_factory.mktemp("stacks")
    nbformat.write(new_notebook(cells=cells), folder / "03_stacks_demo.ipynb")
    [deck] = build_slides([folder / "03_stacks_demo.ipynb"], folder / "slides")
    return deck


@machinery
@pytest.mark.parametrize("key", ["ArrowRight", "PageDown"])
def test_a_clicker_walks_every_slide_of_vertical_stacks_in_order(
    stacked_deck, offline_page, key
):
    page, log = offline_page
    open_deck(page, stacked_deck.path)
    seen = _press_to_the_end(page, key, 50)
    assert seen == _all_slides(page)
    assert seen == ["0.0", "1.0", "1.1", "1.2", "2.0", "2.1", "3.0"]
    assert page.title() == "03 · Stacks demo · jaxtour slides"
    assert left_the_machine(log) == [] and log["errors"] == []


@machinery
def test_a_handout_page_shows_the_notes_under_its_slide(stacked_deck, offline_page):
    page, log = offline_page
    page.goto(stacked_deck.path.as_uri() + "?print-pdf")
    page.wait_for_selector("html[data-deck-ready=true]", timeout=30_000)
    pages = page.evaluate(
        """() => Array.from(document.querySelectorAll('.pdf-page')).map(p => {
          const slide = p.querySelector('section').getBoundingClientRect();
          const notes = p.querySelector('.speaker-notes-pdf');
          const top = p.getBoundingClientRect().top;
          return notes ? [notes.textContent.trim(), notes.getBoundingClientRect().top - top,
                          slide.bottom - top] : [null, 0, 0];
        })"""
    )
    assert [text for text, _, _ in pages[1:]] == [
        f"Say point {i} to the room." for i in range(6)
    ]
    for text, notes_top, _ in pages[1:]:
        assert notes_top >= 720, f"the notes {text!r} cover the slide"
    assert left_the_machine(log) == [] and log["errors"] == []


@machinery
def test_a_handout_with_notes_keeps_one_page_per_slide(stacked_deck, tmp_path):
    from jaxtour.slides._pdf import count_pages, print_deck

    pdf = print_deck(stacked_deck.path, tmp_path / "handout.pdf", chromium())
    assert count_pages(pdf.read_bytes()) == stacked_deck.slides == 7


@pytest.fixture(scope="module")
def both_graphviz_deck(tmp_path_factory):
    """A deck of one jaxpr drawn by each Graphviz here, beside code, alone, and too large
    for a slide: the gradient of three branches, which each Graphviz cuts in both
    directions, into 2 x 2 slides (the gradient of four layers made 16 and 12 cuts of the
    same kind, each rendered and linted, for the same two paths: moved to a slide of its
    own, and cut along both axes)."""
    import os
    import shutil

    import jax
    import jax.numpy as jnp
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    from jaxtour._render import render
    from jaxtour.slides import measure
    from jaxtour.viz import draw_jaxpr

    def branches(w, x):
        return (
            jnp.sum(jnp.tanh(x @ w)) + jnp.sum(jnp.sin(x @ w)) + jnp.sum(jnp.cos(x @ w))
        )

    sources = {
        "small": draw_jaxpr(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2)))(1.0).source,
        "large": draw_jaxpr(jax.grad(branches))(
            jnp.ones((4, 4)), jnp.ones((2, 4))
        ).source,
    }
    cells = [new_markdown_cell("# 00 · Pictures\n\n*About 5 minutes.*")]
    renderers = ["embedded"] + (["system"] if shutil.which("dot") else [])
    for which in renderers:
        os.environ["JAXTOUR_RENDERER"] = which
        try:
            drawn = {name: render(s, "svg").decode() for name, s in sources.items()}
        finally:
            os.environ.pop("JAXTOUR_RENDERER")
        measured = measure(drawn["large"])
        assert measured is not None
        width, height = measured.legible_size()
        assert width > 1280 and height > 720, (
            f"the {which} Graphviz's picture needs no cut both ways"
        )
        for name, picture in drawn.items():
            output = new_output("display_data", {"image/svg+xml": picture})
            cells += [
                new_markdown_cell(f"## {name}, drawn by the {which} Graphviz"),
                new_code_cell(
                    "\n".join(f"x{i} = {i}" for i in range(8)), outputs=[output]
                ),
                new_markdown_cell(
                    "Say it.", metadata={"slideshow": {"slide_type": "notes"}}
                ),
            ]
    folder = tmp_path_factory.mktemp("graphviz")
    nbformat.write(new_notebook(cells=cells), folder / "00_pictures.ipynb")
    [deck] = build_slides([folder / "00_pictures.ipynb"], folder / "slides")
    return deck


@machinery
def test_pictures_from_either_graphviz_pass_the_slide_lint(
    both_graphviz_deck, offline_page
):
    page, log = offline_page
    found = lint_page(page, both_graphviz_deck.path)
    assert not found, "\n".join(str(v) for v in found)
    assert both_graphviz_deck.slides > 1 + 2 * 2  # the large picture was given slides
    assert left_the_machine(log) == [] and log["errors"] == []


def _shown(page, piece: str) -> bytes:
    """A screenshot of `piece` alone, 1200 px wide at its own aspect ratio."""
    numbers = re.search(r'viewBox="([^"]*)"', piece).group(1).split()
    width, height = float(numbers[2]), float(numbers[3])
    sized = re.sub(
        r'\swidth="[^"]*" height="[^"]*"',
        f' width="1200" height="{1200 * height / width:.3f}"',
        piece,
        count=1,
    )
    page.set_content(f'<html><body style="margin:0">{sized}</body></html>')
    return page.locator("svg").screenshot()


@machinery
def test_a_cut_pictures_pieces_show_exactly_what_the_uncut_picture_shows(
    offline_page, monkeypatch
):
    """Each piece drops the nodes, edges and clusters outside its part (slides/_cull):
    the oracle is the same piece cut with nothing dropped, pixel for pixel."""
    from test_slides_legible import cut, tall_picture

    import jaxtour.slides._place as place

    page, _ = offline_page
    whole = tall_picture()
    culled = cut(whole)
    monkeypatch.setattr(place, "cull", lambda body, box: body)
    uncut = cut(whole)
    assert len(culled) == len(uncut) >= 3
    for i, (piece, full) in enumerate(zip(culled, uncut, strict=True), 1):
        assert len(piece) < len(full)
        assert _shown(page, piece) == _shown(page, full), f"piece {i} differs"
