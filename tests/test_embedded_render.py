"""Every picture the tour draws reads right with the embedded Graphviz, the renderer of
anyone without a system `dot` (everyone who follows the README).

The embedded build draws no HTML-like labels (it shows the node's name instead) and has
no font files; these tests keep every diagram within what it can draw.
"""

import re
import xml.etree.ElementTree as ET

import pytest

from jaxtour import Diagram, _render
from jaxtour.cli._tour_steps import DIAGRAMS

SVG_TEXT = "{http://www.w3.org/2000/svg}text"
_LABEL = re.compile(r'(?<![\w])(?:label|xlabel)=("(?:[^"\\]|\\.)*"|<|[\w.]+)', re.S)
_BREAK = re.compile(r"\\[nlr]|(?<!\\)[|{}]")


@pytest.fixture
def embedded(monkeypatch):
    monkeypatch.setenv(_render.RENDERER_VARIABLE, "embedded")
    _render._render_cached.cache_clear()
    yield
    _render._render_cached.cache_clear()


def label_lines(dot: str) -> set[str]:
    """Every line of text the DOT labels ask for (plain and record labels)."""
    lines = set()
    for match in _LABEL.finditer(dot):
        assert match.group(1) != "<", f"HTML-like label in: {dot[match.start() :][:80]}"
        value = match.group(1)
        for part in _BREAK.split(value[1:-1] if value.startswith('"') else value):
            text = re.sub(r"\\(.)", r"\1", part).strip()
            if text:
                lines.add(" ".join(text.split()))
    return lines


def svg_texts(svg: str) -> set[str]:
    return {
        " ".join(t.text.split()) for t in ET.fromstring(svg).iter(SVG_TEXT) if t.text
    }


def test_the_embedded_renderer_really_drops_html_labels(embedded):
    svg = Diagram("digraph { n1 [label=<<B>bold</B> title>] }").svg()
    assert svg_texts(svg) == {
        "n1"
    }  # the name, not the label: why HTML labels are banned


def test_plain_and_record_labels_survive(embedded):
    dot = (
        r'digraph { a [label="title\nline 2"]; b [shape=record, label="{top|x \| y\l}"];'
        r" c [label=plain] }"
    )
    assert label_lines(dot) == {"title", "line 2", "top", "x | y", "plain"}
    assert label_lines(dot) <= svg_texts(Diagram(dot).svg())


def test_embedded_text_is_drawn_smaller_than_graphviz_measured_it(embedded):
    svg = Diagram('digraph { a [label="x", fontsize=20] }').svg()
    assert (
        'font-size="17.00"' in svg
    )  # 20 * EMBEDDED_TEXT_SCALE: fits browsers' wider fonts


@pytest.mark.slow  # renders every tour diagram in WebAssembly
@pytest.mark.parametrize("stem", sorted(DIAGRAMS))
def test_every_tour_diagram_shows_all_its_text(stem, embedded):
    diagram = DIAGRAMS[stem]()
    wanted = label_lines(diagram.source)
    assert wanted, f"{stem} has no labels"
    missing = wanted - svg_texts(diagram.svg())
    assert not missing, (
        f"{stem}: the embedded Graphviz did not draw {sorted(missing)[:5]}"
    )
