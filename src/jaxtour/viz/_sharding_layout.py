"""The picture of `draw_sharding`: the array's blocks, the mesh's devices, the arrow.

The picture is laid out here, not by Graphviz: every box is pinned where it belongs
(`layout=neato`, ``pos="x,y!"`` in inches) and labelled with plain text, so the
system `dot` and the embedded Graphviz draw the same thing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from jaxtour.viz._pipeline_graph import FONT, node_style

ARRAY_SIZE = (4.2, 2.8)  # inches the whole array may span: (width, height)
MIN_BLOCK = (1.1, 0.6)  # inches
CELL, GAP = (1.0, 0.5), 0.08  # a device of the mesh, and the space between two
ARROW = {
    False: 1.9,
    True: 1.3,
}  # inches from the mesh to the array: beside it, above it


@dataclass(frozen=True)
class Block:
    """One block of an array: its index range per dimension and the devices holding it."""

    index: tuple[tuple[int, int], ...]  # (start, stop) per dimension
    devices: tuple[int, ...]  # device ids, ascending

    def text(self) -> str:
        """The index range as Python slices, e.g. ``"[0:2, 0:4]"``."""
        return "[" + ", ".join(f"{a}:{b}" for a, b in self.index) + "]"


def sharding_graph(caption: str) -> Any:
    """An empty picture with `caption` below it: pinned, filled, fixed-size boxes."""
    import graphviz

    graph = graphviz.Digraph("sharding")
    graph.attr(
        layout="neato",
        splines="false",
        fontname=FONT,
        fontsize="16",
        label=caption,
        labelloc="b",
        bgcolor="white",
        pad="0.3",
    )
    node_style(graph, style="filled", fixedsize="true", fontsize="14", color="#333333")
    graph.attr("edge", fontname=FONT, fontsize="14", color="#555555", penwidth="1.6")
    return graph


def _pos(x: float, y: float) -> str:
    return f"{x:.3f},{y:.3f}!"  # inches, pinned


def draw_array(
    graph: Any, blocks: list[Block], shape: Any, devices: dict, colours: dict
) -> tuple[float, float]:
    """Pin one box per block, array's top-left corner at (0, 0); return (width, height)."""
    rows = sorted({b.index[:-1] for b in blocks})
    cols = sorted({b.index[-1:] for b in blocks})
    # at least 1 each: a zero-size array's blocks are drawn at their least
    lead = max(1, _volume([(0, n) for n in shape[:-1]]))
    last = max(1, shape[-1]) if shape else 1
    widest = max(len(_block_label(b, devices).split("\n")[-1]) for b in blocks)
    min_w = max(MIN_BLOCK[0], 0.11 * widest + 0.2)
    widths = [max(min_w, ARRAY_SIZE[0] * _volume(c) / last) for c in cols]
    heights = [
        max(MIN_BLOCK[1], ARRAY_SIZE[1] * _volume(r) / lead)
        if len(shape) > 1
        else MIN_BLOCK[1]
        for r in rows
    ]  # a vector is one strip
    lefts, tops = [0.0, *accumulate(widths)], [0.0, *accumulate(heights)]
    for n, block in enumerate(blocks):
        i, j = rows.index(block.index[:-1]), cols.index(block.index[-1:])
        fill = ":".join(colours[d] for d in block.devices)
        graph.node(
            f"block{n}",
            _block_label(block, devices),
            pos=_pos(lefts[j] + widths[j] / 2, -(tops[i] + heights[i] / 2)),
            width=f"{widths[j]:.3f}",
            height=f"{heights[i]:.3f}",
            fillcolor=fill,
            style="striped" if len(block.devices) > 1 else "filled",
            tooltip=f"block {block.text()} on device{'s' * (len(block.devices) > 1)} "
            + ",".join(map(str, block.devices)),
        )
    return lefts[-1], tops[-1]


def _volume(ranges: Any) -> int:
    return math.prod(stop - start for start, stop in ranges)


def _block_label(block: Block, devices: dict) -> str:
    names = [device_name(devices[i]) for i in block.devices]
    if len(names) == 1:
        return f"{names[0]}\n{block.text()}"
    ids = block.devices
    run = len(ids) > 2 and ids == tuple(range(ids[0], ids[-1] + 1))
    platform = names[0].split()[0]
    held = f"{platform} {ids[0]}–{ids[-1]}" if run else " · ".join(names)
    if 0 in (stop - start for start, stop in block.index):  # JAX's empty [0:0] blocks
        return f"{block.text()}\nempty, on {held}"
    return f"{block.text()}\n{len(ids)} copies: {held}"


