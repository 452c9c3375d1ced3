"""A Diagram as HTML that needs no kernel and no network: a page, or a notebook's fragment.

The HTML holds the picture's SVG inline (for a jaxpr nested by the user's calls: every
group open, every equation drawn), a little inline script and styles, and the groups as
JSON: which nodes each group holds, which were folded in the default picture. The
script pans (drag), zooms (buttons; the wheel on a page of its own, ctrl and the wheel
inside a notebook, whose wheel scrolls the notebook), folds a group (click its frame)
and opens it again (click its box); hovering a box shows its shapes and source line
(Graphviz's own tooltips). Nothing is fetched: no CDN, no font, no `src=`/`href=` to the
network, so it works saved beside a notebook, in an exported HTML, or opened from a file.

`fragment` is what a notebook's display data carries: everything sits inside one
``<div class="jt-page">`` whose id is unique to that display (the SVG's own ids get it
as a prefix), its script finds that div and touches nothing outside it, so two pictures
in one notebook, or in one exported page, never clash. `page` is one fragment filling a
page of its own.
"""

from __future__ import annotations

import html
import json
import re
import uuid

_PROLOGUE = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)
_SVG_IDS = re.compile(r'(\bid="|url\(#|href="#)([^")]+)')

_STYLE = """
.jt-page{position:relative;height:520px;font:14px Helvetica,Arial,sans-serif;
color:#1f2933;border:1px solid #ddd;border-radius:4px;overflow:hidden;background:#fff}
.jt-page.jt-full{height:100vh;border:0;border-radius:0}
.jt-page .jt-bar{display:flex;gap:6px;align-items:center;height:34px;padding:0 8px;
border-bottom:1px solid #ddd;white-space:nowrap;overflow:hidden}
.jt-page .jt-title{font-weight:600;margin-right:8px;overflow:hidden;text-overflow:ellipsis}
.jt-page button{font:inherit;padding:1px 7px;margin:0}
.jt-page .jt-status{color:#64748b;font-size:12px}
.jt-page .jt-pan{position:absolute;top:35px;bottom:0;left:0;right:0;overflow:hidden;
cursor:grab}
.jt-page .jt-pan svg{width:100%;height:100%;max-width:none;max-height:none}
.jt-page g.jt-group>path,.jt-page g.jt-group>polygon{cursor:pointer}
.jt-page g.jt-folded>path,.jt-page g.jt-folded>polygon{fill:#E9E1CC;stroke:#8A6D3B;
stroke-width:2}
.jt-page g.jt-folded>text:not(.jt-box){display:none}
.jt-page .jt-hidden{display:none}
.jt-page text.jt-box{font-size:14px;font-weight:600;fill:#3d2f12;pointer-events:none}
"""

