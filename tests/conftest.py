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
