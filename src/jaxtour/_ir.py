"""The one module that knows how JAX's IRs are laid out: jaxprs, StableHLO and compiled HLO.

Everything else in jaxtour reads programs through these functions, so a JAX release that
changes a jaxpr parameter or the text XLA prints breaks here, and `tests/test_ir.py`
says how. Public JAX APIs only: `jax.jit(f).trace/lower/compile`, `jax.extend.core`,
`jax.extend.source_info_util`, and the text that `as_text()` prints.
"""

from __future__ import annotations

import collections
import linecache
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.extend import core as jex_core

# --- getting IR: checked arguments, the user's own errors kept ---------------------------


def check_callable(f: Any, who: str) -> None:
    """Raise a TypeError naming `f` unless it can be traced like `jax.make_jaxpr`'s argument."""
    if not callable(f):
        raise TypeError(
            f"{who} needs a function to trace, as jax.make_jaxpr does; got {describe(f)}. "
            f"Pass the function itself, then call the result with example arguments: "
            f"{who}(loss)(params, batch)."
        )


def describe(value: Any, width: int = 40) -> str:
    """`value` as a short repr plus its type, for error messages."""
    text = repr(value)
    text = text if len(text) <= width else text[: width - 3] + "..."
    return f"{text} ({type(value).__name__})"


def function_name(f: Any) -> str:
    """The name a title should use for `f` (functools.partial and jitted functions too)."""
    for candidate in (f, getattr(f, "func", None), getattr(f, "__wrapped__", None)):
        name = getattr(candidate, "__name__", None)
        if name:
            return name
    return type(f).__name__


def _traceable(leaf: Any) -> bool:
    if isinstance(leaf, jax.Array | np.ndarray | np.generic | bool | int | float | complex):
        return True
    return hasattr(leaf, "shape") and hasattr(leaf, "dtype")  # jax.ShapeDtypeStruct too


def check_args(args: tuple, kwargs: dict, static_argnums: tuple[int, ...], who: str) -> None:
    """Raise a TypeError naming the first argument leaf that JAX cannot trace."""
    dynamic = {f"args[{i}]": a for i, a in enumerate(args) if i not in static_argnums}
    dynamic |= {f"kwargs[{k!r}]": v for k, v in kwargs.items()}
    for where, value in dynamic.items():
        leaves, _ = jax.tree_util.tree_flatten_with_path(value)
        for path, leaf in leaves:
            if not _traceable(leaf):
                name = where + jax.tree_util.keystr(path)
                raise TypeError(
                    f"{who} cannot trace {name}: it is {describe(leaf)}, and JAX traces only "
                    "arrays and numbers (or lists, tuples and dicts of them). Pass an array, "
                    "or name its position in static_argnums= so it is treated as a constant."
                )


def trace(f: Any, args: tuple, kwargs: dict, *, who: str,
          static_argnums: tuple[int, ...] = ()) -> jax.stages.Traced:
    """`jax.jit(f).trace(*args, **kwargs)` with checked inputs.

    An exception raised by `f` itself propagates unchanged, with a note saying which
    jaxtour call traced it and with what argument shapes.
    """
    check_callable(f, who)
    check_args(args, kwargs, static_argnums, who)
    try:
        return jax.jit(f, static_argnums=static_argnums).trace(*args, **kwargs)
    except Exception as err:
        shapes = ", ".join(_arg_summary(a) for a in args)
        err.add_note(f"(raised while {who} traced {function_name(f)}({shapes}))")
        raise


def _arg_summary(arg: Any) -> str:
    leaves = jax.tree.leaves(arg)
    if len(leaves) == 1 and hasattr(leaves[0], "shape"):
        return type_str(jax.typeof(leaves[0])) if hasattr(jax, "typeof") else str(leaves[0].shape)
    return f"<{len(leaves)} arrays>" if leaves else type(arg).__name__


# --- jaxprs ---------------------------------------------------------------------------------


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
    """The jaxprs in `eqn.params` (jit, cond branches, while cond/body, scan, custom_jvp, ...)."""
    found = []
    for key, value in eqn.params.items():
        many = isinstance(value, tuple | list)
        for i, item in enumerate(value if many else [value]):
            jaxpr = _open_jaxpr(item)
            if jaxpr is not None:
                label = f"{key}[{i}]" if many else key
                found.append(SubJaxpr(label, jaxpr, _inputs(eqn, label, jaxpr),
                                      _outputs(eqn, label, jaxpr)))
    return found


