"""find_nans: the right equation and line, forward and backward; "no NaN"; errors."""

import ast
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.tracing import find_nans

HERE = Path(__file__)


def line_of(code: str) -> int:
    """The line number of the (unique) line of this file holding `code`."""
    (number,) = [
        i + 1
        for i, text in enumerate(HERE.read_text().splitlines())
        if text.strip() == code
    ]
    return number


def xlogx(x):
    return jnp.sum(x * jnp.log(x))


def naive_where(x):
    return jnp.sum(jnp.where(x > 0, jnp.log(x), 0.0))


def double_where(x):
    ok = x > 0
    return jnp.sum(jnp.where(ok, jnp.log(jnp.where(ok, x, 1.0)), 0.0))


def root(x):
    return jnp.sum(jnp.sqrt(x))


X = jnp.array([0.0, 1.0, 2.0])


def test_forward_stops_at_the_inf_then_at_the_nan():
    inf = find_nans(xlogx)(X)
    assert (inf.found, inf.step.primitive) == (True, "log")
    assert inf.line.line == line_of("return jnp.sum(x * jnp.log(x))")
    assert np.isneginf(np.asarray(inf.step.outputs[0])[0])
    nan = find_nans(xlogx, include_inf=False)(X)
    assert nan.step.primitive == "mul" and nan.line == inf.line
    a, b = (np.asarray(v) for v in nan.step.inputs)
    with np.errstate(invalid="ignore"):  # the float64 oracle: 0 * -inf is NaN there too
        expected = np.isnan(a.astype(np.float64) * b.astype(np.float64))
    assert expected.tolist() == np.isnan(np.asarray(nan.step.outputs[0])).tolist()
    assert str(nan).startswith(
        f"first NaN in xlogx: step {nan.step.index}, mul, at "
        f"test_tracing_nans.py:{nan.line.line} (xlogx)\n"
        "    return jnp.sum(x * jnp.log(x))\n  inputs: f32[3]"
    )


def test_backward_pass_names_the_line_that_made_the_gradient_nan():
    assert np.isnan(jax.grad(naive_where)(X)[0])  # the premise
    report = find_nans(jax.grad(naive_where), include_inf=False)(X)
    assert report.step.primitive == "div"  # d log(x) = ct / x: 0 / 0
    assert report.line.line == line_of(
        "return jnp.sum(jnp.where(x > 0, jnp.log(x), 0.0))"
    )
    ct, x = (np.asarray(v) for v in report.step.inputs)
    assert (ct[0], x[0]) == (0.0, 0.0)
    assert str(report).startswith(
        f"first NaN in grad of naive_where: step {report.step.index}, div, in the "
        f"backward pass of test_tracing_nans.py:{report.line.line} (naive_where)\n"
    )
    # With Infs too, the forward log(0) = -inf inside the where comes first.
    assert find_nans(jax.grad(naive_where))(X).step.primitive == "log"


@jax.custom_vjp
def _clipped(x):
    return jnp.sin(x)


def _clipped_fwd(x):
    return jnp.sin(x), x


def _clipped_bwd(x, ct):
    return (ct * jnp.log(x - 10.0),)  # log of a negative: NaN


_clipped.defvjp(_clipped_fwd, _clipped_bwd)


def _calls_clipped(x):
    return _clipped(x).sum()


def test_a_nan_in_a_custom_vjps_bwd_is_said_to_be_in_the_backward_pass():
    """JAX gives a custom_vjp's bwd equations the line that calls the function: the
    report names that line as the backward pass of it, not as where the NaN is."""
    assert np.isnan(jax.grad(_calls_clipped)(X)).all()  # the premise
    report = find_nans(jax.grad(_calls_clipped))(X)
    assert report.step.primitive == "log"
    assert report.line.line == line_of("return _clipped(x).sum()")
    assert str(report).startswith(
        f"first NaN in grad of _calls_clipped: step {report.step.index}, log, in the "
        f"backward pass of test_tracing_nans.py:{report.line.line} (_calls_clipped)\n"
    )


