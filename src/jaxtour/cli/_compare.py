"""`jaxtour compare`: the speed ladder, NumPy float64 to jaxtour's compiled epoch."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jaxtour import paths
from jaxtour._argtypes import add_number
from jaxtour.cli import add_build_dir, add_flag

if TYPE_CHECKING:
    from jaxtour.data import Mnist


QUICK = {"rounds": 1, "train_size": 128 * 8, "eager_steps": 3}
FULL = {"rounds": 3, "train_size": None, "eager_steps": 40}
# Bounds of the numbers asked for: an epoch of fewer images than one batch has no step.
BATCH, MNIST_TRAIN, MAX_ROUNDS = 128, 60_000, 1_000
OUT = "mlp"  # the folder in the build folder that ladder.png and ladder.json go to


def add_arguments(parser: argparse.ArgumentParser) -> None:
    rounds = "each variant runs once per round; medians are reported (3)"
    add_number(parser, "--rounds", int, 1, MAX_ROUNDS, rounds)
    size = "time epochs of the first N images, scaled to 60,000 (smoke test)"
    add_number(parser, "--train-size", int, BATCH, MNIST_TRAIN, size)
    eager = "steps timed for JAX without jit, scaled to an epoch (40)"
    add_number(parser, "--eager-steps", int, 1, MNIST_TRAIN // BATCH, eager)
    add_flag(parser, "--quick", f"one tiny round ({QUICK}), as JAXTOUR_QUICK=1 does")
    parser.add_argument(
        "--data-dir", help="MNIST folder (default: $JAXTOUR_DATA or the cache)"
    )
    add_build_dir(parser)
    add_flag(
        parser,
        "--json",
        "print only the figures on stdout, as one JSON line (what ladder.json holds); "
        "the progress, the table and the files written go to stderr",
    )


def run(args: argparse.Namespace) -> int:
    from jaxtour._files import check_folder
    from jaxtour.mlp import load_mnist

    options = dict(QUICK if args.quick or paths.quick() else FULL)
    options.update({k: v for k in options if (v := getattr(args, k)) is not None})
    build_dir = args.build_dir or paths.build_dir()
    check_folder(build_dir / OUT)  # a file in the way is said now, not after the timing
    # the text for people; under --json it goes to stderr, and stdout is the JSON only
    to_people = contextlib.redirect_stdout(sys.stderr) if args.json else None
    with to_people or contextlib.nullcontext():
        result, written = ladder(build_dir, load_mnist(args.data_dir), **options)
        for path in written:
            print(f"wrote {path}")
    if args.json:
        print(json.dumps(result))
    return 0


def ladder(build_dir: Path, data: Mnist, **options: Any) -> tuple[dict, list[Path]]:
    """Run the ladder, print its table, write ladder.png and ladder.json under build/mlp."""
    from jaxtour._files import write_atomically
    from jaxtour.mlp import format_ladder, plot_ladder, run_ladder

    result = run_ladder(data, **options)
    print(format_ladder(result))
    out = build_dir / OUT
    picture = plot_ladder(result).save(out / "ladder.png")
    record = out / "ladder.json"
    write_atomically(record, json.dumps(result, indent=1).encode())
    return result, [picture, record]


def tour_step(build_dir: Path) -> list[Path]:
    """The tour's `compare` step: three rounds, or one tiny round under JAXTOUR_QUICK=1."""
    from jaxtour.mlp import load_mnist

    options = QUICK if paths.quick() else {"rounds": 3}
    return ladder(build_dir, load_mnist(), **options)[1]