def device_name(device: Any) -> str:
    """A device as its boxes and captions name it, e.g. ``"CPU 3"``."""
    return f"{device.platform.upper()} {device.id}"


def draw_mesh(
    graph: Any,
    mesh: Any,
    colours: dict,
    column: bool,
    above: bool,
    array: tuple[float, float],
) -> None:
    """Pin the mesh's devices in a grid beside (or above) the array, with axis labels."""
    grid, row_names, col_names = _mesh_grid(mesh, column)
    step_x, step_y = CELL[0] + GAP, CELL[1] + GAP
    width, height = grid.shape[1] * step_x - GAP, grid.shape[0] * step_y - GAP
    if above:
        left, top = (array[0] - width) / 2, ARROW[True] + height
    else:
        left, top = -ARROW[False] - width, -array[1] / 2 + height / 2
    for r, line in enumerate(grid):
        y = top - r * step_y - CELL[1] / 2
        if row_names[r]:
            _text(graph, f"mesh_row{r}", row_names[r], left - 0.12, y, anchor="e")
        for c, device in enumerate(line):
            graph.node(
                f"device{device.id}",
                device_name(device),
                pos=_pos(left + c * step_x + CELL[0] / 2, y),
                width=str(CELL[0]),
                height=str(CELL[1]),
                fillcolor=colours[device.id],
            )
    for c, name in enumerate(col_names):
        _text(graph, f"mesh_col{c}", name, left + c * step_x + CELL[0] / 2, top + 0.22)
    sizes = " × ".join(f"'{a}': {mesh.shape[a]}" for a in mesh.axis_names)
    _text(
        graph,
        "mesh_title",
        f"mesh  {sizes}",
        left + width / 2,
        top + 0.6,
        fontsize="16",
    )


def _mesh_grid(mesh: Any, column: bool) -> Any:
    """The devices as a 2-D grid, with a name for each row and column.

    The last mesh axis runs across; the others, flattened, run down. A 1-D mesh
    stands as a column when it splits the array's rows, so it lines up with them.
    """
    import numpy as np

    names = [str(a) for a in mesh.axis_names]
    devices = mesh.devices
    if devices.ndim == 1 and column:
        return (
            devices.reshape(-1, 1),
            [f"{names[0]} {i}" for i in range(devices.size)],
            [""],
        )
    grid = devices.reshape(-1, devices.shape[-1])
    col_names = [f"{names[-1]} {j}" for j in range(grid.shape[1])]
    row_names = [
        ", ".join(
            f"{a} {int(i)}"
            for a, i in zip(
                names[:-1], np.unravel_index(r, devices.shape[:-1]), strict=True
            )
        )
        for r in range(grid.shape[0])
    ]
    return grid, row_names, col_names


def _text(
    graph: Any,
    name: str,
    text: str,
    x: float,
    y: float,
    *,
    anchor: str = "c",
    **attrs: str,
) -> None:
    """Free text pinned at (x, y): its centre there, or its right ("e") or left ("w") end."""
    width = 0.1 * len(text) + 0.1
    x += {"e": -width / 2, "w": width / 2}.get(anchor, 0.0)
    graph.node(
        name,
        text,
        pos=_pos(x, y),
        shape="plaintext",
        style="",
        width=f"{width:.2f}",
        height="0.3",
        **attrs,
    )


def draw_arrow(graph: Any, spec: str, above: bool, array: tuple[float, float]) -> None:
    """An arrow from the mesh to the array, with the PartitionSpec written beside it."""
    gap = ARROW[above]
    if above:
        x = array[0] / 2
        start, end, text_at, anchor = (
            (x, gap - 0.15),
            (x, 0.15),
            (x + 0.2, gap / 2),
            "w",
        )
    else:
        y = -array[1] / 2
        start, end, text_at, anchor = (
            (-gap + 0.15, y),
            (-0.15, y),
            (-gap / 2, y + 0.25),
            "c",
        )
    for name, (px, py) in (("arrow_from", start), ("arrow_to", end)):
        graph.node(
            name, "", pos=_pos(px, py), shape="point", width="0.01", style="invis"
        )
    graph.edge("arrow_from", "arrow_to")
    _text(
        graph, "spec", spec, *text_at, anchor=anchor, fontname="Courier New,monospace"
    )
