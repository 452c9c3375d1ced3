"""`jaxtour lessons [DIR]`: the lessons that came with jaxtour, written into a folder to open.

Students get the student notebooks (exercises, no answers); `--instructor` writes the
instructor notebooks (with solutions and checks) and the lesson sources.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxtour._argtypes import folder
from jaxtour.cli import add_flag


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir",
        nargs="?",
        type=folder,
        default=Path("lessons"),
        metavar="DIR",
        help="folder to write them into (default: ./lessons)",
    )
    add_flag(
        parser, "--force", "replace lessons already in DIR (your edits there are lost)"
    )
    add_flag(
        parser,
        "--instructor",
        "the instructor notebooks, with the solutions, and the lesson sources",
    )


def run(args: argparse.Namespace) -> int:
    from jaxtour import lesson

    which = lesson.View.INSTRUCTOR if args.instructor else lesson.View.STUDENT
    clashes = edited(args.dir, lesson.lesson_files(which))
    if clashes and not args.force:
        raise FileExistsError(
            f"{args.dir} already holds {len(clashes)} lesson files that differ from "
            f"jaxtour's ({clashes[0]}, ...); your edits there would be lost. Pass "
            "--force to replace them (a symlink is replaced by the file, never written "
            "through), or another DIR."
        )
    written = lesson.copy_lessons(args.dir, which)
    print(f"wrote {len(written)} {which.value} files to {args.dir.resolve()}:")
    for path in written:
        print(f"  {path.name}")
    print(f"\nOpen them with: jupyter lab {args.dir}")
    if args.instructor:
        print(f"Build them into decks with: jaxtour tour --notebooks {args.dir}")
    return 0


def edited(folder: Path, files: dict[str, bytes]) -> list[str]:
    """The files of `files` already in `folder` that are not those bytes: the user's
    edits, or a symlink (dangling or not) where a lesson goes."""
    return [
        name
        for name, data in files.items()
        if (folder / name).is_symlink()
        or ((folder / name).exists() and not _same(folder / name, data))
    ]


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.is_file() and path.read_bytes() == data
    except OSError:
        return False
