"""Whole models drawn as the code that wrote them (issue 47): equations nested by the
user's own calls on Flax NNX, Linen, Equinox and plain functions, every drawing within
5,000 px, and a saved page that holds every equation and fetches nothing."""

import re

import jax
import jax.numpy as jnp
import model_zoo as zoo
import pytest

from jaxtour import _ir, viz
from jaxtour._code_groups import Group, code_groups

MAX_PX = 5000


@pytest.fixture(scope="module")
def nnx_block():
    return zoo.nnx_block()


def _groups_named(root: Group) -> set[str]:
    out, todo = set(), [root]
    while todo:
        group = todo.pop()
        out |= {g.label for g in group.groups()} | {g.kind for g in group.groups()}
        todo += group.groups()
    return out


def _every_eqn_once(root: Group, eqns: list) -> None:
    seen = [id(e) for e in root.eqns()]
    assert sorted(seen) == sorted(id(e) for e in eqns)  # each equation exactly once


@pytest.mark.parametrize(
    ("make", "names"),
    [
        (
            "linen_mlp",
            {"LinenMLP", "LinenMLP.hidden", "LinenMLP.norm", "LinenMLP.out", "Dense"},
        ),
        ("eqx_mlp", {"EqxMLP", "EqxMLP.hidden", "EqxMLP.norm", "EqxMLP.out"}),
        ("plain", {"dense 1", "dense 2", "layer_norm"}),
    ],
)
def test_each_framework_is_nested_by_its_own_classes_and_functions(make, names):
    f, args = getattr(zoo, make)()
    eqns = jax.make_jaxpr(f)(*args).jaxpr.eqns
    root = code_groups(list(eqns))
    assert names <= _groups_named(root)
    _every_eqn_once(root, eqns)
    dot = viz.draw_jaxpr(f, group_by="code")(*args).source
    assert all(name in dot for name in names)


def test_an_nnx_block_names_its_modules_and_attributes(nnx_block):
    (loss, args), _ = nnx_block
    eqns = jax.make_jaxpr(loss)(*args).jaxpr.eqns
    root = code_groups(list(eqns))
    _every_eqn_once(root, eqns)
    (block,) = root.groups()[:1]
    assert block.label == "Block"
    children = {g.label: g.kind for g in block.groups()}
    assert children == {
        "Block.ln1": "LayerNorm",
        "Block.attn": "CausalSelfAttention",
        "Block.ln2": "LayerNorm",
        "Block.fc1": "Linear",
        "gelu": "gelu",
        "Block.fc2": "Linear",
    }
    attn = next(g for g in block.groups() if g.kind == "CausalSelfAttention")
    assert {"CausalSelfAttention.qkv", "CausalSelfAttention.proj"} <= {
        g.label for g in attn.groups()
    }


def test_one_function_called_twice_in_a_loop_is_two_groups():
    def layer(x):
        return jnp.tanh(x * 2.0 + 1.0)

    def net(x):
        for _ in range(2):
            x = layer(x)
        return x

    root = code_groups(list(jax.make_jaxpr(net)(1.0).jaxpr.eqns))
    assert [(g.label, g.size()) for g in root.groups()] == [
        ("layer 1", 3),
        ("layer 2", 3),
    ]


def test_groups_of_fewer_than_three_equations_are_dissolved():
    def tiny(x):
        return jnp.sin(x)

    def f(x):
        return tiny(x) + tiny(x)

    root = code_groups(list(jax.make_jaxpr(f)(1.0).jaxpr.eqns))
    assert root.groups() == [] and len(root.items) == 3


def _fits(diagram):
    width, height = diagram.size_px
    assert width <= MAX_PX and height <= MAX_PX, (diagram.title, width, height)


def test_the_block_and_its_jitted_train_step_fit_and_show_their_structure(nnx_block):
    (loss, args), (step, step_args) = nnx_block
    d = viz.draw_jaxpr(loss)(*args)  # the defaults: past 40 equations, nested
    assert "nested by your code's calls" in d.title
    _fits(d)
    assert "Block.attn" in d.source or "Block" in d.source
    d = viz.draw_jaxpr(step)(*step_args)
    _fits(d)
    # drawn by its structure, not one box "N equations inside"
    assert "equations inside" not in d.source
    for name in ("Block", "Optimizer.update", "(backward)"):
        assert name in d.source, name


def test_a_small_budget_folds_more_and_still_fits(nnx_block):
    (loss, args), _ = nnx_block
    roomy = viz.draw_jaxpr(loss, max_eqns=150)(*args)
    tight = viz.draw_jaxpr(loss, max_eqns=20)(*args)
    assert tight.counts[0] < roomy.counts[0]
    assert "folded" in tight.title


_NETWORK = re.compile(
    r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import|<link""",
    re.I,
)


def _leaf_eqns(jaxpr) -> int:
    return sum(1 for _, e in _ir.walk(jaxpr) if not _ir.sub_jaxprs(e))


def test_the_page_holds_every_equation_and_fetches_nothing(nnx_block, tmp_path):
    (loss, args), _ = nnx_block
    d = viz.draw_jaxpr(loss)(*args)
    path = d.save(tmp_path / "block.html")
    page = path.read_text()
    assert not _NETWORK.search(page)
    drawn = len(re.findall(r"<title>eqn\d+</title>", page))
    assert drawn == _leaf_eqns(_ir.unwrap_jit(jax.make_jaxpr(loss)(*args)).jaxpr)
    groups = re.search(r"class='jt-groups'>(.*?)</script>", page, re.S)
    folded = groups[1].count('"folded": true')
    assert folded == int(re.search(r"\((\d+) calls? folded\)", d.title)[1])


def test_a_diagram_without_groups_saves_a_page_too(tmp_path):
    d = viz.draw_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    page = d.save(tmp_path / "small.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    assert not _NETWORK.search(page)


def test_the_explorer_saves_every_view_in_one_page(tmp_path):
    from jaxtour.explorer import explore
    from jaxtour.explorer._views import VIEWS

    def f(x):
        return jnp.sum(jnp.tanh(x) ** 2)

    page = explore(f, jnp.ones(3)).save(tmp_path / "explore.html").read_text()
    assert page.count("<section class='jt-view") == len(VIEWS)
    assert not _NETWORK.search(page)
    with pytest.raises(ValueError, match=r"use a \.html suffix"):
        explore(f, jnp.ones(3)).save(tmp_path / "explore.svg")


@pytest.mark.slow
def test_stablehlo_and_compiled_ops_are_nested_by_the_same_calls(nnx_block):
    # the ops' locations (MLIR callsites, XLA's stack-frame table) against the
    # equations' tracebacks: two readings of the same calls
    (loss, args), _ = nnx_block
    lowered = jax.jit(loss).lower(*args)
    jaxpr_names = _groups_named(code_groups(list(jax.make_jaxpr(loss)(*args).eqns)))
    layers = {"Block.attn", "Block.ln1", "Block.ln2", "Block.fc1", "Block.fc2"}
    assert layers <= jaxpr_names
    stable = _ir.parse_stablehlo(_ir.stablehlo_text(lowered))
    compiled = _ir.parse_hlo(lowered.compile().as_text())
    fused = {"Block.attn", "Block.ln1", "Block.ln2"}  # fc1, fc2: in fewer than 3 ops
    for module, expected in ((stable, layers), (compiled, fused)):
        ops = module.computations[module.entry].ops
        root = code_groups(ops, stack=lambda op: _ir.op_stack(op.frames, op.op_name))
        assert expected <= _groups_named(root), module.dialect
        assert sorted(map(id, root.eqns())) == sorted(map(id, ops))
