"""The type check: mypy over src/jaxtour as pyproject.toml configures it, on the JAX and
NumPy this run has (their stubs change between releases: 0.12's found three errors that
0.10.2's did not).

A test rather than a step before the suite, so that its ~12 s of one core run beside the
other tests; `make lint` runs mypy alone, for the inner loop.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # ~12 s from a cold cache
def test_mypy_finds_no_error_in_the_package():
    proc = subprocess.run(
        [sys.executable, "-m", "mypy"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert proc.stdout.startswith("Success: no issues found in "), proc.stdout
