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


def test_xlas_minus_one_is_no_figure_never_an_amount():
    # XLA answers -1 ("could not count") for a program holding a top_k on a CPU
    f = lambda x: jax.lax.top_k(x, 4)[0]
    x = jnp.ones((64, 128))
    compiled = jax.jit(f).lower(x).compile()
    raw = compiled.cost_analysis()
    raw = raw[0] if isinstance(raw, list | tuple) else raw
    if not raw or raw.get("flops", 0.0) >= 0:
        pytest.skip("XLA counts this program here: no -1 to read")
    figures = _ir.cost_summary(compiled)
    assert "flops" not in figures and "bytes_accessed" not in figures
    assert figures["argument_bytes"] == x.nbytes  # the memory analysis still holds

    from jaxtour.cost import cost_table, fusion_traffic

    table = cost_table(f)(x)
    assert "flops" not in table.xla and "bytes_accessed" not in table.xla
    assert not any("-1 B" in note or "XLA -1" in note for note in table.notes())
    traffic = fusion_traffic(f)(x)
    assert traffic.xla_bytes is None and "XLA says" not in repr(traffic)


def test_arguments_past_the_named_ones_are_named_as_jax_names_them():
    def f(x, *rest, **kw):
        return x

    traced = jax.jit(f).trace(1.0, 2.0, 3.0)
    assert _ir.arg_names(f, 3) == list(traced.jaxpr.jaxpr.debug_info.arg_names)
    assert _ir.arg_names(lambda *a: 0, 2) == ["a[0]", "a[1]"]
    assert _ir.arg_names(print, 2) in (["args[0]", "args[1]"], ["a[0]", "a[1]"])


def _exp_top4(x):
    return jax.lax.top_k(jnp.exp(x), 4)[0]  # a custom call XLA counts nothing of


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="library calls on a CPU")
def test_a_figure_beside_a_library_call_xla_does_not_count_is_a_lower_bound():
    from jaxtour.viz import compare_stages, draw_hlo

    # a cholesky takes 64 square roots, in a LAPACK call XLA does not count: its 0
    # transcendentals are unknown, its FLOPs (the ops around the call) a lower bound
    x = 2.0 * jnp.eye(64)
    figures = _ir.cost_summary(jax.jit(jnp.linalg.cholesky).lower(x).compile())
    (call,) = figures.calls
    assert call.startswith("cholesky.") and call.endswith(" (lapack_spotrf_ffi)")
    flops = figures["flops"]
    assert (
        _ir.figure_text(figures, "flops", "{:,.0f}".format) == f"at least {flops:,.0f}"
    )
    assert figures["transcendentals"] == 0.0
    assert _ir.figure_text(figures, "transcendentals", str) == "not counted"
    assert _ir.left_out(figures) == (
        f"XLA counts no FLOPs, transcendentals or bytes of the library call {call}"
    )
    line = compare_stages(jnp.linalg.cholesky)(x).figures_line()
    assert line.startswith("at least ") and ", transcendentals not counted, " in line
    said = " (XLA counts no FLOPs, transcendentals or bytes of the library call "
    assert f"outputs{said}cholesky." in line and line.endswith(" (lapack_spotrf_ffi))")
    # a top_k: XLA gives -1 for its FLOPs, and counts the exp's transcendentals
    figures = _ir.cost_summary(jax.jit(_exp_top4).lower(jnp.ones(1024)).compile())
    assert _ir.figure_text(figures, "flops", str, named=True) == "FLOPs not counted"
    assert _ir.figure_text(figures, "transcendentals", "{:,.0f}".format) == (
        "at least 1,024"
    )
    source = draw_hlo(_exp_top4, stage="compiled")(jnp.ones(1024)).source
    assert "FLOPs not counted · at least 8.19 kB accessed · " in source
    assert "the library call custom-call (TopK)" in source


def _printed(x):
    jax.debug.print("{}", x)  # a host callback: a custom call, but no arithmetic
    return jnp.exp(x) @ x


