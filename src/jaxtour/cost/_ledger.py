"""`CostTable`: the ledger of one program, its totals and why the columns differ."""

from __future__ import annotations

from dataclasses import dataclass, field

from jaxtour import _ir
from jaxtour._number_words import NOT_COUNTED, plural, si
from jaxtour._report import Report, Reported, Table
from jaxtour.cost import _notes

OPS_HEAD = ["op", "kind / source", "FLOPs", "transc.", "bytes", "FLOP/B"]


@dataclass
class Row:
    """One line of the ledger: a jaxpr equation (or source line) or a compiled op."""

    name: str
    where: str
    flops: float | None
    transcendentals: float
    bytes: float
    kind: str = ""  # a compiled op's opcode ("custom-call", "fusion"); "" for equations
    # a compiled op the rules cannot count: the ops inside it that make it so
    uncountable: tuple[str, ...] = ()

    @property
    def transcendentals_text(self) -> str:
        """The transcendentals as the table shows them. Where the rules cannot count
        the op (its FLOPs None: a `top_k`, a library call computing square roots),
        those it holds are unknown ("not counted"), or at least what was counted
        inside it ("≥ 1.02 k": a loop whose body holds such an op)."""
        if self.flops is not None:
            return si(self.transcendentals)
        return f"≥ {si(self.transcendentals)}" if self.transcendentals else NOT_COUNTED

    @property
    def intensity(self) -> float | None:
        """FLOPs per byte moved; None when not counted or nothing moves."""
        return (
            self.flops / self.bytes if self.flops is not None and self.bytes else None
        )


def total(rows: list[Row]) -> tuple[float, float, float]:
    """Sums of FLOPs (not-counted rows add 0), transcendentals and bytes, as floats."""
    flops = float(sum(r.flops or 0.0 for r in rows))
    return (
        flops,
        float(sum(r.transcendentals for r in rows)),
        float(sum(r.bytes for r in rows)),
    )


