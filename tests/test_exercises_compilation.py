"""Lesson 03's exercises: either spelling passes, the stubs say "not done", and the mistakes
students make get the words the checks promise (JAX and XLA's own counts are the oracle).

Each lesson's own solutions are checked once, by the lesson's check cells."""

import jax
import jax.numpy as jnp
import pytest

from jaxtour.exercises import _compilation as l03
from jaxtour.exercises import check

calls = []  # the global a wrong answer appends to, as the lesson's given code does


def feedback(fn):
    result = check(fn, quiet=True)
    assert "Traceback" not in result.message
    return result


# --- ex_leaky_relu -------------------------------------------------------------------------
def test_leaky_relu_stub_is_not_done():
    def ex_leaky_relu(x): ...

    result = feedback(ex_leaky_relu)
    assert not result.passed and result.kind == "not done"


def test_leaky_relu_with_a_python_if_is_named_under_jit():
    def ex_leaky_relu(x):
        if x > 0:
            return x
        return 0.1 * x

    result = feedback(ex_leaky_relu)
    assert not result.passed and result.kind == "wrong"
    assert "under `jax.jit`" in result.message and "Python `if`" in result.message
    assert "jnp.where" in result.message


def test_leaky_relu_that_keeps_the_global_counter_is_told_it_ran_once():
    def ex_leaky_relu(x):
        calls.append(1)
        return jnp.where(x > 0, x, 0.1 * x)

    result = feedback(ex_leaky_relu)
    assert not result.passed and result.kind == "wrong"
    assert "the global `calls` changed on the first call only" in result.message


stats = {"calls": 0}  # a counter kept in a dict, changed in place


class Counter:
    n = 0


counter = Counter()  # a counter kept on an object: `counter.n += 1`

RAN_ONCE = (
    "changed on the first call only ({}), not on the 2 calls after it: under "
    "`jax.jit`, Python side effects run once, while tracing. Return the value instead "
    "of storing it. Counting calls is not the function's job: drop it."
)


def test_leaky_relu_counting_in_a_global_dict_is_told_it_ran_once():
    stats["calls"] = 0

    def ex_leaky_relu(x):
        stats["calls"] += 1
        return jnp.where(x > 0, x, 0.1 * x)

    result = feedback(ex_leaky_relu)
    assert (result.passed, result.kind) == (False, "wrong")
    # 3 eager calls and 2 jitted ones ran before the watched calls began
    said = "the global `stats` " + RAN_ONCE.format("{'calls': 5} → {'calls': 6}")
    assert result.message == said


def test_leaky_relu_counting_on_a_global_object_is_told_it_ran_once():
    def ex_leaky_relu(x):
        counter.n += 1
        return jnp.where(x > 0, x, 0.1 * x)

    result = feedback(ex_leaky_relu)
    assert (result.passed, result.kind) == (False, "wrong")
    shown = "a Counter holding {'n': 5} → a Counter holding {'n': 6}"
    assert result.message == "the global `counter` " + RAN_ONCE.format(shown)


def test_leaky_relu_with_the_wrong_slope_names_the_input():
    def ex_leaky_relu(x):
        return jnp.where(x > 0, x, 0.01 * x)

    result = feedback(ex_leaky_relu)
    assert not result.passed and "at x=-3.0" in result.message


def test_leaky_relu_with_lax_cond_fails_on_an_array_with_a_hint():
    def ex_leaky_relu(x):
        return jax.lax.cond(x > 0, lambda v: v, lambda v: 0.1 * v, x)

    result = feedback(ex_leaky_relu)
    assert not result.passed and result.kind in ("wrong", "error")


# --- ex_fewer_kernels ------------------------------------------------------------------------
def test_the_oracle_the_check_uses_agrees_with_xla():
    x = jnp.linspace(-1.0, 1.0, 1000)
    a = jax.jit(l03.program_a).lower(x).compile().as_text()
    b = jax.jit(l03.program_b).lower(x).compile().as_text()
    assert l03.kernels(l03.program_a, x) < l03.kernels(l03.program_b, x)
    assert " sort(" in b and " sort(" not in a


def test_fewer_kernels_solution_passes_in_either_spelling():
    def ex_fewer_kernels():
        return ("program_a", "sort")

    assert feedback(ex_fewer_kernels).passed

    def ex_fewer_kernels():  # a second answer, the short spelling
        return ("a", "Sort")

    assert feedback(ex_fewer_kernels).passed


def test_fewer_kernels_stub_is_not_done():
    def ex_fewer_kernels(): ...

    assert feedback(ex_fewer_kernels).kind == "not done"


def test_fewer_kernels_swapped_programs_get_the_counts():
    def ex_fewer_kernels():
        return ("program_b", "sort")

    result = feedback(ex_fewer_kernels)
    assert not result.passed and "count the boxes" in result.message
    assert "program_a compiles into 1 kernel" in result.message


@pytest.mark.parametrize("op", ["tanh", "add"])
def test_fewer_kernels_an_elementwise_op_is_said_to_fuse(op):
    def ex_fewer_kernels():
        return ("program_a", op)

    result = feedback(ex_fewer_kernels)
    assert not result.passed and f"`{op}` is elementwise" in result.message


def test_fewer_kernels_a_single_string_asks_for_the_tuple():
    def ex_fewer_kernels():
        return "program_a"

    result = feedback(ex_fewer_kernels)
    assert not result.passed and "return a tuple of two strings" in result.message
