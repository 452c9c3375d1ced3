"""Where jaxtour reads and writes: the build folder and the MNIST folder."""

from __future__ import annotations

import os
from pathlib import Path

from jaxtour._files import user_path

DATA_VARIABLE = "JAXTOUR_DATA"
BUILD_VARIABLE = "JAXTOUR_BUILD"
QUICK_VARIABLE = "JAXTOUR_QUICK"


def quick() -> bool:
    """True under JAXTOUR_QUICK=1: smaller data and fewer epochs, same assertions."""
    return os.environ.get(QUICK_VARIABLE, "").strip().lower() in (
        "1",
        "true",
        "yes",
        "on",
    )


def build_dir() -> Path:
    """Where the tour writes: $JAXTOUR_BUILD, else ./build."""
    return Path(os.environ.get(BUILD_VARIABLE) or "build")


def cache_home() -> Path:
    """The user's cache root, XDG-aware (~/.cache unless $XDG_CACHE_HOME says otherwise)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) if xdg else Path.home() / ".cache"


def mnist_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The MNIST folder: the argument, else $JAXTOUR_DATA, else <cache>/jaxtour/mnist."""
    if data_dir is not None:
        return user_path(data_dir)
    if os.environ.get(DATA_VARIABLE):
        return user_path(os.environ[DATA_VARIABLE])
    return cache_home() / "jaxtour" / "mnist"
