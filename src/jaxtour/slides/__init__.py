"""The lessons as reveal.js decks that work offline: `build_slides` and its parts.

`jaxtour slides` (and the tour's ``slides`` step) call `build_slides` on the executed
lessons in ``build/notebooks``; `plan_slides` says which cells become which slides.
"""

from jaxtour.slides._deck import (
    Deck,
    build_deck,
    read_notebook,
    remote_resources,
    unbadge,
)
from jaxtour.slides._legible import MIN_TEXT_PX, Measured, measure
from jaxtour.slides._lint import Finding, lint_lesson
from jaxtour.slides._pdf import find_chromium
from jaxtour.slides._place import place_pictures
from jaxtour.slides._plan import SlidesError, count_slides, lesson_title, plan_slides
from jaxtour.slides._site import assets_dir, build_slides, copy_reveal, write_index

__all__ = [
    "MIN_TEXT_PX",
    "Deck",
    "Finding",
    "Measured",
    "SlidesError",
    "assets_dir",
    "build_deck",
    "build_slides",
    "copy_reveal",
    "count_slides",
    "find_chromium",
    "lesson_title",
    "lint_lesson",
    "measure",
    "place_pictures",
    "plan_slides",
    "read_notebook",
    "remote_resources",
    "unbadge",
    "write_index",
]