def _inputs(eqn: Any, label: str, jaxpr: Any) -> list:
    outer, n = list(eqn.invars), len(jaxpr.invars)
    if eqn.primitive.name == "while":  # invars: cond consts, body consts, carry
        cn, bn = eqn.params["cond_nconsts"], eqn.params["body_nconsts"]
        carry = outer[cn + bn:]
        outer = outer[:cn] + carry if label == "cond_jaxpr" else outer[cn:cn + bn] + carry
    if len(outer) >= n:  # trailing atoms: cond's branch index comes first
        return outer[len(outer) - n:]
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
    if list(eqn.invars) != list(jaxpr.invars) or list(eqn.outvars) != list(jaxpr.outvars):
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
        if any(_open_jaxpr(v) is not None for v in (value if isinstance(value, tuple)
                                                    else [value])):
            continue
        text = _dot_dims(value) if key == "dimension_numbers" else f"{key}={_short(value)}"
        shown.append(text if len(text) <= width else text[: width - 1] + "…")
    return shown


def _short(value: Any) -> str:
    if isinstance(value, np.dtype) or (isinstance(value, type) and hasattr(value, "dtype")):
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


# --- HLO text: StableHLO (what JAX hands XLA) and compiled HLO (what XLA made of it) -------


@dataclass
class Called:
    """A computation an op runs: a fusion's fused ops, a while body, a cond branch, a callee.

    `args[i]` is the outer value bound to the computation's i-th parameter.
    """

    role: str
    computation: str
    args: list[str]


@dataclass
class HloOp:
    """One op of StableHLO or compiled HLO, dialect prefix dropped (`add`, `fusion`)."""

    name: str
    opcode: str
    type: str
    operands: list[str]
    results: list[str]
    called: list[Called] = field(default_factory=list)
    op_name: str = ""  # the metadata JAX attached: "jit(step)/jvp()/dot_general"
    source: SourceLine | None = None
    fusion_kind: str = ""  # kLoop, kInput, kOutput, kCustom
    target: str = ""  # custom-call target
    index: int | None = None  # which element a get-tuple-element takes

    @property
    def kind(self) -> str:
        """The opcode, and for a custom call its target: `custom-call:__cublas$gemm`."""
        return f"{self.opcode}:{self.target}" if self.target and "custom" in self.opcode \
            else self.opcode

    @property
    def primitive(self) -> str:
        """The jaxpr primitive this op came from, read from its metadata ("" if none)."""
        first = self.op_name.split(";")[0]
        last = first.rsplit("/", 1)[-1]
        # "jvp(jit(log_softmax))" names a transformation scope, not a primitive
        return last if "/" in first and re.fullmatch(r"[a-z_][a-z0-9_]*", last) else ""


@dataclass
class HloComputation:
    """A function, region or fused computation: named parameters, ops, returned values."""

    name: str
    params: list[str] = field(default_factory=list)
    ops: list[HloOp] = field(default_factory=list)
    returns: list[str] = field(default_factory=list)
    param_types: list[str] = field(default_factory=list)


# Ops that are bookkeeping, not computation: left out of op counts.
BOOKKEEPING = frozenset({"parameter", "tuple", "get-tuple-element", "return"})


@dataclass
class HloModule:
    """A parsed module: its computations by name and which one is the entry."""

    name: str
    dialect: str  # "stablehlo" or "hlo"
    entry: str
    computations: dict[str, HloComputation] = field(default_factory=dict)

    def walk(self, name: str | None = None, depth: int = 0
             ) -> Iterator[tuple[int, HloOp]]:
        """Every op reachable from `name` (the entry), called computations expanded."""
        for op in self.computations[name or self.entry].ops:
            yield depth, op
            for called in op.called:
                if called.computation in self.computations:
                    yield from self.walk(called.computation, depth + 1)

    def op_counts(self, *, fused: bool = True) -> collections.Counter:
        """Ops by opcode; with `fused=False` a fusion counts once and its insides not."""
        counts: collections.Counter = collections.Counter()
        self._count(self.entry, counts, fused)
        return counts

    def _count(self, name: str, counts: collections.Counter, fused: bool) -> None:
        for op in self.computations[name].ops:
            if op.opcode not in BOOKKEEPING:
                counts[op.kind] += 1
            for called in op.called:
                if (fused or op.opcode != "fusion") and called.computation in self.computations:
                    self._count(called.computation, counts, fused)

    def fusions(self) -> list[HloOp]:
        """The fusion ops reachable from the entry, in program order."""
        return [op for _, op in self.walk() if op.opcode == "fusion"]


