"""The model of forward mode that `draw_jvp` draws: a primal lane and a tangent lane."""

from __future__ import annotations

from typing import Any

from jaxtour._ir import FlatJaxpr, is_literal
from jaxtour._number_words import plural
from jaxtour.autodiff import _boxes
from jaxtour.autodiff._adgraph import (
    AUX,
    ADGraph,
    add_lane,
    add_terminal,
    aux_note,
    output_label,
)
from jaxtour.autodiff._trace import Call


def forward_mode_graph(
    call: Call,
    flat: FlatJaxpr,
    paths: list[str],
    aux: list[str],
    values: bool,
    name: str = "f",
    held_aux: list | None = None,
) -> ADGraph:
    """Primal inputs and tangent seeds, two lanes, two outputs, titled with each lane's
    equations (inside boxes too, `_boxes.tally`); `held_aux` holds the aux leaves
    JAX cannot trace, by path (`aux_note`).

    An eqn that reads a value carrying a tangent is in the tangent lane. JAX's JVP of
    a loop or a cond is one box computing both lanes: drawn in the tangent lane, it is
    labelled as both, and the title says so.
    """
    notes = (call.held_note(), aux_note(held_aux or []))
    graph = ADGraph(note="; ".join(filter(None, notes)))
    seeds = flat.invars[call.n_diff : 2 * call.n_diff]
    sources = _add_inputs(graph, call, flat, values)
    total, per_eqn, tangent = _boxes.tally(flat, seeds)
    lanes = [
        "tangent"
        if any(a in tangent for a in e.invars if not is_literal(a))
        else "primal"
        for e in flat.eqns
    ]
    lane_of = {id(e): lane for e, lane in zip(flat.eqns, lanes, strict=True)}

    def edge_kind(eqn: Any, var: Any) -> Any:
        if var in tangent:
            return "tangent"
        return "cross" if lane_of[id(eqn)] == "tangent" else "primal"

    sources = add_lane(graph, flat, lanes, sources, edge_kind, values)
    both = [
        n for n, c in zip(graph.select("op"), per_eqn, strict=True) if _boxes.mixed(c)
    ]
    for node in both:
        node.label += " (primal and tangent)"
    _add_outputs(graph, flat, paths, aux, sources, values, name)
    graph.title = (
        f"jvp of {name}: {plural(total[_boxes.PRIMAL], 'primal equation')}, "
        f"{plural(total[_boxes.TANGENT], 'tangent equation')}"
        + _boxes.caveat(total, _both(len(both)))
    )
    return graph


def _both(boxes: int) -> str:
    if not boxes:
        return ""
    what = "1 box computes" if boxes == 1 else f"{boxes} boxes compute"
    return f"{what} both lanes, drawn in the tangent lane"


def _add_inputs(graph: ADGraph, call: Call, flat: FlatJaxpr, values: bool) -> dict:
    """The primal inputs, their tangent seeds and the fixed inputs; var -> node id."""
    n_primal = call.n_diff
    labels = [
        *call.labels[:n_primal],
        *(f"tangent of {n}" for n in call.labels[:n_primal]),
        *call.labels[n_primal:],
    ]
    groups = call.groups or [""] * len(call.labels)
    groups = [
        *groups[:n_primal],
        *(g and f"tangent of {g}" for g in groups[:n_primal]),
        *groups[n_primal:],
    ]
    sources = {}
    for i, (var, label) in enumerate(zip(flat.invars, labels, strict=True)):
        kind, lane = (
            ("seed", "tangent")
            if n_primal <= i < 2 * n_primal
            else (("input" if i < n_primal else "fixed"), "primal")
        )
        sources[var] = add_terminal(
            graph, f"in{i}", kind, lane, label, flat, var, values, groups[i]
        )
    return sources


def _add_outputs(
    graph: ADGraph,
    flat: FlatJaxpr,
    paths: list[str],
    aux: list[str],
    sources: dict,
    values: bool,
    name: str,
) -> None:
    """f's output (primal lane), its tangent (tangent lane), then any aux; each leaf
    named by its path in f's output, and f as the title names it."""
    labels = [
        *(output_label(f"{name}(…)", p) for p in paths),
        *(output_label(f"tangent of {name}(…)", p) for p in paths),
        *(output_label("", p, aux=True) for p in aux),
    ]
    groups = [f"{name}(…)"] * len(paths) + [f"tangent of {name}(…)"] * len(paths)
    groups += [AUX] * len(aux)
    for k, atom in enumerate(flat.outvars):
        lane = "tangent" if len(paths) <= k < 2 * len(paths) else "primal"
        node = add_terminal(
            graph, f"out{k}", "output", lane, labels[k], flat, atom, values, groups[k]
        )
        if not is_literal(atom):
            graph.link(sources[atom], node, lane if lane == "tangent" else "primal")