def _called(x):
    y = jax.pure_callback(np.asarray, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
    return jnp.exp(y) @ x


@pytest.mark.parametrize("f", [_printed, _called])
def test_a_host_callback_leaves_the_flops_exact(f):
    from jaxtour.viz import compare_stages, draw_hlo

    # oracle: the same program without the callback (exp, then a 64x64 matmul)
    x = jnp.ones((64, 64))
    plain = jax.jit(lambda x: jnp.exp(x) @ x).lower(x).compile().cost_analysis()
    assert plain["flops"] == 2 * 64**3 and plain["transcendentals"] == 64 * 64
    figures = _ir.cost_summary(jax.jit(f).lower(x).compile())
    assert figures.calls == ()
    assert figures["flops"] == plain["flops"]  # XLA's -1 for the custom call taken out
    assert _ir.figure_text(figures, "flops", "{:,.0f}".format) == "524,288"
    assert _ir.figure_text(figures, "transcendentals", "{:,.0f}".format) == "4,096"
    assert _ir.figure_text(figures, "bytes_accessed", "{:,.0f}".format) == (
        f"at least {plain['bytes accessed']:,.0f}"
    )
    (host,) = figures.host
    assert _ir.left_out(figures) == (
        f"host callback {host}: its Python work, and the bytes sent to the host, "
        "are not counted"
    )
    line = compare_stages(f)(x).figures_line()
    assert line.startswith("524 kFLOP, 4.1 ktranscendentals, at least 81.9 kB accessed")
    assert "library call" not in line and f"(host callback {host}: " in line
    source = draw_hlo(f, stage="compiled")(x).source
    assert "\\n524 kFLOP · at least 81.9 kB accessed · " in source
    assert "library call" not in source


def test_a_print_alone_is_zero_flops_not_refused():
    # XLA gives the print's custom call -1 FLOPs: alone, the program's whole count
    figures = _ir.cost_summary(jax.jit(_printed_only).lower(jnp.ones(8)).compile())
    assert figures.refused == () and figures["flops"] == 0.0
    assert _ir.figure_text(figures, "flops", str, named=True) == "0.0"


def _printed_only(x):
    jax.debug.print("{}", x)
    return x


def _print_then_add(x):
    jax.debug.print("{}", x[0, 0])
    return x + 1


def _cube(x):
    return x * x * x


@pytest.mark.parametrize("printed_first", [True, False])
def test_a_callback_in_a_cond_branch_gives_a_range_not_a_false_exact(printed_first):
    # XLA costs a cond as its costliest branch (the cube): the print's -1 never
    # reaches its total, yet XLA does not say so; the kit may not claim an exact count
    branches = (_print_then_add, _cube) if printed_first else (_cube, _print_then_add)
    x = jnp.ones((512, 1024))
    plain_branches = (
        (lambda x: x + 1, _cube) if printed_first else (_cube, lambda x: x + 1)
    )
    plain = jax.jit(lambda p, x: jax.lax.cond(p, *plain_branches, x).sum())
    exact = plain.lower(True, x).compile().cost_analysis()["flops"]  # oracle: no print
    f = jax.jit(lambda p, x: jax.lax.cond(p, *branches, x).sum())
    figures = _ir.cost_summary(f.lower(True, x).compile())
    (host,) = figures.host
    low = figures["flops"]
    assert low <= exact <= low + 1
    assert _ir.figure_text(figures, "flops", "{:,.0f}".format) == (
        f"{low:,.0f} to {low + 1:,.0f}"
    )
    assert figures.branched == (host,)
    assert _ir.left_out(figures).endswith(
        "; FLOPs may be up to 1 short: XLA takes 1 off per host callback, but costs "
        "a conditional as its costliest branch, which may not be the one holding "
        f"the host callback {host}"
    )


def test_a_partitioned_callback_is_a_host_callback_not_a_library_call():
    # it lowers to xla_ffi_partitioned_python_cpu_callback (on a CPU)
    def f(x):
        jax.debug.callback(lambda v: None, x, partitioned=True)
        return (x * x).sum()

    x = jnp.ones((1024, 1024))
    exact = jax.jit(lambda x: (x * x).sum()).lower(x).compile().cost_analysis()
    figures = _ir.cost_summary(jax.jit(f).lower(x).compile())
    assert figures.calls == () and len(figures.host) == 1
    assert figures["flops"] == exact["flops"] == 2 * 1024 * 1024 - 1
    assert _ir.figure_text(figures, "flops", "{:,.0f}".format) == "2,097,151"


def test_many_host_callbacks_are_counted_not_listed():
    # vmap over the rows of a print makes a callback op per row (512 rows: 512 ops)
    def f(x):
        jax.debug.print("{}", x)
        return x * 2

    figures = _ir.cost_summary(jax.jit(jax.vmap(f)).lower(jnp.ones(8)).compile())
    assert len(figures.host) == 8
    first = ", ".join(figures.host[:3])
    assert _ir.left_out(figures) == (
        f"8 host callbacks ({first}, …): their Python work, and the bytes sent to "
        "the host, are not counted"
    )
