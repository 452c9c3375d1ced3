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
    from jaxtour._lessons import LESSON_PATTERNS, copy_lessons, packaged_lessons_dir

    names = sorted(
        p.name
        for pattern in LESSON_PATTERNS
        for p in packaged_lessons_dir().glob(pattern)
    )
    clashes = [name for name in names if (args.dir / name).exists()]
    if clashes and not args.force:
        raise FileExistsError(
            f"{args.dir} already holds {len(clashes)} lesson files ({clashes[0]}, ...); "
            "your edits there would be lost. Pass --force to replace them, or another DIR."
        )
    written = copy_lessons(args.dir)
    print(f"wrote {len(written)} files to {args.dir.resolve()}:")
    for path in written:
        print(f"  {path.name}")
    print(f"\nOpen them with: jupyter lab {args.dir}")
    print(f"Build them into decks with: jaxtour tour --notebooks {args.dir}")
    return 0
