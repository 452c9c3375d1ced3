"""Slides: which cells become slides, decks that work offline, the index and the CLI.

The slide count the builder reports is checked against the HTML nbconvert writes (its
<section> elements); the browser test checks it once more against reveal.js itself.
"""

import hashlib
import json
import os
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from jaxtour import Diagram
from jaxtour.cli import _slides as slides_cli
from jaxtour.cli import _tour, main
from jaxtour.lesson import Kind, View, find_lessons, kind_of, notebook_text
from jaxtour.slides import (
    SlidesError,
    _pdf,
    assets_dir,
    build_slides,
    count_slides,
    lesson_title,
    plan_slides,
    remote_resources,
    write_index,
)

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "src" / "jaxtour" / "slides" / "assets"
LESSONS = find_lessons(ROOT / "notebooks")

# Forks of this process that run Python code (os.fork, a preexec_fn), as JAX's own
# warning sees them; a subprocess started without Python code in the child adds none.
_PYTHON_FORKS: list[int] = []
os.register_at_fork(before=lambda: _PYTHON_FORKS.append(os.getpid()))


def md(text, **metadata):
    return new_markdown_cell(text, metadata=metadata)


def code(text, **metadata):
    return new_code_cell(text, metadata=metadata)


def kinds(planned):
    return [c.metadata.slideshow.slide_type for c in planned.cells]


class _Sections(HTMLParser):
    """Counts the slides in a deck's HTML: the innermost <section> elements."""

    def __init__(self):
        super().__init__()
        self.depth, self.leaves, self._opened_inner = 0, 0, []

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            if self._opened_inner:
                self._opened_inner[-1] = True
            self.depth += 1
            self._opened_inner.append(False)

    def handle_endtag(self, tag):
        if tag == "section":
            self.depth -= 1
            self.leaves += not self._opened_inner.pop()


def slides_in_html(html: str) -> int:
    parser = _Sections()
    parser.feed(html)
    assert parser.depth == 0, "unbalanced <section> tags"
    return parser.leaves


def write(tmp_path, cells, name="03_demo.ipynb"):
    path = tmp_path / name
    nbformat.write(new_notebook(cells=cells), path)
    return path


# --- which cells become slides --------------------------------------------------------------


def test_headings_choose_slides_when_the_notebook_chooses_none():
    planned = plan_slides(
        new_notebook(
            cells=[
                md("# Title\n\nintro"),
                code("import x", tags=["setup"]),
                md("text"),
                md("## Part"),
                code("1"),
                md("### Detail"),
                code("2"),
            ]
        )
    )
    # the title cell's prose goes to the title slide's speaker notes
    assert kinds(planned) == ["slide", "notes", "-", "slide", "-", "subslide", "-"]
    assert [c.source for c in planned.cells[:2]] == ["# Title", "intro"]
    assert count_slides(planned) == 3
    assert all("import x" not in c.source for c in planned.cells)


def test_checks_solutions_hints_and_exercise_code_never_reach_a_slide():
    planned = plan_slides(
        new_notebook(
            cells=[
                md("# 03 · T", slideshow={"slide_type": "slide"}),
                code("y = f(1)"),
                code("assert y == 2", tags=["check"], jupyter={"source_hidden": True}),
                md(
                    "## Your turn: f", tags=["exercise"]
                ),  # opens a slide even when not asked to
                code(
                    "def ex_f(x):\n    ...",
                    tags=["exercise"],
                    slideshow={"slide_type": "skip"},
                ),
                code("def ex_f(x):\n    return 2 * x", tags=["solution"]),
                md("<details>Hint 1</details>", tags=["hint"]),
                code("check(ex_f)", slideshow={"slide_type": "skip"}),
                code("assert check(ex_f, quiet=True).passed", tags=["check"]),
            ]
        )
    )
    assert [c.source for c in planned.cells] == [
        "# 03 · T",
        "y = f(1)",
        "## Your turn: f",
        "check(ex_f)",
    ]
    assert kinds(planned) == ["slide", "-", "slide", "skip"]
    assert count_slides(planned) == 2


def test_a_comment_in_a_code_block_is_no_heading():
    block = "```python\n# load the data\nx = load()\n```"
    untitled = new_notebook(cells=[md(f"Using the loader:\n\n{block}"), md("## Step")])
    assert lesson_title(untitled, "01_demo") == "01_demo"
    planned = plan_slides(untitled)
    assert planned.cells[0].source == untitled.cells[0].source  # no title slide made
    titled = new_notebook(cells=[md(f"# 01 · Demo\n\n{block}\n\n- one"), md("## Step")])
    assert lesson_title(titled, "01_demo") == "01 · Demo"
    title, notes = plan_slides(titled).cells[:2]
    assert title.source == "# 01 · Demo\n\n- one"
    assert notes.source == block and notes.metadata.slideshow.slide_type == "notes"


