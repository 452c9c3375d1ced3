"""The explorer driven from Python: every control gives what the library call gives.

The oracle for each view is the library's own call (`draw_jaxpr`, `draw_grad`, ...) or
JAX's (`jax.make_jaxpr`, `lower().as_text()`) on a transformation built here by hand
with `jax.grad`, `jax.jvp`, `jax.vmap` and `jax.jit`.
"""

import ast
import functools
import re

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

from jaxtour import _ir, autodiff, explore
from jaxtour.explorer import _gallery, _html
from jaxtour.explorer._compose import Transforms, stack
from jaxtour.viz import draw_hlo, draw_jaxpr

cubic, sum_of_squares = _gallery.cubic, _gallery.sum_of_squares
XS = jnp.arange(1.0, 5.0)


@pytest.fixture
def panel():
    return explore(cubic, 1.0)


def _svg_of(diagram) -> str:
    return _html.svg_body(diagram.svg())


def test_it_opens_on_draw_jaxpr_with_its_defaults(panel):
    expected = draw_jaxpr(cubic)(1.0)
    assert panel.shown.result.source == expected.source
    assert panel.shown.result.title == "jaxpr of cubic: 7 equations"
    assert _svg_of(expected) in panel.output.value
    assert (
        panel.shown.code
        == "draw_jaxpr(cubic, max_depth=2, group_by='auto', rankdir='TB')(*args)"
    )


@pytest.mark.parametrize(
    ("control", "value", "oracle"),
    [
        ("rankdir", "LR", lambda: draw_jaxpr(cubic, rankdir="LR")(1.0)),
        ("group", True, lambda: draw_jaxpr(cubic, group_by="source")(1.0)),
        ("grad", True, lambda: draw_jaxpr(jax.grad(cubic))(1.0)),
        ("vmap", True, lambda: draw_jaxpr(jax.vmap(cubic))(jnp.full(3, 1.0))),
        ("example", "tanh", lambda: draw_jaxpr(_gallery.tanh)(0.5)),
    ],
)
def test_each_control_draws_what_draw_jaxpr_draws(panel, control, value, oracle):
    before = panel.output.value
    getattr(panel, control).value = value
    expected = oracle()
    assert panel.shown.result.source == expected.source
    assert _svg_of(expected) in panel.output.value
    assert panel.output.value != before


def test_jvp_draws_the_jaxpr_of_jax_jvp_with_ones_as_tangent(panel):
    @functools.wraps(cubic)
    def pushforward(x):
        return jax.jvp(cubic, (x,), (jnp.ones_like(x),))

    panel.jvp.value = True
    assert panel.shown.result.source == draw_jaxpr(pushforward)(1.0).source
    assert panel.shown.result.title == "jaxpr of cubic: 16 equations"


def test_depth_and_the_vmap_axis_on_a_scan():
    panel = explore(sum_of_squares, XS)
    panel.depth.value = 0
    assert (
        panel.shown.result.source == draw_jaxpr(sum_of_squares, max_depth=0)(XS).source
    )
    assert panel.shown.result.counts < draw_jaxpr(sum_of_squares)(XS).counts
    panel.depth.value = 2
    panel.vmap.value = True
    panel.axis.value = 1
    batch = jnp.stack([XS] * 3, axis=1)  # f32[4, 3]: mapped over its second axis
    expected = draw_jaxpr(jax.vmap(sum_of_squares, in_axes=1))(batch)
    assert panel.shown.result.source == expected.source
    assert panel.shown.code.startswith("draw_jaxpr(vmap(sum_of_squares, in_axes=1)")


def test_jit_shows_in_the_jaxpr_text(panel):
    panel.view.value = "jaxpr text"
    assert panel.shown.result.body == str(jax.make_jaxpr(cubic)(1.0))
    panel.jit.value = True
    text = panel.shown.result.body
    assert text == str(jax.make_jaxpr(jax.jit(cubic))(1.0))
    assert _ir.primitive_counts(jax.make_jaxpr(jax.jit(cubic))(1.0).jaxpr)["jit"] == 1
    assert "jit" in text and "jit" not in str(jax.make_jaxpr(cubic)(1.0))


def test_stablehlo_view_is_what_jax_lowers(panel):
    panel.grad.value = True
    panel.view.value = "StableHLO text"
    assert panel.shown.result.body == jax.jit(jax.grad(cubic)).lower(1.0).as_text()
    assert "stablehlo.multiply" in panel.output.value


