"""draw_jaxpr and draw_hlo: a pytree argument or result of many leaves is one node."""

import functools
import re

import jax
import jax.numpy as jnp
import pytest

from jaxtour import _io_nodes
from jaxtour.viz import draw_hlo, draw_jaxpr

PARAMS = [{"w": jnp.full((2, 2), 0.1 * (i + 1)), "b": jnp.zeros(2)} for i in range(6)]
X = jnp.ones(2)


def step(params, x):
    h = x
    for layer in params:
        h = jnp.tanh(h @ layer["w"] + layer["b"])
    # a library function, not a call of the test's own: the drawings stay flat
    new = jax.tree.map(functools.partial(jnp.multiply, 0.9), params)
    return new, jnp.sum(h)


DRAWERS = {
    "jaxpr": lambda **o: draw_jaxpr(step, **o),
    "stablehlo": lambda **o: draw_hlo(step, stage="stablehlo", **o),
    "compiled": lambda **o: draw_hlo(step, **o),
}


def _labels(diagram):
    return re.findall(r'label="([^"]*)"', diagram.source)


def _in_edges_of(diagram, node):
    return re.findall(rf"\n\s*(\w+) -> {node}\b([^\n]*)", diagram.source)


@pytest.mark.parametrize("drawer", sorted(DRAWERS))
def test_a_pytree_of_many_leaves_is_one_node_naming_its_shape(drawer):
    leaves = len(jax.tree.leaves(PARAMS))  # 12, the oracle
    folded = DRAWERS[drawer]()(PARAMS, X)
    expanded = DRAWERS[drawer](expand_pytrees=True)(PARAMS, X)
    labels = _labels(folded)
    assert f"params · 6 items\\n{leaves} arrays · f32" in labels
    assert f"result[0] · 6 items\\n{leaves} arrays · f32" in labels
    assert not any(label.startswith(("params[", "result[0][")) for label in labels)
    assert "pytrees as one node each" in folded.title
    assert "pytrees" not in expanded.title
    shown = _labels(expanded)
    assert sum(label.startswith("params[") for label in shown) == leaves
    assert sum(label.startswith("result[0][") for label in shown) == leaves
    # 2 x 12 leaves became 2 nodes; the small x and loss stay as they are. The compiled
    # step is nested by its loop's turns, and its folded picture fits by folding them.
    if drawer != "compiled":
        assert folded.counts[0] == expanded.counts[0] - 2 * (leaves - 1)
    assert any(label.startswith("x\\n") for label in labels)


def test_edges_into_a_folded_node_carry_no_single_type():
    d = draw_jaxpr(step, edge_labels=True)(PARAMS, X)
    out = re.search(r"\n\s*(out\d+) \[label=\"result\[0\] · ", d.source)[1]
    edges = _in_edges_of(d, out)
    assert edges and not any("label=" in attrs for _, attrs in edges)
    assert re.search(r"-> \w+ \[label=", d.source)  # other edges are labelled


def test_a_dict_is_named_by_its_keys_and_false_folds_small_pytrees():
    batch = {k: jnp.ones(2) for k in "abcdefghi"}  # 9 leaves: folded by default
    d = draw_jaxpr(lambda batch: sum(batch.values()))(batch)
    assert "batch · dict of a, b, c, …\\n9 arrays · f32" in _labels(d)
    small = {"x": jnp.ones(2), "y": jnp.ones(2, jnp.int32)}
    leaf_by_leaf = _labels(draw_jaxpr(lambda b: b["x"] * b["y"])(small))
    assert "b['x']\\nf32[2]" in leaf_by_leaf
    folded = _labels(draw_jaxpr(lambda b: b["x"] * b["y"], expand_pytrees=False)(small))
    assert "b · dict of x, y\\n2 arrays · f32 i32" in folded


@pytest.mark.parametrize("draw", [draw_jaxpr, draw_hlo])
def test_expand_pytrees_must_be_a_bool_or_none(draw):
    with pytest.raises(ValueError, match=r"`expand_pytrees` must be None .* got 'all'"):
        draw(jnp.sin, expand_pytrees="all")


@pytest.mark.parametrize(
    ("name", "tree"),
    [
        ("params[0]['w']", "params"),
        ("result[0][3]['b']", "result[0]"),
        ("result['loss']", "result"),
        ("state.step", "state"),
        ("x", "x"),
        # HLO's own parameter names (when JAX's do not match) are not paths
        ("Arg_0.1", "Arg_0.1"),
        ("parameter.12", "parameter.12"),
    ],
)
def test_the_pytree_of_a_leaf_is_its_argument_or_result_element(name, tree):
    assert _io_nodes.pytree_of(name) == tree
