"""Numbers and folders on a command line, checked where argparse reads them (`type=`).

A bad value becomes a usage error that names the option, its range and what was given:
``jaxtour train: error: argument --port: must be an integer from 1 to 65535; got
'99999'``, exit code 2, before anything starts.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any


def bounded(
    kind: type, low: float, high: float, *, above: bool = False
) -> Callable[[str], float]:
    """An argparse `type=`: `kind` (int or float) from `low` to `high` (or just above
    `low` when `above`), else a usage error naming the range and what was given.

    Example:
        >>> port = bounded(int, 1, 65_535)
        >>> port("8080")
        8080
        >>> port("99999")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be an integer from 1 to 65535; got '99999'
        >>> bounded(float, 0, 100, above=True)("0")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must be a number above 0 up to 100; got '0'
    """
    noun = "an integer" if kind is int else "a number"
    show = str if kind is int else (lambda v: f"{v:g}")
    span = (
        f"above {show(low)} up to {show(high)}"
        if above
        else f"from {show(low)} to {show(high)}"
    )

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            value = None
        inside = value is not None and (low < value if above else low <= value)
        if not (inside and value <= high):
            raise argparse.ArgumentTypeError(f"must be {noun} {span}; got {text!r}")
        return value

    parse.__name__ = kind.__name__  # argparse's name for the type in other messages
    return parse


def add_number(
    parser: argparse._ActionsContainer,
    flag: str,
    kind: type,
    low: float,
    high: float,
    help_text: str | None = None,
    *,
    above: bool = False,
    **options: Any,
) -> None:
    """An option taking one number, checked by `bounded(kind, low, high, above=)`;
    `options` (``default=``, ``metavar=``) go to `add_argument` as they are."""
    kind_of = bounded(kind, low, high, above=above)
    parser.add_argument(flag, type=kind_of, help=help_text, **options)


def folder(text: str) -> Path:
    """An argparse `type=` for a folder to write into: an empty path (``--build-dir ""``,
    a shell variable that was never set) is a usage error, not the current folder.

    Example:
        >>> folder("build").name
        'build'
        >>> folder("")
        Traceback (most recent call last):
        argparse.ArgumentTypeError: must name a folder, e.g. build (. is ...); got ''
    """
    if not text.strip():
        raise argparse.ArgumentTypeError(
            f"must name a folder, e.g. build (. is the current one); got {text!r}"
        )
    return Path(text)
