"""A model passed as `f` that writes to itself when called (a Flax NNX `BatchNorm`'s
running statistics, a `Dropout`'s `nnx.Rngs` count), in the lenses that hand back
`f`'s results: an error that says so, never an update silently lost.

Oracles: the same module called eagerly, and `nnx.jit`, which writes updates back.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from jaxtour.tracing import explain_retraces, find_nans, step_through
from jaxtour.viz import draw_jaxpr

X = jnp.arange(12.0).reshape(4, 3)

NOTHING_KEPT = (
    "{who}(BatchNorm) would lose a state update: calling BatchNorm wrote to "
    "`BatchNorm.mean.value`, `BatchNorm.var.value`. {who} traces BatchNorm as jax.jit "
    "does, handing it a copy whose arrays are tracers; the writes land on the copy "
    "and are lost with it, so your BatchNorm would be left unchanged. Nothing ran and "
    "BatchNorm is as it was. "
)
EVAL = "Where no update is wanted (evaluation), call model.eval() first."
OWN_JIT = "explain_retraces(nnx.jit(lambda m, *args: m(*args)))(model, *args)"


def _bn() -> nnx.BatchNorm:
    return nnx.BatchNorm(3, rngs=nnx.Rngs(0))


def _leaves(model) -> list:
    return [np.asarray(leaf) for leaf in jax.tree.leaves(model)]


def _eager_mean(x) -> jax.Array:
    bn = _bn()
    bn(x)
    return bn.mean[...]


def test_explain_retraces_of_a_batchnorm_raises_and_leaves_it_as_it_was():
    """Issue: explain_retraces(bn)(x) ran, and bn's batch statistics never moved
    (eager bn(x) moves them): the update was lost without a word."""
    bn = _bn()
    before = _leaves(bn)
    with pytest.raises(TypeError) as caught:
        explain_retraces(bn)(X)
    fix = "Pass Flax's own jit, which writes the update back: " + OWN_JIT + ". " + EVAL
    assert str(caught.value) == NOTHING_KEPT.format(who="explain_retraces") + fix
    for now, then in zip(_leaves(bn), before, strict=True):
        np.testing.assert_array_equal(now, then)


def test_the_recipe_the_message_gives_keeps_the_update_as_eager_calls_do():
    """The recipe, run as the message writes it, gives eager calls' results and
    batch statistics."""
    with pytest.raises(TypeError, match="would lose a state update") as caught:
        explain_retraces(_bn())(X)
    assert OWN_JIT in str(caught.value)
    model, eager = _bn(), _bn()
    names = {"explain_retraces": explain_retraces, "nnx": nnx}
    for x in (X, 2 * X):
        got = eval(OWN_JIT, names, {"model": model, "args": (x,)})
        np.testing.assert_allclose(got, eager(x), rtol=1e-6)
    np.testing.assert_allclose(model.mean[...], eager.mean[...], rtol=1e-6)
    np.testing.assert_allclose(model.var[...], eager.var[...], rtol=1e-6)


def test_a_dropout_whose_rngs_count_would_not_advance_is_named():
    """Issue: a module drawing from its nnx.Rngs had its count left at 0."""
    drop = nnx.Dropout(0.5, rngs=nnx.Rngs(0))
    with pytest.raises(TypeError, match=r"wrote to `Dropout\.rngs\.count\.value`\."):
        explain_retraces(drop)(X)
    assert int(drop.rngs.count[...]) == 0
    drop.eval()  # the message's other way: no update wanted, none made
    np.testing.assert_array_equal(explain_retraces(drop)(X), X)


@pytest.mark.parametrize("lens", [step_through, find_nans])
def test_the_stepping_lenses_raise_and_their_recipe_returns_the_new_state(lens):
    """Issue: step_through(bn)(x).outputs came back, bn unchanged. These lenses run
    the jaxpr themselves, so nnx.jit cannot help: the message says to return the
    state, and that gives eager's statistics."""
    who = lens.__name__
    bn = _bn()
    with pytest.raises(TypeError) as caught:
        lens(bn)(X)
    said = str(caught.value)
    assert said.startswith(NOTHING_KEPT.format(who=who))
    assert f"{who}(f)(state, *args), and nnx.update(model, new_state)" in said
    assert "nnx.jit" not in said
    np.testing.assert_array_equal(bn.mean[...], jnp.zeros(3))
    graphdef, state = nnx.split(bn)

    def f(state, *args):
        m = nnx.merge(graphdef, state)
        return m(*args), nnx.state(m)

    steps = step_through(f)(state, X)
    out, new_state = steps.outputs
    nnx.update(bn, new_state)
    np.testing.assert_allclose(out, _bn()(X), rtol=1e-6)
    np.testing.assert_allclose(bn.mean[...], _eager_mean(X), rtol=1e-6)


