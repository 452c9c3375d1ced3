"""Bad input to the autodiff drawings: each gets one clear error saying what to do."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.autodiff import (
    derivative_table,
    draw_grad,
    draw_jvp,
    draw_vjp,
    grad_graph,
    mode_costs,
    plot_derivatives,
    vjp_graph,
)

INT_FIX = (
    "Pass 1.0 rather than 1, or x.astype(jnp.float32); to keep an integer argument "
    "fixed, leave this argument out of `argnums`."
)


def _raises(error, message, call):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()


def test_an_integer_input_is_not_differentiable():
    _raises(
        TypeError,
        "draw_grad cannot differentiate with respect to argument 0 (`x`): it "
        "holds int values, and gradients need floating-point inputs (as in jax.grad). "
        + INT_FIX,
        lambda: draw_grad(lambda x: x * 2.0)(1),
    )


def test_an_integer_array_names_its_dtype_and_pytree_path():
    _raises(
        TypeError,
        "draw_grad cannot differentiate with respect to argument 0 "
        "(`params['n']`): it holds int32 values, and gradients need floating-point inputs "
        "(as in jax.grad). " + INT_FIX,
        lambda: draw_grad(lambda params: params["w"].sum())(
            {"w": jnp.ones(2), "n": jnp.arange(3)}
        ),
    )


def test_a_string_input_is_not_differentiable():
    _raises(
        TypeError,
        "draw_grad cannot differentiate with respect to argument 1 (`mode`): "
        "it is a str ('fast'), not a number or an array. JAX differentiates floating-point "
        "arrays only: pass e.g. 1.0 or jnp.array([...]), or leave this argument out of "
        "`argnums`.",
        lambda: draw_grad(lambda x, mode: x, argnums=1)(1.0, "fast"),
    )


def test_a_string_left_out_of_argnums_is_passed_through():
    graph = grad_graph(lambda x, mode: x**2 if mode == "square" else x, argnums=0)(
        3.0, "square"
    )
    assert graph.values_of("gradient") == [6.0]


def test_argnums_out_of_range():
    _raises(
        ValueError,
        "draw_grad: argnums=2 is out of range: f was called with 2 positional "
        "arguments (valid positions: 0..1). Pass the example arguments in the call, e.g. "
        "draw_grad(f, argnums=1)(x, y).",
        lambda: draw_grad(lambda x, y: x * y, argnums=2)(1.0, 2.0),
    )


def test_argnums_that_are_not_ints_fail_when_configured():
    message = (
        "draw_grad: `argnums` must be an int or a tuple of ints naming the positional "
        "arguments to differentiate, as in jax.grad; got {}."
    )
    _raises(TypeError, message.format("'0'"), lambda: draw_grad(jnp.sin, argnums="0"))
    _raises(
        TypeError,
        message.format("(0, 1.0)"),
        lambda: draw_grad(jnp.sin, argnums=(0, 1.0)),
    )


def test_a_non_scalar_output_points_to_draw_vjp_or_a_sum():
    _raises(
        ValueError,
        "draw_grad needs f to return a scalar, as jax.grad does; f returned "
        "f32[3]. To draw the backward pass for any output, use draw_vjp(f)(*args); or "
        "reduce the output to a scalar, e.g. draw_grad(lambda x: f(x).sum())(x).",
        lambda: draw_grad(jnp.sin)(jnp.ones(3)),
    )


def test_a_tuple_output_is_not_a_scalar():
    with pytest.raises(
        ValueError, match=r"f returned a tuple \(f32\[\], f32\[\]\)\. .*draw_vjp"
    ):
        draw_grad(lambda x: (x, x))(1.0)


def test_an_integer_output_cannot_be_differentiated():
    _raises(
        TypeError,
        "draw_grad needs f to return a real floating-point scalar; f returned "
        "i32[]. Return a float (e.g. .astype(jnp.float32)); use holomorphic=True for a "
        "holomorphic complex function, or draw_vjp for other complex outputs.",
        lambda: draw_grad(lambda x: jnp.int32(3))(1.0),
    )


def test_f_must_be_a_function_and_rankdir_a_direction():
    with pytest.raises(TypeError, match=r"^draw_grad needs a function to trace"):
        draw_grad(3.0)
    _raises(
        ValueError,
        'draw_grad: `rankdir` must be one of "TB" (top to bottom), "LR" '
        '(left to right), "BT" or "RL"; got \'up\'.',
        lambda: draw_grad(jnp.sin, rankdir="up"),
    )


def test_draw_jvp_takes_tuples_that_match():
    _raises(
        TypeError,
        "draw_jvp(f)(primals, tangents) takes two tuples, as jax.jvp does; got "
        "float and float. For one argument write draw_jvp(f)((x,), (1.0,)).",
        lambda: draw_jvp(jnp.sin)(1.0, 1.0),
    )
    _raises(
        TypeError,
        "draw_jvp: tangents must match the primals in structure and shape; "
        "expected f32[3], got f32[2].",
        lambda: draw_jvp(jnp.sin)((jnp.ones(3),), (jnp.ones(2),)),
    )


def test_a_cotangent_of_another_structure_is_shown_as_its_pytree():
    # Leaves alone read "expected (f32[], f32[]), got (f64[], f64[])": the same
    # shapes, a dtype JAX does not use, and not the dict/tuple that really differ.
    _raises(
        TypeError,
        "draw_vjp: cotangents must match f's output in structure and shape; "
        "expected {'a': f32[], 'b': f32[]}, got (f32[], f32[]).",
        lambda: draw_vjp(lambda x: {"a": x, "b": 2 * x}, (1.0, 3.0))(1.0),
    )


def test_draw_vjp_checks_its_cotangent_and_its_primals():
    _raises(
        TypeError,
        "draw_vjp: cotangents must match f's output in structure and shape; "
        "expected f32[3], got f32[2].",
        lambda: draw_vjp(jnp.sin, cotangents=jnp.ones(2))(jnp.ones(3)),
    )
    import jax
    import numpy as np

    # the oracles: jax.vjp takes integer primals (float0 cotangents); jax.jvp takes
    # them only with float0 tangents
    _, pullback = jax.vjp(jnp.sin, jnp.arange(3))
    assert pullback(jnp.ones(3))[0].dtype == jax.dtypes.float0
    with pytest.raises(TypeError, match="float0"):
        jax.jvp(jnp.sin, (jnp.arange(3),), (jnp.zeros(3),))
    fix = "Pass a floating-point primal (1.0 rather than 1, or x.astype(jnp.float32))."
    _raises(
        TypeError,
        "draw_vjp: sin's primals hold int values, and no floating-point value: jax.vjp "
        "takes them, but their cotangents are float0 (empty), so there is no "
        f"derivative to draw. {fix}",
        lambda: draw_vjp(jnp.sin)(3),
    )
    _raises(
        TypeError,
        "draw_jvp: sin's primals hold int32 values, and no floating-point value: "
        "jax.jvp takes them only with float0 tangents, which are empty, so there is no "
        f"derivative to draw. {fix}",
        lambda: draw_jvp(jnp.sin)(
            (jnp.arange(3),), (np.zeros(3, dtype=jax.dtypes.float0),)
        ),
    )
    # one floating-point primal is enough: the integer one is drawn fixed
    drawn = draw_vjp(lambda a, b: a * b)(jnp.arange(3), 2.0)
    assert drawn.title.endswith("2 transposed equations")


def test_holomorphic_names_the_type_jax_sees_not_float64():
    # A Python 1.0 is a weak f32 to JAX (jax.grad says "got float32"); float64 was wrong.
    message = (
        "grad_graph cannot differentiate with respect to argument 0 (`z`): "
        "holomorphic=True needs complex inputs (as in jax.grad); it holds {}. "
        "Pass x.astype(jnp.complex64)."
    )

    def f(z):
        return z * z

    _raises(
        TypeError,
        message.format("float values"),
        lambda: grad_graph(f, holomorphic=True)(1.0),
    )
    _raises(
        TypeError,
        message.format("float32 values"),
        lambda: grad_graph(f, holomorphic=True)(jnp.ones(2)),
    )


def test_derivative_table_needs_an_order_and_a_real_point():
    _raises(
        ValueError,
        "derivative_table: `order` must be a positive int (1 for f′, 4 for f′ "
        "to f⁽⁴⁾); got 0.",
        lambda: derivative_table(jnp.sin, order=0),
    )
    _raises(
        TypeError,
        "derivative_table needs the point x to be a real number such as 1.0 "
        "(floats: gradients need them); got 2 (int).",
        lambda: derivative_table(jnp.sin)(2),
    )
    with pytest.raises(TypeError, match=r"x has shape \(2,\).*jax\.jacfwd"):
        derivative_table(jnp.sin)(jnp.ones(2))


def test_plot_derivatives_needs_a_positive_order():
    # order=-1 drew tanh alone, titled "tanh and its first -1 derivatives"
    for order in (-1, 0, 2.5):
        _raises(
            ValueError,
            "plot_derivatives: `order` must be a positive int (1 for f′, 4 for f′ "
            f"to f⁽⁴⁾); got {order!r}.",
            lambda order=order: plot_derivatives(order=order),
        )


def test_derivative_table_needs_f_to_return_one_real_number():
    # f32[1] used to fail in float() ("Only scalar arrays can be converted ...").
    for f, got in [
        (lambda x: jnp.sin(x)[None], "f32[1]"),
        (lambda x: jnp.round(x).astype(jnp.int32), "i32[]"),
        (lambda x: (x, x), "(0.5, 0.5) (tuple)"),
    ]:
        _raises(
            TypeError,
            "derivative_table needs f to return one real floating-point number, as "
            f"nested jax.grad does; f(x) returned {got}. Reduce an array to one "
            "float, e.g. derivative_table(lambda x: f(x).sum()) or f(x)[0].",
            lambda f=f: derivative_table(f, order=2)(0.5),
        )


def test_mode_costs_checks_each_member_of_the_family():
    _raises(
        TypeError,
        "mode_costs: f_family(3, 2) must return a function from f32[3] to "
        "f32[2]; it returned f32[1].",
        lambda: mode_costs(lambda n, m: lambda x: x[:1], sizes=[(3, 2)]),
    )
    _raises(
        TypeError,
        "mode_costs: f_family(3, 1) must return a function from f32[3] to "
        "f32[1] or a scalar f32[]; it returned f32[2].",
        lambda: mode_costs(lambda n, m: lambda x: x[:2], sizes=[(3, 1)]),
    )


def test_mode_costs_refuses_an_empty_grid_rather_than_running_the_default(monkeypatch):
    def grid():
        raise AssertionError("the default grid was measured")

    monkeypatch.setattr("jaxtour.autodiff._modes.default_sizes", grid)
    _raises(
        ValueError,
        "mode_costs: `sizes` is empty, so there is nothing to measure. Give the "
        "(n, m) pairs to compare, e.g. sizes=[(64, 1), (1, 64)], or leave it out "
        "for the default grid.",
        lambda: mode_costs(sizes=[]),
    )


def test_a_keyword_only_static_name_points_to_functools_partial():
    import functools

    def scaled(x, *, n):
        return jnp.sin(x) * n

    for who, draw, args in (
        ("draw_vjp", draw_vjp, (jnp.ones(2),)),
        ("draw_jvp", draw_jvp, ((jnp.ones(2),), (jnp.ones(2),))),
    ):
        transform = who.removeprefix("draw_")
        _raises(
            TypeError,
            f"{who}: `n` is a keyword-only parameter of scaled, and {who}(f)(…) takes "
            f"f's primals by position, as jax.{transform} does. Bind it first: "
            f"{who}(functools.partial(scaled, n=…)).",
            lambda draw=draw: draw(scaled, static_argnames="n"),
        )
        # the fix it names works
        assert draw(functools.partial(scaled, n=3))(*args).title.startswith(transform)


def test_draw_vjp_takes_primals_by_position_as_jax_vjp_does():
    def powered(x, n=1):
        return jnp.sum(x**n)

    _raises(
        TypeError,
        "draw_vjp(f)(…) takes powered's primals by position, as jax.vjp does, and got "
        "`n` by keyword. Pass them by position (a static one too, held by "
        "static_argnames); bind a keyword-only one first: "
        "draw_vjp(functools.partial(f, …)).",
        lambda: draw_vjp(powered, static_argnames="n")(jnp.ones(3), n=2),
    )
    with pytest.raises(TypeError, match=r"^draw_jvp\(f\)\(…\) takes powered's primals"):
        draw_jvp(powered)((jnp.ones(3),), (jnp.ones(3),), n=2)
    drawn = draw_vjp(powered, static_argnames="n")(jnp.ones(3), 2)  # as it says
    assert drawn.title.startswith("vjp of powered")


def _branchy(x):
    return 3.0 * x**2 if x < 3 else -4 * x


def test_a_branch_on_a_differentiated_value_points_to_jnp_where_not_static():
    _raises(
        TypeError,
        "draw_grad: _branchy needs a concrete Python value where it got a traced one "
        "(Attempted boolean conversion of traced array with shape bool[].). draw_grad "
        "traces f as jax.jit does, so a Python `if`, `while` or int() on a "
        "differentiated value (`x`) has no concrete value, and a differentiated "
        "argument cannot be static. Write the branch with jnp.where(cond, a, b) or "
        "jax.lax.cond, and a loop with jax.lax.scan or jax.lax.fori_loop of fixed "
        "bounds (JAX's docs on control flow): jax.grad differentiates those.",
        lambda: draw_grad(_branchy)(2.0),
    )

    # the advice works when followed: the gradient is jax.grad's
    def where(x):
        return jnp.where(x < 3, 3.0 * x**2, -4 * x)

    graph = grad_graph(where)(2.0)
    assert graph.values_of("gradient") == [jax.grad(_branchy)(2.0)]


X4 = jnp.arange(1.0, 5.0)


@pytest.mark.parametrize(
    "n", [2, np.int32(2), np.int64(2), jnp.int32(2)], ids=["int", "np32", "np64", "jnp"]
)
@pytest.mark.parametrize(
    "f",
    [
        lambda x, n: x[:n].sum(),
        lambda x, n: (jnp.ones(n) * x[:n]).sum(),
        lambda x, n: x.reshape(n, -1).sum(axis=0)[0],
    ],
    ids=["slice", "ones", "reshape"],
)
def test_draw_grad_takes_an_integer_size_as_jax_grad_does(f, n):
    graph = grad_graph(f)(X4, n)
    (got,) = graph.values_of("gradient")
    np.testing.assert_array_equal(got, jax.grad(f)(X4, n))


@pytest.mark.parametrize("n", [2, np.int32(2), jnp.int32(2)], ids=["int", "np", "jnp"])
def test_draw_vjp_retells_a_traced_size_and_its_advice_works(n):
    def f(n, x):
        return jnp.sin(x[:n])

    with pytest.raises(TypeError) as err:
        draw_vjp(f)(n, X4)
    said = str(err.value)
    assert said.startswith("draw_vjp: f needs a concrete Python value where it got a ")
    with pytest.raises(IndexError) as by_jit:  # JAX's own words, in any release
        jax.jit(f)(n, X4)
    assert f"({str(by_jit.value).splitlines()[0]})" in said
    assert said.endswith(
        "draw_vjp traces `n` (argument 0) as an array, as jax.jit would. If it is a "
        "size, a loop count or a flag, hold it static: draw_vjp(f, static_argnums=0)."
        + (" Pass it as a Python int: int(n)." if isinstance(n, jax.Array) else "")
    )
    held = int(n) if isinstance(n, jax.Array) else n
    graph = vjp_graph(f, static_argnums=0)(held, X4)
    (want,) = jax.vjp(lambda x: f(2, x), X4)[1](jnp.ones(2))
    np.testing.assert_allclose(graph.values_of("gradient")[0], want)
