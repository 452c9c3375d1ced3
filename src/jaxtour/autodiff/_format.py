"""Short text for values and types in node labels: ``4.0``, ``f32[3] [0, 0.84, 0.91]``."""

from __future__ import annotations

from typing import Any

from jaxtour._ir import host
from jaxtour._number_words import plural
from jaxtour.autodiff._boxes import body_equations

# Params worth a glance in a node label; everything else stays in the jaxpr text.
_SHOWN_PARAMS = {
    "integer_pow": ("y",),
    "reduce_sum": ("axes",),
    "reduce_max": ("axes",),
    "reduce_min": ("axes",),
    "argmax": ("axes",),
    "transpose": ("permutation",),
    "convert_element_type": ("new_dtype",),
    "scan": ("length", "reverse"),
    "squeeze": ("dimensions",),
}


def format_value(value: Any, entries: int = 3) -> str:
    """A number as ``4.0``; an array as its first `entries` entries, ``[1, 2, 3, …]``."""
    array = host(value)  # a PRNG key as its key data, bfloat16 as float32
    if array.size == 1 and array.ndim == 0:
        return _number(array.item())
    flat = array.reshape(-1)
    shown = ", ".join(_number(x) for x in flat[:entries].tolist())
    return f"[{shown}{', …' if flat.size > entries else ''}]"


def _number(x: Any) -> str:
    if isinstance(x, bool):
        return "T" if x else "F"
    if isinstance(x, float):
        text = f"{x:.4g}"
        if any(c in text for c in ".einf") or float(text) != x:
            return text  # 1234.4 is "1234" at 4 digits, never "1234.0"
        return text + ".0"  # a whole float reads as one: 4.0
    return str(x)


def eqn_label(primitive: str, params: dict, literals: list) -> str:
    """``mul(3.0, ·)``, ``integer_pow[y=3]``, ``scan[length=3]``: name, key params, constants.

    `literals` holds one entry per operand: its constant value, or None for a var.
    """
    name = _call_name(primitive, params)
    shown = [
        f"{k}={_param(params[k])}"
        for k in _SHOWN_PARAMS.get(primitive, ())
        if k in params
    ]
    head = f"{name}[{', '.join(shown)}]" if shown else name
    if any(lit is not None for lit in literals):
        args = ", ".join("·" if lit is None else format_value(lit) for lit in literals)
        return f"{head}({args})"
    return head


def _call_name(primitive: str, params: dict) -> str:
    if "name" in params:
        return f"{primitive} {params['name']}"
    if primitive == "custom_jvp_call" and "call_jaxpr" in params:
        inner = params["call_jaxpr"].jaxpr.eqns
        if len(inner) == 1 and "name" in inner[0].params:
            return f"{inner[0].params['name']} (custom_jvp)"
    if primitive == "cond" and "branches" in params:
        return f"cond[{len(params['branches'])} branches]"
    if primitive in _CLOSED_BODIES and "jaxpr" in params:
        # Drawn closed (its values are per shard, or recomputed): say what it holds.
        body = getattr(params["jaxpr"], "jaxpr", params["jaxpr"])
        return f"{primitive}: {plural(body_equations(body), 'equation')}"
    return primitive


# Calls an autodiff drawing keeps as one box, whose `jaxpr` param holds their body.
_CLOSED_BODIES = ("shard_map", "remat2", "checkpoint")


def _param(value: Any) -> str:
    if isinstance(value, tuple) and len(value) == 1:
        return str(value[0])
    return str(value)
