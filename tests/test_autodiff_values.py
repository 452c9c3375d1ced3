"""Every JAX value draws in the autodiff pictures: keys, low-precision floats, integers,
booleans, sharded arrays, has_aux and holomorphic; the numbers shown are JAX's own."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from devices import run_with_devices

from jaxtour.autodiff import (
    draw_grad,
    draw_jvp,
    draw_vjp,
    grad_graph,
    jvp_graph,
    vjp_graph,
)


def _close(shown, expected, rtol=1e-6):
    assert len(shown) == len(jax.tree.leaves(expected))
    for a, b in zip(shown, jax.tree.leaves(expected), strict=True):
        np.testing.assert_allclose(
            np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol
        )


def _keys_loss(k, x):
    return (x * jax.vmap(jax.random.normal)(k)).sum()


def test_a_key_argument_is_drawn_fixed_and_the_gradient_matches_jax():
    keys = jax.random.split(jax.random.key(42), 3)
    graph = grad_graph(_keys_loss, argnums=1)(keys, jnp.ones(3))
    _close(
        graph.values_of("gradient"), jax.grad(_keys_loss, argnums=1)(keys, jnp.ones(3))
    )
    fixed = graph.select("fixed")
    assert [n.avals[0] for n in fixed] == ["key<fry>[3]"]
    # a key is shown as its key data, what jax.random.key_data gives
    np.testing.assert_array_equal(fixed[0].value, jax.random.key_data(keys))
    assert "key<fry>[3]" in draw_grad(_keys_loss, argnums=1)(keys, jnp.ones(3)).source


def test_differentiating_a_key_says_keys_are_not_differentiated():
    with pytest.raises(
        TypeError, match=r"it is a PRNG key \(key<fry>\).*leave this argument"
    ):
        draw_grad(_keys_loss, argnums=0)(
            jax.random.split(jax.random.key(0), 3), jnp.ones(3)
        )


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16, jnp.float8_e4m3fn])
def test_low_precision_floats_are_differentiated_as_jax_does(dtype):
    def f(w):
        return jnp.sum(jnp.tanh(w) * w)

    w = jnp.linspace(0.1, 0.9, 3).astype(dtype)
    try:
        expected = jax.grad(f)(w)
    except Exception as err:
        pytest.skip(f"jax.grad refuses {jnp.dtype(dtype).name}: {err}")
    graph = grad_graph(f)(w)
    (shown,) = graph.values_of("gradient")
    # the type names the dtype; the value is in NumPy's own dtype, or in float32 for
    # those NumPy lacks (bfloat16, float8), which holds each of their values exactly
    assert graph.select("gradient")[0].avals[0].endswith("[3]")
    assert shown.dtype in (np.dtype(dtype), np.float32)
    np.testing.assert_array_equal(
        shown.astype(np.float32), np.asarray(expected.astype(np.float32))
    )


def test_integer_and_boolean_arguments_beside_differentiated_ones():
    def f(w, n, mask):
        return jnp.sum(jnp.where(mask, w * n, 0.0))

    args = (jnp.arange(3.0), jnp.arange(3), jnp.array([True, False, True]))
    graph = grad_graph(f)(*args)
    _close(graph.values_of("gradient"), jax.grad(f)(*args))
    assert [n.label for n in graph.select("fixed")] == ["n", "mask"]


def test_allow_int_draws_integer_and_key_leaves_fixed_as_jax_grad_takes_them():
    def f(state, key):
        return jnp.sum(state["w"] * state["step"] + jax.random.normal(key, (3,)))

    state, key = {"w": jnp.arange(3.0), "step": jnp.int32(2)}, jax.random.key(1)
    grads = jax.grad(f, argnums=(0, 1), allow_int=True)(state, key)
    assert grads[0]["step"].dtype == jax.dtypes.float0  # JAX's empty gradients
    graph = grad_graph(f, (0, 1), allow_int=True)(state, key)
    _close(graph.values_of("gradient"), grads[0]["w"])
    assert [n.label for n in graph.select("gradient")] == ["∂f/∂state['w']"]
    assert graph.note == "held fixed (not differentiated): state['step'], key"
    assert (
        "∂f/∂state['w']" in draw_grad(f, (0, 1), False, False, True)(state, key).source
    )
    with pytest.raises(TypeError, match=r"^grad_graph: f's primals hold int values, "):
        grad_graph(f, 0, allow_int=True)({"step": 2}, key)


def test_vjp_and_jvp_keep_integer_and_key_leaves_fixed():
    def f(state, key):
        return state["w"] * state["step"] + jax.random.normal(key, (3,))

    state, key = {"w": jnp.arange(3.0), "step": jnp.int32(2)}, jax.random.key(1)
    graph = vjp_graph(f)(state, key)
    _, pullback = jax.vjp(f, state, key)
    _close(graph.values_of("gradient"), pullback(jnp.ones(3))[0]["w"])
    assert [n.label for n in graph.select("gradient")] == ["cotangent of state['w']"]
    tangents = ({"w": jnp.ones(3), "step": np.zeros((), jax.dtypes.float0)}, None)
    jgraph = jvp_graph(f)((state, key), tangents)
    out, out_dot = jax.jvp(
        f, (state, key), (tangents[0], np.zeros((), jax.dtypes.float0))
    )
    _close([n.value for n in jgraph.select("output")], [out, out_dot])


def test_has_aux_draws_aux_as_an_output_that_is_not_differentiated():
    def loss(w):
        return jnp.sum(w**2), {"norm": jnp.linalg.norm(w)}

    w = jnp.arange(3.0)
    graph = grad_graph(loss, has_aux=True)(w)
    grad, aux = jax.grad(loss, has_aux=True)(w)
    _close(graph.values_of("gradient"), grad)
    outputs = graph.select("output")
    assert outputs[-1].label == "aux['norm'] (not differentiated)"
    _close([outputs[-1].value], aux)
    vgraph = vjp_graph(loss, has_aux=True)(w)
    _close(vgraph.values_of("gradient"), grad)
    jgraph = jvp_graph(loss, has_aux=True)((w,), (jnp.ones(3),))
    _, out_dot, _ = jax.jvp(loss, (w,), (jnp.ones(3),), has_aux=True)
    _close([jgraph.select("output")[1].value], out_dot)
    assert draw_vjp(loss, has_aux=True)(w).title.startswith("vjp of loss")
    assert draw_jvp(loss, has_aux=True)((w,), (jnp.ones(3),)).title.startswith(
        "jvp of loss"
    )


def test_an_aux_jax_cannot_trace_is_named_as_jax_grad_returns_it():
    # jax.grad passes a string in aux through as it is; the lenses drew nothing and
    # blamed a Python `if` on a traced value
    def loss(w):
        return jnp.sum(w**2), {"msg": "hi", "n": w[0]}

    w = jnp.arange(3.0)
    grad, aux = jax.grad(loss, has_aux=True)(w)
    assert aux["msg"] == "hi"
    note = "not drawn (not arrays, returned as they are): aux['msg'] = 'hi'"
    graph = grad_graph(loss, has_aux=True)(w)
    _close(graph.values_of("gradient"), grad)
    assert graph.note == note
    assert [n.label for n in graph.select("output")][
        -1
    ] == "aux['n'] (not differentiated)"
    _close([graph.select("output")[-1].value], aux["n"])
    assert vjp_graph(loss, has_aux=True)(w).note == note
    jgraph = jvp_graph(loss, has_aux=True)((w,), (jnp.ones(3),))
    assert jgraph.note == note
    _, out_dot, _ = jax.jvp(loss, (w,), (jnp.ones(3),), has_aux=True)
    _close([jgraph.select("output")[1].value], out_dot)
    assert draw_grad(loss, has_aux=True)(w).title.startswith("grad of loss")


def test_holomorphic_passes_through_as_in_jax_grad():
    def f(z):
        return jnp.sin(z) * z

    z = jnp.complex64(1.0 + 2.0j)
    graph = grad_graph(f, holomorphic=True)(z)
    np.testing.assert_allclose(
        graph.values_of("gradient")[0], jax.grad(f, holomorphic=True)(z), rtol=1e-6
    )
    with pytest.raises(TypeError, match="holomorphic=True needs complex inputs"):
        draw_grad(f, holomorphic=True)(1.0)


@pytest.mark.slow  # compiles for 8 devices
def test_sharded_arguments_in_explicit_and_shard_map_modes_draw_with_jax_values():
    result = run_with_devices("""
        import json
        import jax, jax.numpy as jnp, numpy as np
        from jax.sharding import AxisType
        from jaxtour.autodiff import grad_graph, vjp_graph
        mesh = jax.make_mesh((4, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
        jax.set_mesh(mesh)
        x = jax.device_put(jnp.arange(32.0).reshape(8, 4), jax.P(None, "X"))
        y = jax.device_put(jnp.ones((4, 16)), jax.P("X", None))
        f = lambda x, y: jnp.dot(x, y, out_sharding=jax.P("X", None))
        graph = vjp_graph(f)(x, y)
        _, pullback = jax.vjp(f, x, y)
        want = pullback(jnp.ones((8, 16), out_sharding=jax.P("X", None)))
        ok = [bool(np.allclose(a, b)) for a, b in zip(graph.values_of("gradient"), want)]
        def loss(w, xb):
            def local(w, xb):
                return jax.lax.psum(jnp.sum(jnp.tanh(xb @ w) ** 2), "X")
            specs = dict(in_specs=(jax.P(), jax.P("X")), out_specs=jax.P())
            return jax.shard_map(local, **specs)(w, xb)
        w = jnp.ones((4, 2)) / 4
        xb = jax.device_put(jnp.arange(32.0).reshape(8, 4) / 32, jax.P("X"))
        g = grad_graph(loss)(w, xb).values_of("gradient")[0]
        ok.append(bool(np.allclose(g, jax.grad(loss)(w, xb), rtol=1e-5)))
        print(json.dumps({"ok": ok}))
    """)
    assert result["ok"] == [True, True, True]  # before: the unsharded seed was refused
