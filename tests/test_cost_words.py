"""The cost lens's one-line reprs read as English: a count and its noun and verb agree."""

import jax.numpy as jnp

from jaxtour.cost import cost_table, fusion_traffic


def matmul(a, b):
    return a @ b


A, B = jnp.ones((4, 3)), jnp.ones((3, 2))  # 2 * 4 * 2 * 3 = 48 FLOPs, 48 + 24 + 32 B


def test_one_equation_and_one_op_are_singular():
    assert repr(cost_table(matmul)(A, B)) == (
        "CostTable('matmul': 1 equation, 1 compiled op, 48 FLOP, 104 B, 0.462 FLOP/B)"
    )
    assert repr(fusion_traffic(matmul)(A, B)) == (
        "FusionTraffic('matmul': 1 equation moves 104 B; 1 compiled op moves 104 B, "
        "XLA says 104 B: as many)"
    )


def test_several_are_plural():
    def two(a, b):
        return jnp.sin(a @ b) * 2  # dot_general, sin, mul

    table = cost_table(two)(A, B)
    assert repr(table).startswith("CostTable('two': 3 equations, ")
    assert "FusionTraffic('two': 3 equations move " in repr(fusion_traffic(two)(A, B))


def test_flops_take_a_space_before_their_unit_as_bytes_do():
    big = cost_table(matmul)(jnp.ones((16, 8)), jnp.ones((8, 8)))  # 2 * 16 * 8 * 8
    assert ", 2.05 kFLOP, " in repr(big)
    assert ", 48 FLOP, " in repr(cost_table(matmul)(A, B))
    assert "0 FLOP, 0 B" in repr(cost_table(lambda: None)())
