"""`draw_sharding`: which device holds which block of an array, for slides.

Left (or above), the mesh: the devices in their grid, one colour each, with the axis
names. Right (or below), the array: its blocks at their size, each coloured by the
device that holds it and labelled with its index range. A block held by several
devices (the `PartitionSpec` leaves a mesh axis out, so the block is replicated along
it) is striped in all their colours. Everything is read from
`x.sharding.devices_indices_map(x.shape)`.

The picture is laid out here, not by Graphviz: every box is pinned where it belongs
(`layout=neato`, ``pos="x,y!"`` in inches) and labelled with plain text, so the
system `dot` and the embedded Graphviz draw the same thing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import accumulate

import jax

from jaxtour import _ir
from jaxtour._diagram import Diagram
from jaxtour._style import plural
from jaxtour.viz._pipeline import FONT, node_style

# ColorBrewer Set3: twelve light colours that black text reads well on.
PALETTE = (
    "#8dd3c7",
    "#ffffb3",
    "#bebada",
    "#fb8072",
    "#80b1d3",
    "#fdb462",
    "#b3de69",
    "#fccde5",
    "#d9d9d9",
    "#bc80bd",
    "#ccebc5",
    "#ffed6f",
)
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


def draw_sharding(x, *, colour_by: str = "device") -> Diagram:
    """Draw how an array is laid out over devices: which device holds which block.

    As `jax.debug.visualize_array_sharding`, but a `Diagram` for slides, for any
    number of dimensions, and with the mesh drawn beside the array: each device has
    one colour, each block is coloured by the device holding it and labelled with its
    index range, and a block replicated over a mesh axis is striped in the colours of
    all its copies.

    Args:
        x: a `jax.Array`, or a `jax.ShapeDtypeStruct` with a `sharding` (to draw a
            layout without allocating the array).
        colour_by: ``"device"`` (one colour each) or ``"process"`` (one colour per
            JAX process, `jax.Device.process_index`: where a multi-process mesh
            crosses from one host to the next).

    Returns:
        A `Diagram` titled with the shape and the number of blocks and copies.

    Raises:
        TypeError: `x` has no sharding (a NumPy array, a Python number).
        ValueError: `colour_by` is neither "device" nor "process".

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jax.sharding import NamedSharding, PartitionSpec as P
        >>> mesh = jax.make_mesh((1,), ("batch",), devices=jax.devices()[:1])
        >>> x = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("batch")))
        >>> draw_sharding(x).title
        'f32[8,4] on 1 device: 1 block'
    """
    sharding, shape, dtype = _check_array(x)
    blocks = blocks_of(sharding, shape)
    devices = {d.id: d for d in sharding.device_set}
    colours = _colours(sharding, devices, colour_by)
    caption = _caption(sharding, shape, dtype, blocks)
    if colour_by == "process":
        caption += "\n" + _process_text(devices)
    graph = _graph(caption)
    mesh = _mesh_of(sharding)
    column = _splits_rows(sharding, shape)
    # A 1-D mesh that splits the rows stands beside them; one that splits across goes on top.
    above = mesh is not None and mesh.devices.ndim == 1 and not column
    size = _draw_array(
        graph, blocks, shape, devices, colours
    )  # (width, height), inches
    if mesh is not None:
        _draw_mesh(graph, mesh, colours, column, above, size)
        _draw_arrow(graph, _spec_text(sharding), above, size)
    return Diagram.from_graph(graph, _title(shape, dtype, blocks, len(devices)))


def blocks_of(sharding, shape: tuple[int, ...]) -> list[Block]:
    """The distinct blocks of an array of `shape` laid out by `sharding`, in index order.

    Example:
        >>> import jax
        >>> s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
        >>> blocks_of(s, (8, 4))
        [Block(index=((0, 8), (0, 4)), devices=(0,))]
    """
    holders: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for device, index in sharding.devices_indices_map(tuple(shape)).items():
        ranges = tuple(s.indices(n)[:2] for s, n in zip(index, shape, strict=True))
        holders.setdefault(ranges, []).append(device.id)
    return [Block(r, tuple(sorted(ids))) for r, ids in sorted(holders.items())]


def _check_array(x):
    sharding = getattr(x, "sharding", None)
    if sharding is None or not hasattr(sharding, "devices_indices_map"):
        raise TypeError(
            f"draw_sharding needs a jax.Array (or a jax.ShapeDtypeStruct with a sharding); "
            f"got {type(x).__module__}.{type(x).__name__}. Put it on devices first, e.g. "
            "jax.device_put(x, NamedSharding(mesh, PartitionSpec('batch')))."
        )
    return sharding, tuple(x.shape), x.dtype


def _colours(sharding, devices: dict, colour_by: str) -> dict[int, str]:
    if colour_by == "process":
        return {i: PALETTE[d.process_index % len(PALETTE)] for i, d in devices.items()}
    if colour_by != "device":
        raise ValueError(
            f'`colour_by` must be "device" or "process"; got {colour_by!r}.'
        )
    return {i: PALETTE[n % len(PALETTE)] for n, i in enumerate(_device_order(sharding))}


def _process_text(devices: dict) -> str:
    ids: dict[int, list[int]] = {}
    for i, device in sorted(devices.items()):
        ids.setdefault(device.process_index, []).append(i)
    spans = [
        _device_name(devices[v[0]]) + (f"–{v[-1]}" if len(v) > 1 else "")
        for _, v in sorted(ids.items())
    ]
    return "coloured by process: " + "; ".join(
        f"process {p}: {span}" for p, span in zip(sorted(ids), spans, strict=True)
    )


def _mesh_of(sharding):
    mesh = getattr(sharding, "mesh", None)  # only a NamedSharding has one
    return None if mesh is None or getattr(mesh, "empty", False) else mesh


def _splits_rows(sharding, shape) -> bool:
    spec: tuple = tuple(getattr(sharding, "spec", ()))
    return len(shape) > 1 and len(spec) > 0 and spec[0] is not None


def _device_order(sharding) -> list[int]:
    # Colours follow the mesh's order when there is one, so neighbours differ.
    mesh = _mesh_of(sharding)
    if mesh is not None:
        return [d.id for d in mesh.devices.flat]
    return sorted(d.id for d in sharding.device_set)


def _graph(caption: str):
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


def _draw_array(
    graph, blocks: list[Block], shape, devices: dict, colours: dict
) -> tuple[float, float]:
    """Pin one box per block, array's top-left corner at (0, 0); return (width, height)."""
    rows = sorted({b.index[:-1] for b in blocks})
    cols = sorted({b.index[-1:] for b in blocks})
    lead, last = (
        max(1, _volume([(0, n) for n in shape[:-1]])),
        shape[-1] if shape else 1,
    )
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


