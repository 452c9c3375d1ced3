"""Data-parallel MLP training: steps per second on 1, 2, 4 and 8 simulated CPU devices.

Each device count runs in its own process (`jax_num_cpu_devices` must be set before JAX
starts), training epochs of the 784-512-256-10 MLP on MNIST, batch 128, with
`jaxtour.mlp.train_data_parallel`'s compiled epoch. The baseline is single-device
training (`jaxtour.mlp.compile_epoch`, no mesh), measured in the 1-device process; every
row prints its ratio to it. When JAX sees a GPU, one more process measures single-GPU
training; otherwise that row says "not measured".

Then the same global mesh of 8 devices split over JAX processes: 1×8, 2×4 and 4×2
(processes × devices per process), each a `jaxtour.launch.train_multiprocess` run (local
processes joined by `jax.distributed.initialize`, Gloo collectives between them). Their
epochs also build each process's slice of every batch on the host
(`jax.make_array_from_process_local_data`), so their baseline is the 1×8 run of the
same code; the ratio to the single-process 8-device row is printed too.

Simulated CPU devices share the same cores, so the CPU curve is a teaching figure (what
sharding and the all-reduce cost when the devices are not really parallel), not a speed
claim.

Run (on a quiet machine: check `uptime` first):
    JAXTOUR_DATA=../shared/mnist .venv/bin/python benchmarks/data_parallel.py [--rounds 3]
Smoke test (seconds):
    .venv/bin/python benchmarks/data_parallel.py --rounds 1 --train-size 1024 --counts 1 2

Prints one line per process, then the table, then (last line) a JSON object:
{"batch_size": 128, "steps_per_epoch": ..., "rows": [{"name", "devices", "steps_per_s",
"ratio", "compile_s"}, ...], "gpu": {...} or null, "processes": [{"layout", "processes",
"devices_per_process", "steps_per_s", "ratio", "ratio_in_process", "compile_s",
"wall_s"}, ...]}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

COUNTS = (1, 2, 4, 8)
LAYOUTS = ("1x8", "2x4", "4x2")  # processes x devices per process


def worker(args: argparse.Namespace) -> dict:
    """In a fresh process: time epochs on `args.devices` devices of `args.platform`."""
    import jax

    if args.platform == "cpu":
        jax.config.update("jax_num_cpu_devices", args.devices)
    import jax.random as jr
    import numpy as np

    from jaxtour import mlp
    from jaxtour.mlp import _parallel

    data = mlp.load_mnist(args.data_dir, progress=False).subset(args.train_size)
    images, labels = (
        np.asarray(data.train_images),
        np.asarray(data.train_labels, np.int32),
    )
    # on the host: each run places its own copy (its epoch donates, i.e. deletes, it)
    params = jax.tree.map(np.asarray, mlp.init_params(jr.key(0)))
    key = jr.key(1)
    hyper = dict(batch_size=args.batch_size)
    found = jax.devices(args.platform)[: args.devices]
    result = {
        "devices": len(found),
        "platform": args.platform,
        "device_kind": found[0].device_kind,
        "steps_per_epoch": len(images) // args.batch_size,
    }
    if args.devices == 1:  # the baseline: single-device training, no mesh
        place = lambda tree: jax.device_put(tree, found[0])
        epoch, compile_s = mlp.compile_epoch(
            *place((params, _zeros(params), images, labels)), key, **hyper
        )
        result["single"] = _time(epoch, place, params, images, labels, key, args.rounds)
        result["single"]["compile_s"] = compile_s
    if args.platform == "cpu":
        mesh = _parallel.data_mesh(found)
        place = lambda tree: jax.device_put(tree, _parallel.replicated(mesh))
        epoch, compile_s = _parallel.compile_epoch_sharded(
            mesh, *place((params, _zeros(params), images, labels)), key, **hyper
        )
        result["parallel"] = _time(
            epoch, place, params, images, labels, key, args.rounds
        )
        result["parallel"]["compile_s"] = compile_s
    return result


def _zeros(params):
    import jax
    import numpy as np

    return jax.tree.map(np.zeros_like, params)


def _time(epoch, place, params, images, labels, key, rounds: int) -> dict:
    """Median seconds per epoch over `rounds`, after one untimed warm-up epoch."""
    import jax.random as jr
    import numpy as np

    params, velocity = place(params), place(_zeros(params))
    images, labels = place(images), place(labels)
    seconds = []
    for r in range(rounds + 1):
        start = time.perf_counter()
        params, velocity, losses = epoch(
            params, velocity, images, labels, jr.fold_in(key, r)
        )
        losses.block_until_ready()
        seconds.append(time.perf_counter() - start)
    epoch_s = float(np.median(seconds[1:]))
    return {
        "epoch_s": epoch_s,
        "steps_per_s": len(np.asarray(losses)) / epoch_s,
        "final_loss": float(np.asarray(losses)[-1]),
    }


def run(count: int, platform: str, args: argparse.Namespace) -> dict | None:
    """Run one worker process; its last stdout line is its JSON result."""
    command = [
        sys.executable,
        __file__,
        "--worker",
        "--devices",
        str(count),
        "--platform",
        platform,
        "--rounds",
        str(args.rounds),
        "--batch-size",
        str(args.batch_size),
    ]
    command += ["--train-size", str(args.train_size)] if args.train_size else []
    command += ["--data-dir", args.data_dir] if args.data_dir else []
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    env |= {"JAX_PLATFORMS": "cpu"} if platform == "cpu" else {}
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        print(f"  {platform} x{count} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def gpu_present() -> bool:
    """Whether JAX sees a GPU, asked in a throwaway process (this one never starts JAX)."""
    probe = "import jax; jax.devices('gpu')"  # raises RuntimeError when there is none
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    return (
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, env=env
        ).returncode
        == 0
    )


def table(results: list[dict], gpu: dict | None) -> dict:
    """Rows with ratios to single-device CPU training, printed and returned."""
    base = next(r["single"] for r in results if "single" in r)
    rows = [
        {"name": "1 CPU device, no mesh (baseline)", "devices": 1, **_row(base, base)}
    ]
    rows += [
        {
            "name": f"{r['devices']} simulated CPU device{'s' * (r['devices'] > 1)}, "
            "data-parallel",
            "devices": r["devices"],
            **_row(r["parallel"], base),
        }
        for r in results
    ]
    if gpu is not None:
        rows.append(
            {
                "name": f"1 GPU ({gpu['device_kind']}), no mesh",
                "devices": 1,
                **_row(gpu["single"], base),
            }
        )
    print(f"\n{'':46} {'steps/s':>9} {'vs 1 CPU':>9} {'compile s':>10}")
    for row in rows:
        print(
            f"{row['name']:46} {row['steps_per_s']:9.1f} {row['ratio']:8.2f}x "
            f"{row['compile_s']:10.2f}"
        )
    if gpu is None:
        print(f"{'1 GPU':46} {'not measured (no GPU here)':>30}")
    return {"rows": rows}


def _row(measured: dict, base: dict) -> dict:
    return {
        "steps_per_s": measured["steps_per_s"],
        "compile_s": measured["compile_s"],
        "ratio": measured["steps_per_s"] / base["steps_per_s"],
    }


def multiprocess(layouts: list[str], args: argparse.Namespace) -> list[dict]:
    """Steps/s of `train_multiprocess` for each "PxD" layout: the median epoch after
    the first (which compiles nothing, but warms the caches)."""
    import numpy as np

    from jaxtour import launch

    found = []
    for layout in layouts:
        processes, devices = (int(n) for n in layout.split("x"))
        run = launch.train_multiprocess(
            args.data_dir,
            processes=processes,
            devices_per_process=devices,
            epochs=args.rounds + 1,
            batch_size=args.batch_size,
            train_size=args.train_size,
            echo=False,
            timeout=1800,
        )
        steps = len(run.history.batch_loss) // (args.rounds + 1)
        epoch_s = float(np.median(run.history.epoch_seconds[1:]))
        found.append(
            {
                "layout": layout,
                "processes": processes,
                "devices_per_process": devices,
                "steps_per_s": steps / epoch_s,
                "compile_s": run.history.compile_seconds,
                "wall_s": run.seconds,
            }
        )
        print(f"{layout}: {steps / epoch_s:.1f} steps/s", flush=True)
    return found


def process_table(found: list[dict], in_process: dict | None) -> None:
    """Ratios to the 1-process run of the same code, and to the in-process mesh."""
    if not found:
        return
    base = next((f for f in found if f["processes"] == 1), found[0])
    print(
        f"\n{'processes x devices':22} {'steps/s':>9} {'vs ' + base['layout']:>9} "
        f"{'vs in-process':>14} {'compile s':>10}"
    )
    for f in found:
        f["ratio"] = f["steps_per_s"] / base["steps_per_s"]
        same = (
            in_process
            and f["processes"] * f["devices_per_process"] == in_process["devices"]
        )
        f["ratio_in_process"] = (
            f["steps_per_s"] / in_process["steps_per_s"] if same else None
        )
        versus = f"{f['ratio_in_process']:13.2f}x" if same else f"{'-':>14}"
        print(
            f"{f['layout']:22} {f['steps_per_s']:9.1f} {f['ratio']:8.2f}x {versus} "
            f"{f['compile_s']:10.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rounds", type=int, default=3, help="timed epochs; median (3)"
    )
    parser.add_argument(
        "--train-size", type=int, help="train on the first N images only"
    )
    parser.add_argument(
        "--batch-size", type=int, default=128, help="global batch (128)"
    )
    parser.add_argument(
        "--counts",
        type=int,
        nargs="+",
        default=list(COUNTS),
        help="simulated CPU device counts (1 2 4 8); 1 is always run",
    )
    parser.add_argument(
        "--layouts",
        nargs="*",
        default=list(LAYOUTS),
        help="processes x devices, as JAX processes (1x8 2x4 4x2)",
    )
    parser.add_argument(
        "--data-dir", help="MNIST folder (default: $JAXTOUR_DATA or the cache)"
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--devices", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--platform", default="cpu", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args)))
        return
    results = []
    for count in sorted({1, *args.counts}):
        result = run(count, "cpu", args)
        if result is not None:
            results.append(result)
            print(
                f"{count} simulated CPU device{'s' * (count > 1)}: "
                f"{result['parallel']['steps_per_s']:.1f} steps/s (data-parallel)",
                flush=True,
            )
    gpu = run(1, "gpu", args) if gpu_present() else None
    summary = table(results, gpu)
    found = multiprocess(args.layouts, args)
    eight = next(
        (r for r in summary["rows"] if r["devices"] == 8 and "simulated" in r["name"]),
        None,
    )
    process_table(found, eight)
    print(
        json.dumps(
            {
                "batch_size": args.batch_size,
                "steps_per_epoch": results[0]["steps_per_epoch"],
                **summary,
                "gpu": gpu,
                "processes": found,
            }
        )
    )


if __name__ == "__main__":
    main()