def test_autodiff_view_picks_draw_grad_draw_vjp_or_draw_jvp(panel):
    panel.view.value = "autodiff graph"
    assert panel.shown.result.source == autodiff.draw_grad(cubic)(1.0).source
    panel.vmap.value = True  # vmap(cubic) returns a vector: reverse mode is a VJP
    batch = jnp.full(3, 1.0)
    assert panel.shown.result.source == autodiff.draw_vjp(jax.vmap(cubic))(batch).source
    panel.vmap.value = False
    panel.jvp.value = True
    panel.rankdir.value = "LR"
    expected = autodiff.draw_jvp(cubic, rankdir="LR")((1.0,), (1.0,))
    assert panel.shown.result.source == expected.source


def test_cost_and_memory_are_xlas_own_figures(panel):
    panel.view.value = "cost and memory"
    compiled = jax.jit(cubic).lower(1.0).compile()
    figures = _ir.cost_summary(compiled)
    rows = dict(panel.shown.result.rows)
    assert len(rows) == len(figures) > 0
    if "flops" in figures:
        assert rows["floating-point operations"] == f"{figures['flops']:,.0f}"
    assert "<table" in panel.output.value


def test_cost_view_is_the_ledger(panel):
    from jaxtour.cost import cost_table

    panel.view.value = "cost"
    expected = cost_table(cubic)(1.0)
    assert repr(panel.shown.result) == repr(expected)
    assert panel.shown.code == "cost_table(cubic)(*args)"
    assert "<table " in panel.output.value and "FLOP/B" in panel.output.value


def test_time_view_is_the_profile_drawn(panel):
    panel.view.value = "time"
    drawn = panel.shown.result
    assert drawn.title.startswith("Where the time went: cubic on ")
    assert panel.shown.code == "profile(cubic)(*args).draw(rankdir='TB')"
    assert drawn.counts[0] >= 1
    assert panel.depth.disabled and not panel.rankdir.disabled


def test_options_a_view_does_not_read_are_disabled_and_do_not_redraw(panel):
    panel.view.value = "jaxpr text"
    assert panel.depth.disabled and panel.group.disabled and panel.rankdir.disabled
    renders = panel.renders
    panel.rankdir.value = "LR"
    assert panel.renders == renders
    panel.view.value = "jaxpr graph"
    assert not panel.rankdir.disabled and panel.axis.disabled
    panel.vmap.value = True
    assert not panel.axis.disabled


def test_going_back_to_a_combination_comes_from_the_cache(panel):
    first = panel.output.value
    panel.grad.value = True
    renders = panel.renders
    panel.grad.value = False
    assert panel.renders == renders
    assert panel.output.value == first
    assert "from cache" in panel.status.value


# --- bad combinations: a message in the panel, not a traceback -----------------------------


def test_grad_of_a_vector_valued_function_explains_itself_in_the_panel():
    panel = explore(jnp.tanh, jnp.linspace(-1.0, 1.0, 5))
    panel.grad.value = True
    problem = panel.shown
    assert isinstance(problem, _html.Problem)
    # JAX's own words change between releases (0.12 added a hint): check the kind of error
    # and the facts it must carry, not the whole sentence.
    assert problem.message.startswith("TypeError: ")
    assert "scalar" in problem.message and "(5,)" in problem.message
    assert "tick jvp" in problem.hint
    assert 'class="jaxtour-problem"' in panel.output.value
    assert "Traceback" not in panel.output.value
    panel.grad.value = False
    panel.jvp.value = True  # forward mode takes any output: a picture again
    xs = jnp.linspace(-1.0, 1.0, 5)
    expected = draw_jaxpr(
        functools.wraps(jnp.tanh)(
            lambda x: jax.jvp(jnp.tanh, (x,), (jnp.ones_like(x),))
        )
    )(xs)
    # Tooltips name the line that called jax.jvp, so compare title and structure.
    assert panel.shown.result.title == expected.title
    assert panel.shown.result.counts == expected.counts


def test_grad_of_the_integer_factorial_says_to_pass_a_float():
    panel = explore()
    panel.example.value = "factorial loop"
    assert panel.shown.result.title.startswith("jaxpr of factorial")
    panel.grad.value = True
    assert panel.shown.message.startswith(
        "TypeError: grad requires real- or complex-valued"
    )
    assert "pass floats" in panel.shown.hint


def _noisy(key, x):
    return jnp.sum(x * jax.random.normal(key, x.shape))