def test_explicit_choices_are_kept_and_turn_the_heading_rule_off():
    planned = plan_slides(
        new_notebook(
            cells=[
                md("# Title", slideshow={"slide_type": "slide"}),
                md("## Not a slide here"),
                code("1", tags=["subslide"]),
                code("2", slideshow={"slide_type": "fragment"}),
                md("say this", tags=["notes"]),
                code("3", slideshow={"slide_type": ""}),
            ]
        )
    )
    assert kinds(planned) == ["slide", "-", "subslide", "fragment", "notes", "-"]
    assert count_slides(planned) == 2


def test_the_original_notebook_is_left_alone():
    notebook = new_notebook(cells=[md("# T"), code("1", tags=["setup"])])
    plan_slides(notebook)
    assert len(notebook.cells) == 2 and "slideshow" not in notebook.cells[0].metadata


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            code("1", slideshow={"slide_type": "sldie"}),
            "cell 1 of 03_demo.ipynb has slideshow.slide_type 'sldie'; "
            "use one of slide, subslide, fragment, -, skip, notes.",
        ),
        (
            code("1", tags=["slide", "skip"]),
            "cell 1 of 03_demo.ipynb is tagged with two slide types (slide, skip); keep one.",
        ),
    ],
)
def test_a_bad_slide_choice_says_which_cell_and_what_to_use(cell, message):
    with pytest.raises(SlidesError) as err:
        plan_slides(new_notebook(cells=[md("# T"), cell]), "03_demo.ipynb")
    assert str(err.value) == message


def test_a_notebook_with_nothing_to_show_is_refused():
    with pytest.raises(
        SlidesError,
        match=r"^03_demo has no cell left to show: every cell is hidden, skipped, a "
        r"note or blank\. Remove `skip` from at least one cell with text or code\.$",
    ):
        plan_slides(
            new_notebook(cells=[code("1", tags=["setup"]), md("x", tags=["skip"])]),
            "03_demo",
        )


@pytest.mark.parametrize("blank", [md("  \n"), code("")], ids=["markdown", "code"])
def test_hidden_cells_and_one_blank_visible_cell_are_refused_not_a_blank_deck(blank):
    cells = [code("1", tags=["setup"]), md("# T", tags=["skip"]), blank]
    with pytest.raises(SlidesError, match=r"^03_demo has no cell left to show"):
        plan_slides(new_notebook(cells=cells), "03_demo")


def test_a_notebook_whose_cells_the_deck_leaves_out_is_told_they_are_hidden():
    # it has text and code, none of it for a deck: not "no cell with text or code"
    with pytest.raises(SlidesError, match=r"^03_demo has no cell left to show"):
        plan_slides(
            new_notebook(cells=[code("1", tags=["setup"]), code("2", tags=["check"])]),
            "03_demo",
        )


# --- decks ----------------------------------------------------------------------------------

SHAPES = {
    "headings": [md("# A"), code("1"), md("## B"), md("### C"), code("2")],
    "skipped first": [
        md("hidden", tags=["skip"]),
        md("# A"),
        code("1", tags=["subslide"]),
    ],
    "fragments and notes": [
        md("# A", slideshow={"slide_type": "slide"}),
        code("1", tags=["fragment"]),
        md("n", tags=["notes"]),
        md("## B", tags=["slide"]),
        code("2", tags=["fragment"]),
    ],
    "one slide": [md("just text")],
}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_slide_count_matches_the_sections_nbconvert_writes(tmp_path, shape):
    [deck] = build_slides([write(tmp_path, SHAPES[shape])], tmp_path / "slides", ASSETS)
    assert deck.slides == slides_in_html(deck.path.read_text()) >= 1


def test_a_deck_shows_a_diagram_as_inline_svg_and_loads_nothing_remote(tmp_path):
    svg = Diagram("digraph { jaxpr -> StableHLO }", "two").svg()
    cell = code("d", tags=["hide-input"])
    cell.outputs = [
        new_output(
            "execute_result",
            {"image/svg+xml": svg, "text/plain": "d"},
            execution_count=1,
        )
    ]
    badge = (
        "[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        "(https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/x.ipynb)"
    )
    cells = [md(f"# T\n\n{badge}"), cell, md(f"## B\n\n{badge}")]
    [deck] = build_slides([write(tmp_path, cells)], tmp_path / "slides", ASSETS)
    html = deck.path.read_text()
    inline = re.search(r"<svg.*?</svg>", html, re.DOTALL).group(0)
    assert {e.text for e in ET.fromstring(inline).iter() if e.text} >= {
        "jaxpr",
        "StableHLO",
    }
    assert (
        'src="data:image/svg+xml' not in html and "hl-ipython3" not in html
    )  # input hidden
    # the title slide drops the badge; a later one keeps its link as text
    assert html.count(">Open in Colab</a>") == 1 and "colab-badge.svg" not in html
    assert remote_resources(html) == set() and deck.executed


