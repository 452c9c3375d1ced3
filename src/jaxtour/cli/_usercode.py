"""The user's own Python file, imported as Python imports a module (`jaxtour draw`).

`import_path` puts the module in `sys.modules` before its code runs (as `import` does:
a dataclass under ``from __future__ import annotations`` looks its module up there), and
a file inside a package (folders with ``__init__.py``) is imported by its dotted name
from the package's root, so its relative imports work. An exception the module raises
becomes `UserCodeError`: their traceback's last lines, none of jaxtour's frames.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TypeVar

KIT = str(Path(__file__).resolve().parents[1])  # jaxtour's own folder
FRAMES = 5  # of the user's traceback, the last ones
T = TypeVar("T")


class UserCodeError(Exception):
    """The user's module raised while jaxtour imported it."""

    def __init__(self, name: str, err: BaseException) -> None:
        frames = [
            frame
            for frame in traceback.extract_tb(err.__traceback__)
            if not frame.filename.startswith((KIT, "<frozen"))
        ]
        shown = "".join(traceback.format_list(frames[-FRAMES:]))
        what = "".join(traceback.format_exception_only(type(err), err)).strip()
        if isinstance(err, SystemExit):
            what += (
                " (the module exits when imported: put its script part under "
                'if __name__ == "__main__":)'
            )
        super().__init__(
            f"{name} raised {type(err).__name__} while being imported, in your code:\n"
            f"Traceback (most recent call last):\n{shown}{what}"
        )


def as_users(name: str, load: Callable[[], T], missing: str | None) -> T:
    """`load()`; an exception the user's module raises becomes `UserCodeError`, but
    a ModuleNotFoundError for `missing` itself (or a package on its way) passes."""
    try:
        return load()
    except ModuleNotFoundError as err:
        dotted = f"{missing}."
        if missing and err.name and dotted.startswith(f"{err.name}."):
            raise
        raise UserCodeError(name, err) from None
    except (Exception, SystemExit) as err:
        raise UserCodeError(name, err) from None


def import_path(path: Path) -> ModuleType:
    """The module at `path`, imported as `import` would find it.

    Raises:
        ImportError: another module of the same dotted name is imported already.
        Whatever the module raises while it runs.
    """
    path = path.resolve()
    package = _package_root(path)
    if package is not None:  # pkg/sub/model.py -> pkg.sub.model, from pkg's parent
        parts = path.with_suffix("").relative_to(package).parts
        if str(package) not in sys.path:
            sys.path.insert(0, str(package))
        module = importlib.import_module(".".join(parts))
        if Path(module.__file__ or "").resolve() != path:
            raise ImportError(
                f"{path} is {'.'.join(parts)} in its package, but a module of that name "
                f"is already imported from {module.__file__}: rename the package."
            )
        return module
    name = path.stem
    taken = sys.modules.get(name)
    if (
        taken is not None
        and Path(getattr(taken, "__file__", "") or "").resolve() != path
    ):
        name = f"_jaxtour_draw_{path.stem}"  # by path: never shadows an imported module
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))  # its sibling imports work, as `python`
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}: not a Python file.")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs, as `import` does
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _package_root(path: Path) -> Path | None:
    """The folder above `path`'s outermost package, or None outside a package."""
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return None
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder.parent
