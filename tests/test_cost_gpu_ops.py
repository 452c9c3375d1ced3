"""A GPU's compiled ops the CPU never writes: cuBLAS GEMMs and cuDNN convolutions as
custom calls (a result and a scratch buffer), an op the rules cannot count inside a
fusion. CI has no GPU, so the programs are written as XLA writes them on one."""

# ruff: noqa: E501 (HLO lines as XLA prints them)

import jax
import jax.numpy as jnp
import pytest

from jaxtour import _ir
from jaxtour.cost import cost_table
from jaxtour.cost._ledger import CostTable, Row

GEMM_CONFIG = (
    '{"operation_queue_id":"0","wait_on_operation_queues":[],"gemm_backend_config":'
    '{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":'
    '["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],'
    '"rhs_batch_dimensions":[]},"alpha_imag":0,"epilogue":"EPILOGUE"}}'
)
PROGRAM = """\
HloModule jit_f, entry_computation_layout={(f32[64,32]{1,0})->f32[64,16]{1,0}}

ENTRY %main (a: f32[64,32], b: f32[32,16], c: f32[16], x: f32[8,32,32,16], k: f32[3,3,16,4]) -> f32[64,16] {
  %a = f32[64,32]{1,0} parameter(0)
  %b = f32[32,16]{1,0} parameter(1)
  %c = f32[16]{0} parameter(2)
  %x = f32[8,32,32,16]{3,2,1,0} parameter(3)
  %k = f32[3,3,16,4]{3,2,1,0} parameter(4)
  %gemm = (f32[64,16]{1,0}, s8[4194304]{0}) custom-call(%a, %b), custom_call_target="__cublas$gemm", metadata={op_name="jit(f)/dot_general"}, backend_config=PLAIN
  %lt = (f32[64,16]{1,0}, s8[4194304]{0}) custom-call(%a, %b, %c), custom_call_target="__cublas$lt$matmul", backend_config=BIASED
  %conv = (f32[8,32,32,4]{3,2,1,0}, u8[0]{0}) custom-call(%x, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", backend_config={"cudnn_conv_backend_config":{}}
  ROOT %out = f32[64,16]{1,0} get-tuple-element(%gemm), index=0
}
"""
PROGRAM = PROGRAM.replace("PLAIN", GEMM_CONFIG.replace("EPILOGUE", "DEFAULT"))
PROGRAM = PROGRAM.replace("BIASED", GEMM_CONFIG.replace("EPILOGUE", "BIAS_RELU"))


@pytest.fixture(scope="module")
def counted():
    module = _ir.parse_hlo(PROGRAM)
    return {op.name: count for op, count in _ir.hlo_counts(module)}


def test_a_cublas_gemm_counts_as_the_dot_it_computes(counted):
    assert counted["gemm"].flops == 2 * 64 * 16 * 32
    assert counted["gemm"].written == 64 * 16 * 4  # its result, not its scratch space
    # a bias and a ReLU applied in the GEMM's epilogue: one FLOP per output each
    assert counted["lt"].flops == 2 * 64 * 16 * 32 + 2 * 64 * 16


def test_a_cudnn_convolution_counts_as_the_convolution_it_computes(counted):
    x, k = jnp.ones((8, 32, 32, 16)), jnp.ones((3, 3, 16, 4))
    dims = ("NHWC", "HWIO", "NHWC")
    table = cost_table(
        lambda x, k: jax.lax.conv_general_dilated(
            x, k, (1, 1), "SAME", dimension_numbers=dims
        )
    )(x, k)
    (conv,) = [r for r in table.equations if r.name == "conv_general_dilated"]
    assert counted["conv"].flops == conv.flops == 2 * 8 * 32 * 32 * 4 * 3 * 3 * 16


BACKWARD = """\
HloModule jit_g, entry_computation_layout={(f32[8,16,32,32]{3,2,1,0})->f32[8,16,32,32]{3,2,1,0}}

ENTRY %main (x: f32[8,16,32,32], k: f32[4,16,3,3], dy: f32[8,4,32,32]) -> f32[8,16,32,32] {
  %x = f32[8,16,32,32]{3,2,1,0} parameter(0)
  %k = f32[4,16,3,3]{3,2,1,0} parameter(1)
  %dy = f32[8,4,32,32]{3,2,1,0} parameter(2)
  %dx = (f32[8,16,32,32]{3,2,1,0}, u8[0]{0}) custom-call(%dy, %k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, custom_call_target="__cudnn$convBackwardInput", backend_config={"cudnn_conv_backend_config":{}}
  %dk = (f32[4,16,3,3]{3,2,1,0}, u8[0]{0}) custom-call(%x, %dy), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, custom_call_target="__cudnn$convBackwardFilter", backend_config={"cudnn_conv_backend_config":{}}
  ROOT %out = f32[8,16,32,32]{3,2,1,0} get-tuple-element(%dx), index=0
}
"""


