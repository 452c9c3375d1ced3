"""`draw_sharding`: which device holds which block of an array, for slides.

Left (or above), the mesh: the devices in their grid, one colour each, with the axis
names. Right (or below), the array: its blocks at their size, each coloured by the
device that holds it and labelled with its index range. A block held by several
devices (the `PartitionSpec` leaves a mesh axis out, so the block is replicated along
it) is striped in all their colours. Everything is read from
`x.sharding.devices_indices_map(x.shape)`; `_sharding_layout` pins the boxes.
"""

from __future__ import annotations

import colorsys
from typing import Any

import jax

from jaxtour import _ir
from jaxtour._diagram import Diagram
from jaxtour._number_words import plural
from jaxtour.viz._sharding_layout import (
    Block,
    device_name,
    draw_array,
    draw_arrow,
    draw_mesh,
    sharding_graph,
)

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


def draw_sharding(x: Any, *, colour_by: str = "device") -> Diagram:
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
        TypeError: `x` has no sharding (a NumPy array, a Python number), or is a
            tracer (`draw_sharding` called inside `jax.jit`).
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
    graph = sharding_graph(caption)
    mesh = _mesh_of(sharding)
    column = _splits_rows(sharding, shape)
    # A 1-D mesh that splits the rows stands beside them; one that splits across goes on top.
    above = mesh is not None and mesh.devices.ndim == 1 and not column
    size = draw_array(graph, blocks, shape, devices, colours)  # (width, height), inches
    if mesh is not None:
        draw_mesh(graph, mesh, colours, column, above, size)
        draw_arrow(graph, _spec_text(sharding), above, size)
    return Diagram.from_graph(graph, _title(shape, dtype, blocks, len(devices)))


def blocks_of(sharding: Any, shape: tuple[int, ...]) -> list[Block]:
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


def _check_array(x: Any) -> Any:
    if _ir.is_tracer(x):
        raise TypeError(
            "draw_sharding got a tracer: inside jax.jit (or another transformation) an "
            "array is not laid out on devices yet. Draw a concrete array outside it, "
            "such as the function's result: draw_sharding(f(x)); inside it, "
            "jax.debug.visualize_array_sharding(x) prints the layout XLA chose."
        )
    sharding = getattr(x, "sharding", None)
    if sharding is None or not hasattr(sharding, "devices_indices_map"):
        raise TypeError(
            f"draw_sharding needs a jax.Array (or a jax.ShapeDtypeStruct with a sharding); "
            f"got {type(x).__module__}.{type(x).__name__}. Put it on devices first, e.g. "
            "jax.device_put(x, NamedSharding(mesh, PartitionSpec('batch')))."
        )
    return sharding, tuple(x.shape), x.dtype


def _colours(sharding: Any, devices: dict, colour_by: str) -> dict[int, str]:
    if colour_by == "process":
        processes = sorted({d.process_index for d in devices.values()})
        shades = dict(zip(processes, palette(len(processes)), strict=True))
        return {i: shades[d.process_index] for i, d in devices.items()}
    if colour_by != "device":
        raise ValueError(
            f'`colour_by` must be "device" or "process"; got {colour_by!r}.'
        )
    order = _device_order(sharding)
    return dict(zip(order, palette(len(order)), strict=True))


def palette(n: int) -> tuple[str, ...]:
    """`n` light colours, all different: `PALETTE`'s first, and past its twelve, `n`
    hues evenly round the colour wheel (a v5e-16 or a 32-GPU mesh: one each).

    Example:
        >>> palette(2), len(set(palette(40)))
        (('#8dd3c7', '#ffffb3'), 40)
    """
    if n <= len(PALETTE):
        return PALETTE[:n]
    rgb = (colorsys.hsv_to_rgb(k / n, 0.38, 0.97) for k in range(n))
    return tuple("#" + "".join(f"{round(255 * c):02x}" for c in each) for each in rgb)


def _process_text(devices: dict) -> str:
    ids: dict[int, list[int]] = {}
    for i, device in sorted(devices.items()):
        ids.setdefault(device.process_index, []).append(i)
    spans = [
        device_name(devices[v[0]]) + (f"–{v[-1]}" if len(v) > 1 else "")
        for _, v in sorted(ids.items())
    ]
    return "coloured by process: " + "; ".join(
        f"process {p}: {span}" for p, span in zip(sorted(ids), spans, strict=True)
    )


def _mesh_of(sharding: Any) -> Any:
    mesh = getattr(sharding, "mesh", None)  # only a NamedSharding has one
    return None if mesh is None or getattr(mesh, "empty", False) else mesh


def _splits_rows(sharding: Any, shape: Any) -> bool:
    spec: tuple = tuple(getattr(sharding, "spec", ()))
    return len(shape) > 1 and len(spec) > 0 and spec[0] is not None


def _device_order(sharding: Any) -> list[int]:
    # Colours follow the mesh's order when there is one, so neighbours differ.
    mesh = _mesh_of(sharding)
    if mesh is not None:
        return [d.id for d in mesh.devices.flat]
    return sorted(d.id for d in sharding.device_set)


def _caption(sharding: Any, shape: Any, dtype: Any, blocks: list[Block]) -> str:
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
    if 0 in shape:
        lines.append("no elements: the blocks drawn are empty")
    elif all(len(b.devices) == 1 for b in blocks):
        lines.append("each element lives on exactly one device")
    return "\n".join(lines)


def _axes(entry: Any) -> tuple:
    return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


def _dim_text(dim: int, size: int, entry: Any, mesh: Any) -> str:
    if entry is None:
        return f"dim {dim} ({size}): not split"
    ways = 1
    for axis in _axes(entry):
        ways *= mesh.shape[axis]
    names = " × ".join(f"'{a}'" for a in _axes(entry))
    return f"dim {dim} ({size}): split {ways} ways over {names}"


def _title(shape: Any, dtype: Any, blocks: list[Block], n_devices: int) -> str:
    if 0 in shape:  # JAX gives each device an empty [0:0] block, which no copy holds
        return (
            f"{_type_text(shape, dtype)} on {plural(n_devices, 'device')}: no "
            "elements, so every block is empty"
        )
    copies = {len(b.devices) for b in blocks}
    each = f" × {copies.pop()} copies" if copies != {1} and len(copies) == 1 else ""
    return (
        f"{_type_text(shape, dtype)} on {plural(n_devices, 'device')}: "
        f"{plural(len(blocks), 'block')}{each}"
    )


def _type_text(shape: Any, dtype: Any) -> str:
    return _ir.type_str(jax.ShapeDtypeStruct(shape, dtype))  # f32[8,4], bf16[2]


def _spec_text(sharding: Any) -> str:
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return type(sharding).__name__
    return "P(" + ", ".join(repr(s) for s in spec) + ")"
