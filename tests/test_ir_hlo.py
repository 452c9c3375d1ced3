"""jaxtour._ir reading compiled HLO: fusions, sources, parameters, collectives."""

import os
import textwrap

import jax
import jax.numpy as jnp
import pytest
from devices import run_with_devices
from ir_cases import line_of

from jaxtour import _ir


def mlp_step(params, x):
    h = jax.nn.relu(x @ params["w1"])  # MARK-LAYER
    return jax.tree.map(
        lambda p, g: p - 0.1 * g,
        params,
        jax.grad(lambda p: jnp.mean((h @ p["w2"]) ** 2))(params),
    )


MLP_ARGS = ({"w1": jnp.ones((8, 16)), "w2": jnp.ones((16, 4))}, jnp.ones((2, 8)))


@pytest.fixture(scope="module")
def mlp_stages():
    lowered = jax.jit(mlp_step).lower(*MLP_ARGS)
    return lowered, lowered.compile()


def test_compiled_hlo_fusions_hold_their_fused_computations(mlp_stages):
    _, compiled = mlp_stages
    module = _ir.parse_hlo(compiled.as_text())
    assert module.entry in module.computations
    fusions = module.fusions()
    assert fusions, "XLA fuses the elementwise update"
    for fusion in fusions:
        (called,) = fusion.called
        inner = module.computations[called.computation]
        assert called.args == fusion.operands
        assert len(inner.params) == len(fusion.operands)
        assert [op.opcode for op in inner.ops if op.opcode == "parameter"]
        assert inner.returns
    unfused = module.op_counts(fused=False)
    assert unfused["fusion"] == len(fusions)
    assert sum(module.op_counts().values()) > sum(unfused.values())


def test_compiled_hlo_keeps_jaxpr_primitives_and_source_lines(mlp_stages):
    _, compiled = mlp_stages
    ops = [op for _, op in _ir.parse_hlo(compiled.as_text()).walk()]
    assert {"dot_general", "max"} <= {op.primitive for op in ops}
    lines = {
        op.source.line
        for op in ops
        if op.source and os.path.basename(op.source.file) == "test_ir_hlo.py"
    }
    assert line_of("MARK-LAYER", __name__) in lines


def test_entry_parameters_and_root(mlp_stages):
    _, compiled = mlp_stages
    module = _ir.parse_hlo(compiled.as_text())
    entry = module.computations[module.entry]
    assert len(entry.params) == len(jax.tree.leaves(MLP_ARGS))
    assert entry.returns and entry.returns[0] in {op.name for op in entry.ops}


HLO_VARIANTS = textwrap.dedent("""\
    HloModule jit_g, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

    %add (a: f32[], b: f32[]) -> f32[] {
      %a = f32[] parameter(0)
      %b = f32[] parameter(1)
      ROOT %sum = f32[] add(f32[] %a, f32[] %b)
    }

    %branch_a (p: (f32[8])) -> f32[8] {
      %p = (f32[8]{0}) parameter(0)
      ROOT %g = f32[8]{0} get-tuple-element((f32[8]{0}) %p), index=0
    }

    %branch_b (q: (f32[8])) -> f32[8] {
      %q = (f32[8]{0}) parameter(0)
      %h = f32[8]{0} get-tuple-element(%q), index=0
      ROOT %n = f32[8]{0} negate(%h), META7
    }

    ENTRY %main (x: f32[8], i: s32[]) -> f32[8] {
      %x = f32[8]{0} parameter(0), metadata={op_name="x"}
      %i = s32[] parameter(1)
      %t = (f32[8]{0}) tuple(%x)
      %ar = f32[8]{0} all-reduce(%x), replica_groups={{0,1}}, to_apply=%add, META5
      %c = f32[8]{0} conditional(%i, %t, %t), branch_computations={%branch_a, %branch_b}
      %ags = (f32[8]{0}, f32[16]{0}) all-gather-start(%ar), dimensions={0}
      %agd = f32[16]{0} all-gather-done(%ags)
      %gemm = (f32[8]{0}, s8[16]{0}) custom-call(%x, %x), custom_call_target="__cublas$gemm"
      ROOT %r = f32[8]{0} add(%c, %ar)
    }
    """)
