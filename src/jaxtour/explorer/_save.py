"""The explorer as one page that needs no kernel: every view of one composition, inline.

`Explorer.save("x.html")` draws each view the panel offers (jaxpr graph and text,
StableHLO, compiled HLO, before/after XLA, autodiff graph, cost, time, step through, ...)
for the example and transformations the panel shows, with each view's default drawing
options, and writes them into one HTML file: a row of buttons switches between them with
a few lines of inline script. No CDN, no network, no widget state: it works from a file,
in an exported notebook and in a deck.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from jaxtour.explorer import _html
from jaxtour.explorer._request import Options, Request
from jaxtour.explorer._views import VIEWS

_STYLE = (
    "body{font:14px Helvetica,Arial,sans-serif;margin:12px;color:#1f2933}"
    "nav button{font:inherit;margin:0 4px 6px 0;padding:2px 8px}"
    "nav button.on{background:#1f2933;color:#fff}"
    ".jt-view{display:none}.jt-view.on{display:block}"
)
_SCRIPT = (
    "document.querySelectorAll('nav button').forEach(b => b.onclick = () => {"
    "document.querySelectorAll('nav button,.jt-view').forEach(e => "
    "e.classList.toggle('on', e.dataset.view === b.dataset.view));});"
)


def views_page(request: Callable[[], Request], label: str) -> str:
    """Every view of the composition `request()` asks for, as one page (see module)."""
    buttons, panels = [], []
    for i, (key, view) in enumerate(VIEWS.items()):
        try:
            shown: Any = view.draw(request()._replace(options=Options()))
        except Exception as err:  # a view that cannot draw this says why, as the panel
            shown = _html.explain(err, label, view.label)
        on = " on" if i == 0 else ""
        name = html.escape(view.label)
        buttons.append(f"<button class='{on.strip()}' data-view='{i}'>{name}</button>")
        panels.append(
            f"<section class='jt-view{on}' data-view='{i}' id='view-{i}' "
            f"title='{html.escape(key)}'>{_html.panel(shown)}</section>"
        )
    title = html.escape(f"jaxtour.explore: {label}")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>{_STYLE}</style></head><body>"
        f"<h1 style='font-size:16px'>{title}</h1><nav>{''.join(buttons)}</nav>"
        f"{''.join(panels)}<script>{_SCRIPT}</script></body></html>\n"
    )
