"""Custom calls the cost rules know: host callbacks, which compute nothing, and a GPU's
library kernels for dots and convolutions (cuBLAS GEMMs, cuDNN convolutions), whose
FLOPs their dimensions give."""

from __future__ import annotations

import math
import re

from jaxtour._ir._hlo import HloOp, attr
from jaxtour._ir._hlo_types import hlo_arrays

# The custom calls a host callback lowers to (jax.debug.print, jax.debug.callback,
# jax.pure_callback, io_callback): JAX names them xla[_ffi][_partitioned]_python_
# {cpu,gpu,...}_callback (0.10 and 0.12 emit xla_ffi_python_cpu_callback on a CPU, and
# xla_ffi_partitioned_python_cpu_callback for a partitioned jax.debug.callback). The
# device hands values to Python and computes nothing, so 0 FLOPs, exactly.
HOST_CALLBACK_TARGET = re.compile(
    r"xla(?:_ffi)?(?:_partitioned)?_python_[a-z]+_callback"
)


def is_host_callback(target: str) -> bool:
    """Whether custom call `target` is a host callback (`HOST_CALLBACK_TARGET`).

    Example:
        >>> [is_host_callback(t) for t in ("xla_ffi_partitioned_python_cpu_callback",
        ...     "xla_python_gpu_callback", "lapack_spotrf_ffi")]
        [True, True, False]
    """
    return bool(target) and HOST_CALLBACK_TARGET.fullmatch(target) is not None


# A GPU's library kernels for dots and convolutions: custom calls that keep the op's
# dimensions (a GEMM's in its backend_config, a convolution's as attributes), with a
# scratch buffer as their last output.
CUBLAS_GEMMS = ("__cublas$gemm", "__cublas$lt$matmul")
CUDNN_CONVOLUTIONS = ("__cudnn$conv",)


def _first_elements(type_text: str) -> int:
    """Elements of an op's result, the first array of a tuple (a library call's
    others are an auxiliary output or its scratch space)."""
    arrays = hlo_arrays(type_text)
    return math.prod(arrays[0][1]) if arrays else 0


def convolution(op: HloOp, types: dict[str, str]) -> float | None:
    """2 FLOPs per output element per filter element of its feature. A cuDNN gradient
    costs its forward convolution, whose dims it keeps: see `_forward_output_filter`."""
    output, filter_ = _forward_output_filter(op, types)
    kernel = hlo_arrays(filter_)[:1]
    labels = re.search(r"dim_labels=\w+_(\w+)->", op.attrs)
    if not (kernel and labels):
        return None
    shape = kernel[0][1]
    features = shape[labels[1].index("o")]  # none: an empty output
    out = _first_elements(output)
    return 2 * out * math.prod(shape) / features if features else 0


def _forward_output_filter(op: HloOp, types: dict[str, str]) -> tuple[str, str]:
    """The types of the output and filter of the forward convolution `op` computes or
    differentiates, as XLA assigns them: an input gradient's operand 0 is the forward
    output, a filter gradient's result is the forward filter."""
    operands = [types.get(name, "") for name in op.operands[:2]] + ["", ""]
    if op.target.startswith("__cudnn$convBackwardInput"):
        return operands[0], operands[1]
    if op.target.startswith("__cudnn$convBackwardFilter"):
        return operands[1], op.type
    return op.type, operands[1]


def gemm(op: HloOp, types: dict[str, str]) -> float | None:
    """A cuBLAS GEMM: 2 FLOPs per output element per contracted element, and one per
    output element for each elementwise op it applies (a bias, a ReLU, alpha, beta)."""
    lhs = hlo_arrays(types.get(op.operands[0], "")) if op.operands else []
    dims = re.search(r'"lhs_contracting_dimensions":\[([^\]]*)\]', op.config)
    if not (lhs and dims):
        return None
    shape = lhs[0][1]
    contracted = math.prod(shape[int(d)] for d in re.findall(r"\d+", dims[1]))
    out = _first_elements(op.type)
    epilogue = attr(op.config, r'"epilogue":"(\w+)"')
    extra = sum(step in epilogue for step in ("BIAS", "RELU")) + _folded(op.config)
    return 2 * out * contracted + extra * out


def _folded(config: str) -> int:
    """The elementwise ops XLA folded into a GEMM's alpha and beta, one FLOP per
    output element each: a scale (alpha not 1), a matrix added (beta not 0)."""
    alpha = float(attr(config, r'"alpha_real":([-+\d.eE]+)') or 1)
    beta = float(attr(config, r'"beta":([-+\d.eE]+)') or 0)
    return (alpha != 1) + (beta != 0)
