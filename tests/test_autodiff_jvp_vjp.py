"""draw_jvp and draw_vjp: the numbers drawn equal jax.jvp / jax.vjp, which agree with
float64 central differences; the lanes are split the way the maths says."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_autodiff_cases import CASES, directional_fd, dot, random_like, split

from jaxtour.autodiff import draw_jvp, draw_vjp, jvp_graph, vjp_graph

# jvp over every case, all arguments at once (as jax.jvp takes them).
JVP_NAMES = sorted(n for n in CASES if n != "second_arg_only")


def _primals_and_tangents(name):
    f, args, _ = CASES[name]
    primals = tuple(jax.tree.map(jnp.asarray, args))
    argnums = tuple(
        i
        for i, a in enumerate(primals)
        if all(jnp.issubdtype(x.dtype, jnp.floating) for x in jax.tree.leaves(a))
    )
    g, diff = split(f, primals, argnums)
    tangents = jax.tree.map(
        lambda x: jnp.asarray(x, jnp.float32), random_like(diff, seed=3)
    )
    return g, diff, tangents, argnums


@pytest.mark.parametrize("name", JVP_NAMES)
def test_draw_jvp_shows_jax_jvp_and_jvp_agrees_with_finite_differences(
    name, full_float32
):
    g, diff, tangents, argnums = _primals_and_tangents(name)
    graph = jvp_graph(g)(diff, tangents)
    out, out_dot = jax.jvp(g, diff, tangents)
    [primal_out] = graph.values_of("output")[:1]
    tangent_out = graph.select("output", lane="tangent")[0].value
    np.testing.assert_allclose(primal_out, out, rtol=1e-6)
    np.testing.assert_allclose(tangent_out, out_dot, rtol=1e-5, atol=1e-6)
    f, args, _ = CASES[name]
    fd = directional_fd(f, args, argnums, tangents)
    assert float(out_dot) == pytest.approx(float(fd), rel=2e-4, abs=2e-5)


@pytest.mark.parametrize(
    "name", ["sin_times_x", "where", "cond_true", "scan", "gelu", "mlp"]
)
def test_the_primal_lane_never_reads_a_tangent(name):
    # Independent check of the lane split: with NaN tangents, every primal-lane value
    # is unchanged, and the tangent lane's output is not.
    g, diff, tangents, _ = _primals_and_tangents(name)
    nans = jax.tree.map(lambda t: jnp.full_like(t, jnp.nan), tangents)
    clean, poisoned = jvp_graph(g)(diff, tangents), jvp_graph(g)(diff, nans)
    primal_ids = [
        n.id for n in clean.select(lane="primal") if n.kind in ("op", "output")
    ]
    assert primal_ids
    for node_id in primal_ids:
        for a, b in zip(
            clean.nodes[node_id].values, poisoned.nodes[node_id].values, strict=True
        ):
            np.testing.assert_array_equal(a, b)
    assert np.isnan(poisoned.select("output", lane="tangent")[0].value).any()
    assert all(e.kind in ("primal",) for e in clean.edges if e.dst in primal_ids)


def test_jvp_of_sin_uses_cos_from_the_primal_lane():
    graph = jvp_graph(jnp.sin)((0.5,), (2.0,))
    assert graph.primitive_counts("primal") == {"sin": 1, "cos": 1}
    assert graph.primitive_counts("tangent") == {"mul": 1}
    kinds = {e.kind for e in graph.edges}
    assert "cross" in kinds  # cos x, read by the tangent lane
    assert graph.select("output", lane="tangent")[0].value == pytest.approx(
        2 * np.cos(0.5)
    )


@pytest.mark.parametrize("name", JVP_NAMES)
def test_draw_vjp_shows_jax_vjp_and_vjp_agrees_with_finite_differences(name):
    g, diff, direction, argnums = _primals_and_tangents(name)
    out, vjp_fn = jax.vjp(g, *diff)
    cotangent = jax.tree.map(
        lambda c: jnp.asarray(c, jnp.float32), random_like(out, seed=5)
    )
    graph = vjp_graph(g, cotangents=cotangent)(*diff)
    expected = jax.tree.leaves(vjp_fn(cotangent))
    for got, want in zip(graph.values_of("gradient"), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # (Jᵀ c)·v = c·(J v), with J v from float64 central differences.
    f, args, _ = CASES[name]
    fd = directional_fd(f, args, argnums, direction)
    assert dot(expected, direction) == pytest.approx(
        dot(cotangent, fd), rel=2e-4, abs=2e-5
    )


def _vector_f(x, y):
    return jnp.stack([jnp.sin(x[0]) * y, jnp.sum(x**2) * y, jnp.tanh(x[1] - y)])


VECTOR_ARGS = (jnp.array([0.3, -0.8]), jnp.asarray(1.7))


def test_draw_vjp_shows_jax_vjp_for_a_vector_output():
    cotangent = jnp.array([0.5, -1.0, 2.0])
    graph = vjp_graph(_vector_f, cotangents=cotangent)(*VECTOR_ARGS)
    _, vjp_fn = jax.vjp(_vector_f, *VECTOR_ARGS)
    expected = jax.tree.leaves(vjp_fn(cotangent))
    for got, want in zip(graph.values_of("gradient"), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    # (Jᵀ c)·v = c·(J v), with J v from float64 central differences.
    direction = random_like(VECTOR_ARGS, seed=1)
    fd = directional_fd(_vector_f, VECTOR_ARGS, (0, 1), direction)
    assert dot(expected, direction) == pytest.approx(
        float(np.dot(cotangent, fd)), rel=2e-4
    )


def test_draw_vjp_seeds_ones_by_default_and_titles_the_transpose():
    graph = vjp_graph(_vector_f)(*VECTOR_ARGS)
    np.testing.assert_array_equal(graph.values_of("seed")[0], np.ones(3, np.float32))
    expected = jax.vjp(_vector_f, *VECTOR_ARGS)[1](jnp.ones(3))
    for got, want in zip(graph.values_of("gradient"), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    d = draw_vjp(_vector_f, rankdir="LR")(*VECTOR_ARGS)
    assert d.title.startswith("vjp of _vector_f: ")
    assert d.title.endswith(" transposed equations")
    assert "rankdir=LR" in d.source


def test_draw_jvp_titles_count_each_lane():
    d = draw_jvp(lambda x: jnp.sin(x) * x)((1.0,), (1.0,))
    assert d.title == "jvp of f: 3 primal equations, 4 tangent equations"
    assert "cluster_primal" in d.source and "cluster_tangent" in d.source
