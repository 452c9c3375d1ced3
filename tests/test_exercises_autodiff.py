"""Lesson 02's exercises: the read-off answer passes, the stubs are 'not done', and the mistakes
students make get the words the checkers promise.

Each lesson's own solutions are checked once, by the lesson's check cells."""

import pytest
from test_exercises_speed import feedback

from jaxtour import exercises as ex


def test_lesson_02_registers_four_exercises():
    assert [e.name for e in ex.for_lesson("02")] == [
        "ex_grad_from_vjp",
        "ex_jacobian_from_jvp",
        "ex_biggest_cotangent",
        "ex_clip_by_norm",
    ]


GRAD = "def ex_grad_from_vjp(f, x):\n    y, f_vjp = jax.vjp(f, x)\n    return {}"


@pytest.mark.parametrize(
    "returned, words",
    [
        ("f_vjp(jnp.zeros_like(y))[0]", ["all zeros", "seed", "1.0"]),
        ("f_vjp(jnp.ones_like(y))", ["a tuple holding one array", "[0]"]),
        ("jax.grad(f)(x)", ["uses `jax.grad`", "`jax.vjp` only"]),
        ("y", ["got", "expected"]),
    ],
)
def test_grad_from_vjp_mistakes_get_their_words(returned, words):
    result = feedback(GRAD.format(returned), "ex_grad_from_vjp")
    assert not result.passed and result.kind == "wrong", result
    for word in words:
        assert word in result.message, (word, result.message)


JACOBIAN = """def ex_jacobian_from_jvp(f, x):
    basis = jnp.eye(x.shape[0], dtype=x.dtype)
    push = lambda v: jax.jvp(f, (x,), (v,))[1]
    return {}"""


@pytest.mark.parametrize(
    "returned, words",
    [
        ("jax.vmap(push)(basis)", ["transpose", "`out_axes=1`"]),
        ("push(jnp.ones_like(x))", ["one JVP", "`jnp.eye(n)`"]),
        (
            "jnp.stack([push(v) for v in basis], axis=1)",
            ["one at a time", "`jax.vmap`"],
        ),
        ("jax.jacfwd(f)(x)", ["uses `jax.jacfwd`"]),
    ],
)
def test_jacobian_from_jvp_mistakes_get_their_words(returned, words):
    result = feedback(JACOBIAN.format(returned), "ex_jacobian_from_jvp")
    assert not result.passed and result.kind == "wrong", result
    for word in words:
        assert word in result.message, (word, result.message)


def test_biggest_cotangent_read_off_the_picture_passes():
    import jax.numpy as jnp
    import numpy as np

    from jaxtour.autodiff import draw_vjp

    A = jnp.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])

    def g(x):
        return jnp.sin(A @ x)

    x3, u = jnp.array([0.5, -1.0, 2.0]), jnp.array([1.0, -2.0])
    picture = draw_vjp(g, cotangents=u)(x3)
    assert "-2.17]" in picture.source  # the box the student reads: the cotangent of x
    # the oracle by hand, in float64: uᵀJ = Aᵀ (u ⊙ cos(Ax))
    a64 = np.asarray(A, np.float64)
    pulled = a64.T @ (np.asarray(u) * np.cos(a64 @ np.asarray(x3, np.float64)))
    index = int(np.argmax(np.abs(pulled)))
    code = f"def ex_biggest_cotangent():\n    return ({index}, {pulled[index]:.2f})"
    assert feedback(code, "ex_biggest_cotangent").passed


@pytest.mark.parametrize(
    "returned, words",
    [
        ("(3, -2.17)", ["counts from 1"]),
        ("(2, 2.17)", ["sign"]),
        ("(1, 1.31)", ["not the one with the largest"]),
        ("(2, -2.5)", ["not the value in its box"]),
        ("-2.17", ["return a pair"]),
    ],
)
def test_biggest_cotangent_mistakes_get_their_words(returned, words):
    result = feedback(
        f"def ex_biggest_cotangent():\n    return {returned}", "ex_biggest_cotangent"
    )
    assert not result.passed and result.kind == "wrong", result
    for word in words:
        assert word in result.message, (word, result.message)


CLIP = """def ex_clip_by_norm(x):
    @jax.custom_vjp
    def clip(x):
        return x

    clip.defvjp(lambda x: (x, None), lambda _, g: ({},))
    return clip(x)"""


def test_clip_by_norm_right_answer_passes():
    code = CLIP.format("g * jnp.minimum(1.0, 1.0 / jnp.linalg.norm(g))")
    assert feedback(code, "ex_clip_by_norm").passed


# the custom_vjp at notebook level, as a student writes it first: on JAX 0.10 its
# default copy could not be loaded in the checker ("__new__() missing ... 'fun'")
NOTEBOOK_CLIP = """@jax.custom_vjp
def clip(x):
    return x

clip.defvjp(
    lambda x: (x, None),
    lambda _, g: (g * jnp.minimum(1.0, 1.0 / jnp.linalg.norm(g)),),
)

def ex_clip_by_norm(x):
    return clip(x)"""


def test_clip_by_norm_with_a_notebook_level_custom_vjp_passes():
    import warnings

    with warnings.catch_warnings():  # a library may have imported it: then pickling's
        warnings.simplefilter("ignore")  # search for a module meets it, and it warns
        import numpy.core  # noqa: F401
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = feedback(NOTEBOOK_CLIP, "ex_clip_by_norm")
    assert (result.passed, result.kind) == (True, "passed"), result
    assert [str(w.message) for w in seen] == []


@pytest.mark.parametrize(
    "code, words",
    [
        (CLIP.format("g"), ["unchanged", "backward rule"]),
        (CLIP.format("jnp.clip(g, -1.0, 1.0)"), ["each element", "norm"]),
        (CLIP.format("g / jnp.linalg.norm(g)"), ["short cotangent", "min(1"]),
        ("def ex_clip_by_norm(x):\n    return x", ["no `jax.custom_vjp`", ".defvjp"]),
        ("def ex_clip_by_norm(x):\n    return 2 * x", ["expected", "got"]),
    ],
)
def test_clip_by_norm_mistakes_get_their_words(code, words):
    result = feedback(code, "ex_clip_by_norm")
    assert not result.passed and result.kind == "wrong", result
    for word in words:
        assert word in result.message, (word, result.message)
