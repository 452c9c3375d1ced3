"""mode_costs: forward mode wins for tall Jacobians, reverse mode for wide ones."""

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest
from matplotlib.collections import PathCollection

from jaxtour import paths
from jaxtour.autodiff import RULE, ModeCost, ModeCosts, dense_family, mode_costs
from jaxtour.autodiff._modes import default_sizes

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def costs() -> ModeCosts:
    return mode_costs(sizes=[(64, 2), (2, 64), (16, 16)], repeats=1)


def test_each_mode_wins_on_its_side_of_the_diagonal(costs):
    assert costs.winner(64, 2) == "jacrev"  # wide: 64 inputs, 2 outputs, like a loss
    assert costs.winner(2, 64) == "jacfwd"  # tall: 2 inputs, 64 outputs
    assert costs.winner(16, 16) == "tie"
    assert "jacfwd" in RULE and "jacrev" in RULE


def test_the_flop_ratio_follows_n_over_m(costs):
    # One JVP per input against one VJP per output: the ratio grows like n/m.
    wide = costs.cost(64, 2, "jacfwd") / costs.cost(64, 2, "jacrev")
    tall = costs.cost(2, 64, "jacfwd") / costs.cost(2, 64, "jacrev")
    assert wide > 8 and tall < 1 / 8
    assert all(r.seconds > 0 and r.flops > 0 for r in costs.records)
    assert len(costs.records) == 6 and costs.sizes == [(64, 2), (2, 64), (16, 16)]


def test_the_text_form_is_a_table_with_a_winner_column(costs):
    assert repr(costs) == "ModeCosts(3 sizes, 6 Jacobians)"
    lines = str(costs).splitlines()
    assert lines[0] == "jacfwd vs jacrev: 3 sizes"
    assert lines[2].split()[-1] == "winner"
    assert [line.split()[-1] for line in lines[4:7]] == ["jacrev", "jacfwd", "tie"]
    assert lines[-1] == costs.rule


def test_the_plot_has_a_winner_map_and_a_ratio_panel(costs):
    fig = costs.plot()
    left, right = fig.axes
    assert left.get_xlabel() == "n (inputs)" and left.get_ylabel() == "m (outputs)"
    assert right.get_xscale() == "log" and right.get_yscale() == "log"
    flops = right.collections[0].get_offsets()
    assert len(flops) == 3
    np.testing.assert_allclose(sorted(flops[:, 0]), [2 / 64, 1, 64 / 2])
    assert "jacfwd" in fig._suptitle.get_text()
    matplotlib.pyplot.close(fig)


def test_the_dense_family_maps_n_inputs_to_m_outputs():
    f = dense_family(5, 3)
    assert f(np.ones(5, np.float32)).shape == (3,)


def test_the_dense_family_is_tanh_of_a_normal_matrix_times_sin():
    import jax
    import jax.numpy as jnp

    x = jnp.linspace(-1.0, 1.0, 3)
    a = jax.random.normal(jax.random.key(4), (2, 3)) / np.sqrt(3)  # drawn as (m, n)
    np.testing.assert_allclose(
        dense_family(3, 2, seed=4)(x), jnp.tanh(a @ jnp.sin(x)), rtol=1e-6
    )


def test_quick_mode_keeps_the_default_sweep_small(monkeypatch):
    monkeypatch.setenv(paths.QUICK_VARIABLE, "1")
    assert len(default_sizes()) <= 5
    monkeypatch.setenv(paths.QUICK_VARIABLE, "0")
    sizes = default_sizes()
    assert len(sizes) == 25 and (2, 512) in sizes and (512, 2) in sizes