def _balanced(text: str, start: int) -> int:
    """Index just past the bracket closing the one at `text[start]`."""
    pairs, depth = {"(": ")", "[": "]", "{": "}"}, 0
    opener = text[start]
    for i in range(start, len(text)):
        if text[i] == opener:
            depth += 1
        elif text[i] == pairs[opener]:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _split_top(text: str) -> list[str]:
    """Split at commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char in "([{<"
        depth -= char in ")]}>"
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return [*parts, text[start:]]


# Compiled HLO: `%name = f32[8]{0} opcode(%a, %b), attr=..., metadata={op_name="..." ...}`
_HLO_COMPUTATION = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{$")
_HLO_OP = re.compile(r"^(ROOT\s+)?%?([\w.\-]+)\s*=\s*")
_HLO_NAME = re.compile(r"^%?([A-Za-z_][\w.\-]*)$")
_TABLE_ROW = re.compile(r'^(\d+)\s+(?:"(.*)"|\{(.*)\})$')
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def parse_hlo(text: str) -> HloModule:
    """Parse compiled HLO text, as `jax.jit(f).lower(...).compile().as_text()` prints it."""
    module = HloModule(name="", dialect="hlo", entry="")
    tables: dict[str, dict] = {name: {} for name in _TABLES}
    section, current, frames = None, None, {}
    for line in (raw.strip() for raw in text.splitlines()):
        if line.startswith("HloModule"):
            module.name = line.split()[1].rstrip(",")
        elif line in _TABLES:
            section = line
        elif section and (row := _TABLE_ROW.match(line)):
            tables[section][int(row[1])] = row[2] if row[2] is not None else _ints(row[3])
        elif head := _HLO_COMPUTATION.match(line):
            section, current = None, HloComputation(head[2])
            module.computations[current.name] = current
            module.entry = current.name if head[1] else module.entry
        elif line == "}":
            current = None
        elif current is not None and (match := _HLO_OP.match(line)):
            op, frame = _hlo_op(line, match, current)
            current.ops.append(op)
            frames[id(op)] = frame
            current.returns = [op.name] if match[1] else current.returns
    for computation in module.computations.values():
        for op in computation.ops:
            op.source = op.source or _frame_source(tables, frames.get(id(op)))
    return module


def _ints(text: str) -> dict[str, int]:
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", text)}


def _hlo_op(line: str, match: re.Match, computation: HloComputation) -> tuple[HloOp, int | None]:
    start = match.end()
    end = _balanced(line, start) if line[start] == "(" else line.index(" ", start)
    paren = line.index("(", end)
    close = _balanced(line, paren)
    raw, rest = re.sub(r"/\*.*?\*/", "", line[paren + 1:close - 1]), line[close:]
    opcode = line[end:paren].strip()
    operands = [m[1] for part in _split_top(raw)
                if (m := _HLO_NAME.match(part.split()[-1] if part.split() else ""))]
    op = HloOp(match[2], opcode, _hlo_type(line[start:end]), operands, [match[2]])
    op.called = _hlo_called(opcode, rest, operands)
    meta = rest[rest.find("metadata={"):] if "metadata={" in rest else ""
    op.op_name = _unescape(_attr(meta, r'op_name="((?:[^"\\]|\\.)*)"'))
    if file := _attr(meta, r'source_file="((?:[^"\\]|\\.)*)"'):
        op.source = SourceLine(file, int(_attr(meta, r"source_line=(\d+)") or 0))
    op.fusion_kind = _attr(rest, r"\bkind=(k\w+)")
    op.target = _attr(rest, r'custom_call_target="([^"]*)"')
    if opcode == "get-tuple-element":
        op.index = int(_attr(rest, r"\bindex=(\d+)") or 0)
    if opcode == "parameter":
        _set_param(computation, int(raw), op)
    frame = _attr(meta, r"stack_frame_id=(\d+)")
    return op, int(frame) if frame else None


def _set_param(computation: HloComputation, index: int, op: HloOp) -> None:
    for names in (computation.params, computation.param_types):
        names += [""] * (index + 1 - len(names))
    computation.params[index] = op.name
    computation.param_types[index] = op.type


def _attr(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found[1] if found else ""


def _unescape(text: str) -> str:
    return text.replace("\\'", "'").replace('\\"', '"')


def _hlo_type(text: str) -> str:
    return re.sub(r"\{[^{}]*\}|/\*.*?\*/", "", text).replace(" ,", ",").strip()


def _hlo_called(opcode: str, rest: str, operands: list[str]) -> list[Called]:
    def target(key: str) -> str:
        return _attr(rest, rf"\b{key}=%?([\w.\-]+)")

    if opcode == "fusion" or (opcode.endswith("-start") and target("calls")):
        return [Called("fused" if opcode == "fusion" else "async", target("calls"), operands)]
    if opcode == "call":
        return [Called("callee", target("to_apply"), operands)]
    if opcode == "while":
        return [Called("condition", target("condition"), operands),
                Called("body", target("body"), operands)]
    if opcode == "conditional":
        listed = _attr(rest, r"branch_computations=\{([^}]*)\}")
        names = (re.findall(r"%?([\w.\-]+)", listed) if listed
                 else [target("true_computation"), target("false_computation")])
        return [Called(f"branch {i}", name, operands[i + 1:i + 2])
                for i, name in enumerate(names) if name]
    return []


def _frame_source(tables: dict[str, dict], frame_id: int | None) -> SourceLine | None:
    frame = tables["StackFrames"].get(frame_id)
    location = frame and tables["FileLocations"].get(frame.get("file_location_id"))
    if not location or location.get("file_name_id") not in tables["FileNames"]:
        return None
    function = tables["FunctionNames"].get(location.get("function_name_id"), "")
    return SourceLine(tables["FileNames"][location["file_name_id"]], location["line"], function)


# StableHLO (MLIR): `%3 = stablehlo.add %0, %2 : tensor<128x512xf32> loc(#loc83)`
_MLIR_FUNC = re.compile(r"^func\.func\s+(?:public\s+|private\s+)?@([\w.$\-]+)\((.*)$")
_MLIR_RESULT = re.compile(r"^(%[\w.$\-]+)(?::(\d+))?\s*=\s*")
_MLIR_VALUE = re.compile(r"%[\w.$\-]+(?:#\d+)?")
_MLIR_DEF = re.compile(r"(%[\w.$\-]+)(?=:\s|\s=\s)")
_MLIR_TENSOR = re.compile(r"tensor<([^<>]*)>|!stablehlo\.token")
_LOC_DEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)$")
_TRAILING_LOC = re.compile(r"(?:^|\s)loc\((.*)\)$")
# Regions these ops run as control flow; other regions (reduce, sort, ...) are applied
# per element and stay inside their op.
_REGION_ROLES = {"while": ("cond", "body"), "if": ("true", "false"),
                 "sdy.manual_computation": ("body",)}


@dataclass
class _Scope:
    computation: HloComputation | None  # None: a region applied per element, not drawn
    owner: HloOp | None = None


def parse_stablehlo(text: str) -> HloModule:
    """Parse StableHLO text, as `jax.jit(f).lower(...).as_text(debug_info=True)` prints it."""
    return _MlirParser().parse(text)


class _MlirParser:
    """Line by line, with a stack of the function and regions being read."""

    def __init__(self) -> None:
        self.module = HloModule(name="", dialect="stablehlo", entry="main")
        self.locs: dict[str, str] = {}
        self.op_locs: dict[int, str] = {}
        self.region_params: dict[int, list[str]] = {}
        self.opened: collections.Counter = collections.Counter()
        self.scopes: list[_Scope] = []

    def parse(self, text: str) -> HloModule:
        for line in (raw.strip() for raw in text.splitlines()):
            if loc_def := _LOC_DEF.match(line):
                self.locs[loc_def[1]] = loc_def[2]
            elif line.startswith("module"):
                self.module.name = _attr(line, r"^module\s+@([\w.$\-]+)")
                self.scopes.append(_Scope(None))
            elif func := _MLIR_FUNC.match(line):
                self._function(func)
            elif line.startswith("}"):
                self._close(line)
            elif self.scopes:
                self._line(line)
        for computation in self.module.computations.values():
            for op in computation.ops:
                op.op_name, op.source = _resolve_loc(self.op_locs.get(id(op), ""), self.locs)
        return self.module

    def _function(self, func: re.Match) -> None:
        computation = HloComputation(func[1])
        header = func[2].split(") ->")[0]
        computation.params = _MLIR_DEF.findall(header)
        computation.param_types = [_mlir_type(f": {t}") for t in re.findall(
            r"%[\w.$\-]+:\s*(tensor<[^<>]*>|!stablehlo\.token)", header)]
        self.module.computations[computation.name] = computation
        self.scopes.append(_Scope(computation))

    def _line(self, line: str) -> None:
        scope = self.scopes[-1]
        if line.startswith("^bb"):  # block arguments of a region
            if scope.computation is not None:
                scope.computation.params += _MLIR_DEF.findall(line)
        elif line.endswith("{") and not _MLIR_RESULT.match(line) and " = " not in line:
            ops = scope.computation.ops if scope.computation else []
            self._open(ops[-1] if ops else None)  # `cond {`, `reducer(...) {`
        elif scope.computation is not None:
            self._op(line, scope.computation)

    def _op(self, line: str, computation: HloComputation) -> None:
        loc = _TRAILING_LOC.search(line)
        body = line[: loc.start()] if loc else line
        opname = re.split(r"[\s(]", _MLIR_RESULT.sub("", body, count=1), maxsplit=1)[0]
        opname = opname.strip('"')
        if opname in ("return", "func.return", "stablehlo.return", "sdy.return"):
            computation.returns = _MLIR_VALUE.findall(body)
            return
        op, defs = _mlir_op(body, opname, len(computation.ops))
        computation.ops.append(op)
        self.op_locs[id(op)] = loc[1] if loc else ""
        self.region_params[id(op)] = defs
        if body.endswith("{"):
            self._open(op)

    def _open(self, owner: HloOp | None) -> None:
        parent = self.scopes[-1].computation
        index = self.opened[id(owner)]
        self.opened[id(owner)] += 1
        roles = _REGION_ROLES.get(owner.opcode, ()) if owner else ()
        role = f"branch {index}" if owner and owner.opcode == "case" else (
            roles[index] if index < len(roles) else None)
        if parent is None or role is None:
            self.scopes.append(_Scope(None, owner))
            return
        region = HloComputation(f"{parent.name}/{owner.name}/{role}")
        if owner.opcode != "case":
            region.params = list(self.region_params.get(id(owner), []))
        self.module.computations[region.name] = region
        args = [] if owner.opcode == "case" else owner.operands
        owner.called.append(Called(role, region.name, args))
        self.scopes.append(_Scope(region, owner))

    def _close(self, line: str) -> None:
        scope = self.scopes.pop() if self.scopes else _Scope(None)
        rest = line.lstrip("}), ").strip()
        if scope.owner is None:
            return
        if rest.endswith("{"):  # `} do {`, `}, {`: the same op's next region
            self._open(scope.owner)
            return
        loc = _TRAILING_LOC.search(rest)
        body = rest[: loc.start()] if loc else rest
        if body and not scope.owner.type:
            scope.owner.type = _mlir_type(body)
        if loc:
            self.op_locs[id(scope.owner)] = loc[1]


def _mlir_op(body: str, opname: str, index: int) -> tuple[HloOp, list[str]]:
    result = _MLIR_RESULT.match(body)
    rest = body[result.end():] if result else body
    if result is None:
        results, name = [], f"%{opname}.{index}"
    elif result[2] is None:
        results, name = [result[1]], result[1]
    else:
        results, name = [f"{result[1]}#{i}" for i in range(int(result[2]))], result[1]
    defs = _MLIR_DEF.findall(rest)
    operands = [v for v in _MLIR_VALUE.findall(rest) if v not in defs]
    opcode = re.sub(r"^(stablehlo|func)\.", "", opname)
    op = HloOp(name, opcode, _mlir_type(rest), operands, results)
    if opcode == "call":
        op.called = [Called("callee", _attr(rest, r"@([\w.$\-]+)"), operands)]
    op.target = _attr(rest, r'call_target_name\s*=\s*"([^"]*)"')
    return op, defs


def _mlir_type(text: str) -> str:
    if text.rstrip().endswith("{"):
        return ""
    tail = text.rsplit(" -> ", 1)[-1] if " -> " in text else text.rsplit(" : ", 1)[-1]
    types = []
    for match in _MLIR_TENSOR.finditer(tail):
        if match[1] is None:
            types.append("token")
            continue
        *dims, element = match[1].split("x")
        element = {"i1": "pred"}.get(element, element.replace("ui", "u"))
        types.append(f"{element}[{','.join(dims)}]")
    return types[0] if len(types) == 1 else f"({', '.join(types)})"


_LOC_FILE = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+)')
_LOC_NAME = re.compile(r'^"((?:[^"\\]|\\.)*)"\((.*)\)$')
_LOC_CALLSITE = re.compile(r"^callsite\((.*?) at (.*)\)$")


def _resolve_loc(text: str, locs: dict[str, str], depth: int = 0
                 ) -> tuple[str, SourceLine | None]:
    """(op name, innermost user source line) from an MLIR location and its aliases."""
    text = text.strip()
    if depth > 50 or not text or text == "unknown":
        return "", None
    if text.startswith("#loc"):
        return _resolve_loc(locs.get(text, ""), locs, depth + 1)
    if found := _LOC_FILE.match(text):
        return "", SourceLine(found[1], int(found[2]))
    if found := _LOC_CALLSITE.match(text):  # callsite(callee at caller): the callee is inner
        return _resolve_loc(found[1], locs, depth + 1)
    if found := _LOC_NAME.match(text):
        inner_name, source = _resolve_loc(found[2], locs, depth + 1)
        if source is not None and not source.function:
            return inner_name, source._replace(function=found[1])
        return found[1] if "/" in found[1] or not inner_name else inner_name, source
    if found := re.match(r'^"((?:[^"\\]|\\.)*)"$', text):
        return found[1], None
    if text.startswith("fused["):
        return _resolve_loc(_split_top(text[6:-1])[0], locs, depth + 1)
    return "", None


# --- compiled artefacts: the texts and XLA's own figures ------------------------------------


def stablehlo_text(lowered: jax.stages.Lowered) -> str:
    """StableHLO with locations (source lines, op names) when this JAX can print them."""
    try:
        return lowered.as_text(debug_info=True)
    except TypeError:  # a JAX without the debug_info keyword
        return lowered.as_text()


def cost_summary(compiled: jax.stages.Compiled) -> dict[str, float]:
    """XLA's own figures: flops, transcendentals, bytes_accessed, temp/argument/output bytes.

    Keys a backend does not report are left out (some report no cost analysis at all).
    """
    figures: dict[str, float] = {}
    try:
        cost = compiled.cost_analysis()
    except Exception:  # backends may not implement it
        cost = None
    cost = cost[0] if isinstance(cost, list | tuple) and cost else cost
    for key in ("flops", "transcendentals", "bytes accessed"):
        if isinstance(cost, dict) and key in cost:
            figures[key.replace(" ", "_")] = float(cost[key])
    try:
        memory = compiled.memory_analysis()
    except Exception:  # backends may not implement it
        memory = None
    for kind in ("temp", "argument", "output"):
        value = getattr(memory, f"{kind}_size_in_bytes", None)
        if value is not None:
            figures[f"{kind}_bytes"] = float(value)
    return figures


# --- autodiff ---------------------------------------------------------------------------------
# For jaxtour.autodiff: a jaxpr with its `jit` calls inlined, and the value of every var.


@dataclass
class FlatEqn:
    """One eqn of a jaxpr whose `jit` calls are inlined.

    `invars` are canonical atoms: a literal, or the var that computes the value in the
    flattened program (a sub-jaxpr's invar is replaced by its caller's atom). `scope`
    names the `jit` calls the eqn sits in, e.g. ``("log_softmax",)``.
    """

    primitive: str
    params: dict
    invars: list
    outvars: list
    scope: tuple[str, ...] = ()


@dataclass
class FlatJaxpr:
    """A jaxpr with its `jit` calls inlined and, when evaluated, every var's value."""

    invars: list
    constvars: list
    eqns: list[FlatEqn]
    outvars: list
    env: dict = field(default_factory=dict)

    def value(self, atom: Any) -> Any:
        """The value of a var or literal (None when not evaluated)."""
        return atom.val if is_literal(atom) else self.env.get(atom)