@dataclasses.dataclass
class Running:
    """A mutable pytree (not Flax) that counts its calls in an array field."""

    w: jax.Array
    calls: jax.Array

    def __call__(self, x):
        self.calls = self.calls + 1
        return self.w * x


jax.tree_util.register_dataclass(Running, data_fields=["w", "calls"], meta_fields=[])


def test_any_model_that_assigns_to_itself_is_named_with_a_framework_free_fix():
    model = Running(jnp.ones(3), jnp.zeros((), jnp.int32))
    with pytest.raises(TypeError) as caught:
        explain_retraces(model)(X[0])
    said = str(caught.value)
    assert "calling Running wrote to `Running.calls`." in said
    assert said.endswith("return an eqx.nn.State), and set it yourself.")
    assert int(model.calls) == 0


def test_a_stateless_module_runs_and_a_drawing_draws_as_before():
    """nnx.Linear writes nothing: explain_retraces and step_through give lin(x). A
    drawing hands back no results, so it draws bn's jaxpr as before."""
    lin = nnx.Linear(3, 2, rngs=nnx.Rngs(0))
    retraced = explain_retraces(lin)
    np.testing.assert_allclose(retraced(X), lin(X), rtol=1e-6)
    np.testing.assert_allclose(step_through(lin)(X).outputs, lin(X), rtol=1e-6)
    assert retraced.traces == 1
    assert draw_jaxpr(_bn())(X).title.startswith("jaxpr of BatchNorm")


def test_under_disable_jit_the_call_is_eager_and_keeps_its_update():
    """jax.jit under jax.disable_jit calls bn itself, op by op: bn(x)'s update."""
    bn = _bn()
    with jax.disable_jit():
        explain_retraces(bn)(X)
    np.testing.assert_allclose(bn.mean[...], _eager_mean(X), rtol=1e-6)


class Net(nnx.Module):
    """A user's own NNX module: its class lives in this file, not in flax."""

    def __init__(self, rngs: nnx.Rngs) -> None:
        self.bn = nnx.BatchNorm(3, rngs=rngs)
        self.drop = nnx.Dropout(0.5, rngs=rngs)

    def __call__(self, x):
        return self.drop(self.bn(x))


def test_a_users_own_nnx_module_is_told_flax_recipe_and_it_keeps_the_update():
    """Issue: only a class living in `flax.*` was told nnx.jit; a user's Net(nnx.Module)
    was told Equinox's advice. Oracle: the same Net called eagerly."""
    with pytest.raises(TypeError) as caught:
        explain_retraces(Net(nnx.Rngs(0)))(X)
    wrote = "`Net.bn.mean.value`, `Net.bn.var.value`, `Net.drop.rngs.count.value`"
    fix = "Pass Flax's own jit, which writes the update back: " + OWN_JIT + ". " + EVAL
    assert str(caught.value) == (
        NOTHING_KEPT.replace("BatchNorm", "Net")
        .replace("`Net.mean.value`, `Net.var.value`", wrote)
        .format(who="explain_retraces")
        + fix
    )
    with pytest.raises(TypeError, match=r"Then step_through\(f\)\(state, \*args\)"):
        step_through(Net(nnx.Rngs(0)))(X)
    model, eager = Net(nnx.Rngs(0)), Net(nnx.Rngs(0))
    names = {"explain_retraces": explain_retraces, "nnx": nnx}
    for x in (X, 2 * X):
        got = eval(OWN_JIT, names, {"model": model, "args": (x,)})
        np.testing.assert_allclose(got, eager(x), rtol=1e-6)
    np.testing.assert_allclose(model.bn.mean[...], eager.bn.mean[...], rtol=1e-6)
    np.testing.assert_allclose(model.bn.var[...], eager.bn.var[...], rtol=1e-6)
    assert int(model.drop.rngs.count[...]) == int(eager.drop.rngs.count[...]) == 2


def test_calls_that_raised_are_no_traces_and_the_counts_agree_with_the_report():
    """Issue: two train-mode calls raised, yet counted as traces: after bn.eval()
    and two calls, 3 traces and 2 retraces, while the report said 1 trace."""
    bn = _bn()
    retraced = explain_retraces(bn)
    for _ in range(2):
        with pytest.raises(TypeError, match="would lose a state update"):
            retraced(X)
    bn.eval()
    retraced(X)
    retraced(X)
    assert (retraced.traces, retraced.retraces) == (1, 0)
    assert [c.event for c in retraced.calls] == ["first trace", "cache hit"]
    assert str(retraced).startswith("BatchNorm: 2 calls, 1 trace (0 retraces), ")
