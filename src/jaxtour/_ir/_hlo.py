"""HLO text as XLA prints it, before (StableHLO, see `_stablehlo`) and after optimisation.

`parse_hlo` reads the compiled HLO module: computations, ops, fusions, called
computations and the stack-frame tables newer XLA prints instead of inline source lines.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from jaxtour._ir._frames import Frame
from jaxtour._ir._jaxpr import SourceLine, user_line


@dataclass
class Called:
    """A computation an op runs: a fusion's fused ops, a while body, a cond branch, a callee.

    `args[i]` is the outer value bound to the computation's i-th parameter.
    """

    role: str
    computation: str
    args: list[str]


# XLA's fusion kinds in the words a picture uses: kInput fusions end in a reduction.
FUSION_KINDS = {
    "kLoop": "loop",
    "kInput": "input (reduction)",
    "kOutput": "output",
    "kCustom": "custom",
}


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
    attrs: str = ""  # the text after the operands (dims, window), metadata dropped
    config: str = ""  # a custom call's backend_config (a cuBLAS GEMM's dimensions)
    literal: str = ""  # a constant's value as written: `2`, `{1, 2}`, `dense<2.0>`
    trip_count: int | None = None  # a while's, when XLA annotates known_trip_count
    frames: tuple = ()  # the call stack its location holds: `Frame`s, outermost first

    @property
    def fusion(self) -> str:
        """What a picture calls this fusion's kind: "loop", "input (reduction)", ..."""
        return FUSION_KINDS.get(self.fusion_kind, self.fusion_kind)

    @property
    def kind(self) -> str:
        """The opcode, and for a custom call its target: `custom-call:__cublas$gemm`."""
        return (
            f"{self.opcode}:{self.target}"
            if self.target and "custom" in self.opcode
            else self.opcode
        )

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
    # a parameter's name in the user's code, where the text gives one (StableHLO's loc)
    param_names: dict[str, str] = field(default_factory=dict)


# Ops that are bookkeeping, not computation: left out of op counts.
BOOKKEEPING = frozenset({"parameter", "tuple", "get-tuple-element", "return"})