_SCRIPT = r"""
(function(){
const me = document.currentScript;
const root = (me && me.closest('.jt-page')) || document.getElementById('__UID__');
const q = s => root.querySelector(s), full = root.classList.contains('jt-full');
const groups = JSON.parse(q('script.jt-groups').textContent);
const view = q('.jt-pan'), svg = view.querySelector('svg');
const byTitle = {}, edges = [], clusters = {};
svg.querySelectorAll('g.node,g.edge,g.cluster').forEach(g => {
  const t = g.querySelector('title'); if (!t) return;
  const name = t.textContent;
  if (g.classList.contains('edge')) { const [a, b] = name.split('->'); edges.push({g, a, b}); }
  else if (g.classList.contains('cluster')) clusters[name] = g;
  else byTitle[name] = g;
});
const folded = new Set(groups.filter(g => g.folded).map(g => g.id));
function hiddenBy(id) {  // the outermost folded group holding group id, or null
  let found = null;
  for (let p = groups[id].parent; p !== null; p = groups[p].parent)
    if (folded.has(p)) found = p;
  return found;
}
function render() {
  const hide = new Set(), inFold = {};
  Object.values(clusters).forEach(c => c.classList.remove('jt-hidden'));
  groups.forEach(g => {
    const c = clusters[g.cluster]; if (!c) return;
    const outer = hiddenBy(g.id);
    c.classList.toggle('jt-hidden', outer !== null);
    c.classList.toggle('jt-folded', outer === null && folded.has(g.id));
    const box = c.querySelector('text.jt-box'); if (box) box.remove();
    if (outer === null && folded.has(g.id)) {
      g.nodes.forEach(n => { hide.add(n); inFold[n] = g.id; });
      g.clusters.forEach(n => { if (clusters[n]) clusters[n].classList.add('jt-hidden'); });
      const b = c.getBBox(), t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
      t.setAttribute('class', 'jt-box'); t.setAttribute('x', b.x + b.width / 2);
      t.setAttribute('y', b.y + Math.min(b.height / 2, 40));
      t.setAttribute('text-anchor', 'middle');
      t.textContent = '\u25B8 ' + g.label + ': ' + g.size + ' equation'
        + (g.size === 1 ? '' : 's');
      c.appendChild(t);
    }
  });
  Object.entries(byTitle).forEach(([n, g]) => g.classList.toggle('jt-hidden', hide.has(n)));
  edges.forEach(e => e.g.classList.toggle('jt-hidden',
    hide.has(e.a) && hide.has(e.b) && inFold[e.a] === inFold[e.b]));
  q('.jt-status').textContent = (groups.length ? folded.size + ' of ' + groups.length
    + ' groups folded \u00b7 ' : '') + (full ? '' : 'drag pans, ctrl+wheel zooms');
}
groups.forEach(g => {
  const c = clusters[g.cluster]; if (!c) return;
  c.classList.add('jt-group'); c.setAttribute('data-group', g.id);
});
svg.addEventListener('click', ev => {
  if (moved) return;
  const c = ev.target.closest('g.jt-group'); if (!c) return;
  const id = +c.getAttribute('data-group');
  if (ev.target.closest('g.node')) return;
  folded.has(id) ? folded.delete(id) : folded.add(id);
  render();
});
const api = {groups, folded, render,
  open: id => { folded.delete(id); render(); }, fold: id => { folded.add(id); render(); }};
root.jaxtourPage = api; window.jaxtourPage = api;  // the last one drawn, for a console
q('.jt-open').onclick = () => { folded.clear(); render(); };
q('.jt-fold').onclick = () => {
  groups.forEach(g => { if (g.parent === null) folded.add(g.id); }); render(); };
// the picture's own size, then a box in the notebook that shows it whole at most
const b0 = svg.viewBox.baseVal;  // live: copied, so that "fit" can go back to it
const vb0 = {x: b0.x, y: b0.y, width: b0.width, height: b0.height};
let vb = [vb0.x, vb0.y, vb0.width, vb0.height];
const natural = [svg.width.baseVal.value || vb0.width, svg.height.baseVal.value || vb0.height];
svg.removeAttribute('width'); svg.removeAttribute('height');
function apply() { svg.setAttribute('viewBox', vb.join(' ')); }
if (!full) {  // in a notebook: as tall as the picture at the cell's width, within a screen
  const fit = Math.min(1, (root.clientWidth || 800) / natural[0]);
  const most = Math.max(320, Math.min(720, 0.85 * (window.innerHeight || 800)));
  const tall = Math.max(160, Math.min(most, natural[1] * fit));
  root.style.height = Math.round(35 + tall) + 'px';
  const box = [view.clientWidth || 800, tall];  // taller still: its top, at the width
  if (vb[3] / vb[2] > box[1] / box[0]) vb[3] = vb[2] * box[1] / box[0];
  apply();
}
function zoom(f, cx, cy) {
  const r = svg.getBoundingClientRect(), s = Math.max(vb[2] / r.width, vb[3] / r.height);
  const x = vb[0] + (cx - r.left) * s, y = vb[1] + (cy - r.top) * s;
  vb = [x - (x - vb[0]) * f, y - (y - vb[1]) * f, vb[2] * f, vb[3] * f]; apply();
}
view.addEventListener('wheel', ev => {
  if (!full && !ev.ctrlKey && !ev.metaKey) return;  // in a notebook the wheel scrolls
  ev.preventDefault(); zoom(ev.deltaY > 0 ? 1.15 : 1 / 1.15, ev.clientX, ev.clientY);
}, {passive: false});
let drag = null, moved = false;
view.addEventListener('mousedown', ev => { drag = [ev.clientX, ev.clientY]; moved = false; });
window.addEventListener('mouseup', () => {
  drag = null; setTimeout(() => { moved = false; }); });
window.addEventListener('mousemove', ev => {
  if (!drag) return;
  const r = svg.getBoundingClientRect(), s = Math.max(vb[2] / r.width, vb[3] / r.height);
  const dx = ev.clientX - drag[0], dy = ev.clientY - drag[1];
  if (Math.abs(dx) + Math.abs(dy) > 3) moved = true;
  vb[0] -= dx * s; vb[1] -= dy * s; drag = [ev.clientX, ev.clientY]; apply();
});
function centre(f) { const r = svg.getBoundingClientRect();
  zoom(f, r.left + r.width / 2, r.top + r.height / 2); }
q('.jt-in').onclick = () => centre(1 / 1.5);
q('.jt-out').onclick = () => centre(1.5);
q('.jt-fit').onclick = () => { vb = [vb0.x, vb0.y, vb0.width, vb0.height]; apply(); };
render();
})();
"""


