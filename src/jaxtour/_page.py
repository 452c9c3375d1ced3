"""A Diagram as one HTML page that needs no kernel and no network.

The page holds the picture's SVG inline (for a jaxpr nested by the user's calls: every
group open, every equation drawn), a little inline script and styles, and the groups as
JSON: which nodes each group holds, which were folded in the default picture. The
script pans (drag), zooms (wheel, buttons), folds a group (click its frame) and opens it
again (click its box); hovering a box shows its shapes and source line (Graphviz's own
tooltips). Nothing is fetched: no CDN, no font, no `src=`/`href=` to the network, so the
page works saved beside a notebook, in an exported HTML, or opened from a file.
"""

from __future__ import annotations

import html
import json
import re

_PROLOGUE = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.S)

_STYLE = """
body{margin:0;font:14px Helvetica,Arial,sans-serif;color:#1f2933}
header{display:flex;gap:8px;align-items:center;padding:6px 10px;border-bottom:1px solid #ddd}
header h1{font-size:15px;margin:0 12px 0 0;font-weight:600}
button{font:inherit;padding:2px 8px}
#view{position:absolute;top:42px;bottom:0;left:0;right:0;overflow:hidden;cursor:grab}
#view svg{width:100%;height:100%}
g.jt-group>path,g.jt-group>polygon{cursor:pointer}
g.jt-folded>path,g.jt-folded>polygon{fill:#E9E1CC;stroke:#8A6D3B;stroke-width:2}
g.jt-folded>text{display:none}
.jt-hidden{display:none}
text.jt-box{font-size:14px;font-weight:600;fill:#3d2f12;pointer-events:none}
"""

_SCRIPT = r"""
(function(){
const groups = JSON.parse(document.getElementById('jt-groups').textContent);
const view = document.getElementById('view'), svg = view.querySelector('svg');
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
  document.getElementById('jt-status').textContent =
    folded.size + ' of ' + groups.length + ' groups folded';
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
window.jaxtourPage = {groups, folded, render,
  open: id => { folded.delete(id); render(); }, fold: id => { folded.add(id); render(); }};
document.getElementById('jt-open').onclick = () => { folded.clear(); render(); };
document.getElementById('jt-fold').onclick = () => {
  groups.forEach(g => { if (g.parent === null) folded.add(g.id); }); render(); };
// pan and zoom: the viewBox follows the mouse
const vb0 = svg.viewBox.baseVal; let vb = [vb0.x, vb0.y, vb0.width, vb0.height];
svg.removeAttribute('width'); svg.removeAttribute('height');
function apply() { svg.setAttribute('viewBox', vb.join(' ')); }
function zoom(f, cx, cy) {
  const r = svg.getBoundingClientRect(), s = Math.max(vb[2] / r.width, vb[3] / r.height);
  const x = vb[0] + (cx - r.left) * s, y = vb[1] + (cy - r.top) * s;
  vb = [x - (x - vb[0]) * f, y - (y - vb[1]) * f, vb[2] * f, vb[3] * f]; apply();
}
view.addEventListener('wheel', ev => { ev.preventDefault();
  zoom(ev.deltaY > 0 ? 1.15 : 1 / 1.15, ev.clientX, ev.clientY); }, {passive: false});
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
document.getElementById('jt-in').onclick = () => { const r = svg.getBoundingClientRect();
  zoom(1 / 1.5, r.left + r.width / 2, r.top + r.height / 2); };
document.getElementById('jt-out').onclick = () => { const r = svg.getBoundingClientRect();
  zoom(1.5, r.left + r.width / 2, r.top + r.height / 2); };
document.getElementById('jt-fit').onclick = () => {
  vb = [vb0.x, vb0.y, vb0.width, vb0.height]; apply(); };
render();
})();
"""


def page(svg: str, title: str, groups: list[dict] | None = None) -> str:
    """One self-contained HTML page showing `svg`, its `groups` foldable.

    Args:
        svg: the SVG text (an XML prologue is dropped).
        title: the page's title and heading.
        groups: dicts with `id`, `label`, `size`, `parent`, `cluster` (the cluster's
            Graphviz name), `nodes` (the node names inside) and `folded` (whether the
            page opens with it folded); None for a picture without groups.

    Example:
        >>> text = page('<svg viewBox="0 0 10 10"></svg>', "t")
        >>> "<script" in text and "http" not in text.replace("http://www.w3.org", "")
        True
    """
    data = json.dumps(
        [
            {k: g[k] for k in ("id", "label", "size", "parent", "cluster", "nodes")}
            | {"clusters": g.get("clusters", [])}
            | {"folded": bool(g.get("folded"))}
            for g in groups or []
        ]
    ).replace("</", "<\\/")
    body = _PROLOGUE.sub("", svg, count=1)
    name = html.escape(title)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{name}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>{name}</h1><button id='jt-in'>+</button>"
        "<button id='jt-out'>&minus;</button><button id='jt-fit'>fit</button>"
        "<button id='jt-open'>open all</button><button id='jt-fold'>fold all</button>"
        "<span id='jt-status'></span></header>"
        f"<div id='view'>{body}</div>"
        f"<script type='application/json' id='jt-groups'>{data}</script>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )
