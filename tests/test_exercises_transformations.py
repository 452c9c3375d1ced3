"""Lesson 04's exercises: the scan matches NumPy, the stubs say "not done", and the mistakes
students make (in_axes, averaging, a Python loop, a product from 0, a missed backward scan)
get the words the checks promise.

Each lesson's own solutions are checked once, by the lesson's check cells."""

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises import _transformations as l04
from jaxtour.exercises import check

bc = jnp.bincount  # a student's alias of a function the histogram exercise bans


def feedback(fn):
    result = check(fn, quiet=True)
    assert "Traceback" not in result.message
    return result


# --- ex_per_example_losses ------------------------------------------------------------------
def test_per_example_losses_stub_is_not_done():
    def ex_per_example_losses(loss, w, b, xs, ts): ...

    assert feedback(ex_per_example_losses).kind == "not done"


def test_per_example_losses_batching_every_argument_is_told_about_in_axes():
    def ex_per_example_losses(loss, w, b, xs, ts):
        return jax.vmap(loss)(w, b, xs, ts)

    result = feedback(ex_per_example_losses)
    assert not result.passed and "in_axes" in result.message


def test_per_example_losses_averaged_is_told_not_to():
    def ex_per_example_losses(loss, w, b, xs, ts):
        return jnp.mean(jax.vmap(loss, in_axes=(None, None, 0, 0))(w, b, xs, ts))

    result = feedback(ex_per_example_losses)
    assert not result.passed and "do not average" in result.message


def test_per_example_losses_a_python_loop_is_right_but_grows_with_the_batch():
    def ex_per_example_losses(loss, w, b, xs, ts):
        return jnp.stack([loss(w, b, x, t) for x, t in zip(xs, ts, strict=True)])

    result = feedback(ex_per_example_losses)
    assert not result.passed and "grows with the batch" in result.message


# --- ex_cumulative_product --------------------------------------------------------------------
def test_cumulative_product_solution_passes_and_matches_numpy():
    def ex_cumulative_product(xs):
        def step(product, x):
            return product * x, product * x

        return jax.lax.scan(step, jnp.ones((), xs.dtype), xs)[1]

    xs = jnp.array([2.0, 3.0, 0.5])
    np.testing.assert_allclose(ex_cumulative_product(xs), np.cumprod([2.0, 3.0, 0.5]))
    assert feedback(ex_cumulative_product).passed


def test_cumulative_product_stub_is_not_done():
    def ex_cumulative_product(xs): ...

    assert feedback(ex_cumulative_product).kind == "not done"


def test_cumulative_product_from_zero_is_told_a_product_starts_at_one():
    def ex_cumulative_product(xs):
        return jax.lax.scan(lambda c, x: (c * x, c * x), jnp.zeros((), xs.dtype), xs)[1]

    result = feedback(ex_cumulative_product)
    assert not result.passed and "starts from 1" in result.message


def test_cumulative_product_returning_the_carry_is_told_to_stack():
    def ex_cumulative_product(xs):
        return jax.lax.scan(lambda c, x: (c * x, c * x), jnp.ones((), xs.dtype), xs)[0]

    result = feedback(ex_cumulative_product)
    assert not result.passed and "every running product" in result.message


def test_cumulative_product_without_scan_is_right_but_not_the_exercise():
    def ex_cumulative_product(xs):
        return jnp.cumprod(xs)

    result = feedback(ex_cumulative_product)
    assert not result.passed and "no `lax.scan` in your program" in result.message


def test_cumulative_product_under_jit_is_right_and_its_scan_is_found():
    # the scan sits inside a `jit` equation: every nested jaxpr is read
    @jax.jit
    def ex_cumulative_product(xs):
        return jax.lax.scan(lambda p, x: (p * x, p * x), 1.0, xs)[1]

    result = feedback(ex_cumulative_product)
    assert (result.passed, result.kind) == (True, "passed")


def test_cumulative_product_with_its_scan_in_a_jitted_helper_is_right():
    helper = jax.jit(lambda xs: jax.lax.scan(lambda p, x: (p * x, p * x), 1.0, xs)[1])

    def ex_cumulative_product(xs):
        return helper(xs)

    result = feedback(ex_cumulative_product)
    assert (result.passed, result.kind) == (True, "passed")


def test_per_example_losses_a_jitted_python_loop_still_grows_with_the_batch():
    def ex_per_example_losses(loss, w, b, xs, ts):
        looped = jax.jit(
            lambda w, b, xs, ts: jnp.stack(
                [loss(w, b, x, t) for x, t in zip(xs, ts, strict=True)]
            )
        )
        return looped(w, b, xs, ts)

    result = feedback(ex_per_example_losses)
    assert not result.passed and "grows with the batch" in result.message


def test_cumulative_product_by_cumprod_beside_an_unused_scan_is_refused():
    def ex_cumulative_product(xs):
        jax.lax.scan(lambda c, x: (c, x), 0.0, xs)  # a scan that computes nothing used
        return jnp.cumprod(xs)

    result = feedback(ex_cumulative_product)
    assert (result.passed, result.kind) == (False, "wrong")
    assert result.message == (
        "right values, but `cumprod` computes them, which skips the exercise (a "
        "`lax.scan` beside it does not count): write the step function and let "
        "`lax.scan` run it"
    )


# --- ex_count_scans -----------------------------------------------------------------------
def test_the_scan_counts_are_what_jax_makes():
    steps = jnp.arange(5.0)
    grad_jaxpr = jax.make_jaxpr(jax.grad(lambda v: l04.running_sum(v).sum()))(steps)
    reverse = [
        e.params["reverse"] for e in grad_jaxpr.eqns if e.primitive.name == "scan"
    ]
    assert reverse == [False, True]
    assert l04.scans(grad_jaxpr.jaxpr) == 2
    assert l04.scans(jax.make_jaxpr(l04.running_sum)(steps).jaxpr) == 1


def test_count_scans_stub_is_not_done():
    def ex_count_scans(): ...

    assert feedback(ex_count_scans).kind == "not done"


def test_count_scans_missing_the_backward_scan_is_pointed_at_reverse():
    def ex_count_scans():
        return (1, 1)

    result = feedback(ex_count_scans)
    assert not result.passed and "reverse=True" in result.message


def test_count_scans_one_scan_per_step_is_told_the_body_is_traced_once():
    def ex_count_scans():
        return (5, 10)

    result = feedback(ex_count_scans)
    assert not result.passed and "traced once" in result.message


# --- ex_histogram ---------------------------------------------------------------------------
def test_histogram_solution_passes():
    def ex_histogram(labels, n):
        return jnp.zeros(n, jnp.int32).at[labels].add(1)

    assert feedback(ex_histogram).passed


def test_histogram_stub_is_not_done():
    def ex_histogram(labels, n): ...

    assert feedback(ex_histogram).kind == "not done"


def test_histogram_set_instead_of_add_is_told_to_accumulate():
    def ex_histogram(labels, n):
        return jnp.zeros(n, jnp.int32).at[labels].set(1)

    result = feedback(ex_histogram)
    assert not result.passed and "`.add(1)` accumulates" in result.message


def test_histogram_bincount_is_told_to_use_at():
    def ex_histogram(labels, n):
        return jnp.bincount(labels, length=n)

    result = feedback(ex_histogram)
    assert not result.passed and "skip the exercise" in result.message


def test_histogram_python_loop_is_told_to_add_at_once():
    def ex_histogram(labels, n):
        counts = jnp.zeros(n, jnp.int32)
        for i in range(n):
            counts = counts.at[i].set(jnp.sum(labels == i))
        return counts

    result = feedback(ex_histogram)
    assert not result.passed and "no `.at[...].add`" in result.message


def test_histogram_under_jit_is_right_and_its_scatter_add_is_found():
    @functools.partial(jax.jit, static_argnums=1)
    def ex_histogram(labels, n):
        return jnp.zeros(n, jnp.int32).at[labels].add(1)

    result = feedback(ex_histogram)
    assert (result.passed, result.kind) == (True, "passed")


def test_histogram_by_an_alias_of_bincount_is_told_to_use_at():
    def ex_histogram(labels, n):
        return bc(labels, length=n)

    result = feedback(ex_histogram)
    assert (result.passed, result.kind) == (False, "wrong")
    assert result.message == (
        "right counts, but `jnp.bincount`/`jnp.histogram` skip the exercise: start from "
        "`jnp.zeros(n)` and add 1 at every label with `.at[labels].add(1)`"
    )


def test_histogram_bincount_in_a_jitted_helper_is_told_to_use_at_and_named():
    count = jax.jit(lambda labels, n: jnp.bincount(labels, length=n), static_argnums=1)

    def ex_histogram(labels, n):
        return count(labels, n)

    result = feedback(ex_histogram)
    assert (result.passed, result.kind) == (False, "wrong")
    assert "`jnp.bincount`/`jnp.histogram` (in `count`) skip the exercise" in (
        result.message
    )


HISTOGRAM_BY_NAME = """from jax.numpy import where, zeros

def count(labels, n):
    inside = where((labels >= 0) & (labels < n), labels, n)  # n: dropped
    return zeros(n, jnp.int32).at[inside].add(1)

def ex_histogram(labels, n):
    return count(labels, n)
"""


def test_histogram_calling_jax_by_name_in_a_helper_is_not_blamed_for_jaxs_code():
    # `jnp.where`'s own code reaches `jnp.nonzero`, which names `bincount`: the helper
    # `count` is read, JAX's code never is
    namespace = {"jnp": jnp}
    exec(HISTOGRAM_BY_NAME, namespace)
    result = feedback(namespace["ex_histogram"])
    assert (result.passed, result.kind) == (True, "passed"), result