def test_backward_inf_of_sqrt_at_zero():
    assert np.isinf(jax.grad(root)(X)[0])
    report = find_nans(jax.grad(root))(X)
    assert report.line.line == line_of("return jnp.sum(jnp.sqrt(x))")
    assert not np.all(np.isfinite(np.asarray(report.step.outputs[0])))
    assert report._kind() == "Inf"


def test_no_nan_is_said_plainly():
    assert np.all(np.isfinite(jax.grad(double_where)(X)))
    report = find_nans(jax.grad(double_where))(X)
    assert not report.found and report.step is None and report.line is None
    n = len(report.steps)
    assert str(report) == (
        f"no NaN or Inf in grad of double_where: all {n} equations gave finite values."
    )
    assert repr(report) == "NanReport(no NaN or Inf in grad of double_where)"
    assert report._repr_mimebundle_() == {"text/plain": repr(report)}  # the sentence
    np.testing.assert_allclose(report.steps.outputs, jax.grad(double_where)(X))
    with pytest.raises(
        ValueError,
        match="found no NaN or Inf in grad of double_where, so there is nothing to draw",
    ):
        report.diagram()


def test_the_picture_is_the_neighbourhood():
    report = find_nans(jax.grad(naive_where), include_inf=False)(X)
    d = report.diagram()
    assert (
        d.title
        == f"first NaN in grad of naive_where: div at test_tracing_nans.py:{report.line.line}"
    )
    drawn = {int(i) for i in re.findall(r"^\s*step(\d+) \[", d.source, re.MULTILINE)}
    assert drawn == report.neighbourhood() and report.step.index in drawn
    assert len(drawn) < len(report.steps)
    assert re.search(rf'step{report.step.index} \[[^\n]*color="#C0282D"', d.source)
    assert "1 NaN" in d.source and "return jnp.sum(jnp.where(x &gt; 0" not in d.source
    assert d.svg().lstrip().startswith("<?xml")


def test_bad_inputs():
    with pytest.raises(TypeError) as err:
        find_nans(None)
    assert str(err.value) == (
        "find_nans needs a function to trace, as jax.make_jaxpr does; "
        "got None (NoneType). Pass the function itself, "
        "then call the result with example arguments: "
        "find_nans(loss)(params, batch)."
    )
    with pytest.raises(TypeError) as err:
        find_nans(jnp.log, include_inf="yes")
    assert str(err.value) == (
        "find_nans: `include_inf` must be True (stop at a NaN or an "
        "Inf) or False (NaNs only); got 'yes' (str)."
    )
    # A string is held fixed (as eqx.filter_jit); jnp.log refuses it, as in plain JAX.
    with pytest.raises(TypeError, match=r"Error interpreting argument to .*log") as err:
        find_nans(jnp.log)("x")
    assert "(raised while find_nans traced log(str))" in err.value.__notes__
    assert str(err.value).startswith(
        "find_nans cannot trace x (argument 0): it is 'x' (str), and the lenses trace "
        "arrays and numbers, as jax.jit does."
    )
    # None is an empty pytree, so JAX itself complains; the note names the jaxtour call.
    with pytest.raises(TypeError, match="log requires ndarray or scalar") as err:
        find_nans(jnp.log)(None)
    assert "(raised while find_nans traced log(NoneType))" in err.value.__notes__


def test_public_jax_only():
    """No module of the tracing lens or of _ir imports jax._src or jax.core."""
    src = HERE.parents[1] / "src" / "jaxtour"
    for path in [*(src / "tracing").glob("*.py"), *(src / "_ir").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            for name in names:
                assert not name.startswith(("jax._src", "jax.core")), (path, name)


@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16, jnp.float8_e4m3fn])
def test_a_nan_in_a_narrow_float_is_found(dtype):
    """NumPy calls bfloat16 and float8 kind 'V'; jnp.isnan sees their NaNs."""
    report = find_nans(lambda x: jnp.sqrt(x - 2))(jnp.ones(3, dtype))
    assert report.found and report.step.primitive == "sqrt"
    assert str(report).startswith("first NaN in <lambda>: step 1, sqrt, at ")


