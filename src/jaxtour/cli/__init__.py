"""The `jaxtour` command: one module per subcommand, imported only when it runs."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from jaxtour._argtypes import folder
from jaxtour.cli import _ctrl_c

DEBUG_VARIABLE = "JAXTOUR_DEBUG"
CLOSED_PIPE = 128 + 13  # a shell's status for a process stopped by SIGPIPE (13)

# name -> (module holding `add_arguments(parser)` and `run(args) -> int`, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "doctor": (
        "jaxtour.cli._doctor",
        "show JAX, devices, the Graphviz renderer and MNIST",
    ),
    "tour": (
        "jaxtour.cli._tour",
        "run the whole tour: diagrams, notebooks, slides into build/",
    ),
    "slides": (
        "jaxtour.cli._slides",
        "every lesson as an offline reveal.js deck in build/slides/",
    ),
    "draw": (
        "jaxtour.cli._draw",
        "draw one diagram (jaxpr, hlo, pipeline, ...) to a file",
    ),
    "train": (
        "jaxtour.cli._train",
        "train the MNIST MLP; writes its learning curve and params",
    ),
    "compare": (
        "jaxtour.cli._compare",
        "time an MLP epoch: NumPy f64/f32, JAX eager, jit, scan",
    ),
    "exercises": (
        "jaxtour.cli._exercises",
        "list the lessons' exercises and what each practises",
    ),
    "lessons": (
        "jaxtour.cli._lessons",
        "copy the lessons into a folder to open (--instructor: with solutions and sources)",
    ),
}
# Commands that cannot start without these modules (import names) of the notebook extra.
NEEDS: dict[str, tuple[str, ...]] = {"slides": ("jupytext", "nbformat", "nbconvert")}


def add_flag(parser: argparse._ActionsContainer, name: str, help_text: str) -> None:
    """An on/off option of a subcommand: given, `name` sets its value to True."""
    parser.add_argument(name, action="store_true", help=help_text)


def add_build_dir(parser: argparse.ArgumentParser) -> None:
    """A subcommand's `--build-dir`: the folder it writes into; empty is a usage error."""
    parser.add_argument(
        "--build-dir", type=folder, help="output folder (default: ./build)"
    )


def build_parser() -> argparse.ArgumentParser:
    from jaxtour._version import __version__

    parser = argparse.ArgumentParser(
        prog="jaxtour", description="See what JAX does to your code: the jaxtour kit."
    )
    parser.add_argument("--version", action="version", version=f"jaxtour {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(module=module)
        importlib.import_module(module).add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `jaxtour` console script (and of ``python -m jaxtour``).

    Args:
        argv: the command's arguments; None: ``sys.argv[1:]``, and the process is the
            command, so that after Ctrl-C it ends at once (`_ctrl_c.exit_now`).

    Returns:
        the exit status: 0, 1 or 2 from the command; 130 after Ctrl-C, even one that a
        library swallowed; `CLOSED_PIPE` when the reader of stdout went away
        (`jaxtour exercises | head`), quietly.
    """
    with _ctrl_c.handled() as ctrl_c:
        try:
            status = _run(argv, ctrl_c)
            sys.stdout.flush()  # a reader gone away shows here, not at the exit
        except BrokenPipeError:
            if not _stdout_reader_gone():
                raise  # another pipe (a child process's): a fault to show, not to hide
            return _closed_pipe()
    if ctrl_c.pressed and argv is None:
        _ctrl_c.exit_now()
    return status


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe whose reading end is closed (poll says POLLERR)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll (Windows), no descriptor
        return True


def _closed_pipe() -> int:
    """Stop quietly, as `yes` does in `yes | head`: stdout's reader has gone.

    What is left in stdout's buffer is dropped: stdout is pointed at the null device, so
    that the interpreter's last flush has nowhere to fail.
    """
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)
    return CLOSED_PIPE


def _run(argv: list[str] | None, ctrl_c: _ctrl_c.CtrlC) -> int:
    try:
        status = _command(build_parser().parse_args(argv), ctrl_c)
    except KeyboardInterrupt as err:  # while parsing, or in a handler below
        return ctrl_c.report(err)
    # a KeyboardInterrupt that a library swallowed (a gc callback's) still ends it so
    return ctrl_c.report() if ctrl_c.pressed and not ctrl_c.reported else status


def _command(args: argparse.Namespace, ctrl_c: _ctrl_c.CtrlC) -> int:
    from jaxtour.cli import _extras

    try:
        _extras.require(f"jaxtour {args.command}", NEEDS.get(args.command, ()))
        return importlib.import_module(args.module).run(args) or 0
    except ctrl_c.caught() as err:  # Ctrl-C, or any fault after it: a kernel died of it
        return ctrl_c.report(err)
    except _extras.MissingExtraError as err:
        print(f"jaxtour {args.command}: error: {err}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as err:
        extra = _extras.extra_of_module(err.name)
        if extra is None or os.environ.get(DEBUG_VARIABLE):
            raise
        print(
            f"jaxtour {args.command}: error: {err.name} is missing, from the {extra!r} "
            f"extra: {_extras.install_line(extra)}",
            file=sys.stderr,
        )
        return 1
    except BrokenPipeError:
        raise  # not the command's error: stdout's reader left (`main` stops quietly)
    except (OSError, ValueError, TypeError, RuntimeError) as err:
        # What went wrong and what to do, without a traceback (JAXTOUR_DEBUG=1 shows it).
        if os.environ.get(DEBUG_VARIABLE):
            raise
        print(f"jaxtour {args.command}: error: {err}", file=sys.stderr)
        print(f"(set {DEBUG_VARIABLE}=1 to see the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
