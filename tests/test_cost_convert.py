"""XLA counts a FLOP per element a `convert` converts; the kit counts none (it moves
data). Where that is the whole gap, the note names the conversion, never another op."""

import jax
import jax.numpy as jnp
import pytest

from jaxtour.cost import cost_table

WHY = "a type conversion (XLA counts a FLOP per element converted, the kit none"


def _xla_flops(f, *args):
    return jax.jit(f).lower(*args).compile().cost_analysis()["flops"]


def test_a_conversion_alone_is_xlas_gap_and_is_named():
    def widen(a):
        return a.astype(jnp.float32)

    x = jnp.ones(1000, jnp.int32)
    table = cost_table(widen)(x)
    assert table.flops == 0 and _xla_flops(widen, x) == 1000  # one per element
    assert any(WHY in note for note in table.notes())
    assert not any("has not found why" in note for note in table.notes())


def test_a_sum_of_converted_values_names_the_conversion_beside_the_reduction():
    def total(a):
        return jnp.sum(a.astype(jnp.float32))

    notes = cost_table(total)(jnp.ones(1000, jnp.int8)).notes()
    flops = next(n for n in notes if n.startswith("FLOPs:"))
    assert WHY in flops


def test_a_bfloat16_matmul_converted_on_a_cpu_is_not_left_unexplained():
    a, b = jnp.ones((8, 16), jnp.bfloat16), jnp.ones((16, 4), jnp.bfloat16)
    table = cost_table(lambda a, b: a @ b)(a, b)
    if "convert" not in table.opcodes:  # a backend that multiplies bf16 as it is
        pytest.skip("no conversion in this backend's program")
    flops = next(n for n in table.notes() if n.startswith("FLOPs:"))
    assert "has not found why" not in flops and (WHY in flops or "equals" in flops)
