"""draw_sharding: the device drawn on each block is the one JAX put it on.

The multi-device cases run once, in a subprocess with 8 simulated CPU devices (this
process initialised JAX with one); it sends back each Diagram's DOT with JAX's own
`devices_indices_map` and `addressable_shards`, and the tests compare the two.
"""

import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour import Diagram
from jaxtour.viz._sharding import Block, blocks_of, draw_sharding

# Tooltips on block cells: "block [0:2, 0:4] on device 3" (one per copy of a block).
_TIP = re.compile(r'BGCOLOR="(#\w+)" TOOLTIP="block \[([^\]]*)\] on device (\d+)"')
# Mesh cells: a device's colour and name.
_MESH_CELL = re.compile(r'BGCOLOR="(#\w+)" WIDTH="56" HEIGHT="34"><B>CPU (\d+)</B>')

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


def run_with_devices(code: str, n_devices: int = 8) -> dict:
    """Run `code` in a fresh Python with `n_devices` simulated CPU devices; its last
    printed line is JSON, returned decoded."""
    prelude = f"import jax\njax.config.update('jax_num_cpu_devices', {n_devices})\n"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def drawn() -> dict:
    return run_with_devices(f"CASES = {json.dumps(json.dumps(CASES))}\n{SNIPPET}")


def _drawn_blocks(dot: str) -> set[tuple[int, tuple[tuple[int, int], ...]]]:
    """(device id, index ranges) for every block copy the picture shows."""
    found = set()
    for _, ranges, device in _TIP.findall(dot):
        index = tuple(tuple(int(v) for v in r.split(":")) for r in ranges.split(", ") if r)
        found.add((int(device), index))
    return found


def _jax_blocks(case: dict) -> set[tuple[int, tuple[tuple[int, int], ...]]]:
    return {(device, tuple(tuple(r) for r in ranges)) for device, ranges in case["map"]}


@pytest.mark.parametrize("name", CASES)
def test_each_block_is_drawn_on_the_device_jax_put_it_on(drawn, name):
    case = drawn[name]
    shown = _drawn_blocks(case["dot"])
    assert len(shown) == len(case["map"]) == 8  # one tooltip per copy, every device once
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


def test_every_device_has_its_own_colour_and_blocks_wear_it(drawn):
    for name in ("xy", "x_only", "replicated"):
        dot = drawn[name]["dot"]
        mesh = {int(d): colour for colour, d in _MESH_CELL.findall(dot)}
        assert sorted(mesh) == list(range(8)) and len(set(mesh.values())) == 8
        for colour, _, device in _TIP.findall(dot):
            assert colour == mesh[int(device)]


def test_replicated_axes_are_named_and_copies_counted(drawn):
    assert drawn["x_only"]["title"] == "f32[8,4] on 8 devices: 4 blocks × 2 copies"
    assert "over 'y': each block on 2 devices" in drawn["x_only"]["dot"]
    assert drawn["replicated"]["title"] == "f32[8,4] on 8 devices: 1 block × 8 copies"
    assert "over 'x' × 'y': each block on 8 devices" in drawn["replicated"]["dot"]
    assert "replicated" not in drawn["xy"]["dot"]
    assert "each element lives on exactly one device" in drawn["xy"]["dot"]


def test_axes_and_spec_are_labelled(drawn):
    dot = drawn["both_on_rows"]["dot"]
    assert "dim 0 (8): split 8 ways over 'x' × 'y'" in dot
    assert "dim 1 (4): not split" in dot
    assert "P(('x', 'y'))" in dot
    assert "<I>x</I> 3" in drawn["xy"]["dot"] and "<I>y</I> 1" in drawn["xy"]["dot"]
    assert "<I>batch</I> 7" in drawn["batch"]["dot"]


def test_a_1d_mesh_stands_beside_rows_and_above_a_vector(drawn):
    assert "rankdir=LR" in drawn["batch"]["dot"]
    assert "rankdir=TB" in drawn["vector"]["dot"]


@pytest.mark.parametrize("name", ["xy", "replicated", "vector"])
def test_the_picture_renders_to_svg_naming_every_device(drawn, name):
    svg = Diagram(drawn[name]["dot"]).svg()
    texts = {t.text for t in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}text")}
    names = {f"CPU {i}" for i in range(8)}
    assert names <= texts


def test_one_device_draws_one_block_without_a_mesh():
    d = draw_sharding(jnp.ones((3, 5)))
    assert d.title == "f32[3,5] on 1 device: 1 block"
    assert d.counts == (1, 0)
    assert _drawn_blocks(d.source) == {(jax.devices()[0].id, ((0, 3), (0, 5)))}


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
    assert "block [] on device" in d.source


def test_an_array_without_a_sharding_is_refused_with_what_to_do():
    with pytest.raises(TypeError, match=re.escape(
            "draw_sharding needs a jax.Array (or a jax.ShapeDtypeStruct with a sharding); "
            "got numpy.ndarray. Put it on devices first, e.g. jax.device_put(x, "
            "NamedSharding(mesh, PartitionSpec('batch')))")):
        draw_sharding(np.zeros((8, 4)))
