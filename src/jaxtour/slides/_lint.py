"""The slide lint on a lesson's cells (no browser): what a presenter needs on each slide.

`lint_lesson(notebook, name)` reads the deck `plan_slides` makes of a lesson (its source
or its executed notebook) and reports, slide by slide:

- ``untitled``: a slide that does not open with a markdown heading (``#``, ``##``, ``###``);
- ``your-turn-notes``: a "Your turn" slide whose notes lack a time box ("5 min"), what to
  open (the word "open" and the notebook, ``NN_topic.ipynb``) or a hint (the word "hint");
- ``notes-too-long``: notes over `MAX_NOTE_WORDS` words (the long "why" goes to the handout
  prose, not to what a presenter reads mid-talk);
- ``ci-code``: CI plumbing on a slide (``paths.quick()``, ``JAXTOUR_QUICK``);
- ``progress-bar``: a progress bar on a slide (``tqdm`` in the code, or its bar in an output);
- ``throwaway``: an ``_ = …`` assignment on a slide;
- ``long-code``: more than `MAX_CODE_LINES` lines of code on a slide (blank lines aside),
  or a line over `MAX_CODE_COLUMNS` characters (the deck's 17 px code is cut off past
  about 110); `slide_lint`'s ``scrolls`` measures the same in a browser;
- and for the whole deck, ``notes-coverage``: fewer than `MIN_NOTES_SHARE` of the content
  slides (not the title, closing or "Your turn" slides) carry notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from jaxtour.slides._plan import plan_slides

MAX_NOTE_WORDS = 60
MAX_CODE_LINES = 20  # short code: a slide shows one idea
MAX_CODE_COLUMNS = 100
MIN_NOTES_SHARE = 0.9
TIME_BOX = re.compile(r"\b(\d+)\s*(?:min|minutes)\b", re.IGNORECASE)
_TITLE = re.compile(r"#{1,3}\s+(\S[^\n]*)")
_CI = re.compile(r"paths\.quick\(\)|JAXTOUR_QUICK")
_THROWAWAY = re.compile(r"^\s*_\s*=[^=]", re.MULTILINE)
_NOTEBOOK = re.compile(r"\b\d\d_\w+\.ipynb\b")  # the student notebook to open
_INPUT_HIDDEN = {"hide-input", "remove-input"}  # the deck shows their output
_BAR = re.compile(r"\d+%\|")  # tqdm's text bar: " 0%|          | 0/100"


@dataclass
class Slide:
    """One slide of a planned deck: its cells, its speaker notes, its frame."""

    number: int  # 1-based, in the order → shows them
    cells: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    frame: str = ""  # "title", "closing", "exercise" or "" (a content slide)

    @property
    def title(self) -> str:
        first = self.cells[0] if self.cells else None
        if first is None or first.cell_type != "markdown":
            return ""
        match = _TITLE.match(first.source.lstrip())
        return match.group(1).strip() if match else ""

    @property
    def notes_text(self) -> str:
        return "\n\n".join(self.notes)


@dataclass(frozen=True)
class Finding:
    """One rule a lesson's deck breaks, where, and what to do."""

    lesson: str
    slide: int  # 0 for the whole deck
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"slide {self.slide}" if self.slide else "deck"
        return f"{self.lesson}: {where}: {self.rule}: {self.message}"


def slides(notebook: Any, name: str = "the lesson") -> list[Slide]:
    """The slides `plan_slides` makes of `notebook`, with each slide's notes."""
    found: list[Slide] = []
    for cell in plan_slides(notebook, name).cells:
        kind = cell.metadata["slideshow"]["slide_type"]
        if kind == "skip":
            continue
        if kind == "notes":
            if found:
                found[-1].notes.append(cell.source)
            continue
        if kind in ("slide", "subslide") or not found:
            frame = cell.metadata["slideshow"].get("data", {}).get("jt_frame", "")
            found.append(Slide(len(found) + 1, frame=frame))
        found[-1].cells.append(cell)
    return found


def exercise_minutes(notebook: Any, default: int = 5) -> int:
    """The minutes the lesson's "Your turn" slides give in their notes' time boxes
    (`default` for a slide without one)."""
    total = 0
    for slide in slides(notebook):
        if slide.frame == "exercise":
            box = TIME_BOX.search(slide.notes_text)
            total += int(box.group(1)) if box else default
    return total


