"""StableHLO (MLIR) text as JAX hands it to XLA, read into compiled HLO's `HloModule`."""

from __future__ import annotations

import collections
import dataclasses
import re
from dataclasses import dataclass

from jaxtour._ir._frames import Frame
from jaxtour._ir._hlo import (
    Called,
    HloComputation,
    HloModule,
    HloOp,
    _unescape,
    attr,
    split_top,
)
from jaxtour._ir._jaxpr import SourceLine, user_line

# StableHLO (MLIR): `%3 = stablehlo.add %0, %2 : tensor<128x512xf32> loc(#loc83)`
# A symbol is `@main`, or quoted when it holds other characters: a jitted lambda's
# function is `@"<lambda>"`
_SYMBOL = r'@(?:"((?:[^"\\]|\\.)*)"|([\w.$\-]+))'
_MLIR_FUNC = re.compile(rf"^func\.func\s+(?:public\s+|private\s+)?{_SYMBOL}\((.*)$")
_MLIR_RESULT = re.compile(r"^(%[\w.$\-]+)(?::(\d+))?\s*=\s*")
_MLIR_VALUE = re.compile(r"%[\w.$\-]+(?:#\d+)?")
_MLIR_DEF = re.compile(r"(%[\w.$\-]+)(?=:\s|\s=\s)")
_ARG_LOC = re.compile(r'loc\("((?:[^"\\]|\\.)*)"\)')
_MLIR_TENSOR = re.compile(r"tensor<([^<>]*)>|!stablehlo\.token")
_LOC_DEF = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)$")
_TRAILING_LOC = re.compile(r"(?:^|\s)loc\((.*)\)$")
# Regions these ops run as control flow; other regions (reduce, sort, ...) are applied
# per element and stay inside their op.
_REGION_ROLES = {
    "while": ("cond", "body"),
    "if": ("true", "false"),
    "sdy.manual_computation": ("body",),
}


@dataclass
class _Scope:
    computation: HloComputation | None  # None: a region applied per element, not drawn
    owner: HloOp | None = None


def parse_stablehlo(text: str) -> HloModule:
    """Parse StableHLO text, as `jax.jit(f).lower(...).as_text(debug_info=True)` prints it."""
    return _MlirParser().parse(text)


def unwrap_call(module: HloModule) -> HloModule:
    """A `jax.jit`-wrapped f lowered under another `jax.jit` is `@main` calling f's
    function and returning what it returns: that function as the entry, the module
    `f.lower(...)` prints (`unwrap_jit` for StableHLO)."""
    entry = module.computations[module.entry]
    call = entry.ops[0] if len(entry.ops) == 1 else None
    if call is None or call.opcode != "call" or not call.called:
        return module
    callee = call.called[0].computation
    if (
        callee not in module.computations
        or call.operands != entry.params
        or entry.returns != call.results
    ):
        return module
    return dataclasses.replace(module, entry=callee)


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
                self.module.name = attr(line, r"^module\s+@([\w.$\-]+)")
                self.scopes.append(_Scope(None))
            elif func := _MLIR_FUNC.match(line):
                self._function(func)
            elif line.startswith("}"):
                self._close(line)
            elif self.scopes:
                self._line(line)
        for computation in self.module.computations.values():
            for op in computation.ops:
                loc = self.op_locs.get(id(op), "")
                op.op_name, source = _resolve_loc(loc, self.locs)
                op.source = user_line(source)  # never the kit's own line
                op.frames = tuple(_loc_frames(loc, self.locs))
        return self.module

    def _function(self, func: re.Match) -> None:
        computation = HloComputation(_symbol(func))
        header = func[3].split(") ->")[0]
        computation.params = _MLIR_DEF.findall(header)
        for part in split_top(header):
            name, loc = _MLIR_DEF.search(part), _ARG_LOC.search(part)
            if name and loc:  # `%arg0: tensor<4xf32> loc("y")`: the argument's name
                computation.param_names[name[1]] = _unescape(loc[1])
        computation.param_types = [
            _mlir_type(f": {t}")
            for t in re.findall(
                r"%[\w.$\-]+:\s*(tensor<[^<>]*>|!stablehlo\.token)", header
            )
        ]
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
        role = (
            f"branch {index}"
            if owner and owner.opcode == "case"
            else (roles[index] if index < len(roles) else None)
        )
        if parent is None or owner is None or role is None:
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
    rest = body[result.end() :] if result else body
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
        callee = re.search(_SYMBOL, rest)
        op.called = [Called("callee", _symbol(callee) if callee else "", operands)]
    op.target = attr(rest, r'call_target_name\s*=\s*"([^"]*)"')
    op.attrs = _attrs(rest[len(opname) + 2 if rest.startswith('"') else len(opname) :])
    if opcode == "constant":
        op.literal, op.attrs = op.attrs, ""
    return op, defs


def _symbol(match: re.Match) -> str:
    """The name a `_SYMBOL` match holds, quoted or not."""
    return match[1] if match[1] is not None else match[2]


def _attrs(text: str) -> str:
    """An op's attributes (`dims = [0]`, a constant's `dense<2.0>`), values and type gone."""
    head = text.rsplit(" : ", 1)[0] if " : " in text else text
    return re.sub(r"\s+", " ", _MLIR_VALUE.sub("", head)).strip(" ,{")


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


def _resolve_loc(
    text: str, locs: dict[str, str], depth: int = 0
) -> tuple[str, SourceLine | None]:
    """(op name, innermost user source line) from an MLIR location and its aliases."""
    text = text.strip()
    if depth > 50 or not text or text == "unknown":
        return "", None
    if text.startswith("#loc"):
        return _resolve_loc(locs.get(text, ""), locs, depth + 1)
    if found := _LOC_FILE.match(text):
        return "", SourceLine(found[1], int(found[2]))
    if found := _LOC_CALLSITE.match(
        text
    ):  # callsite(callee at caller): the callee is inner
        return _resolve_loc(found[1], locs, depth + 1)
    if found := _LOC_NAME.match(text):
        inner_name, source = _resolve_loc(found[2], locs, depth + 1)
        if source is not None and not source.function:
            return inner_name, source._replace(function=found[1])
        return found[1] if "/" in found[1] or not inner_name else inner_name, source
    if found := re.match(r'^"((?:[^"\\]|\\.)*)"$', text):
        return found[1], None
    if text.startswith("fused["):
        return _resolve_loc(split_top(text[6:-1])[0], locs, depth + 1)
    return "", None


_LOC_COLUMN = re.compile(r'^"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def _loc_frames(text: str, locs: dict[str, str], depth: int = 0) -> list[Frame]:
    """The call stack an MLIR location holds, outermost first (`at`: the column):
    `callsite(callee at caller)` chains of `"function"("file":line:column)`."""
    text = text.strip()
    if depth > 200 or not text or text == "unknown":
        return []
    if text.startswith("#loc"):
        return _loc_frames(locs.get(text, ""), locs, depth + 1)
    if found := _LOC_COLUMN.match(text):
        return [Frame(found[1], int(found[2]), "", at=int(found[3]))]
    if found := _LOC_CALLSITE.match(text):
        outer = _loc_frames(found[2], locs, depth + 1)
        return outer + _loc_frames(found[1], locs, depth + 1)
    if found := _LOC_NAME.match(text):
        inner = _loc_frames(found[2], locs, depth + 1)
        if len(inner) == 1 and not inner[0].function:
            return [inner[0]._replace(function=found[1])]
        return inner
    if text.startswith("fused["):
        return _loc_frames(split_top(text[6:-1])[0], locs, depth + 1)
    return []
