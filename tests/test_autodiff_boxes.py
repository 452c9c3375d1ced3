"""Titles count the work inside boxes (checkpoint, scan, cond), against the test's own
count of the equations in `jax.make_jaxpr`, nested jaxprs opened."""

import jax
import jax.numpy as jnp
from jax.extend import core as jex_core

from jaxtour.autodiff import grad_graph, jvp_graph

W = jax.random.normal(jax.random.key(0), (8, 8))
X = jnp.linspace(-1.0, 1.0, 8)


def _body(y):
    return jnp.tanh(W @ jnp.sin(jnp.tanh(W @ jnp.sin(y))))


def _jaxprs(value):
    for item in value if isinstance(value, tuple | list) else [value]:
        if isinstance(item, jex_core.ClosedJaxpr):
            yield item.jaxpr
        elif isinstance(item, jex_core.Jaxpr):
            yield item


def _leaves(jaxpr, keep=lambda eqn: True) -> int:
    """Equations that are no box, each nested jaxpr opened once (the test's own walker)."""
    n = 0
    for eqn in jaxpr.eqns:
        inner = [j for v in eqn.params.values() for j in _jaxprs(v)]
        n += sum(_leaves(j, keep) for j in inner) if inner else int(keep(eqn))
    return n


def _counts(f, *args):
    """(forward, backward) equations of `jax.vjp(f, *args)`, boxes opened."""
    forward = jax.make_jaxpr(lambda *a: jax.vjp(f, *a))(*args)
    _, vjp = jax.vjp(f, *args)
    backward = jax.make_jaxpr(vjp)(jnp.ones_like(f(*args)))
    return _leaves(forward.jaxpr), _leaves(backward.jaxpr)


def test_a_checkpoint_box_counts_the_forward_pass_it_recomputes():
    plain, remat = (
        (lambda x: _body(x).sum()),
        (lambda x: jax.checkpoint(_body)(x).sum()),
    )
    fwd, bwd = _counts(remat, X)
    graph = grad_graph(remat, values=False)(X)
    n_res = len(graph.select("residual"))
    assert graph.title == (
        f"grad of f: {fwd} forward equations, {n_res} residuals, "
        f"{bwd} backward equations (box contents counted)"
    )
    plain_bwd = _counts(plain, X)[1]
    assert f"{plain_bwd} backward equations" in grad_graph(plain, values=False)(X).title
    assert bwd > plain_bwd  # checkpointing recomputes: the backward pass grows


def _scan(x):
    return jax.lax.scan(lambda c, xi: (c * jnp.sin(xi), None), 1.0, x)[0]


def _jvp_eqns(f, x, t, keep=lambda eqn: True) -> int:
    closed = jax.make_jaxpr(lambda x, t: jax.jvp(f, (x,), (t,)))(x, t)
    return _leaves(closed.jaxpr, keep)


def test_a_scan_jvp_counts_its_body_once_in_both_lanes():
    graph = jvp_graph(_scan, values=False)((X,), (jnp.ones(8),))
    head, caveat = graph.title.split(" (")
    primal, tangent = (int(part.split()[0]) for part in head.split(": ")[1].split(", "))
    assert primal + tangent == _jvp_eqns(_scan, X, jnp.ones(8))
    assert primal > 0 and tangent > 0  # sin(xi) and cos(xi) are primal work
    assert caveat.startswith("box contents counted: each loop body once")
    (box,) = graph.select("op")
    assert box.primitive == "scan" and box.label.endswith(" (primal and tangent)")


def test_a_cond_jvp_splits_each_branch_by_lane():
    def f(x):
        return jax.lax.cond(x > 0, jnp.sin, jnp.cos, x)

    graph = jvp_graph(f)((1.0,), (1.0,))
    # d sin = cos · t, d cos = -(sin · t): the tangent work is the mul and the neg
    tangent = _jvp_eqns(f, 1.0, 1.0, lambda e: e.primitive.name in ("mul", "neg"))
    total = _jvp_eqns(f, 1.0, 1.0)
    assert graph.title == (
        f"jvp of f: {total - tangent} primal equations, {tangent} tangent equations "
        "(box contents counted: every cond branch; 1 box computes both lanes, drawn "
        "in the tangent lane)"
    )
    (out,) = [n for n in graph.select("output") if n.label == "f(…)"]
    assert out.lane == "primal" and out.value == jnp.sin(1.0)
