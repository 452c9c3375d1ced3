"""The cost lens on a sharded program: each figure says global or per device, and
fusion's saving does not change with the device count (issue 27)."""

from devices import run_with_devices


def test_fusions_saving_does_not_depend_on_the_device_count():
    result = run_with_devices("""
        import json
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        from jaxtour.cost import cost_table, fusion_traffic

        def gelu(x):
            return 0.5 * x * (1 + jnp.tanh(0.79788456 * (x + 0.044715 * x**3)))

        x = jnp.linspace(-3, 3, 8 * 1024).reshape(8, 1024)
        mesh = jax.make_mesh((8,), ("d",))
        sharded = jax.device_put(x, NamedSharding(mesh, P("d")))
        one, eight = fusion_traffic(gelu)(x), fusion_traffic(gelu)(sharded)
        print(json.dumps({
            "one": one.saving, "eight": eight.saving, "devices": eight.devices,
            "repr": repr(eight), "table": str(cost_table(gelu)(sharded)),
        }))
    """)
    assert result["devices"] == 8
    assert abs(result["eight"] / result["one"] - 1) < 0.1, result
    assert "(all 8 devices)" in result["repr"]
    table = result["table"]
    assert "on cpu, 8 devices" in table
    assert "jaxpr (kit, global)" in table and "compiled (kit, per device)" in table