def test_grad_with_a_key_first_says_to_put_the_key_last_not_to_pass_floats():
    panel = explore(_noisy, jax.random.key(0), XS)
    panel.view.value = "autodiff graph"
    for grad in (False, True):
        panel.grad.value = grad
        assert isinstance(panel.shown, _html.Problem)
        assert panel.shown.hint == (
            "grad (and the autodiff graph's reverse mode) differentiates with respect to "
            "the first argument, and here it is a PRNG key, which has no derivative: "
            "explore a function that takes the key last, explore(lambda x, key: f(key, "
            "x), x, key), or tick jvp instead of grad (keys get no tangent)."
        )
    # what the hint offers draws: the key last, or jvp
    last = explore(lambda x, key: _noisy(key, x), XS, jax.random.key(0))
    last.grad.value = True
    panel.grad.value, panel.jvp.value = False, True
    assert not isinstance(last.shown, _html.Problem)
    assert not isinstance(panel.shown, _html.Problem)


def test_a_shape_without_values_draws_the_program_and_says_what_needs_values():
    # jax.jit traces a ShapeDtypeStruct; the views that run f need values
    panel = explore(cubic, jax.ShapeDtypeStruct((), jnp.float32))
    assert panel.shown.result.title == draw_jaxpr(cubic)(1.0).title
    hint = (
        "This view runs the function on the example's values (as vmap's batch is made "
        "of them), and a jax.ShapeDtypeStruct is a shape with no values: pass an array "
        "(jnp.zeros(shape, dtype)), or pick a view that reads the program alone (jaxpr, "
        "StableHLO, compiled HLO, cost)."
    )
    for view in ("step through", "time", "autodiff graph"):
        panel.view.value = view
        assert panel.shown.hint == hint, view
    panel.view.value = "jaxpr graph"
    panel.vmap.value = True
    assert panel.shown.hint == hint


def test_a_vmap_axis_beyond_the_arguments_is_explained(panel):
    panel.vmap.value = True
    panel.axis.value = 2
    assert panel.shown.message == (
        "ValueError: vmap over axis 2 does not fit args[0], which has 0 dimensions: the "
        "batch axis can be 0 to 0. Choose a smaller axis, or axis 0."
    )


# --- bad input: the library's own errors, before any widget ---------------------------------


def test_a_non_callable_gets_the_library_error():
    with pytest.raises(TypeError) as library:
        draw_jaxpr(3)
    with pytest.raises(TypeError) as ours:
        explore(3, 1.0)
    assert str(ours.value) == str(library.value).replace("draw_jaxpr", "explore")
    assert "explore(loss, params, batch)" in "".join(ours.value.__notes__)


def test_an_untraceable_argument_is_refused_by_name():
    # The explorer's views run jax.vmap and jax.grad on the arguments themselves, so
    # (unlike the drawing lenses, which hold such a leaf fixed) it refuses one.
    with pytest.raises(TypeError) as ours:
        explore(cubic, "one")
    assert str(ours.value).startswith("explore cannot trace args[0]: it is 'one' (str)")


def test_a_model_s_function_is_refused_with_the_split_that_explores_it():
    """Issue: a model holding a function (an Equinox MLP's activation) was refused
    with advice to pass it by keyword; the note gives the split that works."""
    import equinox as eqx

    mlp = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.key(0))

    def loss(m, x):
        return (m(x) ** 2).sum()

    with pytest.raises(TypeError) as ours:
        explore(loss, mlp, jnp.ones(4))
    assert str(ours.value).startswith("explore cannot trace args[0].activation")
    notes = "".join(ours.value.__notes__)
    assert "params, static = eqx.partition(model, eqx.is_array)" in notes
    params, static = eqx.partition(mlp, eqx.is_array)  # the note's recipe, followed
    panel = explore(lambda p, x: loss(eqx.combine(p, static), x), params, jnp.ones(4))
    panel.grad.value = True
    assert panel.shown.result.title.startswith("jaxpr of grad of")


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="a LAPACK call on a CPU")
def test_the_cost_view_says_what_xla_did_not_count():
    # a cholesky's 64 square roots are in a LAPACK call XLA counts nothing of
    panel = explore(jnp.linalg.cholesky, 2.0 * jnp.eye(64))
    panel.view.value = "cost and memory"
    compiled = jax.jit(jnp.linalg.cholesky).lower(2.0 * jnp.eye(64)).compile()
    flops = compiled.cost_analysis()["flops"]
    rows = dict(panel.shown.result.rows)
    assert rows["floating-point operations"] == f"at least {flops:,.0f}"
    assert rows["transcendental functions (exp, tanh, ...)"] == "not counted"
    assert rows["bytes read and written"].startswith("at least ")
    assert rows["left out"].startswith(
        "XLA counts no FLOPs, transcendentals or bytes of the library call cholesky."
    )


