"""A saved model page in a real browser (Debian's Chromium, headless, network blocked):
opened from file://, it draws with no error and no request off this machine, and a
click on a folded group opens it (issue 47)."""

import model_zoo as zoo
import pytest
from browser import find_chromium, offline_page

from jaxtour import viz

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    find_chromium()  # skip (or fail in CI) before drawing when there is no browser
    (loss, args), _ = zoo.nnx_block()
    return viz.draw_jaxpr(loss)(*args).save(tmp_path_factory.mktemp("page") / "b.html")


def test_a_click_opens_a_folded_group_offline(page_file):
    with offline_page(page_file, 1280, 800) as (page, blocked, errors):
        hidden = "document.querySelectorAll('g.node.jt-hidden').length"
        folded = page.evaluate("[...jaxtourPage.folded]")
        before = page.evaluate(hidden)
        assert folded and before > 0  # the page opens as the picture: some folded
        frame = page.locator(f"g[data-group='{folded[0]}'] > path").first
        frame.click(force=True, position={"x": 4, "y": 4})
        assert folded[0] not in page.evaluate("[...jaxtourPage.folded]")
        assert page.evaluate(hidden) < before
        page.locator(".jt-open").click()
        assert page.evaluate(hidden) == 0
    assert blocked == [] and errors == []
