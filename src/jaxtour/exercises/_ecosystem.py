"""Lesson 08's exercises: an Optax step, an NNX forward pass by hand, a jaxpr read.

Optax and Flax come with the `lessons` extra; they are imported when a check runs, so
that `jaxtour.exercises` imports without them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._expect import expect_close, expect_returned
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._remote import in_answer

LESSON = "08_ai_stack"
_WIDTHS = (
    6,
    5,
    4,
    3,
)  # a small MLP: the same structure as the lesson's, cheap to check


def _regression_loss(params: Any, x: jax.Array, y: jax.Array) -> Any:
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def _normal(seed: int, *shape: int) -> jax.Array:
    """Standard normal float32 numbers drawn by NumPy: a checker's data need no
    compiled random program (each new shape `jax.random` draws compiles one)."""
    return jnp.asarray(np.random.default_rng(seed).standard_normal(shape, np.float32))


def _regression_case() -> Any:
    params = {"w": _normal(8, 3, 2), "b": jnp.asarray(np.zeros(2, np.float32))}
    return params, _normal(9, 16, 3), _normal(10, 16, 2)


def _oracle_step(
    optimiser: Any, params: Any, opt_state: Any, x: jax.Array, y: jax.Array
) -> Any:
    import optax

    value, grads = jax.value_and_grad(_regression_loss)(params, x, y)
    updates, new_state = optimiser.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), new_state, value, updates


@checks(LESSON, "ex_optax_step", title="an Optax training step")
def _check_optax_step(fn: Callable[..., Any]) -> None:
    """Practises a training step with any Optax optimiser: `value_and_grad`,
    `optimiser.update` with the parameters, `optax.apply_updates`."""
    for name in _OPTIMISERS:
        optimiser = _optimiser(name)
        params, x, y = _regression_case()
        state = optimiser.init(params)
        for step in range(3):  # three steps: the state must be threaded through
            where = f"{name}, step {step + 1}"
            want_params, want_state, want_loss, updates = _oracle_step(
                optimiser, params, state, x, y
            )
            new_params, (structure, leaves), value = in_answer(
                fn, _call_step, name, params, state, x, y
            )
            new_state = (  # rebuilt here from plain leaves, when its structure is right
                jax.tree.unflatten(jax.tree.structure(want_state), leaves)
                if structure == str(jax.tree.structure(want_state))
                else structure
            )
            got = new_params, new_state, value
            _compare_step(
                got, (params, state, want_params, want_state, want_loss, updates), where
            )
            params, state = want_params, want_state


_OPTIMISERS = ("optax.sgd(0.1, momentum=0.9)", "optax.adamw(0.01, weight_decay=0.1)")


def _optimiser(name: str) -> Any:
    import optax

    if name == _OPTIMISERS[0]:
        return optax.sgd(0.1, momentum=0.9)
    return optax.adamw(0.01, weight_decay=0.1)


def _call_step(
    fn: Callable[..., Any],
    name: str,
    params: Any,
    state: Any,
    x: jax.Array,
    y: jax.Array,
) -> Any:
    """The answer's step as plain data (run where it runs): the new parameters, the new
    state's structure (as text) and leaves, the loss."""
    optimiser = _optimiser(name)
    try:
        got = fn(_regression_loss, optimiser, params, state, x, y)
    except ValueError as err:
        if "params" in str(err):  # optax: "...requires the current value of parameters"
            raise Wrong(
                f"with {name}, Optax asked for the parameters: weight decay needs "
                "them. Pass them as the third argument: "
                "`optimiser.update(grads, opt_state, params)`."
            ) from None
        raise
    if not isinstance(got, tuple) or len(got) != 3:
        raise Wrong(
            "return a tuple of three: `(new_params, new_opt_state, loss)`; got "
            f"{type(got).__name__}{'' if not isinstance(got, tuple) else len(got)}."
        )
    new_params, new_state, value = got
    leaves, structure = jax.tree.flatten(new_state)
    return new_params, (str(structure), leaves), value


def _compare_step(got: Any, oracle: Any, where: str) -> None:
    params, state, want_params, want_state, want_loss, updates = oracle
    new_params, new_state, value = got
    if _close(new_params, jax.tree.map(lambda p, u: p - u, params, updates)):
        raise Wrong(
            f"at {where}, the parameters moved uphill: Optax's updates already "
            "hold the minus sign (−lr·grad). Add them: "
            "`optax.apply_updates(params, updates)`."
        )
    if _close(new_params, params):
        raise Wrong(
            f"at {where}, the parameters did not change: return the new ones, "
            "`optax.apply_updates(params, updates)`."
        )
    expect_close(new_params, want_params, where=where, rtol=1e-4, atol=1e-6)
    if _structure(new_state) != _structure(want_state) or not _close(
        new_state, want_state
    ):
        if _close(new_state, state):
            raise Wrong(
                f"at {where}, you returned the optimiser state you were given: "
                "return the new state that `optimiser.update` gives back, or "
                "momentum and Adam's averages never move."
            )
        raise Wrong(
            f"at {where}, the new optimiser state is not the one "
            "`optimiser.update(grads, opt_state, params)` returns."
        )
    if not _close(value, want_loss):
        raise Wrong(
            f"at {where}, the loss is {float(value):.4g}, expected "
            f"{float(want_loss):.4g}: return the loss of `params` before the step "
            "(from `jax.value_and_grad(loss_fn)(params, x, y)`)."
        )


