"""Settings for every test, lessons included (their kernels inherit this environment)."""

import os
import sys
from pathlib import Path

# The suite keeps the bytecode it compiles, as a laptop's Python does. Where
# PYTHONDONTWRITEBYTECODE is set (as on the machines here) each worker rewrote every test
# module's asserts again (3.5 s a worker), and each of the ~100 processes a run starts
# (lesson kernels, the CLI, launcher workers) compiled jaxtour from source again.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Lessons and the tour shrink their data and epochs; their assertions stay the same.
os.environ.setdefault("JAXTOUR_QUICK", "1")

# MNIST comes from the shared folder beside the checkout when there is one, never the network.
_shared = Path(__file__).resolve().parent.parent / "shared" / "mnist"
if "JAXTOUR_DATA" not in os.environ and _shared.is_dir():
    os.environ["JAXTOUR_DATA"] = str(_shared)

# One BLAS thread per process, as joblib gives its workers: the suite's processes (two
# workers, their lesson kernels and subprocesses) already fill both cores, and two
# OpenBLAS threads wait on each other for a core another process holds. Lesson 06's
# float64 epoch took 28 s in a run instead of 5 s alone, and its NumPy rungs measured BLAS
# at half the speed a quiet machine shows; with one thread, 9 s and about that speed.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# Matplotlib draws to files only, also in kernels started by the tests.
os.environ.setdefault("MPLBACKEND", "Agg")

# Every test that needs an executed lesson gets it from one cache for the whole run (and
# later runs: the key holds the lesson's source, the kit's code, JAX's version and the
# mode), so each lesson executes once per JAX version, whichever tests and workers ask.
os.environ.setdefault(
    "JAXTOUR_EXECUTED", str(Path(__file__).resolve().parent / "build" / "executed")
)

# `check` stops an answer after 60 s; a busy machine must not turn a right answer into a
# timeout, so the suite (and the lesson kernels it starts) allows 10 minutes. The timeout
# tests pass their own short `timeout=`.
os.environ.setdefault("JAXTOUR_CHECK_TIMEOUT", "600")
