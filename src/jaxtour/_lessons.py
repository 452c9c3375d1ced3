"""The lessons that ship in the package, for users who never cloned the repository.

A wheel holds every lesson (``NN_topic.py``, its source, and ``NN_topic.ipynb``) under
``jaxtour/lessons/``: the build copies them from the repository's ``notebooks/``. From a
checkout, that ``notebooks/`` folder itself is used.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

LESSON_PATTERNS = ("[0-9][0-9]_*.py", "[0-9][0-9]_*.ipynb")
_CHECKOUT = Path(__file__).resolve().parents[2] / "notebooks"


def packaged_lessons_dir() -> Path:
    """The folder holding the lessons that came with this jaxtour.

    Raises:
        FileNotFoundError: neither the installed package nor a checkout holds lessons.
    """
    installed = Path(str(resources.files("jaxtour") / "lessons"))
    for folder in (installed, _CHECKOUT):
        if any(folder.glob(LESSON_PATTERNS[0])):
            return folder
    raise FileNotFoundError(
        f"This jaxtour has no lessons (looked in {installed} and {_CHECKOUT}). Reinstall it "
        'with pip install "jaxtour[notebook]", or pass the folder of a clone: --notebooks DIR.'
    )


def copy_lessons(dest: Path, patterns: tuple[str, ...] = LESSON_PATTERNS) -> list[Path]:
    """Copy the packaged lessons matching `patterns` into `dest`; return the files written.

    A file already in `dest` with the same name is replaced (the packaged lesson wins);
    so is a symlink there, never written through. Each copy is whole or not at all.
    """
    from jaxtour._files import copy_atomically

    source = packaged_lessons_dir()
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for pattern in patterns:
        for lesson in sorted(source.glob(pattern)):
            copy_atomically(lesson, dest / lesson.name)
            written.append(dest / lesson.name)
    return sorted(written)