def test_no_flops_measured_names_no_winner_in_the_table_or_the_plot():
    # (2, 64) is tall: a verdict from the rule alone would say jacfwd, a NaN one jacrev
    costs = ModeCosts(
        [ModeCost(2, 64, "jacfwd", 1e-4, None), ModeCost(2, 64, "jacrev", 2e-4, 5e3)]
    )
    assert costs.winner(2, 64) == "unknown"
    assert costs.winner(2, 64, by="seconds") == "jacfwd"  # the times were measured
    lines = str(costs).splitlines()
    assert lines[4].split() == [
        "2",
        "64",
        "not",
        "measured",
        "5000",
        "100.0",
        "200.0",
        "unknown",
    ]
    assert lines[-1].startswith("unknown: XLA's cost_analysis() gave no FLOP count")
    fig = costs.plot()
    left = fig.axes[0]
    scatters = [c for c in left.collections if isinstance(c, PathCollection)]
    (point,) = [c for c in scatters if len(c.get_offsets()) == 1]
    assert matplotlib.colors.to_hex(point.get_facecolor()[0]) == "#ffffff"
    assert "unknown: no FLOPs measured" in [
        t.get_text() for t in left.get_legend().texts
    ]
    matplotlib.pyplot.close(fig)


def _stepped(loop: bool, steps: int = 12):
    """A family whose f runs `steps` steps of h -> tanh(B h): in a fori_loop or unrolled."""

    def make(n, m):
        a, b = jnp.ones((m, n)) / n, jnp.eye(m) * 0.5

        def step(h):
            return jnp.tanh(b @ h)

        def unrolled(x):
            h = jnp.tanh(a @ x)
            for _ in range(steps):
                h = step(h)
            return h

        def looped(x):
            return jax.lax.fori_loop(0, steps, lambda i, h: step(h), jnp.tanh(a @ x))

        return looped if loop else unrolled

    return make


def test_a_loops_flops_count_every_iteration_as_the_unrolled_loop_does():
    looped = mode_costs(_stepped(True), sizes=[(4, 16)], repeats=1)
    unrolled = mode_costs(_stepped(False), sizes=[(4, 16)], repeats=1)  # the oracle
    for mode in ("jacfwd", "jacrev"):
        want = unrolled.cost(4, 16, mode)
        assert looped.cost(4, 16, mode) == pytest.approx(want, rel=0.01)
    assert all(r.loops >= 1 and not r.uncounted for r in looped.records)
    assert str(looped).splitlines()[-1].startswith("FLOPs count every loop iteration")
    assert "loop" not in str(unrolled).splitlines()[-1]


def test_a_loop_of_unknown_trip_count_names_no_winner():
    costs = ModeCosts(
        [
            ModeCost(2, 64, "jacfwd", 1e-4, 1e3, loops=1, uncounted=1),
            ModeCost(2, 64, "jacrev", 2e-4, 5e4),
        ]
    )
    assert costs.winner(2, 64) == "unknown"
    assert str(costs).splitlines()[-1].startswith("unknown: a loop whose trip count")
    # the FLOPs were measured: the plot's legend says why there is no winner
    fig = costs.plot()
    legend = [t.get_text() for t in fig.axes[0].get_legend().texts]
    assert legend[-1] == "unknown: a loop of data-dependent trip count"
    matplotlib.pyplot.close(fig)


def test_a_library_call_xla_counts_nothing_of_names_no_winner():
    # a LAPACK cholesky on a CPU: XLA counts no FLOPs of its custom call, so each
    # mode's figure is a lower bound, and which is cheaper by FLOPs is not known
    def family(n, m):
        def f(x):
            return jnp.linalg.cholesky(jnp.outer(x, x) + n * jnp.eye(n))[:m, 0]

        return f

    if jax.default_backend() != "cpu":
        pytest.skip(
            "a CPU's cholesky is a LAPACK call; another backend's may be counted"
        )
    costs = mode_costs(family, sizes=[(4, 2)], repeats=1)
    assert costs.winner(4, 2) == "unknown"
    assert all(r.calls for r in costs.records)
    assert costs.winner(4, 2, by="seconds") in ("jacfwd", "jacrev", "tie")
    assert str(costs).splitlines()[-1].startswith("unknown: a library call")
    fig = costs.plot()
    legend = [t.get_text() for t in fig.axes[0].get_legend().texts]
    assert legend[-1] == "unknown: a library call XLA does not count"
    matplotlib.pyplot.close(fig)