def test_a_deck_shows_a_big_diagrams_svg_placed_and_cut_not_its_page(tmp_path):
    tall = Diagram("digraph { " + " -> ".join(map(str, range(30))) + " }", "tall")
    bundle = tall._repr_mimebundle_()
    assert "text/html" in bundle  # its page, which nbconvert would rank above the SVG
    lessons = []
    for data in (bundle, {k: v for k, v in bundle.items() if k != "text/html"}):
        cell = code("tall", tags=["hide-input"], slideshow={"slide_type": "-"})
        cell.outputs = [new_output("display_data", data)]
        lessons.append(new_notebook(cells=[md("# T"), md("## The chain"), cell]))
    page, alone = (plan_slides(n).cells[2].outputs for n in lessons)
    assert page == alone  # planned as if the output held the SVG alone
    nbformat.write(lessons[0], tmp_path / "03_demo.ipynb")
    [deck] = build_slides([tmp_path / "03_demo.ipynb"], tmp_path / "slides", ASSETS)
    html = deck.path.read_text()
    assert "jt-page" not in html and "jt-groups" not in html  # the page stays out
    pieces = re.findall(r"<svg data-jt-min-height=", html)  # placed, fitted, cut
    assert len(pieces) >= 2 and deck.slides == 2 + len(pieces)


def test_a_remote_image_in_a_lesson_is_refused_with_what_to_do(tmp_path):
    lesson = write(tmp_path, [md("# T\n\n![logo](https://example.org/logo.png)")])
    with pytest.raises(SlidesError) as err:
        build_slides([lesson], tmp_path / "slides", ASSETS)
    assert str(err.value) == (
        "The deck of 03_demo.ipynb would fetch https://example.org/logo.png from the network, "
        "and decks must work offline. Make it a cell's output or a cell attachment (both are "
        "embedded in the deck), or remove it from the lesson."
    )
    assert not (tmp_path / "slides" / "03_demo.html").exists()


def test_a_picture_beside_the_lesson_is_embedded_in_the_deck(tmp_path):
    # the deck goes to the slides folder, where figures/ is not: it must carry the file
    (tmp_path / "figures").mkdir()
    svg = Diagram("digraph { a -> b }", "ab").svg()
    (tmp_path / "figures" / "ab.svg").write_text(svg)
    text = "# T\n\n![ab](figures/ab.svg)\n\n<img src='figures/ab.svg'>"
    [deck] = build_slides([write(tmp_path, [md(text)])], tmp_path / "slides", ASSETS)
    html = deck.path.read_text()
    assert "figures/ab.svg" not in html
    assert html.count('src="data:image/svg+xml;base64,') == 2


def test_a_picture_the_deck_cannot_embed_is_refused_with_what_to_do(tmp_path):
    lesson = write(tmp_path, [md("# T\n\n![arch](figures/arch.png)")])
    with pytest.raises(SlidesError) as err:
        build_slides([lesson], tmp_path / "slides", ASSETS)
    assert str(err.value) == (
        "The deck of 03_demo.ipynb would show figures/arch.png from a file beside it, "
        "which the slides folder does not hold: the slide would show it broken. A deck "
        "embeds a markdown cell's picture (![..](path) or <img>) found at its path "
        f"relative to the lesson (in {tmp_path}): put it there, or make it a cell "
        "attachment or an image output."
    )
    assert not (tmp_path / "slides").exists()


def test_tex_maths_warns_that_the_offline_deck_shows_it_as_typed(tmp_path):
    lesson = write(
        tmp_path,
        [
            md(r"# T\n\nthe loss starts near $\ln 10 \approx 2.30$"),
            md("costs $5, or $10"),
        ],
    )
    with pytest.warns(UserWarning) as caught:
        build_slides([lesson], tmp_path / "slides", ASSETS)
    assert [str(w.message) for w in caught] == [
        r"03_demo.ipynb: the deck shows TeX as typed ($\ln 10 \approx 2.30$): offline decks "
        "have no MathJax. Write the maths in Unicode or as code (ln 10 ≈ 2.30)."
    ]


def test_remote_resources_finds_what_a_browser_would_fetch():
    html = (
        '<link rel="stylesheet" href="//cdn.example/x.css"><a href="https://a.org">a</a>'
        '<style>@import url("https://fonts.example/f.css");</style>'
        '<svg><image href="http://i.example/p.png"/></svg><script src="local.js"></script>'
    )
    assert remote_resources(html) == {
        "//cdn.example/x.css",
        "https://fonts.example/f.css",
        "http://i.example/p.png",
    }


# --- every lesson ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lesson_decks(tmp_path_factory):
    out = tmp_path_factory.mktemp("slides")
    return build_slides(LESSONS, out, ASSETS), out


