"""Lesson 08's exercises: each stub and each typical mistake gets
its own plain-words feedback, never a traceback.

Each lesson's own solutions are checked once, by the lesson's check cells."""

import jax
import jax.numpy as jnp
import optax
import pytest

from jaxtour.exercises import check, for_lesson

pytest.importorskip("flax")


# The solutions, as the lesson writes them (only jax, jnp and optax).
def ex_optax_step(loss_fn, optimiser, params, opt_state, x, y):
    value, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimiser.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, value


def ex_nnx_forward(weights, x):
    for name in ("hidden1", "hidden2"):
        x = jax.nn.relu(x @ weights[name]["kernel"] + weights[name]["bias"])
    return x @ weights["output"]["kernel"] + weights["output"]["bias"]


def ex_read_the_jaxpr():
    return {"dot_general": 3, "weights": 6}


SOLUTIONS = {f.__name__: f for f in (ex_optax_step, ex_nnx_forward, ex_read_the_jaxpr)}


def _renamed(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def feedback_for(name, fn):
    result = check(_renamed(fn, name), quiet=True)
    assert "Traceback" not in result.message
    return result


def test_lesson_08_registers_three_exercises():
    assert [e.name for e in for_lesson("08")] == list(SOLUTIONS)


@pytest.mark.parametrize("name", SOLUTIONS)
def test_the_stub_is_not_done_yet(name):
    def stub(*args): ...

    result = feedback_for(name, stub)
    assert (
        not result.passed
        and result.kind == "not done"
        and f"`{name}`" in result.message
    )


# --- ex_optax_step: the mistakes of a first Optax step --------------------------------


def test_optax_step_subtracting_the_updates_is_moving_uphill():
    def wrong(loss_fn, optimiser, params, opt_state, x, y):
        value, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return jax.tree.map(lambda p, u: p - u, params, updates), opt_state, value

    result = feedback_for("ex_optax_step", wrong)
    assert result.kind == "wrong" and "uphill" in result.message
    assert "optax.apply_updates" in result.message


def test_optax_step_without_params_is_told_that_weight_decay_needs_them():
    def wrong(loss_fn, optimiser, params, opt_state, x, y):
        value, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = optimiser.update(grads, opt_state)
        return optax.apply_updates(params, updates), opt_state, value

    result = feedback_for("ex_optax_step", wrong)
    assert result.kind == "wrong" and "adamw" in result.message
    assert "optimiser.update(grads, opt_state, params)" in result.message


def test_optax_step_returning_the_old_state_is_caught_at_the_second_step():
    def wrong(loss_fn, optimiser, params, opt_state, x, y):
        value, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, _ = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, value

    result = feedback_for("ex_optax_step", wrong)
    assert result.kind == "wrong" and "state you were given" in result.message


def test_optax_step_returning_the_loss_after_the_step_is_named():
    def wrong(loss_fn, optimiser, params, opt_state, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss_fn(params, x, y)

    result = feedback_for("ex_optax_step", wrong)
    assert result.kind == "wrong" and "before the step" in result.message


def test_optax_step_returning_two_things_is_told_the_shape_of_the_answer():
    def wrong(loss_fn, optimiser, params, opt_state, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        updates, opt_state = optimiser.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    result = feedback_for("ex_optax_step", wrong)
    assert (
        result.kind == "wrong" and "(new_params, new_opt_state, loss)" in result.message
    )


# --- ex_nnx_forward: the mistakes of a forward pass by hand ---------------------------


def test_nnx_forward_with_relu_on_the_logits_is_told_the_output_has_none():
    def wrong(weights, x):
        for name in ("hidden1", "hidden2", "output"):
            x = jax.nn.relu(x @ weights[name]["kernel"] + weights[name]["bias"])
        return x

    result = feedback_for("ex_nnx_forward", wrong)
    assert result.kind == "wrong" and "output layer has no ReLU" in result.message


def test_nnx_forward_without_any_relu_is_told_where_they_go():
    def wrong(weights, x):
        for name in ("hidden1", "hidden2", "output"):
            x = x @ weights[name]["kernel"] + weights[name]["bias"]
        return x

    result = feedback_for("ex_nnx_forward", wrong)
    assert (
        result.kind == "wrong"
        and "after `hidden1` and after `hidden2`" in result.message
    )


def test_nnx_forward_with_a_transposed_kernel_gets_a_shape_hint():
    def wrong(weights, x):
        for name in ("hidden1", "hidden2"):
            x = jax.nn.relu(x @ weights[name]["kernel"].T + weights[name]["bias"])
        return x @ weights["output"]["kernel"].T + weights["output"]["bias"]

    result = feedback_for("ex_nnx_forward", wrong)
    assert result.kind == "error" and "shape" in result.message.lower()


def test_nnx_forward_without_the_biases_is_wrong_in_value():
    def wrong(weights, x):
        for name in ("hidden1", "hidden2"):
            x = jax.nn.relu(x @ weights[name]["kernel"])
        return x @ weights["output"]["kernel"]

    result = feedback_for("ex_nnx_forward", wrong)
    assert result.kind == "wrong" and not result.passed


# --- ex_read_the_jaxpr: reading the picture -------------------------------------------


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ({"dot_general": 6, "weights": 6}, "bias additions are `add`s"),
        ({"dot_general": 3, "weights": 7}, "counts the batch `x` too"),
        ({"dot_general": 3, "weights": 3}, "its kernel and its bias"),
        ({"dot_general": 2, "weights": 6}, "one per `nnx.Linear` layer"),
        ((3, 6), "a dict with two keys"),
    ],
)
def test_reading_the_jaxpr_wrongly_is_told_what_was_miscounted(answer, says):
    result = feedback_for("ex_read_the_jaxpr", lambda: answer)
    assert result.kind == "wrong" and says in result.message, result.message


def test_the_jaxpr_counts_come_from_jax_not_from_a_constant():
    from jaxtour.exercises import _ecosystem

    products, weights = _ecosystem._counted_forward_jaxpr()
    assert (products, weights) == (3, 6)
    x = jnp.ones((2, _ecosystem._WIDTHS[0]))
    model, params = _ecosystem._TinyMLP.build(0)
    assert jnp.allclose(ex_nnx_forward(params, x), model(x), atol=1e-6)
