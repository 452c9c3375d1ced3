"""What `f` may be and what it may take: a callable pytree as `f` (an Equinox module, an
object holding arrays whose hash fails), and a string where jax.jit wants an array."""

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import jaxtour.cost
import jaxtour.tracing
import jaxtour.viz
from jaxtour import _ir


class Scaled:
    """A callable object holding an array; like an eqx.Module, it cannot be hashed."""

    def __init__(self, w):
        self.w = w

    def __call__(self, x):
        return jnp.sum(jnp.sin(x * self.w))

    def __hash__(self):
        raise TypeError("Scaled holds an array: no hash")


@pytest.fixture(scope="module")
def callables():
    mlp = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.key(0))
    return {"MLP": mlp, "Scaled": Scaled(jnp.arange(4.0))}


@pytest.mark.slow  # eight lenses compile each program
@pytest.mark.parametrize("name", ["MLP", "Scaled"])
def test_a_callable_pytree_is_drawn_as_jax_make_jaxpr_traces_it(callables, name):
    f, x = callables[name], jnp.linspace(-1.0, 1.0, 4)
    oracle = jax.make_jaxpr(f)(x)  # its arrays: constants closed over
    n = _ir.count_eqns(oracle.jaxpr)
    assert jaxtour.viz.draw_jaxpr(f)(x).title == f"jaxpr of {name}: {n} equations"
    steps = jaxtour.tracing.step_through(f)(x)
    assert jnp.allclose(steps.outputs, f(x)) and len(steps) > 0
    assert not jaxtour.tracing.find_nans(f)(x).found
    table = jaxtour.cost.cost_table(f)(x)
    wrapped = jaxtour.cost.cost_table(lambda x: f(x))(x)  # the same program, hashable
    assert str(table).splitlines()[1:] == str(wrapped).splitlines()[1:]
    assert jaxtour.viz.draw_hlo(f)(x).title.startswith(f"compiled HLO of {name} (")
    assert jaxtour.viz.compare_stages(f)(x) is not None
    assert jaxtour.viz.draw_pipeline(f)(x).title.startswith(f"pipeline of {name}: {n} ")


def test_a_nan_in_a_callable_objects_array_is_found():
    f, x = Scaled(jnp.array([1.0, jnp.nan, 2.0, 3.0])), jnp.ones(4)
    report = jaxtour.tracing.find_nans(f)(x)
    assert report.step.primitive == "mul"
    assert (
        report.origin
        == "a constant Scaled closes over (or one computed from constants)"
    )
    assert jnp.isnan(f(x))  # the oracle


@pytest.mark.parametrize(
    "lens",
    [
        jaxtour.viz.draw_jaxpr,
        jaxtour.viz.draw_hlo,
        jaxtour.cost.cost_table,
        jaxtour.tracing.step_through,
        jaxtour.cost.profile,
    ],
    ids=lambda lens: lens.__name__,
)
def test_a_string_where_jax_jit_wants_an_array_is_named(lens):
    def double(x):
        return x * 2

    with pytest.raises(TypeError, match="at path x"):
        jax.jit(double)("abc")  # the oracle: jax.jit refuses it too
    who = lens.__name__
    with pytest.raises(TypeError) as err:
        lens(double)("abc")
    said = str(err.value)
    assert said.startswith(
        f"{who} cannot trace x (argument 0): it is 'abc' (str), and the lenses trace "
        "arrays and numbers, as jax.jit does. Held as a constant, it made tracing double "
        "fail (function double at "
    )
    assert said.endswith(
        "returned a value of type <class 'str'>, which is not a valid JAX type). Pass a "
        f"jnp.array, or name it in static_argnums= so {who} treats it as a constant, as "
        "jax.jit would."
    )


def test_a_keyword_object_is_named_with_static_argnames():
    def scaled(x, *, by):
        return x * by

    with pytest.raises(TypeError) as err:
        jaxtour.viz.draw_jaxpr(scaled)(1.0, by=object())
    assert str(err.value).startswith(
        "draw_jaxpr cannot trace by (a keyword argument): it is <object object at "
    )
    assert str(err.value).endswith(
        "Pass a jnp.array, or name it in static_argnames= so draw_jaxpr treats it as a "
        "constant, as jax.jit would."
    )
    # a string f uses as a constant still traces, as eqx.filter_jit holds it
    diagram = jaxtour.viz.draw_jaxpr(lambda x, s: x * len(s))(1.0, "abc")
    assert diagram.title == "jaxpr of <lambda>: 1 equation"