@dataclass
class CostTable(Reported):
    """The ledger of one program: the kit's counts per equation and per op, and XLA's.

    `equations` are the jaxpr's (what you wrote, every equation reading and writing
    memory); `ops` are the compiled program's (after XLA fused them). `xla` holds
    `compiled.cost_analysis()`'s figures when the backend gives them ({} otherwise):
    XLA counts a loop body once, the kit every iteration (`loops`, `compiled_loops`
    say how often each ran; `once` holds the kit's figures counted XLA's way). A cond
    counts its costliest branch, as XLA does (`conds` says how many there are): an
    upper bound of what runs. A complex op counts one FLOP, as XLA counts it
    (`complex_types` names the program's complex types). With `devices` > 1 the
    jaxpr's figures are global, the compiled ones one device's.
    """

    name: str
    backend: str
    equations: list[Row]
    ops: list[Row]
    xla: dict[str, float] = field(default_factory=dict)
    devices: int = 1  # the compiled program is one device's share of this many
    loops: list[_ir.Loop] = field(default_factory=list)  # the jaxpr's
    compiled_loops: list[_ir.Loop] = field(default_factory=list)
    once: dict[str, float] = field(default_factory=dict)  # loops once, as XLA counts
    conds: int = 0  # conds and conditionals: each counts its costliest branch
    opcodes: frozenset[str] = frozenset()  # the compiled program's, fused ones too
    complex_types: tuple[
        str, ...
    ] = ()  # complex64, complex128: one FLOP per complex op

    @property
    def flops(self) -> float:
        """FLOPs of the compiled program, by the kit's rules (not-counted ops add 0)."""
        return total(self.ops)[0]

    @property
    def bytes(self) -> float:
        """Bytes the compiled program moves: each op's operands and results."""
        return total(self.ops)[2]

    @property
    def intensity(self) -> float:
        """FLOPs per byte of the compiled program: where it sits on a roofline."""
        return self.flops / self.bytes if self.bytes else 0.0

    @property
    def not_counted(self) -> list[str]:
        """Primitives and ops the rules do not know, each once."""
        names = [r.name for r in self.equations + self.ops if r.flops is None]
        return list(dict.fromkeys(names))

    @property
    def uncounted(self) -> str:
        """The compiled ops the rules cannot count and what XLA says they cost
        ("" when every op is counted): every total that leaves them out says so."""
        names = [
            n for r in self.ops if r.flops is None for n in r.uncountable or [r.name]
        ]
        library = [r.name for r in self.ops if r.kind == "custom-call"]
        return _notes.uncounted(
            names, self.once.get("flops", self.flops), self.xla.get("flops"), library
        )

    @property
    def per_iteration(self) -> bool:
        """Some loop's trip count is unknown: totals hold one iteration of it."""
        return _notes.per_iteration(self.loops, self.compiled_loops)

    def notes(self) -> list[str]:
        """Why the columns differ, in words."""
        eq, op = total(self.equations), total(self.ops)
        notes = [
            f"Fusion: the jaxpr's equations would move {si(eq[2], 'B')} if each read "
            f"and wrote memory; the compiled program moves {si(op[2], 'B')}."
            if self.devices == 1
            else f"Fusion: the jaxpr's equations would move {si(eq[2], 'B')} in all "
            f"(global shapes) if each read and wrote memory; the compiled program moves "
            f"{si(op[2], 'B')} on each of {self.devices} devices. The two are not "
            "comparable: fusion_traffic sets like against like."
        ]
        notes += _notes.loop_notes(self.loops, self.compiled_loops)
        if self.conds:
            notes.append(_notes.COND)
        if self.complex_types:
            notes.append(_notes.complex_flops(self.complex_types))
        if self.uncounted:
            notes.append(f"Compiled: {self.uncounted}.")
        if self.not_counted:
            notes.append(_notes.not_counted(self.not_counted))
        if not self.xla:
            notes.append(
                f"XLA's cost_analysis() gives no figures for this program on "
                f"{self.backend} (none on this backend, or -1: XLA could not count "
                "it): only the kit's own counts are shown."
            )
            return notes
        if self.once:
            notes.append(
                _notes.xla_loops(self.xla.get("flops"), self.once["flops"], op[0])
            )
            notes.append(
                _notes.xla_loops(
                    self.xla.get("bytes_accessed"), self.once["bytes"], op[2], "B"
                )
            )
            return notes
        # a custom call XLA counts as nothing too: no cause of a gap in FLOPs
        uncounted = [
            r.name for r in self.ops if r.flops is None and r.kind != "custom-call"
        ]
        also = (
            [f"ops the kit does not count ({', '.join(uncounted)})"]
            if uncounted
            else []
        )
        notes.append(
            _notes.gap("FLOPs", op[0], self.xla.get("flops"), self.opcodes, also=also)
        )
        notes.append(
            _notes.gap(
                "bytes", op[2], self.xla.get("bytes_accessed"), self.opcodes, "B"
            )
        )
        return notes

    def rows(self) -> list[list[str]]:
        """The compiled ops as text: op, kind, FLOPs, transc., bytes, FLOP/B."""
        return [
            [
                r.name,
                r.where,
                si(r.flops),
                r.transcendentals_text,
                si(r.bytes, "B"),
                "-" if r.intensity is None else f"{r.intensity:.3g}",
            ]
            for r in self.ops
        ]

    def __repr__(self) -> str:
        where = ", per device" if self.devices > 1 else ""
        where += (
            ", per iteration of a data-dependent loop" if self.per_iteration else ""
        )
        left = f"; {self.uncounted}" if self.uncounted else ""
        return (
            f"CostTable({self.name!r}: {plural(len(self.equations), 'equation')}, "
            f"{plural(len(self.ops), 'compiled op')}, {si(self.flops, 'FLOP')}, "
            f"{si(self.bytes, 'B')}, {self.intensity:.3g} FLOP/B{where}{left})"
        )

    def report(self) -> Report:
        """The totals (jaxpr, compiled, XLA), the ops and the notes, as one `Report`."""
        eq, op = total(self.equations), total(self.ops)
        # A sharded program: the jaxpr holds global shapes, the compiled program is what
        # one device runs. Each row says which, so no one sets them side by side.
        glob, each = (", global", ", per device") if self.devices > 1 else ("", "")
        body = [
            [f"jaxpr (kit{glob})", si(eq[0]), si(eq[1]), si(eq[2], "B")],
            [f"compiled (kit{each})", si(op[0]), si(op[1]), si(op[2], "B")],
        ]
        if self.xla:
            once = ", each loop body once" if self.once else ""
            body.append(
                [
                    f"compiled (XLA{each}{once})",
                    si(self.xla.get("flops")),
                    si(self.xla.get("transcendentals")),  # None: XLA gave -1
                    si(self.xla.get("bytes_accessed"), "B"),
                ]
            )
        where = f", {self.devices} devices" if self.devices > 1 else ""
        return Report(
            f"Cost of {self.name} on {self.backend}{where}",
            tables=[
                Table(["", "FLOPs", "transcendentals", "bytes"], body, align="lrrr"),
                Table(OPS_HEAD, self.rows(), align="llrrrr"),
            ],
            notes=self.notes(),
        )