def _printed(x):
    jax.debug.print("{}", x)  # no arithmetic: the figures stay exact
    return jnp.exp(x) @ x


def test_the_cost_view_of_a_debug_print_is_exact():
    panel = explore(_printed, jnp.ones((64, 64)))
    panel.view.value = "cost and memory"
    rows = dict(panel.shown.result.rows)
    assert rows["floating-point operations"] == f"{2 * 64**3:,}"
    assert rows["transcendental functions (exp, tanh, ...)"] == f"{64 * 64:,}"
    assert rows["left out"].startswith("host callback debug_print.")
    assert rows["left out"].endswith(
        ": its Python work, and the bytes sent to the host, are not counted"
    )


class Normed(eqx.Module):
    """The reviewer's model: work on its weight alone, which XLA would fold away were
    the weight a constant; its activation is held, not traced."""

    w: jax.Array
    act: object = jnp.tanh

    def __call__(self, x):
        return self.act(_normed(self.w) @ x).sum()


def _normed(w):
    w = w / jnp.linalg.norm(w, axis=0, keepdims=True)
    return jnp.exp(w) @ jnp.exp(w).T


def _total(w, x):
    return jnp.tanh(_normed(w) @ x).sum()


# each toggle built by hand with the weight an input, as eqx.filter_jit traces it
_BY_HAND = {
    "grad": (jax.grad(_total, argnums=1), XS),
    "jvp": (
        lambda w, x: jax.jvp(lambda x: _total(w, x), (x,), (jnp.ones_like(x),)),
        XS,
    ),
    "vmap": (jax.vmap(_total, in_axes=(None, 0)), jnp.stack([XS] * 3)),
    "jit": (jax.jit(_total), XS),
}


@pytest.mark.parametrize("toggle", _BY_HAND)
def test_a_models_weights_stay_inputs_under_each_toggle(toggle):
    w = jax.random.normal(jax.random.key(0), (4, 4))
    panel = explore(Normed(w), XS)
    getattr(panel, toggle).value = True
    fn, x = _BY_HAND[toggle]
    oracle = jax.jit(fn).lower(w, x).compile().cost_analysis()
    panel.view.value = "cost and memory"
    rows = dict(panel.shown.result.rows)
    assert rows["floating-point operations"] == f"{oracle['flops']:,.0f}"
    panel.view.value = "jaxpr text"
    jaxpr = jax.make_jaxpr(fn)(w, x)
    assert panel.shown.result.title.endswith(f": {len(jaxpr.eqns)} top-level equations")
    # w an input, not a constant
    assert panel.shown.result.body.split("\n")[0] == str(jaxpr).split("\n")[0]
    panel.view.value = "compiled HLO"
    by_hand = draw_hlo(fn, stage="compiled", max_depth=2)(w, x)
    assert panel.shown.result.counts == by_hand.counts


def _paste(code, scope):
    # the shown lines run as a notebook cell runs them: the last one's value comes back
    *setup, last = ast.parse(code).body
    exec(compile(ast.Module(setup, type_ignores=[]), "<cell>", "exec"), scope)
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), scope)


@pytest.mark.parametrize("kind", ["equinox", "Partial"])
@pytest.mark.parametrize("toggle", [None, *_BY_HAND])
def test_a_models_code_lines_paste_to_what_the_view_shows(toggle, kind):
    """grad(Normed) closes over the weight (XLA folds its work away) and
    jax.jit(Normed) does not run: the lines pass the weight as an input, as the view."""
    from jax import grad, jit, vmap

    w = jax.random.normal(jax.random.key(0), (4, 4))
    model = Normed(w) if kind == "equinox" else jax.tree_util.Partial(_total, w)
    panel = explore(model, XS)
    if toggle:
        getattr(panel, toggle).value = True
    scope = {"jax": jax, "jnp": jnp, "eqx": eqx, "partial": functools.partial}
    scope |= {"grad": grad, "jit": jit, "vmap": vmap, "args": (XS,)}
    scope |= {"Normed": model, "f": model}
    panel.view.value = "cost and memory"
    flops = _paste(panel.shown.code, dict(scope))["flops"]
    rows = dict(panel.shown.result.rows)
    assert rows["floating-point operations"] == f"{flops:,.0f}", panel.shown.code
    panel.view.value = "jaxpr text"
    jaxpr = _paste(panel.shown.code, dict(scope))
    assert panel.shown.result.body.split("\n")[0] == str(jaxpr).split("\n")[0]
    panel.view.value = "StableHLO text"  # main's signature: the weight an argument
    pasted = _paste(panel.shown.code, dict(scope)).split("\n")[1]
    assert pasted == panel.shown.result.body.split("\n")[1]


