"""The cost ledger's FLOPs and bytes: hand counts, and XLA's own cost_analysis()."""

import jax
import jax.numpy as jnp
import pytest

from jaxtour import _ir, mlp
from jaxtour.cost import NOT_COUNTED, Peaks, Roofline, cost_table, fusion_traffic


def _eqn_flops(table, name):
    return sum(r.flops for r in table.equations if r.name == name)


def test_matmul_flops_are_two_per_multiply_add():
    m, k, n = 12, 7, 5
    table = cost_table(lambda a, b: a @ b)(jnp.ones((m, k)), jnp.ones((k, n)))
    assert _eqn_flops(table, "dot_general") == 2 * m * n * k
    assert table.flops == 2 * m * n * k
    # f32: reads m*k + k*n floats, writes m*n
    assert table.equations[0].bytes == 4 * (m * k + k * n + m * n)


def test_batched_matmul_counts_each_batch():
    a, b = jnp.ones((3, 4, 6)), jnp.ones((3, 6, 2))
    table = cost_table(jnp.matmul)(a, b)
    assert _eqn_flops(table, "dot_general") == 2 * 3 * 4 * 2 * 6


def test_convolution_flops_count_every_multiply_add():
    x, w = jnp.ones((2, 3, 10, 10)), jnp.ones((8, 3, 3, 3))  # NCHW, OIHW, VALID
    table = cost_table(lambda x, w: jax.lax.conv(x, w, (1, 1), "VALID"))(x, w)
    out = 2 * 8 * 8 * 8  # batch, out features, 8x8 positions
    assert _eqn_flops(table, "conv_general_dilated") == 2 * out * 3 * 3 * 3
    assert table.xla.get("flops", table.flops) == table.flops


def test_elementwise_chain_and_reduction():
    n = 1000
    table = cost_table(lambda x: jnp.sum(jnp.tanh(x * 2.0 + 1.0)))(jnp.ones(n))
    by_name = {r.name: r for r in table.equations}
    assert by_name["mul"].flops == n and by_name["add"].flops == n
    assert by_name["tanh"].flops == 0 and by_name["tanh"].transcendentals == n
    assert by_name["reduce_sum"].flops == n - 1  # n values to 1: n - 1 additions
    assert sum(r.flops for r in table.equations) == 3 * n - 1
    # compiled, XLA may split the sum into padded windows (CPU: reduce-window + reduce)
    # and counts them as the kit does
    assert table.flops == table.xla.get("flops", table.flops) >= 3 * n - 1


def test_a_reduction_over_an_empty_axis_and_a_conv_with_no_features_cost_nothing():
    # n values to 1 take n - 1 additions; none to 1 take none, not -1
    table = cost_table(lambda x: x.sum(-1))(jnp.ones((3, 0)))
    assert _eqn_flops(table, "reduce_sum") == 0
    x, w = jnp.ones((1, 3, 8, 8)), jnp.ones((0, 3, 3, 3))  # no output features
    table = cost_table(lambda x, w: jax.lax.conv(x, w, (1, 1), "SAME"))(x, w)
    assert _eqn_flops(table, "conv_general_dilated") == 0


EMPTY_REDUCE = """HloModule m, entry_computation_layout={(f32[3,0]{1,0})->f32[3]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[3,0]) -> f32[3] {
  %x = f32[3,0]{1,0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[3]{0} reduce(%x, %zero), dimensions={1}, to_apply=%add
}
"""


def test_a_compiled_reduce_of_nothing_costs_nothing():
    [(op, count)] = _ir.hlo_counts(_ir.parse_hlo(EMPTY_REDUCE))
    assert (op.opcode, count.flops) == ("reduce", 0)


def test_scan_body_counts_once_per_iteration():
    def f(x):
        return jax.lax.scan(lambda c, _: (c * 2.0, None), x, None, length=7)[0]

    table = cost_table(f)(jnp.ones(10))
    assert _eqn_flops(table, "mul") == 7 * 10


