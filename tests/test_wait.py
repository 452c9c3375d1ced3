"""Runaway work: a while_loop that never ends, under a lens, stops on Ctrl-C or a time
limit and says what it was running. Each endless loop runs in a process of its own, so
the core it keeps busy is freed when that process ends."""

import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour._wait import TimeLimitError, run_interruptibly, time_limit

BOUND = 20  # seconds from Ctrl-C to the process's exit: generous on a busy machine

SCRIPT = textwrap.dedent(
    """
    import sys
    import jax, jax.numpy as jnp
    from jaxtour._wait import time_limit
    from jaxtour.cost import draw_roofline
    from jaxtour.tracing import explain_retraces, find_nans, step_through

    said = []

    def looping():  # says once that the loop runs: then Ctrl-C lands inside it
        if not said:
            said.append(print("looping", flush=True))

    def body(c):
        jax.debug.callback(looping)
        return c[0], c[1] + 1.0

    def spin(x):  # the condition never turns False
        return jax.lax.while_loop(lambda c: c[0] < 10, body, (x, 0.0))[1]

    lens = {"step_through": step_through, "find_nans": find_nans,
            "explain_retraces": explain_retraces, "draw_roofline": draw_roofline}
    name, limit = sys.argv[1], float(sys.argv[2]) or None
    wrapped = lens[name](spin)
    with time_limit(limit):
        wrapped(jnp.int32(0))
    """
)


def _start(lens: str, limit: float = 0) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT, lens, str(limit)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    "lens, running",
    [
        ("step_through", "step 0 (a `while` equation, <string>:19)"),
        ("find_nans", "step 0 (a `while` equation, <string>:19)"),
        ("explain_retraces", "spin's compiled program"),
        ("draw_roofline", "spin's compiled program"),
    ],
)
def test_ctrl_c_stops_an_endless_loop_under_a_lens_and_says_what_ran(lens, running):
    proc = _start(lens)
    try:
        assert proc.stdout.readline() == "looping\n", proc.stderr.read()
        proc.send_signal(signal.SIGINT)
        start = time.monotonic()
        proc.wait(timeout=BOUND)
        took = time.monotonic() - start
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert took < BOUND
    assert proc.returncode == 1, err  # an uncaught Interrupted, as any exception
    assert (
        f"jaxtour._wait.Interrupted: Stopped (Ctrl-C) while running {running}, after "
        in err
    )
    assert "a while_loop whose condition never turns False?" in err
    assert (
        "Fatal Python error" not in err
    )  # the loop's callback outlived no finalisation


def test_a_time_limit_stops_an_endless_loop_with_what_ran():
    proc = _start("step_through", limit=1)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 1
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(
        r"jaxtour\._wait\.TimeLimitError: Stopped \(time limit of 1 s\) while running "
        r"step 0 \(a `while` equation, <string>:\d+\), after \d+\.\d s: a while_loop "
        r"whose condition never turns False\? .*",
        last,
    )


def test_the_result_and_the_error_of_the_work_come_back_as_they_were():
    out = run_interruptibly(lambda: jnp.arange(3.0) * 2, "doubling")
    np.testing.assert_array_equal(out, [0.0, 2.0, 4.0])
    with pytest.raises(ZeroDivisionError):
        run_interruptibly(lambda: 1 / 0, "a division")


def test_the_work_runs_under_the_calling_thread_s_jax_options():
    with jax.enable_x64(True):
        out = run_interruptibly(lambda: jnp.zeros(2), "zeros")
    assert out.dtype == np.float64
    assert run_interruptibly(lambda: jnp.zeros(2), "zeros").dtype == np.float32


def _thread_and(setting: str) -> tuple[bool, object]:
    """Whether the work ran in a helper thread, and the setting it saw there."""
    caller = threading.current_thread()
    return run_interruptibly(
        lambda: (
            threading.current_thread() is not caller,
            getattr(jax.config, setting),
        ),
        "a look at the settings",
    )


def test_an_option_the_helper_cannot_enter_runs_the_work_in_the_calling_thread():
    # jax.jit under `with jax.threefry_partitionable(False)` draws other numbers:
    # a helper thread would see the global value and draw jit's default ones
    def draw(key):
        return jax.random.normal(key, (4,))

    flipped = not jax.config.jax_threefry_partitionable
    with jax.threefry_partitionable(flipped):
        want = jax.jit(draw)(jax.random.key(0))
        got = run_interruptibly(lambda: jax.jit(draw)(jax.random.key(0)), "draws")
        assert _thread_and("jax_threefry_partitionable") == (False, flipped)
    np.testing.assert_array_equal(got, want)
    # the options it knows, and none, keep the helper thread (Ctrl-C's reach)
    with jax.enable_x64(True):
        assert _thread_and("jax_enable_x64") == (True, True)
    mesh = jax.make_mesh((1,), ("x",))
    with jax.set_mesh(mesh):
        assert _thread_and("jax_enable_x64")[0]
    assert _thread_and("jax_threefry_partitionable") == (True, not flipped)


def test_the_work_runs_under_the_calling_thread_s_mesh():
    # as jax.jit(f) does inside `with jax.set_mesh(mesh)`: a sharding constraint by
    # axis name needs the mesh (one device is enough to need it)
    from jax.sharding import AxisType, PartitionSpec

    from jaxtour.tracing import explain_retraces

    def f(x):
        return jnp.sum(jax.lax.with_sharding_constraint(x * 2, PartitionSpec("x")))

    mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,))
    with jax.set_mesh(mesh):
        want = jax.jit(f)(jnp.ones(4))
        inside = run_interruptibly(lambda: jax.sharding.get_mesh(), "the mesh")
        got = explain_retraces(f)(jnp.ones(4))
    assert inside == mesh and float(got) == float(want) == 8.0
    assert run_interruptibly(lambda: jax.sharding.get_mesh(), "no mesh").empty


def test_a_finite_loop_under_a_time_limit_is_left_alone():
    from jaxtour.tracing import step_through

    def count(n):
        return jax.lax.while_loop(lambda i: i < n, lambda i: i + 1, 0)

    with time_limit(60):
        steps = step_through(count)(jnp.int32(5))
    assert int(steps.outputs) == 5


def test_a_bad_time_limit_says_what_it_takes():
    with pytest.raises(ValueError, match=r"`seconds` must be > 0 or None; got 0\."):
        time_limit(0).__enter__()
    assert issubclass(TimeLimitError, TimeoutError)
