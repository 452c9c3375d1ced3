"""A notebook's HTML export with no kernel, in a real browser (Debian's Chromium, headless,
network blocked): the nested diagram's page in its output draws, a click opens a folded
group in one display and leaves the other as it was, and the explorer's output switches
views by a click (issue 47: exported notebooks keep working)."""

import re

import nbformat
import pytest
from browser import find_chromium, offline_page
from nbconvert import HTMLExporter
from test_page_display import nested

pytestmark = pytest.mark.browser

# each page in the export: its id, its nodes drawn and hidden, its folded groups
_PAGES = """() => [...document.querySelectorAll('.jt-page')].map(root => ({
  id: root.id, height: root.getBoundingClientRect().height,
  nodes: root.querySelectorAll('g.node').length,
  hidden: root.querySelectorAll('g.node.jt-hidden').length,
  folded: [...root.jaxtourPage.folded],
  boxes: [...root.querySelectorAll('text.jt-box')]
    .filter(t => getComputedStyle(t).display !== 'none').map(t => t.textContent),
  viewBox: root.querySelector('.jt-pan svg').getAttribute('viewBox'),
  seen: root.querySelector('.jt-pan svg').getBoundingClientRect().width}))"""
# the explorer's views: which one shows, by its button's text
_SHOWN = """() => [...document.querySelectorAll('.jt-views > .jt-view')]
  .filter(s => getComputedStyle(s).display !== 'none').map(s => s.title)"""


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    find_chromium()  # skip (or fail in CI) before drawing when there is no browser
    import jax.numpy as jnp

    from jaxtour import explore

    diagram = nested()
    panel = explore(lambda x: jnp.sum(jnp.sin(x)), jnp.ones(3))
    cells = []
    # the same diagram twice: their ids must not clash
    for shown in (diagram, diagram, panel):
        cell = nbformat.v4.new_code_cell("shown")
        data = shown._repr_mimebundle_()
        cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        cells.append(cell)
    body, _ = HTMLExporter().from_notebook_node(nbformat.v4.new_notebook(cells=cells))
    path = tmp_path_factory.mktemp("export") / "nested.html"
    path.write_text(body)
    return path


def test_the_export_pans_folds_and_switches_views_offline(export):
    with offline_page(export, 1280, 900) as (page, blocked, errors):
        first, second = page.evaluate(_PAGES)
        for drawn in (first, second):  # drawn, in a box of its own, some groups folded
            assert drawn["seen"] > 500 and 160 < drawn["height"] <= 800
            assert drawn["folded"] and drawn["hidden"] > 0
            # each folded group says what it holds: "▸ layer 2: 7 equations"
            assert len(drawn["boxes"]) == len(drawn["folded"])
            assert all(re.fullmatch(r"▸ .+: \d+ equations?", b) for b in drawn["boxes"])
        assert first["id"] != second["id"]
        group = first["folded"][0]
        page.locator(f"#{second['id']} .jt-fit").click()  # the whole picture in view
        frame = page.locator(f"#{second['id']} g[data-group='{group}'] > path").first
        # a click on its frame, off the rounded corner
        top = {"x": frame.bounding_box()["width"] / 2, "y": 6}
        frame.click(force=True, position=top)
        after_first, after_second = page.evaluate(_PAGES)
        assert after_first == first  # the other display is left alone
        top, whole = (float(p["viewBox"].split()[3]) for p in (first, after_second))
        assert whole > top  # it opened on the picture's top, at the cell's width
        assert group not in after_second["folded"]
        assert after_second["hidden"] < second["hidden"]

        assert page.evaluate(_SHOWN) == ["jaxpr graph"]  # the view the panel showed
        page.locator(".jt-views nav button", has_text="jaxpr text").click()
        assert page.evaluate(_SHOWN) == ["jaxpr text"]
        shown = page.locator(".jt-views > .jt-view[title='jaxpr text']").inner_text()
        assert re.search(r"= sin \w+", shown)  # the jaxpr, printed
    # nbconvert's own template asks for RequireJS and MathJax; the outputs ask for nothing
    template = {HTMLExporter().require_js_url, HTMLExporter().mathjax_url}
    assert set(blocked) <= template and errors == []
