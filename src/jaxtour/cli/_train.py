"""`jaxtour train`: the MNIST MLP, trained on this machine's default (or named) device."""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from jaxtour import paths
from jaxtour._argtypes import add_number
from jaxtour.cli import _ctrl_c, add_build_dir, add_flag

if TYPE_CHECKING:
    from jaxtour.launch import TrainConfig
    from jaxtour.mlp import History, Params


QUICK_TRAIN_SIZE, QUICK_EPOCHS = 12_800, 2
EPOCHS = 10
MNIST_TRAIN = 60_000  # images in MNIST's training set
MAX_PROCESSES, MAX_DEVICES = 128, 256
INIT_TIMEOUT = 60.0  # seconds, as jaxtour.launch.JoinConfig's
TARGET = 0.98  # test accuracy worth reporting the time to
OUT = "mlp"  # the folder in the build folder that the curve, params and history go to


def add_arguments(parser: argparse.ArgumentParser) -> None:
    epochs = f"passes over the data ({EPOCHS}; {QUICK_EPOCHS} under --quick)"
    add_number(parser, "--epochs", int, 1, 10_000, epochs)
    batch = "images per step (128)"
    add_number(parser, "--batch-size", int, 1, MNIST_TRAIN, batch, default=128)
    rate = "learning rate (jaxtour.mlp.LR: 0.05)"
    add_number(parser, "--lr", float, 0, 100, rate, above=True)
    momentum = "SGD momentum (jaxtour.mlp.MOMENTUM: 0.9; 0 is plain SGD)"
    add_number(parser, "--momentum", float, 0, 0.999, momentum)
    seed = "initial weights and shuffles (0)"
    add_number(parser, "--seed", int, 0, 2**32 - 1, seed, default=0)
    parser.add_argument(
        "--device",
        choices=("cpu", "gpu", "tpu"),
        help="platform to train on (default: JAX's choice)",
    )
    size = f"train on the first N images only (all; {QUICK_TRAIN_SIZE} under --quick)"
    add_number(parser, "--train-size", int, 1, MNIST_TRAIN, size)
    add_flag(parser, "--quick", "fewer epochs and images, as JAXTOUR_QUICK=1 does")
    parser.add_argument(
        "--data-dir", help="MNIST folder (default: $JAXTOUR_DATA or the cache)"
    )
    add_build_dir(parser)
    _add_process_arguments(parser)
    parser.set_defaults(train_parser=parser)


def _add_process_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "several JAX processes", "data-parallel over N local processes, as over N hosts"
    )
    started = "start N JAX processes, joined by jax.distributed.initialize"
    add_number(group, "--processes", int, 1, MAX_PROCESSES, started, metavar="N")
    devices = (
        "simulated CPU devices in each process (4 with "
        "--processes; with --cluster, the hardware's devices)"
    )
    add_number(
        group, "--devices-per-process", int, 1, MAX_DEVICES, devices, metavar="M"
    )
    add_flag(
        group,
        "--cluster",
        "be one process of a TPU pod slice, SLURM or Open MPI "
        "job: jax.distributed.initialize() finds the others",
    )
    port = "the coordinator's port on 127.0.0.1 (default: a free one)"
    add_number(group, "--port", int, 1, 65_535, port)
    wait = f"how long the processes wait for each other to join ({INIT_TIMEOUT:g})"
    add_number(
        group,
        "--init-timeout",
        float,
        0,
        86_400,
        wait,
        above=True,
        default=INIT_TIMEOUT,
        metavar="SECONDS",
    )
    add_flag(group, "--log-all", "show every process's output, not only process 0's")


def run(args: argparse.Namespace) -> int:
    from jaxtour._files import check_folder

    if args.processes is not None and args.cluster:
        args.train_parser.error(
            "--processes starts local processes and --cluster joins a "
            "cluster's: give one of them"
        )
    config = config_of(args)
    build_dir = args.build_dir or paths.build_dir()
    if args.cluster:  # only process 0 writes, and which one that is shows on joining
        return run_cluster(config, args, build_dir)
    check_folder(build_dir / OUT)  # a file in the way is said now, not after training
    if args.processes is not None:
        return run_processes(config, args, build_dir)
    from jaxtour.mlp import MnistUnavailableError, load_mnist, resolve_device, train

    try:
        # an absent GPU is reported before any download
        device = resolve_device(args.device)
        data = load_mnist(config.data_dir).subset(config.train_size)
        params, history = train(
            data,
            epochs=config.epochs,
            batch_size=config.batch_size,
            lr=config.lr,
            momentum=config.momentum,
            seed=config.seed,
            device=device,
            progress=False,
            on_epoch=lambda epoch, h: _print_epoch(epoch, config.epochs, h),
        )
    except (ValueError, MnistUnavailableError) as err:
        print(f"jaxtour train: error: {err}", file=sys.stderr)
        return 2 if isinstance(err, ValueError) else 1
    for path in write_outputs(params, history, build_dir):
        print(f"wrote {path}")
    _print_summary(history)
    return 0


