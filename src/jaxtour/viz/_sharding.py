"""`draw_sharding`: which device holds which block of an array, for slides.

Left, the mesh: the devices in their grid, one colour each, with the axis names.
Right, the array: its blocks at their size, each coloured by the device that holds
it and labelled with its index range. A block held by several devices (an axis the
`PartitionSpec` leaves out, so the block is replicated along it) shows one swatch
per copy. Everything is read from `x.sharding.devices_indices_map(x.shape)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from html import escape as _escape

import jax

from jaxtour import _ir
from jaxtour._diagram import Diagram

FONT = "Helvetica,Arial,sans-serif"
MONO = "Courier New,monospace"
# ColorBrewer Set3: twelve light colours that black text reads well on.
PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
           "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")
_ARRAY_SIZE = (360, 240)  # points the whole array may span: (width, height)
_MIN_CELL = (84, 46)
escape = partial(_escape, quote=False)  # quotes are plain text in an HTML-like label


@dataclass(frozen=True)
class Block:
    """One block of an array: its index range per dimension and the devices holding it."""

    index: tuple[tuple[int, int], ...]  # (start, stop) per dimension
    devices: tuple[int, ...]  # device ids, ascending

    def text(self) -> str:
        """The index range as Python slices, e.g. ``"[0:2, 0:4]"``."""
        return "[" + ", ".join(f"{a}:{b}" for a, b in self.index) + "]"


def draw_sharding(x) -> Diagram:
    """Draw how an array is laid out over devices: which device holds which block.

    As `jax.debug.visualize_array_sharding`, but a `Diagram` for slides, for any
    number of dimensions, and with the mesh drawn beside the array: each device
    has one colour, each block is coloured by the device(s) holding it and
    labelled with its index range, and a block replicated over a mesh axis shows
    one swatch per copy.

    Args:
        x: a `jax.Array`, or a `jax.ShapeDtypeStruct` with a `sharding` (to draw
            a layout without allocating the array).

    Returns:
        A `Diagram` titled with the shape and the number of blocks and copies.

    Raises:
        TypeError: `x` has no sharding (a NumPy array, a Python number).

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
    colours = {i: PALETTE[n % len(PALETTE)] for n, i in enumerate(_device_order(sharding))}
    mesh, column = _mesh_of(sharding), _splits_rows(sharding, shape)
    # A 1-D mesh drawn as a row sits above the array; anything else sits to its left.
    across = mesh is not None and mesh.devices.ndim == 1 and not column
    graph = _graph(_caption(sharding, shape, dtype, blocks), "TB" if across else "LR")
    graph.node("array", f"<{_array_label(blocks, shape, devices, colours)}>")
    if mesh is not None:
        graph.node("mesh", f"<{_mesh_label(mesh, colours, column)}>")
        graph.edge("mesh", "array", label=f"  {_spec_text(sharding)}  ")
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


def _splits_rows(sharding, shape) -> bool:
    spec = getattr(sharding, "spec", ())
    return len(shape) > 1 and len(spec) > 0 and spec[0] is not None


def _check_array(x):
    sharding = getattr(x, "sharding", None)
    if sharding is None or not hasattr(sharding, "devices_indices_map"):
        raise TypeError(
            f"draw_sharding needs a jax.Array (or a jax.ShapeDtypeStruct with a sharding); "
            f"got {type(x).__module__}.{type(x).__name__}. Put it on devices first, e.g. "
            "jax.device_put(x, NamedSharding(mesh, PartitionSpec('batch')))."
        )
    return sharding, tuple(x.shape), x.dtype


def _mesh_of(sharding):
    mesh = getattr(sharding, "mesh", None)  # only a NamedSharding has one
    return None if mesh is None or getattr(mesh, "empty", False) else mesh


def _device_order(sharding) -> list[int]:
    # Colours follow the mesh's order when there is one, so neighbours differ.
    mesh = _mesh_of(sharding)
    if mesh is not None:
        return [d.id for d in mesh.devices.flat]
    return sorted(d.id for d in sharding.device_set)


def _graph(caption: str, rankdir: str):
    import graphviz

    graph = graphviz.Digraph("sharding")
    graph.attr(rankdir=rankdir, fontname=FONT, fontsize="14", label=f"<{caption}>",
               labelloc="b", nodesep="0.4", ranksep="0.7", bgcolor="white")
    graph.attr("node", shape="plain", fontname=FONT)
    graph.attr("edge", fontname=MONO, fontsize="13", color="#555555", penwidth="1.4")
    return graph


def _title(shape, dtype, blocks: list[Block], n_devices: int) -> str:
    copies = {len(b.devices) for b in blocks}
    each = f" × {copies.pop()} copies" if copies != {1} and len(copies) == 1 else ""
    plural = "s" * (len(blocks) != 1)
    return (f"{_type_text(shape, dtype)} on {n_devices} device{'s' * (n_devices != 1)}: "
            f"{len(blocks)} block{plural}{each}")


def _type_text(shape, dtype) -> str:
    return _ir.type_str(jax.ShapeDtypeStruct(shape, dtype))  # f32[8,4], bf16[2]


def _spec_text(sharding) -> str:
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return type(sharding).__name__
    return "P(" + ", ".join(repr(s) for s in spec) + ")"


