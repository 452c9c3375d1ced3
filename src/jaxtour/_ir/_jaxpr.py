"""Reading jaxprs: source lines, types, literals, nested jaxprs and an eqn's parameters."""

from __future__ import annotations

import collections
import linecache
import os
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.extend import core as jex_core


class SourceLine(NamedTuple):
    """A line of the user's Python code that produced an equation or an op."""

    file: str
    line: int
    function: str = ""

    def __str__(self) -> str:
        return f"{self.where} ({self.function})" if self.function else self.where

    @property
    def where(self) -> str:
        """`loss.py:12`, or `cell line 3` for code typed into a notebook cell."""
        if _NOTEBOOK_CELL.search(self.file):
            return f"cell line {self.line}"
        return f"{os.path.basename(self.file)}:{self.line}"

    @property
    def code(self) -> str:
        """The text of the line, when the file (or notebook cell) is readable."""
        return linecache.getline(self.file, self.line).strip()


# jaxtour's own files: a line there is where the kit called JAX, not the user's line
_KIT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_line(line: SourceLine | None) -> SourceLine | None:
    """`line`, unless it is in jaxtour's own code (where the kit called JAX)."""
    return None if line is None or line.file.startswith(_KIT) else line


# How IPython names the code of a cell: /tmp/ipykernel_42/1234.py, <ipython-input-3-...>
_NOTEBOOK_CELL = re.compile(r"ipykernel_\d+[/\\]\d+\.py$|^<ipython-input-")
_SUMMARY = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?::\d+)?(?: \((?P<fn>.*)\))?$")


def source_line(eqn: Any) -> SourceLine | None:
    """The user's line that produced `eqn`, from its source info; None when JAX has none."""
    try:
        summary = jax.extend.source_info_util.summarize(eqn.source_info)
    except Exception:  # source info is best effort: a picture without it is still right
        return None
    match = _SUMMARY.match(summary or "")
    if not match:
        return None
    return SourceLine(match["file"], int(match["line"]), match["fn"] or "")


_DTYPE = re.compile(r"^(bfloat|float|uint|int|complex)(\d+)(.*)$")
_KINDS = {"bfloat": "bf", "float": "f", "uint": "u", "int": "i", "complex": "c"}


def dtype_str(dtype: Any) -> str:
    """Short dtype names as jaxprs print them: f32, i32, bf16, bool."""
    try:
        name = np.dtype(dtype).name
    except TypeError:  # extended dtypes such as PRNG keys
        return str(dtype)
    match = _DTYPE.match(name)
    return f"{_KINDS[match[1]]}{match[2]}{match[3]}" if match else name


def type_str(aval: Any) -> str:
    """`f32[128,784]` for an abstract value (tokens and other avals as JAX prints them)."""
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return str(aval)
    return f"{dtype_str(dtype)}[{','.join(str(d) for d in shape)}]"


def is_literal(atom: Any) -> bool:
    """Whether an equation input is a literal constant written inline in the jaxpr."""
    return isinstance(atom, jex_core.Literal)


def literal_str(atom: Any) -> str:
    """A literal as a short number (`2.0`, `-inf`) or, for an array, its type."""
    value = np.asarray(atom.val)
    if value.ndim:
        return f"const {type_str(atom.aval)}"
    if value.dtype.kind not in "fc":
        return str(value.item())
    text = f"{value.item():.4g}"
    if value.dtype.kind == "c":
        return text  # 1+2j, 0+0j
    return text if any(c in text for c in ".ein") else text + ".0"  # 2.0 stays a float


class SubJaxpr(NamedTuple):
    """A jaxpr nested in an equation's params, lined up with the equation's atoms.

    `inputs[i]` is the outer atom bound to `jaxpr.invars[i]` and `outputs[i]` the outer
    variable that `jaxpr.outvars[i]` becomes; None where there is no such atom.
    """

    label: str
    jaxpr: Any
    inputs: list
    outputs: list


def _open_jaxpr(value: Any) -> Any:
    if isinstance(value, jex_core.ClosedJaxpr):
        return value.jaxpr
    return value if isinstance(value, jex_core.Jaxpr) else None


def sub_jaxprs(eqn: Any) -> list[SubJaxpr]:
    """The jaxprs in `eqn.params` (jit, cond branches, while cond/body, scan, ...)."""
    found = []
    for key, value in eqn.params.items():
        many = isinstance(value, tuple | list)
        for i, item in enumerate(value if many else [value]):
            jaxpr = _open_jaxpr(item)
            if jaxpr is not None:
                label = f"{key}[{i}]" if many else key
                found.append(
                    SubJaxpr(
                        label,
                        jaxpr,
                        _inputs(eqn, label, jaxpr),
                        _outputs(eqn, label, jaxpr),
                    )
                )
    return found


def _inputs(eqn: Any, label: str, jaxpr: Any) -> list:
    outer, n = list(eqn.invars), len(jaxpr.invars)
    if eqn.primitive.name == "while":  # invars: cond consts, body consts, carry
        cn, bn = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
        carry = outer[cn + bn :]
        outer = (
            outer[:cn] + carry if label == "cond_jaxpr" else outer[cn : cn + bn] + carry
        )
    if len(outer) >= n:  # trailing atoms: cond's branch index comes first
        return outer[len(outer) - n :]
    return [None] * (n - len(outer)) + outer