def run_processes(
    config: TrainConfig, args: argparse.Namespace, build_dir: Path
) -> int:
    """`--processes N`: the data-parallel run over N local JAX processes."""
    from jaxtour.data import MnistUnavailableError
    from jaxtour.launch import train_multiprocess

    try:
        result = train_multiprocess(
            config.data_dir,
            processes=args.processes,
            devices_per_process=args.devices_per_process or 4,
            epochs=config.epochs,
            batch_size=config.batch_size,
            lr=config.lr,
            momentum=config.momentum,
            seed=config.seed,
            train_size=config.train_size,
            port=args.port,
            init_timeout=args.init_timeout,
            log_all=args.log_all,
        )
    except (ValueError, MnistUnavailableError) as err:
        print(f"jaxtour train: error: {err}", file=sys.stderr)
        return 2 if isinstance(err, ValueError) else 1
    for path in write_outputs(None, result.history, build_dir):
        print(f"wrote {path}")
    _print_summary(result.history)
    return 0


def run_cluster(config: TrainConfig, args: argparse.Namespace, build_dir: Path) -> int:
    """`--cluster`: this process is one of a cluster job's; process 0 reports."""
    import jax

    from jaxtour.launch import JoinConfig, train_cluster

    join = JoinConfig(devices=args.devices_per_process, init_timeout=args.init_timeout)
    print(
        f"joining the cluster: waiting up to {join.init_timeout:g} s for the others "
        "(--init-timeout)",
        flush=True,
    )
    history = train_cluster(config, join)  # jax.distributed.initialize(): the cluster's
    if jax.process_index() != 0:
        return 0
    for path in write_outputs(None, history, build_dir):
        print(f"wrote {path}")
    _print_summary(history)
    return 0


def tour_config(quick: bool) -> TrainConfig:
    """The tour's run: `EPOCHS` epochs on all of MNIST; fewer on fewer images when quick."""
    from jaxtour.launch import TrainConfig

    if quick:
        return TrainConfig(epochs=QUICK_EPOCHS, train_size=QUICK_TRAIN_SIZE)
    return TrainConfig(epochs=EPOCHS)


def config_of(args: argparse.Namespace) -> TrainConfig:
    """What `jaxtour train` was asked for; the tour's sizes (smaller when quick) and
    jaxtour.mlp's LR and MOMENTUM where it was not."""
    tour = tour_config(args.quick or paths.quick())
    asked = dict(
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        momentum=args.momentum,
        seed=args.seed,
        train_size=args.train_size,
        data_dir=args.data_dir,
    )
    return dataclasses.replace(
        tour, **{k: v for k, v in asked.items() if v is not None}
    )


def _print_epoch(epoch: int, epochs: int, history: History) -> None:
    _ctrl_c.stop_if_pressed()  # a Ctrl-C that a gc callback swallowed stops it here
    print(
        f"epoch {epoch + 1:>2}/{epochs}  loss {history.loss[-1]:.4f}  "
        f"train {history.train_accuracy[-1]:.4f}  test {history.test_accuracy[-1]:.4f}  "
        f"{history.epoch_seconds[-1]:.2f} s",
        flush=True,
    )


def _print_summary(history: History) -> None:
    seconds = sum(history.epoch_seconds)
    per_epoch = seconds / max(len(history.epoch_seconds), 1)
    accuracy = history.test_accuracy[-1] if history.test_accuracy else float("nan")
    print(
        f"device {history.device}; compile {history.compile_seconds:.2f} s; "
        f"training {seconds:.2f} s for {len(history.epoch_seconds)} epochs"
    )
    reached = [i for i, a in enumerate(history.test_accuracy) if a >= TARGET]
    if reached:
        print(
            f"{TARGET:.0%} test accuracy after {reached[0] + 1} epochs, "
            f"{sum(history.epoch_seconds[: reached[0] + 1]):.2f} s of training"
        )
    print(f"test_accuracy={accuracy:.4f} epoch_seconds={per_epoch:.3f}")
    _warn_if_diverged(history)


def _warn_if_diverged(history: History) -> None:
    """Say so when the loss stopped being a number: the run diverged."""
    bad = [i for i, loss in enumerate(history.loss) if not math.isfinite(loss)]
    if bad:
        print(
            f"jaxtour train: warning: the loss became {history.loss[bad[0]]} in epoch "
            f"{bad[0] + 1}: training diverged, and the parameters written hold it too. "
            "The learning rate (--lr) is the usual cause: try a smaller one.",
            file=sys.stderr,
        )


def write_outputs(
    params: Params | None, history: History, build_dir: Path
) -> list[Path]:
    """The learning curve (PNG), the params (.npz) and the history (.json) under build/mlp."""
    import json

    from jaxtour._files import write_atomically
    from jaxtour.mlp import plot_history, save_params

    out = build_dir / OUT
    curve = plot_history(history).save(out / "learning_curve.png")
    # a multi-process run's params stay in its processes (None here)
    weights = [] if params is None else [save_params(params, out / "params.npz")]
    record = out / "history.json"
    write_atomically(record, json.dumps(history.to_dict(), indent=1).encode())
    return [curve, *weights, record]


def tour_step(build_dir: Path) -> list[Path]:
    """The tour's `train` step: 10 epochs, or a short run under JAXTOUR_QUICK=1."""
    from jaxtour.mlp import load_mnist, train

    config = tour_config(paths.quick())
    data = load_mnist().subset(config.train_size)
    params, history = train(data, epochs=config.epochs, seed=config.seed)
    _print_summary(history)
    return write_outputs(params, history, build_dir)
