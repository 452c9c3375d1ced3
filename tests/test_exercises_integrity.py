"""A check a student cannot fool: the answer runs in a checker process, so patching the
kit there is refused, patching never reaches this process's kit, an endless answer is
stopped after its timeout, and every exception an answer raises becomes feedback."""

import jax
import jax.numpy as jnp
import pytest

from jaxtour.exercises import _expect, _pool, _transformations, check


def ex_per_example_losses(loss, w, b, xs, ts):
    return jax.vmap(loss, in_axes=(None, None, 0, 0))(w, b, xs, ts)


def _named(fn):
    fn.__name__ = "ex_per_example_losses"
    return fn


def test_a_right_answer_passes_in_the_checker_process():
    feedback = check(ex_per_example_losses, quiet=True)
    assert feedback.passed and feedback.kind == "passed", feedback


def test_an_answer_that_patches_the_kit_is_refused_and_the_kernel_kit_is_untouched():
    originals = (
        _expect.expect_close,
        _transformations.expect_close,
        _transformations.under_jit,
    )

    @_named
    def cheat(loss, w, b, xs, ts):
        from jaxtour.exercises import _expect, _transformations

        _expect.expect_close = _transformations.expect_close = lambda *a, **k: None
        _transformations.under_jit = lambda fn, *args: None
        return jnp.zeros(len(xs))

    feedback = check(cheat, quiet=True)
    assert not feedback.passed and feedback.kind == "refused"
    assert feedback.message.startswith(
        "refused: while it was checked, your answer changed the checking kit "
        "(`jaxtour.exercises._expect`, `jaxtour.exercises._transformations`)."
    )
    assert (
        _expect.expect_close,
        _transformations.expect_close,
        _transformations.under_jit,
    ) == originals
    # The patched worker was replaced: a wrong answer is wrong again, a right one right.
    wrong = _named(lambda loss, w, b, xs, ts: jnp.zeros(len(xs)))
    assert check(wrong, quiet=True).kind == "wrong"
    assert check(ex_per_example_losses, quiet=True).passed


def test_an_answer_that_patches_numpy_is_refused():
    @_named
    def cheat(loss, w, b, xs, ts):
        import numpy as np

        np.allclose = lambda *a, **k: True
        return jnp.zeros(len(xs))

    feedback = check(cheat, quiet=True)
    assert feedback.kind == "refused" and "`numpy`" in feedback.message


@pytest.mark.slow  # the refused checker is replaced: a second one starts
def test_an_answer_that_patches_numpys_code_is_refused_and_the_patch_is_gone():
    @_named
    def cheat(loss, w, b, xs, ts):
        import numpy as np

        np.all._implementation.__code__ = (lambda *a, **k: True).__code__
        return jnp.zeros(len(xs)) + 123.0

    feedback = check(cheat, quiet=True)
    assert (feedback.passed, feedback.kind) == (False, "refused")
    assert "`numpy`" in feedback.message

    def ex_histogram(labels, n):  # plainly wrong: every count doubled
        return jnp.zeros(n).at[labels].add(2)

    after = check(ex_histogram, quiet=True)  # in a fresh checker: judged, not waved on
    assert (after.passed, after.kind) == (False, "wrong"), after


@pytest.mark.slow  # waits out a timeout, then starts a new checker
def test_an_endless_answer_is_stopped_after_its_timeout_and_the_checker_restarts():
    @_named
    def endless(loss, w, b, xs, ts):
        while True:
            pass

    feedback = check(endless, quiet=True, timeout=1.5)
    assert not feedback.passed and feedback.kind == "timeout"
    assert feedback.message.startswith("your answer ran longer than 1.5 s; stopped.")
    assert check(ex_per_example_losses, quiet=True).passed


@pytest.mark.parametrize(
    ("raised", "words"),
    [
        ("SystemExit(3)", "not right yet: your function raised SystemExit: 3"),
        (
            "KeyboardInterrupt()",
            "not right yet: your function raised KeyboardInterrupt",
        ),
        (
            "BaseException('odd')",
            "not right yet: your function raised BaseException: odd",
        ),
        ("GeneratorExit()", "not right yet: your function raised GeneratorExit"),
    ],
)
def test_every_exception_an_answer_raises_is_feedback(raised, words):
    namespace: dict = {}
    exec(f"def ex_per_example_losses(*args):\n    raise {raised}", namespace)
    feedback = check(namespace["ex_per_example_losses"], quiet=True)
    assert not feedback.passed and feedback.kind == "error"
    assert feedback.message == words


def test_an_answer_that_ends_the_checker_process_is_feedback_and_the_checker_restarts():
    @_named
    def leave(loss, w, b, xs, ts):
        import os

        os._exit(7)

    feedback = check(leave, quiet=True)
    assert feedback.kind == "error" and "exit status 7" in feedback.message
    assert check(ex_per_example_losses, quiet=True).passed