@pytest.mark.slow  # a deck of every lesson
def test_every_lesson_becomes_an_offline_deck_without_its_setup_cell(lesson_decks):
    decks, out = lesson_decks
    assert [d.name for d in decks] == [s.stem for s in LESSONS]
    for deck in decks:
        html = deck.path.read_text()
        assert deck.slides == slides_in_html(html) >= 3, deck.name
        assert remote_resources(html) == set(), deck.name
        assert "find_spec" not in html, (
            f"the set-up cell of {deck.name} reached its deck"
        )
        assert deck.title.startswith(deck.name[:2] + " · ")
    for linked in (
        "reveal.js/dist/reveal.js",
        "reveal.js/plugin/notes/notes.js",
        "reveal.js/dist/theme/white.css",
    ):
        assert (out / linked).is_file()


def test_the_index_links_every_deck_and_the_manifest_lists_their_slides(lesson_decks):
    decks, out = lesson_decks
    index = (out / "index.html").read_text()
    listed = re.findall(r'<li class="deck"[^>]*>\s*<a href="([^"]+)"', index)
    scheduled = re.findall(r'<tr class="lesson"[^>]*>.*?<a href="([^"]+)"', index, re.S)
    assert listed == scheduled == [d.path.name for d in decks]
    assert remote_resources(index) == set()
    manifest = json.loads((out / "decks.json").read_text())
    assert [(m["name"], m["slides"]) for m in manifest] == [
        (d.name, d.slides) for d in decks
    ]


def test_lessons_that_choose_their_slides_skip_the_setup_cell_live_too():
    # RISE (live presenting in JupyterLab) reads slideshow metadata, not our tags.
    for source in LESSONS:
        cells = nbformat.reads(
            notebook_text(source, View.INSTRUCTOR), as_version=4
        ).cells
        if any("slideshow" in c.metadata for c in cells):
            setup = [c for c in cells if kind_of(c) is Kind.SETUP]
            assert all(
                c.metadata["slideshow"]["slide_type"] == "skip" for c in setup
            ), source


# --- assets, vendored reveal.js -------------------------------------------------------------


def test_vendored_reveal_matches_the_checksums_in_its_readme():
    readme = (ASSETS / "vendor" / "README.md").read_text()
    listed = dict(
        (path, digest)
        for digest, path in re.findall(
            r"^([0-9a-f]{64})  (reveal\.js/\S+)$", readme, re.MULTILINE
        )
    )
    vendored = {
        str(p.relative_to(ASSETS / "vendor")): p
        for p in (ASSETS / "vendor" / "reveal.js").rglob("*")
        if p.is_file()
    }
    assert sorted(listed) == sorted(vendored)
    for path, file in vendored.items():
        assert hashlib.sha256(file.read_bytes()).hexdigest() == listed[path], path


def test_missing_assets_say_where_jaxtour_looked_and_what_to_pass(tmp_path):
    with pytest.raises(SlidesError) as err:
        assets_dir(tmp_path)
    assert str(err.value) == (
        f"No slide assets (templates/deck.html.j2 and vendor/reveal.js/) in {tmp_path}. Pass "
        "--assets DIR (or set JAXTOUR_SLIDES_ASSETS) to a folder holding both, or leave both "
        "out to use the copy inside jaxtour."
    )


def test_assets_are_package_data_found_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("JAXTOUR_SLIDES_ASSETS", raising=False)
    import jaxtour.slides

    found = assets_dir()
    assert found == Path(jaxtour.slides.__file__).parent / "assets"
    assert (found / "vendor" / "reveal.js" / "plugin" / "notes" / "notes.js").is_file()
    monkeypatch.setenv("JAXTOUR_SLIDES_ASSETS", str(ASSETS))
    assert assets_dir() == ASSETS


