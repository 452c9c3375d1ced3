"""The MLP speed ladder: one epoch of the 784-512-256-10 MLP on MNIST, batch 128, five ways.

NumPy float64 -> NumPy float32 -> JAX without jit -> jit(update) in a Python loop ->
jaxtour's `train_epoch` (one compiled lax.scan per epoch, donated params). Variants run
interleaved, round after round, in this one process, from the same weights over the same
batches; each figure is the median over rounds, with the fastest and slowest round kept.
Also measured in the same run: the one-matmul control (one step's eight matmuls alone,
same shapes, NumPy f32 against jitted JAX: BLAS against XLA's dot), and a jitted f32
2048x2048 matmul, the machine's reference rate.

Run (on a quiet machine: check `uptime` first):
    JAXTOUR_DATA=../shared/mnist .venv/bin/python benchmarks/mlp_ladder.py [--rounds 3]
Smoke test (seconds):
    .venv/bin/python benchmarks/mlp_ladder.py --rounds 1 --train-size 1024 --eager-steps 3

Prints one line per measurement, then the table, then (last line) a JSON object:
{"speedup_vs_numpy_f64": x, "matmul_fraction": y, "compile_s": z, "epoch_s": {...},
"spread_s": {name: [fastest, median, slowest]}, ...}.
Seconds are per full 60,000-image epoch (468 steps) even when fewer steps were timed.
"""

from __future__ import annotations

import argparse
import json

from jaxtour.mlp import format_ladder, load_mnist, run_ladder
from jaxtour.mlp._ladder import VARIANTS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds; medians reported (3)"
    )
    parser.add_argument(
        "--train-size", type=int, help="time epochs of the first N images only"
    )
    parser.add_argument(
        "--eager-steps",
        type=int,
        default=40,
        help="steps timed for JAX without jit, scaled to an epoch (40)",
    )
    parser.add_argument(
        "--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS)
    )
    parser.add_argument(
        "--no-control",
        action="store_true",
        help="skip the one-matmul control (the step's matmuls alone)",
    )
    parser.add_argument(
        "--data-dir", help="MNIST folder (default: $JAXTOUR_DATA or the cache)"
    )
    args = parser.parse_args()
    result = run_ladder(
        load_mnist(args.data_dir),
        rounds=args.rounds,
        train_size=args.train_size,
        eager_steps=args.eager_steps,
        variants=tuple(args.variants),
        control=not args.no_control,
    )
    print(format_ladder(result))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
