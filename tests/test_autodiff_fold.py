"""Folding the autodiff pictures: pytrees as one node, `max_depth`, `max_eqns`,
`max_width`."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.autodiff import draw_grad, draw_jvp, draw_vjp, grad_graph


def _params(n):
    return [{"w": jnp.full((2, 2), 0.1 * (i + 1)), "b": jnp.zeros(2)} for i in range(n)]


def _loss(params, x):
    for layer in params:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    return jnp.sum(x**2)


def _labels(diagram):
    return re.findall(r'label="([^"]*)"', diagram.source)


def _width_px(diagram):
    # read from the SVG text here, not through Diagram.width_px: the oracle
    (number, unit) = re.search(
        r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"', diagram.svg()
    ).groups()
    return float(number) * (4 / 3 if unit == "pt" else 1)


def test_a_pytree_of_many_leaves_is_one_node_unless_expanded():
    params, x = _params(6), jnp.ones(2)  # 12 leaves
    folded = draw_grad(_loss)(params, x)
    expanded = draw_grad(_loss, expand_pytrees=True)(params, x)
    labels = _labels(folded)
    assert "params · list of 6 dicts\\n12 arrays" in labels
    assert "∂_loss/∂params · list of 6 dicts\\n12 arrays" in labels
    assert not any(label.startswith("params[0]") for label in labels)
    assert sum(label.startswith("params[") for label in _labels(expanded)) == 12
    assert "pytrees as one node each" in folded.title
    assert "pytrees" not in expanded.title
    # 12 inputs and 12 gradients become 1 each (and residuals saved by them fold)
    assert folded.counts[0] <= expanded.counts[0] - 2 * 11
    # The model keeps every leaf: the values are still JAX's gradient, leaf by leaf.
    shown = grad_graph(_loss)(params, x).values_of("gradient")
    for a, b in zip(shown, jax.tree.leaves(jax.grad(_loss)(params, x)), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_small_pytrees_stay_leaf_by_leaf_and_false_folds_them():
    params, x = _params(2), jnp.ones(2)  # 4 leaves
    labels = _labels(draw_vjp(_loss)(params, x))
    assert sum(label.startswith("params[") for label in labels) == 4
    folded = _labels(draw_vjp(_loss, expand_pytrees=False)(params, x))
    assert "params · list of 2 dicts\\n4 arrays" in folded
    assert "cotangent of params · list of 2 dicts\\n4 arrays" in folded


@jax.jit
def _inner(x):
    return jnp.sin(x) * jnp.cos(x) + 1.0


@jax.jit
def _outer(x):
    return jnp.sum(_inner(x) ** 2)


def test_max_depth_closes_jit_calls_and_says_so():
    x = jnp.arange(3.0)
    opened = draw_grad(lambda x: _outer(x) * 2.0, max_depth=None)(x)
    depth0 = draw_grad(lambda x: _outer(x) * 2.0, max_depth=0)(x)
    depth1 = draw_grad(lambda x: _outer(x) * 2.0, max_depth=1)(x)
    assert not any(label.startswith("_outer") for label in _labels(opened))
    assert any(re.match(r"_outer\\n\d+ equations: ", lb) for lb in _labels(depth0))
    assert any(re.match(r"_inner\\n\d+ equations: ", lb) for lb in _labels(depth1))
    assert not any(label.startswith("_outer") for label in _labels(depth1))
    assert depth0.counts[0] < depth1.counts[0] < opened.counts[0]
    assert "nested jit calls as one node each" in depth0.title
    assert "collapsed" not in opened.title
    jvp0 = draw_jvp(lambda x: _outer(x) * 2.0, max_depth=0)((x,), (jnp.ones(3),))
    assert any(label.startswith("_outer\\n") for label in _labels(jvp0))


def test_past_max_eqns_each_source_line_is_one_node():
    params, x = _params(6), jnp.ones(2)
    full = draw_grad(_loss, expand_pytrees=True)(params, x)
    lines = draw_grad(_loss, max_eqns=10, expand_pytrees=True)(params, x)
    assert "one node per source line" in lines.title
    assert lines.counts[0] < full.counts[0] / 2
    here = "test_autodiff_fold.py:"
    assert any(
        label.startswith(here) and " equations: " in label for label in _labels(lines)
    )
    assert any(re.fullmatch(r"\d+ residuals", label) for label in _labels(lines))


def test_a_picture_wider_than_max_width_folds_a_step_further_until_it_fits():
    params, x = _params(10), jnp.ones(2)  # 104 equations: under max_eqns (150)
    full = draw_grad(_loss, max_width=None)(params, x)
    assert "source line" not in full.title
    assert _width_px(full) > 5000  # ten parallel tanh chains, lanes side by side
    fitted = draw_grad(_loss)(params, x)
    assert _width_px(fitted) <= 5000
    assert fitted.counts[0] < full.counts[0]
    assert "to fit 5,000 px" in fitted.title
    assert fitted.width_px == pytest.approx(_width_px(fitted))
    # a picture that fits is drawn as the counts say
    small = draw_grad(_loss, max_width=None)(_params(2), x)
    assert draw_grad(_loss)(_params(2), x).source == small.source


def test_max_width_folds_no_further_than_source_lines():
    params, x = _params(6), jnp.ones(2)
    by_line = draw_grad(_loss, max_eqns=1, max_width=None)(params, x)
    tiny = draw_vjp(_loss, max_width=1)(params, x)
    assert "one node per source line" in by_line.title
    assert "one node per source line" in tiny.title and "to fit 1 px" in tiny.title
    assert _labels(draw_grad(_loss, max_width=1)(params, x))[1:] == _labels(by_line)[1:]


@jax.jit
def _ten_sines(x):
    return sum(jnp.sin(x * k) for k in range(1, 11))


def test_past_eight_residuals_those_saved_by_one_node_fold():
    x = jnp.arange(3.0)
    # 7,199 px wide opened: max_width=None, or it folds the jit call to fit
    opened = draw_grad(
        lambda x: jnp.sum(_ten_sines(x)), max_depth=None, max_width=None
    )(x)
    closed = draw_grad(lambda x: jnp.sum(_ten_sines(x)), max_depth=0)(x)
    saved = grad_graph(lambda x: jnp.sum(_ten_sines(x)))(x).select("residual")
    assert len(saved) >= 10  # a cos(x * k) for each sine, at least
    assert sum(lb.startswith("residual") for lb in _labels(opened)) == len(saved)
    assert "residuals by what saves them" not in opened.title
    assert f"{len(saved)} residuals" in _labels(closed)
    assert "residuals by what saves them" in closed.title


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"max_depth": -1}, r"`max_depth` must be a whole number >= 0"),
        ({"max_depth": True}, r"`max_depth` must be a whole number >= 0"),
        ({"max_eqns": 0}, r"`max_eqns` must be a positive whole number; got 0"),
        ({"expand_pytrees": "yes"}, r"`expand_pytrees` must be None .* got 'yes'"),
        ({"max_width": 0}, r"`max_width` must be a positive whole number of pixels"),
        ({"max_width": 9.5}, r"or None \(never fold for width\); got 9.5\.$"),
    ],
)
def test_bad_fold_options_are_refused_at_configure_time(option, message):
    for draw in (draw_grad, draw_vjp, draw_jvp):
        with pytest.raises(ValueError, match=message):
            draw(jnp.sin, **option)


def test_a_checkpointed_call_is_one_box_that_counts_its_equations():
    def f(x):
        return jax.checkpoint(lambda y: jnp.sin(jnp.sin(y)))(x)

    remat = [
        e for e in jax.make_jaxpr(jax.grad(f))(1.0).jaxpr.eqns if "jaxpr" in e.params
    ]
    assert [e.primitive.name for e in remat] == ["remat2"]
    inside = len(remat[0].params["jaxpr"].eqns)  # the oracle: JAX's own backward body
    labels = [label.split("\\n")[0] for label in _labels(draw_grad(f)(1.0))]
    assert f"remat2: {inside} equations" in labels