def test_a_cudnn_backward_convolution_counts_as_its_forward_one():
    """XLA writes a gradient convolution with the forward one's dim_labels: the input
    gradient takes the forward output as operand 0, the filter gradient is the result."""
    counted = {op.name: count for op, count in _ir.hlo_counts(_ir.parse_hlo(BACKWARD))}
    forward = 2 * 8 * 4 * 32 * 32 * 16 * 3 * 3
    assert counted["dx"].flops == forward
    assert counted["dk"].flops == forward


def test_an_uncountable_fusion_names_only_the_ops_it_cannot_count():
    """A GPU fuses a sort with what feeds it, there a fusion of its own that the rules
    count: the sort is named, not that fusion nor the outer one."""
    module = _ir.parse_hlo(
        """\
HloModule jit_f, entry_computation_layout={(f32[64]{0})->f32[64]{0}}

%cmp (p: f32[], q: f32[]) -> pred[] {
  %p = f32[] parameter(0)
  %q = f32[] parameter(1)
  ROOT %lt = pred[] compare(%p, %q), direction=LT
}

%fused_negate (y: f32[64]) -> f32[64] {
  %y = f32[64]{0} parameter(0)
  ROOT %n = f32[64]{0} negate(%y)
}

%fused_sort (x: f32[64]) -> f32[64] {
  %x = f32[64]{0} parameter(0)
  %inner = f32[64]{0} fusion(%x), kind=kLoop, calls=%fused_negate
  ROOT %sort.3 = f32[64]{0} sort(%inner), dimensions={0}, to_apply=%cmp
}

ENTRY %main (a: f32[64]) -> f32[64] {
  %a = f32[64]{0} parameter(0)
  ROOT %fusion.7 = f32[64]{0} fusion(%a), kind=kCustom, calls=%fused_sort
}
"""
    )
    (op,) = [o for o in module.computations["main"].ops if o.opcode == "fusion"]
    assert _ir.uncountable(module, op) == ["sort.3"]
    # and the totals name the sort, as on a CPU, not "1 fusion op"
    row = Row("fusion.7", "", None, 0.0, 512.0, "fusion", ("sort.3",))
    table = CostTable("f", "gpu", [], [row], {"flops": 500.0}, 1)
    assert table.uncounted.startswith(
        "1 sort op not counted (FLOP and transcendental totals leave them out"
    )


def test_a_gemm_counts_the_scale_and_the_matrix_xla_folds_into_alpha_and_beta():
    """`2 * (a @ b) + c` on a GPU is one cuBLAS GEMM: alpha 2, c added through beta 1.
    Each counts one FLOP per output element, as the bias in an epilogue does."""
    config = GEMM_CONFIG.replace("EPILOGUE", "DEFAULT")
    config = config.replace('"alpha_real":1,"beta":0', '"alpha_real":2,"beta":1')
    module = _ir.parse_hlo(
        """\
HloModule jit_f, entry_computation_layout={(f32[64,32]{1,0})->f32[64,16]{1,0}}

ENTRY %main (a: f32[64,32], b: f32[32,16], c: f32[64,16]) -> f32[64,16] {
  %a = f32[64,32]{1,0} parameter(0)
  %b = f32[32,16]{1,0} parameter(1)
  %c = f32[64,16]{1,0} parameter(2)
  %gemm = (f32[64,16]{1,0}, s8[4194304]{0}) custom-call(%a, %b, %c), custom_call_target="__cublas$gemm", output_to_operand_aliasing={{0}: (2, {})}, backend_config=CONFIG
  ROOT %out = f32[64,16]{1,0} get-tuple-element(%gemm), index=0
}
""".replace("CONFIG", config)
    )
    counted = {op.name: count for op, count in _ir.hlo_counts(module)}
    assert counted["gemm"].flops == 2 * 64 * 16 * 32 + 2 * 64 * 16


def test_a_gemm_writes_its_auxiliary_output_but_not_its_scratch_space():
    """cuBLASLt's GELU_AUX epilogue also writes the GELU's input, for the backward
    pass: (result, aux, workspace); only the workspace XLA appends is scratch."""
    config = GEMM_CONFIG.replace("EPILOGUE", "GELU_AUX")
    module = _ir.parse_hlo(
        """\
HloModule jit_f, entry_computation_layout={(f32[64,32]{1,0})->f32[64,16]{1,0}}

ENTRY %main (a: f32[64,32], b: f32[32,16]) -> f32[64,16] {
  %a = f32[64,32]{1,0} parameter(0)
  %b = f32[32,16]{1,0} parameter(1)
  %lt = (f32[64,16]{1,0}, f32[64,16]{1,0}, s8[4194304]{0}) custom-call(%a, %b), custom_call_target="__cublas$lt$matmul", backend_config=CONFIG
  ROOT %out = f32[64,16]{1,0} get-tuple-element(%lt), index=0
}
""".replace("CONFIG", config)
    )
    counted = {op.name: count for op, count in _ir.hlo_counts(module)}
    assert counted["lt"].written == 2 * 64 * 16 * 4
