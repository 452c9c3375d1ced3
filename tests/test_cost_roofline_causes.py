"""What draw_roofline concludes of a whole program: a rate only where its count is one
call's, the cause of a point above the roof, and no FLOPs named for what they are."""

import jax
import jax.numpy as jnp

from jaxtour import _ir
from jaxtour.cost import Peaks, Roofline, cost_table, draw_roofline, profile

FAKE = Peaks("cpu:cpu", 50e9, 10e9)
A = jnp.ones((32, 32))


def steps(a, n):
    """n steps of h -> tanh(h a): a while loop whose trip count is an argument."""
    body = lambda c: (c[0] + 1, jnp.tanh(c[1] @ a))
    return jax.lax.while_loop(lambda c: c[0] < n, body, (0, a))[1]


def counted(a):
    return jax.lax.fori_loop(0, 7, lambda i, h: jnp.tanh(h @ a), a)  # 7 known trips


def test_a_loop_of_unknown_trips_gets_no_rate_as_in_profile():
    # the oracle: profile refuses the loop's row a rate, its count one iteration's
    (row,) = [r for r in profile(steps)(A, 7).rows if r.per_iteration]
    assert row.flops_per_s is None
    for n in (7, 70):  # one iteration's FLOPs whatever n: any rate would be false
        table = cost_table(steps)(A, n)
        roof = Roofline(table, FAKE, 1e-3)  # an injected time: no rate whatever it is
        assert table.per_iteration and table.flops > 2 * 32**3
        assert roof.flops_per_s is None and roof.fraction is None
        assert not roof.above_roof
        assert roof.title == (
            f"Roofline of steps on CPU: {table.intensity:.3g} FLOP/B; FLOPs of one "
            "iteration; trips unknown, so no rate or % of peak"
        )
        legend = [t.get_text() for t in roof.figure.legends[0].get_texts()]
        assert not any(text.startswith("whole program") for text in legend)
        assert "a data-dependent loop counts one iteration" in legend
        assert "trips unknown" in roof.figure.axes[0].get_title()
    known = Roofline(cost_table(counted)(A), FAKE, 1e-3)  # 7 trips: a rate
    assert known.flops_per_s == known.table.flops / 1e-3
    assert "% of peak" in known.title and "trips unknown" not in known.title


def test_measured_ops_leave_out_a_loop_of_unknown_trips():
    roof = draw_roofline(steps, peaks=FAKE, measured=True)(A, 7)
    (loop,) = [r.name for r in roof.table.ops if r.name.startswith("while")]
    assert loop not in {p.name for p in roof.points}
    assert roof.flops_per_s is None


def cube_or_not(p, a):
    return jax.lax.cond(p, lambda: a @ a @ a, lambda: a)


def test_above_the_roof_a_cond_names_the_branch_not_taken():
    n = 64
    table = cost_table(cube_or_not)(False, jnp.ones((n, n)))
    if jax.default_backend() == "cpu":  # the cube's two matmuls (a bool: no compare)
        assert table.flops == 2 * 2 * n**3
    roof = Roofline(table, FAKE, 1e-6)  # the cheap branch's time: 1e12 FLOP/s
    assert roof.above_roof
    rate = roof.flops_per_s / 1e9
    assert roof.title == (
        f"Roofline of cube_or_not on CPU: {table.intensity:.3g} FLOP/B, "
        f"≤ {rate:.3g} GFLOP/s measured (≤ {100 * roof.fraction:.2g} % of peak); above "
        "the measured roof: a cheaper branch of a cond may have run (the FLOPs count "
        "the costliest, as XLA's do); a cond counts its costliest branch (an upper bound)"
    )
    assert "device_peaks(refresh=True)" not in roof.title


def test_a_program_of_transcendentals_is_not_called_data_movement():
    x = jnp.ones(1000)
    xla = _ir.cost_summary(jax.jit(jnp.cos).lower(x).compile())
    assert xla["transcendentals"] == 1000  # the oracle: XLA counts them apart
    roof = draw_roofline(jnp.cos, peaks=FAKE)(x)
    assert roof.title == (
        "Roofline of cos on CPU: no FLOPs counted (1,000 transcendentals, which "
        "XLA counts apart), so the program has no place on the roof; its ops are "
        "drawn at the left edge"
    )
    legend = [t.get_text() for t in roof.figure.legends[0].get_texts()]
    assert "ops with no FLOPs counted (1; 1 with transcendentals)" in legend
    assert "data movement" not in roof.figure.axes[0].get_title()
    moved = draw_roofline(lambda x: x.T, peaks=FAKE)(jnp.ones((100, 10)))
    assert "no FLOPs after compilation (pure data movement)" in moved.title


def test_transcendentals_beside_an_op_not_counted_are_a_lower_bound():
    def exp_top4(x):
        return jax.lax.top_k(jnp.exp(x), 4)[0]  # a top_k neither counts on a CPU

    roof = draw_roofline(exp_top4, peaks=FAKE)(jnp.linspace(0.0, 1.0, 1024))
    assert roof.title.startswith(
        "Roofline of exp_top4 on CPU: no FLOPs counted (at least 1,024 "
        "transcendentals, which XLA counts apart), so the program has no place on the "
        "roof; its ops are drawn at the left edge; not plotted: 1 "
    )
    assert "(FLOP and transcendental totals leave them out" in roof.title


def test_a_zero_count_xla_leaves_out_is_zero_not_missing():
    x = jnp.ones(1000)
    raw = jax.jit(jnp.cos).lower(x).compile().cost_analysis()
    raw = raw[0] if isinstance(raw, list | tuple) else raw
    assert "flops" not in raw and raw["bytes accessed"] > 0  # counted, key left out
    table = cost_table(jnp.cos)(x)
    assert table.xla["flops"] == 0.0 == table.flops  # cos: no FLOPs, by hand
    assert "FLOPs: the kit's count equals XLA's (0)." in table.notes()
    assert "XLA reports no FLOPs here." not in table.notes()


def test_complex_arithmetic_says_it_counts_one_flop_per_complex_op():
    n, note = 16, "omplex arithmetic (complex64) counts one FLOP per complex op"
    for dtype in (jnp.complex64, jnp.float32):  # the second: the control
        table = cost_table(lambda a: a @ a)(jnp.ones((n, n), dtype))
        # XLA counts 2 n^3 for either type, though a complex multiply-add is 8 real
        # FLOPs: (a+bi)(c+di) is 4 real multiplies and 2 adds, then 2 adds more
        assert table.flops == table.xla["flops"] == 2 * n**3
        roof = Roofline(table, FAKE, 1e-3)
        said = dtype == jnp.complex64
        assert any(note in line for line in table.notes()) == said
        assert (note in roof.title) == said
