"""jaxtour._ir pinned on the installed JAX: jaxpr walking, HLO parsing, checked tracing.

Counts are checked against independent oracles (JAX's own `jax.extend.core.subjaxprs`,
analytic FLOP counts, the line numbers of this file), never against printed text.
"""

import inspect
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend import core as jex_core

from jaxtour import _ir


def _line_of(marker: str) -> int:
    """The line of this file that holds `marker` (in a comment)."""
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    return next(i for i, line in enumerate(lines, 1) if marker in line and "_line_of" not in line)


def control_flow(x, y):
    z = jnp.sin(x)  # MARK-SIN
    w = jax.lax.cond(y > 0, lambda a: a + 1.0, lambda a: a * 2.0, z)
    carry, ys = jax.lax.scan(lambda c, a: (c + a, c * a), 0.0, w)
    n = jax.lax.while_loop(lambda v: v < 10.0, lambda v: v + 1.0, carry)
    r = jax.checkpoint(lambda t: jnp.exp(t) * 2.0)(w)
    return n + jax.nn.relu(r).sum() + ys.sum() + jax.jit(jnp.cos)(y)


ARGS = (jnp.arange(4.0), 1.0)


def _oracle_count(jaxpr) -> int:
    return sum(1 + sum(_oracle_count(sub) for sub in jex_core.jaxprs_in_params(e.params))
               for e in jaxpr.eqns)


def _eqn(jaxpr, name):
    return next(e for _, e in _ir.walk(jaxpr) if e.primitive.name == name)


# --- jaxprs -------------------------------------------------------------------------------


def test_count_eqns_matches_jax_own_sub_jaxpr_walk():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    assert _ir.count_eqns(jaxpr) == _oracle_count(jaxpr)
    assert _ir.count_eqns(jaxpr) > len(jaxpr.eqns)


def test_sub_jaxprs_are_named_after_their_params():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    labels = {e.primitive.name: [s.label for s in _ir.sub_jaxprs(e)] for _, e in _ir.walk(jaxpr)
              if _ir.sub_jaxprs(e)}
    assert labels["cond"] == ["branches[0]", "branches[1]"]
    assert sorted(labels["while"]) == ["body_jaxpr", "cond_jaxpr"]
    assert labels["scan"] == ["jaxpr"]
    assert labels["jit"] == ["jaxpr"]
    assert labels["custom_jvp_call"] == ["call_jaxpr"]
    assert any("remat" in name or "checkpoint" in name for name in labels)


def test_cond_branches_take_the_operands_after_the_index():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    cond = _eqn(jaxpr, "cond")
    for sub in _ir.sub_jaxprs(cond):
        assert sub.inputs == list(cond.invars[1:])
        assert sub.outputs == list(cond.outvars)


def test_while_cond_and_body_line_up_with_consts_and_carry():
    def f(x, k):
        return jax.lax.while_loop(lambda v: v < k, lambda v: v + x, 0.0)

    jaxpr = jax.make_jaxpr(f)(1.0, 5.0).jaxpr
    loop = _eqn(jaxpr, "while")
    subs = {s.label: s for s in _ir.sub_jaxprs(loop)}
    cn = loop.params["cond_nconsts"]
    carry = list(loop.invars[cn + loop.params["body_nconsts"]:])
    assert subs["cond_jaxpr"].inputs == list(loop.invars[:cn]) + carry
    assert subs["body_jaxpr"].inputs[-len(carry):] == carry
    assert subs["cond_jaxpr"].outputs == [None]  # a bool, not the loop's result
    assert subs["body_jaxpr"].outputs == list(loop.outvars)