def _caption(sharding, shape, dtype, blocks: list[Block]) -> str:
    lines = [f"<B>{_type_text(shape, dtype)}</B>  laid out by {escape(_spec_text(sharding))}"]
    spec, mesh = getattr(sharding, "spec", None), getattr(sharding, "mesh", None)
    if spec is not None and mesh is not None:
        lines += [_dim_text(d, n, spec[d] if d < len(spec) else None, mesh)
                  for d, n in enumerate(shape)]
        used = {a for entry in spec if entry is not None for a in _axes(entry)}
        spare = [a for a in mesh.axis_names if a not in used and mesh.shape[a] > 1]
        if spare:
            names = " × ".join(f"'{a}'" for a in spare)
            lines.append(f"<B>replicated</B> over {escape(names)}: "
                         f"each block on {len(blocks[0].devices)} devices")
    if all(len(b.devices) == 1 for b in blocks):
        lines.append("each element lives on exactly one device")
    return '<FONT POINT-SIZE="14">' + "<BR/>".join(lines) + "</FONT>"


def _axes(entry) -> tuple:
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _dim_text(dim: int, size: int, entry, mesh) -> str:
    if entry is None:
        return f"dim {dim} ({size}): not split"
    axes = _axes(entry)
    ways = 1
    for axis in axes:
        ways *= mesh.shape[axis]
    names = " × ".join(f"'{a}'" for a in axes)
    return f"dim {dim} ({size}): split {ways} ways over {escape(names)}"


def _array_label(blocks: list[Block], shape, devices: dict, colours: dict) -> str:
    rows = sorted({b.index[:-1] for b in blocks})
    cols = sorted({b.index[-1:] for b in blocks})
    where = {(b.index[:-1], b.index[-1:]): b for b in blocks}
    lead = max(1, _volume([(0, n) for n in shape[:-1]]))
    last = shape[-1] if shape else 1
    body = []
    for row in rows:
        height = max(_MIN_CELL[1], round(_ARRAY_SIZE[1] * _volume(row) / lead)) \
            if len(shape) > 1 else _MIN_CELL[1]  # a vector is one strip
        cells = []
        for col in cols:
            width = max(_MIN_CELL[0], round(_ARRAY_SIZE[0] * _volume(col) / last))
            block = where.get((row, col))
            cells.append(_block_cell(block, width, height, devices, colours) if block
                         else f'<TD WIDTH="{width}" HEIGHT="{height}"></TD>')
        body.append("<TR>" + "".join(cells) + "</TR>")
    return ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0" CELLPADDING="4" '
            'COLOR="#333333">' + "".join(body) + "</TABLE>")


def _volume(ranges) -> int:
    volume = 1
    for start, stop in ranges:
        volume *= stop - start
    return volume


def _block_cell(block: Block, width: int, height: int, devices: dict, colours: dict) -> str:
    index = f'<FONT FACE="{MONO}" POINT-SIZE="12">{block.text()}</FONT>'
    size = f'WIDTH="{width}" HEIGHT="{height}"'
    if len(block.devices) == 1:
        (i,) = block.devices
        return (f'<TD {size} BGCOLOR="{colours[i]}" TOOLTIP="{_tip(block, i)}">'
                f'<B>{_device_name(devices[i])}</B><BR/>{index}</TD>')
    # A few copies are named in full; many get just their ids, to stay on the slide.
    name = (lambda i: _device_name(devices[i])) if len(block.devices) <= 4 else str
    swatches = "".join(
        f'<TD BGCOLOR="{colours[i]}" TOOLTIP="{_tip(block, i)}" WIDTH="22">{name(i)}</TD>'
        for i in block.devices)
    inner = ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="2" CELLPADDING="3" COLOR="#666666">'
             f'<TR><TD BORDER="0" COLSPAN="{len(block.devices)}">{index}</TD></TR>'
             f"<TR>{swatches}</TR></TABLE>")
    return f'<TD {size} BGCOLOR="white" CELLPADDING="2">{inner}</TD>'


def _tip(block: Block, device_id: int) -> str:
    # Parsed back by the tests: "block [0:2, 0:4] on device 3".
    return f"block {block.text()} on device {device_id}"


def _device_name(device) -> str:
    return f"{device.platform.upper()} {device.id}"


def _mesh_label(mesh, colours: dict, column: bool) -> str:
    grid, row_names, col_names = _mesh_grid(mesh, column)
    sizes = escape(" × ".join(f"'{a}': {mesh.shape[a]}" for a in mesh.axis_names))
    top = "".join(f'<TD BORDER="0">{name}</TD>' for name in col_names)
    rows = [f'<TR><TD COLSPAN="{grid.shape[1] + 1}" BORDER="0"><B>mesh</B>  {sizes}</TD></TR>',
            f'<TR><TD BORDER="0"></TD>{top}</TR>']
    for line, name in zip(grid, row_names, strict=True):
        cells = "".join(f'<TD BGCOLOR="{colours[d.id]}" WIDTH="56" HEIGHT="34">'
                        f"<B>{_device_name(d)}</B></TD>" for d in line)
        rows.append(f'<TR><TD BORDER="0">{name}</TD>{cells}</TR>')
    return ('<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="3" CELLPADDING="4" '
            'COLOR="#333333">' + "".join(rows) + "</TABLE>")


def _mesh_grid(mesh, column: bool):
    """The devices as a 2-D grid, with a name for each row and column.

    The last mesh axis runs across; the others, flattened, run down. A 1-D mesh
    stands as a column when it splits the array's rows, so it lines up with them.
    """
    import numpy as np

    names = [escape(str(a)) for a in mesh.axis_names]
    devices = mesh.devices
    if devices.ndim == 1 and column:
        return devices.reshape(-1, 1), [f"<I>{names[0]}</I> {i}" for i in range(devices.size)], [""]
    grid = devices.reshape(-1, devices.shape[-1])
    col_names = [f"<I>{names[-1]}</I> {j}" for j in range(grid.shape[1])]
    row_names = [", ".join(f"<I>{a}</I> {int(i)}"
                           for a, i in zip(names[:-1], np.unravel_index(r, devices.shape[:-1]),
                                           strict=True))
                 for r in range(grid.shape[0])]
    return grid, row_names, col_names
