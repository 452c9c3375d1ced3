"""Answers written another way than the lesson's: a jitted function, a lambda, an alias,
a `functools.partial`. A right one passes and a wrong one fails, as its plain `def` would,
and the words blame what the answer did."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_exercises_answers import _graded

from jaxtour.exercises import check


def feedback(fn):
    result = check(fn, quiet=True)
    assert "Traceback" not in result.message
    return result


# --- jitted answers: the checks that read the code read the function jit wraps -----------
def test_a_jitted_right_answer_that_uses_vmap_is_seen_to_use_it():
    @functools.partial(jax.jit, static_argnums=0)
    def ex_jacobian_from_jvp(f, x):
        basis = jnp.eye(x.shape[0], dtype=x.dtype)
        return jax.vmap(lambda v: jax.jvp(f, (x,), (v,))[1], out_axes=1)(basis)

    assert feedback(ex_jacobian_from_jvp).passed


def test_a_jitted_answer_that_uses_grad_is_told_the_task_is_vjp():
    @functools.partial(jax.jit, static_argnums=0)
    def ex_grad_from_vjp(f, x):
        return jax.grad(f)(x)

    result = feedback(ex_grad_from_vjp)
    assert result.kind == "wrong" and "uses `jax.grad`" in result.message


def test_an_answer_that_uses_grad_under_another_name_is_told_the_task_is_vjp():
    namespace = {"jax": jax}
    exec(GRAD_BY_ALIAS, namespace)
    result = feedback(namespace["ex_grad_from_vjp"])
    assert result.kind == "wrong", result
    assert "it uses `jax.grad` (as `g`): the task is to build it from" in result.message


def test_a_jitted_stub_is_not_done():
    @jax.jit
    def ex_safe_log(x): ...

    assert feedback(ex_safe_log).kind == "not done"


# --- answers named by assignment: check finds the exercise by the name they are held by --
def _safe_log(x):
    return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)


def test_a_lambda_alias_or_partial_named_like_the_exercise_is_checked():
    ex_safe_log = lambda x: _safe_log(x)  # as a student writes it
    assert check(ex_safe_log, quiet=True).passed
    ex_safe_log = jax.jit(_safe_log)
    assert check(ex_safe_log, quiet=True).passed
    ex_safe_log = functools.partial(_safe_log)
    assert check(ex_safe_log, quiet=True).passed


def test_a_wrong_lambda_named_like_the_exercise_is_told_what_is_wrong():
    ex_safe_log = lambda x: jnp.log(x)
    result = check(ex_safe_log, quiet=True)  # called as a notebook calls it
    assert result.kind == "wrong" and "gives nan" in result.message


def test_a_lambda_no_exercise_name_holds_is_still_unknown():
    result = check(lambda x: x, quiet=True)
    assert (
        result.kind == "unknown"
        and "no exercise is called `<lambda>`" in result.message
    )


# --- grading: an answer bound by assignment is read as its def would be --------------------
JACOBIAN_LAMBDA = """ex_jacobian_from_jvp = lambda f, x: jax.vmap(
    lambda v: jax.jvp(f, (x,), (v,))[1], out_axes=1
)(jnp.eye(x.shape[0], dtype=x.dtype))
"""
GRAD_BY_ALIAS = """g = jax.grad

def ex_grad_from_vjp(f, x):
    return g(f)(x)
"""

GRAD_BY_JIT = """import functools

def by_grad(f, x):
    return jax.grad(f)(x)

ex_grad_from_vjp = functools.partial(jax.jit, static_argnums=0)(by_grad)
"""


@pytest.mark.slow  # an answer process: JAX imported, two exercises judged
def test_grading_reads_the_code_of_a_lambda_and_of_a_jitted_alias():
    verdicts, _ = _graded(
        "02_close_to_the_math",
        {
            "ex_jacobian_from_jvp": JACOBIAN_LAMBDA,
            "ex_grad_from_vjp": GRAD_BY_JIT,
        },
        only={"ex_jacobian_from_jvp", "ex_grad_from_vjp"},
    )
    assert verdicts["test_ex_jacobian_from_jvp"][2] == "passed"
    _, message, kind = verdicts["test_ex_grad_from_vjp"]
    assert kind == "wrong" and "uses `jax.grad`" in message


@pytest.mark.slow  # an answer process: JAX imported, one exercise judged
def test_grading_finds_grad_under_another_name():
    verdicts, _ = _graded(
        "02_close_to_the_math",
        {"ex_grad_from_vjp": GRAD_BY_ALIAS},
        only={"ex_grad_from_vjp"},
    )
    _, message, kind = verdicts["test_ex_grad_from_vjp"]
    assert kind == "wrong" and "uses `jax.grad` (as `g`)" in message


# --- helpers: a ban or a requirement reads the student's own functions an answer calls ------
GRAD_IN_HELPER = """def helper(f):
    return jax.grad(f)

def ex_grad_from_vjp(f, x):
    return helper(f)(x)
