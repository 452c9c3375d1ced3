"""Slide lint: walk every slide of a deck at 1280x720 in Chromium; report what a room
can't read.

By hand, on decks or exported HTML lessons (Chromium at /usr/bin/chromium or
$JAXTOUR_CHROMIUM)::

    python tests/slide_lint.py build/slides/03_how_it_works.html [more.html ...]

prints one line per violation (deck, slide number, h.v, rule, detail), saves a screenshot of
each failing slide under build/screenshots/lint/ (or $JAXTOUR_BUILD/screenshots/lint/), and
exits 1 when it found any. The browser test (tests/test_browser.py) runs the same rules on
every deck the tour builds.

The rules, each measured in the page as a projector shows it (viewport 1280x720, reveal.js
scaling the 1280x720 slide to fit, every fragment shown):

- ``scrolls``: the slide's content is taller than the slide: its height after the deck has
  fitted its pictures (``data-jt-natural`` where deck.js then had to zoom the slide out,
  else its ``scrollHeight``) is beyond the deck's 720 px; or a box on it scrolls or clips
  (an output with a vertical scroll bar hides lines, a code line too wide is cut off).
- ``assert``: a line of code on the slide starts with ``assert`` (checks belong in cells
  tagged ``check``, which decks leave out).
- ``traceback``: the slide shows a Python traceback or an error output.
- ``prose``: more than 70 words of visible text outside code blocks, outputs' text, pictures
  and speaker notes (headings count; a word is a run of non-space characters holding a letter
  or a digit).
- ``small-text``: a picture whose median text size is under 12 px on screen
  (`jaxtour.slides.MIN_TEXT_PX`, the rule the deck builder plans every picture's room by).
  For an SVG: the median over its non-empty ``<text>`` elements of each one's font size
  times the scale it is drawn at on screen (its screen width over its width in its own
  units): a property of the picture and its place, not of which fonts the machine has (a
  glyph box's height is). For a raster image (a Matplotlib PNG) the text cannot be
  measured, so it is estimated as Matplotlib's default tick-label font size (10 pt) at
  the image's resolution (the PNG's pHYs chunk; 100 dpi without one, Matplotlib's
  default) times the scale the slide draws the image at (rendered height / natural
  height). A figure drawn with bigger
  fonts is under-estimated, never over-estimated, unless it uses fonts smaller than 10 pt.

In an exported HTML lesson (a page without reveal.js) only the ``assert`` rule applies.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from jaxtour.slides import MIN_TEXT_PX

VIEWPORT = {"width": 1280, "height": 720}
MAX_WORDS = 70
ROOT = Path(__file__).resolve().parent.parent
LINT_SHOTS = (
    Path(os.environ.get("JAXTOUR_BUILD") or ROOT / "build") / "screenshots" / "lint"
)


@dataclass(frozen=True)
class Violation:
    """One rule broken on one slide (``slide`` counts from 1; 0 for a whole HTML lesson)."""

    page: str
    slide: int
    where: str
    rule: str
    detail: str
    screenshot: str = ""

    def __str__(self) -> str:
        at = f"slide {self.slide} ({self.where})" if self.slide else "page"
        return f"{self.page}: {at}: {self.rule}: {self.detail}"


# Shared helpers injected into the page: code lines, prose words, picture text heights.
_HELPERS = r"""
window.__lint = {
  SKIP: 'pre, .jp-CodeCell .jp-InputArea, svg, img, aside.notes, script, style, '
        + '.jp-InputPrompt, .jp-OutputPrompt, .slide-number',
  assertLines(root) {
    const lines = [];
    root.querySelectorAll('.jp-InputArea pre, pre code, .highlight pre').forEach(pre => {
      if (pre.closest('aside.notes')) return;
      pre.textContent.split('\n').forEach(line => {
        if (/^\s*assert\b/.test(line) || /;\s*assert\b/.test(line)) lines.push(line.trim());
      });
    });
    return Array.from(new Set(lines));
  },
  proseWords(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const words = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement;
      if (!el || el.closest(this.SKIP)) continue;
      if (!el.checkVisibility({visibilityProperty: true})) continue;
      node.textContent.split(/\s+/).forEach(w => {
        if (/[\p{L}\p{N}]/u.test(w)) words.push(w);
      });
    }
    return words;
  },
  median(values) {
    const v = values.slice().sort((a, b) => a - b);
    const n = v.length;
    return n ? (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : null;
  },
  pngDpi(src) {
    // pHYs chunk of a base64 PNG data URL: pixels per metre -> dots per inch.
    if (!src.startsWith('data:image/png;base64,')) return null;
    const bytes = atob(src.slice(22, 22 + 4096));
    const at = bytes.indexOf('pHYs');
    if (at < 0 || bytes.charCodeAt(at + 12) !== 1) return null;
    let ppm = 0;
    for (let i = 4; i < 8; i++) ppm = ppm * 256 + bytes.charCodeAt(at + i);
    return ppm * 0.0254;
  },
  pictures(root) {
    const found = [];
    root.querySelectorAll('svg').forEach(svg => {
      if (svg.closest('aside.notes') || svg.parentElement.closest('svg')) return;
      const box = svg.getBoundingClientRect();
      if (box.width < 1 || box.height < 1) return;
      const heights = Array.from(svg.querySelectorAll('text'))
        .filter(t => t.textContent.trim())
        .map(t => {  // font size × screen pixels per unit of the text's own coordinates
          const own = t.getBBox(), seen = t.getBoundingClientRect();
          const font = parseFloat(getComputedStyle(t).fontSize);
          return own.width > 0 ? font * seen.width / own.width : 0;
        })
        .filter(h => h > 0);
      if (heights.length) found.push({kind: 'svg', texts: heights.length,
                                      median: this.median(heights), height: box.height});
    });
    root.querySelectorAll('img').forEach(img => {
      if (img.closest('aside.notes') || !img.naturalHeight) return;
      const box = img.getBoundingClientRect();
      if (box.height < 1) return;
      const dpi = this.pngDpi(img.getAttribute('src') || '') || 100;
      const fontPx = 10 * dpi / 72;
      found.push({kind: 'img', texts: 0, median: fontPx * box.height / img.naturalHeight,
                  height: box.height, dpi: dpi});
    });
    return found;
  },
  tracebacks(root) {
    const hits = [];
    root.querySelectorAll('.jp-OutputArea-output').forEach(out => {
      const text = out.textContent;
      if (/Traceback \(most recent call last\)/.test(text)
          || /^-{5,}\s*$/m.test(text) && /Error|Exception/.test(text)
          || out.dataset.mimeType === 'application/vnd.jupyter.stderr'
             && /^\s*\w*(Error|Exception)\b/m.test(text))
        hits.push(text.trim().split('\n').slice(-1)[0].slice(0, 100));
    });
    return hits;
  },
};
"""

# Every slide of a deck, in order, with its indices: [[h, v], ...].
_SLIDES = """() => Reveal.getSlides().map(s => {
  const at = Reveal.getIndices(s);
  return [at.h, at.v || 0];
})"""

# Go to slide (h, v) with every fragment shown, and measure it. No wait for a frame: the
# deck fitted every slide once when it came up (deck.js), Reveal.slide shows the slide at
# once, and each measure below (sizes, styles) lays the page out first; two frames a slide
# only cost the run time (the measures of every lesson's slides came out the same). So
# every slide of a deck is measured in one call (`_MEASURE_ALL`): one round trip a deck,
# not one a slide.
_MEASURE = """([h, v, height]) => {
  Reveal.slide(h, v, 1000);
  const slide = Reveal.getCurrentSlide();
  slide.querySelectorAll('.fragment').forEach(f => f.classList.add('visible'));
  const scale = Reveal.getScale();
  const boxes = [];
  slide.querySelectorAll('*').forEach(el => {
    if (el.closest('aside.notes') || el.closest('svg')) return;
    const style = getComputedStyle(el);
    const tag = el.tagName.toLowerCase();
    const below = el.scrollHeight - el.clientHeight, side = el.scrollWidth - el.clientWidth;
    if (/(auto|scroll)/.test(style.overflowY) && below > 2)
      boxes.push(tag + ' hides ' + Math.round(below) + ' px below');
    if (/(auto|scroll|hidden)/.test(style.overflowX) && side > 2)
      boxes.push(tag + ' hides ' + Math.round(side) + ' px to the side');
  });
  const L = window.__lint;
  return {
    content: +(slide.dataset.jtNatural || slide.scrollHeight),
    height: height,
    scrolled: slide.classList.contains('jt-scroll'),
    boxes: boxes,
    asserts: L.assertLines(slide),
    words: L.proseWords(slide).length,
    pictures: L.pictures(slide),
    tracebacks: L.tracebacks(slide),
    title: (slide.querySelector('h1, h2, h3') || {textContent: ''})
      .textContent.trim().slice(0, 60),
    scale: scale,
    notes: !!slide.querySelector('aside.notes'),
  };
}"""
# [[h, v, measures], ...] of every slide, in order, each measured as `_MEASURE` does.
_MEASURE_ALL = f"""height => {{
  const measure = {_MEASURE};
  return ({_SLIDES})().map(([h, v]) => [h, v, measure([h, v, height])]);
}}"""
# Show slide (h, v) as `_MEASURE` measured it, for a screenshot.
_SHOW = """([h, v]) => {
  Reveal.slide(h, v, 1000);
  Reveal.getCurrentSlide().querySelectorAll('.fragment')
    .forEach(f => f.classList.add('visible'));
}"""


def slide_violations(
    name: str, number: int, where: str, m: dict
) -> list[tuple[str, str]]:
    """The (rule, detail) pairs a slide's measurements `m` break."""
    found = []
    if m["content"] > m["height"] + 1 or m["scrolled"]:
        found.append(
            ("scrolls", f"content {m['content']} px tall on a {m['height']} px slide")
        )
    for box in m["boxes"]:
        found.append(("scrolls", f"a box on the slide scrolls or clips: {box}"))
    for line in m["asserts"]:
        found.append(("assert", line[:90]))
    for line in m["tracebacks"]:
        found.append(("traceback", line))
    if m["words"] > MAX_WORDS:
        found.append(
            (
                "prose",
                f"{m['words']} words of prose (at most {MAX_WORDS}; move the rest "
                "to speaker notes)",
            )
        )
    for pic in m["pictures"]:
        if pic["median"] < MIN_TEXT_PX:
            how = (
                f"{pic['texts']} texts"
                if pic["kind"] == "svg"
                else f"estimated from 10 pt at {pic['dpi']:.0f} dpi"
            )
            found.append(
                (
                    "small-text",
                    f"{pic['kind']} median text {pic['median']:.1f} px "
                    f"(< {MIN_TEXT_PX:g}; {how})",
                )
            )
    return found


