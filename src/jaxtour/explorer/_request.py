"""What the explorer's views read and return: the example, the drawing options, a request.

Kept apart from the views themselves (`_views`, `_step_through`) so that every view module
imports these types from below, and none imports another view module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from jaxtour.explorer._compose import Composed, Transforms


class Subject(NamedTuple):
    """The function being explored (keyword arguments already bound), its name, args,
    and how code names it with those keyword arguments (``partial(power, n=3)``)."""

    fn: Callable
    name: str
    args: tuple
    code: str = ""

    @property
    def label(self) -> str:
        """The name code lines and titles use for the function."""
        return self.code or self.name


@dataclass(frozen=True)
class Options:
    """Drawing options, defaulting as `draw_jaxpr` does: depth, grouping, direction;
    `step` is the step-through view's step (-1: the whole run)."""

    depth: int | None = 2
    group: bool = False
    rankdir: str = "TB"
    step: int = -1


class Text(NamedTuple):
    """A program printed as text (a jaxpr, StableHLO, compiled HLO)."""

    title: str
    body: str


class Table(NamedTuple):
    """Named figures, e.g. XLA's cost and memory analysis."""

    title: str
    rows: list[tuple[str, str]]


class Shown(NamedTuple):
    """What a view produced, and the code that produces it outside the explorer."""

    result: Any  # Diagram | Text | Table | whatever compare_stages returns
    code: str


class Request(NamedTuple):
    """Everything a view may read: the example, the transformations, their composition."""

    subject: Subject
    transforms: Transforms
    composed: Composed
    options: Options


class View(NamedTuple):
    """A view: its label, the options it reads, and the function that draws it."""

    label: str
    options: frozenset[str]
    draw: Callable[[Request], Shown]