class _ScaledNormed(eqx.Module):
    w: jax.Array
    act: object = jnp.tanh

    def __call__(self, x, scale=1.0):
        return self.act(_normed(self.w) @ x * scale).sum()


def _scaled_total(w, x, scale=1.0):
    return jnp.tanh(_normed(w) @ x * scale).sum()


@pytest.mark.parametrize("kind", ["equinox", "Partial"])
@pytest.mark.parametrize("toggle", [None, "grad", "jit"])
def test_a_model_with_keyword_arguments_keeps_its_arrays_inputs(toggle, kind):
    """partial(model, scale=2.0) is no pytree: its weight would be a constant. The
    keyword is held inside apply, the weight an input, and the lines paste alike."""
    from jax import grad, jit, vmap

    w = jax.random.normal(jax.random.key(0), (4, 4))
    scaled = jax.tree_util.Partial(_scaled_total, w)
    model = _ScaledNormed(w) if kind == "equinox" else scaled
    panel = explore(model, XS, scale=2.0)
    if toggle:
        getattr(panel, toggle).value = True
    scope = {"jax": jax, "jnp": jnp, "eqx": eqx, "partial": functools.partial}
    scope |= {"grad": grad, "jit": jit, "vmap": vmap, "args": (XS,)}
    scope |= {"_ScaledNormed": model, "_scaled_total": model, "f": model}
    scope |= {"kwargs": {"scale": 2.0}}
    panel.view.value = "jaxpr text"
    body = panel.shown.result.body
    assert body.split("\n")[0] == "{ lambda ; a:f32[4,4] b:f32[4]. let", body
    jaxpr = _paste(panel.shown.code, dict(scope))
    assert body.split("\n")[0] == str(jaxpr).split("\n")[0], panel.shown.code
    assert len(body.split("\n")) == len(str(jaxpr).split("\n"))  # jit's name aside
    panel.view.value = "cost and memory"
    flops = _paste(panel.shown.code, dict(scope))["flops"]
    rows = dict(panel.shown.result.rows)
    assert rows["floating-point operations"] == f"{flops:,.0f}", panel.shown.code
    panel.view.value = "StableHLO text"  # main's signature: the weight an argument
    pasted = _paste(panel.shown.code, dict(scope)).split("\n")[1]
    assert pasted == panel.shown.result.body.split("\n")[1]


def test_a_function_that_fails_on_its_arguments_fails_at_once():
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions"):
        explore(lambda a, b: a @ b, jnp.ones((2, 3)), jnp.ones((2, 3)))


def test_a_function_without_its_example_arguments_is_named_with_the_call_to_write():
    with pytest.raises(TypeError) as ours:
        explore(cubic)
    assert str(ours.value) == (
        "explore: cubic(x) cannot be called with the 0 example argument(s) given "
        "(missing a required argument: 'x'). explore takes them right after the "
        "function, in one call: explore(cubic, x), not explore(cubic)(x) as the drawing "
        "functions take them."
    )


def _doubled(x, n):
    for _ in range(n):  # n must be a Python int
        x = x * 2.0
    return jnp.sum(x)


def test_a_positional_argument_f_needs_concrete_says_to_pass_it_by_keyword():
    with pytest.raises(jax.errors.TracerIntegerConversionError) as err:
        explore(_doubled, XS, 3)
    assert err.value.__notes__[-1] == (
        "explore traces every positional argument, as jax.jit does without "
        "static_argnums. If _doubled needs one as a Python value (a loop count, a shape, "
        "a flag), pass it by keyword, held fixed as static_argnames holds it: "
        "explore(_doubled, x, n=3). If it branches on an array's value, use jax.lax.cond "
        "or jnp.where."
    )
    assert (
        explore(_doubled, XS, n=3).shown.result.title
        == "jaxpr of _doubled: 4 equations"
    )


def test_a_jitted_functions_positional_static_under_a_transformation_says_pass_it_by_keyword():
    jitted = jax.jit(_doubled, static_argnums=1)
    panel = explore(jitted, XS, 3)
    assert not isinstance(panel.shown, _html.Problem)  # traced with jit's own statics
    panel.grad.value = True  # grad(jitted) traces n: jit meets a tracer where it hashes
    assert panel.shown.hint == (
        "Your function's own jax.jit holds an argument static (static_argnums), and this "
        "transformation passes it a traced value: pass that argument to explore by "
        "keyword, explore(f, x, n=3), and it is held fixed outside every transformation."
    )
    held = explore(jitted, XS, n=3)  # what the hint says: jit reads n=3 as static
    held.grad.value = True
    assert not isinstance(held.shown, _html.Problem)


