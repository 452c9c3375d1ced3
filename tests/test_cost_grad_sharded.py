"""grad_memory on sharded arguments: the jaxpr's figures are global, the compiled ones a
device's share, and the report says which. Ground truths: the unsharded gradient's
jaxpr, and XLA's cost_analysis() of the sharded one."""

from devices import run_with_devices

SNIPPET = """
    import json
    import jax, jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    from jaxtour.cost import grad_memory

    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    def loss(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    w, x = jnp.ones((32, 32)), jnp.ones((64, 32))
    xs = jax.device_put(x, NamedSharding(mesh, P("d")))
    sharded = grad_memory(loss, policies=["no checkpoint"])(w, xs)
    one = grad_memory(loss, policies=["no checkpoint"])(w, x)
    xla = jax.jit(jax.grad(loss)).lower(w, xs).compile().cost_analysis()
    p, q = sharded.policies[0], one.policies[0]
    print(json.dumps({
        "text": str(sharded), "devices": p.devices, "one_devices": q.devices,
        "flops": [p.flops, q.flops], "residuals": [p.residual_bytes, q.residual_bytes],
        "compiled": p.compiled_flops, "xla": xla["flops"], "one_text": str(one),
    }))
"""


def test_a_sharded_gradient_labels_its_figures_global_or_per_device():
    out = run_with_devices(SNIPPET)
    assert out["devices"] == 8 and out["one_devices"] == 1
    assert out["flops"][0] == out["flops"][1]  # the jaxpr's: global
    assert out["residuals"][0] == out["residuals"][1]
    assert out["compiled"] == out["xla"] < out["flops"][0] / 4  # one device's share
    text = out["text"]
    assert text.startswith("Memory of grad(loss) on cpu, 8 devices\n")
    for head in ("residuals (global)", "FLOPs (global)", "compiled FLOPs (per device)"):
        assert head in text
    assert "temp (per device)" in text
    assert (
        "Sharded over 8 devices: the residuals and the jaxpr's FLOPs are global "
        "(the jaxpr's shapes are), the compiled FLOPs and temporary bytes one device's; "
        "the two FLOP columns are not comparable."
    ) in text
    assert "global" not in out["one_text"] and "per device" not in out["one_text"]
