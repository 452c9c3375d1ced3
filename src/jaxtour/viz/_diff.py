"""`diff(f, g)(*args)`: what an edit changed, in the jaxpr, StableHLO, compiled HLO and cost."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jaxtour import _ir, _number_words
from jaxtour._diagram import Diagram
from jaxtour._files import user_path, write_atomically
from jaxtour._report import Report, Reported, Table
from jaxtour.viz import _diff_draw
from jaxtour.viz._diff_levels import LEVELS, LevelDiff, module_changes
from jaxtour.viz._diff_program import WHO, Program, build, example, time_call

# What each cost figure is, as a row of the report says it.
_COST_NAMES = {
    "flops": "FLOPs (compiled{each})",
    "bytes": "bytes (compiled{each})",
    "compiled ops": "compiled ops, a fusion once{each}",
    "jaxpr flops": "FLOPs (jaxpr{glob})",
    "jaxpr bytes": "bytes (jaxpr, unfused{glob})",
    "time": "time per call (measured)",
}


def diff(
    f: Callable,
    g: Callable,
    *,
    measure: bool = False,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> Callable[..., ProgramDiff]:
    """What changes from `f` to `g`: jaxpr, StableHLO, compiled HLO, FLOPs, bytes, lines.

    Both are traced, lowered and compiled on the same arguments, then matched op by op
    by structure: renamed variables, reordered independent lines and renumbered
    instructions are no difference; calls (`pjit`, `checkpoint`, custom rules) and
    fusions are matched inside. A function already under `jax.jit` keeps its own
    options (donation, shardings), so `diff(jax.jit(f), jax.jit(f, donate_argnums=0))`
    shows what donation changes.

    Args:
        f: the program before the edit.
        g: the program after it.
        measure: also time one call of each compiled program (median of 20).
        static_argnums: as `jax.jit`'s, for both.
        static_argnames: as `jax.jit`'s, for both.

    Returns:
        A function of the example arguments returning a `ProgramDiff`.

    Raises:
        TypeError: `f` or `g` is not callable, or an argument is not traceable.

    Example:
        >>> import jax.numpy as jnp
        >>> d = diff(jnp.sum, jnp.mean)(jnp.ones(8))
        >>> dict(d.jaxpr.added)
        {'div': 1}
    """
    _ir.check_callable(f, WHO)
    _ir.check_callable(g, WHO)
    static = {"static_argnums": static_argnums, "static_argnames": static_argnames}
    for h in (f, g):  # a bad option fails here, as in jax.jit, not at the call
        _ir.static_args(h, static_argnums, static_argnames, WHO)

    def compare(*args: Any, **kwargs: Any) -> ProgramDiff:
        before = build(f, args, kwargs, static)
        after = build(g, args, kwargs, static)
        result = ProgramDiff.of(before, after)
        if measure:
            result.cost["time"] = (time_call(before.call), time_call(after.call))
        return result

    return compare


def diff_calls(
    f: Callable,
    before: tuple[tuple, dict],
    after: tuple[tuple, dict],
    *,
    then: Callable | None = None,
    names: tuple[str, str] | None = None,
    static_argnums: int | tuple[int, ...] | None = (),
    static_argnames: str | tuple[str, ...] | None = (),
) -> ProgramDiff:
    """As `diff(f, f)`, but each side on its own arguments: what a retrace changed.

    Args:
        f: the function of the first call.
        before: `(args, kwargs)` of the first call; arrays may be `jax.ShapeDtypeStruct`s.
        after: `(args, kwargs)` of the second.
        then: the function of the second call, when it is not `f` (a transformed `f`,
            `jax.vmap(f)`, called on a batch).
        names: what the report calls each side (default: the functions' names).
        static_argnums: as `jax.jit`'s.
        static_argnames: as `jax.jit`'s.

    Returns:
        A `ProgramDiff`.

    Raises:
        TypeError: `before` or `after` is not an `(args, kwargs)` pair, or as `diff`.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> d = diff_calls(jnp.sum, ((jnp.ones(4),), {}), ((jnp.ones(4, int),), {}))
        >>> [c.what for c in d.jaxpr.changed]
        [['in: f32[4] → i32[4]', 'out: f32[] → i32[]']]
    """
    _ir.check_callable(f, WHO)
    g = f if then is None else then
    _ir.check_callable(g, WHO)
    static = {"static_argnums": static_argnums, "static_argnames": static_argnames}
    for h in (f,) if g is f else (f, g):
        _ir.static_args(h, static_argnums, static_argnames, WHO)
    first, second = example(before, "before"), example(after, "after")
    result = ProgramDiff.of(build(f, *first, static), build(g, *second, static))
    if names is not None:
        result.names = names
    return result


@dataclass
class ProgramDiff(Reported):
    """What differs between two programs, level by level, and what it costs.

    Attributes:
        names: the two functions' names (before, after).
        jaxpr, stablehlo, compiled: each level's `LevelDiff` (`.added`, `.removed`,
            `.changed`, `.lines`, `.same`).
        cost: name → (before, after): "flops", "bytes", "compiled ops" of the compiled
            program (one device's share when sharded), "jaxpr flops", "jaxpr bytes"
            (global, each equation through memory) and, when measured, "time" (s).
        devices: how many devices share each compiled program.
        not_counted: primitives and ops the FLOP rules do not know (totals are then
            lower bounds).
        loops: whether each compiled program has a while loop whose trip count
            neither XLA nor the jaxpr gives (data-dependent): its body is counted once.
    """

    names: tuple[str, str]
    jaxpr: LevelDiff
    stablehlo: LevelDiff
    compiled: LevelDiff
    cost: dict[str, tuple[float, float]]
    devices: tuple[int, int] = (1, 1)
    not_counted: list[str] = field(default_factory=list)
    loops: tuple[bool, bool] = (False, False)

    @classmethod
    def of(cls, before: Program, after: Program) -> ProgramDiff:
        """Match two built programs at every level."""
        levels = {
            level: LevelDiff(
                level,
                _ir.match_nodes(before.nodes[level], after.nodes[level]),
                module_changes(
                    before.modules.get(level, {}), after.modules.get(level, {})
                ),
            )
            for level in LEVELS
        }
        return cls(
            (before.name, after.name),
            levels["jaxpr"],
            levels["stablehlo"],
            levels["compiled"],
            {k: (before.cost[k], after.cost[k]) for k in before.cost},
            (before.devices, after.devices),
            list(dict.fromkeys(before.not_counted + after.not_counted)),
            (before.loops, after.loops),
        )

    @property
    def levels(self) -> list[LevelDiff]:
        """The three levels, from what you wrote to what runs."""
        return [self.jaxpr, self.stablehlo, self.compiled]

    @property
    def same(self) -> bool:
        """True when no level differs."""
        return all(level.same for level in self.levels)

    @property
    def lines(self) -> list[str]:
        """ "file.py:N" of every op that differs, at any level."""
        return list(dict.fromkeys(x for level in self.levels for x in level.lines))

    def by_line(self) -> list[list[str]]:
        """Rows of (line, jaxpr, StableHLO, compiled HLO): what differs on each line
        at each level (`+2 convert_element_type`, `~1 dot_general`, `-3 mul`)."""
        levels = [level.by_line() for level in self.levels]
        lines = sorted({w for marks in levels for w in marks}, key=_line_order)
        return [[where, *(marks.get(where, "") for marks in levels)] for where in lines]

    def headline(self) -> str:
        """The first level that differs, in brief (its largest removal and addition,
        `1 cos removed, 1 sin added`), and what the edit does to the cost."""
        f, g = self.names
        if self.same:
            return f"{f} and {g} compile to the same program at every level."
        first = next(level for level in self.levels if not level.same)
        lead = "" if first.level == "jaxpr" else "same jaxpr; in StableHLO, "
        if first.level == "compiled":
            lead = "same jaxpr and StableHLO; XLA compiled them differently: "
        return f"{lead}{first.gist()}; {self.cost_words()}."

    def cost_words(self) -> str:
        """`FLOPs unchanged, bytes −48 %`: the compiled program's figures, compared."""
        words = ", ".join(
            f"{word} {_change(*self.cost[key])}"
            for key, word in (("flops", "FLOPs"), ("bytes", "bytes"), ("time", "time"))
            if key in self.cost
        )
        return words + (
            " (a data-dependent loop's body counted once)" if any(self.loops) else ""
        )

    def notes(self) -> list[str]:
        """What the figures leave out, in words."""
        notes = []
        if any(self.loops):
            notes.append(
                "A while loop whose trip count depends on the data has its body counted "
                "once: those figures are one iteration's. Every other loop (scan, "
                "fori_loop, a counted while) is counted once per iteration."
            )
        if self.not_counted:
            notes.append(
                f"{_number_words.NOT_COUNTED.capitalize()} (FLOP totals are lower bounds): "
                + ", ".join(self.not_counted)
                + "."
            )
        return notes

    def cost_rows(self) -> list[list[str]]:
        """The cost table: figure, before, after, change."""
        sharded = max(self.devices) > 1
        each, glob = (", per device", ", global") if sharded else ("", "")
        rows = []
        for key, (b, a) in self.cost.items():
            unit = "s" if key == "time" else "B" if "bytes" in key else ""
            name = _COST_NAMES[key].format(each=each, glob=glob)
            rows.append([name, _figure(b, unit), _figure(a, unit), _change(b, a)])
        return rows

    def report(self) -> Report:
        """The differences level by level, by line of code, and the costs."""
        f, g = self.names
        levels = [
            [
                LEVELS[level.level],
                " → ".join(str(n) for n in level.ops),
                "\n".join(level.sentences()) or "the same",
            ]
            for level in self.levels
        ]
        tables = [Table(["level", "ops", "what differs"], levels, heading="Levels")]
        if rows := self.by_line():
            columns = ["line", *LEVELS.values()]
            heading = "By line (+ added, - removed, ~ changed)"
            tables.append(Table(columns, rows, heading=heading))
        tables.append(Table(["", f, g, "change"], self.cost_rows(), "Cost", "lrrr"))
        notes = self.notes()
        if max(self.devices) > 1:
            notes.insert(0, f"Devices: {self.devices[0]} → {self.devices[1]}.")
        return Report(f"diff {f} → {g}: {self.headline()}", tables=tables, notes=notes)

    def __repr__(self) -> str:
        f, g = self.names
        if self.same:
            return f"ProgramDiff({f} → {g}: the same at every level)"
        counts = ", ".join(
            f"{LEVELS[level.level]} {len(level.sentences())}"
            for level in self.levels
            if not level.same
        )
        return f"ProgramDiff({f} → {g}: differences in {counts})"

    def draw(self, level: str = "jaxpr") -> Diagram:
        """The two programs side by side at `level`, differences coloured, the rest folded.

        Raises:
            ValueError: `level` is not "jaxpr", "stablehlo" or "compiled".
        """
        if level not in LEVELS:
            raise ValueError(
                f'`level` must be "jaxpr", "stablehlo" or "compiled"; got {level!r}.'
            )
        return _diff_draw.draw_level(getattr(self, level), self.names)

    def _repr_html_(self) -> str:
        # One rich mime type: the report, then each level that differs drawn (inline SVG).
        return self.report().html() + _diff_draw.drawings(self)

    def save(self, path: str | os.PathLike) -> Path:
        """Write a self-contained page with the drawings (.html: no script, no address),
        the text (.txt) or Markdown (.md).

        Raises:
            ValueError: the suffix is none of those.
        """
        path = user_path(path)
        if path.suffix.lower() != ".html":
            return self.report().save(path, who=type(self).__name__)
        page = _diff_draw.page(self.report(), _diff_draw.drawings(self))
        write_atomically(path, page.encode())
        return path


def _line_order(where: str) -> tuple:
    """`a.py:9` before `a.py:10`; what f returns, then ops with no line, last."""
    head, _, number = where.rpartition(":" if ":" in where else " ")
    unplaced = where.startswith("(")  # "(outputs)", "(no line)"
    return (
        unplaced,
        where == "(no line)",
        head,
        int(number) if number.isdigit() else 0,
    )


def _change(before: float, after: float) -> str:
    if before == after:
        return "unchanged"
    if not before:
        return f"{_number_words.si(before)} → {_number_words.si(after)}"
    percent = 100 * (after - before) / before
    size = f"{abs(percent):.0f}" if abs(percent) >= 10 else f"{abs(percent):.2g}"
    return f"{'+' if percent > 0 else '−'}{size} %"


def _figure(value: float, unit: str) -> str:
    if unit == "s":
        return f"{value * 1e3:.3g} ms" if value >= 1e-3 else f"{value * 1e6:.3g} µs"
    return _number_words.si(value, unit) if value >= 1000 or unit else f"{value:g}"
