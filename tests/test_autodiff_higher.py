"""Higher order: derivative_table and the tanh plot, against independent closed forms."""

import re

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest
from numpy.polynomial import polynomial as P
from test_autodiff_cases import cubic

from jaxtour.autodiff import derivative_table, plot_derivatives

matplotlib.use("Agg")

CUBIC = [8.0, -3.0, 2.0, 1.0]  # coefficients, lowest power first


@pytest.mark.parametrize("x", [1.0, -0.75, 2.5])
def test_the_table_holds_the_cubics_derivatives(x):
    table = derivative_table(cubic, order=4)(x)
    expected = [P.polyval(x, P.polyder(CUBIC, k)) for k in range(5)]
    np.testing.assert_allclose(table.values, expected, rtol=1e-6, atol=1e-6)
    assert [row.order for row in table.rows] == [0, 1, 2, 3, 4]


def test_grad_of_the_cubic_at_1_is_4_and_programs_grow_with_each_grad():
    table = derivative_table(cubic, order=4)(1.0)
    assert table.values == [8.0, 4.0, 10.0, 6.0, 0.0]
    assert table.eqns[0] == len(jax.make_jaxpr(cubic)(1.0).jaxpr.eqns)
    assert all(a < b for a, b in zip(table.eqns, table.eqns[1:], strict=False))


def test_the_table_reads_as_text_and_as_markdown():
    table = derivative_table(cubic, order=2)(1.0)
    rows = [f"{row.value:.6g}" for row in table.rows]
    assert repr(table) == f"DerivativeTable('cubic' at x = 1: {', '.join(rows)})"
    lines = str(table).splitlines()
    assert lines[0] == "derivatives of cubic at x = 1"
    assert lines[2].split() == [
        "derivative",
        "value",
        "equations",
        "in",
        "its",
        "jaxpr",
    ]
    body = lines[4:]
    assert [line.split()[0] for line in body] == ["cubic(x)", "cubic′(x)", "cubic′′(x)"]
    assert [line.split()[1] for line in body] == rows
    assert [int(line.split()[2]) for line in body] == table.eqns
    markdown = table.report().markdown().splitlines()
    assert markdown[2] == "| derivative | value | equations in its jaxpr |"
    assert markdown[4] == f"| cubic(x) | 8 | {table.eqns[0]} |"


def _tanh_derivatives(x, order):
    """Closed forms: with t = tanh x, d/dx p(t) = p'(t)·(1 - t²), from p(t) = t."""
    t = np.tanh(np.asarray(x, np.float64))
    p, curves = np.array([0.0, 1.0]), []
    for _ in range(order + 1):
        curves.append(P.polyval(t, p))
        p = P.polymul(P.polyder(p), [1.0, 0.0, -1.0])
    return curves


def test_the_tanh_plot_draws_tanh_and_its_four_derivatives():
    ax = plot_derivatives(jnp.tanh, order=4, xs=np.linspace(-4, 4, 81))
    lines = ax.get_lines()[:5]
    assert [line.get_label() for line in lines] == [
        "tanh(x)",
        "tanh′(x)",
        "tanh′′(x)",
        "tanh′′′(x)",
        "tanh⁽⁴⁾(x)",
    ]
    xs = lines[0].get_xdata()
    for line, expected in zip(lines, _tanh_derivatives(xs, 4), strict=True):
        np.testing.assert_allclose(line.get_ydata(), expected, atol=2e-5)
    matplotlib.pyplot.close(ax.figure)


def test_points_that_are_not_one_line_are_refused_by_their_shape():
    for xs, shape in [(np.ones((3, 2)), "f32[3,2]"), (1.0, "f32[]")]:
        with pytest.raises(
            ValueError,
            match=r"^plot_derivatives: `xs` must be a 1-D array of points, as each curve "
            r"is jax\.vmap of a nested jax\.grad over it \(f takes a scalar\); got "
            + re.escape(shape)
            + r"\. Pass e\.g\. jnp\.linspace\(-7\.0, 7\.0, 401\), or xs\.ravel\(\)\.$",
        ):
            plot_derivatives(jnp.sin, 1, np.asarray(xs))


def _branchy(x):
    """The autodiff cookbook's example: Python control flow, which jax.grad handles."""
    return 3.0 * x**2 if x < 3 else -4 * x


@pytest.mark.parametrize("x", [2.0, 5.0])
def test_python_control_flow_gives_jax_grads_values_and_counts_nothing(x):
    table = derivative_table(_branchy, order=2)(x)
    g = jax.grad(_branchy)
    assert table.values == [_branchy(x), float(g(x)), float(jax.grad(g)(x))]
    # finite differences agree on each side of the branch
    h = 1e-3
    assert table.values[1] == pytest.approx(
        (_branchy(x + h) - _branchy(x - h)) / (2 * h)
    )
    assert table.eqns == [None, None, None]
    text = str(table)
    assert text.count("not counted") == 4  # three rows and the note
    assert "jax.make_jaxpr cannot trace it" in text