def test_every_view_of_a_jitted_function_with_a_positional_static_shows():
    """The jaxpr text made jax.make_jaxpr(f)(x, 3), which passes `n` a tracer; it is
    told f's own static_argnums now, and the code shown says so."""
    from jaxtour.explorer._views import VIEWS

    panel = explore(jax.jit(_doubled, static_argnums=1), XS, 3)
    for name in VIEWS:
        panel.view.value = name
        assert not isinstance(panel.shown, _html.Problem), (name, panel.shown)
    panel.view.value = "jaxpr text"
    assert panel.shown.code == "jax.make_jaxpr(_doubled, static_argnums=(1,))(*args)"


def test_arguments_without_a_function_are_refused():
    with pytest.raises(
        TypeError, match="explore got example arguments but no function"
    ):
        explore(None, 1.0)


# --- composition ----------------------------------------------------------------------------


def test_transforms_describe_the_composition_in_jax_order():
    assert Transforms().describe("f") == "f"
    assert (
        Transforms(jit=True, grad=True, jvp=True, vmap=1).describe("loss")
        == "jit(vmap(jvp(grad(loss)), in_axes=1))"
    )


def test_stack_builds_the_batch_vmap_maps_over():
    (xs,), (tree,) = stack((XS,), 1), stack(({"w": jnp.ones((2, 5))},), -1)
    assert xs.shape == (4, 3) and tree["w"].shape == (2, 5, 3)
    assert jnp.array_equal(xs[:, 2], XS)
    with pytest.raises(
        ValueError, match=r"vmap over axis 2 does not fit args\[0\]\['w'\]"
    ):
        stack(({"w": XS},), 2)


def test_keyword_arguments_are_held_fixed():
    power = lambda x, *, n: x**n
    panel = explore(power, 2.0, n=3)
    panel.grad.value = True
    expected = draw_jaxpr(jax.grad(functools.partial(power, n=3)))(2.0)
    assert (
        panel.shown.result.title
        == expected.title
        == "jaxpr of grad of <lambda>: 4 equations"
    )
    assert panel.shown.result.counts == expected.counts
    assert panel.shown.code.startswith("draw_jaxpr(grad(partial(f, n=3))")


def _repeated(x, *, times, kind):
    for _ in range(times):  # static: a Python loop over a Python int
        x = getattr(jnp, kind)(x)
    return x


def _run_shown_code(panel, example_args, example_kwargs):
    # The shown line, pasted where the user's function, args and kwargs are in scope.
    from jax import grad, jit, vmap

    from jaxtour.autodiff import draw_grad, draw_jvp, draw_vjp

    scope = {"jax": jax, "jnp": jnp, "partial": functools.partial, "grad": grad}
    scope |= {"jit": jit, "vmap": vmap, "draw_jaxpr": draw_jaxpr}
    scope |= {"draw_grad": draw_grad, "draw_vjp": draw_vjp, "draw_jvp": draw_jvp}
    scope |= {"_repeated": _repeated}
    scope |= {"args": example_args, "kwargs": example_kwargs}
    return eval(panel.shown.code, scope)


@pytest.mark.parametrize("view", ["jaxpr graph", "autodiff graph", "jaxpr text"])
def test_the_vmap_code_line_runs_on_the_users_arguments_with_static_ones_held(view):
    panel = explore(_repeated, 0.5, times=3, kind="sin")
    panel.grad.value = True
    panel.vmap.value = True
    panel.view.value = view
    # the autodiff view draws reverse mode of vmap(f) itself: grad is its own
    held = "partial(_repeated, times=3, kind='sin')"
    assert f"vmap(grad({held}), in_axes=0)" in panel.shown.code or (
        view == "autodiff graph" and f"vmap({held}, in_axes=0)" in panel.shown.code
    )
    pasted = _run_shown_code(panel, (0.5,), {"times": 3, "kind": "sin"})
    if view == "jaxpr text":
        assert str(pasted) == panel.shown.result.body
    else:
        assert pasted.source == panel.shown.result.source
        assert pasted.title == panel.shown.result.title
    # what runs: three sines batched, the kind and count held out of vmap
    want = jax.vmap(jax.grad(lambda x: jnp.sin(jnp.sin(jnp.sin(x)))))(jnp.full(3, 0.5))
    got = jax.vmap(jax.grad(functools.partial(_repeated, times=3, kind="sin")))
    assert jnp.allclose(got(jnp.full(3, 0.5)), want)