def test_pyproject_ships_every_asset_file_as_package_data():
    import fnmatch
    import tomllib

    table = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = table["package-data"]["jaxtour.slides"]
    package = ROOT / "src" / "jaxtour" / "slides"
    files = [
        str(p.relative_to(package))
        for p in ASSETS.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    # setuptools globs match within one folder level, as fnmatch does with "/" excluded
    unshipped = [
        f
        for f in files
        if not any(
            fnmatch.fnmatch(f, pat) and f.count("/") == pat.count("/")
            for pat in patterns
        )
    ]
    assert files and unshipped == []


# --- the command and the tour step ----------------------------------------------------------


def test_jaxtour_slides_builds_decks_and_says_where(tmp_path, capsys):
    lesson = write(tmp_path, [md("# 03 · Demo"), code("1")])
    assert main(["slides", str(lesson), "--build-dir", str(tmp_path / "build")]) == 0
    out = capsys.readouterr().out
    assert (
        f"{tmp_path / 'build' / 'slides' / '03_demo.html'}    1 slides  03 · Demo"
        in out
    )
    assert (tmp_path / "build" / "slides" / "index.html").is_file()


def test_jaxtour_slides_of_no_lesson_file_is_a_usage_error(tmp_path, capsys):
    lesson = tmp_path / "03_demo.txt"
    lesson.write_text("")
    with pytest.raises(SystemExit) as usage:
        main(["slides", str(lesson), "--build-dir", str(tmp_path)])
    assert usage.value.code == 2
    assert capsys.readouterr().err.endswith(
        "jaxtour slides: error: argument LESSON: must be a lesson's .ipynb or its .py "
        f"source (none: every lesson's deck); got {str(lesson)!r}\n"
    )
    assert list(tmp_path.iterdir()) == [lesson]


def test_two_lessons_of_one_name_are_refused_before_anything_is_written(
    tmp_path, capsys
):
    # Their decks would both be 03_demo.html: the second would overwrite the first.
    for day in ("d1", "d2"):
        (tmp_path / day).mkdir()
        write(tmp_path / day, [md("# 03 · Demo"), code("1")])
    first, second = tmp_path / "d1" / "03_demo.ipynb", tmp_path / "d2" / "03_demo.ipynb"
    build = tmp_path / "build"
    assert main(["slides", str(first), str(second), "--build-dir", str(build)]) == 1
    assert capsys.readouterr().err == (
        f"jaxtour slides: {first} and {second} would both make the deck 03_demo.html: "
        "give only one of them, or rename one.\n"
    )
    assert not build.exists()


@pytest.mark.parametrize("fault", ["no notebook", "remote image"])
def test_a_lesson_that_cannot_become_a_deck_leaves_no_folder(fault, tmp_path, capsys):
    # The good lesson comes first: neither its deck nor reveal.js may be written.
    good = write(tmp_path, [md("# 02 · Fine"), code("1")], name="02_fine.ipynb")
    if fault == "no notebook":
        bad = tmp_path / "03_demo.ipynb"
        bad.write_text("{not json")
    else:
        bad = write(tmp_path, [md("# T\n\n![logo](https://example.org/logo.png)")])
    build = tmp_path / "build"
    assert main(["slides", str(good), str(bad), "--build-dir", str(build)]) == 1
    assert "03_demo.ipynb" in capsys.readouterr().err
    assert not build.exists()


@pytest.mark.parametrize(
    "text",
    [
        "{}",  # JSON, but no notebook: nbformat raises jsonschema's ValidationError
        "[1, 2]",
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 5}',
        '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [5]}',
        "{not json",
    ],
)
@pytest.mark.parametrize("lint", [False, True])
def test_a_file_that_is_no_notebook_is_one_line_naming_it(text, lint, tmp_path, capsys):
    lesson = tmp_path / "03_demo.ipynb"
    lesson.write_text(text)
    flags = ["--lint"] if lint else ["--build-dir", str(tmp_path / "build")]
    assert main(["slides", str(lesson), *flags]) == 1
    err = capsys.readouterr().err
    assert f"Cannot make slides from {lesson}: it is not a Jupyter notebook (" in err
    assert "Traceback" not in err and "' object " not in err  # no Python internals
    assert len(err.strip().splitlines()) <= 2  # the error, and where to see more


def test_the_tour_makes_slides_after_executing_the_notebooks(
    tmp_path, monkeypatch, capsys
):
    import jaxtour.slides

    monkeypatch.setattr(jaxtour.slides, "find_chromium", lambda: None)
    monkeypatch.setattr(_pdf, "find_chromium", lambda: None)
    names = list(_tour.STEPS)
    assert names.index("slides") > names.index("notebooks")
    with pytest.raises(
        SlidesError, match=r"No executed lessons in .*: run the notebooks step"
    ):
        slides_cli.tour_step(tmp_path)
    (tmp_path / "notebooks").mkdir()
    write(tmp_path / "notebooks", [md("# 03 · Demo")])
    written = slides_cli.tour_step(tmp_path)
    assert [p.name for p in written] == ["03_demo.html", "index.html", "decks.json"]
    assert all(p.is_file() for p in written)
    assert "no Chromium or Chrome found, so no PDF handouts" in capsys.readouterr().err


# --- handouts -------------------------------------------------------------------------------


def test_pdf_without_a_browser_says_what_to_install_and_writes_nothing(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(_pdf, "find_chromium", lambda: None)
    lesson = write(tmp_path, [md("# 03 · Demo"), code("1")])
    assert (
        main(["slides", str(lesson), "--build-dir", str(tmp_path / "build"), "--pdf"])
        == 1
    )
    err = capsys.readouterr().err
    assert (
        "apt install chromium" in err
        and "Google Chrome" in err
        and "JAXTOUR_CHROMIUM" in err
    )
    assert not (tmp_path / "build").exists()


def test_a_chromium_that_is_no_file_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXTOUR_CHROMIUM", str(tmp_path / "nowhere"))
    with pytest.raises(SlidesError, match=r"JAXTOUR_CHROMIUM=.*nowhere is no file"):
        _pdf.find_chromium()


def test_a_failed_print_leaves_no_pdf_and_no_part_file(tmp_path):
    # A "browser" that says a word on its DevTools pipe (fd 4), then crashes.
    fake = tmp_path / "chromium"
    fake.write_text('#!/bin/sh\nprintf "{" >&4\nexit 21\n')
    fake.chmod(0o755)
    deck = tmp_path / "03_demo.html"
    deck.write_text("<html></html>")
    (tmp_path / "03_demo.pdf").write_bytes(b"the old handout")
    with pytest.raises(
        SlidesError,
        match=r"made no PDF of 03_demo.html: Chromium closed its "
        r"pipe \(did it start\?\)\. No PDF written\.$",
    ):
        _pdf.print_deck(deck, tmp_path / "03_demo.pdf", str(fake), timeout=20)
    assert (tmp_path / "03_demo.pdf").read_bytes() == b"the old handout"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "03_demo.html",
        "03_demo.pdf",
        "chromium",
    ]


