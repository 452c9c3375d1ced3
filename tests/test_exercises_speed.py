"""Lesson 01's exercises: other right answers pass, the stubs are 'not done', and the mistakes
students make get the words the checkers promise.

Each lesson's own solutions are checked once, by the lesson's check cells."""

import re

import pytest

from jaxtour import exercises as ex


def answer(code: str, name: str):
    """Define a student's answer from its source, with what a lesson cell has imported."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    namespace = {"jax": jax, "jnp": jnp, "lax": jax.lax, "np": np}
    exec(compile(code, f"<{name}>", "exec"), namespace)
    return namespace[name]


def feedback(code: str, name: str) -> ex.Feedback:
    return ex.check(answer(code, name), quiet=True)


def test_lesson_01_registers_three_exercises():
    assert [e.name for e in ex.for_lesson("01")] == [
        "ex_safe_log",
        "ex_time_call",
        "ex_gelu_jaxpr",
    ]


SAFE_LOG = "def ex_safe_log(x):\n    {}"


@pytest.mark.parametrize(
    "body",
    [
        "return jnp.where(x > 0, jnp.log(jnp.where(x > 0, x, 1.0)), 0.0)",
        "return jnp.where(x > 0, jnp.log(jnp.maximum(x, 1e-30)), 0.0)",
    ],
)
def test_safe_log_right_answers_pass(body):
    assert feedback(SAFE_LOG.format(body), "ex_safe_log").passed


@pytest.mark.parametrize(
    "body, words",
    [
        (
            "if x > 0:\n        return jnp.log(x)\n    return jnp.zeros_like(x)",
            ["under `jax.jit`", "`if`"],
        ),
        (
            "return jnp.log(jnp.maximum(x, 0.0))",
            ["at x = -1", "-inf", "of zero", "jnp.where"],
        ),
        (
            "return jnp.maximum(jnp.log(x), 0.0)",
            ["at x = -1", "nan", "a negative number"],
        ),
        ("return jnp.log(jnp.abs(x))", ["at x = 0", "-inf"]),
        ("return jnp.where(x > 1, jnp.log(x), 0.0)", ["got", "expected", "0.5"]),
        # right values, but the inner where is missing: grad at 0 is 0 * inf = nan
        (
            "return jnp.where(x > 0, jnp.log(x), 0.0)",
            ["values are right", "jax.grad(ex_safe_log)(0.0)", "is nan", "safe input"],
        ),
    ],
)
def test_safe_log_mistakes_get_their_words(body, words):
    result = feedback(SAFE_LOG.format(body), "ex_safe_log")
    assert not result.passed and "Traceback" not in result.message
    for word in words:
        assert word in result.message, (word, result.message)


TIME_CALL = "def ex_time_call(f, x):\n    import time\n{}"
HONEST = """    f(x).block_until_ready()
    start = time.perf_counter()
    f(x).block_until_ready()
    return time.perf_counter() - start"""
NO_BLOCK = """    f(x).block_until_ready()
    start = time.perf_counter()
    f(x)
    return time.perf_counter() - start"""
NO_WARM_UP = """    start = time.perf_counter()
    f(x).block_until_ready()
    return time.perf_counter() - start"""


def test_an_honest_timer_passes():
    result = feedback(TIME_CALL.format(HONEST), "ex_time_call")
    assert result.passed, result


def test_a_timer_that_never_calls_f_is_told_so():
    body = "    return 1.0 if isinstance(x, float) else 0.5"
    result = feedback(TIME_CALL.format(body), "ex_time_call")
    assert not result.passed and "never called `f`" in result.message, result


@pytest.mark.parametrize(
    "body, words",
    [
        (NO_BLOCK, ["asynchronous dispatch", "`.block_until_ready()`"]),
        (NO_WARM_UP, ["counted compilation", "once"]),
        # the warm-up inside the clock: the time still holds the first call
        (
            "    start = time.perf_counter()\n    f(x).block_until_ready()\n"
            "    f(x).block_until_ready()\n    return time.perf_counter() - start",
            ["counted compilation", "most of it the first call"],
        ),
        (
            "    f(x).block_until_ready()\n    return f'{0.01:.3f} s'",
            ["return the time in seconds"],
        ),
        # a time it did not measure: longer than the call, or deaf to 64 times the work.
        # 1 s, far past any call: 0.05 s, once a busy machine's matmul takes over 0.2 s,
        # reads as a quarter of the work and gets the dispatch message instead
        (
            "    f(x).block_until_ready()\n    return 1.0",
            ["the whole call of it took"],
        ),
        (  # a clock around something else: the same time for any work
            "    f(x).block_until_ready()\n    start = time.perf_counter()\n"
            "    time.sleep(0.2)\n    return time.perf_counter() - start",
            ["your times do not follow the work", "64 times the work"],
        ),
    ],
)
def test_time_call_mistakes_get_their_words(body, words):
    result = feedback(TIME_CALL.format(body), "ex_time_call")
    assert not result.passed and result.kind == "wrong", result
    for word in words:
        assert word in result.message, (word, result.message)


def test_gelu_jaxpr_the_count_read_off_the_picture_passes():
    import jax
    import jax.numpy as jnp

    from jaxtour.viz import draw_jaxpr

    def gelu(x):
        return 0.5 * x * (1 + jnp.tanh(jnp.sqrt(2 / jnp.pi) * (x + 0.044715 * x**3)))

    picture = draw_jaxpr(gelu)(jnp.ones(4))
    equations = int(
        picture.title.split(": ")[1].split()[0]
    )  # 'jaxpr of gelu: 10 equations'
    labels = re.findall(r'^\s*eqn\d+ \[label="?([a-z_]+)', picture.source, re.MULTILINE)
    muls = labels.count("mul")
    assert muls == [
        e.primitive.name for e in jax.make_jaxpr(gelu)(jnp.ones(4)).jaxpr.eqns
    ].count("mul")
    code = f"def ex_gelu_jaxpr():\n    return ({equations}, {muls})"
    assert feedback(code, "ex_gelu_jaxpr").passed


@pytest.mark.parametrize(
    "returned, words",
    [
        ("(10, 5)", ["`integer_pow`"]),
        ("(9, 4)", ["number of `mul` boxes is right", "more than 9", "title"]),
        ("(10, 3)", ["does not show 3 boxes"]),
        ("10", ["return two whole numbers"]),
    ],
)
def test_gelu_jaxpr_mistakes_get_their_words(returned, words):
    result = feedback(f"def ex_gelu_jaxpr():\n    return {returned}", "ex_gelu_jaxpr")
    assert not result.passed and result.kind == "wrong", result
    for word in words:
        assert word in result.message, (word, result.message)