for _line, _prim in (
    ("5", "psum"),
    ("7", "neg"),
):  # metadata as JAX before stack frames wrote it
    HLO_VARIANTS = HLO_VARIANTS.replace(
        f"META{_line}",
        f'metadata={{op_name="jit(g)/{_prim}" source_file="/x/g.py" '
        f"source_line={_line}}}",
    )


def test_hlo_text_variants_older_metadata_typed_operands_collectives():
    module = _ir.parse_hlo(HLO_VARIANTS)
    assert module.name == "jit_g" and module.entry == "main"
    ops = {op.name: op for op in module.computations["main"].ops}
    assert (
        ops["ar"].opcode == "all-reduce" and ops["ar"].called == []
    )  # applied, not called
    assert ops["ar"].source == _ir.SourceLine("/x/g.py", 5)
    assert ops["ar"].primitive == "psum"
    assert [(c.role, c.computation, c.args) for c in ops["c"].called] == [
        ("branch 0", "branch_a", ["t"]),
        ("branch 1", "branch_b", ["t"]),
    ]
    assert module.computations["add"].returns == ["sum"]
    assert module.computations["add"].ops[-1].operands == ["a", "b"]
    assert ops["ags"].type == "(f32[8], f32[16])"
    counts = module.op_counts()
    assert counts["negate"] == 1 and counts["add"] == 1  # the reducer is not walked
    assert "tuple" not in counts and "parameter" not in counts
    assert (
        counts["custom-call:__cublas$gemm"] == 1
    )  # a library kernel, named by its target
    assert counts["all-gather-start"] == counts["all-gather-done"] == 1


def test_an_async_collective_pair_is_one_collective_in_the_title():
    from jaxtour.viz._hlo import hlo_diagram

    # all-reduce, and all-gather run as -start/-done (as on GPU and TPU): two collectives
    title = hlo_diagram(_ir.parse_hlo(HLO_VARIANTS), "g").title
    assert title.endswith(", 2 collectives")


def test_collectives_on_four_cpu_devices():
    counts = run_with_devices("""
        import json
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        from jaxtour import _ir
        mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,),
                             devices=jax.devices()[:4])
        f = jax.shard_map(lambda a: jax.lax.psum(a, "i") + jax.lax.all_gather(a, "i").sum(0),
                          mesh=mesh, in_specs=P("i"), out_specs=P("i"))
        lowered = jax.jit(f).lower(jnp.arange(8.0))
        hlo = _ir.parse_hlo(lowered.compile().as_text()).op_counts()
        shlo = _ir.parse_stablehlo(_ir.stablehlo_text(lowered)).op_counts()
        print(json.dumps([hlo["all-reduce"], hlo["all-gather"],
                          shlo["all_reduce"], shlo["all_gather"]]))
    """)
    assert counts == [1, 1, 1, 1]


def test_a_gpus_module_fingerprint_is_no_difference_between_two_programs():
    """A GPU's XLA writes a hash of the module among its frontend attributes: it
    differs whenever an op does, so a diff of two programs must not list it."""
    from pathlib import Path

    from jaxtour._ir._hlo_nodes import module_attrs

    text = (Path(__file__).parent / "hlo_texts" / "h200_mlp_update.txt").read_text()
    assert "fingerprint_before_lhs" in text.splitlines()[0]
    attrs = module_attrs(text)
    assert "frontend_attributes" not in attrs and attrs["is_scheduled"] == "true"
    line = 'HloModule m, frontend_attributes={{keep="1",fingerprint_before_lhs="{}"}}'
    assert (
        module_attrs(line.format("ab"))
        == module_attrs(line.format("cd"))
        == {"frontend_attributes": '{keep="1"}'}
    )
