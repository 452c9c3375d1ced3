"""The type check: mypy over src/jaxtour as pyproject.toml configures it, on the JAX and
NumPy this run has (their stubs change between releases: 0.12's found three errors that
0.10.2's did not).

A test rather than a step before the suite, so that its one core of work runs beside the
other tests; `make lint` runs mypy alone, for the inner loop.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def cache_dir() -> Path:
    """mypy's incremental cache for this run's venv: .mypy_cache for the checkout's .venv
    (the one `make lint` fills), a folder of its own inside it for any other venv.

    A cache names the files it read: the newest JAX's venv (make test-latest) has other
    paths and stubs, so one cache shared by both venvs was cold for each in turn, ~30 s
    of one core instead of ~1 s.
    """
    prefix = Path(sys.prefix).resolve()
    if prefix == (ROOT / ".venv").resolve():
        return ROOT / ".mypy_cache"
    return ROOT / ".mypy_cache" / f"venv-{prefix.name}"


@pytest.mark.slow  # ~30 s of one core from a cold cache (a fresh clone), ~1 s warm
def test_mypy_finds_no_error_in_the_package():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache_dir())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.stdout.startswith("Success: no issues found in "), proc.stdout