def lint_lesson(notebook: Any, name: str) -> list[Finding]:
    """Every rule the deck of lesson `name` breaks (see the module docstring)."""
    found: list[Finding] = []
    deck = slides(notebook, name)
    for slide in deck:
        found += [
            Finding(name, slide.number, rule, said)
            for rule, said in _slide_rules(slide)
        ]
    content = [s for s in deck if not s.frame]
    with_notes = [s for s in content if s.notes_text.strip()]
    if content and len(with_notes) < MIN_NOTES_SHARE * len(content):
        missing = ", ".join(str(s.number) for s in content if s not in with_notes)
        found.append(
            Finding(
                name,
                0,
                "notes-coverage",
                f"{len(with_notes)} of {len(content)} content slides have notes; at least "
                f"{MIN_NOTES_SHARE:.0%} should. Without notes: slides {missing}.",
            )
        )
    return found


def _slide_rules(slide: Slide) -> list[tuple[str, str]]:
    said: list[tuple[str, str]] = []
    if not slide.title:
        said.append(
            ("untitled", "open the slide with a markdown heading (## What it shows)")
        )
    notes = slide.notes_text
    if slide.frame == "exercise":
        lacks = [
            what
            for what, present in (
                ('a time box (e.g. "5 min")', TIME_BOX.search(notes)),
                (
                    'what to open ("open lessons/NN_topic.ipynb")',
                    re.search(r"\bopen\b", notes, re.I) and _NOTEBOOK.search(notes),
                ),
                ('a hint ("Hint: …")', re.search(r"\bhint\b", notes, re.I)),
            )
            if not present
        ]
        if lacks:
            said.append(("your-turn-notes", "its notes need " + ", ".join(lacks)))
    words = len(notes.split())
    if words > MAX_NOTE_WORDS:
        said.append(
            (
                "notes-too-long",
                f"{words} words of notes; keep to {MAX_NOTE_WORDS} or fewer",
            )
        )
    code = "\n".join(c.source for c in slide.cells if c.cell_type == "code")
    seen = "\n".join(c.source for c in slide.cells if _shows_code(c))  # on the slide
    shown = "\n".join(_output_text(c) for c in slide.cells if c.cell_type == "code")
    ci = _CI.search(seen)
    if ci:
        said.append(("ci-code", f"CI plumbing on the slide: `{ci.group()}`"))
    if "tqdm" in code or _BAR.search(shown):  # hidden code's bar shows in its output
        said.append(
            ("progress-bar", "a progress bar on the slide; print the result instead")
        )
    said += _code_length(seen)
    if _THROWAWAY.search(seen):
        said.append(
            ("throwaway", "an `_ = …` on the slide; end the cell with what it shows")
        )
    return said


def _shows_code(cell: Any) -> bool:
    """Whether the deck shows `cell`'s code: a code cell not tagged to show only its
    output (the deck's exporter removes the input of those, `_INPUT_HIDDEN`)."""
    tags = set((cell.get("metadata") or {}).get("tags") or ())
    return cell.cell_type == "code" and not tags & _INPUT_HIDDEN


def _code_length(code: str) -> list[tuple[str, str]]:
    lines = [line for line in code.splitlines() if line.strip()]
    said = []
    if len(lines) > MAX_CODE_LINES:
        said.append(
            (
                "long-code",
                f"{len(lines)} lines of code; keep a slide to {MAX_CODE_LINES} or "
                "fewer (split the cell, or move the setup to a skipped cell)",
            )
        )
    wide = max(map(len, lines), default=0)
    if wide > MAX_CODE_COLUMNS:
        said.append(
            (
                "long-code",
                f"a code line of {wide} characters; keep to {MAX_CODE_COLUMNS}, or it "
                "is cut off on the slide",
            )
        )
    return said


def _output_text(cell: Any) -> str:
    parts = []
    for output in cell.get("outputs", []):
        text = output.get("text") or output.get("data", {}).get("text/plain") or ""
        parts.append(text if isinstance(text, str) else "".join(text))
    return "\n".join(parts)