def test_the_code_line_of_a_partial_holds_what_the_partial_holds():
    # `_repeated` alone would draw another program (or none): the line says the partial
    panel = explore(functools.partial(_repeated, times=3, kind="sin"), 0.5)
    panel.grad.value = True
    assert panel.shown.code.startswith(
        "draw_jaxpr(grad(partial(_repeated, times=3, kind='sin')), max_depth=2"
    )
    pasted = _run_shown_code(panel, (0.5,), {})
    assert pasted.source == panel.shown.result.source
    # a value Python cannot write is the user's own: the line names the function f
    held = explore(functools.partial(lambda x, w: x * w, w=jnp.ones(2)), 1.0)
    assert held.shown.code.startswith("draw_jaxpr(f, max_depth=2")


@pytest.mark.parametrize("vmap", [False, True])
def test_the_jvp_code_line_pastes_with_tangents_of_ones(vmap):
    panel = explore(_repeated, 0.5, times=2, kind="cos")
    panel.jvp.value = True
    panel.vmap.value = vmap
    panel.view.value = "autodiff graph"
    assert "jax.tree.map(jnp.ones_like, " in panel.shown.code, panel.shown.code
    pasted = _run_shown_code(panel, (0.5,), {"times": 2, "kind": "cos"})
    assert pasted.source == panel.shown.result.source
    assert pasted.title == panel.shown.result.title


# --- the gallery and the static fallback ----------------------------------------------------


@pytest.mark.parametrize(
    "name", [n for n in _gallery.GALLERY if not n.startswith("MLP")]
)
def test_every_gallery_example_draws_its_jaxpr(name):
    fn, args = _gallery.GALLERY[name].load()
    panel = explore()
    panel.example.value = name
    assert panel.shown.result.source == draw_jaxpr(fn)(*args).source


@pytest.mark.slow  # draws every view twice (test_explore_static draws them once)
def test_the_mime_bundle_holds_the_widget_every_view_and_the_svg(panel):
    from jaxtour.explorer._views import VIEWS

    bundle = panel._repr_mimebundle_()
    assert (
        bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == panel.model_id
    )
    assert bundle["image/svg+xml"] == draw_jaxpr(cubic)(1.0).svg()  # GitHub, decks
    static = bundle["text/html"]
    assert static.count("<section class='jt-view") == len(VIEWS)
    shown = re.findall(r"<section class='jt-view on'.*?</section>", static, re.S)
    assert len(shown) == 1 and _svg_of(draw_jaxpr(cubic)(1.0)) in shown[0]
    assert panel._repr_mimebundle_()["text/html"] is static  # drawn once
    panel.view.value = "jaxpr text"  # the view shown when displayed opens first
    again = panel._repr_mimebundle_()
    assert "image/svg+xml" not in again  # no picture: the deck shows the page
    shown = re.findall(
        r"<section class='jt-view on'.*?</section>", again["text/html"], re.S
    )
    assert len(shown) == 1 and 'class="jaxtour-text"' in shown[0]


# --- the XLA views --------------------------------------------------------------------------


def test_hlo_views_draw_what_draw_hlo_draws(panel):
    from jaxtour.viz import draw_hlo

    panel.grad.value = True
    panel.view.value = "compiled HLO"
    expected = draw_hlo(jax.grad(cubic), stage="compiled", max_depth=2)(1.0)
    assert panel.shown.result.title == expected.title
    assert panel.shown.result.counts == expected.counts
    panel.view.value = "StableHLO graph"
    panel.rankdir.value = "LR"
    expected = draw_hlo(jax.grad(cubic), stage="stablehlo", max_depth=2, rankdir="LR")(
        1.0
    )
    assert panel.shown.result.source == expected.source


def test_before_after_is_compare_stages(panel):
    from jaxtour.viz import compare_stages

    panel.view.value = "before/after XLA"
    comparison = panel.shown.result
    assert comparison.rows() == compare_stages(cubic)(1.0).rows()
    assert comparison.compiled_ops <= comparison.stablehlo_ops
    assert comparison._repr_html_() in panel.output.value


