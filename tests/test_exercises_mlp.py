"""Lesson 05's exercises: the stubs say what to do, and the mistakes
students make get their own words (the generic lesson test runs the lesson's own cells).

Each lesson's own solutions are checked once, by the lesson's check cells."""

import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.exercises import check


def _define(code: str):
    namespace = {"jax": jax, "jnp": jnp, "np": np, "lax": jax.lax}
    exec(textwrap.dedent(code), namespace)
    [name] = [n for n in namespace if n.startswith("ex_")]
    return namespace[name]


def _feedback(code: str):
    return check(_define(code), quiet=True)


@pytest.mark.parametrize(
    "name", ["ex_losses_per_digit", "ex_accuracy", "ex_first_matmul_shape"]
)
def test_a_stub_is_not_done(name):
    feedback = _feedback(f"def {name}(*args):\n    ...")
    assert feedback.kind == "not done" and "Traceback" not in feedback.message


@pytest.mark.parametrize(
    ("code", "words"),
    [
        # vmap's default in_axes=0 maps the weights too
        (
            """def ex_losses_per_digit(example_loss, params, images, labels):
            return jax.vmap(example_loss)(params, images, labels)""",
            "in_axes=(None, 0, 0)",
        ),
        # the mean over the batch instead of one loss per example
        (
            """def ex_losses_per_digit(example_loss, params, images, labels):
            return jnp.mean(jax.vmap(example_loss, in_axes=(None, 0, 0))(params, images,
                                                                          labels))""",
            "one loss per example",
        ),
        # right values, but a Python loop
        (
            """def ex_losses_per_digit(example_loss, params, images, labels):
            return jnp.stack([example_loss(params, images[i], labels[i])
                              for i in range(len(images))])""",
            "not with a Python loop",
        ),
        (
            """def ex_accuracy(logits, labels):
            return jnp.mean(jnp.argmax(logits, axis=0) == labels)""",
            "axis=-1",
        ),
        (
            """def ex_accuracy(logits, labels):
            return jnp.sum(jnp.argmax(logits, axis=-1) == labels)""",
            "number of right answers",
        ),
        (
            """def ex_accuracy(logits, labels):
            return jnp.argmax(logits, axis=-1) == labels""",
            "one value per example",
        ),
        (
            """def ex_first_matmul_shape(batch):
            return (512,)""",
            "one image's shape",
        ),
        (
            """def ex_first_matmul_shape(batch):
            return (784, 512)""",
            "INPUT of the first `dot_general`",
        ),
        (
            """def ex_first_matmul_shape(batch):
            return (8, 512)""",
            "taken from the argument",
        ),
    ],
)
def test_each_mistake_gets_its_own_words(code, words):
    feedback = _feedback(code)
    assert not feedback.passed and feedback.kind == "wrong", feedback
    assert words in feedback.message, feedback.message


def test_vmap_inside_a_nested_lambda_is_batching_with_vmap():
    feedback = _feedback(
        """def ex_losses_per_digit(example_loss, params, images, labels):
        batched = lambda: jax.vmap(example_loss, in_axes=(None, 0, 0))(
            params, images, labels
        )
        return batched()"""
    )
    assert (feedback.passed, feedback.kind) == (True, "passed"), feedback


def test_vmap_in_a_helper_the_answer_calls_is_batching_with_vmap():
    namespace = {"jax": jax}
    exec(
        "batched = lambda loss: jax.vmap(loss, in_axes=(None, 0, 0))\n"
        "def ex_losses_per_digit(example_loss, params, images, labels):\n"
        "    return batched(example_loss)(params, images, labels)",
        namespace,
    )
    feedback = check(namespace["ex_losses_per_digit"], quiet=True)
    assert (feedback.passed, feedback.kind) == (True, "passed"), feedback
