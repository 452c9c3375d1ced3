"""Usage errors: a value the command cannot use is said before any work, exit code 2."""

import importlib
from pathlib import Path

import pytest

from jaxtour.cli import COMMANDS, main


@pytest.fixture
def ran(monkeypatch):
    """Each command's `run` replaced: the parsed arguments it was called with."""
    calls = []

    def stand_in(args):
        calls.append(args)
        return 0

    for module, _ in COMMANDS.values():
        monkeypatch.setattr(importlib.import_module(module), "run", stand_in)
    return calls


# every command that writes into a folder the user names, and the option naming it
OUTPUT_FOLDERS = [
    ("tour", "--build-dir"),
    ("slides", "--build-dir"),
    ("train", "--build-dir"),
    ("compare", "--build-dir"),
    ("exercises", "--nbgrader"),
    ("lessons", "DIR"),  # its positional argument
]


@pytest.mark.parametrize("command, option", OUTPUT_FOLDERS)
def test_an_empty_output_folder_is_a_usage_error(command, option, ran, capsys):
    flag = [] if option == "DIR" else [option]
    with pytest.raises(SystemExit) as exit_info:  # was: writing into the current folder
        main([command, *flag, ""])
    assert exit_info.value.code == 2 and ran == []
    assert capsys.readouterr().err.endswith(
        f"jaxtour {command}: error: argument {option}: must name a folder, e.g. build "
        "(. is the current one); got ''\n"
    )
    assert main([command, *flag, "."]) == 0  # the current folder, when it is said
    dest = "dir" if option == "DIR" else option[2:].replace("-", "_")
    assert getattr(ran[0], dest) == Path(".")


# a value the command refused after parsing, exit 1 before: now argparse's usage error
REFUSED = {
    "--lesson abc": (
        ["exercises", "--lesson", "abc"],
        "argument --lesson: must be a lesson's number such as 02; got 'abc'",
    ),
    "--points": (
        ["exercises", "--nbgrader", "course", "--points", "ex_nothing=2"],
        "--points takes an exercise's name and a number above 0, e.g. "
        "ex_time_call=2; got 'ex_nothing=2'",
    ),
    "--cluster --processes": (
        ["train", "--cluster", "--processes", "2"],
        "--processes starts local processes and --cluster joins a cluster's: give "
        "one of them",
    ),
    "slides LESSON": (
        ["slides", "notes.txt"],
        "argument LESSON: must be a lesson's .ipynb or its .py source (none: every "
        "lesson's deck); got 'notes.txt'",
    ),
}


@pytest.mark.parametrize("argv, message", REFUSED.values(), ids=REFUSED)
def test_a_value_refused_is_a_usage_error(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: jaxtour {argv[0]} ")
    assert err.endswith(f"\njaxtour {argv[0]}: error: {message}\n")
    assert list(tmp_path.iterdir()) == []