@dataclass
class HloModule:
    """A parsed module: its computations by name and which one is the entry."""

    name: str
    dialect: str  # "stablehlo" or "hlo"
    entry: str
    computations: dict[str, HloComputation] = field(default_factory=dict)

    def walk(
        self, name: str | None = None, depth: int = 0
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
                if (
                    fused or op.opcode != "fusion"
                ) and called.computation in self.computations:
                    self._count(called.computation, counts, fused)

    def fusions(self, name: str | None = None) -> list[HloOp]:
        """The fusions the program runs, in program order: those reachable from the
        entry (through loops, branches and calls) that no other fusion holds. A GPU's
        fusion can nest others (a Triton GEMM's operands); they are part of it."""
        found = []
        for op in self.computations[name or self.entry].ops:
            if op.opcode == "fusion":
                found.append(op)
                continue
            for called in op.called:
                if called.computation in self.computations:
                    found += self.fusions(called.computation)
        return found


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


def split_top(text: str) -> list[str]:
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
            tables[section][int(row[1])] = (
                row[2] if row[2] is not None else _ints(row[3])
            )
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
            op.source = user_line(
                op.source or _frame_source(tables, frames.get(id(op)))
            )
            op.frames = _frames_of(tables, frames.get(id(op)))
    return module


def _ints(text: str) -> dict[str, int]:
    return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", text)}


def _hlo_op(
    line: str, match: re.Match, computation: HloComputation
) -> tuple[HloOp, int | None]:
    start = match.end()
    end = _balanced(line, start) if line[start] == "(" else line.index(" ", start)
    paren = line.index("(", end)
    close = _balanced(line, paren)
    raw, rest = re.sub(r"/\*.*?\*/", "", line[paren + 1 : close - 1]), line[close:]
    opcode = line[end:paren].strip()
    operands = [
        m[1]
        for part in split_top(raw)
        if (m := _HLO_NAME.match(part.split()[-1] if part.split() else ""))
    ]
    op = HloOp(match[2], opcode, _hlo_type(line[start:end]), operands, [match[2]])
    op.called = _hlo_called(opcode, rest, operands)
    meta = rest[rest.find("metadata={") :] if "metadata={" in rest else ""
    op.op_name = _unescape(attr(meta, r'op_name="((?:[^"\\]|\\.)*)"'))
    if file := attr(meta, r'source_file="((?:[^"\\]|\\.)*)"'):
        op.source = SourceLine(file, int(attr(meta, r"source_line=(\d+)") or 0))
    op.attrs = rest.split("metadata={")[0]
    op.fusion_kind = attr(rest, r"\bkind=(k\w+)")
    op.target = attr(rest, r'custom_call_target="([^"]*)"')
    if op.target:
        op.config = attr(rest, r"backend_config=(\{.*\})")
    if opcode == "while" and (trips := attr(rest, r'"known_trip_count":\{"n":"(\d+)"')):
        op.trip_count = int(trips)
    if opcode == "get-tuple-element":
        op.index = int(attr(rest, r"\bindex=(\d+)") or 0)
    if opcode == "parameter":
        _set_param(computation, int(raw), op)
    if opcode == "constant":
        op.literal = raw.strip()
    frame = attr(meta, r"stack_frame_id=(\d+)")
    return op, int(frame) if frame else None


def _set_param(computation: HloComputation, index: int, op: HloOp) -> None:
    for names in (computation.params, computation.param_types):
        names += [""] * (index + 1 - len(names))
    computation.params[index] = op.name
    computation.param_types[index] = op.type


def attr(text: str, pattern: str) -> str:
    found = re.search(pattern, text)
    return found[1] if found else ""


def _unescape(text: str) -> str:
    return text.replace("\\'", "'").replace('\\"', '"')


def _hlo_type(text: str) -> str:
    return re.sub(r"\{[^{}]*\}|/\*.*?\*/", "", text).replace(" ,", ",").strip()


def _hlo_called(opcode: str, rest: str, operands: list[str]) -> list[Called]:
    def target(key: str) -> str:
        return attr(rest, rf"\b{key}=%?([\w.\-]+)")

    if opcode == "fusion" or (opcode.endswith("-start") and target("calls")):
        return [
            Called(
                "fused" if opcode == "fusion" else "async", target("calls"), operands
            )
        ]
    if opcode == "call":
        return [Called("callee", target("to_apply"), operands)]
    if opcode == "while":
        return [
            Called("condition", target("condition"), operands),
            Called("body", target("body"), operands),
        ]
    if opcode == "conditional":
        listed = attr(rest, r"branch_computations=\{([^}]*)\}")
        names = (
            re.findall(r"%?([\w.\-]+)", listed)
            if listed
            else [target("true_computation"), target("false_computation")]
        )
        return [
            Called(f"branch {i}", name, operands[i + 1 : i + 2])
            for i, name in enumerate(names)
            if name
        ]
    return []


def _frame_source(tables: dict[str, dict], frame_id: int | None) -> SourceLine | None:
    frame = tables["StackFrames"].get(frame_id)
    location = frame and tables["FileLocations"].get(frame.get("file_location_id"))
    if not location or location.get("file_name_id") not in tables["FileNames"]:
        return None
    function = tables["FunctionNames"].get(location.get("function_name_id"), "")
    return SourceLine(
        tables["FileNames"][location["file_name_id"]], location["line"], function
    )


def _frames_of(tables: dict[str, dict], frame_id: int | None) -> tuple[Frame, ...]:
    """The stack frame `frame_id` and its parents, outermost first (`at`: the column).

    XLA prints a frame's parent one past its number (a root's parent is its own
    number); a table where no frame names itself is read as printed."""
    frames = tables["StackFrames"]
    shift = int(any(f.get("parent_frame_id") == i for i, f in frames.items()))
    out: list[Frame] = []
    while frame_id and frame_id in frames and len(out) < 256:
        location = tables["FileLocations"].get(frames[frame_id].get("file_location_id"))
        if not location:
            break
        out.append(
            Frame(
                tables["FileNames"].get(location.get("file_name_id"), ""),
                location.get("line", 0),
                tables["FunctionNames"].get(location.get("function_name_id"), ""),
                at=location.get("column", 0),
            )
        )
        frame_id = frames[frame_id].get("parent_frame_id", 0) - shift
    return tuple(reversed(out))
