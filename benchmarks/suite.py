"""The test suite's own speed: how long each run of the README's test command takes.

Run: .venv/bin/python benchmarks/suite.py [--targets test-fast test test-latest] [--fresh]
     .venv/bin/python benchmarks/suite.py --history   # the runs measured so far
Runs each make target in turn from the repository root and prints, side by side, its
wall time against the target issue 30 set (`make test` 8 min, `make test-fast` 2 min,
`.ci/run` 15 min), the CPU time it took (user + system, every process it waited for) and
the load average before it started, then a JSON object with the same figures. `--fresh`
forgets the lesson cache (`build/executed`) first, as a fresh clone has none.

A benchmark, not a test: the figures depend on the machine and its load. The same tests
took 7 min 47 s on one 2-core machine here, and 8 min 24 s to 10 min 59 s on another over
one morning (764 s of CPU, then 818 s to 1,083 s): a run's CPU time says how fast the
machine was then (a timed loop would sample one moment of it), so compare it with the
CPU time `suite_history.json` holds for the same commit (`--history` prints it).

`--reference` measures the machine's speed beside the targets: it runs a fixed piece of
work, the fast suite of commit d3ad082 (from a temporary worktree, on this checkout's
.venv), before the targets and after them, and prints each target's time in units of
that work, and what it would have taken at the speed the goals were set at (2026-11-28
evening: d3ad082's fast suite 103 s, its `make test` 495 s).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HISTORY = Path(__file__).resolve().parent / "suite_history.json"
TARGETS_S = {"test-fast": 120, "test": 480, "test-latest": 420, "ci": 900}
# The fixed work that measures the machine's speed, and what it took when the goals were set.
REFERENCE_COMMIT, REFERENCE_S, REFERENCE_WHEN = "d3ad082", 103.0, "2026-11-28 evening"
FAST = "not slow and not browser and not notebooks"  # what `make test-fast` runs
REFERENCE_PYTEST = ["-m", "pytest", "-n", "2", "--dist", "loadfile", "-q"]
REFERENCE_PYTEST += ["-p", "no:cacheprovider", "-m", FAST]


def cpu_model() -> str:
    """The CPU's name from /proc/cpuinfo (Linux), else what `platform` says."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def children_cpu_s() -> float:
    """User and system time of every process this one has waited for, so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def summary(output: str) -> str:
    """pytest's last summary line (``=== 12 passed in 3.4s ===``) in `output`, else its
    last line: a warning pip writes to stderr after the tests must not stand for them."""
    lines = output.strip().splitlines()
    results = [line for line in lines if line.startswith("=") and " in " in line]
    return (results or lines or [""])[-1]


def run(target: str) -> dict:
    command = ["bash", ".ci/run"] if target == "ci" else ["make", target]
    return {"target": target, "goal_s": TARGETS_S.get(target), **timed(command, ROOT)}


def reference_python() -> str:
    """This checkout's .venv Python, else the one running this script (on a fresh clone,
    run the script with another checkout's .venv/bin/python)."""
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv if venv.exists() else sys.executable)


def reference_missing(python: str) -> str | None:
    """Why `python` cannot run the reference suite (a module it lacks), else None."""
    probe = "import jax, pytest, xdist, nbformat"
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    last = (done.stderr.strip().splitlines() or ["no output"])[-1]
    return (
        f"--reference runs d3ad082's tests with {python}, which cannot import the test "
        f"dependencies ({last}). On a fresh clone, run this script with a checkout's "
        ".venv/bin/python, or build .venv first (make .venv/.installed)."
    )


def reference_run(commit: str = REFERENCE_COMMIT) -> dict:
    """The fast suite of `commit` (pytest as its `make test-fast` ran it), from a
    temporary worktree, with `reference_python()` and that tree's code."""
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "reference"
        git = ["git", "worktree"]
        add = [*git, "add", "--detach", "--quiet", str(tree), commit]
        subprocess.run(add, cwd=ROOT, check=True)
        shared = ROOT.parent / "shared"  # its tests read ../shared, as CI lays it out
        if shared.is_dir():
            (Path(folder) / "shared").symlink_to(shared)
        try:
            env = {**os.environ, "PYTHONPATH": str(tree / "src")}
            figure = timed([reference_python(), *REFERENCE_PYTEST], tree, env)
        finally:
            subprocess.run([*git, "remove", "--force", str(tree)], cwd=ROOT, check=True)
    return {"target": f"reference ({commit})", **figure}


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict:
    """Runs `command` in `cwd`: its wall and CPU seconds, exit status and last line."""
    load = os.getloadavg()[0]
    cpu_before = children_cpu_s()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    tail = summary(done.stdout) or summary(done.stderr)
    return {
        "seconds": round(seconds, 1),
        "cpu_s": round(children_cpu_s() - cpu_before, 1),
        "load_before": round(load, 2),
        "exit": done.returncode,
        "last_line": tail,
    }


