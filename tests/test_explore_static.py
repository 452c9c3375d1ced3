"""Without a kernel the explorer's output still shows every view (exported HTML).

nbconvert shows a widget only from saved widget state; without it, it falls back to the
next mime type in the output, which is the explorer's static HTML: every view of what the
panel shows, the one it showed opening first.
"""

import re

import nbformat
import pytest
from nbconvert import HTMLExporter

from jaxtour import explore
from jaxtour.explorer import _gallery
from jaxtour.viz import draw_jaxpr

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _exported(notebook) -> str:
    return HTMLExporter().from_notebook_node(notebook)[0]


def _static_block(html: str) -> str:
    found = re.search(
        r"<div class=.jt-views jaxtour-explore-static.*?</svg>", html, re.S
    )
    assert found, "the export holds no static explorer picture"
    return found.group(0)


def test_nbconvert_shows_the_default_views_picture_without_widget_state():
    panel = explore()
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("from jaxtour import explore\nexplore()")
    cell.outputs = [
        nbformat.v4.new_output("display_data", data=panel._repr_mimebundle_())
    ]
    notebook.cells = [cell]
    html = _exported(notebook)
    static = _static_block(html)
    svg = draw_jaxpr(_gallery.cubic)(1.0).svg()
    for part in ('class="node"', 'class="edge"'):  # the same drawing, node for node
        assert static.count(part) == svg.count(part) > 5
    assert "jaxpr of cubic: 7 equations" in static
    assert f'type="{WIDGET_VIEW}"' not in html  # no widget state: no empty widget box


@pytest.mark.slow
def test_an_executed_notebook_exports_the_picture():
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "from jaxtour import explore\npanel = explore()\npanel.grad.value = True\npanel"
        )
    ]
    NotebookClient(
        notebook, timeout=120, kernel_name="python3", store_widget_state=False
    ).execute()
    output = notebook.cells[0].outputs[-1]
    assert {WIDGET_VIEW, "text/html"} <= set(output.data)
    static = _static_block(_exported(notebook))
    assert "grad(cubic)" in static and "jaxpr of grad of cubic: 17 equations" in static


@pytest.mark.slow
def test_the_tours_html_export_shows_the_picture_not_an_empty_widget_box(tmp_path):
    from jaxtour.lesson import execute

    source = tmp_path / "00_panel.py"
    source.write_text("# %%\nfrom jaxtour import explore\n\nexplore()\n")
    _, html = execute(source, tmp_path / "out")
    text = html.read_text()
    assert "jaxpr of cubic: 7 equations" in _static_block(text)
    assert "application/vnd.jupyter.widget-state+json" not in text


def test_a_saved_page_opens_on_the_view_the_panel_shows(tmp_path):
    panel = explore()
    panel.view.value = "jaxpr text"
    page = panel.save(tmp_path / "panel.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    opened = re.findall(
        r"<section class='jt-view on' data-view='\d+' title='([^']+)'", page
    )
    assert opened == ["jaxpr text"]
    assert page.count("<section class='jt-view") == len(panel.view.options)
    with pytest.raises(ValueError, match=r"^Cannot save the explorer as 'panel.svg'"):
        panel.save(tmp_path / "panel.svg")
