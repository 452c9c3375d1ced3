"""The cost lens on a sharded program: each figure says global or per device, and
fusion's saving does not change with the device count (issues 27, 45). Ground truths:
the unsharded program, and for a shard_map the unsharded program on one device's share.
"""

import pytest
from devices import run_with_devices

SNIPPET = """
    import json
    from functools import partial
    import jax, jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    from jaxtour.cost import Peaks, Roofline, cost_table, fusion_traffic

    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(0.79788456 * (x + 0.044715 * x**3)))

    def loss(w, x, y):
        return jnp.mean((jnp.tanh(x @ w["a"]) @ w["b"] - y) ** 2)

    auto = (jax.sharding.AxisType.Auto,) * 2
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=auto)
    on = lambda a, *spec: jax.device_put(a, NamedSharding(mesh, P(*spec)))
    w = {"a": jnp.full((64, 128), 0.01), "b": jnp.full((128, 16), 0.01)}
    x = jax.random.normal(jax.random.key(0), (256, 64))
    y = jnp.ones((256, 16))
    all8 = ("data", "model")

    @partial(jax.shard_map, mesh=mesh, in_specs=(P(), P(all8), P(all8)),
             out_specs=P())
    def twin(w, x, y):
        return jax.lax.pmean(loss(w, x, y), all8)

    sharded_w = {"a": on(w["a"], None, "model"), "b": on(w["b"], "model", None)}
    xs, ys = on(x, "data", None), on(y, "data", None)
    g = jnp.linspace(-3, 3, 8 * 1024).reshape(8, 1024)
    table = cost_table(loss)(sharded_w, xs, ys)
    mesh_traffic = fusion_traffic(loss)(sharded_w, xs, ys)
    shard_map_traffic = fusion_traffic(twin)(w, x, y)
    out = {
        "gelu": fusion_traffic(gelu)(g).saving,
        "gelu8": fusion_traffic(gelu)(on(g, all8)).saving,
        "one": fusion_traffic(loss)(w, x, y).saving,
        "mesh": repr(mesh_traffic),
        "mesh_saving": mesh_traffic.saving,
        "share": fusion_traffic(loss)(w, x[:32], y[:32]).saving,
        "shard_map": repr(shard_map_traffic),
        "shard_map_saving": shard_map_traffic.saving,
        "table": str(table),
        "repr": repr(table),
        "roof": Roofline(table, Peaks("cpu:cpu", 50e9, 10e9), 1e-3).title,
    }
    print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def sharded():
    return run_with_devices(SNIPPET)


def test_fusions_saving_does_not_depend_on_the_device_count(sharded):
    assert sharded["gelu8"] == pytest.approx(sharded["gelu"], rel=0.1)
    # NamedSharding on a 2x4 mesh: the same saving as the unsharded loss
    assert sharded["mesh_saving"] == pytest.approx(sharded["one"], rel=0.15)
    assert "(global, 8 devices)" in sharded["mesh"]


def test_a_shard_map_is_compared_per_device_like_one_devices_share(sharded):
    # per device, the shard_map runs the loss on 256 / 8 rows: what fusion saves
    # there is what it saves on the unsharded loss given those rows
    assert sharded["shard_map_saving"] == pytest.approx(sharded["share"], rel=0.15)
    assert "(per device, 8 devices)" in sharded["shard_map"]


def test_every_figure_says_global_or_per_device(sharded):
    table = sharded["table"]
    assert "on cpu, 8 devices" in table
    assert "jaxpr (kit, global)" in table and "compiled (kit, per device)" in table
    assert "on each of 8 devices" in table  # the fusion note sets no ratio across kinds
    assert "per device" in sharded["repr"]
    assert "one device's of 8" in sharded["roof"]


PROFILE_SNIPPET = """
    import json
    import jax, jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    from jaxtour.cost import profile

    auto = (jax.sharding.AxisType.Auto,)
    mesh = jax.make_mesh((8,), ("x",), axis_types=auto)
    x = jax.device_put(jnp.linspace(0, 1, 8 * 4096), NamedSharding(mesh, P("x")))
    p = profile(lambda a: jnp.sum(jnp.sin(a) * 2.0))(x)
    print(json.dumps({
        "ops": p.op_seconds, "profiled": p.profiled_wall_seconds,
        "notes": " ".join(p.notes()),
    }))
"""


def test_a_sharded_programs_op_times_are_one_devices():
    # Ground truth: one device's ops run inside each recorded call, so their time per
    # call is at most that call's wall; the 8 devices' times summed are about 8 times
    # as much (what the rows showed before, beside one device's FLOPs and bytes).
    out = run_with_devices(PROFILE_SNIPPET)
    assert out["ops"] <= 1.5 * out["profiled"]
    assert "on each of 8 devices: its time is one device's" in out["notes"]
