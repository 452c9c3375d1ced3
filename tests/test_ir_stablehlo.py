"""jaxtour._ir reading StableHLO: regions with roles, types, source lines."""

import jax
import jax.numpy as jnp
import pytest
from ir_cases import ARGS, control_flow, line_of

from jaxtour import _ir


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
    assert sine.source.line == line_of("MARK-SIN")
    loop = next(op for op in ops if op.opcode == "while")
    assert loop.type.startswith("(") and loop.source is not None
    assert next(op for op in ops if op.opcode == "compare").type == "pred[]"


def test_stablehlo_op_count_matches_a_line_count():
    def plain(x):
        return jnp.tanh(x @ x.T).sum() + jnp.exp(x).max()

    text = jax.jit(plain).lower(jnp.ones((3, 3))).as_text()
    oracle = sum(
        1
        for line in text.splitlines()
        if "stablehlo." in line
        and "stablehlo.return" not in line
        and "=" in line.split("stablehlo.")[0]
    )
    assert sum(_ir.parse_stablehlo(text).op_counts().values()) == oracle


def test_stablehlo_reads_a_quoted_function_name():
    """A jitted lambda's function is `@"<lambda>"` in MLIR: its ops are in the module,
    as the line count of the whole text says (the call and its callee's ops)."""
    double = jax.jit(lambda x: x * 2.0)

    def plus_one(x):
        return double(x) + 1.0

    text = jax.jit(plus_one).lower(1.0).as_text()
    assert '@"<lambda>"' in text
    module = _ir.parse_stablehlo(text)
    oracle = sum(
        1
        for line in text.splitlines()
        if ("stablehlo." in line or " call @" in line)
        and "stablehlo.return" not in line
        and "=" in line.split("stablehlo.")[0].split(" call ")[0]
    )
    assert sum(module.op_counts().values()) == oracle == 5
    call = next(op for _, op in module.walk() if op.opcode == "call")
    assert call.called[0].computation == "<lambda>"
    assert "multiply" in module.op_counts()
