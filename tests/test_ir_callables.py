"""What `f` may be and what it may take: a callable pytree as `f` (an Equinox module, an
object holding arrays whose hash fails), and a string where jax.jit wants an array."""

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import jaxtour.autodiff
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
    # an MLP is a pytree: its arrays are inputs, as eqx.filter_jit traces them; a
    # Scaled is not (JAX cannot flatten it): its arrays are constants closed over
    pytree = name == "MLP"
    arrays, rest = eqx.partition(f, eqx.is_array)  # as eqx.filter_jit splits f
    apply = lambda a, x: eqx.combine(a, rest)(x)
    oracle = jax.make_jaxpr(apply)(arrays, x) if pytree else jax.make_jaxpr(f)(x)
    n = _ir.count_eqns(oracle.jaxpr)
    assert jaxtour.viz.draw_jaxpr(f)(x).title == f"jaxpr of {name}: {n} equations"
    steps = jaxtour.tracing.step_through(f)(x)
    assert jnp.allclose(steps.outputs, f(x)) and len(steps) > 0
    assert not jaxtour.tracing.find_nans(f)(x).found
    table = jaxtour.cost.cost_table(f)(x)
    wrapped = (  # the same program, as jax.jit would trace it
        jaxtour.cost.cost_table(lambda m, x: m(x))(f, x)
        if pytree
        else jaxtour.cost.cost_table(lambda x: f(x))(x)
    )
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
        "returned a value of type <class 'str'>, which is not a valid JAX type). Pass an "
        "array or a number there, or keep it out of what double computes with JAX (a "
        "value used only in Python, a mode string compared with ==, is held and traces)."
    )


def test_a_held_string_is_not_blamed_for_another_fault():
    """The string is used in Python only; the fault is JAX's string index."""

    def f(x, mode):
        y = jnp.sin(x) if mode == "sin" else jnp.cos(x)
        return y + jnp.ones(3)[None, :, "a"]

    with pytest.raises(TypeError, match="string indexing") as err:
        jaxtour.viz.draw_jaxpr(f)(jnp.ones(3), "sin")
    assert "cannot trace mode" not in str(err.value)


def test_a_keyword_object_is_named_with_static_argnames():
    def scaled(x, *, by):
        return x * by

    with pytest.raises(TypeError) as err:
        jaxtour.viz.draw_jaxpr(scaled)(1.0, by=object())
    assert str(err.value).startswith(
        "draw_jaxpr cannot trace by (a keyword argument): it is <object object at "
    )
    assert str(err.value).endswith(
        "Pass an array or a number there, or keep it out of what scaled computes with "
        "JAX (a value used only in Python, a mode string compared with ==, is held and "
        "traces)."
    )
    # a string f uses as a constant still traces, as eqx.filter_jit holds it
    diagram = jaxtour.viz.draw_jaxpr(lambda x, s: x * len(s))(1.0, "abc")
    assert diagram.title == "jaxpr of <lambda>: 1 equation"


class Normed(eqx.Module):
    """The reviewer's module: work on the weight alone, which XLA would fold away
    were the weight a constant of the program."""

    w: jax.Array

    def __call__(self, x):
        w = self.w / jnp.linalg.norm(self.w, axis=0, keepdims=True)
        w = jnp.exp(w) @ jnp.exp(w).T
        return w @ x


def _compiles():
    """A list that grows by one per XLA compilation from now on."""
    seen = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, _, **__: (
            seen.append(event) if "backend_compile" in event else None
        )
    )
    return seen


def _hlo_flops(module):
    return sum(count.flops or 0.0 for _, count in _ir.hlo_counts(module, {}))


@pytest.fixture(scope="module")
def normed():
    return Normed(jax.random.normal(jax.random.key(0), (64, 64))), jnp.ones(64)


def test_a_modules_weights_are_traced_as_inputs_not_folded(normed):
    m, x = normed
    oracle = jaxtour.cost.cost_table(lambda m, x: m(x))(m, x)  # as eqx.filter_jit
    table = jaxtour.cost.cost_table(m)(x)
    assert table.flops == oracle.flops > 2 * 64**3  # the 64x64 @ 64x64 product
    assert str(table).splitlines()[1:] == str(oracle).splitlines()[1:]
    assert str(table).splitlines()[0] == "Cost of Normed on cpu"
    roof = jaxtour.cost.draw_roofline(m)(x)
    assert roof.table.flops == oracle.flops
    profiled = jaxtour.cost.profile(m, calls=2)(x)
    told = jaxtour.cost.profile(lambda m, x: m(x), calls=2)(m, x)
    assert _hlo_flops(profiled.module) == _hlo_flops(told.module) == oracle.flops


