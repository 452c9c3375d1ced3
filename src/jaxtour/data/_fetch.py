"""The four MNIST files in their folder: each checked, or fetched from the mirrors.

`load_mnist` calls `files_in` once; this module walks the files and asks `_download`
for what is missing, so the walk goes one way (`_mnist` -> `_fetch` -> `_download`).
"""

from __future__ import annotations

import warnings
from pathlib import Path

from jaxtour import paths
from jaxtour.data._download import (
    FILES,
    ChecksumError,
    Mirrors,
    MnistFile,
    check,
    check_writable,
    remove_leftovers,
)


class MnistUnavailableError(RuntimeError):
    """MNIST is not on disk (or is corrupt) and could not be downloaded."""


def files_in(folder: Path, mirrors: Mirrors) -> list[Path]:
    """The four files in `folder`, in `FILES` order, each verified or freshly fetched.

    Raises:
        MnistUnavailableError: a file is missing or corrupt and no mirror could supply
            it, a directory stands where a file should be, a file cannot be read, or
            the folder cannot be written.
    """
    if folder.exists() and not folder.is_dir():
        raise MnistUnavailableError(_not_a_folder_message(folder))
    remove_leftovers(folder)
    for spec in FILES:  # no download could be renamed onto a directory: ask no mirror
        if (folder / spec.name).is_dir():
            raise MnistUnavailableError(_in_the_way_message(folder / spec.name, spec))
    created = _missing_folders(folder)
    try:
        return [_ensure(spec, folder, mirrors) for spec in FILES]
    except BaseException:  # a failed (or stopped) download leaves no empty folder
        _remove_empty(created)
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """`folder` and its parents that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:  # deepest first; one that holds anything stays
        try:
            folder.rmdir()
        except OSError:
            return


def _ensure(spec: MnistFile, folder: Path, mirrors: Mirrors) -> Path:
    path = folder / spec.name
    problem = "missing"
    if path.is_file():
        try:
            check(path, spec)
            return path
        except ChecksumError as err:
            problem = f"corrupt: {err}"
            warnings.warn(
                f"{err}; not using it, downloading a fresh copy.", stacklevel=4
            )
        except PermissionError as err:  # not ours to replace: the user's to fix
            raise MnistUnavailableError(_unreadable_message(path, err)) from None
    try:
        check_writable(folder)
    except OSError as err:  # a read-only folder, or a file where the folder should be
        raise MnistUnavailableError(_unwritable_message(folder, err)) from None
    fetched, failures = mirrors.fetch(spec, folder)
    if fetched is None:
        raise MnistUnavailableError(
            _unavailable_message(folder, spec, problem, failures)
        )
    return fetched


def _not_a_folder_message(path: Path) -> str:
    return (
        f"MNIST cannot be loaded: {path} is a file, not a folder. Point "
        f"{paths.DATA_VARIABLE} (or --data-dir) at the folder that holds the four files, "
        "or at a new one they can be downloaded to."
    )


def _in_the_way_message(path: Path, spec: MnistFile) -> str:
    return (
        f"MNIST cannot be loaded: {path} is a directory, not the file {spec.name}. "
        "Remove or move that directory (the file is then downloaded in its place), or "
        f"set {paths.DATA_VARIABLE} to another folder (one holding the four files, or "
        "one they can be downloaded to)."
    )


def _unreadable_message(path: Path, err: OSError) -> str:
    return (
        f"MNIST cannot be loaded: cannot read {path}: {err.strerror or err}. Fix its "
        f"permissions so that you can read it, or set {paths.DATA_VARIABLE} to a folder "
        "holding readable copies of the four files (or one they can be downloaded to)."
    )


def _unwritable_message(folder: Path, err: OSError) -> str:
    return (
        f"MNIST cannot be downloaded: cannot write to {folder}: {err.strerror or err}. "
        f"Make that folder writable, or set {paths.DATA_VARIABLE} to a folder you can "
        "write to (or one that already holds the four files)."
    )


def _unavailable_message(
    folder: Path, spec: MnistFile, problem: str, failures: list[str]
) -> str:
    names = ", ".join(f.name for f in FILES)
    tried = "\n".join(f"  - {line}" for line in failures) or "  (no mirrors given)"
    return (
        f"MNIST is not usable in {folder}: {spec.name} is {problem}, and it could not be "
        f"downloaded:\n{tried}\nPut the four original files ({names}) in {folder}, or set "
        f"{paths.DATA_VARIABLE} to a folder holding them."
    )
