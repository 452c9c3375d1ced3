"""The explorer without a kernel: every view of one composition, inline, in one HTML.

`views` draws each view the panel offers (jaxpr graph and text, StableHLO, compiled HLO,
before/after XLA, autodiff graph, cost, time, step through, ...) for the example and
transformations the panel shows, with each view's default drawing options (the view the
panel shows now as the panel shows it), into one ``<div>``: a row of buttons switches
between them with a few lines of inline script that touch nothing outside that div. No
CDN, no network, no widget state. The panel's display data carries it, so an exported
notebook shows every view; `Explorer.save("x.html")` writes it as a page (`views_page`).
"""

from __future__ import annotations

import html
import uuid
from collections.abc import Callable
from typing import Any

from jaxtour.explorer import _html
from jaxtour.explorer._request import Options, Request
from jaxtour.explorer._views import VIEWS

_STYLE = (
    ".jt-views{font:14px Helvetica,Arial,sans-serif;color:#1f2933}"
    ".jt-views .jt-note{color:#64748b;font-size:12px}"
    ".jt-views nav button{font:inherit;margin:0 4px 6px 0;padding:2px 8px}"
    ".jt-views nav button.on{background:#1f2933;color:#fff}"
    ".jt-views .jt-view{display:none}.jt-views .jt-view.on{display:block}"
)
_SCRIPT = (
    "(function(){const me = document.currentScript;"
    "const root = (me && me.closest('.jt-views')) || document.getElementById('__UID__');"
    "const parts = root.querySelectorAll(':scope > nav > button, :scope > .jt-view');"
    "root.querySelectorAll(':scope > nav > button').forEach(b => b.onclick = () => "
    "parts.forEach(e => e.classList.toggle('on', e.dataset.view === b.dataset.view)));"
    "})();"
)


def views(
    request: Callable[[], Request],
    label: str,
    current: tuple[str, str] | None = None,
) -> str:
    """Every view of the composition `request()` asks for, in one ``<div>`` (see module).

    Args:
        request: makes the request (its options are replaced by each view's defaults).
        label: the composition's name, e.g. ``grad(cubic)``.
        current: (the view's key, the panel's HTML of it) for the view the panel shows:
            that view opens first, as drawn; None opens the first view.
    """
    key_now, html_now = current or (next(iter(VIEWS)), "")
    buttons, panels = [], []
    for i, (key, view) in enumerate(VIEWS.items()):
        on = " on" if key == key_now else ""
        if on and current:
            shown = html_now
        else:
            try:
                result: Any = view.draw(request()._replace(options=Options()))
            except (
                Exception
            ) as err:  # a view that cannot draw this says why, as the panel
                result = _html.explain(err, label, view.label)
            shown = _html.panel(result)
        name = html.escape(view.label)
        buttons.append(f"<button class='{on.strip()}' data-view='{i}'>{name}</button>")
        panels.append(
            f"<section class='jt-view{on}' data-view='{i}' "
            f"title='{html.escape(key)}'>{shown}</section>"
        )
    uid = f"jt-{uuid.uuid4().hex[:12]}"
    note = (
        f"jaxtour.explore: {html.escape(label)}. Every view, drawn when the cell ran: "
        "the buttons switch them; run the notebook to change the transformations."
    )
    return (
        f"<div class='jt-views jaxtour-explore-static' id='{uid}'><style>{_STYLE}</style>"
        f"<div class='jt-note'>{note}</div><nav>{''.join(buttons)}</nav>"
        f"{''.join(panels)}<script>{_SCRIPT.replace('__UID__', uid)}</script></div>"
    )


def views_page(
    request: Callable[[], Request],
    label: str,
    current: tuple[str, str] | None = None,
) -> str:
    """Every view of the composition `request()` asks for, as one page (see module),
    opening on `current` as `views` does."""
    title = html.escape(f"jaxtour.explore: {label}")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{title}</title><style>body{{margin:12px}}</style></head><body>"
        f"<h1 style='font:600 16px Helvetica,Arial,sans-serif'>{title}</h1>"
        f"{views(request, label, current)}</body></html>\n"
    )
