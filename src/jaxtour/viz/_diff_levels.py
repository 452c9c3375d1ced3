"""`LevelDiff`: what differs between two programs at one level (jaxpr, StableHLO, HLO)."""

from __future__ import annotations

import collections
import difflib
import re
from dataclasses import dataclass, field

from jaxtour import _ir
from jaxtour._number_words import plural

# Words a report uses for each level.
LEVELS = {"jaxpr": "jaxpr", "stablehlo": "StableHLO", "compiled": "compiled HLO"}


@dataclass
class Changed:
    """An op of the first program matched to one of the second, and what differs.

    Attributes:
        name: the primitive or opcode (`dot_general`; `fusion › multiply` inside one).
        before, after: each side as text, with its type and source line.
        what: the fields that differ, `"out: f32[4] → bf16[4]"`, or the input rewired.
        lines: "file.py:N" of both sides (one when both are the same line).
    """

    name: str
    before: str
    after: str
    what: list[str]
    lines: list[str]

    def __str__(self) -> str:
        where = f" on {', '.join(self.lines)}" if self.lines else ""
        return f"{self.name} changed{where}: {'; '.join(self.what)}"


@dataclass
class LevelDiff:
    """One level's difference between two programs.

    Attributes:
        level: "jaxpr", "stablehlo" or "compiled".
        matching: how the two programs' nodes paired (`jaxtour._ir.Matching`).
        module: whole-module differences with the same ops (buffer donation, layouts).
    """

    level: str
    matching: _ir.Matching
    module: list[str] = field(default_factory=list)

    @property
    def added(self) -> collections.Counter:
        """Primitive or op name → how many the second program has that the first has not."""
        after = self.matching.after
        return collections.Counter(after[j].label for j in self.matching.added)

    @property
    def removed(self) -> collections.Counter:
        """Primitive or op name → how many the first program has that the second has not."""
        before = self.matching.before
        return collections.Counter(before[i].label for i in self.matching.removed)

    @property
    def changed(self) -> list[Changed]:
        """Matched ops whose types, shapes, parameters or inputs differ, in program order."""
        m = self.matching
        return [
            Changed(
                m.before[c.before].scope + m.before[c.before].label,
                m.before[c.before].text(),
                m.after[c.after].text(),
                c.what,
                _lines([m.before[c.before], m.after[c.after]]),
            )
            for c in m.changed
        ]

    @property
    def lines(self) -> list[str]:
        """ "file.py:N" of every op that differs (both programs' lines), sorted."""
        m = self.matching
        nodes = [m.before[i] for i in m.removed] + [m.after[j] for j in m.added]
        nodes += [m.before[c.before] for c in m.changed]
        nodes += [m.after[c.after] for c in m.changed]
        return _lines(nodes)

    @property
    def same(self) -> bool:
        """True when nothing differs at this level."""
        m = self.matching
        return not (m.removed or m.added or m.changed or self.module)

    @property
    def ops(self) -> tuple[int, int]:
        """How many ops (or equations) each program has at this level (the nodes
        reading what the program and its bodies return are none)."""
        m = self.matching
        before, after = (
            sum(node.label != _ir.RETURN for node in nodes)
            for nodes in (m.before, m.after)
        )
        return before, after

    def sentences(self) -> list[str]:
        """The differences in words, the largest group first."""
        found = self._counted("added") + self._counted("removed")
        found += [(1, str(c)) for c in self.changed]
        found += [(1, f"module: {text}") for text in self.module]
        return [text for _, text in sorted(found, key=lambda p: -p[0])]

    def gist(self) -> str:
        """What a headline says of this level: its largest removal and its largest
        addition (`1 cos removed, 1 sin added`), else its largest difference.

        Example:
            >>> import jax.numpy as jnp
            >>> from jaxtour.viz import diff
            >>> diff(jnp.cos, jnp.sin)(1.0).jaxpr.gist()
            '1 cos removed, 1 sin added'
        """
        tops = [  # the first of the largest, as `sentences` orders them
            max(self._counted(verb), key=lambda p: p[0], default=None)
            for verb in ("removed", "added")
        ]
        return ", ".join(top[1] for top in tops if top) or self.sentences()[0]

    def _counted(self, verb: str) -> list[tuple[int, str]]:
        """(n, `n name added (lines)`) for each op name added (or removed)."""
        m = self.matching
        counts, nodes, indices = (
            (self.added, m.after, m.added)
            if verb == "added"
            else (self.removed, m.before, m.removed)
        )
        found = []
        for name, n in counts.items():
            where = _lines([nodes[k] for k in indices if nodes[k].label == name])
            on = f" ({', '.join(where)})" if where else ""
            found.append((n, f"{n} {name} {verb}{on}"))
        return found

    def by_line(self) -> dict[str, str]:
        """ "file.py:N" → what differs there at this level, in brief (`+2 convert`).

        One line of code may make one equation and several ops: this is how an
        equation's difference is found again among the ops it became.
        """
        m = self.matching
        marks: dict[str, collections.Counter] = collections.defaultdict(
            collections.Counter
        )
        for sign, nodes, indices in (
            ("+", m.after, m.added),
            ("-", m.before, m.removed),
            ("~", m.before, [c.before for c in m.changed]),
        ):
            for k in indices:
                for where in _lines([nodes[k]]) or [_unplaced(nodes[k])]:
                    marks[where][f"{sign}{nodes[k].label}"] += 1
        for c in m.changed:  # a changed op's partner may be on another line
            for where in _lines([m.after[c.after]]):
                marks[where][f"~{m.after[c.after].label}"] += 0
        return {
            where: ", ".join(f"{k[0]}{n or 1} {k[1:]}" for k, n in counts.items())
            for where, counts in sorted(marks.items())
        }

    def __str__(self) -> str:
        name = LEVELS[self.level]
        before, after = self.ops
        if self.same:
            return f"{name}: the same ({plural(before, 'op')} each)"
        head = f"{name}: {before} → {after} ops"
        return "\n".join([head, *(f"  - {s}" for s in self.sentences())])