def _outputs(eqn: Any, label: str, jaxpr: Any) -> list:
    if label == "cond_jaxpr" or len(jaxpr.outvars) != len(eqn.outvars):
        return [None] * len(jaxpr.outvars)
    return list(eqn.outvars)


def walk(jaxpr: Any, depth: int = 0) -> Iterator[tuple[int, Any]]:
    """Every equation of `jaxpr` and of its nested jaxprs, as (depth, eqn), in order."""
    for eqn in jaxpr.eqns:
        yield depth, eqn
        for sub in sub_jaxprs(eqn):
            yield from walk(sub.jaxpr, depth + 1)


def io_names(jaxpr: Any) -> tuple[Any, Any]:
    """(argument names, result paths) JAX recorded while tracing; None where it did not."""
    info = getattr(jaxpr, "debug_info", None)
    return getattr(info, "arg_names", None), getattr(info, "result_paths", None)


def unwrap_jit(closed_jaxpr: Any) -> Any:
    """A jitted f traces to one `jit` eqn around its body: that body (with f's names)."""
    jaxpr = closed_jaxpr.jaxpr
    if len(jaxpr.eqns) != 1 or jaxpr.eqns[0].primitive.name not in ("jit", "pjit"):
        return closed_jaxpr
    eqn = jaxpr.eqns[0]
    inner = eqn.params["jaxpr"]
    if list(eqn.invars) != list(jaxpr.invars) or list(eqn.outvars) != list(
        jaxpr.outvars
    ):
        return closed_jaxpr
    if not hasattr(inner, "replace") or jaxpr.debug_info is None:
        return inner
    return inner.replace(jaxpr=inner.jaxpr.replace(debug_info=jaxpr.debug_info))


def count_eqns(jaxpr: Any) -> int:
    """Equations in `jaxpr` and, recursively, in all its nested jaxprs."""
    return sum(1 for _ in walk(jaxpr))


def primitive_counts(jaxpr: Any) -> collections.Counter:
    """How often each primitive occurs, nested jaxprs included."""
    return collections.Counter(eqn.primitive.name for _, eqn in walk(jaxpr))


# Params that are plumbing rather than meaning, hidden from pictures.
_PLUMBING = frozenset(
    "in_shardings out_shardings in_layouts out_layouts donated_invars ctx_mesh keep_unused "  # noqa: SIM905
    "inline compiler_options_kvs jvp_jaxpr_fun jvp_jaxpr_thunk fwd_jaxpr_thunk fwd bwd "
    "num_consts symbolic_zeros out_sharding sharding accuracy precision weak_type "
    "body_nconsts cond_nconsts mesh check_vma newly_manual_axes manual_axes "
    "differentiated prevent_cse policy out_trees unroll linear num_carry "
    "preferred_element_type algorithm transpose_algorithm name".split()
)


def important_params(eqn: Any, width: int = 28) -> list[str]:
    """The params worth reading on a picture, as short `key=value` strings."""
    shown = []
    for key, value in eqn.params.items():
        if key in _PLUMBING or value is None or value is False or callable(value):
            continue
        if any(
            _open_jaxpr(v) is not None
            for v in (value if isinstance(value, tuple) else [value])
        ):
            continue
        text = (
            _dot_dims(value) if key == "dimension_numbers" else f"{key}={_short(value)}"
        )
        shown.append(text if len(text) <= width else text[: width - 1] + "…")
    return shown


def _short(value: Any) -> str:
    if isinstance(value, np.dtype) or (
        isinstance(value, type) and hasattr(value, "dtype")
    ):
        return dtype_str(value)
    if isinstance(value, tuple | list):
        inner = ",".join(_short(v) for v in value)
        return inner if len(value) == 1 else f"({inner})"
    if isinstance(value, np.integer | np.floating):
        return f"{value.item():.4g}"
    return str(value).replace(" ", "")


def _dot_dims(value: Any) -> str:
    """dot_general's ((lhs, rhs) contracting, (lhs, rhs) batch) dims, as a reader says them."""
    try:
        (lc, rc), (lb, rb) = value
    except (TypeError, ValueError):
        return f"dimension_numbers={_short(value)}"
    text = f"contract {_short(tuple(lc))}·{_short(tuple(rc))}"
    return text + (f" batch {_short(tuple(lb))}·{_short(tuple(rb))}" if len(lb) else "")


def is_dropvar(var: Any) -> bool:
    """Whether an eqn output is `_`, a value nothing reads."""
    return isinstance(var, jex_core.DropVar)


def scan_counts(eqn: Any) -> tuple[int, int]:
    """(constants, carried values) among a `scan` equation's inputs, in that order.

    JAX up to 0.11 says so in the `num_consts`/`num_carry` params; newer releases in
    `ft_in`, the inputs' flat tree of (consts, carry, xs) groups.
    """
    params = eqn.params
    if "num_carry" in params:
        return int(params.get("num_consts", 0)), int(params["num_carry"])
    groups = params["ft_in"].unpack()  # (consts, carry, xs)
    return len(groups[0]), len(groups[1])