def test_custom_vjp_and_shard_map_are_found():
    @jax.custom_vjp
    def clip(x):
        return x

    clip.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))
    mesh = jax.make_mesh((1,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = jax.shard_map(lambda a: jnp.sin(a), mesh=mesh,
                            in_specs=jax.sharding.PartitionSpec("i"),
                            out_specs=jax.sharding.PartitionSpec("i"))
    jaxpr = jax.make_jaxpr(lambda x: sharded(clip(x)))(jnp.ones(4)).jaxpr
    found = {e.primitive.name: len(_ir.sub_jaxprs(e)) for _, e in _ir.walk(jaxpr)}
    assert found["custom_vjp_call"] == 1
    assert found["shard_map"] == 1
    assert _ir.primitive_counts(jaxpr)["sin"] == 1


def test_source_line_points_at_this_file():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    line = _ir.source_line(_eqn(jaxpr, "sin"))
    assert line is not None
    assert os.path.samefile(line.file, __file__)
    assert line.line == _line_of("MARK-SIN")
    assert line.function == "control_flow"
    assert "jnp.sin(x)" in line.code
    assert str(line) == f"test_ir.py:{line.line} (control_flow)"


@pytest.mark.parametrize(("file", "where"), [
    ("/tmp/ipykernel_4242/1830275.py", "cell line 3"), ("<ipython-input-7-abc>", "cell line 3"),
    ("/home/me/loss.py", "loss.py:3"),
])
def test_notebook_cells_are_named_as_cells(file, where):
    assert _ir.SourceLine(file, 3, "f").where == where
    assert str(_ir.SourceLine(file, 3, "f")) == f"{where} (f)"


@pytest.mark.parametrize(("value", "text"), [
    (jnp.zeros((3, 4)), "f32[3,4]"), (jnp.array(True), "bool[]"),
    (jnp.zeros(2, jnp.int32), "i32[2]"), (jnp.zeros(2, jnp.bfloat16), "bf16[2]"),
    (jnp.zeros(1, jnp.uint8), "u8[1]"),
])
def test_type_str_is_the_jaxpr_spelling(value, text):
    assert _ir.type_str(jax.typeof(value)) == text


def test_literals_and_important_params():
    jaxpr = jax.make_jaxpr(lambda x: jnp.sum(x * 2.5, axis=0).astype(jnp.int32))(
        jnp.ones((2, 3))).jaxpr
    mul = _eqn(jaxpr, "mul")
    literals = [a for a in mul.invars if _ir.is_literal(a)]
    assert [_ir.literal_str(a) for a in literals] == ["2.5"]
    assert _ir.important_params(_eqn(jaxpr, "reduce_sum")) == ["axes=0"]
    assert _ir.important_params(_eqn(jaxpr, "convert_element_type")) == ["new_dtype=i32"]
    cond_jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    assert all("jaxpr" not in p for p in _ir.important_params(_eqn(cond_jaxpr, "scan")))


# --- checked tracing ----------------------------------------------------------------------


def test_a_non_callable_is_named():
    with pytest.raises(TypeError, match=r"draw_x needs a function to trace.*got 3 \(int\)"):
        _ir.check_callable(3, "draw_x")


@pytest.mark.parametrize(("args", "where", "what"), [
    (("abc",), r"args\[0\]", r"'abc' \(str\)"),
    ((jnp.ones(2), {"w": object()}), r"args\[1\]\['w'\]", r"object"),
])
def test_untraceable_arguments_are_named(args, where, what):
    with pytest.raises(TypeError, match=rf"draw_x cannot trace {where}: it is .*{what}.*"
                                        r"static_argnums"):
        _ir.trace(lambda *a: a[0], args, {}, who="draw_x")


def test_keyword_arguments_are_named_too():
    with pytest.raises(TypeError, match=r"draw_x cannot trace kwargs\['mode'\]\['how'\]: "
                                        r"it is 'fast' \(str\)"):
        _ir.check_args((1.0,), {"mode": {"how": "fast"}}, (), "draw_x")


def test_static_argnums_let_a_string_through():
    traced = _ir.trace(lambda x, mode: x * 2 if mode == "double" else x, (1.0, "double"), {},
                       who="draw_x", static_argnums=(1,))
    assert _ir.primitive_counts(traced.jaxpr.jaxpr)["mul"] == 1


def test_the_users_own_exception_propagates_with_a_note():
    class Oops(ValueError):
        pass

    def broken(x):
        raise Oops("my message")

    with pytest.raises(Oops, match="my message") as info:
        _ir.trace(broken, (jnp.ones(3),), {}, who="draw_x")
    assert any("draw_x traced broken(f32[3])" in note for note in info.value.__notes__)


# --- compiled HLO ---------------------------------------------------------------------------


def mlp_step(params, x):
    h = jax.nn.relu(x @ params["w1"])  # MARK-LAYER
    return jax.tree.map(lambda p, g: p - 0.1 * g, params,
                        jax.grad(lambda p: jnp.mean((h @ p["w2"]) ** 2))(params))


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
    lines = {op.source.line for op in ops if op.source and os.path.basename(op.source.file)
             == "test_ir.py"}
    assert _line_of("MARK-LAYER") in lines


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
for _line, _prim in (("5", "psum"), ("7", "neg")):  # metadata as JAX before stack frames wrote it
    HLO_VARIANTS = HLO_VARIANTS.replace(
        f"META{_line}", f'metadata={{op_name="jit(g)/{_prim}" source_file="/x/g.py" '
                        f'source_line={_line}}}')


def test_hlo_text_variants_older_metadata_typed_operands_collectives():
    module = _ir.parse_hlo(HLO_VARIANTS)
    assert module.name == "jit_g" and module.entry == "main"
    ops = {op.name: op for op in module.computations["main"].ops}
    assert ops["ar"].opcode == "all-reduce" and ops["ar"].called == []  # applied, not called
    assert ops["ar"].source == _ir.SourceLine("/x/g.py", 5)
    assert ops["ar"].primitive == "psum"
    assert [(c.role, c.computation, c.args) for c in ops["c"].called] == [
        ("branch 0", "branch_a", ["t"]), ("branch 1", "branch_b", ["t"])]
    assert module.computations["add"].returns == ["sum"]
    assert module.computations["add"].ops[-1].operands == ["a", "b"]
    assert ops["ags"].type == "(f32[8], f32[16])"
    counts = module.op_counts()
    assert counts["negate"] == 1 and counts["add"] == 1  # the reducer is not walked
    assert "tuple" not in counts and "parameter" not in counts
    assert counts["custom-call:__cublas$gemm"] == 1  # a library kernel, named by its target
    assert counts["all-gather-start"] == counts["all-gather-done"] == 1


def test_an_async_collective_pair_is_one_collective_in_the_title():
    from jaxtour.viz._hlo import hlo_diagram

    # all-reduce, and all-gather run as -start/-done (as on GPU and TPU): two collectives
    title = hlo_diagram(_ir.parse_hlo(HLO_VARIANTS), "g").title
    assert title.endswith(", 2 collectives")


def test_collectives_on_four_cpu_devices():
    script = textwrap.dedent("""
        import os
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        import jax, jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        from jaxtour import _ir
        mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
        f = jax.shard_map(lambda a: jax.lax.psum(a, "i") + jax.lax.all_gather(a, "i").sum(0),
                          mesh=mesh, in_specs=P("i"), out_specs=P("i"))
        lowered = jax.jit(f).lower(jnp.arange(8.0))
        hlo = _ir.parse_hlo(lowered.compile().as_text()).op_counts()
        shlo = _ir.parse_stablehlo(_ir.stablehlo_text(lowered)).op_counts()
        print(hlo["all-reduce"], hlo["all-gather"], shlo["all_reduce"], shlo["all_gather"])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "1", "1"]


# --- StableHLO ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def control_flow_stablehlo():
    return _ir.parse_stablehlo(_ir.stablehlo_text(jax.jit(control_flow).lower(*ARGS)))


def test_stablehlo_regions_are_computations_with_roles(control_flow_stablehlo):
    module = control_flow_stablehlo
    ops = [op for _, op in module.walk()]
    case = next(op for op in ops if op.opcode == "case")
    assert [c.role for c in case.called] == ["branch 0", "branch 1"]
    loops = [op for op in ops if op.opcode == "while"]
    assert len(loops) == 2  # scan and while_loop
    for loop in loops:
        assert [c.role for c in loop.called] == ["cond", "body"]
        body = module.computations[loop.called[1].computation]
        assert len(body.params) == len(loop.operands) == len(loop.results)
        assert len(body.returns) == len(loop.results)
    calls = [op for op in ops if op.opcode == "call"]
    assert calls and all(c.called[0].computation in module.computations for c in calls)


def test_stablehlo_types_and_sources(control_flow_stablehlo):
    ops = [op for _, op in control_flow_stablehlo.walk()]
    sine = next(op for op in ops if op.opcode == "sine")
    assert sine.type == "f32[4]"
    assert sine.primitive == "sin"
    assert sine.source.line == _line_of("MARK-SIN")
    loop = next(op for op in ops if op.opcode == "while")
    assert loop.type.startswith("(") and loop.source is not None
    assert next(op for op in ops if op.opcode == "compare").type == "pred[]"


def test_stablehlo_op_count_matches_a_line_count():
    def plain(x):
        return jnp.tanh(x @ x.T).sum() + jnp.exp(x).max()

    text = jax.jit(plain).lower(jnp.ones((3, 3))).as_text()
    oracle = sum(1 for line in text.splitlines()
                 if "stablehlo." in line and "stablehlo.return" not in line
                 and "=" in line.split("stablehlo.")[0])
    assert sum(_ir.parse_stablehlo(text).op_counts().values()) == oracle


# --- XLA's figures ------------------------------------------------------------------------


def test_cost_summary_counts_a_matmul_analytically():
    m, k, n = 32, 64, 16
    compiled = jax.jit(jnp.matmul).lower(np.ones((m, k), np.float32),
                                         np.ones((k, n), np.float32)).compile()
    figures = _ir.cost_summary(compiled)
    assert figures["flops"] == pytest.approx(2 * m * k * n, rel=0.1)
    assert figures["bytes_accessed"] >= 4 * (m * k + k * n + m * n)
    assert figures["argument_bytes"] == 4 * (m * k + k * n)
    assert figures["output_bytes"] == 4 * m * n


def test_unwrap_jit_opens_a_jitted_function_and_keeps_its_names():
    def layer(weights, x):
        return {"y": jnp.tanh(x @ weights)}

    w, x = jnp.ones((3, 2)), jnp.ones(3)
    closed = jax.make_jaxpr(jax.jit(layer))(w, x)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit"]
    body = _ir.unwrap_jit(closed)
    assert [e.primitive.name for e in body.jaxpr.eqns] == ["dot_general", "tanh"]
    names, paths = _ir.io_names(body.jaxpr)
    assert list(names) == ["weights", "x"] and "y" in str(paths[0])
    plain = jax.make_jaxpr(lambda v: jax.jit(jnp.sin)(v) * 2.0)(x)
    assert _ir.unwrap_jit(plain) is plain  # more than the one jit eqn: left as it is