def test_a_scalar_loss_is_the_m_equals_1_case_of_the_rule():
    def family(n, m):
        return lambda x: jnp.sum(jnp.sin(x) ** 2)  # a loss: f32[n] -> f32[]

    assert jax.jacrev(family(64, 1))(jnp.ones(64)).shape == (64,)  # JAX takes it
    costs = mode_costs(family, sizes=[(64, 1)], repeats=1)
    assert costs.winner(64, 1) == "jacrev"  # n > m = 1: reverse mode, as RULE says
    assert costs.cost(64, 1, "jacfwd") > 8 * costs.cost(64, 1, "jacrev")


def test_a_jacobian_of_no_flops_counts_zero_not_unmeasured():
    # d/dx sum(sin x) = cos x: jacrev's program is cosines only, 0 FLOPs by hand; XLA
    # leaves a zero count's key out while counting the rest (its transcendentals)
    family = lambda n, m: lambda x: jnp.sum(jnp.sin(x))
    x = jnp.ones(8)
    raw = jax.jit(jax.jacrev(family(8, 1))).lower(x).compile().cost_analysis()
    raw = raw[0] if isinstance(raw, list | tuple) else raw
    assert "flops" not in raw and raw["transcendentals"] == 8
    costs = mode_costs(family, sizes=[(8, 1)], repeats=1)
    assert costs.cost(8, 1, "jacrev") == 0.0 and costs.cost(8, 1, "jacfwd") > 0
    assert costs.winner(8, 1) == "jacrev"
    assert "not measured" not in str(costs) and "gave no FLOP count" not in str(costs)


class _Compiled:
    """A compiled program whose cost analysis is given: what a backend may answer."""

    def __init__(self, analysis):
        self.analysis = analysis

    def cost_analysis(self):
        if isinstance(self.analysis, Exception):
            raise self.analysis
        return self.analysis

    def memory_analysis(self):
        return None


def test_only_a_backend_without_a_cost_analysis_leaves_flops_unmeasured():
    from jaxtour.autodiff._modes import flops

    counted = {"bytes accessed": 64.0, "transcendentals": 8.0}  # XLA, for cos only
    assert flops(_Compiled(counted)) == 0.0
    assert flops(_Compiled([counted])) == 0.0  # older JAX: one dict per program
    assert flops(_Compiled({"flops": 184.0, "bytes accessed": 64.0})) == 184.0
    assert flops(_Compiled({})) is None  # a backend with no cost analysis
    assert flops(_Compiled(None)) is None
    assert flops(_Compiled(NotImplementedError("no cost analysis"))) is None
    assert (
        flops(_Compiled({"flops": -1.0, "bytes accessed": -1.0})) is None
    )  # uncounted


REPEATS = (
    "mode_costs: `repeats` must be a positive int (the timed runs per Jacobian), or "
    "None for the default; got {}."
)
SIZES = (
    "mode_costs: `sizes` must hold (n, m) pairs of positive ints, n inputs and m "
    "outputs, e.g. sizes=[(64, 1), (1, 64)]; item 0 is {}"
)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"repeats": -1}, REPEATS.format("-1")),
        ({"repeats": 0}, REPEATS.format("0")),  # not quietly the default
        ({"repeats": 2.5}, REPEATS.format("2.5")),
        ({"repeats": True}, REPEATS.format("True")),
        ({"sizes": [4]}, SIZES.format("4") + "."),
        ({"sizes": 4}, SIZES.format("4") + "."),
        ({"sizes": [(4,)]}, SIZES.format("(4,)") + "."),
        ({"sizes": [(4, 0)]}, SIZES.format("(4, 0)") + "."),
        ({"sizes": [(4.0, 2)]}, SIZES.format("(4.0, 2)") + "."),
        (
            {"sizes": (4, 2)},
            SIZES.format("4") + " (one pair goes in a list: sizes=[(4, 2)]).",
        ),
    ],
)
def test_mode_costs_names_the_argument_and_the_form_it_takes(options, message):
    options = {"sizes": [(4, 2)], **options}
    with pytest.raises(ValueError) as caught:
        mode_costs(**options)
    assert str(caught.value) == message
