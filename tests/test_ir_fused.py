# ruff: noqa: E501  (HLO lines are as long as XLA prints them)
"""`_ir.held_primitives`: a compiled op named by what it holds, not by its metadata.

The HLO below is written by hand after what the issue's user saw (issue 45): XLA tags
ops with the equation that needed them, so a fusion holding a dot can carry a
`transpose` tag, and a layout copy or a cosine can carry `dot_general`'s.
"""

import jax
import jax.numpy as jnp

from jaxtour import _ir

HLO = """HloModule jit_f

%fused_dot (p0: f32[8,8], p1: f32[8,8]) -> f32[8,8] {
  %p0 = f32[8,8]{1,0} parameter(0)
  %p1 = f32[8,8]{1,0} parameter(1)
  %t = f32[8,8]{1,0} transpose(%p0), dimensions={1,0}, metadata={op_name="jit(f)/transpose"}
  %d = f32[8,8]{1,0} dot(%t, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/transpose(jvp(f))/transpose"}
  ROOT %m = f32[8,8]{1,0} multiply(%d, %d), metadata={op_name="jit(f)/mul"}
}

%fused_copy (p2: f32[8,8]) -> f32[8,8] {
  %p2 = f32[8,8]{1,0} parameter(0)
  %tr = f32[8,8]{0,1} transpose(%p2), dimensions={1,0}, metadata={op_name="jit(f)/dot_general"}
  ROOT %c = f32[8,8]{1,0} copy(%tr), metadata={op_name="jit(f)/dot_general"}
}

%fused_cos (p3: f32[8,8]) -> f32[8,8] {
  %p3 = f32[8,8]{1,0} parameter(0)
  ROOT %cos = f32[8,8]{1,0} cosine(%p3), metadata={op_name="jit(f)/dot_general"}
}

ENTRY %main (a: f32[8,8], b: f32[8,8]) -> f32[8,8] {
  %a = f32[8,8]{1,0} parameter(0)
  %b = f32[8,8]{1,0} parameter(1)
  %ynn_fusion.1 = f32[8,8]{1,0} fusion(%a, %b), kind=kCustom, calls=%fused_dot, metadata={op_name="jit(f)/transpose"}
  %transpose_copy_fusion = f32[8,8]{1,0} fusion(%ynn_fusion.1), kind=kLoop, calls=%fused_copy, metadata={op_name="jit(f)/mul"}
  ROOT %cosine_fusion = f32[8,8]{1,0} fusion(%transpose_copy_fusion), kind=kLoop, calls=%fused_cos, metadata={op_name="jit(f)/dot_general"}
}
"""


def _entry(module):
    return {op.name: op for op in module.computations[module.entry].ops}


def test_a_fusion_holding_a_dot_is_a_dot_whatever_it_is_tagged():
    module = _ir.parse_hlo(HLO)
    op = _entry(module)["ynn_fusion.1"]
    assert _ir.held_primitives(module, op) == ("transpose", "dot_general", "mul")
    assert _ir.op_primitive(_ir.fusion_root(module, op)) == "mul"


def test_fusions_holding_no_dot_never_list_one():
    module = _ir.parse_hlo(HLO)
    ops = _entry(module)
    copy = _ir.held_primitives(module, ops["transpose_copy_fusion"])
    assert copy == ("transpose", "copy")
    assert _ir.held_primitives(module, ops["cosine_fusion"]) == ("cos",)
    assert _ir.fusion_root(module, ops["a"]) is None


def test_held_ops_of_an_op_that_calls_nothing_is_itself():
    module = _ir.parse_hlo(HLO)
    a = _entry(module)["a"]
    assert _ir.held_ops(module, a) == [a]


def test_used_inputs_marks_what_jit_passes_to_the_executable():
    def f(a, unused, c):
        return a * 2 + c

    args = (jnp.ones(3), jnp.ones(4), jnp.ones(3))
    used = _ir.used_inputs(jax.make_jaxpr(f)(*args))
    compiled = jax.jit(f).lower(*args).compile().as_text()
    entry = compiled[compiled.index("ENTRY") :]
    # jit drops the argument the jaxpr never reads: the same count of parameters
    assert used == [True, False, True] and entry.count("parameter(") == sum(used)