def test_a_typed_key_is_shown_as_its_key_data():
    def noisy(key, x):
        return jnp.log(jax.random.uniform(key, x.shape) - 2.0) * x

    for key in (jax.random.key(0), jax.random.PRNGKey(0)):
        report = find_nans(noisy)(key, jnp.ones(3))
        assert report.found and report.step.primitive == "log"
        assert "<svg" in report.diagram().svg()


def test_a_nan_already_in_an_argument_or_a_constant_is_not_blamed_on_the_equation():
    poisoned = jnp.array([1.0, jnp.nan])
    from_argument = find_nans(lambda x: jnp.sum(x * 2))(poisoned)
    from_constant = find_nans(lambda x: jnp.sum(x * poisoned))(jnp.ones(2))
    made = find_nans(lambda x: jnp.sum(jnp.log(x - 2)))(jnp.ones(2))  # log(-1)
    assert from_argument.origin == "the argument `x`"
    assert from_constant.origin == (
        "a constant <lambda> closes over (or one computed from constants)"
    )
    assert made.origin is None and made.step.primitive == "log"
    for report in (from_argument, from_constant):
        assert report.step.primitive == "mul"  # the first equation that read it
        head = str(report).splitlines()[0]
        assert head.startswith(
            f"first NaN in <lambda>: already in {report.origin}; first read by step 0, mul"
        )
        assert report.diagram().title.startswith("first NaN in <lambda>: read by mul")
    assert str(made).startswith("first NaN in <lambda>: step 1, log")


def test_a_nan_made_from_an_inf_is_blamed_on_the_equation_that_made_it():
    # 0 * inf: the literal holds an Inf, the mul makes the NaN (as jax_debug_nans says)
    report = find_nans(lambda x: x * jnp.inf)(0.0)
    assert report.step.primitive == "mul"
    assert report.origin is None
    assert str(report).startswith("first NaN in <lambda>: step 0, mul")
    inf = find_nans(lambda x: x + jnp.inf)(1.0)  # the Inf was there before the add
    assert str(inf).startswith("first Inf in <lambda>: already in a literal")
    with jax.debug_nans(True), pytest.raises(FloatingPointError, match="mul"):
        (lambda x: x * jnp.inf)(jnp.float32(0.0))


def test_a_nan_made_from_constants_and_returned_is_found():
    def f(x):
        return x, jnp.log(-1.0) * 2.0  # never mixed with x, yet returned

    report = find_nans(f)(jnp.float32(1.0))
    assert report.found and report.step.primitive == "log" and report.origin is None
    assert str(report).startswith("first NaN in f: step 0, log")
    assert "<svg" in report.diagram().svg()
    with jax.debug_nans(True), pytest.raises(FloatingPointError, match="log"):
        f(jnp.float32(1.0))
    masked = find_nans(lambda x: x + jnp.where(True, 0.0, jnp.log(-1.0)))(1.0)
    assert not masked.found  # a constant NaN discarded is still no finding


def test_the_result_shown_is_the_one_holding_the_nan():
    def f(x):  # the carry stays finite; the stacked logs hold the NaN
        return jax.lax.scan(lambda c, xi: (c + 1.0, jnp.log(xi)), 0.0, x)

    report = find_nans(f)(jnp.array([-1.0, 2.0]))
    carry, logs = report.step.outputs
    assert not jnp.isnan(carry).any()
    assert report.step.primitive == "scan" and bool(jnp.isnan(logs).any())
    assert str(report).splitlines()[-1].startswith("  result 2 of 2: f32[2]")
    assert "NaN" in str(report).splitlines()[-1]