def line(figure: dict) -> str:
    """One run, as the table prints it."""
    goal = figure.get("goal_s")
    verdict = "" if goal is None else f" (goal {goal / 60:.0f} min)"
    return (
        f"{figure['target']:12s} {figure['seconds'] / 60:6.1f} min{verdict}, "
        f"{figure['cpu_s']:.0f} s of CPU, exit {figure['exit']}, "
        f"load before {figure['load_before']}: {figure['last_line']}"
    )


def ran_its_tests(figure: dict) -> bool:
    """Whether pytest ran the tests (exit 0, or 1: some failed; the reference's tests
    are old, and one fails on some machines today); 2 and above mean it stopped short."""
    return figure["exit"] in (0, 1) and " passed" in figure["last_line"]


def at_reference_speed(figures: list[dict]) -> list[str]:
    """Each target's time over the mean of the reference runs around it, and that time
    at the speed of the reference's measurement (when the goals were met). A reference
    run that did not run its tests does not count."""
    runs = [f for f in figures if f["target"].startswith("reference")]
    references = [f["seconds"] for f in runs if ran_its_tests(f)]
    if not references:
        return ["reference: no run of it ran its tests; no speed to scale by"]
    unit = sum(references) / len(references)
    spread = max(references) / min(references)
    lines = [
        f"reference: {' and '.join(f'{s:.0f} s' for s in references)} "
        f"(spread x{spread:.2f}); {REFERENCE_S:.0f} s on {REFERENCE_WHEN}: "
        f"this machine ran x{unit / REFERENCE_S:.2f} slower"
    ]
    for f in figures:
        if not f["target"].startswith("reference"):
            scaled = f["seconds"] * REFERENCE_S / unit
            goal = f.get("goal_s")
            against = f" against the goal of {_clock(goal)}" if goal else ""
            lines.append(
                f"{f['target']}: {f['seconds'] / unit:.2f} references; at "
                f"{REFERENCE_WHEN}'s speed {_clock(scaled)}{against}"
            )
    return lines


def _clock(seconds: float | None) -> str:
    if seconds is None:
        return ""
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:2d} s" if minutes else f"{rest} s"


def history(path: Path = HISTORY) -> str:
    """The measured runs, experiments and CPU accounts in `path`, as text tables."""
    data = json.loads(path.read_text(encoding="utf-8"))
    goals = ", ".join(f"{k} {_clock(v)}" for k, v in data["goals_s"].items())
    lines = [data["about"], f"Goals: {goals}.", ""]
    head = ("date", "when", "target", "wall", "pytest", "CPU s", "tests", "commit")
    rows = [
        (
            r["date"],
            r["when"],
            r["target"],
            _clock(r.get("wall_s")),
            _clock(r.get("pytest_s")),
            str(r.get("cpu_s", "")),
            str(r.get("tests", "")),
            r.get("commit", ""),
        )
        for r in data["runs"]
    ]
    widths = [max(len(x) for x in column) for column in zip(head, *rows, strict=True)]
    for row in [head, *rows]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    machines = sorted({r["machine"] for r in data["runs"]})
    lines += ["", "Machines: " + "; ".join(machines), "", "Experiments:"]
    for e in data["experiments"]:
        kept = "kept" if e["kept"] else "not kept"
        lines.append(f"  {e['date']}  {e['what']}: {e['result']} ({kept})")
    lines += ["", "Where a run's CPU went:"]
    for account in data["cpu_accounts"]:
        spent = account.get("by_process") or account["by_file"]
        parts = ", ".join(f"{k} {v} s" for k, v in spent.items())
        whole = f"{account['run_cpu_s']} s" if account["run_cpu_s"] else account["note"]
        lines.append(f"  {account['date']} ({whole}): {parts}")
    lines += ["", "Sizes:"]
    for size in data["sizes"]:
        before = f"{size['before']} -> " if "before" in size else ""
        lines.append(f"  {size['run']}: {before}{size['after']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", nargs="+", default=["test-fast", "test"])
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument(
        "--reference",
        action="store_true",
        help=f"measure the machine's speed before and after ({REFERENCE_COMMIT}'s "
        "fast suite), and scale each time to the speed the goals were set at",
    )
    parser.add_argument(
        "--history", action="store_true", help="print the runs measured so far and exit"
    )
    args = parser.parse_args()
    if args.history:
        print(history())
        return
    if args.reference and (why := reference_missing(reference_python())):
        parser.error(why)
    if args.fresh:
        shutil.rmtree(ROOT / "build" / "executed", ignore_errors=True)
    machine = {"cpu": cpu_model(), "cores": os.cpu_count()}
    print(f"{machine['cores']} cores of {machine['cpu']}")
    figures = [reference_run()] if args.reference else []
    for target in args.targets:
        figures.append(run(target))
    if args.reference:
        figures.append(reference_run())
    for figure in figures:
        print(line(figure))
    if args.reference:
        for text in at_reference_speed(figures):
            print(text)
    print(json.dumps({"machine": machine, "runs": figures}, indent=1))


if __name__ == "__main__":
    main()
