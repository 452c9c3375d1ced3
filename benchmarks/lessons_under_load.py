"""Lessons run top to bottom, again and again, with a CPU busy loop beside them.

Run: .venv/bin/python benchmarks/lessons_under_load.py [--runs 3] [--busy 1] [--quick]
     [--lessons 05_mnist_mlp 06_jax_vs_numpy 07_parallelism]
Each lesson's instructor view (every check cell included) is executed `--runs` times in a
fresh kernel, with no lesson cache, at full size unless `--quick` (JAXTOUR_QUICK=1), while
`--busy` processes spin `while True: pass`. A lesson's checks must hold whatever the load:
this prints, per lesson, each run's wall time and pass or the failing cell, then a JSON
object with the same figures. The exit status is 1 when any run failed. Not a test: it
takes minutes (a full-size lesson 05 trains the MLP), and its times are the load's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jaxtour import lesson

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS = ("05_mnist_mlp", "06_jax_vs_numpy", "07_parallelism")
BUSY_LOOP = "while True: pass"


def run_once(source: Path) -> tuple[float, str]:
    """Seconds to execute `source` in a fresh kernel, and "pass" or the failing cell."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        try:
            lesson.execute(source, Path(out))
            outcome = "pass"
        except lesson.LessonError as error:
            outcome = str(error).splitlines()[0][:300]
    return time.perf_counter() - start, outcome


def start_busy(count: int) -> list[subprocess.Popen[bytes]]:
    """`count` processes spinning a CPU each until stopped."""
    return [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(count)]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        process.kill()
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="busy-loop processes")
    parser.add_argument("--quick", action="store_true", help="JAXTOUR_QUICK=1")
    parser.add_argument("--lessons", nargs="+", default=list(LESSONS))
    parser.add_argument("--folder", type=Path, default=NOTEBOOKS)
    args = parser.parse_args()
    os.environ["JAXTOUR_QUICK"] = "1" if args.quick else "0"
    busy = start_busy(args.busy)
    figures: dict[str, list[dict[str, object]]] = {}
    try:
        for name in args.lessons:
            source = args.folder / f"{name}.py"
            for run in range(1, args.runs + 1):
                seconds, outcome = run_once(source)
                figures.setdefault(name, []).append(
                    {"s": round(seconds, 1), "outcome": outcome}
                )
                print(
                    f"{name} run {run}/{args.runs}: {seconds:6.1f} s  {outcome}",
                    flush=True,
                )
    finally:
        stop(busy)
    passed = {n: sum(r["outcome"] == "pass" for r in rs) for n, rs in figures.items()}
    print(
        json.dumps(
            {"quick": args.quick, "busy": args.busy, "runs": figures, "passed": passed}
        )
    )
    return 0 if all(p == args.runs for p in passed.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
