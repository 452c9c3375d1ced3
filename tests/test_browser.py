"""The decks in a real browser: Debian's Chromium, headless, with the network blocked.

The decks are built here from lessons this module executes itself: 00 and 03 (pipeline
diagrams), 01 (the autodiff landscape) and 02 (the backward pass), whose slides must show
an SVG; every other lesson is built from its source, which gives the same slides without
outputs. Every
deck is opened from file://, as an instructor opens it in a room with no network.
Screenshots go to build/screenshots/ (or $JAXTOUR_BUILD/screenshots/).
"""

from pathlib import Path

import pytest
from browser import ARGS as CHROMIUM_ARGS
from browser import SCREENSHOTS
from browser import find_chromium as chromium

from jaxtour import _notebooks
from jaxtour.slides import build_slides

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parent.parent
LESSONS = _notebooks.find_notebooks(ROOT / "notebooks")
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


# Press "next" until the end, as a presenter would (fragments too); the slides seen.
_WALK = """() => {
  const seen = new Set();
  for (let step = 0; step < 2000; step++) {
    const at = Reveal.getIndices();
    seen.add(at.h + '.' + (at.v || 0));
    if (Reveal.isLastSlide() && !Reveal.availableFragments().next) break;
    Reveal.next();
  }
  return Array.from(seen);
}"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """(decks by name, slides folder) built from executed 00-03 and the other sources."""
    out = tmp_path_factory.mktemp("tour")
    lessons = [
        _notebooks.execute(source, out / "notebooks")[0] if source.stem in DIAGRAM_SLIDES
        else source
        for source in LESSONS
    ]
    decks = build_slides(lessons, out / "slides")
    return {deck.name: deck for deck in decks}, out / "slides"


@pytest.fixture(scope="module")
def browser():
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
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


def test_the_gate_blocks_and_records_a_request_to_the_network(offline_page):
    page, log = offline_page
    page.set_content('<img src="https://example.org/badge.svg">')
    page.wait_for_timeout(200)
    assert log["blocked"] == ["https://example.org/badge.svg"]


def test_index_links_every_deck_with_its_slide_count(site, offline_page):
    decks, folder = site
    page, log = offline_page
    page.goto((folder / "index.html").as_uri())
    items = page.eval_on_selector_all(
        "li.deck", "items => items.map(i => [i.dataset.deck, +i.dataset.slides, "
        "i.querySelector('a').getAttribute('href')])")
    assert items == [[d.name, d.slides, d.path.name] for d in decks.values()]
    assert [d.name for d in decks.values()] == [s.stem for s in LESSONS]
    page.screenshot(path=SCREENSHOTS / "index.png")
    page.click(f"li.deck[data-deck='{LESSONS[0].stem}'] a")
    page.wait_for_selector("html[data-deck-ready=true]", timeout=15_000)
    assert page.url.endswith(f"/{LESSONS[0].stem}.html")
    assert left_the_machine(log) == [] and log["errors"] == []


@pytest.mark.parametrize("name", [s.stem for s in LESSONS])
def test_deck_opens_offline_with_the_slides_the_builder_counted(site, offline_page, name):
    decks, _ = site
    page, log = offline_page
    open_deck(page, decks[name].path)
    assert page.evaluate("Reveal.getTotalSlides()") == decks[name].slides
    assert page.evaluate("Reveal.isFirstSlide()")
    assert page.inner_text(".reveal .slides section.present h1") == decks[name].title
    assert len(page.evaluate(_WALK)) == decks[name].slides
    assert left_the_machine(log) == [], "a deck must not fetch anything from the network"
    assert log["errors"] == []


@pytest.mark.parametrize("name", list(DIAGRAM_SLIDES))
def test_diagram_slide_shows_its_svg(site, offline_page, name):
    decks, _ = site
    page, log = offline_page
    marker = DIAGRAM_SLIDES[name]
    open_deck(page, decks[name].path)
    page.screenshot(path=SCREENSHOTS / f"{name}-title.png")
    found = page.evaluate(_FIND_SVG_SLIDES, marker)
    assert found, f"no slide of {name} holds an SVG mentioning {marker!r}"
    h, v = found[0]
    page.evaluate(f"Reveal.slide({h}, {v})")
    page.wait_for_function(f"Reveal.getIndices().h === {h} && Reveal.getIndices().v === {v}")
    box = page.evaluate(_MEASURE_SVG, marker)
    page.screenshot(path=SCREENSHOTS / f"{name}-diagram.png")
    assert box["width"] > 100 and box["height"] > 50, box
    assert box["seen"], f"the diagram on slide {h}.{v} of {name} is hidden or off screen"
    assert box["bottom"] <= VIEWPORT["height"], f"the diagram of {name} runs off the slide"
    assert left_the_machine(log) == [] and log["errors"] == []