def _volume(ranges) -> int:
    return math.prod(stop - start for start, stop in ranges)


def _block_label(block: Block, devices: dict) -> str:
    names = [_device_name(devices[i]) for i in block.devices]
    if len(names) == 1:
        return f"{names[0]}\n{block.text()}"
    ids = block.devices
    run = len(ids) > 2 and ids == tuple(range(ids[0], ids[-1] + 1))
    platform = names[0].split()[0]
    held = f"{platform} {ids[0]}–{ids[-1]}" if run else " · ".join(names)
    return f"{block.text()}\n{len(ids)} copies: {held}"


def _device_name(device) -> str:
    return f"{device.platform.upper()} {device.id}"


def _draw_mesh(
    graph, mesh, colours: dict, column: bool, above: bool, array: tuple[float, float]
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
                _device_name(device),
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


def _mesh_grid(mesh, column: bool):
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
    graph, name: str, text: str, x: float, y: float, *, anchor: str = "c", **attrs: str
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


def _draw_arrow(graph, spec: str, above: bool, array: tuple[float, float]) -> None:
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


def _caption(sharding, shape, dtype, blocks: list[Block]) -> str:
    lines = [f"{_type_text(shape, dtype)} laid out by {_spec_text(sharding)}"]
    spec, mesh = getattr(sharding, "spec", None), _mesh_of(sharding)
    if spec is not None and mesh is not None:
        lines += [
            _dim_text(d, n, spec[d] if d < len(spec) else None, mesh)
            for d, n in enumerate(shape)
        ]
        used = {a for entry in spec if entry is not None for a in _axes(entry)}
        spare = [a for a in mesh.axis_names if a not in used and mesh.shape[a] > 1]
        if spare:
            names = " × ".join(f"'{a}'" for a in spare)
            lines.append(
                f"replicated over {names}: each block on "
                f"{len(blocks[0].devices)} devices"
            )
    if all(len(b.devices) == 1 for b in blocks):
        lines.append("each element lives on exactly one device")
    return "\n".join(lines)


def _axes(entry) -> tuple:
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _dim_text(dim: int, size: int, entry, mesh) -> str:
    if entry is None:
        return f"dim {dim} ({size}): not split"
    ways = 1
    for axis in _axes(entry):
        ways *= mesh.shape[axis]
    names = " × ".join(f"'{a}'" for a in _axes(entry))
    return f"dim {dim} ({size}): split {ways} ways over {names}"


def _title(shape, dtype, blocks: list[Block], n_devices: int) -> str:
    copies = {len(b.devices) for b in blocks}
    each = f" × {copies.pop()} copies" if copies != {1} and len(copies) == 1 else ""
    return (
        f"{_type_text(shape, dtype)} on {plural(n_devices, 'device')}: "
        f"{plural(len(blocks), 'block')}{each}"
    )


def _type_text(shape, dtype) -> str:
    return _ir.type_str(jax.ShapeDtypeStruct(shape, dtype))  # f32[8,4], bf16[2]


def _spec_text(sharding) -> str:
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return type(sharding).__name__
    return "P(" + ", ".join(repr(s) for s in spec) + ")"