def lint_page(
    page, path: Path, shots: Path | None = LINT_SHOTS, every_slide: bool = False
) -> list[Violation]:
    """Lint one deck (or exported HTML lesson) at `path` in a Playwright `page`.

    Saves a screenshot of each failing slide under `shots` (of every slide with
    `every_slide`: a contact sheet of the deck), named ``<deck>-<slide number>.png``.
    """
    page.set_viewport_size(VIEWPORT)
    page.goto(Path(path).resolve().as_uri())
    name = Path(path).stem
    is_deck = page.evaluate("() => !!document.querySelector('.reveal .slides')")
    if not is_deck:
        page.add_script_tag(content=_HELPERS)
        lines = page.evaluate("() => window.__lint.assertLines(document.body)")
        return [Violation(name, 0, "", "assert", line[:90]) for line in lines]
    found = []
    for number, (h, v, measured) in enumerate(_measure_deck(page), start=1):
        broken = slide_violations(name, number, f"{h}.{v}", measured)
        shot = ""
        if (broken or every_slide) and shots is not None:
            shots.mkdir(parents=True, exist_ok=True)
            shot = str(shots / f"{name}-{number:02d}.png")
            page.evaluate(_SHOW, [h, v])
            page.screenshot(path=shot)
        found += [
            Violation(name, number, f"{h}.{v}", rule, detail, shot)
            for rule, detail in broken
        ]
    return found


