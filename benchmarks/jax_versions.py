"""The MLP's training epoch on the pinned JAX and on the newest, side by side in one run.

Each JAX lives in its own virtual environment (`.venv` from requirements.lock, and
`.venv-latest` from requirements-latest.lock, made by `make test-latest`). This script runs
the same child in each, alternating A, B, A, B, ..., so that both see the same machine
load; each child compiles jaxtour's epoch (one `lax.scan` of `update` over the shuffled
batches, stacking the per-step losses) and times a few epochs after a warm-up one.

Run:
    JAXTOUR_DATA=../shared/mnist .venv/bin/python benchmarks/jax_versions.py [--rounds 3]

Prints one line per child run, then a table of medians and the ratio newest / pinned, then
(last line) a JSON object. A ratio above 1.2 means the newest JAX trains more slowly.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENVS = {"pinned": ROOT / ".venv", "newest": ROOT / ".venv-latest"}


def child(epochs: int, train_size: int | None) -> dict:
    """Time `epochs` epochs after one warm-up epoch; run inside one of the venvs."""
    import time

    import jax

    from jaxtour.mlp import compile_epoch, init_params, load_mnist

    data = load_mnist()
    images = jax.device_put(data.train_images[:train_size])
    labels = jax.device_put(data.train_labels[:train_size].astype("int32"))
    params = init_params(jax.random.key(0))
    velocity = jax.tree.map(lambda p: p * 0, params)
    keys = jax.random.split(jax.random.key(1), epochs + 1)
    run, compile_s = compile_epoch(params, velocity, images, labels, keys[0])
    params, velocity, losses = run(params, velocity, images, labels, keys[0])
    losses.block_until_ready()
    times = []
    for key in keys[1:]:
        start = time.perf_counter()
        params, velocity, losses = run(params, velocity, images, labels, key)
        losses.block_until_ready()
        times.append(time.perf_counter() - start)
    return {
        "jax": jax.__version__,
        "python": sys.version.split()[0],
        "compile_s": compile_s,
        "epoch_s": times,
    }


def run_child(name: str, epochs: int, train_size: int | None) -> dict:
    python = VENVS[name] / "bin" / "python"
    if not python.exists():
        raise SystemExit(
            f"{python} is missing: run `make test-latest` (newest) or "
            "`make test` (pinned) once to create it."
        )
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); import json, "
        f"jax_versions as b; print(json.dumps(b.child({epochs}, {train_size!r})))"
    )
    out = subprocess.run(
        [str(python), "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (3)")
    parser.add_argument(
        "--epochs", type=int, default=3, help="timed epochs per child (3)"
    )
    parser.add_argument(
        "--train-size", type=int, help="time epochs of the first N images"
    )
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {name: [] for name in VENVS}
    for round_ in range(args.rounds):
        for name in VENVS:
            result = run_child(name, args.epochs, args.train_size)
            runs[name].append(result)
            print(
                f"round {round_ + 1} {name:6} jax {result['jax']:10} "
                f"epochs {', '.join(f'{t:.3f}' for t in result['epoch_s'])} s "
                f"(compile {result['compile_s']:.2f} s)",
                flush=True,
            )
    summary = {}
    for name, results in runs.items():
        epochs = [t for r in results for t in r["epoch_s"]]
        summary[name] = {
            "jax": results[0]["jax"],
            "python": results[0]["python"],
            "epoch_s": statistics.median(epochs),
            "min_s": min(epochs),
            "max_s": max(epochs),
            "compile_s": statistics.median(r["compile_s"] for r in results),
        }
    print(
        "\n| JAX | Python | epoch (median) | min-max | compile |\n|---|---|---|---|---|"
    )
    for s in summary.values():
        print(
            f"| {s['jax']} | {s['python']} | {s['epoch_s']:.3f} s | "
            f"{s['min_s']:.3f}-{s['max_s']:.3f} s | {s['compile_s']:.2f} s |"
        )
    ratio = summary["newest"]["epoch_s"] / summary["pinned"]["epoch_s"]
    print(f"\nnewest / pinned epoch time: {ratio:.2f}x")
    print(json.dumps({"ratio_newest_over_pinned": ratio, **summary}))


if __name__ == "__main__":
    main()
