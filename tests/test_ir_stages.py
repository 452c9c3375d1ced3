"""jaxtour._ir XLA's own figures, against analytic counts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour import _ir


def test_cost_summary_counts_a_matmul_analytically():
    m, k, n = 32, 64, 16
    compiled = (
        jax.jit(jnp.matmul)
        .lower(np.ones((m, k), np.float32), np.ones((k, n), np.float32))
        .compile()
    )
    figures = _ir.cost_summary(compiled)
    assert figures["flops"] == pytest.approx(2 * m * k * n, rel=0.1)
    assert figures["bytes_accessed"] >= 4 * (m * k + k * n + m * n)
    assert figures["argument_bytes"] == 4 * (m * k + k * n)
    assert figures["output_bytes"] == 4 * m * n