_CALLS = ("jit", "pjit")  # `jit` since JAX 0.7, `pjit` before


def is_dropvar(var: Any) -> bool:
    """Whether an eqn output is `_`, a value nothing reads."""
    return isinstance(var, jex_core.DropVar)


def flatten_jaxpr(closed: Any, args: list | None = None) -> FlatJaxpr:
    """Inline the `jit` eqns of a ClosedJaxpr; with `args` (flat inputs), evaluate every var.

    `cond`, `scan`, `while` and custom-derivative calls stay single eqns.
    """
    jaxpr = closed.jaxpr
    flat = FlatJaxpr(list(jaxpr.invars), list(jaxpr.constvars), [], [])
    flat.env.update(zip(jaxpr.constvars, closed.consts, strict=True))
    if args is not None:
        flat.env.update(evaluate_jaxpr(closed, args))
    alias: dict = {}
    _inline(jaxpr, alias, flat, args is not None, ())
    flat.outvars = [_canon(alias, v) for v in jaxpr.outvars]
    return flat


def _canon(alias: dict, atom: Any) -> Any:
    return atom if is_literal(atom) else alias.get(atom, atom)


def _inline(jaxpr: Any, alias: dict, flat: FlatJaxpr, values: bool, scope: tuple) -> None:
    for eqn in jaxpr.eqns:
        invars = [_canon(alias, a) for a in eqn.invars]
        if eqn.primitive.name not in _CALLS:
            flat.eqns.append(FlatEqn(eqn.primitive.name, dict(eqn.params), invars,
                                     list(eqn.outvars), scope))
            continue
        inner = eqn.params["jaxpr"]
        alias.update(zip(inner.jaxpr.invars, invars, strict=True))
        flat.constvars += inner.jaxpr.constvars
        flat.env.update(zip(inner.jaxpr.constvars, inner.consts, strict=True))
        if values:
            flat.env.update(evaluate_jaxpr(inner, [flat.value(a) for a in invars]))
        _inline(inner.jaxpr, alias, flat, values, (*scope, eqn.params.get("name", "jit")))
        for outer, inner_out in zip(eqn.outvars, inner.jaxpr.outvars, strict=True):
            alias[outer] = _canon(alias, inner_out)


