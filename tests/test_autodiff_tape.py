"""The tape teaching model gets the same numbers as jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_autodiff_cases import cubic

from jaxtour.autodiff import Value, tape_grad


@pytest.mark.parametrize("x", [1.0, -2.0, 0.3])
def test_the_tape_differentiates_the_cubic_like_jax_grad(x):
    value, [grad], _ = tape_grad(cubic, x)
    assert value == pytest.approx(float(cubic(x)))
    assert grad == pytest.approx(float(jax.grad(cubic)(x)), rel=1e-6)


def _mixed(x, y, sin, exp, tanh):
    return tanh(x * y) + sin(x) / (1 + y**2) - exp(-x) * 3 + (x - y) ** 2


def test_the_tape_handles_two_inputs_and_transcendentals():
    value, grads, length = tape_grad(
        lambda x, y: _mixed(x, y, Value.sin, Value.exp, Value.tanh), 0.4, -1.1
    )
    reference = lambda x, y: _mixed(x, y, jnp.sin, jnp.exp, jnp.tanh)
    # JAX computes in float32, the tape in float64: compare at float32 accuracy.
    assert value == pytest.approx(float(reference(0.4, -1.1)), abs=1e-5)
    assert grads == pytest.approx(
        [float(g) for g in jax.grad(reference, (0, 1))(0.4, -1.1)], rel=1e-5
    )
    assert length > 10


def test_a_value_used_twice_collects_both_contributions():
    x = Value(3.0)
    y = x * x  # d(x·x)/dx = 2x: both uses of x add to its grad
    y.backward()
    assert x.grad == 6.0
    assert repr(y) == "Value(9, grad=1, op=*)"


def test_tape_grad_walks_the_tape_once(monkeypatch):
    # lesson 02 times tape_grad as a tape framework's cost: one walk, one sweep per call
    walks, walk = [], Value.tape
    monkeypatch.setattr(Value, "tape", lambda self: walks.append(self) or walk(self))
    assert tape_grad(cubic, 1.0) == (8.0, [4.0], 13)
    assert len(walks) == 1


def test_every_call_records_a_new_tape():
    first, second = tape_grad(cubic, 1.0), tape_grad(cubic, 2.0)
    assert first[2] == second[2] == 13  # the same 13 nodes, recorded again per call


@pytest.mark.parametrize(
    "k, x",
    [(0, 0.0), (0.0, 0.0), (0.5, 0.0), (-1.0, 0.0), (-1, 0.0), (2, 0.0), (0.5, -2.0)],
)
def test_powers_at_zero_give_jax_grads_infinities_not_an_exception(k, x):
    value, [grad], _ = tape_grad(lambda v: v**k, x)
    want = jax.value_and_grad(lambda v: v**k)(x)
    np.testing.assert_allclose([value, grad], [float(w) for w in want], equal_nan=True)


def _branchy(a):
    return a * a if a > 0 else -a


@pytest.mark.parametrize("x", [2.0, -1.5])
def test_python_control_flow_reads_the_value_as_on_a_dynamic_tape(x):
    # jax.grad traces with the concrete value when not under jit: the oracle branches too
    value, [grad], _ = tape_grad(_branchy, x)
    assert value == pytest.approx(float(_branchy(jnp.float32(x))))
    assert grad == pytest.approx(float(jax.grad(_branchy)(x)), rel=1e-6)
    # `0.5 <= a` asks Value.__ge__ (reflected), then __lt__; and __le__
    assert tape_grad(lambda a: a if 0.5 <= a < 3 else a * 2, x)[1] == [
        1.0 if 0.5 <= x < 3 else 2.0
    ]
    assert tape_grad(lambda a: a * 3 if a <= -1 else a, x)[1] == [
        3.0 if x <= -1 else 1.0
    ]


@pytest.mark.parametrize(
    "f",
    [lambda a, b: a**b, lambda a, b: 2**a + b**a, lambda a, b: a**a * 1.5**b],
    ids=["a**b", "2**a + b**a", "a**a * 1.5**b"],
)
def test_a_value_in_the_exponent_differentiates_like_jax_grad(f):
    value, grads, _ = tape_grad(f, 1.3, 0.7)
    assert value == pytest.approx(
        float(f(jnp.float32(1.3), jnp.float32(0.7))), rel=1e-5
    )
    expected = [float(g) for g in jax.grad(f, (0, 1))(1.3, 0.7)]
    assert grads == pytest.approx(expected, rel=1e-5)


def test_a_zero_base_or_exponent_differentiates_as_jax_pow_does():
    for a, b in [(0.0, 2.5), (1.7, 0.0), (0.0, 0.0), (0.0, -1.0), (-2.0, 0.5)]:
        _, grads, _ = tape_grad(lambda a, b: a**b, a, b)
        expected = [float(g) for g in jax.grad(lambda a, b: a**b, (0, 1))(a, b)]
        assert grads == pytest.approx(expected, nan_ok=True), (a, b)
