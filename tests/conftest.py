"""Fixtures shared by the unit tests (settings for every test are in ../conftest.py)."""

import jax
import pytest


@pytest.fixture
def full_float32():
    """Float32 matmuls at full precision, so float64 oracles hold on any backend.

    A CPU multiplies float32 exactly as written; GPUs round the inputs to TF32 and TPUs
    to bfloat16 passes unless asked not to, which moves results by ~1e-3.
    """
    with jax.default_matmul_precision("highest"):
        yield


@pytest.fixture(scope="session")
def executed_lesson():
    """`executed_lesson(source, view=View.INSTRUCTOR)`: the lesson's (ipynb, html), run
    once for the whole run through the lesson cache ($JAXTOUR_EXECUTED, set in
    ../conftest.py), shared by pytest-xdist workers."""
    from jaxtour import lesson

    def executed(source, which=lesson.View.INSTRUCTOR):
        return lesson.executed(source, which)

    return executed
