"""One display for every result: HTML in Jupyter and text in print, from one `Report`.

Each result type is built (cheap ones for real, measured ones from their public
fields), and its two forms are read back: the HTML parsed as XML, its rows counted and
found by what the result's own fields say, the text holding the same rows; exactly one
rich repr and a one-line `repr`. Then the shared type itself: escaping, wrapping, saving.
A scan of the lens rooms' exports fails when a new public result class displays any
other way.
"""

import functools
import importlib
import inspect
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jax.numpy as jnp
import pytest

from jaxtour import _report
from jaxtour._number_words import si
from jaxtour._report import Report, Reported, Table
from jaxtour.autodiff import DerivativeRow, DerivativeTable, ModeCost, ModeCosts
from jaxtour.cost import (
    FusionTraffic,
    GradMemory,
    OpTime,
    Peaks,
    Policy,
    Profile,
    cost_table,
)
from jaxtour.tracing import explain_retraces
from jaxtour.viz import compare_stages

NAME = "<f> & 'g'"  # every character HTML must escape


def _stages():
    c = compare_stages(lambda x: jnp.tanh(x) * 2.0 + jnp.sort(x))(jnp.ones(4))
    keys = [kind for kind, *_ in c.rows()] + [f.name for f in c.fusions]
    return c, len(c.rows()) + len(c.fusions), keys


def _costs():
    t = cost_table(lambda x: jnp.sort(jnp.sin(x)) @ x)(jnp.ones(4))
    return t, 2 + bool(t.xla) + len(t.ops), [r.name for r in t.ops]


def _retraces():
    f = explain_retraces(lambda x: x * 2)
    for n in (2, 3, 3):  # a first trace, a retrace, a cache hit
        f(jnp.ones(n))
    return f.report, 2, ["first trace", "retrace"]


def _profile():
    rows = [
        OpTime("dot.1", 2e-3, 0.8, ("model.py:3",), ("dot_general",), "dot", 4e6, 1e5),
        OpTime("fusion.2", 5e-4, 0.2, ("model.py:4",), ("tanh",), "loop", None, 8e3),
    ]
    from jaxtour.cost._timeline import Timeline
    from jaxtour.cost._walls import Walls

    timeline = Timeline({"dot.1": 2e-3, "fusion.2": 5e-4}, 2.5e-3, 0.0, 1e-4, 10)
    p = Profile(NAME, "cpu", rows, timeline, Walls(3e-3, 3.4e-3, 2e-5), None)
    return p, 2, ["dot.1", "fusion.2", "dot_general"]


def _memory():
    policies = [
        Policy("no checkpoint", 4e6, 3, 1e9, 1e9, None),
        Policy("nothing_saveable", 0.0, 0, 1.3e9, 1e9, None),
    ]
    return GradMemory(NAME, "cpu", policies), 2, ["no checkpoint", "nothing_saveable"]


def _derivatives():
    rows = [DerivativeRow(0, 8.0, 5), DerivativeRow(1, 4.0, 12)]
    return DerivativeTable(NAME, 1.0, rows), 2, ["8", "4", "12"]


def _modes():
    records = [
        ModeCost(64, 2, "jacfwd", 1e-5, 6400.0),
        ModeCost(64, 2, "jacrev", 1e-5, 200.0),
    ]
    return ModeCosts(records), 1, ["6400", "200", "jacrev"]


def _traffic():
    t = FusionTraffic(NAME, 24000.0, 8000.0, 8000.0, 3, 1)
    return t, 3, [si(24000.0, "B"), si(8000.0, "B")]


def _peaks():
    p = Peaks(NAME, 1e11, 2e10)
    return p, 1, [si(1e11, "FLOP/s"), si(2e10, "B/s"), "5 FLOP/B"]


BUILDERS = {
    "StageComparison": _stages,
    "CostTable": _costs,
    "RetraceReport": _retraces,
    "Profile": _profile,
    "GradMemory": _memory,
    "DerivativeTable": _derivatives,
    "ModeCosts": _modes,
    "FusionTraffic": _traffic,
    "Peaks": _peaks,
}


@functools.cache
def built(kind: str):
    return BUILDERS[kind]()


@pytest.mark.parametrize("kind", BUILDERS)
def test_the_html_parses_and_holds_every_row(kind):
    result, count, keys = built(kind)
    assert type(result).__name__ == kind
    root = ET.fromstring(result._repr_html_())  # well-formed: everything escaped
    rows = ["".join(tr.itertext()) for tr in root.iterfind(".//tbody/tr")]
    assert len(rows) == count
    assert all(any(key in row for row in rows) for key in keys), (keys, rows)
    if getattr(result, "name", None) == NAME:
        assert NAME in "".join(root.itertext())  # escaped on the way in, read back


