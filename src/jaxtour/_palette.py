"""The palette: primitives grouped into families, one colour pair per family.

One palette for every picture, so `dot_general` is the same orange in a jaxpr, in
StableHLO and in compiled HLO, and a reader learns the colours once. `family(op)` names
a primitive's or opcode's family, `FAMILIES` holds the colours, `node_attrs(op)` turns
them into Graphviz node attributes.

Example:
    >>> family("dot_general"), family("stablehlo.dot_general"), family("all-reduce-start")
    ('matmul', 'matmul', 'collective')
    >>> family("custom-call:__cublas$gemm")
    'matmul'
    >>> node_attrs("add")["fillcolor"] == FAMILIES["elementwise"].fill
    True
"""

from __future__ import annotations

from typing import NamedTuple


class Family(NamedTuple):
    """A family of primitives drawn alike: its legend text, fill and border colours."""

    label: str
    fill: str
    border: str


# Pale fills with darker borders (readable on a projector, distinguishable in greyscale).
FAMILIES: dict[str, Family] = {
    "elementwise": Family("elementwise", "#DCEBFA", "#3A7BC8"),
    "matmul": Family("matmul / contraction", "#FDDCB5", "#D2691E"),
    "reduction": Family("reduction", "#D4EFD8", "#2E8B47"),
    "control flow": Family("control flow", "#E6DCF5", "#7B52BD"),
    "data movement": Family("data movement", "#EAEAEA", "#7A7A7A"),
    "random": Family("random", "#FFF1A8", "#B08F00"),
    "collective": Family("collective", "#F9C9C9", "#C0282D"),
    "other": Family("other", "#FFFFFF", "#555555"),
}

_MEMBERS: dict[str, str] = {}
for _family, _names in {
    "elementwise": "add sub subtract mul multiply div divide neg negate exp exponential exp2 "
    "log log1p log_plus_one expm1 exponential_minus_one sin sine cos cosine tan tanh logistic "
    "max maximum min minimum pow power integer_pow sqrt rsqrt cbrt abs sign floor ceil round "
    "round_nearest_even round_nearest_afz clamp rem remainder atan2 asin acos atan sinh cosh "
    "asinh acosh atanh erf erfc erf_inv lgamma digamma is_finite not and or xor "
    "select select_n "
    "compare eq ne gt ge lt le convert convert_element_type nextafter square imag real conj "
    "complex shift_left shift_right_logical shift_right_arithmetic population_count clz "
    "add_any stop_gradient reduce_precision polygamma igamma",
    "matmul": "dot dot_general conv conv_general_dilated convolution ragged_dot einsum "
    "triangular_solve cholesky",
    "reduction": "reduce reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or "
    "reduce_xor argmax argmin cumsum cumprod cummax cummin cumlogsumexp reduce_window "
    "sort top_k",
    "control flow": "cond while scan jit pjit closed_call core_call call case if conditional "
    "custom_jvp_call custom_vjp_call custom_vjp_call_jaxpr remat remat2 checkpoint shard_map "
    "manual_computation fusion for_loop run_state",
    "data movement": "reshape broadcast broadcast_in_dim transpose slice dynamic_slice "
    "dynamic_update_slice gather scatter scatter_add scatter_mul scatter_min scatter_max "
    "concatenate pad squeeze expand_dims rev reverse iota copy copy_p bitcast tuple "
    "get_tuple_element constant sharding_constraint device_put parameter split "
    "optimization_barrier select_and_scatter_add select_and_gather_add "
    # no bytes cross devices: a type cast marking a value as varying over mesh axes
    # (pvary, once pbroadcast), and a device's own index
    "pvary pbroadcast axis_index",
    "random": "random_bits random_seed random_wrap random_unwrap random_fold_in random_split "
    "threefry2x32 rng_bit_generator rng rng_uniform",
    "collective": "psum pmax pmin pmean all_gather all_to_all ppermute psum_scatter "
    "reduce_scatter all_reduce collective_permute collective_broadcast "
    "psum_invariant ragged_all_to_all",
}.items():
    _MEMBERS.update(dict.fromkeys(_names.split(), _family))


def family(op: str) -> str:
    """The family of a jaxpr primitive or an (Stable)HLO opcode, a key of `FAMILIES`."""
    name = op.lower().strip('"').rsplit(".", 1)[-1].replace("-", "_")
    for suffix in ("_start", "_done"):  # async collectives: all-reduce-start
        name = name.removesuffix(suffix)
    if name in _MEMBERS:
        return _MEMBERS[name]
    if name.startswith("custom_call"):  # custom-call:__cublas$gemm, a library kernel
        return (
            "matmul"
            if any(k in name for k in ("gemm", "matmul", "conv", "dot"))
            else "other"
        )
    if name.startswith(("reduce", "cum", "arg")):
        return "reduction"
    if name.startswith(("random", "rng", "threefry")):
        return "random"
    return "other"


def node_attrs(op: str) -> dict[str, str]:
    """Graphviz node attributes for an op of `op`'s family; collectives stand out."""
    fam = FAMILIES[family(op)]
    attrs = {"fillcolor": fam.fill, "color": fam.border}
    if family(op) == "collective":
        attrs |= {"penwidth": "3", "shape": "box", "style": "rounded,filled,bold"}
    return attrs
