"""What a compiled op holds: the ops of its fused (or looped, or called) computations.

A fusion's own metadata names one jaxpr equation (often its root's, sometimes another's),
and an op's metadata names the equation it came from, not what it does: XLA's layout
passes tag a `copy` or `transpose` with the `dot_general` that needed it. So an op is
named here by what it holds: a `dot` is a `dot_general` whatever its metadata says, and
no op that is not a dot (or a convolution) is called one.
"""

from __future__ import annotations

from jaxtour._ir._hlo import BOOKKEEPING, HloModule, HloOp

# HLO opcodes that *are* a jaxpr primitive, whatever equation their metadata names
OPCODE_PRIMITIVE = {"dot": "dot_general", "convolution": "conv_general_dilated"}
MATMUL_TARGETS = ("gemm", "matmul")
# an op tagged with a dot it is not is named by its opcode, in JAX's word where it has one
JAX_WORD = {
    "multiply": "mul",
    "subtract": "sub",
    "divide": "div",
    "negate": "neg",
    "maximum": "max",
    "minimum": "min",
    "cosine": "cos",
    "sine": "sin",
    "exponential": "exp",
    "exponential-minus-one": "expm1",
    "log-plus-one": "log1p",
    "power": "pow",
    "convert": "convert_element_type",
    "broadcast": "broadcast_in_dim",
    "select": "select_n",
}
# primitives an op is named by only when its opcode implements them
HEAVY = frozenset(OPCODE_PRIMITIVE.values())
# ops that hold no computation of their own
NOT_HELD = BOOKKEEPING | {
    "constant",
    "bitcast",
    "fusion",
    "call",
    "while",
    "conditional",
}


def held_ops(module: HloModule, op: HloOp) -> list[HloOp]:
    """The ops `op` runs: its called computations' ops, nested ones expanded, in order.

    An op that calls nothing holds only itself.

    Example:
        >>> text = '''HloModule m
        ... %fused (p: f32[2]) -> f32[2] {
        ...   %p = f32[2]{0} parameter(0)
        ...   ROOT %s = f32[2]{0} sine(%p)
        ... }
        ... ENTRY %main (x: f32[2]) -> f32[2] {
        ...   %x = f32[2]{0} parameter(0)
        ...   ROOT %f = f32[2]{0} fusion(%x), kind=kLoop, calls=%fused
        ... }'''
        >>> from jaxtour._ir._hlo import parse_hlo
        >>> module = parse_hlo(text)
        >>> [o.opcode for o in held_ops(module, module.computations["main"].ops[-1])]
        ['parameter', 'sine']
    """
    called = [c.computation for c in op.called if c.computation in module.computations]
    if not called:
        return [op]
    return [inner for name in called for _, inner in module.walk(name)]


def op_primitive(op: HloOp) -> str:
    """The jaxpr primitive `op` computes ("" when it computes nothing of its own).

    Its metadata's primitive, unless that names a dot or convolution the op is not (a
    layout `copy` tagged `dot_general`: then its opcode, in JAX's word where it has
    one); a `dot` is `dot_general` whatever it is tagged.
    """
    if op.opcode in OPCODE_PRIMITIVE:
        return OPCODE_PRIMITIVE[op.opcode]
    if op.opcode in NOT_HELD:
        return ""
    if "custom" in op.opcode and any(k in op.target.lower() for k in MATMUL_TARGETS):
        return "dot_general"  # a library matmul: cuBLAS's gemm, oneDNN's matmul
    named = op.primitive
    return JAX_WORD.get(op.opcode, op.opcode) if named in HEAVY else named


def held_primitives(module: HloModule, op: HloOp) -> tuple[str, ...]:
    """The jaxpr primitives the ops `op` holds compute, once each, in program order.

    Read from its fused computation (or loop body, or callee), not from the op's own
    metadata: a fusion holding a dot lists `dot_general` whatever it is named, and a
    fusion holding none never does.
    """
    found = (op_primitive(inner) for inner in held_ops(module, op))
    return tuple(dict.fromkeys(p for p in found if p))


def fusion_root(module: HloModule, op: HloOp) -> HloOp | None:
    """The op a fusion's computation returns (None for an op that fuses nothing)."""
    if op.opcode != "fusion" or not op.called:
        return None
    computation = module.computations.get(op.called[0].computation)
    if computation is None or not computation.returns:
        return None
    return next((o for o in computation.ops if o.name == computation.returns[0]), None)
