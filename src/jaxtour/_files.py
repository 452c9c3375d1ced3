"""Files the kit writes: whole or not at all, and only inside the folder asked for.

Every picture, deck, checkpoint, lesson and copied asset the kit saves goes through
`write_atomically` (or `copy_atomically`, `copy_tree`): the bytes go to a temporary
name beside the target, which is then renamed over it. So a full disk, a killed process
or Ctrl-C leaves the old file (or none), never half of one; and a target that is a
symlink is *replaced* by the new file, never written through, so a link cannot make the
kit overwrite a file elsewhere. A write that fails raises `WriteError`, which names the
path and what to do.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

# errno -> what to do about it, for the message of a failed write
ADVICE = {
    errno.ENOSPC: "no space left on that disk. Free some space, or write elsewhere",
    errno.EDQUOT: "your disk quota is used up. Free some space, or write elsewhere",
    errno.EACCES: "permission denied. Choose a folder you can write to, or fix its "
    "permissions",
    errno.EPERM: "not permitted. Choose a folder you can write to, or fix its permissions",
    errno.EROFS: "the disk is read-only. Write to another folder",
    errno.EISDIR: "a folder is there, where the file goes. Choose another name, or "
    "move the folder",
}
# A file where a folder should be: the message names that file (see `_advice`).
IN_THE_WAY = (errno.EEXIST, errno.ENOTDIR)


class WriteError(OSError):
    """A file could not be written; nothing was left half-written at its path."""

    def __init__(self, path: Path, err: OSError) -> None:
        what = _advice(path, err)
        self.message = f"Could not write {path}: {what}. Nothing half-written was left."
        super().__init__(err.errno, self.message, str(path))

    def __str__(self) -> str:
        return self.message


def user_path(path: str | os.PathLike) -> Path:
    """A path as the user wrote it, read as a shell reads it: ``~/x.svg`` is the home
    folder's ``x.svg``, not a folder named "~" in the current one."""
    return Path(path).expanduser()


def _advice(path: Path, err: OSError) -> str:
    if err.errno in IN_THE_WAY:
        # the file in the way: `path` itself (EEXIST) or a folder above it (ENOTDIR)
        for here in (path, *path.parents):
            if here.exists() and not here.is_dir():
                return (
                    f"{here} is a file, where a folder should be. Move or rename it, "
                    "or write elsewhere"
                )
    return ADVICE.get(err.errno or 0, f"{err.strerror or err}")


def make_folder(folder: Path) -> None:
    """As ``folder.mkdir(parents=True, exist_ok=True)``.

    Raises:
        WriteError: the folder cannot be made (a file is in the way, no permission);
            the message names it and says what to do.
    """
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise WriteError(folder, err) from None


def check_folder(folder: Path) -> None:
    """Raise the `WriteError` that `make_folder(folder)` would, but make nothing.

    For a command that writes only after minutes of work (training, timing): a file
    in the way, a folder above it that it cannot make a folder in, or the folder itself
    read-only, is then reported before the work, and a command that fails later leaves
    no empty folder behind.

    Raises:
        WriteError: as `make_folder`.
    """
    here = folder  # the nearest of `folder` and the folders above it that exists
    while not here.exists() and here != here.parent:
        here = here.parent
    if not here.is_dir():  # a file in the way: `folder` itself or a folder above it
        in_the_way = errno.EEXIST if here == folder else errno.ENOTDIR
        raise WriteError(folder, OSError(in_the_way, os.strerror(in_the_way)))
    if not os.access(here, os.W_OK | os.X_OK):  # `folder` itself too: read-only
        raise WriteError(folder, PermissionError(errno.EACCES, "Permission denied"))


def make_staging_folder(parent: Path, prefix: str) -> Path:
    """As ``tempfile.mkdtemp(prefix=prefix, dir=parent)``, but with the mode a plain
    ``mkdir`` gives (0777 less the umask), not 0700: a folder filled here and then
    renamed into place (a cache entry) is for everyone who may read `parent`, as a
    file written by `write_atomically` is.
    """
    for _ in range(100):  # as tempfile: another name when one is taken
        staging = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            staging.mkdir()  # the umask applies here, with no reading of it
        except FileExistsError:
            continue
        return staging
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(parent))


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file beside it, then rename it in place.

    A symlink at `path` is replaced by the file (the file it pointed to is untouched).

    Raises:
        WriteError: the folder cannot be made or written (full disk, no permission);
            the message names `path`, and no partial file remains.
    """
    _write(path, lambda out: out.write(data))


def copy_atomically(source: Path, path: Path) -> None:
    """As `shutil.copyfile`, but whole or not at all, and replacing a symlink at `path`.

    Raises:
        WriteError: as `write_atomically`.
    """
    with open(source, "rb") as inp:
        _write(path, lambda out: shutil.copyfileobj(inp, out))


def copy_tree(source: Path, target: Path) -> list[Path]:
    """Copy the folder `source` into `target` file by file with `copy_atomically`.

    Files already in `target` stay unless `source` has one of the same name. A
    symlink at `target` or inside it, where a file or folder goes, is replaced by a
    real one, so nothing outside `target` is written. Returns the files written.

    Raises:
        WriteError: as `write_atomically`.
    """
    written = []
    for folder, _, files in os.walk(source):
        into = target / Path(folder).relative_to(source)
        _real_folder(into, target)
        for name in sorted(files):
            copy_atomically(Path(folder) / name, into / name)
            written.append(into / name)
    return written


def _real_folder(folder: Path, top: Path) -> None:
    """Make `folder`; a symlink on its way from `top` is replaced by a real folder."""
    parts = folder.relative_to(top).parts
    for depth in range(len(parts) + 1):
        here = top.joinpath(*parts[:depth])
        if here.is_symlink():
            here.unlink()
        make_folder(here)


def _write(path: Path, fill: Callable[..., Any]) -> None:
    make_folder(path.parent)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{path.name}.", suffix=".part", dir=path.parent
        )
    except OSError as err:
        raise WriteError(path, err) from None
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a file is for sharing
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise WriteError(path, err) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
