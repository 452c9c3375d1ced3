"""Lesson 06's exercises: another tolerance passes, the stubs say what to do, and the mistakes
students make get their own words (the float64-expectation mistake above all).

Each lesson's own solutions are checked once, by the lesson's check cells."""

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.exercises import check


def _feedback(code: str):
    namespace = {"jax": jax, "jnp": jnp, "np": np, "lax": jax.lax}
    exec(textwrap.dedent(code), namespace)
    [name] = [n for n in namespace if n.startswith("ex_")]
    return check(namespace[name], quiet=True)


@pytest.mark.parametrize(
    "code",
    [
        # the lesson's own solution is checked by the lesson; another tolerance that
        # fits float32 passes too
        """def ex_agrees(actual, expected):
           return bool(np.allclose(actual, expected, rtol=0,
                                   atol=1e-4 * np.max(np.abs(expected))))""",
    ],
)
def test_other_right_answers_pass(code):
    feedback = _feedback(code)
    assert feedback.passed, feedback


@pytest.mark.parametrize("name", ["ex_agrees", "ex_matmuls_per_step"])
def test_a_stub_is_not_done(name):
    feedback = _feedback(f"def {name}(*args):\n    ...")
    assert feedback.kind == "not done" and "Traceback" not in feedback.message


@pytest.mark.parametrize(
    ("code", "words"),
    [
        # float64 expectations: exact equality, or a float64-sized tolerance
        (
            """def ex_agrees(actual, expected):
            return bool(np.array_equal(actual, expected))""",
            "float32 keeps about 7 digits",
        ),
        (
            """def ex_agrees(actual, expected):
            return bool(np.allclose(actual, expected, rtol=1e-12, atol=0))""",
            "float64-sized tolerance",
        ),
        # entry by entry, with no absolute tolerance: a running sum crossing zero fails
        (
            """def ex_agrees(actual, expected):
            return bool(np.allclose(actual, expected, rtol=1e-5, atol=0))""",
            "not entry by entry",
        ),
        (
            """def ex_agrees(actual, expected):
            return True""",
            "too loose",
        ),
        # np.nanmax skips the NaN
        (
            """def ex_agrees(actual, expected):
            worst = np.nanmax(np.abs(actual - expected))
            return bool(worst <= 1e-5 * np.abs(expected).max())""",
            "NaN",
        ),
        (
            """def ex_agrees(actual, expected):
            return np.abs(actual - expected)""",
            "return True or False",
        ),
        (
            """def ex_matmuls_per_step(n_layers):
            return 3 * n_layers""",
            "gradient for the input images",
        ),
        (
            """def ex_matmuls_per_step(n_layers):
            return 2 * n_layers""",
            "pass the gradient back",
        ),
        (
            """def ex_matmuls_per_step(n_layers):
            return n_layers""",
            "forward pass only",
        ),
    ],
)
def test_each_mistake_gets_its_own_words(code, words):
    feedback = _feedback(code)
    assert not feedback.passed and feedback.kind == "wrong", feedback
    assert words in feedback.message, feedback.message


SCALE_BLIND = (
    "it {}: a fixed tolerance (an `atol` like 1e-4) ignores the values' scale. Allow "
    "about 1e-5 of the scale, measured against the whole array (max |expected|)"
)


@pytest.mark.parametrize(
    ("atol", "said"),
    [
        # fits values about 1 to 100, too tight for a right matmul of values near 7e4
        (1e-4, "rejects a correct float32 matmul of values up to 7e+04"),
        # fits values near 7e4, and passes values near 7e-5 that are 0.1 % off
        (0.05, "accepts a result off by 0.1 % of values up to 7e-05"),
    ],
)
def test_a_tolerance_blind_to_the_scale_is_told_so(atol, said):
    feedback = _feedback(
        f"""def ex_agrees(actual, expected):
            return bool(np.allclose(actual, expected, rtol=0, atol={atol}))"""
    )
    assert (feedback.passed, feedback.kind) == (False, "wrong")
    assert feedback.message == SCALE_BLIND.format(said)


def test_the_lessons_solution_passes_at_every_scale():
    feedback = _feedback(
        """def ex_agrees(actual, expected):
            error = np.max(np.abs(np.asarray(actual, np.float64) - expected))
            return bool(error <= 1e-5 * np.max(np.abs(expected)))"""
    )
    assert (feedback.passed, feedback.kind) == (True, "passed"), feedback