"""
JACOBIAN_IN_HELPER = """def columns(push, basis):
    return jax.vmap(push, out_axes=1)(basis)

def ex_jacobian_from_jvp(f, x):
    basis = jnp.eye(x.shape[0], dtype=x.dtype)
    return columns(lambda v: jax.jvp(f, (x,), (v,))[1], basis)
"""
RECURSIVE = """def helper(f, n):
    return jax.grad(f) if n == 0 else helper(f, n - 1)

def ex_grad_from_vjp(f, x):
    return helper(f, 2)(x)
"""
MUTUALLY_RECURSIVE = """def even(f, n):
    return f if n == 0 else odd(f, n - 1)

def odd(f, n):
    return jax.grad(f) if n == 0 else even(f, n - 1)

def ex_grad_from_vjp(f, x):
    return even(f, 1)(x)
"""


def _answer(source, name):
    namespace = {"jax": jax, "jnp": jnp}
    exec(source, namespace)
    return namespace[name]


def test_an_answer_whose_helper_uses_grad_is_told_the_task_is_vjp():
    result = feedback(_answer(GRAD_IN_HELPER, "ex_grad_from_vjp"))
    assert result.kind == "wrong", result
    assert "it uses `jax.grad` (in `helper`): the task is to build it" in result.message


def test_an_alias_in_a_jitted_helper_a_closure_reaches_is_named_with_its_helper():
    g = jax.grad  # an alias in the helper's globals: the helper's closure holds it
    pulled = jax.jit(lambda f, x: g(f)(x), static_argnums=0)

    def ex_grad_from_vjp(f, x):
        return pulled(f, x)

    result = feedback(ex_grad_from_vjp)
    assert result.kind == "wrong", result
    assert "it uses `jax.grad` (as `g`, in `pulled`)" in result.message


def test_an_answer_whose_helper_uses_vmap_is_seen_to_use_it():
    result = feedback(_answer(JACOBIAN_IN_HELPER, "ex_jacobian_from_jvp"))
    assert (result.passed, result.kind) == (True, "passed"), result


@pytest.mark.parametrize(
    ("source", "helper"), [(RECURSIVE, "helper"), (MUTUALLY_RECURSIVE, "odd")]
)
def test_recursive_helpers_are_read_once_each_and_their_grad_is_found(source, helper):
    result = feedback(_answer(source, "ex_grad_from_vjp"))
    assert result.kind == "wrong", result
    assert f"it uses `jax.grad` (in `{helper}`)" in result.message


def test_the_helpers_read_stop_at_jax_and_the_kit():
    from jaxtour.exercises._probes import HELPERS, own_functions, uses

    # `jnp.where`'s own code reaches `jnp.nonzero`, which names `bincount`; the kit's
    # `grad_of_sum` calls `jax.grad`: neither is the student's to answer for
    namespace = {"jnp": jnp, "where": jnp.where, "total": jnp.sum}
    exec("from jaxtour.exercises._probes import grad_of_sum", namespace)
    exec(
        "def helper(x):\n    return where(x > 0, x, 0.0)\n"
        "def ex(x):\n    return total(helper(x)) + grad_of_sum(helper, x)",
        namespace,
    )
    answer = namespace["ex"]
    assert [name for name, _ in own_functions(answer)] == ["", "helper"]
    wanted = {"grad": jax.grad, "bincount": jnp.bincount, "vmap": jax.vmap}
    assert uses(answer, wanted) == []
    # a chain longer than the cap is read up to the cap, and ends
    chain = {f"f{i}": f"lambda x: f{i + 1}(x)" for i in range(HELPERS + 10)}
    exec("\n".join(f"{k} = {v}" for k, v in chain.items()), namespace)
    assert len(own_functions(namespace["f0"])) == HELPERS


@pytest.mark.slow  # an answer process: JAX imported, two exercises judged
def test_grading_reads_the_helpers_an_answer_calls():
    verdicts, _ = _graded(
        "02_close_to_the_math",
        {
            "ex_grad_from_vjp": GRAD_IN_HELPER,
            "ex_jacobian_from_jvp": JACOBIAN_IN_HELPER,
        },
        only={"ex_grad_from_vjp", "ex_jacobian_from_jvp"},
    )
    _, message, kind = verdicts["test_ex_grad_from_vjp"]
    assert kind == "wrong" and "uses `jax.grad` (in `helper`)" in message
    assert verdicts["test_ex_jacobian_from_jvp"][2] == "passed"


# --- a vmap mistake is blamed on what the answer got wrong ---------------------------------
def test_in_axes_of_the_wrong_length_is_not_blamed_on_the_shared_arguments():
    def ex_per_example_losses(loss, w, b, xs, ts):
        return jax.vmap(loss, in_axes=(None, None, 0))(w, b, xs, ts)

    result = feedback(ex_per_example_losses)
    assert result.kind == "error" and "Give one entry per argument" in result.message
    assert "no batch axis" not in result.message


def test_mapping_the_shared_weights_is_still_told_to_give_them_none():
    def ex_per_example_losses(loss, w, b, xs, ts):
        return jax.vmap(loss, in_axes=(0, None, 0, 0))(w, b, xs, ts)

    result = feedback(ex_per_example_losses)
    assert (
        result.kind == "wrong" and "give the shared arguments `None`" in result.message
    )


@pytest.mark.parametrize(
    ("in_axes", "words"),
    [
        ("(None, 0)", "Give one entry per argument"),
        ("(None, 1, 0)", "mapped axes of different sizes"),
    ],
)
def test_a_vmap_mistake_that_leaves_params_unmapped_is_not_blamed_on_params(
    in_axes, words
):
    namespace = {"jax": jax}
    exec(
        "def ex_losses_per_digit(example_loss, params, images, labels):\n"
        f"    return jax.vmap(example_loss, in_axes={in_axes})(params, images, labels)",
        namespace,
    )
    result = feedback(namespace["ex_losses_per_digit"])
    assert result.kind == "error" and words in result.message
    assert "params" not in result.message.split(":")[0]


# --- a forgotten `return` is said as one, not as "one number" ------------------------------
@pytest.mark.parametrize(
    "name",
    [
        "ex_per_example_losses",
        "ex_cumulative_product",
        "ex_losses_per_digit",
        "ex_accuracy",
        "ex_nnx_forward",
        "ex_global_mean",
    ],
)
def test_an_answer_that_forgets_to_return_is_asked_for_its_return(name):
    namespace = {"jnp": jnp}
    exec(f"def {name}(*args):\n    result = jnp.zeros(3)\n", namespace)
    result = feedback(namespace[name])
    assert result.kind == "wrong", result
    assert "returned None: did it forget to `return` its result?" in result.message


# --- "two numbers" read off a picture may come as a list ----------------------------------
def _gelu(x):
    return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x**3)))


def _gelu_counts():
    names = [e.primitive.name for e in jax.make_jaxpr(_gelu)(jnp.ones(4)).jaxpr.eqns]
    return len(names), names.count("mul")


def _cumulative_sum_scans():
    def cumulative_sum(xs):
        return jax.lax.scan(lambda c, x: (c + x, c + x), 0.0, xs)[1]

    def scans(f):
        jaxpr = jax.make_jaxpr(f)(jnp.arange(5.0))
        return str(jaxpr).count("scan[")

    return scans(cumulative_sum), scans(jax.grad(lambda v: cumulative_sum(v).sum()))


@pytest.mark.parametrize(
    ("name", "counts"),
    [("ex_gelu_jaxpr", _gelu_counts), ("ex_count_scans", _cumulative_sum_scans)],
)
def test_two_numbers_pass_as_a_list_as_they_do_as_a_tuple(name, counts):
    namespace = {}
    for shape in ("({}, {})", "[{}, {}]"):
        exec(f"def {name}():\n    return {shape.format(*counts())}", namespace)
        assert feedback(namespace[name]).passed, shape


def test_counts_returned_as_jnp_integers_pass_as_python_ints_do():
    # `jnp.sum(...)` of a count gives a 0-d integer Array, not an int
    equations, muls = _gelu_counts()
    namespace = {"jnp": jnp}
    exec(
        f"def ex_gelu_jaxpr():\n    return jnp.int32({equations}), jnp.array({muls})",
        namespace,
    )
    assert feedback(namespace["ex_gelu_jaxpr"]).passed
    exec("def ex_gelu_jaxpr():\n    return 13.0, True", namespace)
    wrong = feedback(namespace["ex_gelu_jaxpr"])
    assert not wrong.passed and "return two whole numbers" in wrong.message


def test_a_jitted_custom_vjp_is_found_inside_its_jit():
    @jax.custom_vjp
    def clip(x):
        return x

    def backward(_, g):
        return (g * jnp.minimum(1.0, 1.0 / jnp.linalg.norm(g)),)

    clip.defvjp(lambda x: (x, None), backward)
    ex_clip_by_norm = jax.jit(clip)
    assert check(ex_clip_by_norm, quiet=True).passed


def test_a_jnp_max_that_passes_over_a_nan_is_named_in_the_feedback():
    def ex_agrees(actual, expected):
        error = jnp.max(jnp.abs(actual - expected))
        return error <= 1e-5 * jnp.max(jnp.abs(expected))

    with_nan = np.ones((64, 64), np.float32)
    with_nan[3, 5] = np.nan
    result = feedback(ex_agrees)
    if np.isnan(float(jnp.max(jnp.asarray(with_nan)))):  # a backend whose max sees it
        assert result.passed, result
    else:
        assert result.kind == "wrong" and "`jnp.max` of that result is a number" in (
            result.message
        )


def test_a_shape_written_as_the_picture_shows_it_is_asked_for_as_a_tuple():
    def ex_first_matmul_shape(batch):
        return f"f32[{batch},512]"

    result = feedback(ex_first_matmul_shape)
    assert result.kind == "wrong"
    assert result.message == "return a shape, a tuple such as (3, 4); got 'f32[8,512]'"
