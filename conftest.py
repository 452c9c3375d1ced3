"""Settings for every test, lessons included (their kernels inherit this environment)."""

import os
from pathlib import Path

# Lessons and the tour shrink their data and epochs; their assertions stay the same.
os.environ.setdefault("JAXTOUR_QUICK", "1")

# MNIST comes from the shared folder beside the checkout when there is one, never the network.
_shared = Path(__file__).resolve().parent.parent / "shared" / "mnist"
if "JAXTOUR_DATA" not in os.environ and _shared.is_dir():
    os.environ["JAXTOUR_DATA"] = str(_shared)

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

# One JAX compilation cache for every process of a run (pytest-xdist's workers, the
# lesson kernels, the checkers, the trainers the tests launch) and for later runs: a
# program one process compiled, the next loads (the suite's lens tests: 85 s with none,
# 81 s filling it, 35 s from it). Every compile is kept, not only those over JAX's 1 s;
# JAX keys entries on the program, its options and jaxlib's version, and keeps the
# folder under 1 GiB. A cache already named in the environment is used as it is.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    os.environ["JAX_COMPILATION_CACHE_DIR"] = str(
        Path(__file__).resolve().parent / "build" / "jax-cache"
    )
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(2**30))