def test_group_by_source_sums_a_line():
    def f(x):
        return jnp.sin(x) * 2.0 + 1.0  # one line, three equations

    grouped = cost_table(f, group_by="source")(jnp.ones(4))
    assert len(grouped.equations) == 1
    assert grouped.equations[0].name == "sin, mul, add"
    assert grouped.equations[0].flops == 8


@pytest.mark.slow  # compiles the MLP step
def test_counts_agree_with_cost_analysis_on_the_mlp_step():
    params, (x, y) = mlp.init_params(jax.random.key(0)), mlp.example_batch(128)
    table = cost_table(mlp.update)(params, x, y)
    if "flops" not in table.xla:
        pytest.skip(f"no cost_analysis() on {jax.default_backend()}")
    # XLA's reductions split per backend (reduce-window + reduce on CPU) and count a
    # comparator's ops; the step's 310 MFLOP are matmuls, so the counts agree to 0.1 %.
    assert table.flops == pytest.approx(table.xla["flops"], rel=1e-3)
    assert table.bytes == pytest.approx(table.xla["bytes_accessed"], rel=0.02)
    assert not table.not_counted
    # the jaxpr asks for the same matmuls: 2 * 128 * (784*512 + 512*256 + 256*10) * 3
    matmuls = sum(r.flops for r in table.equations if r.name == "dot_general")
    assert (
        matmuls
        == 2 * 128 * (784 * 512 + 512 * 256 + 256 * 10) * 3 - 2 * 784 * 512 * 128
    )


def test_unknown_primitive_is_not_counted_never_zero():
    table = cost_table(jnp.sort)(jnp.arange(5.0))
    (row,) = [r for r in table.equations if r.name == "sort"]
    assert row.flops is None
    assert "sort" in table.not_counted
    assert (
        f"{NOT_COUNTED.capitalize()} (the rules do not know them, so totals are "
        "lower bounds): sort" in str(table)
    )


def test_fusion_saves_traffic():
    traffic = fusion_traffic(lambda x: jnp.sin(x) * 2 + 1)(jnp.ones(1000))
    assert (traffic.unfused_bytes, traffic.fused_bytes) == (24000.0, 8000.0)
    assert traffic.saving == 3.0


def test_backend_without_cost_analysis(monkeypatch):
    def missing(self):
        raise NotImplementedError("no cost analysis here")

    monkeypatch.setattr(jax.stages.Compiled, "cost_analysis", missing)
    table = cost_table(lambda x: x * 2)(jnp.ones(3))
    assert table.xla == {} and table.flops == 3
    assert (
        "XLA's cost_analysis() gives no figures for this program on "
        f"{jax.default_backend()} (none on this backend, or -1: XLA could not count "
        "it): only the kit's own counts are shown."
    ) in table.notes()


def test_bad_input_messages():
    with pytest.raises(TypeError, match=r"^cost_table needs a function to trace"):
        cost_table(3)
    with pytest.raises(
        ValueError,
        match=r"^`group_by` must be None .one row per equation. "
        r'or "source"',
    ):
        cost_table(jnp.sin, group_by="line")

    def not_jittable(x):
        return float(x) + 1  # a Python float of a tracer

    with pytest.raises(jax.errors.ConcretizationTypeError) as info:
        cost_table(not_jittable)(jnp.ones(()))
    assert (
        "(raised while cost_table traced not_jittable(f32[]))" in info.value.__notes__
    )


def test_hlo_rules_read_dot_and_reduce_window():
    compiled = (
        jax.jit(lambda a, b: (a @ b).sum())
        .lower(jnp.ones((6, 4)), jnp.ones((4, 3)))
        .compile()
    )
    rows = _ir.hlo_counts(_ir.parse_hlo(compiled.as_text()))
    assert sum(c.flops for _, c in rows) == 2 * 6 * 3 * 4 + 6 * 3 - 1


def test_fusion_traffic_says_more_when_the_compiled_ops_move_more():
    # lax.map is a loop: its compiled ops slice and copy each row, which the two
    # equations of the jaxpr's body do not count
    traffic = fusion_traffic(lambda x: jax.lax.map(jnp.sin, x).sum())(jnp.arange(3.0))
    assert traffic.fused_bytes > traffic.unfused_bytes > 0
    more = traffic.fused_bytes / traffic.unfused_bytes
    start = f"The compiled ops move {more:.3g}x more bytes than the equations"
    assert traffic.verdict.startswith(start) and traffic.verdict in str(traffic)
    assert repr(traffic).count(f"{more:.3g}x more") == 1 and "less" not in repr(traffic)