def test_chromium_gets_its_two_pipes_without_a_fork_of_python_code(tmp_path):
    # The tour prints handouts in the process whose JAX ran the lessons, and JAX warns
    # at a fork that runs Python code in the child (a preexec_fn did: the warning was in
    # the tour's output). A "browser" that copies the first byte of its commands (fd 3)
    # to a file and writes one to its replies (fd 4) shows both pipes are wired.
    fake = tmp_path / "chromium"
    fake.write_text(
        '#!/bin/sh\nhead -c 1 <&3 > "$(dirname "$0")/command"\nprintf "{" >&4\nexit 21\n'
    )
    fake.chmod(0o755)
    deck = tmp_path / "03_demo.html"
    deck.write_text("<html></html>")
    forks_before = len(_PYTHON_FORKS)
    with pytest.raises(SlidesError, match=re.escape(_pdf.CLOSED)):
        _pdf.print_deck(deck, tmp_path / "03_demo.pdf", str(fake), timeout=20)
    assert len(_PYTHON_FORKS) == forks_before
    assert (tmp_path / "command").read_text() == "{"  # its first command's JSON
    assert not (tmp_path / "03_demo.pdf").exists()


def test_a_browser_named_without_a_path_is_found_on_path(tmp_path, monkeypatch):
    fake = tmp_path / "my-chromium"
    fake.write_text('#!/bin/sh\nhead -c 1 <&3 > "$(dirname "$0")/command"\nexit 21\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    (tmp_path / "03_demo.html").write_text("<html></html>")
    with pytest.raises(SlidesError, match=re.escape(_pdf.CLOSED)):
        _pdf.print_deck(
            tmp_path / "03_demo.html", tmp_path / "03_demo.pdf", "my-chromium"
        )
    assert (tmp_path / "command").read_text() == "{"  # it ran, and read its pipe


@pytest.mark.slow  # waits out the browser's timeout
def test_a_browser_that_never_answers_times_out(tmp_path):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\nexec sleep 30\n")
    fake.chmod(0o755)
    (tmp_path / "03_demo.html").write_text("<html></html>")
    with pytest.raises(
        SlidesError, match=r"no answer from Chromium in time\. No PDF written"
    ):
        _pdf.print_deck(
            tmp_path / "03_demo.html", tmp_path / "03_demo.pdf", str(fake), timeout=1
        )
    assert not (tmp_path / "03_demo.pdf").exists()


# --- the index: time, exercises -------------------------------------------------------------


def test_the_index_links_a_deck_whose_name_a_url_would_misread(tmp_path):
    # "#" would start a fragment, "%" an escape: each link must name the deck's file
    from urllib.parse import unquote, urljoin, urlsplit

    lessons = [
        write(tmp_path, [md(f"# {n}")], f"{n}.ipynb") for n in ("01 a #1", "02 50%")
    ]
    decks = build_slides(lessons, tmp_path / "slides", ASSETS)
    index = tmp_path / "slides" / "index.html"
    hrefs = re.findall(r'<li class="deck".*?<a href="([^"]+)"', index.read_text(), re.S)
    for deck, href in zip(decks, hrefs, strict=True):
        url = urlsplit(urljoin(index.resolve().as_uri(), href))
        assert not url.fragment and Path(unquote(url.path)) == deck.path.resolve()


def test_the_index_lists_each_lessons_time_and_exercises(tmp_path):
    lesson = write(
        tmp_path,
        [
            md("# 03 · Demo\n\n- one thing\n\n*About 15 minutes.*"),
            md(
                "## Your turn: gradient from `vjp`\n\nWrite it.",
                tags=["exercise"],
                slideshow={"slide_type": "slide"},
            ),
            code("def ex_grad(f, x):\n    ...", tags=["exercise"]),
            md("## Your turn: a **jvp**", tags=["exercise"]),
        ],
    )
    [deck] = build_slides([lesson], tmp_path / "slides", ASSETS)
    assert deck.minutes == 15 and deck.exercises == ("gradient from vjp", "a jvp")
    index = (tmp_path / "slides" / "index.html").read_text()
    assert re.findall(r"<li>Your turn: (.*?)</li>", index) == [
        "gradient from vjp",
        "a jvp",
    ]
    assert "about 15 min" in index
    manifest = json.loads((tmp_path / "slides" / "decks.json").read_text())
    assert manifest[0]["exercises"] == ["gradient from vjp", "a jvp"]
    # the hook: a listing kept elsewhere replaces the lesson's own
    write_index(
        [deck],
        tmp_path / "slides",
        ASSETS / "templates",
        {"03_demo": ["from the registry"]},
    )
    index = (tmp_path / "slides" / "index.html").read_text()
    assert re.findall(r"<li>Your turn: (.*?)</li>", index) == ["from the registry"]


def test_the_index_schedules_talks_exercises_and_breaks_and_links_the_notebooks(
    tmp_path,
):
    turn = "## Your turn: {}"
    notes = {"slideshow": {"slide_type": "notes"}}
    first = write(
        tmp_path,
        [
            md("# 03 · Demo\n\n*About 75 minutes.*"),
            md(turn.format("a"), tags=["exercise"]),
            md("12 min. Open student/03_demo.ipynb. Hint: ...", **notes),
            md(turn.format("b"), tags=["exercise"]),  # no time box: 5 minutes
        ],
    )
    second = write(
        tmp_path, [md("# 04 · Next\n\n*About 30 minutes.*")], "04_next.ipynb"
    )
    for folder in ("student", "notebooks"):  # no instructor notebooks: no such link
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "03_demo.ipynb").write_text("{}")
    decks = build_slides([first, second], tmp_path / "slides", ASSETS)
    assert [d.exercise_minutes for d in decks] == [17, 0]
    index = (tmp_path / "slides" / "index.html").read_text()
    rows = [
        " ".join(re.sub(r"<[^>]+>", " ", row).split())
        for row in re.findall(r"<tr class=.*?</tr>", index, re.S)
    ]
    assert rows == [
        "0:00 03 · Demo 75 min 17 min",
        "1:32 Break 15 min",
        "1:47 04 · Next 30 min 0 min",
    ]
    assert "About 2 h 17 min in all" in index
    # a students' build: the executed notebook holds the solutions, so no link to it
    assert re.findall(r'data-kind="(\w+)" href="([^"]+)"', index) == [
        ("student", "../student/03_demo.ipynb"),
    ]
    assert "<title>jaxtour · the lessons as slides, with a schedule</title>" in index
    assert "<title>03 · Demo · jaxtour slides</title>" in decks[0].path.read_text()


