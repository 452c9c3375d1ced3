"""Fixtures shared by the unit tests, and the markers that size a run (settings for every
test are in ../conftest.py).

Markers (declared in pyproject.toml): `slow` (over ~3 s), `browser` (headless
Chromium), `notebooks` (executes a lesson), `install` (builds a venv and installs the
wheel), `plumbing` (files, documents, command lines and the programs around the kit
that no JAX release changes: `make test-latest` leaves it out). `make test-fast` leaves
out the first three.
"""

import signal
import warnings

import markers
import pytest

_previous: list[str] = []  # the test this worker ran last


@pytest.fixture
def full_float32():
    """Float32 matmuls at full precision, so float64 oracles hold on any backend.

    A CPU multiplies float32 exactly as written; GPUs round the inputs to TF32 and TPUs
    to bfloat16 passes unless asked not to, which moves results by ~1e-3.
    """
    import jax  # here, not at the top: pytest-xdist's controller runs no test

    with jax.default_matmul_precision("highest"):
        yield


@pytest.fixture(autouse=True)
def ctrl_c_as_a_terminal_gives_it(request):
    """Each test starts with Ctrl-C as a terminal gives it: SIGINT not blocked, raising
    KeyboardInterrupt. A child inherits a blocked or ignored SIGINT, and a launcher
    started so never sees the Ctrl-C a test sends it (seen in a newest-JAX run: it went
    on for 60 s); a warning names the test after which the state had changed."""
    blocked = signal.SIGINT in signal.pthread_sigmask(
        signal.SIG_UNBLOCK, {signal.SIGINT}
    )
    # set even when Python's record looks right: C code (a library's own handler, or
    # SIG_IGN, which a child inherits) changes the process's disposition behind it
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    if blocked or handler is not signal.default_int_handler:
        state = "blocked" if blocked else f"handled by {handler!r}"
        after = _previous[-1] if _previous else "the worker's start"
        warnings.warn(f"SIGINT was {state} after {after}; reset", stacklevel=1)
    yield
    _previous[:] = [request.node.nodeid]


@pytest.fixture(scope="session")
def executed_lesson():
    """`executed_lesson(source, view=View.INSTRUCTOR)`: the lesson's (ipynb, html), run
    once for the whole run through the lesson cache ($JAXTOUR_EXECUTED, set in
    ../conftest.py), shared by pytest-xdist workers."""
    from jaxtour import lesson

    def executed(source, which=lesson.View.INSTRUCTOR):
        return lesson.executed(source, which)

    return executed


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    markers.mark_by_place(items)
    markers.longest_first(items)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Names the unmarked tests that took over markers.SLOW_S here (a report, never a failure:
    how long a test takes depends on the machine and its load)."""
    reports = [r for rs in terminalreporter.stats.values() for r in rs]
    slow = markers.unmarked_slow([r for r in reports if hasattr(r, "when")])
    if slow:
        terminalreporter.section(
            f"unmarked tests over {markers.SLOW_S:.0f} s on this machine"
        )
        for nodeid, seconds in slow[:15]:
            terminalreporter.write_line(f"{seconds:6.1f} s  {nodeid}")
        terminalreporter.write_line(
            "Mark them @pytest.mark.slow if they are slow on an idle machine too."
        )
