"""A diff drawn: two programs side by side, rows aligned, differences coloured, the rest folded.

Each row holds an op of the first program (left) and its partner in the second
(right); an op with no partner faces an empty cell. A run of unchanged rows folds into
one "⋯ N unchanged" row. The page `ProgramDiff.save` writes is this module's HTML with
each drawing inline as SVG: no script, no stylesheet, no address off the page.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any

from jaxtour import _ir, _number_words, _render, _style
from jaxtour._diagram import Diagram
from jaxtour._report import Report
from jaxtour.viz._diff_levels import LEVELS, LevelDiff

FOLD = 3  # a run of this many unchanged rows or more folds into one
MAX_ROWS = 150  # rows drawn; the text report lists every difference
# (fill, border) per state
COLOURS = {
    "removed": ("#FDE0DC", "#C62828"),
    "added": ("#E0F2E9", "#2E7D32"),
    "changed": ("#FFF4CC", "#C58B00"),
    "same": ("#F5F5F5", "#9E9E9E"),
}

KEY = "green added, red removed, amber changed, grey the same"

Row = tuple[str, int | None, int | None]  # state, before index, after index


def rows(level: LevelDiff) -> list[Row]:
    """The two programs aligned: (state, before node, after node), in program order."""
    m = level.matching
    changed = {c.before for c in m.changed}
    partner = {j: i for i, j in m.pairs.items()}
    out: list[Row] = []
    done: set[int] = set()
    i = j = 0
    while i < len(m.before) or j < len(m.after):
        if j < len(m.after) and (j in done or j not in partner):
            if j not in done:
                out.append(("added", None, j))
            j += 1
        elif i < len(m.before) and i not in m.pairs:
            out.append(("removed", i, None))
            i += 1
        elif i < len(m.before):
            state = "changed" if i in changed else "same"
            out.append((state, i, m.pairs[i]))
            done.add(m.pairs[i])
            i += 1
        else:
            j += 1
    return [row for row in out if row[0] == "changed" or not _returns(level, row)]


def _returns(level: LevelDiff, row: Row) -> bool:
    """Whether a row is a `RETURN` node's: drawn only when what it returns changed."""
    _, i, j = row
    nodes, k = (
        (level.matching.before, i) if i is not None else (level.matching.after, j)
    )
    return k is not None and nodes[k].label == _ir.RETURN


def fold(aligned: list[Row]) -> list[Row | int]:
    """Runs of `FOLD` or more unchanged rows become their length (one folded row)."""
    out: list[Row | int] = []
    run: list[Row] = []
    for row in [*aligned, ("end", None, None)]:
        if row[0] == "same":
            run.append(row)
            continue
        out += [len(run)] if len(run) >= FOLD else run
        run = []
        if row[0] != "end":
            out.append(row)
    return out


def draw_level(level: LevelDiff, names: tuple[str, str]) -> Diagram:
    """The side-by-side picture of one level."""
    import graphviz

    title = f"{LEVELS[level.level]}: {names[0]} → {names[1]}"
    n = len(level.sentences())
    subtitle = (
        "the same" if level.same else f"{_number_words.plural(n, 'difference')}: {KEY}"
    )
    graph = graphviz.Digraph(graph_attr=_style.graph_attrs(title, "TB", subtitle))
    graph.attr("node", shape="box", style="rounded,filled", fontname=_style.FONT)
    graph.attr("node", fontsize="11")
    shown = fold(rows(level))
    cells = [("head", f"before: {names[0]}", f"after: {names[1]}")]
    for item in shown[:MAX_ROWS]:
        cells.append(_cells(level, item))
    if len(shown) > MAX_ROWS:
        cells.append(("fold", f"⋯ {len(shown) - MAX_ROWS} more rows", ""))
    for r, (state, left, right) in enumerate(cells):
        for side, text in (("L", left), ("R", right)):
            graph.node(
                f"{side}{r}", _style.text_label(*text.split("\n")), **_look(state, text)
            )
        graph.edge(f"L{r}", f"R{r}", **_across(state))
        graph.body.append(f"{{rank=same; L{r}; R{r}}}")
        if r:
            graph.edge(f"L{r - 1}", f"L{r}", style="invis", weight="20")
            graph.edge(f"R{r - 1}", f"R{r}", style="invis", weight="20")
    return Diagram.from_graph(graph, title)


def _cells(level: LevelDiff, item: Row | int) -> tuple[str, str, str]:
    if isinstance(item, int):
        text = f"⋯ {item} unchanged"
        return "fold", text, text
    state, i, j = item
    m = level.matching
    left = m.before[i].text() if i is not None else ""
    right = m.after[j].text() if j is not None else ""
    if state == "changed":
        what = next(c.what for c in m.changed if c.before == i)
        right += "\n" + "\n".join(_clip(w) for w in what[:3])
    return state, left, right


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _look(state: str, text: str) -> dict[str, str]:
    if not text:
        return {"style": "invis"}
    if state in ("head", "fold"):
        return {"shape": "plaintext", "style": "", "fontcolor": "#555555"}
    fill, border = COLOURS[state]
    return {
        "fillcolor": fill,
        "color": border,
        "penwidth": "1.5" if state != "same" else "1",
    }


def _across(state: str) -> dict[str, str]:
    if state == "changed":
        return {"color": COLOURS["changed"][1], "style": "dashed", "arrowhead": "none"}
    return {"style": "invis"}


# Namespace names and the XML prolog: not fetched by a browser, but left out of the page
# so that it holds no address at all.
_SVG_PROLOG = re.compile(r"<\?xml.*?\?>|<!DOCTYPE.*?>|<!--.*?-->", re.S)
_SVG_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def inline_svg(diagram: Diagram) -> str:
    """The drawing as SVG to put inside HTML, or a note when nothing here can render it."""
    try:
        svg = diagram.svg()
    except _render.RendererUnavailableError as err:
        return f"<p><i>{escape(str(err))}</i></p>"
    return _SVG_XMLNS.sub("", _SVG_PROLOG.sub("", svg)).strip()


def drawings(d: Any) -> str:
    """Each level of a `ProgramDiff` that differs, drawn side by side, as inline SVG.

    (`d` is untyped here: `_diff` imports this module, not the other way round.)
    """
    parts = []
    for level in d.levels:
        if not level.same:
            parts.append(
                f"<h4 style='margin:8px 0 4px'>{escape(LEVELS[level.level])}</h4>"
            )
            parts.append(inline_svg(d.draw(level.level)))
    return "".join(parts)


def page(report: Report, drawings: str) -> str:
    """A whole self-contained page: the report, then the drawings; no script, no address."""
    return (
        f"<!doctype html>\n<html><head><meta charset='utf-8'><title>"
        f"{escape(report.title)}</title></head>\n<body>{report.html()}{drawings}"
        "</body></html>\n"
    )