def test_only_the_instructors_build_links_the_notebooks_that_hold_solutions(
    tmp_path, capsys
):
    lesson = write(tmp_path, [md("# 03 · Demo"), code("1")])
    build = tmp_path / "build"
    for folder in ("student", "instructor", "notebooks"):
        (build / folder).mkdir(parents=True)
        (build / folder / "03_demo.ipynb").write_text("{}")
    links = {}
    for flags in ([], ["--instructor"]):
        assert main(["slides", str(lesson), "--build-dir", str(build), *flags]) == 0
        index = (build / "slides" / "index.html").read_text()
        links[bool(flags)] = re.findall(r'data-kind="\w+" href="([^"]+)"', index)
    capsys.readouterr()
    assert links == {
        False: ["../student/03_demo.ipynb"],
        True: [
            "../student/03_demo.ipynb",
            "../instructor/03_demo.ipynb",
            "../notebooks/03_demo.ipynb",
        ],
    }


def test_the_index_lists_the_exercises_the_registry_holds_for_a_lesson(
    tmp_path, monkeypatch
):
    from jaxtour.exercises import Exercise, _registry

    registered = Exercise(
        name="ex_demo",
        lesson="03_demo",
        title="double `x`",
        practises="doubling",
        checker=lambda fn: None,
    )
    monkeypatch.setitem(_registry._REGISTRY, "ex_demo", registered)
    lesson = write(
        tmp_path,
        [md("# 03 · Demo"), md("## Your turn: from the cell", tags=["exercise"])],
    )
    other = write(
        tmp_path,
        [md("# 04 · Other"), md("## Your turn: its own", tags=["exercise"])],
        "04_other.ipynb",
    )
    build_slides([lesson, other], tmp_path / "slides", ASSETS)
    index = (tmp_path / "slides" / "index.html").read_text()
    assert re.findall(r"<li>Your turn: (.*?)</li>", index) == ["double x", "its own"]


def test_the_tour_keeps_its_decks_when_the_browser_cannot_print(
    tmp_path, monkeypatch, capsys
):
    import nbformat

    from jaxtour.cli import _slides

    executed = tmp_path / "notebooks"
    executed.mkdir()
    lesson = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell(
                "# 01 · Demo\n\n- one idea\n\n*About 5 minutes.*"
            ),
            nbformat.v4.new_markdown_cell(
                "## In this notebook we:\n\n- printed nothing"
            ),
        ]
    )
    nbformat.write(lesson, executed / "01_demo.ipynb")
    monkeypatch.setenv(
        "JAXTOUR_CHROMIUM", "/bin/false"
    )  # a "browser" that never prints
    written = _slides.tour_step(tmp_path)
    assert "warning: no PDF handouts" in capsys.readouterr().err
    assert (tmp_path / "slides" / "01_demo.html").is_file()
    assert (tmp_path / "slides" / "index.html").is_file()
    assert not list((tmp_path / "slides").glob("*.pdf")) and not any(
        p.suffix == ".pdf" for p in written
    )


