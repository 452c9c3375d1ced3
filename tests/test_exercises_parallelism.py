"""Lesson 07's exercises: the count's answer passes, stubs say "not done", typical
mistakes get the feedback promised. The all-reduce count needs several devices, so those
checks run in the 8-device process of `tests/devices.py` (this process has one).

Each lesson's own solutions are checked once, by the lesson's check cells."""

import jax.numpy as jnp
import pytest
from devices import run_with_devices
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from jaxtour.exercises import check, for_lesson


def test_lesson_07_registers_three_exercises():
    assert [ex.name for ex in for_lesson("07")] == [
        "ex_batch_sharding",
        "ex_global_mean",
        "ex_count_all_reduces",
    ]


# ex_batch_sharding ------------------------------------------------------------------------


def ex_batch_sharding(mesh):
    return NamedSharding(mesh, P("batch"))


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (lambda mesh: NamedSharding(mesh, P(None, "batch")), "784 pixels"),
        (lambda mesh: NamedSharding(mesh, P()), "replicates"),
        (lambda mesh: P("batch"), "Wrap it with the mesh"),
        (lambda mesh: mesh, "expected a `NamedSharding`, got Mesh"),
    ],
)
def test_batch_sharding_mistakes_get_specific_feedback(answer, says):
    answer.__name__ = "ex_batch_sharding"
    feedback = check(answer, quiet=True)
    assert not feedback.passed and feedback.kind == "wrong"
    assert says in feedback.message
    assert "Traceback" not in feedback.message


# ex_global_mean ---------------------------------------------------------------------------


def ex_global_mean(x):
    return lax.psum(jnp.sum(x), "batch") / lax.psum(x.size, "batch")


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        (lambda x: jnp.mean(x), "mean of its own slice"),
        (lambda x: lax.psum(jnp.mean(x), "batch"), "4 times too big"),
        (
            lambda x: lax.psum(jnp.mean(x), "batch") / 4,
            "right with 4 devices, wrong with 2",
        ),
        (lambda x: lax.psum(jnp.sum(x), "batch"), "sum of the whole vector"),
        (lambda x: lax.psum(x, "batch") / 4, "one number"),
    ],
)
def test_global_mean_mistakes_get_specific_feedback(answer, says):
    answer.__name__ = "ex_global_mean"
    feedback = check(answer, quiet=True)
    assert not feedback.passed and feedback.kind == "wrong"
    assert says in feedback.message


def test_a_psum_over_a_misspelt_axis_is_a_hint_not_a_traceback():
    def ex_global_mean(x):
        return lax.psum(jnp.mean(x), "batches")

    feedback = check(ex_global_mean, quiet=True)
    assert not feedback.passed and feedback.kind == "error"
    assert "Traceback" not in feedback.message


@pytest.mark.parametrize(
    "name", ["ex_batch_sharding", "ex_global_mean", "ex_count_all_reduces"]
)
def test_stubs_are_not_done(name):
    def stub(*args): ...

    stub.__name__ = name
    feedback = check(stub, quiet=True)
    assert feedback.kind == "not done" and name in feedback.message


# ex_count_all_reduces, and the solutions on 8 devices -----------------------------------

EIGHT = """
import json
from jaxtour.exercises import _parallelism, check

want = _parallelism.data_parallel_all_reduces()
out = {"devices": jax.device_count(), "want": want}
answers = {"right": want, "zero": 0, "one more": want + 1, "six": 6, "seven": 7,
           "two more": want + 2, "a word": "one", "a jnp int": jax.numpy.int32(want),
           "a bool": True}
for name, answer in answers.items():
    ex_count_all_reduces = lambda answer=answer: answer
    ex_count_all_reduces.__name__ = "ex_count_all_reduces"
    feedback = check(ex_count_all_reduces, quiet=True)
    out[name] = [feedback.passed, feedback.kind, feedback.message]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def eight() -> dict:
    return run_with_devices(EIGHT)


@pytest.mark.slow  # compiles the data-parallel step for 8 devices
def test_count_all_reduces_right_answer_passes_on_8_devices(eight):
    assert eight["devices"] == 8
    assert eight["want"] >= 1  # the gradients are added up over the devices
    assert eight["right"][:2] == [True, "passed"]
    assert eight["a jnp int"][:2] == [True, "passed"]  # what jnp.sum of a count gives


@pytest.mark.slow  # compiles the data-parallel step for 8 devices
@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("zero", "at least one all-reduce"),
        ("one more", "an all-reduce of its own"),
        ("two more", "not what the drawing shows"),
        ("a word", "whole number"),
        ("a bool", "whole number"),
    ],
)
def test_count_all_reduces_mistakes_get_specific_feedback(eight, answer, says):
    passed, kind, message = eight[answer]
    assert not passed and kind == "wrong"
    assert says in message
    if answer not in ("a word", "a bool"):  # a count: it says where it was counted
        assert "8 CPU devices" in message


@pytest.mark.slow  # compiles the data-parallel step for 8 devices
def test_count_all_reduces_one_per_gradient_is_combined(eight):
    if eight["want"] >= 6:
        pytest.skip("XLA made one all-reduce per gradient here: 6 is no mistake")
    for answer in ("six", "seven"):
        passed, kind, message = eight[answer]
        assert not passed and kind == "wrong" and "XLA combines them" in message


@pytest.mark.parametrize(
    ("got", "want", "says"),
    [
        (0, 1, "at least one all-reduce"),
        (0, 3, "at least one all-reduce"),
        (2, 1, "of its own"),
        (4, 3, "of its own"),
        (6, 1, "XLA combines them"),
        (6, 7, "not what the drawing shows"),  # 6 is not "too many" when XLA makes 7
        (5, 1, "not what the drawing shows"),
    ],
)
def test_count_feedback_follows_the_count(got, want, says):
    from jaxtour.exercises._parallelism import _count_feedback

    assert says in _count_feedback(got, want)
