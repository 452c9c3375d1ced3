"""compare_stages: op counts before/after XLA, fusions with what they absorbed, both reprs."""

import collections
import inspect
import re
import sys
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import pytest

from jaxtour.viz import StageComparison, compare_stages


def mlp_step(params, x, y):
    def loss(p):
        h = jax.nn.relu(x @ p["w1"] + p["b1"])  # MARK-HIDDEN
        return jnp.mean((h @ p["w2"] - y) ** 2)

    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)  # MARK-UPDATE


PARAMS = {"w1": jnp.ones((784, 64)), "b1": jnp.zeros(64), "w2": jnp.ones((64, 10))}
ARGS = (PARAMS, jnp.ones((32, 784)), jnp.ones((32, 10)))


def _line(marker: str) -> int:
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    return next(
        i for i, text in enumerate(lines, 1) if marker in text and "_line(" not in text
    )


@pytest.fixture(scope="module")
def comparison() -> StageComparison:
    return compare_stages(mlp_step)(*ARGS)


def test_xla_leaves_fewer_ops_than_it_was_given(comparison):
    assert 0 < comparison.compiled_ops < comparison.stablehlo_ops
    assert comparison.jaxpr_eqns > 0


def test_counts_match_the_compiled_text(comparison):
    compiled = jax.jit(mlp_step).lower(*ARGS).compile().as_text()
    entry = compiled[compiled.index("\nENTRY") :]
    entry = entry[: entry.index("\n}")]
    oracle = len(re.findall(r"\sfusion\(", entry))
    assert len(comparison.fusions) == comparison.compiled["fusion"] == oracle


def test_rows_add_up(comparison):
    *rows, total = comparison.rows()
    assert total[0] == "total"
    for column in (1, 2, 3):
        assert sum(row[column] for row in rows) == total[column]
    assert total[3] == sum(f.ops.total() for f in comparison.fusions)
    kinds = [row[0] for row in rows]
    assert "fusion" in kinds and "elementwise" in kinds


def test_fusions_name_the_primitives_and_lines_they_absorbed(comparison):
    primitives = {p for f in comparison.fusions for p in f.primitives}
    assert {"max", "sub", "mul"} <= primitives  # relu, the update
    lines = {
        (line.file.rsplit("/", 1)[-1], line.line)
        for f in comparison.fusions
        for line in f.lines
    }
    assert ("test_viz_compare.py", _line("MARK-HIDDEN")) in lines
    assert ("test_viz_compare.py", _line("MARK-UPDATE")) in lines


def test_text_is_the_terminal_form(comparison):
    text = str(comparison)
    assert repr(comparison) == (
        f"StageComparison('mlp_step' on {jax.default_backend()}: "
        f"{comparison.stablehlo_ops} StableHLO ops -> {comparison.compiled_ops} "
        f"compiled, {len(comparison.fusions)} fusions)"
    )
    assert text.startswith("What XLA did to mlp_step: jaxpr ")
    assert (
        f"XLA turned {comparison.stablehlo_ops} StableHLO ops into "
        f"{comparison.compiled_ops} for {jax.default_backend()}" in text
    )
    assert re.search(r"^kind\s+StableHLO\s+compiled\s+in fusions$", text, re.MULTILINE)
    assert "Fusions:" in text and "FLOP" in text


def test_html_is_the_one_rich_form(comparison):
    html = comparison._repr_html_()
    root = ET.fromstring(html)
    tables = root.findall(".//table")
    assert len(tables) == 2
    assert len(tables[0].findall("tbody/tr")) == len(comparison.rows())
    assert len(tables[1].findall("tbody/tr")) == len(comparison.fusions)
    assert not [
        name
        for name in dir(comparison)
        if name.startswith("_repr_") and name != "_repr_html_"
    ]


def test_a_tiny_elementwise_function_becomes_one_fusion():
    c = compare_stages(lambda x: jnp.tanh(x) * 2.0 + 1.0)(jnp.ones(8))
    assert c.compiled["fusion"] == 1 and len(c.fusions) == 1
    assert set(c.fusions[0].primitives) == {"tanh", "mul", "add"}


def test_bad_input_is_named_and_the_functions_error_propagates():
    with pytest.raises(
        TypeError, match=r"compare_stages needs a function .*got 42 \(int\)"
    ):
        compare_stages(42)
    # A string is held fixed, as eqx.filter_jit holds it; JAX refuses it in f.
    with pytest.raises(TypeError, match="not a valid JAX type") as err:
        compare_stages(mlp_step)({"w1": "big"}, *ARGS[1:])
    assert any("compare_stages traced mlp_step" in n for n in err.value.__notes__)

    def fails(x):
        raise RuntimeError("no luck")

    with pytest.raises(RuntimeError, match="no luck"):
        compare_stages(fails)(1.0)