def test_an_answer_that_cannot_be_sent_says_why():
    import threading

    lock = threading.Lock()

    @_named
    def locked(loss, w, b, xs, ts):
        with lock:
            return ex_per_example_losses(loss, w, b, xs, ts)

    feedback = check(locked, quiet=True)
    assert feedback.kind == "error"
    assert "could not be sent to the checker" in feedback.message
    assert "cannot pickle '_thread.lock' object" in feedback.message


def _refuse():
    raise TypeError("no copy of this object can be made")


class _Unloadable:
    """Pickles, but its copy cannot be rebuilt: what it reduces to raises."""

    def __reduce__(self):
        return _refuse, ()


def test_an_answer_that_cannot_be_rebuilt_in_the_checker_says_why():
    held = _Unloadable()

    @_named
    def holding(loss, w, b, xs, ts):
        assert held is not None
        return ex_per_example_losses(loss, w, b, xs, ts)

    feedback = check(holding, quiet=True)
    assert (feedback.passed, feedback.kind) == (False, "error")
    assert feedback.message == (
        "not right yet: your function could not be copied into the checker, because it "
        "uses something that cannot be rebuilt in another process (TypeError: no copy "
        "of this object can be made). Create that object inside the function, or pass "
        "it as an argument."
    )


def test_the_checker_process_is_started_once_and_reused():
    check(ex_per_example_losses, quiet=True)
    worker = _pool._WORKERS[1]
    for _ in range(2):
        check(ex_per_example_losses, quiet=True)
    assert _pool._WORKERS[1] is worker and worker.alive()
    assert worker.ready["devices"] == 1


@pytest.mark.parametrize("timeout", [0, -1, "5", True])
def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout):
    with pytest.raises(
        ValueError, match="`timeout` must be a number of seconds above 0"
    ):
        check(ex_per_example_losses, timeout=timeout)


@pytest.mark.slow  # interrupts after 1 s, then starts a new checker
def test_ctrl_c_in_the_kernel_stops_the_check_with_feedback():
    import os
    import signal
    import threading
    import time

    @_named
    def endless(loss, w, b, xs, ts):
        while True:
            pass

    # a kernel's state when it runs a cell: Python's Ctrl-C handler, SIGINT not blocked
    # (whatever an earlier test in this worker process left behind)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        check(
            ex_per_example_losses, quiet=True
        )  # the worker is up: Ctrl-C hits the wait
        # as Jupyter interrupts a kernel: SIGINT sent to the process, which the OS may
        # hand to any of its threads (the checker's reader thread included)
        timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        start = time.monotonic()
        feedback = check(endless, quiet=True, timeout=60)
        took = time.monotonic() - start
        timer.join()
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert took < 60, f"the timeout ended the wait, not the interrupt: {feedback}"
    assert feedback.kind == "timeout"
    assert (
        feedback.message
        == "stopped: you interrupted the check; run it again when ready."
    )
    assert check(ex_per_example_losses, quiet=True).passed


def test_a_checker_that_cannot_start_says_why(monkeypatch):
    monkeypatch.setattr(_pool, "_LAUNCH", "raise SystemExit('no JAX here')")
    monkeypatch.setattr(_pool, "_WORKERS", {})
    feedback = check(ex_per_example_losses, quiet=True)
    assert feedback.kind == "error"
    assert "the checker process died (exit status 1: no JAX here)" in feedback.message


def test_the_environment_sets_the_default_timeout(monkeypatch):
    monkeypatch.setenv("JAXTOUR_CHECK_TIMEOUT", "soon")
    with pytest.raises(ValueError, match=r"\$JAXTOUR_CHECK_TIMEOUT\); got 'soon'"):
        check(ex_per_example_losses)
    monkeypatch.setenv("JAXTOUR_CHECK_TIMEOUT", "1.5")

    @_named
    def endless(loss, w, b, xs, ts):
        while True:
            pass

    assert check(endless, quiet=True).message.startswith(
        "your answer ran longer than 1.5 s"
    )


@pytest.mark.parametrize("devices", [0, 65, 8.0, True, "8"])
def test_an_exercise_asks_for_a_whole_number_of_devices(devices):
    from jaxtour.exercises import Exercise

    with pytest.raises(
        ValueError, match="Exercise devices must be a whole number from 1 to 64"
    ):
        Exercise("ex_x", "98_fake_lesson", "t", "p", lambda fn: None, devices)


def test_the_collective_exercise_is_checked_on_8_devices():
    from jaxtour.exercises import find

    assert find("ex_count_all_reduces").devices == 8
    assert find("ex_per_example_losses").devices == 1