def _summed(m, x):
    return jnp.sum(m(x))


class Summed(eqx.Module):
    normed: Normed
    reduce: object = jnp.sum  # no array: held, as eqx.filter_jit holds it

    def __call__(self, x):
        return self.reduce(self.normed(x))


@pytest.mark.parametrize("kind", ["Partial", "Module"])
def test_grad_memory_traces_a_models_weights_as_inputs_not_folded(normed, kind):
    m, x = normed
    f = jax.tree_util.Partial(_summed, m) if kind == "Partial" else Summed(m)
    # the oracle: the model an argument jax.grad does not differentiate, by hand.
    # Closed over, XLA folds the whole gradient (sum(W' x) -> W'^T 1): 0 FLOPs, 0 B
    compiled = jax.jit(jax.grad(_summed, argnums=1)).lower(m, x).compile()
    oracle = _ir.cost_summary(compiled)
    got = jaxtour.cost.grad_memory(f, policies=["no checkpoint"])(x).policies[0]
    assert got.compiled_flops == oracle["flops"] > 2 * 64**3
    assert got.temp_bytes == compiled.memory_analysis().temp_size_in_bytes > 0
    told = jaxtour.cost.grad_memory(_summed, argnums=1, policies=["no checkpoint"])
    assert got == told(m, x).policies[0]
    assert got.residual_bytes == 64 * 64 * 4  # W', which the backward pass reads


def test_a_modules_weights_are_the_jaxprs_inputs(normed):
    m, x = normed
    oracle = jax.make_jaxpr(lambda m, x: m(x))(m, x)
    assert jaxtour.viz.draw_jaxpr(m)(x).title.startswith("jaxpr of Normed: ")
    closed = _ir.unwrap_jit(_trace(m, x).jaxpr)
    assert len(closed.jaxpr.invars) == len(oracle.jaxpr.invars) == 2
    assert len(closed.consts) == len(oracle.consts) == 0
    steps = jaxtour.tracing.step_through(m)(x)
    assert steps.arg_names == ("Normed.w", "x")
    assert jnp.allclose(steps.outputs, m(x))


def _trace(f, *args, **options):
    return _ir.trace(f, args, {}, who="test", **options)


def test_a_static_argument_after_a_model_keeps_its_position_and_name():
    mlp = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.key(0))

    class Times(eqx.Module):
        mlp: eqx.nn.MLP

        def __call__(self, x, n):
            return self.mlp(x) * len(n)

    x, model = jnp.ones(4), Times(mlp)
    for options in ({"static_argnums": 1}, {"static_argnums": -1}):
        traced = _trace(model, x, "abc", **options)
        assert len(traced.jaxpr.jaxpr.invars) == 6 + 1  # three layers' w and b, x
    traced, part = _ir.trace_split(model, (x,), {"n": "ab"}, "t", None, "n")
    assert len(traced.jaxpr.jaxpr.invars) == 7
    dynamic, dynamic_kw = part.dynamic()
    assert jnp.allclose(traced.lower().compile()(*dynamic, **dynamic_kw), 2 * mlp(x))
    with pytest.raises(TypeError) as err:
        jaxtour.viz.draw_jaxpr(model)(x, object())
    assert str(err.value).startswith("draw_jaxpr cannot trace n (argument 1): it is ")


def test_a_second_call_compiles_nothing(normed):
    m, x = normed
    lenses = [
        jaxtour.cost.cost_table,
        jaxtour.viz.draw_hlo,
        jaxtour.cost.draw_roofline,
        jaxtour.tracing.find_nans,
    ]
    for lens in lenses:
        lens(m)(x)
    seen = _compiles()
    for lens in lenses:
        lens(m)(x)
    assert seen == []


@pytest.mark.parametrize("kind", ["Partial", "Module"])
def test_mode_costs_traces_a_models_weights_as_inputs_not_folded(kind):
    m = Normed(jax.random.normal(jax.random.key(0), (16, 16)))
    f = jax.tree_util.Partial(_summed, m) if kind == "Partial" else Summed(m)
    x = jnp.linspace(-1.0, 1.0, 16, dtype=jnp.float32)
    costs = jaxtour.autodiff.mode_costs(lambda n, k: f, sizes=[(16, 1)], repeats=1)
    for mode, jac in {"jacfwd": jax.jacfwd, "jacrev": jax.jacrev}.items():
        # the oracle: the model an argument the Jacobian does not differentiate.
        # Closed over, XLA folds the work on W alone, or all of it (W'^T 1)
        compiled = jax.jit(jac(_summed, argnums=1)).lower(m, x).compile()
        oracle = _ir.cost_summary(compiled)["flops"]
        assert costs.cost(16, 1, mode) == oracle > 2 * 16**3