def test_save_writes_the_page_or_the_text_and_refuses_other_suffixes(tmp_path):
    comparison = compare_stages(jnp.tanh)(jnp.ones(4))
    page = comparison.save(tmp_path / "tanh.html").read_text()
    assert page.startswith("<!doctype html>") and comparison._repr_html_() in page
    assert (comparison.save(tmp_path / "tanh.txt").read_text()) == str(
        comparison
    ) + "\n"
    with pytest.raises(
        ValueError,
        match=r"StageComparison\.save\(\) writes \.html, \.txt or "
        r"\.md; got 'tanh\.svg'",
    ):
        comparison.save(tmp_path / "tanh.svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tanh.html", "tanh.txt"]


def test_a_jitted_function_is_compiled_with_its_own_options():
    """Donation is the jitted function's own: XLA's memory figures are those of
    `f.lower(...).compile()`, not of the function re-jitted without it."""

    def step(w, x):
        return jnp.tanh(x @ w) + w

    w, x = jnp.ones((64, 64)), jnp.ones((64, 64))
    for donate in ((), (0,)):
        f = jax.jit(step, donate_argnums=donate)
        want = f.lower(w, x).compile().memory_analysis()
        figures = compare_stages(f)(w, x).figures
        assert figures["temp_bytes"] == want.temp_size_in_bytes, donate
    assert compare_stages(f)(w, x).figures != compare_stages(step)(w, x).figures


def test_counts_of_one_read_as_english():
    c = compare_stages(lambda x: x * x)(3.0)  # no constant: a GPU fuses one in
    assert c.jaxpr_eqns == 1 and len(c.fusions) == 1 and c.fused.total() == 1
    text = str(c)
    assert text.startswith("What XLA did to <lambda>: jaxpr 1 equation -> StableHLO ")
    assert "1 fusion holding 1 op," in text
    assert not re.search(r"\b1 (equations|ops|StableHLO ops)\b", text + repr(c))


# A GPU's Triton GEMM fusion can hold fusions of its own (its operands' converts): the
# program runs the outer fusion as one kernel, so it is one fusion, holding what its
# nested fusions hold. (A CPU nests no fusions, so this is written as XLA writes it.)
NESTED = """\
HloModule jit_f, entry_computation_layout={(f32[8,8]{1,0})->bf16[8,8]{1,0}}

%fused_convert (p0: f32[8,8]) -> bf16[8,8] {
  %p0 = f32[8,8]{1,0} parameter(0)
  %n = f32[8,8]{1,0} negate(%p0)
  ROOT %c = bf16[8,8]{1,0} convert(%n)
}

%gemm_fusion_dot_computation (p1: f32[8,8]) -> bf16[8,8] {
  %p1 = f32[8,8]{1,0} parameter(0)
  %i = bf16[8,8]{1,0} fusion(%p1), kind=kCustom, calls=%fused_convert
  ROOT %d = bf16[8,8]{1,0} dot(%i, %i), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

%fused_exp (p2: bf16[8,8]) -> bf16[8,8] {
  %p2 = bf16[8,8]{1,0} parameter(0)
  ROOT %e = bf16[8,8]{1,0} exponential(%p2)
}

ENTRY %main (x: f32[8,8]) -> bf16[8,8] {
  %x = f32[8,8]{1,0} parameter(0)
  %gemm = bf16[8,8]{1,0} fusion(%x), kind=kCustom, calls=%gemm_fusion_dot_computation
  ROOT %out = bf16[8,8]{1,0} fusion(%gemm), kind=kLoop, calls=%fused_exp
}
"""


def _without_fusions(counts):
    """Op counts less the fusion ops themselves: what the program computes."""
    return collections.Counter({k: v for k, v in counts.items() if k != "fusion"})


def test_a_fusion_nested_in_another_is_part_of_it_not_one_more():
    from jaxtour import _ir

    module = _ir.parse_hlo(NESTED)
    assert [op.name for op in module.fusions()] == ["gemm", "out"]
    c = StageComparison.of("f", "gpu", 3, module, module, {})
    assert len(c.fusions) == c.compiled["fusion"] == 2
    assert c.fusions[0].ops == {"negate": 1, "convert": 1, "dot": 1}
    assert c.fused + _without_fusions(c.compiled) == _without_fusions(
        module.op_counts()
    )
    assert "2 fusions holding 4 ops, and 0 ops left standalone" in c.headline()
    from jaxtour.viz._hlo import hlo_diagram

    assert hlo_diagram(module, "f").title.endswith(": 2 ops, 2 fusions")


def test_a_gpu_program_counts_each_op_once():
    """The H200's program for `mlp.update` (tests/hlo_texts): fusions as its entry runs
    them, and every op inside one of them or standalone, never both."""
    from pathlib import Path

    from jaxtour import _ir

    text = (Path(__file__).parent / "hlo_texts" / "h200_mlp_update.txt").read_text()
    module = _ir.parse_hlo(text)
    entry = text[text.index("\nENTRY") :]
    entry = entry[: entry.index("\n}")]
    c = StageComparison.of("update", "gpu", 0, module, module, {})
    assert len(c.fusions) == len(re.findall(r"\sfusion\(", entry)) == 26
    assert c.fused + _without_fusions(c.compiled) == _without_fusions(
        module.op_counts()
    )
    assert {f.kind for f in c.fusions} >= {"loop", "custom"}