@pytest.mark.parametrize("kind", BUILDERS)
def test_the_text_holds_the_same_rows(kind):
    result, _, keys = built(kind)
    text = str(result)
    assert text == result.report().text() and "<td" not in text
    lines = text.splitlines()
    assert all(any(key in line for line in lines) for key in keys), (keys, text)
    report = result.report()
    for table in report.tables:  # each row's first cell starts a line of its own
        starts = [row[0].split("\n")[0] for row in table.rows if row[0]]
        assert all(any(line.lstrip().startswith(s) for line in lines) for s in starts)


@pytest.mark.parametrize("kind", BUILDERS)
def test_one_rich_repr_and_a_one_line_repr(kind):
    result, _, _ = built(kind)
    rich = [n for n in dir(result) if n.startswith("_repr_") and n.endswith("_")]
    assert rich == ["_repr_html_"]
    assert "\n" not in repr(result) and repr(result).startswith(f"{kind}(")
    assert repr(result) != str(result)


@pytest.mark.parametrize("kind", BUILDERS)
def test_save_writes_the_page_or_the_text(kind, tmp_path):
    result, _, _ = built(kind)
    page = result.save(tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and result._repr_html_() in page
    text = result.save(tmp_path / "r.txt").read_text(encoding="utf-8")
    assert text == str(result) + "\n"
    with pytest.raises(ValueError, match=rf"^{kind}\.save\(\) writes \.html, \.txt"):
        result.save(tmp_path / "r.svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.txt"]


EVIL = "<script>alert('x')</script> & \"q\""


def _evil() -> Report:
    table = Table(
        ["op", EVIL],
        [[EVIL, "1"], ["two\nlines", "2"]],
        heading=EVIL,
        align="lr",
        shades={0: "red'><script>"},
        note=EVIL,
    )
    return Report(EVIL, lead=[EVIL], tables=[table], notes=[EVIL])


def test_every_string_is_escaped_in_html():
    html = _evil().html()
    assert "<script>" not in html
    root = ET.fromstring(html)
    texts = list(root.itertext())
    # the title, the lead, the heading, a column, a cell, the table's note, a note
    assert texts.count(EVIL) == 7
    (row, _) = root.iterfind(".//tbody/tr")
    assert row.get("style") == "background:red'><script>"  # an attribute, not markup
    second = root.findall(".//tbody/tr")[1].find("td")
    assert [e.tag for e in second] == ["br"]  # a cell's lines are a <br/> apart


def test_text_aligns_numbers_right_and_continues_a_cell_on_its_own_lines():
    report = Report(
        "t", tables=[Table(["op", "n"], [["a\nb", "1"], ["c", "22"]], "", "lr")]
    )
    assert report.text().splitlines() == [
        "t",
        "",
        "op   n",
        "--  --",
        "a    1",
        "b",
        "c   22",
    ]


def test_a_width_wraps_the_last_column_and_keeps_an_arrow_with_its_values():
    why = "`x` changed shape: f32[3] → f32[4] " + "and more words " * 8
    hint = "→ jit compiles once per shape: pad to a few fixed sizes " * 2
    table = Table(["call", "why"], [["1", f"{why}\n{hint}"]])
    lines = Report("t", tables=[table], width=40).text().splitlines()
    assert max(map(len, lines)) <= 40
    assert "f32[3] → f32[4]" in " ".join(" ".join(lines).split())
    assert not any(line.rstrip().endswith("→") for line in lines[4:] if "f32" in line)
    hanging = [line for line in lines if line.startswith(" " * 6 + "→ ")]
    assert len(hanging) == 1  # the hint starts with its arrow; its wrap hangs under it
    follow = lines[lines.index(hanging[0]) + 1]
    assert follow.startswith(" " * 8) and not follow.startswith(" " * 9)


def test_markdown_escapes_pipes_and_markup():
    md = Report("a|b", tables=[Table(["x"], [["<b>|"]], align="r")]).markdown()
    assert md.splitlines() == ["**a\\|b**", "", "| x |", "|---:|", "| &lt;b&gt;\\| |"]


def test_a_row_with_the_wrong_number_of_cells_is_refused():
    with pytest.raises(
        ValueError, match=r"^Table row 1 has 1 cell for 2 columns \(a, b\)"
    ):
        Table(["a", "b"], [["1", "2"], ["3"]])


def test_save_is_atomic_and_checks_the_suffix(tmp_path, monkeypatch):
    report = _evil()
    with pytest.raises(
        ValueError,
        match=r"^Report\.save\(\) writes \.html, \.txt or \.md; got 'r\.pdf'",
    ):
        report.save(tmp_path / "r.pdf")
    assert (
        report.save(tmp_path / "r.md").read_text(encoding="utf-8")
        == report.markdown() + "\n"
    )
    (tmp_path / "r.txt").write_text("old")

    def broken(path, data):
        raise OSError("disk full")

    monkeypatch.setattr(_report, "write_atomically", broken)
    with pytest.raises(OSError, match="disk full"):
        report.save(tmp_path / "r.txt")
    assert (tmp_path / "r.txt").read_text() == "old"
    assert repr(report) == f"Report({EVIL!r}: 1 table, 2 rows)"


# Public classes of the lens rooms that are not results shown as tables, and why.
NOT_REPORTS = {
    "ADEdge": "a part of ADGraph",
    "ADGraph": "the data draw_grad draws; the picture is its display",
    "ADNode": "a part of ADGraph",
    "DerivativeRow": "a row of DerivativeTable",
    "Display": "a TypedDict of drawing options",
    "ModeCost": "a row of ModeCosts",
    "OpTime": "a row of Profile",
    "Point": "a point of Roofline",
    "Policy": "a row of GradMemory",
    "Retraced": "a jitted function; it shows its RetraceReport",
    "Row": "a row of CostTable",
    "Value": "the tape's teaching scalar, micrograd's Value",
}
ROOMS = ("jaxtour.viz", "jaxtour.autodiff", "jaxtour.tracing", "jaxtour.cost")


def displays_badly(cls: type) -> str | None:
    """Why `cls` breaks the display rule, or None: a picture, or shown from a Report."""
    rich = {n for n in dir(cls) if n.startswith("_repr_") and n.endswith("_")}
    if rich in ({"_repr_mimebundle_"}, {"_repr_png_"}):
        return None  # a picture (Diagram, Plot, Steps): its SVG (and page) or a PNG
    if rich != {"_repr_html_"}:
        return f"rich reprs {sorted(rich)}: want _repr_html_ from a Report"
    if not inspect.isfunction(getattr(cls, "report", None)):
        return "no report() method: write its display as a Report"
    if issubclass(cls, Reported):
        return None
    plain = tuple(getattr(cls, n) for n in ("_repr_html_", "__str__", "save"))
    source = "".join(inspect.getsource(f) for f in plain if inspect.isfunction(f))
    if source.count("self.report()") != 3:
        return "_repr_html_, __str__ and save must render self.report()"
    return None


def test_every_public_result_class_displays_from_a_report():
    found, bad = [], {}
    for room in ROOMS:
        module = importlib.import_module(room)
        for name in module.__all__:
            cls = getattr(module, name)
            if inspect.isclass(cls) and name not in NOT_REPORTS:
                found.append(name)
                if (why := displays_badly(cls)) is not None:
                    bad[f"{room}.{name}"] = why
    assert not bad
    assert set(BUILDERS) <= set(found)  # every result tested above is exported
    assert not set(NOT_REPORTS) - {
        n for room in ROOMS for n in importlib.import_module(room).__all__
    }


def test_the_scan_catches_a_result_displayed_by_hand():
    class ByHand:
        def _repr_html_(self):
            return "<table></table>"

    class Markdown:
        def _repr_markdown_(self):
            return "| a |"

    class Both(Reported):
        def report(self):
            return Report("t")

        def _repr_mimebundle_(self):
            return {"image/svg+xml": "<svg/>"}

    assert displays_badly(ByHand) == "no report() method: write its display as a Report"
    assert displays_badly(Markdown).startswith("rich reprs ['_repr_markdown_']")
    assert displays_badly(Both).startswith(
        "rich reprs ['_repr_html_', '_repr_mimebundle_']"
    )
    assert displays_badly(FusionTraffic) is None and displays_badly(Profile) is None


def table_writers(src: Path) -> list[str]:
    """Modules other than `_table` that write an HTML table cell or pad a text column."""
    found = []
    for path in sorted(src.rglob("*.py")):
        code = path.read_text(encoding="utf-8")
        if path.name != "_table.py" and re.search(r"<t[dhr][ >]|\.[lr]just\(", code):
            found.append(str(path.relative_to(src)))
    return found


def test_table_is_the_one_table_writer(tmp_path):
    src = Path(_report.__file__).parent
    assert table_writers(src) == []
    (tmp_path / "mine.py").write_text("row = f'<td>{x}</td>' + name.ljust(8)\n")
    assert table_writers(tmp_path) == ["mine.py"]  # the scan finds a planted writer
