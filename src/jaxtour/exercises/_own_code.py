"""Which functions are the student's own: Python functions (a def, a lambda) whose code
lies outside the standard library, the installed packages and the kit. Bans and
requirements read only those (`_probes.own_functions`), never JAX's or the kit's code.
"""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
import types
from typing import Any


def is_function(fn: Any) -> bool:
    """Whether `fn` is a Python function (a lambda, a def): it has code to read."""
    return issubclass(type(fn), types.FunctionType)


def is_own(fn: Any) -> bool:
    """Whether `fn` is a Python function written outside the libraries and the kit."""
    if not is_function(fn):
        return False
    code, scope = fn.__code__, fn.__globals__
    files: list[Any] = [code.co_filename]
    module = sys.modules.get(str(scope.get("__name__")))
    if getattr(module, "__dict__", None) is scope:  # code a library made (`<string>`)
        files.append(getattr(module, "__file__", None))
    return not any(_in_library(f) for f in files if isinstance(f, str))


@functools.cache
def _in_library(file: str) -> bool:
    """Whether `file` lies in the standard library, an installed package or the kit
    (a notebook cell's pseudo-file, `<cell 3>`, lies in none)."""
    return os.path.isabs(file) and os.path.realpath(file).startswith(_library_folders())


@functools.cache
def _library_folders() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    folders = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    for module in ("jax", "jaxlib", "numpy", "jaxtour"):  # wherever they were found
        file = getattr(sys.modules.get(module), "__file__", None)
        if file:
            folders.add(os.path.dirname(file))
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders)
