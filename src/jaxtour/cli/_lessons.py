"""`jaxtour lessons [DIR]`: the lessons that came with jaxtour, copied into a folder to open."""

from __future__ import annotations

import argparse
from pathlib import Path

from jaxtour.cli import add_flag


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=Path("lessons"),
        metavar="DIR",
        help="folder to write them into (default: ./lessons)",
    )
    add_flag(
        parser, "--force", "replace lessons already in DIR (your edits there are lost)"
    )


def run(args: argparse.Namespace) -> int:
    from jaxtour._lessons import copy_lessons

    clashes = edited(args.dir)
    if clashes and not args.force:
        raise FileExistsError(
            f"{args.dir} already holds {len(clashes)} lesson files that differ from "
            f"jaxtour's ({clashes[0]}, ...); your edits there would be lost. Pass "
            "--force to replace them (a symlink is replaced by the file, never written "
            "through), or another DIR."
        )
    written = copy_lessons(args.dir)
    print(f"wrote {len(written)} files to {args.dir.resolve()}:")
    for path in written:
        print(f"  {path.name}")
    print(f"\nOpen them with: jupyter lab {args.dir}")
    print(f"Build them into decks with: jaxtour tour --notebooks {args.dir}")
    return 0


def edited(folder: Path) -> list[str]:
    """The lessons in `folder` a copy would replace that are not jaxtour's own bytes:
    the user's edits, or a symlink (dangling or not) where a lesson goes."""
    from jaxtour._lessons import LESSON_PATTERNS, packaged_lessons_dir

    source = packaged_lessons_dir()
    ours = sorted(p for pattern in LESSON_PATTERNS for p in source.glob(pattern))
    return [
        p.name
        for p in ours
        if (folder / p.name).is_symlink()
        or ((folder / p.name).exists() and not _same(folder / p.name, p))
    ]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.is_file() and a.read_bytes() == b.read_bytes()
    except OSError:
        return False