def test_compare_shows_what_grad_did_to_the_program(panel):
    panel.grad.value = True
    panel.view.value = "compare"
    d = panel.shown.result
    # oracle: the equations of each program, counted by primitive from JAX's own jaxprs
    plain = _ir.primitive_counts(jax.make_jaxpr(cubic)(1.0).jaxpr)
    graded = _ir.primitive_counts(jax.make_jaxpr(jax.grad(cubic))(1.0).jaxpr)
    assert d.jaxpr.added - d.jaxpr.removed == graded - plain
    assert d.jaxpr.removed - d.jaxpr.added == plain - graded
    assert d.names == ("cubic", "grad(cubic)")
    assert (
        panel.shown.code
        == "diff_calls(cubic, (args, {}), (args, {}), then=grad(cubic))"
    )


@pytest.mark.slow  # compiles the full MLP
def test_the_mlp_examples_load_from_jaxtour_mlp():
    from jaxtour import mlp

    panel = explore()
    panel.example.value = "MLP loss"
    params = mlp.init_params(jax.random.key(0))
    x, y = mlp.example_batch(8)
    assert panel.shown.result.source == draw_jaxpr(mlp.loss)(params, x, y).source
    panel.example.value = "MLP step"
    assert panel.shown.result.title == draw_jaxpr(mlp.update)(params, x, y).title


@pytest.mark.skipif(not hasattr(jax, "ref"), reason="this JAX has no jax.ref")
def test_vmap_over_a_step_that_writes_refs_batches_the_refs():
    def step(state):
        state["w"][...] += 1.0
        return state["w"][...].sum()

    panel = explore(step, {"w": jax.ref.new_ref(jnp.ones(3))})
    panel.vmap.value = True
    assert not isinstance(panel.shown, _html.Problem), panel.shown
    batch = {"w": jax.ref.new_ref(jnp.ones((3, 3)))}  # 3 copies along axis 0
    expected = draw_jaxpr(jax.vmap(step))(batch)
    assert panel.shown.result.source == expected.source
    (stacked,) = stack(({"w": jax.ref.new_ref(jnp.arange(3.0))},), 1)
    assert isinstance(stacked["w"], jax.ref.Ref)
    assert jnp.array_equal(stacked["w"][...], jnp.stack([jnp.arange(3.0)] * 3, axis=1))


def _sines(x, n):
    return jnp.sum(jnp.sin(x) * n)


def _signature(jaxpr_text):
    return next(line for line in jaxpr_text.split("\n") if line.startswith("{ lambda"))


_JVP_WITH = [(), ("grad",), ("vmap",), ("jit",), ("grad", "vmap", "jit")]


@pytest.mark.parametrize("n", [2.0, 2], ids=["float", "int"])
@pytest.mark.parametrize("others", _JVP_WITH, ids=lambda t: "+".join(["jvp", *t]))
def test_a_functions_jvp_code_lines_paste_to_what_the_view_shows(others, n):
    """`jvp(f)` is no JAX (jax.jvp takes primals and tangents): each line writes the
    function the view traced, its tangents ones (float0 zeros at an integer `n`)."""
    import numpy as np
    from jax import grad, jit, vmap

    from jaxtour.viz import diff_calls

    panel = explore(_sines, XS, n)
    for toggle in ("jvp", *others):
        getattr(panel, toggle).value = True
    scope = {"jax": jax, "jnp": jnp, "np": np, "partial": functools.partial}
    scope |= {"grad": grad, "jit": jit, "vmap": vmap, "args": (XS, n)}
    scope |= {"_sines": _sines, "diff_calls": diff_calls}
    scope |= {"draw_jvp": autodiff.draw_jvp}
    panel.view.value = "cost and memory"
    flops = _paste(panel.shown.code, dict(scope))["flops"]
    rows = dict(panel.shown.result.rows)
    assert rows["floating-point operations"] == f"{flops:,.0f}", panel.shown.code
    panel.view.value = "jaxpr text"  # the signature (a jitted lambda is named apart)
    jaxpr = _paste(panel.shown.code, dict(scope))
    assert _signature(panel.shown.result.body) == _signature(str(jaxpr))
    assert panel.shown.result.title.endswith(f": {len(jaxpr.eqns)} top-level equations")
    panel.view.value = "StableHLO text"
    pasted = _paste(panel.shown.code, dict(scope)).split("\n")[1]
    assert pasted == panel.shown.result.body.split("\n")[1]
    panel.view.value = "compare"
    d = _paste(panel.shown.code, dict(scope))
    assert d.jaxpr.added == panel.shown.result.jaxpr.added, panel.shown.code
    assert d.jaxpr.removed == panel.shown.result.jaxpr.removed
    panel.view.value = "autodiff graph"
    drawn = _paste(panel.shown.code, dict(scope))
    assert drawn.source == panel.shown.result.source, panel.shown.code
