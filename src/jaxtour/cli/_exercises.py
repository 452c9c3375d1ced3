"""`jaxtour exercises`: the tasks the lessons set; and the tour step writing students'
and instructors' notebooks."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

from jaxtour._argtypes import folder
from jaxtour._table import Table
from jaxtour.cli import add_flag

COLUMNS = ("lesson", "exercise", "title", "practises")
WIDTH = 120  # characters of the listing: the practises column wraps to fit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lesson",
        metavar="NN",
        type=lesson_number,
        help="only this lesson's exercises (its number, e.g. 02)",
    )
    add_flag(
        parser,
        "--markdown",
        "print a Markdown table (for a README or a lesson's closing note)",
    )
    parser.add_argument(
        "--nbgrader",
        metavar="DIR",
        type=folder,
        help="write an nbgrader course into DIR: nbgrader_config.py and "
        "source/<lesson>/<lesson>.ipynb with solution regions and autograded tests",
    )
    parser.add_argument(
        "--points",
        metavar="NAME=N",
        action="append",
        default=[],
        help="with --nbgrader: what exercise NAME is worth (default: its registered "
        "points, 1 unless its lesson says otherwise); repeat for several",
    )
    parser.add_argument(
        "--own-exercises",
        metavar="DIR",
        type=Path,
        help="the course's own exercises: DIR holds lessons NN_topic.py (task, stub, "
        "solution) and .py modules registering their checkers with @checks; listed, "
        "and with --nbgrader exported and graded beside the lessons' (the checkers are "
        "copied to the course's checkers/)",
    )
    parser.add_argument(
        "--notebooks",
        metavar="DIR",
        help="the lessons' folder (NN_topic.py) for --nbgrader; default: ./notebooks "
        "in a checkout, else the lessons that came with jaxtour",
    )
    parser.set_defaults(exercises_parser=parser)


def lesson_number(text: str) -> str:
    """An argparse `type=`: a lesson's number, one or two digits, as two ("2" -> "02")."""
    if not re.fullmatch(r"\d\d?", text.strip()):
        raise argparse.ArgumentTypeError(
            f"must be a lesson's number such as 02; got {text!r}"
        )
    return text.strip().zfill(2)


def run(args: argparse.Namespace) -> int:
    from jaxtour import exercises

    if args.points and args.nbgrader is None:
        # a listing has no points to set: ignoring them would hide a forgotten --nbgrader
        args.exercises_parser.error(
            "--points sets what an exercise is worth in an nbgrader course: give "
            "--nbgrader DIR too, or leave --points out"
        )
    if args.own_exercises is not None:
        from jaxtour.exercises import load_checkers

        load_checkers(args.own_exercises)
    if args.lesson is not None:
        _require_lesson(args)
    if args.nbgrader is not None:
        return _nbgrader(args, _points(args.points, args.exercises_parser))
    chosen = exercises.exercises()
    if args.lesson is not None:
        chosen = exercises.for_lesson(args.lesson)
    if not chosen:
        which = f"lesson {args.lesson}" if args.lesson else "any lesson"
        print(f"No exercises in {which} yet.")
        return 0
    rows = [(ex.number, ex.name, ex.title, ex.practises) for ex in chosen]
    if args.markdown:
        print(markdown_table(rows))
        return 0
    print(table(rows))
    print(
        f"\n{len(chosen)} exercises. In a lesson, write the function, then run "
        "`check(ex_…)` to see what is right or wrong."
    )
    return 0


def _require_lesson(args: argparse.Namespace) -> None:
    """A usage error (exit 2) for `--lesson NN` where no lesson NN is: the lessons read
    (--notebooks, or the default ones), the course's own and any with exercises."""
    from jaxtour import exercises, lesson

    number = args.lesson
    folders = [args.notebooks] + ([args.own_exercises] if args.own_exercises else [])
    found = {s.stem[:2] for folder in folders for s in lesson.find_lessons(folder)}
    found |= {ex.number for ex in exercises.exercises()}
    if number not in found:
        args.exercises_parser.error(
            f"there is no lesson {number}; the lessons are "
            f"{', '.join(sorted(found)) or 'none'}"
        )


def _nbgrader(args: argparse.Namespace, points: dict[str, float]) -> int:
    from jaxtour import lesson
    from jaxtour.exercises import (
        left_out_of_course,
        own_lessons,
        write_nbgrader_course,
    )

    sources = lesson.find_lessons(args.notebooks)
    own = args.own_exercises
    if not sources and not (own is not None and own_lessons(own)):
        raise FileNotFoundError(
            f"No lessons in {args.notebooks}: --notebooks takes a folder of lesson "
            f"sources named NN_topic.py ({lesson.LESSON_GLOB}), such as a clone's "
            "notebooks/ or what `jaxtour lessons --instructor DIR` writes (or give "
            "--own-exercises DIR). Leave it out to use the lessons that came with jaxtour."
        )
    if args.lesson is not None:
        sources = [s for s in sources if s.stem[:2] == args.lesson]
    folder: Path = args.nbgrader
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--nbgrader takes a folder; {folder} is a file.")
    written, kept = write_nbgrader_course(sources, folder, points, own)
    for source in [*sources, *(own_lessons(own) if own is not None else [])]:
        for name, reads in left_out_of_course(source).items():
            print(
                f"Left {name} ({source.stem}) out of the course: its solution reads "
                f"{', '.join(reads)}, which only the lesson computes. Students do it in "
                "the lesson, where check() gives feedback."
            )
    for path in kept:
        print(
            f"Kept {path}: it differs from what jaxtour writes (your edits?); delete it "
            "to have it written again."
        )
    lessons = [p.parent.name for p in written if p.suffix == ".ipynb"]
    if not lessons:
        print(
            f"Wrote no assignment in {folder}: no lesson with exercises to (re)write."
        )
        return 0
    print(
        f"Wrote an nbgrader course in {folder}: nbgrader_config.py and "
        f"{len(lessons)} assignment{'s' if len(lessons) > 1 else ''} "
        f"({', '.join(lessons)}).\n"
        f"Next: cd {folder} && nbgrader generate_assignment {lessons[0]}"
    )
    return 0


def _points(said: list[str], parser: argparse.ArgumentParser) -> dict[str, float]:
    """`--points NAME=N` as {NAME: N}; a usage error for an unknown NAME or N not > 0."""
    from jaxtour.exercises import find

    points = {}
    for item in said:
        name, _, number = item.partition("=")
        try:
            value = float(number)
        except ValueError:
            value = 0.0
        if find(name) is None or not value > 0:
            parser.error(
                f"--points takes an exercise's name and a number above 0, e.g. "
                f"ex_time_call=2; got {item!r}"
            )
        points[name] = value
    return points


def markdown_table(rows: Sequence[tuple[str, ...]]) -> str:
    """`rows` as a Markdown table; the exercise's name in code font."""
    cells = [(number, f"`{name}`", *rest) for number, name, *rest in rows]
    return Table(COLUMNS, cells).markdown()


def table(rows: Sequence[tuple[str, ...]]) -> str:
    """`rows` as a plain-text table under COLUMNS' headings; long cells wrap."""
    cells = [[cell.replace("`", "") for cell in row] for row in rows]
    return Table(COLUMNS, cells).text(width=WIDTH)


def tour_step(build_dir: Path, notebooks: Path | None = None) -> list[Path]:
    """Write build/instructor/ (every cell) and build/student/ (no solutions) notebooks."""
    from jaxtour import lesson

    return lesson.write_notebooks(lesson.find_lessons(notebooks), build_dir)