@pytest.mark.parametrize(
    "unfused, fused, verdict",
    [
        (24000, 8000, "Fusion moves 3x fewer bytes."),
        (
            40,
            100,
            "The compiled ops move 2.5x more bytes than the equations (100 B "
            "against 40 B): here the compiled program moves bytes the equations do not "
            "count, more than fusion saves.",
        ),
        (
            0,
            24,
            "The equations move no bytes; the compiled ops move 24 B (copies XLA "
            "adds).",
        ),
        (24, 24, "The compiled ops move as many bytes as the equations (24 B)."),
    ],
)
def test_fusion_traffic_verdict(unfused, fused, verdict):
    from jaxtour.cost import FusionTraffic

    traffic = FusionTraffic("f", unfused, fused, None, equations=2, ops=1)
    assert traffic.verdict == verdict


def test_fusion_traffic_within_a_percent_reads_about_as_many_never_1x():
    def pair(x, n):
        return x * n, x.sum()

    x = jnp.ones((16, 32))
    traffic = fusion_traffic(pair, static_argnames="n")(x, n=3)
    # by hand: the mul reads and writes x (2 * 2048 B), the sum reads x, writes 4 B
    assert traffic.unfused_bytes == 2 * x.nbytes + x.nbytes + 4
    if traffic.ops == 1:  # a GPU fuses both outputs into one op, reading x once
        assert traffic.fused_bytes == x.nbytes + x.nbytes + 4
        pytest.skip("this backend fuses the pair: no 'about as many' to read")
    gap = traffic.fused_bytes - traffic.unfused_bytes
    assert 0 < abs(gap) <= 0.01 * traffic.unfused_bytes  # the compiled ops: a few B
    assert traffic.verdict.startswith(
        "The compiled ops move about as many bytes as the equations ("
    )
    assert f"{abs(gap):.0f} B {'more' if gap > 0 else 'fewer'}" in traffic.verdict
    assert repr(traffic).endswith(": about as many)")


def test_fusion_traffic_ratio_never_reads_1x():
    from jaxtour.cost import FusionTraffic

    for fused in range(9_000, 11_001, 7):
        traffic = FusionTraffic("f", 10_000, fused, None, equations=2, ops=1)
        for text in (traffic.verdict, repr(traffic)):
            assert " 1x " not in text and "(1x" not in text, text


def _square_or_cube(p, a):
    return jax.lax.cond(p > 0, lambda a: a @ a, lambda a: a @ a @ a, a)


def test_a_cond_counts_its_costliest_branch_as_xla_does():
    n = 256
    a, p = jnp.ones((n, n)), jnp.float32(1.0)
    table = cost_table(_square_or_cube)(p, a)
    matmul = 2 * n**3
    # the cube's two matmuls, not all three; the predicate's compare is one flop
    assert _eqn_flops(table, "dot_general") == 2 * matmul
    if jax.default_backend() == "cpu":  # a GPU splits a product's K into partial
        # products and adds them after (an H200 added 3 n^2 per product): more FLOPs
        assert table.flops == 2 * matmul + 1
    compiled = jax.jit(_square_or_cube).lower(p, a).compile()
    xla = _ir.cost_summary(compiled)
    if "flops" in xla:  # XLA adds in float32: 2**26 + 1 reads 2**26
        assert table.flops == pytest.approx(xla["flops"], rel=2**-23)
        assert table.bytes == pytest.approx(xla["bytes_accessed"], rel=1e-3)
    # unfused: the compare and convert (5 B each) and the cube's two matmuls
    traffic = fusion_traffic(_square_or_cube)(p, a)
    assert traffic.unfused_bytes == 10 + 2 * 3 * 4 * n * n
    assert "cond counts its costliest branch" in traffic.note
    notes = table.notes()
    assert any(
        "cond counts its costliest branch" in n and "upper bound" in n for n in notes
    )
    roof = Roofline(table, Peaks("cpu:cpu", 50e9, 10e9), 1e-3)
    assert "a cond counts its costliest branch (an upper bound)" in roof.title


