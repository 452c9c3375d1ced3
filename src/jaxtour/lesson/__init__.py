"""The lesson: its cell kinds, its views, its files, its lint and its one execution per run.

A lesson is one py:percent source, ``notebooks/NN_topic.py``. Its cells are of one
`Kind` (set-up, teaching, check, exercise task and stub, solution, hint, notes), read
from tags; each `View` (instructor, student, HTML, deck, handout) keeps the kinds `KEEPS`
lists for it; `executed` runs a lesson once per source, kit, JAX version and mode.

Example:
    >>> from nbformat.v4 import new_code_cell
    >>> kind_of(new_code_cell("assert y == 2", metadata={"tags": ["check"]}))
    <Kind.CHECK: 'check'>
    >>> sorted(k.value for k in KEEPS[View.DECK])
    ['notes', 'task', 'teach']
"""

from jaxtour.lesson._execute import (
    CACHE_VARIABLE,
    Executed,
    LessonError,
    cache_dir,
    cache_key,
    cached,
    execute,
    executed,
    html_of,
)
from jaxtour.lesson._exercises import (
    LessonExercise,
    defined_functions,
    lesson_exercises,
)
from jaxtour.lesson._files import (
    LESSON_GLOB,
    NOTEBOOK_GLOB,
    checkout_lessons,
    copy_lessons,
    copy_sources,
    find_lessons,
    lesson_files,
    local_pictures,
    notebook_text,
    packaged_lessons_dir,
    read,
    stable_ids,
    write_notebooks,
    write_student_notebooks,
    write_view,
)
from jaxtour.lesson._kinds import Kind, is_kind, kind_of, tags
from jaxtour.lesson._lint import (
    check_names_taught,
    lint,
    names,
    opening_and_summary,
    python_of,
)
from jaxtour.lesson._views import KEEPS, View, keeps, kept, view

__all__ = [
    "CACHE_VARIABLE",
    "KEEPS",
    "LESSON_GLOB",
    "NOTEBOOK_GLOB",
    "Executed",
    "Kind",
    "LessonError",
    "LessonExercise",
    "View",
    "cache_dir",
    "cache_key",
    "cached",
    "check_names_taught",
    "checkout_lessons",
    "copy_lessons",
    "copy_sources",
    "defined_functions",
    "execute",
    "executed",
    "find_lessons",
    "html_of",
    "is_kind",
    "keeps",
    "kept",
    "kind_of",
    "lesson_exercises",
    "lesson_files",
    "lint",
    "local_pictures",
    "names",
    "notebook_text",
    "opening_and_summary",
    "packaged_lessons_dir",
    "python_of",
    "read",
    "stable_ids",
    "tags",
    "view",
    "write_notebooks",
    "write_student_notebooks",
    "write_view",
]
