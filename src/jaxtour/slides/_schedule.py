"""A day's schedule from the decks: each lesson's talk, its exercises, and breaks.

A lesson's talk takes the minutes its first cell gives (``*About N minutes.*``); its
exercises the time boxes of its "Your turn" slides (`_lint.exercise_minutes`). A break
of `BREAK_MINUTES` follows the lesson that brings the time since the last break to
`BREAK_EVERY` minutes or more, unless it is the last lesson.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

BREAK_MINUTES = 15
BREAK_EVERY = 90


@dataclass(frozen=True)
class Slot:
    """One line of the schedule: a lesson (its deck's name) or a break (name "")."""

    start: int  # minutes from the start of the day
    name: str
    talk: int
    exercises: int = 0

    @property
    def minutes(self) -> int:
        return self.talk + self.exercises

    @property
    def clock(self) -> str:
        """`start` as hours and minutes from the start: "1:05"."""
        return f"{self.start // 60}:{self.start % 60:02d}"


def schedule(decks: Sequence) -> list[Slot]:
    """The slots of `decks` (each with `.name`, `.minutes` and `.exercise_minutes`).

    Example:
        >>> from types import SimpleNamespace as D
        >>> days = schedule([D(name="01", minutes=50, exercise_minutes=15),
        ...                  D(name="02", minutes=40, exercise_minutes=10),
        ...                  D(name="03", minutes=None, exercise_minutes=0)])
        >>> [(s.clock, s.name or "break", s.minutes) for s in days]
        [('0:00', '01', 65), ('1:05', '02', 50), ('1:55', 'break', 15), ('2:10', '03', 0)]
    """
    slots: list[Slot] = []
    now = since_break = 0
    for i, deck in enumerate(decks):
        slot = Slot(now, deck.name, deck.minutes or 0, deck.exercise_minutes)
        slots.append(slot)
        now += slot.minutes
        since_break += slot.minutes
        if since_break >= BREAK_EVERY and i < len(decks) - 1:
            slots.append(Slot(now, "", BREAK_MINUTES))
            now += BREAK_MINUTES
            since_break = 0
    return slots


def total(slots: Sequence[Slot]) -> int:
    """Minutes from the first slot's start to the last slot's end."""
    return slots[-1].start + slots[-1].minutes if slots else 0
