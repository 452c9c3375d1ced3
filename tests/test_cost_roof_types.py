"""The roof is a float32 matmul's: a program whose matmuls take another type says so."""

import jax
import jax.numpy as jnp

from jaxtour.cost import Peaks, draw_roofline

FAST = Peaks("cpu:cpu", 1e15, 1e15)  # a roof no program reaches
SLOW = Peaks("cpu:cpu", 1e3, 1e3)  # a roof any real program outruns


def matmul(a, b):
    return a @ b


def test_an_int_matmul_is_not_set_against_a_float32_roof_unsaid():
    x = jnp.ones((64, 64), jnp.int32)
    roof = draw_roofline(matmul, peaks=FAST)(x, x)
    note = "the roof is a float32 matmul's; the matmuls here take int32"
    assert roof.matmul_types == ("int32",)
    assert note in roof.caveats and roof.title.endswith(f"; {note}")
    plain = draw_roofline(matmul, peaks=FAST)(jnp.ones((8, 8)), jnp.ones((8, 8)))
    assert plain.matmul_types == () and "float32" not in plain.title


def test_a_matmul_inside_a_scan_is_read_too():
    def scanned(x):
        return jax.lax.scan(lambda c, _: (c @ c, None), x, None, length=3)[0]

    roof = draw_roofline(scanned, peaks=FAST)(jnp.ones((8, 8), jnp.bfloat16))
    assert roof.matmul_types == ("bfloat16",)


def test_above_a_float32_roof_a_bfloat16_matmul_blames_the_type_not_a_stale_roof():
    x = jnp.ones((64, 64), jnp.bfloat16)
    roof = draw_roofline(matmul, peaks=SLOW)(x, x)
    assert roof.above_roof
    assert "this program's matmuls are not float32, the roof's" in roof.title
    assert "device_peaks(refresh=True)" not in roof.title