def test_a_bad_value_returned_untouched_is_not_called_finite():
    poisoned = jnp.array([jnp.nan])
    from_argument = find_nans(lambda x, y: (x, y * 2))(jnp.float32(jnp.nan), 1.0)
    from_constant = find_nans(lambda x: (x + 1, poisoned))(1.0)
    clean = find_nans(lambda x: x + 1)(1.0)
    assert not from_argument.found and from_argument.passed == "the argument `x`"
    assert str(from_argument) == (
        "no equation of <lambda> made a NaN or Inf, but it returns one untouched: "
        "already in the argument `x`."
    )
    assert from_constant.passed.startswith("a constant <lambda> closes over")
    assert clean.passed is None and str(clean).startswith("no NaN or Inf in <lambda>")
    assert jnp.isnan(jax.jit(lambda x, y: (x, y * 2))(jnp.nan, 1.0)[0])  # the oracle


@pytest.mark.parametrize("back", ["2", -1, 1.5, True])
def test_a_bad_back_is_refused_with_what_it_counts(back):
    report = find_nans(lambda x: jnp.log(x) * 2.0)(-1.0)
    with pytest.raises(ValueError) as err:
        report.diagram(back=back)
    assert str(err.value) == (
        "find_nans: `back` is how many levels of the steps that made the NaN's inputs "
        f"to draw, an int from 0 up; got {back!r}."
    )


def test_a_clean_run_of_one_or_no_equation_says_so_in_words():
    assert str(find_nans(jnp.sin)(1.0)) == (
        "no NaN or Inf in sin: its one equation gave finite values."
    )
    assert str(find_nans(lambda x: x)(1.0)) == (
        "no NaN or Inf in <lambda>: it has no equation to run."
    )


def _scoped(x):
    with jax.named_scope("transpose_heads"):  # a user's scope, not JAX's transpose
        y = jnp.log(x - 2.0)
    return y.sum()


def test_a_scope_named_like_transpose_is_not_the_backward_pass():
    report = find_nans(_scoped)(X)
    assert f", log, at test_tracing_nans.py:{report.line.line} (_scoped)\n" in str(
        report
    )


def test_a_nan_made_from_a_static_argument_is_not_called_closed_over():
    x = jnp.ones(3)
    # jnp on a static Python value is staged with the value as a literal (`log -1.0`)
    staged = find_nans(lambda x, s: x * jnp.log(s), static_argnums=1)(x, -1.0)
    assert (
        jax.make_jaxpr(lambda x: x * jnp.log(-1.0))(x).eqns[0].primitive.name == "log"
    )
    assert staged.step.primitive == "mul" and staged.step.index == 2
    assert staged.origin == (
        "a value made from constants alone by step 0, log of -1.0 "
        "(equal to the static argument `s`)"
    )
    assert str(staged).startswith(
        f"first NaN in <lambda>: already in {staged.origin}; first read by step 2, mul"
    )
    # NumPy on it computes before tracing: a constant, that changes when `s` does
    eager = find_nans(lambda x, s: x * np.log(np.full(3, s)), static_argnames="s")
    with np.errstate(invalid="ignore", divide="ignore"):
        report, clean = eager(x, s=-1.0), eager(x, s=1.0)
    assert report.origin == (
        "a constant made from the static argument `s` (= -1.0) before tracing "
        "(outside the jaxpr)"
    )
    assert not clean.found  # the oracle: the NaN moves with `s`
    # a closed-over NaN, with a static argument beside it that does not change it
    poisoned = jnp.array([1.0, jnp.nan, 1.0])
    either = find_nans(lambda x, s: x * poisoned * s, static_argnums=1)(x, 2.0)
    assert either.origin == (
        "a constant made before tracing (outside the jaxpr), from a static argument "
        "or a value <lambda> closes over"
    )