@pytest.mark.parametrize(
    "cells",
    [[], [new_markdown_cell("   ")], [new_code_cell("")]],
    ids=["no cells", "blank markdown", "empty code"],
)
def test_a_lesson_with_nothing_to_show_is_refused_not_made_a_blank_deck(
    tmp_path, cells
):
    lesson = tmp_path / "empty.ipynb"
    nbformat.write(new_notebook(cells=cells), lesson)
    with pytest.raises(SlidesError, match=r"^empty.ipynb shows nothing on a slide"):
        build_slides([lesson], tmp_path / "slides", ASSETS)
    assert not (tmp_path / "slides" / "empty.html").exists()


def test_a_lessons_local_pictures_are_the_files_its_markdown_shows_from_its_folder(
    tmp_path,
):
    from jaxtour.lesson import local_pictures

    folder = tmp_path / "course"
    (folder / "figures").mkdir(parents=True)
    for name in ("a.png", "b.svg", "c.png"):
        (folder / "figures" / name).write_bytes(b"picture")
    (tmp_path / "secret.png").write_bytes(b"not the lesson's")
    (folder / "figures" / "out.png").symlink_to(tmp_path / "secret.png")
    lesson = folder / "01_mine.py"
    lesson.write_text(
        "# %% [markdown]\n"
        "# # Mine\n"
        '# ![a graph](figures/a.png "title") and <img src="figures/b.svg" width=200>\n'
        "# ![again](figures/a.png) ![gone](figures/none.png)\n"
        "# ![up](../secret.png) ![link](figures/out.png) ![abs](/etc/hosts)\n"
        "# ![web](https://example.org/x.png) ![data](data:image/png;base64,AAAA)\n"
        "# %%\n"
        "x = '![not markdown](figures/c.png)'\n"
    )
    assert local_pictures(lesson) == [Path("figures/a.png"), Path("figures/b.svg")]


def test_local_pictures_are_the_ones_the_deck_builder_embeds(tmp_path):
    # a reference-style picture, an unquoted <img src>, and a link to a file in the
    # folder: the deck builder embeds each at the address written, so that is copied
    from jaxtour.lesson import local_pictures

    folder = tmp_path / "course"
    (folder / "figures").mkdir(parents=True)
    for name in ("ref.png", "bare.png", "real.png"):
        (folder / "figures" / name).write_bytes(b"picture")
    (folder / "figures" / "link.png").symlink_to("real.png")
    lesson = folder / "01_mine.py"
    lesson.write_text(
        "# %% [markdown]\n"
        "# # Mine\n"
        "# ![a graph][graph] and <img src=figures/bare.png width=200>\n"
        "# ![linked](figures/link.png)\n"
        "#\n"
        "# [graph]: figures/ref.png\n"
    )
    assert local_pictures(lesson) == [
        Path("figures/ref.png"),
        Path("figures/bare.png"),
        Path("figures/link.png"),
    ]


def test_a_missing_lesson_is_named_with_what_to_pass(tmp_path, capsys):
    missing = tmp_path / "nope.ipynb"
    assert main(["slides", str(missing), "--build-dir", str(tmp_path / "b")]) == 1
    assert capsys.readouterr().err.startswith(
        f"jaxtour slides: No lesson at {missing}: give the path of a lesson's .ipynb"
    )


def test_rebuilding_one_deck_keeps_the_others_in_the_index(tmp_path):
    out = tmp_path / "slides"
    lessons = []
    for stem, title in [("01_one", "01 · One"), ("02_two", "02 · Two")]:
        cells = [new_markdown_cell(f"# {title}"), new_code_cell("1")]
        nbformat.write(new_notebook(cells=cells), tmp_path / f"{stem}.ipynb")
        lessons.append(tmp_path / f"{stem}.ipynb")
    build_slides(lessons, out, ASSETS)
    both = (out / "decks.json").read_text()
    [deck] = build_slides(lessons[1:], out, ASSETS)
    assert deck.name == "02_two"
    assert (out / "decks.json").read_text() == both
    assert "01_one.html" in (out / "index.html").read_text()
    (out / "01_one.html").unlink()  # a deck gone from the folder leaves the index
    build_slides(lessons[1:], out, ASSETS)
    names = [d["name"] for d in json.loads((out / "decks.json").read_text())]
    assert names == ["02_two"]


def test_a_lesson_read_twice_has_the_same_cell_ids():
    from jaxtour.lesson import _files, read

    first = read(LESSONS[1])
    _files._parse.cache_clear()  # parsed afresh: jupytext draws new random ids
    second = read(LESSONS[1])
    ids = [c.id for c in first.cells]
    assert ids == [c.id for c in second.cells] and len(set(ids)) == len(ids)