def test_a_conditional_op_counts_its_costliest_branch():
    n = 64
    a, p = jnp.ones((n, n)), jnp.float32(1.0)
    compiled = jax.jit(_square_or_cube).lower(p, a).compile()
    module = _ir.parse_hlo(compiled.as_text())
    (cond,) = [
        (op, c) for op, c in _ir.hlo_counts(module) if op.opcode == "conditional"
    ]
    assert cond[1].flops == 2 * 2 * n**3  # the cube's branch, never both branches


def test_where_the_kit_and_xla_part_names_only_ops_the_program_holds():
    argmax = cost_table(lambda x: jnp.argmax(x, axis=1))(jnp.ones((64, 128)))
    (flops,) = [n for n in argmax.notes() if n.startswith("FLOPs:")]
    if "apart" in flops:  # XLA counts the argmax comparator's ops; the kit one a value
        assert "a reduction (XLA counts each op of its combining computation" in flops
        assert "convolution" not in flops
    square = cost_table(lambda a: a @ a)(jnp.ones((64, 64)))
    assert not any("convolution" in n or "a slice" in n for n in square.notes())


LIBRARY = (
    "(FLOP and transcendental totals leave them out; it is a library call (a custom "
    "call), of which XLA's cost_analysis() counts no FLOPs or transcendentals either, "
    "so its total is no measure of it)"
)


def _exp_top2(xs):
    return jax.lax.scan(lambda c, x: (c, jax.lax.top_k(jnp.exp(x), 2)[0]), 0.0, xs)[1]


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="a LAPACK call on a CPU")
def test_the_transcendentals_of_an_op_not_counted_are_never_a_silent_zero():
    # a cholesky takes a square root per diagonal element (64 here), in a LAPACK call
    # neither the rules nor XLA count: every total reads 0 transcendentals
    table = cost_table(jnp.linalg.cholesky)(2.0 * jnp.eye(64))
    assert table.xla["transcendentals"] == sum(r.transcendentals for r in table.ops)
    assert table.xla["transcendentals"] == 0.0
    (row,) = [r for r in table.rows() if r[0].startswith("cholesky")]
    assert row[2:4] == [NOT_COUNTED, NOT_COUNTED]  # FLOPs, transcendentals
    assert f"Compiled: 1 cholesky op not counted {LIBRARY}." in table.notes()
    # a loop around an op not counted: what its body's exp counts is a lower bound
    looped = cost_table(_exp_top2)(jnp.ones((5, 64)))
    (row,) = [r for r in looped.rows() if r[0].startswith("while")]
    assert row[2:4] == [NOT_COUNTED, "≥ 320"]  # 5 iterations of exp on 64 values


def test_a_transcendental_count_xla_does_not_give_is_not_zero():
    from jaxtour.cost import CostTable, Row

    ops = [Row("exponential.1", "", 0.0, 64.0, 512.0, "exponential")]
    table = CostTable("f", "cpu", [], ops, {"flops": 0.0, "bytes_accessed": 512.0})
    (_, _, xla), _ = [t.rows for t in table.report().tables]
    assert xla[2] == NOT_COUNTED  # the key left out where XLA said -1


def _printed(x):
    jax.debug.print("{}", x)
    return jnp.exp(x) @ x


def test_a_debug_print_is_counted_as_no_arithmetic_not_as_an_op_not_counted():
    # oracle: the program without the print, exp then a 64x64 matmul
    table = cost_table(_printed)(jnp.ones((64, 64)))
    rows = [r for r in table.rows() if r[0].startswith("debug_print")]
    assert rows and all(r[2:4] == ["0", "0"] for r in rows)  # FLOPs, transcendentals
    assert not any(NOT_COUNTED in note for note in table.notes())
    assert table.xla["flops"] == 2 * 64**3 and table.xla["transcendentals"] == 64 * 64
    assert "FLOPs: the kit's count equals XLA's (524 k)." in table.notes()
