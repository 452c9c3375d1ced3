"""draw_sharding: the device drawn on each block is the one JAX put it on.

The multi-device cases run once, in a subprocess with 8 simulated CPU devices (this
process initialised JAX with one); it sends back each Diagram's DOT with JAX's own
`devices_indices_map` and `addressable_shards`, and the tests compare the two.
"""

import json
import re
import shutil
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from devices import run_with_devices

from jaxtour import Diagram, _render
from jaxtour.viz._sharding import PALETTE, Block, blocks_of, draw_sharding

# A node statement: its id and its [attributes] (labels may hold newlines).
_NODE = re.compile(r'^\s*(\w+) \[((?:[^\]"]|"[^"]*")*)\]', re.MULTILINE)
_ATTR = re.compile(r'(\w+)=("[^"]*"|[^\s"]+)')
_TIP = re.compile(r"block \[([^\]]*)\] on devices? ([\d,]+)")


def nodes(dot: str) -> dict[str, dict[str, str]]:
    """Every node of the DOT text: id -> attributes (quotes stripped)."""
    return {
        name: {k: v.strip('"') for k, v in _ATTR.findall(body)}
        for name, body in _NODE.findall(dot)
        if name not in ("node", "edge", "graph")
    }


CASES = {  # name -> (mesh shape, axis names, PartitionSpec entries, array shape)
    "xy": ((4, 2), ("x", "y"), ("x", "y"), (8, 4)),
    "yx": ((4, 2), ("x", "y"), ("y", "x"), (8, 4)),
    "x_only": ((4, 2), ("x", "y"), ("x",), (8, 4)),
    "replicated": ((4, 2), ("x", "y"), (), (8, 4)),
    "both_on_rows": ((4, 2), ("x", "y"), (("x", "y"),), (8, 4)),
    "batch": ((8,), ("batch",), ("batch",), (32, 784)),
    "vector": ((8,), ("batch",), ("batch",), (16,)),
}

