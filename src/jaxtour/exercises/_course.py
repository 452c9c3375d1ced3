"""A course's own exercises: a folder the instructor keeps, never published with the kit.

The folder holds lessons in the lessons' format (`NN_topic.py`: task, stub, solution,
hints, tagged as in `notebooks/`) and Python modules (any other `*.py`) whose
`@checks(...)` register their checkers, just as the kit's own lesson modules do::

    course/
        90_our_extras.py    # the task, the stub `def ex_…(…): ...`, the solution
        checkers.py         # @checks("90_our_extras", "ex_…", title=...) def _check(fn): ...

`jaxtour exercises --nbgrader DIR --own-exercises course` exports them beside the
lessons' and copies the checker modules into `DIR/checkers/`, which the course's
autograde (`GradeApart.checkers`) loads: the same machinery judges them, from outside
the answer's process, and no solution of theirs is in the installed package.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import types
from pathlib import Path

from jaxtour.exercises import _registry
from jaxtour.lesson import find_lessons

CHECKERS = "checkers"  # the course folder's copy of the instructor's checker modules
# What the course's nbgrader_config.py adds: GradeApart loads the copied checkers first
CONFIG = f"""
import os.path

c.GradeApart.checkers = [os.path.join(os.path.dirname(__file__), {CHECKERS!r})]
"""
# each checker module loaded, by its name: the module and the exercises it registered
_LOADED: dict[str, tuple[types.ModuleType, list[_registry.Exercise]]] = {}


def checker_files(folder: str | os.PathLike) -> list[Path]:
    """The checker modules in `folder`: each `*.py` that is not a lesson `NN_topic.py`.

    Raises:
        FileNotFoundError: `folder` is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(
            f"No folder of the course's own exercises at {folder.resolve()}: pass a "
            "folder holding NN_topic.py lessons and the .py modules that check them."
        )
    lessons = set(find_lessons(folder))
    return sorted(p for p in folder.glob("*.py") if p not in lessons)


def load_checkers(folder: str | os.PathLike) -> list[types.ModuleType]:
    """Import every checker module in `folder` (registering its exercises), once each.

    Each is imported under a name made from its text, so a copy of it (the course's
    `checkers/`) registers the same exercises without a clash, and travels by value to
    the processes that run its probes and checks (they cannot import it).
    """
    return [_load(path) for path in checker_files(folder)]


def _load(path: Path) -> types.ModuleType:
    import cloudpickle

    data = path.read_bytes()
    name = f"course_checks_{path.stem}_{hashlib.sha256(data).hexdigest()[:12]}"
    if name in _LOADED:  # loaded before: its exercises registered again, not rerun
        module, registered = _LOADED[name]
        for exercise in registered:
            _registry.register(exercise)
        return module
    before = set(_registry._REGISTRY)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import the checker module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    cloudpickle.register_pickle_by_value(module)
    added = [ex for key, ex in _registry._REGISTRY.items() if key not in before]
    _LOADED[name] = (module, added)
    return module


def is_own(name: str) -> bool:
    """Whether the exercise `name` is a course's own (its checker loaded from a folder)."""
    exercise = _registry.find(name)
    return exercise is not None and exercise.checker.__module__ in _LOADED


def own_lessons(folder: str | os.PathLike) -> list[Path]:
    """The course's own lessons in `folder`, their checkers loaded first."""
    load_checkers(folder)
    return find_lessons(folder)


#: What a student's kernel shows for a course's own exercise: it has no checker there.
KEPT_CHECKER = (
    "# This course keeps this exercise's checker to itself: your answer is marked "
    "when you hand it in."
)


def visible_check(name: str) -> str:
    """The test cell's visible line: `check(name)`, or for a course's own exercise
    (whose checker the student's kernel cannot load) a note that it is marked later."""
    return KEPT_CHECKER if is_own(name) else f"check({name})"
