"""Pictures of a stepped run: each equation a node with its value and its source line.

Styled as `draw_jaxpr` draws jaxprs (one palette, `jaxtour._style`): inputs white,
outputs dark, equations coloured by primitive family, calls and the taken `cond`
branch as clusters. A step can be highlighted (the NaN, the slider's position), steps
after a point shown as not yet run, or only a neighbourhood drawn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from jaxtour import _canvas, _fit, _ir, _palette, _style
from jaxtour._code_groups import (
    Group,
    call_label,
    code_groups,
    names_own_code,
    runs_call,
)
from jaxtour._diagram import Diagram
from jaxtour._group_draw import GroupDrawing, whole_page
from jaxtour._ir import Stepped

HIGHLIGHT = {"color": "#C0282D", "penwidth": "3.5", "style": "rounded,filled,bold"}


def preview(value: Any) -> str:
    """A value in one short line: ``f32[3] min -1 max 2 mean 0.3``, ``f32[] = 0.693``.

    NaNs and Infs are counted and left out of min/max/mean.

    Example:
        >>> import numpy as np
        >>> preview(np.array([1.0, np.nan, 3.0], np.float32))
        'f32[3] min 1 max 3 mean 2, 1 NaN'
    """
    head, array = _ir.value_type(value), _ir.host(value)
    if _ir.is_key(value):
        data = " ".join(str(x) for x in array.reshape(-1)[:4].tolist())
        return f"{head} key data {data}{' …' if array.size > 4 else ''}"
    if array.size == 0 or array.dtype.kind not in "biufc":
        return head
    if array.dtype.kind == "b":
        return (
            f"{head} = {bool(array.item())}"
            if array.size == 1
            else f"{head} {int(array.sum())} of {array.size} True"
        )
    if array.size == 1:
        return f"{head} = {_number(array.item())}"
    if array.dtype.kind == "c":
        return head
    numbers = array.astype(np.float64)
    finite = numbers[np.isfinite(numbers)]
    parts = (
        [
            f"min {_number(np.min(finite))} max {_number(np.max(finite))} "
            f"mean {_number(finite.mean())}"
        ]
        if finite.size
        else []
    )
    parts += [
        f"{n} {what}"
        for n, what in (
            (int(np.isnan(numbers).sum()), "NaN"),
            (int(np.isinf(numbers).sum()), "Inf"),
        )
        if n
    ]
    return f"{head} {', '.join(parts)}"


SHADES = "░▒▓█"  # low to high; block characters share one width, so rows line up


def heatmap(value: Any, rows: int = 3, cols: int = 8) -> list[str]:
    """A 2-D real array as at most `rows` lines of `cols` shades (block means, scaled
    from the array's min to its max); `×` marks a block with a NaN or Inf. Empty for
    anything that is not a 2-D real array of at least 2 x 2.

    Example:
        >>> heatmap(np.arange(4.0).reshape(2, 2))
        ['░▒', '▓█']
    """
    array = _ir.host(value)
    if _ir.is_key(value) or array.ndim != 2 or min(array.shape) < 2:
        return []
    if array.dtype.kind not in "biuf":
        return []
    numbers = array.astype(np.float64)
    blocks = [
        [float(b.mean()) for b in np.array_split(band, min(cols, array.shape[1]), 1)]
        for band in np.array_split(numbers, min(rows, array.shape[0]), axis=0)
    ]
    finite = [v for row in blocks for v in row if np.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
    span = high - low

    def shade(v: float) -> str:
        if not np.isfinite(v):
            return "×"
        level = int((v - low) / span * len(SHADES)) if span else len(SHADES) // 2
        return SHADES[min(level, len(SHADES) - 1)]

    return ["".join(shade(v) for v in row) for row in blocks]


def _number(x: Any) -> str:
    return f"{x:.3g}" if isinstance(x, float | np.floating) else str(x)


def draw_run(
    run: Stepped,
    title: str,
    *,
    arg_names: Any = None,
    rankdir: str = "TB",
    only: set[int] | None = None,
    highlight: int | None = None,
    upto: int | None = None,
    subtitle: str = "",
) -> Diagram:
    """The steps of `run` (those in `only`, or all) as a `Diagram`.

    Steps after `upto` are drawn dashed, without values; `highlight` gets a red frame.
    A run of the user's own calls is nested by them (`_code_groups`): a long run opens
    as many calls as fit 5,000 px, the others folded into one box each; the page
    (`Diagram.save(".html")`) opens them all.
    """

    direction = [rankdir]  # the way the picture runs: turned when a strip
    tree = code_groups(list(run.steps), stack=_stack)  # one tree: plan keys on ids
    code = code_worthy(run, only, tree)
    if only is None and code:
        title += ", nested by your code's calls"

    def build(opened: set | None) -> Any:
        return _build(
            run,
            title,
            arg_names,
            direction[0],
            only,
            highlight,
            upto,
            subtitle,
            opened,
            tree,
            code,
        )

    if not code:

        def plain(way: str) -> Diagram:
            direction[0] = way
            canvas = build(set())
            canvas.finish()
            return Diagram.from_graph(canvas.graph, title)

        return _fit.turned(plain, rankdir, plain(rankdir))
    default: dict[str, set[int]] = {}  # each way's folded groups

    def draw(nodes: int) -> Diagram:
        canvas = _fit.plan(build, nodes) if only is None else build(None)
        default[direction[0]] = {id(g) for g in canvas.folded_groups}
        canvas.finish()
        return Diagram.from_graph(canvas.graph, title)

    def drawn(way: str) -> Diagram:
        direction[0] = way
        return _fit.fit(draw, BUDGET, cap=False)[0]

    diagram = _fit.turned(drawn, rankdir, drawn(rankdir))
    direction[0] = "LR" if "rankdir=LR" in diagram.source else rankdir

    diagram.whole = whole_page(
        lambda: build(None), lambda: default.get(direction[0], set())
    )
    return diagram


def _build(
    run: Stepped,
    title: str,
    arg_names: Any,
    rankdir: str,
    only: set[int] | None,
    highlight: int | None,
    upto: int | None,
    subtitle: str,
    opened: set | None,
    tree: Group,
    code: bool,
) -> Any:
    import graphviz

    graph = graphviz.Digraph(
        name="steps",
        graph_attr=_style.graph_attrs(title, rankdir, subtitle),
        node_attr=_style.NODE,
        edge_attr=_style.EDGE,
    )
    canvas = (
        StepsBuilder(graph, upto, highlight) if code else _canvas.Canvas(graph, False)
    )
    made: dict = {}  # var -> node that made it
    names = list(arg_names or ())
    for i, (var, value) in enumerate(zip(run.invars, run.inputs, strict=True)):
        name = names[i] if i < len(names) and names[i] else f"in{i}"
        if only is None or _reads(run, only, var):
            graph.node(
                f"in{i}", _style.text_label(name, preview(value)), **_style.INPUT
            )
            made[var] = f"in{i}"
    if isinstance(canvas, StepsBuilder):
        canvas.draw(tree, made, only, opened)
    for step in [] if code else run.steps:
        if only is None or step.index in only:
            if only is not None:
                _loose_inputs(graph, step, made)
            _step_node(canvas, step, made, upto, highlight)
    if only is None and run.outputs:
        done = upto is None or upto >= len(run.steps) - 1
        for i, (atom, value) in enumerate(zip(run.outvars, run.outputs, strict=True)):
            shown = preview(value) if done else _ir.value_type(value)
            graph.node(f"out{i}", _style.text_label(f"out{i}", shown), **_style.OUTPUT)
            _connect(canvas, atom, f"out{i}", made)
    return canvas


def _loose_inputs(graph: Any, step: Any, made: dict) -> None:
    """Values a drawn step reads from steps not drawn: small nodes with their values."""
    for atom, value in zip(step.invars, step.inputs, strict=True):
        if not _ir.is_literal(atom) and atom not in made:
            node = made[atom] = f"value{len(made)}"
            graph.node(
                node,
                _style.text_label(preview(value)),
                shape="plaintext",
                fontsize="12",
                style="solid",
            )


def _reads(run: Stepped, only: set[int], var: Any) -> bool:
    return any(var in step.invars for step in run.steps if step.index in only)


def _step_node(
    canvas: _canvas.Canvas,
    step: Any,
    made: dict,
    upto: int | None,
    highlight: int | None,
    into: Any = None,
    call: str = "",
) -> None:
    """Draw `step` (into `into`, else into clusters of its jit scopes); `call`: the
    user's call it sits in, when no box around it says so."""
    node = f"step{step.index}"
    ran = upto is None or step.index <= upto
    value = preview(step.outputs[0]) if ran and step.outputs else ""
    more = f" (+{len(step.outputs) - 1} more)" if ran and len(step.outputs) > 1 else ""
    line = step.line.where if step.line else ""
    shades = heatmap(step.outputs[0]) if ran and step.outputs else []
    label = _style.text_label(
        f"{step.index}: {step.primitive}",
        value + more,
        *shades,
        line,
        _runs(step),
        call,
    )
    attrs = {
        **_palette.node_attrs(step.primitive),
        **({} if ran else _style.DEAD),
        **(HIGHLIGHT if step.index == highlight else {}),
    }
    tooltip = f"{step.line}  {step.line.code}" if step.line else step.primitive
    with contextlib.nullcontext(into) if into else _clusters(canvas, step.scope) as g:
        g.node(node, label, tooltip=_style.tooltip(tooltip), **attrs)
    canvas.families.add(_palette.family(step.primitive))
    for atom in step.invars:
        _connect(canvas, atom, node, made)
    for var in step.outvars:
        made[var] = node


def _runs(step: Any) -> str:
    return runs_call(step.eqn, _stack(step)) if step.eqn is not None else ""


def _connect(canvas: _canvas.Canvas, atom: Any, dst: str, made: dict) -> None:
    if not _ir.is_literal(atom) and atom in made:
        canvas.edge(made[atom], dst)


@contextlib.contextmanager
def _clusters(canvas: _canvas.Canvas, scope: tuple[str, ...]) -> Iterator[Any]:
    """Nested clusters for a scope such as ("loss", "cond branch 1"), reopened by name
    (Graphviz merges subgraphs of one name), so the steps of one call share them."""
    ids: dict = canvas.__dict__.setdefault("scope_ids", {})
    with contextlib.ExitStack() as stack:
        g = canvas.graph
        for depth in range(len(scope)):
            name = ids.setdefault(scope[: depth + 1], canvas.new_id("cluster_"))
            g = stack.enter_context(g.subgraph(name=name))
            g.attr(label=scope[depth], **_style.NESTED)
        yield g


BUDGET = 60  # nodes a run nested by the user's calls draws at most
CODE_FROM = 40  # steps: past this many (or any window of them), a run is nested


def _stack(step: Any) -> _ir.Stack:
    return _ir.user_stack(step.eqn) if step.eqn is not None else _ir.Stack((), None)


def code_worthy(run: Stepped, only: set[int] | None, tree: Group | None = None) -> bool:
    """Whether to nest `run` by the user's calls: a long run, or a window of one,
    whose steps the user's code made; a short one when a box would name the user's
    own code (`names_own_code`: not only the function stepped through). `tree`:
    the run's steps nested, when already read."""
    if only is None and len(run.steps) <= CODE_FROM:
        return names_own_code(tree or code_groups(list(run.steps), stack=_stack))
    return any(_stack(s).frames for s in run.steps[:200])


class StepsBuilder(GroupDrawing, _canvas.Canvas):
    """The steps of a run nested by the user's calls (`_group_draw`)."""

    unit = "step"

    def __init__(self, graph: Any, upto: int | None, highlight: int | None) -> None:
        super().__init__(graph, False)
        self.upto, self.highlight = upto, highlight
        self.start_groups(set())

    def draw(self, tree: Group, made: dict, only: set[int] | None, opened: Any) -> None:
        """Draw `tree` (the whole run nested, so a window's steps sit in the calls
        they ran in)."""
        self.open = opened
        self.items(self.graph, tree, made, only)

    def items(self, g: Any, group: Group, *context: Any) -> None:
        only = context[1]
        if only is not None:  # a window: only its steps, and the calls holding them
            kept = [i for i in group.items if _holds(i, only)]
            group = Group(group.label, group.kind, group.where, kept)
        super().items(g, group, *context)

    def leaf(self, g: Any, item: Any, *context: Any) -> None:
        made, only = context
        if only is not None:
            _loose_inputs(g, item, made)
        before = len(made)
        # a window's step names its call when a group of the steps run is too small
        call = call_label(_stack(item), 2) if only is not None else ""
        around = self.inside[-1]["label"].rstrip("0123456789 ") if self.inside else ""
        call = "" if call == around else call and f"in {call}"
        _step_node(self, item, made, self.upto, self.highlight, into=g, call=call)
        drawn = [f"step{item.index}"] + [f"value{i}" for i in range(before, len(made))]
        self.drawn_nodes += 1
        for group in self.inside:
            group["nodes"] += drawn

    def primitive(self, item: Any) -> str:
        return str(item.primitive)

    def fold_into(self, node: str, group: Group, *context: Any) -> None:
        made = context[0]
        for step in group.eqns():
            for atom in step.invars:
                _connect(self, atom, node, made)
            for var in step.outvars:
                made[var] = node


def _holds(item: Any, only: set[int]) -> bool:
    if isinstance(item, Group):
        return any(step.index in only for step in item.eqns())
    return bool(item.index in only)