# where a difference with no source line goes in `by_line`: what a program or body
# returns has none of its own
OUTPUTS, NO_LINE = "(outputs)", "(no line)"


def _unplaced(node: _ir.Node) -> str:
    return OUTPUTS if node.label == _ir.RETURN else NO_LINE


def _lines(nodes: list[_ir.Node]) -> list[str]:
    found = {n.source.where: n.source for n in nodes if n.source}
    ordered = sorted(found.values(), key=lambda s: (s.file, s.line))
    return list(dict.fromkeys(s.where for s in ordered))


def module_changes(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """`input_output_alias: — → {...}` for each module attribute that differs; a long
    one (a function's signature) says only what was added or dropped."""
    found = []
    for key in dict.fromkeys([*before, *after]):
        b, a = before.get(key), after.get(key)
        if b == a:
            continue
        if b is None or a is None or len(b) + len(a) < 80:
            found.append(f"{key}: {b or '—'} → {a or '—'}")
        else:
            found.append(f"{key}: {_edits(b, a)}")
    return found


# Tokens of a signature: an attribute dictionary `{...}`, a type `f32[8,4]` or
# `tensor<8x4xf32>`, an arrow, a bracket or comma, a word
_TOKEN = re.compile(r"\{[^{}]*\}|\w+\[[\d,]*\]|\w+<[^<>]*>|->|[(),]|[^\s{}(),\-]+|\S")


def _edits(before: str, after: str) -> str:
    """What changed in a long text, as `+ added` / `- dropped` pieces."""
    b, a = _TOKEN.findall(before), _TOKEN.findall(after)
    pieces = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, b, a).get_opcodes():
        if tag in ("delete", "replace"):
            pieces.append("- " + " ".join(b[i1:i2]))
        if tag in ("insert", "replace"):
            pieces.append("+ " + " ".join(a[j1:j2]))
    return ", ".join(pieces)
