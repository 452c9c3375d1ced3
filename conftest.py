"""Settings for every test, lessons included (their kernels inherit this environment)."""

import os
import shutil
import sys
import tempfile
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


def pytest_configure(config) -> None:
    _blas_threads(config)
    _compilation_cache_for_subprocesses(config)


def _blas_threads(config) -> None:
    """Under pytest-xdist, OpenBLAS gets cores // workers threads in each process the run
    starts (its workers, their lesson kernels and subprocesses), as joblib gives its
    workers: one on a 2-core machine with two workers. With more threads than that, two
    BLAS threads wait on each other for a core another process holds: lesson 06's float64
    epoch took 28 s in a run instead of 5 s alone, and its control measured BLAS at half
    the speed an idle machine shows. Not pytest's own process (a plugin imported NumPy
    before this ran; it runs no test), nor XLA's threads."""
    workers = getattr(config.option, "numprocesses", None) or 0
    if workers > 1:
        threads = max(1, (os.cpu_count() or 1) // workers)
        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(threads))


# A read that meets an entry another process is still writing (JAX writes it in place)
# warns and compiles again; in the suite that is no news.
_CACHE_RACE = "ignore:Error reading persistent compilation cache entry:UserWarning"
# Names the run's cache folder for the processes the run starts, pytest's own included.
_RUN_CACHE = "JAXTOUR_TESTS_XLA_CACHE"


def _compilation_cache_for_subprocesses(config) -> None:
    """The JAX processes the run starts share one persistent compilation cache, made for
    the run and removed after it (a user's JAX_COMPILATION_CACHE_DIR is set aside: its
    entries may carry other programs' metadata). Every compile is kept (eager operations
    are most of them), and the key holds each program's metadata, the name and source line
    of every operation, so a cached executable names its own program's operations and
    lines.

    The processes the run starts keep one frame per operation in that metadata
    (JAX_TRACEBACK_IN_LOCATIONS_LIMIT=1): the innermost, the only one the kit reads. So
    a program the kit traces itself (`init_params`' random draws, the training epoch, a
    lens's compile of the step) hits whoever called it, in a lesson kernel, a launcher
    worker, the CLI or a checker; a program jitted in a cell still only writes (its
    cell's file is named after its kernel's process). The figures are in
    benchmarks/suite_history.json.

    Not the test processes themselves: there it cost 4 % more CPU (a test file's
    programs are its own), and an in-process test compiles as a user's Python does,
    with JAX's own traceback limit."""
    xdist_controller = getattr(config.option, "numprocesses", None) and not hasattr(
        config, "workerinput"
    )
    if not xdist_controller:  # this process runs tests
        import jax  # reads the JAX_ settings in the environment now, not later

        jax.config.update("jax_enable_compilation_cache", False)
        # for the processes it starts (see above)
        os.environ["JAX_TRACEBACK_IN_LOCATIONS_LIMIT"] = "1"
    if _RUN_CACHE in os.environ:
        return  # a worker, or a pytest started with the run's environment
    folder = tempfile.mkdtemp(prefix="jaxtour-tests-xla-cache-")
    config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
    filters = [os.environ.get("PYTHONWARNINGS"), _CACHE_RACE]
    os.environ.update(
        {
            _RUN_CACHE: folder,
            "JAX_COMPILATION_CACHE_DIR": folder,
            "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
            "JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY": "true",
            "PYTHONWARNINGS": ",".join(f for f in filters if f),
        }
    )