def _structure(tree: Any) -> Any:
    """`jax.tree.structure(tree)`, typed Any: mypy cannot compare jaxlib's `PyTreeDef`."""
    return jax.tree.structure(tree)


def _close(a: Any, b: jax.Array) -> bool:
    try:
        pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
        return all(
            np.shape(u) == np.shape(v) and np.allclose(u, v, rtol=1e-4, atol=1e-6)
            for u, v in pairs
        )
    except (TypeError, ValueError):
        return False


class _TinyMLP:
    """Built on first use: Flax is imported only when a check runs."""

    @staticmethod
    def build(seed: int) -> Any:
        from flax import nnx

        drawn = np.random.default_rng(seed)

        def kernel_init(key: Any, shape: tuple[int, int], dtype: Any) -> jax.Array:
            # NumPy's normals, LeCun-scaled: Flax's own initialiser compiles a
            # truncated-normal program per new shape, seconds in a checker
            kernel = drawn.standard_normal(shape, np.float32) / np.sqrt(shape[0])
            return jnp.asarray(kernel, dtype)

        class MLP(nnx.Module):
            def __init__(self, rngs: Any) -> None:
                a, b, c, d = _WIDTHS
                made = {"kernel_init": kernel_init, "rngs": rngs}
                self.hidden1 = nnx.Linear(a, b, **made)
                self.hidden2 = nnx.Linear(b, c, **made)
                self.output = nnx.Linear(c, d, **made)

            def __call__(self, x: jax.Array) -> Any:
                x = jax.nn.relu(self.hidden1(x))
                x = jax.nn.relu(self.hidden2(x))
                return self.output(x)

        model = MLP(nnx.Rngs(seed))
        # Non-zero biases, so that a forgotten bias shows.
        for layer in (model.hidden1, model.hidden2, model.output):
            bias = layer.bias
            if bias is None:  # nnx.Linear has one unless use_bias=False
                raise RuntimeError(f"the checker's model lost its bias: {layer!r}")
            bias[...] = _normal(seed + 100, *bias.shape)
        return model, nnx.to_pure_dict(nnx.state(model))


def _linear(weights: jax.Array, name: str, x: jax.Array) -> Any:
    return x @ weights[name]["kernel"] + weights[name]["bias"]


@checks(LESSON, "ex_nnx_forward", title="the NNX forward pass by hand")
def _check_nnx_forward(fn: Callable[..., Any]) -> None:
    """Practises reading a Flax NNX module's state as a plain pytree and computing its
    forward pass with `jax.numpy`."""
    for seed in (0, 1):
        model, weights = _TinyMLP.build(seed)
        x = _normal(seed + 10, 5, _WIDTHS[0])
        want = model(x)
        got = jnp.asarray(expect_returned(fn(weights, x)))
        where = f"a {'-'.join(map(str, _WIDTHS))} MLP, batch of 5 (seed {seed})"
        if (
            got.shape == want.shape
            and _close(got, jax.nn.relu(want))
            and not _close(got, want)
        ):
            raise Wrong(
                f"for {where}, your logits are never negative: the output layer "
                "has no ReLU, only the hidden layers do."
            )
        h = _linear(weights, "hidden2", _linear(weights, "hidden1", x))
        if got.shape == want.shape and _close(got, _linear(weights, "output", h)):
            raise Wrong(
                f"for {where}, you computed three linear layers without ReLU: "
                "apply `jax.nn.relu` after `hidden1` and after `hidden2`."
            )
        expect_close(got, want, where=where, rtol=1e-5, atol=1e-5)


@checks(LESSON, "ex_read_the_jaxpr", title="read the forward pass's jaxpr")
def _check_read_the_jaxpr(fn: Callable[..., Any]) -> None:
    """Practises reading a jaxpr drawing: the matrix products and the inputs NNX hands
    to a pure function."""
    answer = fn()
    if not isinstance(answer, dict) or set(answer) != {"dot_general", "weights"}:
        raise Wrong(
            'return a dict with two keys: `{"dot_general": ..., "weights": ...}`.'
        )
    products, weights = answer["dot_general"], answer["weights"]
    want_products, want_weights = _counted_forward_jaxpr()
    if products != want_products:
        if products == 2 * want_products:
            raise Wrong(
                f"{products} products: the bias additions are `add`s, not matrix "
                "products. Count only the `dot_general` boxes."
            )
        raise Wrong(
            f"{products} is not the number of `dot_general` boxes: there is one "
            "per `nnx.Linear` layer."
        )
    if weights != want_weights:
        if weights == want_weights + 1:
            raise Wrong(
                f"{weights} counts the batch `x` too: it is an input, not a weight."
            )
        if weights == want_weights // 2:
            raise Wrong(
                f"{weights} counts one array per layer: each `nnx.Linear` passes "
                "two, its kernel and its bias."
            )
        raise Wrong(
            f"{weights} weights: count the inputs at the top of the picture, "
            "leaving out the batch `x`."
        )


def _counted_forward_jaxpr() -> tuple[int, int]:
    """(dot_generals, weight inputs) of the NNX MLP's forward pass, from its jaxpr."""
    from flax import nnx

    model, _ = _TinyMLP.build(0)
    graphdef, state = nnx.split(model)
    jaxpr = jax.make_jaxpr(lambda s, x: nnx.merge(graphdef, s)(x))(
        state, jnp.zeros((2, _WIDTHS[0]))
    )
    products = [e.primitive.name for e in jaxpr.eqns].count("dot_general")
    return products, len(jaxpr.jaxpr.invars) - 1