def fragment(
    svg: str, title: str, groups: list[dict] | None = None, *, full: bool = False
) -> str:
    """`svg` with its controls in one ``<div class="jt-page">``, its `groups` foldable.

    Args:
        svg: the SVG text (an XML prologue is dropped).
        title: the heading over the picture.
        groups: dicts with `id`, `label`, `size`, `parent`, `cluster` (the cluster's
            Graphviz name), `nodes` (the node names inside) and `folded` (whether it
            opens folded); None for a picture without groups.
        full: fill the page (a page of its own) rather than a box sized to the picture
            (a notebook's output).

    Example:
        >>> one, two = (fragment('<svg id="a" viewBox="0 0 1 1"></svg>', "t") for _ in "12")
        >>> one.startswith("<div class='jt-page' id='jt-") and one[:40] != two[:40]
        True
        >>> "getElementById(" in one and "document.body" not in one
        True
    """
    uid = f"jt-{uuid.uuid4().hex[:12]}"
    data = json.dumps(
        [
            {k: g[k] for k in ("id", "label", "size", "parent", "cluster", "nodes")}
            | {"clusters": g.get("clusters", [])}
            | {"folded": bool(g.get("folded"))}
            for g in groups or []
        ]
    ).replace("</", "<\\/")
    body = _SVG_IDS.sub(
        lambda m: f"{m.group(1)}{uid}-{m.group(2)}", _PROLOGUE.sub("", svg, count=1)
    )
    name = html.escape(title)
    buttons = "".join(
        f"<button class='jt-{cls}' type='button'>{text}</button>"
        for cls, text in (
            ("in", "+"),
            ("out", "&minus;"),
            ("fit", "fit"),
            ("open", "open all"),
            ("fold", "fold all"),
        )
    )
    return (
        f"<div class='jt-page{' jt-full' * full}' id='{uid}'><style>{_STYLE}</style>"
        f"<div class='jt-bar'><span class='jt-title'>{name}</span>{buttons}"
        f"<span class='jt-status'></span></div><div class='jt-pan'>{body}</div>"
        f"<script type='application/json' class='jt-groups'>{data}</script>"
        f"<script>{_SCRIPT.replace('__UID__', uid)}</script></div>"
    )


def page(svg: str, title: str, groups: list[dict] | None = None) -> str:
    """One self-contained HTML page showing `svg`, its `groups` foldable (see `fragment`).

    Example:
        >>> text = page('<svg viewBox="0 0 10 10"></svg>', "t")
        >>> "<script" in text and "http" not in text.replace("http://www.w3.org", "")
        True
    """
    name = html.escape(title)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{name}</title><style>body{{margin:0}}</style></head><body>"
        f"{fragment(svg, title, groups, full=True)}</body></html>\n"
    )
