"""The one package that knows how JAX's IRs are laid out: jaxprs, StableHLO and compiled HLO.

Everything else in jaxtour reads programs through these names (never a private module
of this package: `tests/test_architecture.py` says so), so a JAX release that
changes a jaxpr parameter or the text XLA prints breaks here, and `tests/test_ir_*.py`
say how. Public JAX APIs only: `jax.jit(f).trace/lower/compile`, `jax.extend.core`,
`jax.extend.source_info_util`, and the text that `as_text()` prints.

One module per seam: `_static` (`static_argnums`/`static_argnames` and `argnums`,
read once as `jax.jit` and `jax.grad` read them), `_jit_statics` (those a jitted
function's own `jax.jit` holds), `_args` (checked arguments and tracing), `_split`
(leaves JAX cannot trace held fixed, as `eqx.filter_jit`), `_writes` (a model passed
as `f` that writes to itself, caught where the traced copy would lose the write),
`_concrete` (a value `f` needs in Python that tracing made abstract, retold),
`_values` (run values as NumPy: keys as key data, bfloat16/float8 NaNs found), `_jaxpr`
(reading jaxprs), `_frames` (the user's call stack behind an equation),
`_hlo` (compiled HLO text), `_stablehlo` (StableHLO text), `_stages` (compiled artefacts
and XLA's figures), `_flat` (jaxprs with their calls inlined, as autodiff draws them),
`_evaluate` (a jaxpr evaluated equation by equation, as the tracing lens shows it),
`_made_from` (which static argument a constant of a trace was computed from),
`_cost` (FLOPs and bytes per equation), `_hlo_cost` (per compiled op), `_loops` (how
often a loop runs), `_fused` (what a compiled op holds: its fused computation's ops and
the primitives they compute), `_inputs` (the jaxpr inputs a program reads, the buffers
`jax.jit` passes on), `_nodes` and `_hlo_nodes` (equations and ops as canonical nodes,
names left out) and `_match` (two programs' nodes paired).
"""

from jaxtour._ir._args import (
    arg_names,
    check_args,
    check_callable,
    function_name,
    model_call,
    own_statics_error,
    trace,
    trace_split,
    tracer,
)
from jaxtour._ir._concrete import (
    CONCRETE,
    concrete_error,
    is_int_scalar,
    needs_concrete,
)
from jaxtour._ir._cost import Count, eqn_count, jaxpr_counts
from jaxtour._ir._evaluate import Step, Stepped, step_jaxpr
from jaxtour._ir._flat import FlatJaxpr, depends_on, flatten_jaxpr
from jaxtour._ir._frames import (
    Frame,
    Stack,
    common_stack,
    is_library,
    op_stack,
    user_stack,
)
from jaxtour._ir._fused import fusion_root, held_ops, held_primitives, op_primitive
from jaxtour._ir._hlo import (
    BOOKKEEPING,
    Called,
    HloComputation,
    HloModule,
    HloOp,
    parse_hlo,
    split_top,
)
from jaxtour._ir._hlo_cost import hlo_bytes, hlo_counts, trips_of, uncountable
from jaxtour._ir._hlo_nodes import hlo_nodes, module_attrs
from jaxtour._ir._inputs import used_inputs
from jaxtour._ir._jaxpr import (
    SourceLine,
    SubJaxpr,
    count_eqns,
    dtype_str,
    important_params,
    io_names,
    is_dropvar,
    is_literal,
    literal_str,
    primitive_counts,
    scan_counts,
    source_line,
    sub_jaxprs,
    type_str,
    unwrap_jit,
    walk,
)
from jaxtour._ir._jit_statics import is_jitted, jit_statics, statics_for
from jaxtour._ir._loops import DATA_DEPENDENT, Loop, hlo_trips, jaxpr_loops
from jaxtour._ir._made_from import made_from_static
from jaxtour._ir._match import Change, Matching, match_nodes
from jaxtour._ir._nodes import RETURN, Node, jaxpr_nodes
from jaxtour._ir._split import (
    Split,
    applier,
    bind,
    is_array,
    is_model,
    split,
    split_model,
    traceable,
)
from jaxtour._ir._stablehlo import parse_stablehlo, unwrap_call
from jaxtour._ir._stages import (
    Figures,
    cost_summary,
    figure_text,
    left_out,
    stablehlo_text,
)
from jaxtour._ir._static import (
    StaticArgs,
    check_argnums,
    describe,
    resolve_argnums,
    static_args,
)
from jaxtour._ir._values import (
    dtype_of,
    host,
    is_array_like,
    is_differentiable,
    is_float,
    is_key,
    is_tracer,
    nonfinite,
    value_type,
)
from jaxtour._ir._writes import StateWriteError, Writes

__all__ = [
    "BOOKKEEPING",
    "CONCRETE",
    "DATA_DEPENDENT",
    "RETURN",
    "Called",
    "Change",
    "Count",
    "Figures",
    "FlatJaxpr",
    "Frame",
    "HloComputation",
    "HloModule",
    "HloOp",
    "Loop",
    "Matching",
    "Node",
    "SourceLine",
    "Split",
    "Stack",
    "StateWriteError",
    "StaticArgs",
    "Step",
    "Stepped",
    "SubJaxpr",
    "Writes",
    "applier",
    "arg_names",
    "bind",
    "check_argnums",
    "check_args",
    "check_callable",
    "common_stack",
    "concrete_error",
    "cost_summary",
    "count_eqns",
    "depends_on",
    "describe",
    "dtype_of",
    "dtype_str",
    "eqn_count",
    "figure_text",
    "flatten_jaxpr",
    "function_name",
    "fusion_root",
    "held_ops",
    "held_primitives",
    "hlo_bytes",
    "hlo_counts",
    "hlo_nodes",
    "hlo_trips",
    "host",
    "important_params",
    "io_names",
    "is_array",
    "is_array_like",
    "is_differentiable",
    "is_dropvar",
    "is_float",
    "is_int_scalar",
    "is_jitted",
    "is_key",
    "is_library",
    "is_literal",
    "is_model",
    "is_tracer",
    "jaxpr_counts",
    "jaxpr_loops",
    "jaxpr_nodes",
    "jit_statics",
    "left_out",
    "literal_str",
    "made_from_static",
    "match_nodes",
    "model_call",
    "module_attrs",
    "needs_concrete",
    "nonfinite",
    "op_primitive",
    "op_stack",
    "own_statics_error",
    "parse_hlo",
    "parse_stablehlo",
    "primitive_counts",
    "resolve_argnums",
    "scan_counts",
    "source_line",
    "split",
    "split_model",
    "split_top",
    "stablehlo_text",
    "static_args",
    "statics_for",
    "step_jaxpr",
    "sub_jaxprs",
    "trace",
    "trace_split",
    "traceable",
    "tracer",
    "trips_of",
    "type_str",
    "uncountable",
    "unwrap_call",
    "unwrap_jit",
    "used_inputs",
    "user_stack",
    "value_type",
    "walk",
]