def evaluate_jaxpr(closed: Any, args: list) -> dict:
    """Every var of a ClosedJaxpr (its inputs and each eqn's outputs) mapped to its value.

    Runs the jaxpr once with all its vars as outputs, through the public
    `jax.extend.core.jaxpr_as_fun`, so the numbers are JAX's own.
    """
    jaxpr = closed.jaxpr
    every = list(dict.fromkeys(
        v for v in [*jaxpr.invars, *(v for e in jaxpr.eqns for v in e.outvars)]
        if not is_dropvar(v)))
    probe = jex_core.ClosedJaxpr(jaxpr.replace(outvars=every), closed.consts)
    return dict(zip(every, jex_core.jaxpr_as_fun(probe)(*args), strict=True))


def depends_on(flat: FlatJaxpr, seeds: Any) -> list[bool]:
    """For each eqn of `flat`, whether it reads (transitively) any var in `seeds`.

    Seeded with the tangent inputs of a `jax.jvp` jaxpr, this splits the tangent
    lane (True) from the primal lane (False).
    """
    reached, marks = set(seeds), []
    for eqn in flat.eqns:
        hit = any(not is_literal(a) and a in reached for a in eqn.invars)
        reached.update(v for v in eqn.outvars if hit and not is_dropvar(v))
        marks.append(hit)
    return marks
