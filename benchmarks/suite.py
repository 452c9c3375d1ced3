"""The test suite's own speed: how long each run of the README's test command takes.

Run: .venv/bin/python benchmarks/suite.py [--targets test-fast test test-latest] [--fresh]
Runs each make target in turn from the repository root and prints, side by side, its
wall time against the target issue 30 set (`make test` 8 min, `make test-fast` 2 min,
`.ci/run` 15 min), with the load average before it started, then a JSON object with the
same figures. `--fresh` forgets the lesson cache (`build/executed`) first, as a fresh
clone has none. A benchmark, not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS_S = {"test-fast": 120, "test": 480, "test-latest": 420, "ci": 900}


def run(target: str) -> dict:
    command = ["bash", ".ci/run"] if target == "ci" else ["make", target]
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or [""]
    return {
        "target": target,
        "seconds": round(seconds, 1),
        "goal_s": TARGETS_S.get(target),
        "load_before": round(load, 2),
        "exit": done.returncode,
        "last_line": tail[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=["test-fast", "test"])
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    if args.fresh:
        shutil.rmtree(ROOT / "build" / "executed", ignore_errors=True)
    figures = []
    for target in args.targets:
        figure = run(target)
        figures.append(figure)
        goal = figure["goal_s"]
        verdict = "" if goal is None else f" (goal {goal / 60:.0f} min)"
        print(
            f"{target:12s} {figure['seconds'] / 60:6.1f} min{verdict}, exit "
            f"{figure['exit']}, load before {figure['load_before']}: {figure['last_line']}"
        )
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