def _measure_deck(page) -> list:
    """[h, v, measures] of every slide of the deck open in `page`, in one call."""
    page.wait_for_selector("html[data-deck-ready=true]", timeout=20_000)
    # a picture's natural size is known once it is decoded
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)")
    page.add_script_tag(content=_HELPERS)
    return page.evaluate(_MEASURE_ALL, page.evaluate("() => Reveal.getConfig().height"))


def deck_stats(page, path: Path) -> dict:
    """Per deck: slides, pictures, slides with speaker notes, smallest median picture text."""
    page.set_viewport_size(VIEWPORT)
    page.goto(Path(path).resolve().as_uri())
    stats = {"slides": 0, "pictures": 0, "notes": 0, "smallest_text_px": None}
    for _, _, measured in _measure_deck(page):
        stats["slides"] += 1
        stats["pictures"] += len(measured["pictures"])
        stats["notes"] += measured["notes"]
        for pic in measured["pictures"]:
            if (
                stats["smallest_text_px"] is None
                or pic["median"] < stats["smallest_text_px"]
            ):
                stats["smallest_text_px"] = round(pic["median"], 1)
    return stats


def chromium_executable() -> str:
    """The system Chromium or Chrome, as `jaxtour slides --pdf` finds it."""
    from jaxtour.slides._pdf import INSTALL, find_chromium

    return find_chromium() or sys.exit(f"slide_lint: {INSTALL}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "pages", nargs="+", type=Path, help="deck or exported lesson .html"
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="also print slides, pictures, notes and smallest text per deck",
    )
    parser.add_argument("--no-screenshots", action="store_true")
    parser.add_argument(
        "--every-slide",
        action="store_true",
        help="save a screenshot of every slide, not only the failing ones",
    )
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from browser import ARGS

    total = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_executable(), args=ARGS
        )
        page = browser.new_page(viewport=VIEWPORT)
        for path in args.pages:
            found = lint_page(
                page,
                path,
                None if args.no_screenshots else LINT_SHOTS,
                args.every_slide,
            )
            for violation in found:
                print(violation)
            total += len(found)
            if args.stats and page.evaluate("() => !!window.Reveal"):
                print(f"{path.stem}: {deck_stats(page, path)}")
        browser.close()
    print(
        f"{total} violation{'s' if total != 1 else ''} in {len(args.pages)} page"
        f"{'s' if len(args.pages) != 1 else ''}."
    )
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
