"""explain_retraces of a model passed as `f`, and of calls that hold many leaf sets.

Oracles: `eqx.filter_jit`, which takes a model's arrays as inputs and holds the rest,
and counts of traces noted by the traced Python itself.
"""

import dataclasses
import re
from collections.abc import Callable

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

from jaxtour.tracing import explain_retraces

TRACED: list = []  # each trace of a model below notes itself here


class Noted(eqx.Module):
    """An MLP that notes each run of its Python: once per trace under a jit."""

    mlp: eqx.nn.MLP

    def __call__(self, x):
        TRACED.append(1)
        return self.mlp(x)


@dataclasses.dataclass
class Dense:
    """A model whose fields can be set in place (a mutable pytree, as an NNX one)."""

    w: jax.Array
    act: Callable = jax.nn.relu

    def __call__(self, x):
        TRACED.append(1)
        return self.act(self.w @ x)


jax.tree_util.register_dataclass(Dense, data_fields=["w", "act"], meta_fields=[])


def _traces(run) -> int:
    """How many times `run()` traced the models above."""
    TRACED.clear()
    run()
    return len(TRACED)


def _events(retraced) -> str:
    return ", ".join(call.event for call in retraced.calls)


def _parameters(stablehlo: str) -> int:
    """How many parameters the program's `main` takes."""
    main = re.search(r"func\.func public @main\(([^)]*)\)", stablehlo)
    assert main is not None
    return main.group(1).count("%arg")


def _dot(w, x):
    TRACED.append(1)
    return w @ x


def _models():
    return {
        "MLP": Noted(eqx.nn.MLP(3, 2, 4, 1, key=jax.random.key(0))),
        "Partial": jax.tree_util.Partial(_dot, jnp.arange(6.0).reshape(2, 3)),
    }


@pytest.mark.parametrize("name", ["MLP", "Partial"])
def test_a_model_as_f_takes_its_weights_as_inputs_as_eqx_filter_jit_does(name):
    """Issue: explain_retraces(mlp) closed over the weights: XLA constants, and
    `.lower` failed on hashing the module. The oracle is eqx.filter_jit(model): its
    program's parameters, and its count of traces for the same calls."""
    model, x = _models()[name], jnp.linspace(-1.0, 1.0, 3)
    retraced = explain_retraces(model)
    weights = jax.tree.leaves(eqx.filter(model, eqx.is_array))
    traced = retraced.trace(x).jaxpr
    assert (len(traced.jaxpr.invars), len(traced.consts)) == (len(weights) + 1, 0)
    oracle, xs = eqx.filter_jit(model), [x, x * 2, x.astype(jnp.bfloat16), x]
    assert _traces(lambda: [oracle(x) for x in xs]) == 2
    parameters = _parameters(oracle.lower(x).as_text())
    assert _parameters(retraced.lower(x).as_text()) == parameters == len(weights) + 1
    TRACED.clear()
    for x in xs:
        assert jnp.allclose(retraced(x), model(x))
    assert retraced.traces == 2
    assert _events(retraced) == "first trace, cache hit, retrace, cache hit"
    assert [c.words for c in retraced.calls[2].causes] == [
        "`x` changed dtype: f32[3] → bf16[3]"
    ]


def test_a_model_set_in_place_is_read_at_each_call_and_its_field_named():
    """Issue: a model's weights were constants of the first trace: new values of
    the same shape gave the old result, a new shape no retrace. Read as an argument
    is read, the oracle is eqx.filter_jit(apply)(model, x) for the same calls."""
    x = jnp.arange(3.0)

    def run(model, call):
        """Each call's result and model(x), run without jit (not noted)."""
        outs = []
        for change in (
            {},
            {"w": -2.0 * jnp.ones((2, 3))},  # new weights, the same type: no trace
            {"w": jnp.ones((4, 3))},  # a new shape
            {"act": jnp.tanh},  # a new activation
            {"w": jnp.ones((2, 3)), "act": jax.nn.relu},  # back to the first
        ):
            for field, value in change.items():
                setattr(model, field, value)
            got, noted = call(x), len(TRACED)
            outs.append((got, model(x)))
            del TRACED[noted:]
        return outs

    apply, model = eqx.filter_jit(lambda model, x: model(x)), Dense(jnp.ones((2, 3)))
    assert _traces(lambda: run(model, lambda x: apply(model, x))) == 3
    model = Dense(jnp.ones((2, 3)))
    retraced = explain_retraces(model)
    for got, want in run(model, retraced):
        assert jnp.allclose(got, want)
    assert retraced.traces == 3
    assert _events(retraced) == "first trace, cache hit, retrace, retrace, cache hit"
    assert [c.words for c in retraced.calls[2].causes] == [
        "`Dense.w` changed shape: f32[2,3] → f32[4,3]"
    ]
    assert "`Dense.act`" in retraced.calls[3].causes[0].words
    assert retraced.calls[1].stale == []  # new weights are inputs, not stale reads