SNIPPET = """
import json
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jaxtour.viz import _sharding

out = {}
for name, (mesh_shape, axes, spec, shape) in json.loads(CASES).items():
    mesh = jax.make_mesh(tuple(mesh_shape), tuple(axes))
    spec = [tuple(s) if isinstance(s, list) else s for s in spec]
    x = jax.device_put(jnp.zeros(shape), NamedSharding(mesh, P(*spec)))
    d = _sharding.draw_sharding(x)
    index_map = x.sharding.devices_indices_map(x.shape)
    out[name] = {
        "dot": d.source, "title": d.title,
        "map": [[dev.id, [list(s.indices(n)[:2]) for s, n in zip(idx, x.shape)]]
                for dev, idx in index_map.items()],
        "shards": [[s.device.id, list(s.data.shape)] for s in x.addressable_shards],
    }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def drawn() -> dict:
    return run_with_devices(f"CASES = {json.dumps(json.dumps(CASES))}\n{SNIPPET}")


def _block_nodes(dot: str) -> list[tuple[tuple, tuple[int, ...], dict]]:
    """(index ranges, device ids, attributes) of every block the picture shows."""
    found = []
    for attrs in nodes(dot).values():
        if match := _TIP.fullmatch(attrs.get("tooltip", "")):
            ranges, ids = match.groups()
            index = tuple(
                tuple(int(v) for v in r.split(":")) for r in ranges.split(", ") if r
            )
            found.append((index, tuple(int(i) for i in ids.split(",")), attrs))
    return found


def _drawn_blocks(dot: str) -> set[tuple[int, tuple[tuple[int, int], ...]]]:
    """(device id, index ranges) for every copy of every block the picture shows."""
    return {(device, index) for index, ids, _ in _block_nodes(dot) for device in ids}


def _jax_blocks(case: dict) -> set[tuple[int, tuple[tuple[int, int], ...]]]:
    return {(device, tuple(tuple(r) for r in ranges)) for device, ranges in case["map"]}


def _xy(attrs: dict) -> tuple[float, float]:
    x, y = attrs["pos"].rstrip("!").split(",")
    return float(x), float(y)


@pytest.mark.parametrize("name", CASES)
def test_each_block_is_drawn_on_the_device_jax_put_it_on(drawn, name):
    case = drawn[name]
    shown = _drawn_blocks(case["dot"])
    assert (
        len(shown) == len(case["map"]) == 8
    )  # one tooltip per copy, every device once
    assert shown == _jax_blocks(case)


def test_the_8x4_array_on_a_4x2_mesh_has_one_2x2_block_per_device(drawn):
    case = drawn["xy"]
    shown = dict(_drawn_blocks(case["dot"]))
    assert shown[0] == ((0, 2), (0, 2)) and shown[1] == ((0, 2), (2, 4))
    assert shown[6] == ((6, 8), (0, 2)) and shown[7] == ((6, 8), (2, 4))
    # the drawn block size is the size of the shard each device really holds
    for device, shape in case["shards"]:
        assert [b - a for a, b in shown[device]] == shape
    assert case["title"] == "f32[8,4] on 8 devices: 8 blocks"


def test_blocks_sit_where_their_indices_say(drawn):
    blocks = _block_nodes(drawn["xy"]["dot"])
    for index, _, attrs in blocks:
        for other, _, other_attrs in blocks:
            (x, y), (ox, oy) = _xy(attrs), _xy(other_attrs)
            # later rows lower down, later columns further right
            assert (index[0] < other[0]) == (y > oy + 1e-6)
            assert (index[1] < other[1]) == (x < ox - 1e-6)
    sizes = {(attrs["width"], attrs["height"]) for _, _, attrs in blocks}
    assert len(sizes) == 1  # equal blocks are drawn equal


def test_every_device_has_its_own_colour_and_blocks_wear_it(drawn):
    for name in ("xy", "x_only", "replicated"):
        found = nodes(drawn[name]["dot"])
        mesh = {
            int(k.removeprefix("device")): a["fillcolor"]
            for k, a in found.items()
            if k.startswith("device")
        }
        assert sorted(mesh) == list(range(8)) and len(set(mesh.values())) == 8
        for _, ids, attrs in _block_nodes(drawn[name]["dot"]):
            assert attrs["fillcolor"].split(":") == [mesh[i] for i in ids]
            assert attrs["style"] == ("striped" if len(ids) > 1 else "filled")


def test_replicated_axes_are_named_and_copies_counted(drawn):
    assert drawn["x_only"]["title"] == "f32[8,4] on 8 devices: 4 blocks × 2 copies"
    assert "replicated over 'y': each block on 2 devices" in drawn["x_only"]["dot"]
    labels = [a["label"] for _, _, a in _block_nodes(drawn["x_only"]["dot"])]
    assert "[0:2, 0:4]\n2 copies: CPU 0 · CPU 1" in labels
    assert drawn["replicated"]["title"] == "f32[8,4] on 8 devices: 1 block × 8 copies"
    assert (
        "replicated over 'x' × 'y': each block on 8 devices"
        in drawn["replicated"]["dot"]
    )
    assert "8 copies: CPU 0–7" in drawn["replicated"]["dot"]
    assert "replicated" not in drawn["xy"]["dot"]
    assert "each element lives on exactly one device" in drawn["xy"]["dot"]


def test_axes_and_spec_are_labelled(drawn):
    dot = drawn["both_on_rows"]["dot"]
    assert "dim 0 (8): split 8 ways over 'x' × 'y'" in dot
    assert "dim 1 (4): not split" in dot
    assert nodes(dot)["spec"]["label"] == "P(('x', 'y'))"
    xy = nodes(drawn["xy"]["dot"])
    assert xy["mesh_row3"]["label"] == "x 3" and xy["mesh_col1"]["label"] == "y 1"
    assert xy["mesh_title"]["label"] == "mesh  'x': 4 × 'y': 2"
    assert nodes(drawn["batch"]["dot"])["mesh_row7"]["label"] == "batch 7"


def test_a_1d_mesh_stands_beside_rows_and_above_a_vector(drawn):
    beside = nodes(drawn["batch"]["dot"])
    assert len({_xy(beside[f"device{i}"])[0] for i in range(8)}) == 1  # one column
    assert all(_xy(beside[f"device{i}"])[0] < 0 for i in range(8))  # left of the array
    above = nodes(drawn["vector"]["dot"])
    assert len({_xy(above[f"device{i}"])[1] for i in range(8)}) == 1  # one row
    assert all(_xy(above[f"device{i}"])[1] > 0 for i in range(8))  # over the array


@pytest.fixture(params=["system", "embedded"])
def renderer(request, monkeypatch):
    if request.param == "system" and shutil.which("dot") is None:
        pytest.skip("no system Graphviz `dot` on PATH")
    monkeypatch.setenv("JAXTOUR_RENDERER", request.param)
    _render._render_cached.cache_clear()
    yield request.param
    _render._render_cached.cache_clear()


@pytest.mark.parametrize("name", ["xy", "x_only", "vector"])
def test_both_renderers_draw_every_device_and_block(drawn, name, renderer):
    svg = Diagram(drawn[name]["dot"]).svg()
    texts = {
        t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")
    }
    assert {f"CPU {i}" for i in range(8)} <= texts
    shown = {index for index, _, _ in _block_nodes(drawn[name]["dot"])}
    assert {
        "[" + ", ".join(f"{a}:{b}" for a, b in index) + "]" for index in shown
    } <= texts
    fills = {
        p.get("fill")
        for p in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}polygon")
    }
    assert set(PALETTE[:8]) <= fills  # every device's colour is painted


def test_one_device_draws_one_block_without_a_mesh():
    d = draw_sharding(jnp.ones((3, 5)))
    assert d.title == "f32[3,5] on 1 device: 1 block"
    assert d.counts == (1, 0)
    assert _drawn_blocks(d.source) == {(jax.devices()[0].id, ((0, 3), (0, 5)))}
    assert "mesh_title" not in nodes(d.source)


def test_a_shape_dtype_struct_draws_without_allocating():
    mesh = jax.make_mesh((1,), ("batch",), devices=jax.devices()[:1])
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
    spec = jax.ShapeDtypeStruct((1024, 10), jnp.bfloat16, sharding=sharding)
    assert draw_sharding(spec).title == "bf16[1024,10] on 1 device: 1 block"


def test_blocks_of_reads_jax_index_map():
    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert blocks_of(sharding, (4,)) == [Block(((0, 4),), (jax.devices()[0].id,))]
    assert Block(((0, 2), (2, 4)), (1,)).text() == "[0:2, 2:4]"


def test_a_scalar_is_one_block():
    d = draw_sharding(jnp.float32(3.0))
    assert d.title == "f32[] on 1 device: 1 block"
    assert _drawn_blocks(d.source) == {(jax.devices()[0].id, ())}


def test_an_array_without_a_sharding_is_refused_with_what_to_do():
    with pytest.raises(
        TypeError,
        match=re.escape(
            "draw_sharding needs a jax.Array (or a jax.ShapeDtypeStruct with a sharding); "
            "got numpy.ndarray. Put it on devices first, e.g. jax.device_put(x, "
            "NamedSharding(mesh, PartitionSpec('batch')))"
        ),
    ):
        draw_sharding(np.zeros((8, 4)))


def test_a_tracer_is_refused_with_where_to_draw_instead():
    @jax.jit
    def f(x):
        draw_sharding(x)
        return x

    with pytest.raises(
        TypeError,
        match=re.escape(
            "draw_sharding got a tracer: inside jax.jit (or another transformation) an "
            "array is not laid out on devices yet. Draw a concrete array outside it, "
            "such as the function's result: draw_sharding(f(x)); inside it, "
            "jax.debug.visualize_array_sharding(x) prints the layout XLA chose."
        ),
    ):
        f(jnp.zeros((8, 4)))


def test_past_twelve_devices_each_still_has_a_colour_of_its_own():
    from jaxtour.viz._sharding import palette

    assert palette(12) == PALETTE and palette(3) == PALETTE[:3]
    for n in (13, 16, 32, 64, 256):
        colours = palette(n)
        assert len(colours) == len(set(colours)) == n
        for colour in colours:  # light enough for black labels: luminance over 0.6
            r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
            assert 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.6, colour


def test_a_zero_size_array_is_drawn_and_said_empty_not_copied():
    """JAX gives each device an empty [0:0] block: the picture must neither divide by
    the empty size (it raised ZeroDivisionError) nor call the blocks copies."""
    reply = run_with_devices(
        """
import json
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jaxtour.viz import draw_sharding
mesh = jax.make_mesh((4, 2), ("x", "y"))
out = {}
for shape in ((0, 4), (8, 0), (0,)):
    spec = P(*("x", "y")[: len(shape)])
    d = draw_sharding(jax.device_put(jnp.zeros(shape), NamedSharding(mesh, spec)))
    out[str(shape)] = [d.title, d.source]
print(json.dumps(out))
"""
    )
    for shape, text in (
        ("(0, 4)", "f32[0,4]"),
        ("(8, 0)", "f32[8,0]"),
        ("(0,)", "f32[0]"),
    ):
        title, dot = reply[shape]
        assert title == f"{text} on 8 devices: no elements, so every block is empty"
        assert (
            "no elements: the blocks drawn are empty" in dot and "copies" not in title
        )
        assert "copies" not in dot and "empty, on CPU" in dot  # each block's label
    d = draw_sharding(jnp.zeros((0, 3)))
    assert d.title == "f32[0,3] on 1 device: no elements, so every block is empty"
