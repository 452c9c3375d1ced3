"""One reading of static arguments across every lens that takes a function.

`forward(params, x, cfg, n)` takes a static config (a frozen dataclass) and a static
loop count. Every lens is run with them named by position, by negative position and by
name; what it finds is checked against `jax.jit(forward, static_argnums=(2, 3))` /
`jax.grad` where the lens computes values, and against the same lens on `forward` with
`cfg` and `n` closed over (no static option at all) where it draws or counts. A bad
option gets the same words from every lens, and they name no file of the kit.
"""

import dataclasses
import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour import _ir, autodiff, cost, tracing, viz
from jaxtour.cost import Peaks

FAKE = Peaks("cpu:cpu", 50e9, 10e9)  # a fixed roof: nothing measured


@dataclasses.dataclass(frozen=True)
class Config:
    scale: float = 2.0
    activation: str = "tanh"


CFG, N = Config(), 2
PARAMS = {"w": jnp.linspace(-0.5, 0.5, 16, dtype=jnp.float32).reshape(4, 4)}
X = jnp.linspace(0.0, 1.0, 8, dtype=jnp.float32).reshape(2, 4)


def forward(params, x, cfg, n):
    h = x
    for _ in range(n):  # n must be a Python int: static
        h = getattr(jnp, cfg.activation)(h @ params["w"]) * cfg.scale
    return jnp.sum(h)


def closed(params, x):
    return forward(params, x, CFG, N)


closed.__name__ = "forward"  # the same titles as the lens on `forward`

SPELLINGS = {
    "position": {"static_argnums": (2, 3)},
    "negative": {"static_argnums": (-2, -1)},
    "keyword": {"static_argnames": ("cfg", "n")},
    "numpy": {
        "static_argnums": np.arange(2, 4)
    },  # jax.jit reads it with operator.index
}
ORACLE = jax.jit(forward, static_argnums=(2, 3))


def _leaves(tree):
    return [np.asarray(leaf) for leaf in jax.tree.leaves(tree)]


def _same(got, want):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _grad(opts):
    graph = autodiff.grad_graph(forward, **opts)(PARAMS, X, CFG, N)
    return graph.values_of("gradient"), _leaves(jax.grad(forward)(PARAMS, X, CFG, N))


def _vjp(opts):
    graph = autodiff.vjp_graph(forward, **opts)(PARAMS, X, CFG, N)
    _, pull = jax.vjp(closed, PARAMS, X)
    return graph.values_of("gradient"), _leaves(pull(jnp.float32(1.0)))


def _jvp(opts):
    tangents = (jax.tree.map(jnp.ones_like, PARAMS), jnp.ones_like(X))
    graph = autodiff.jvp_graph(forward, **opts)((PARAMS, X, CFG, N), tangents)
    _, want = jax.jvp(closed, (PARAMS, X), tangents)
    return graph.values_of("output")[-1:], [np.asarray(want)]


def _memory(f, opts, args=None):
    report = cost.grad_memory(f, policies=["nothing_saveable"], **opts)
    args = args or (PARAMS, X, *_rest(opts))
    return [(p.residuals, p.flops) for p in report(*args).policies]


# Lenses that compute values: (what the lens gives, the oracle's), from the options.
VALUES = {
    "draw_grad": _grad,
    "draw_vjp": _vjp,
    "draw_jvp": _jvp,
    "explain_retraces": lambda o: (
        tracing.explain_retraces(forward, **o)(PARAMS, X, CFG, N),
        ORACLE(PARAMS, X, CFG, N),
    ),
    "step_through": lambda o: (
        tracing.step_through(forward, **o)(PARAMS, X, CFG, N).outputs,
        ORACLE(PARAMS, X, CFG, N),
    ),
    "find_nans": lambda o: (
        tracing.find_nans(forward, **o)(PARAMS, X, CFG, N).steps.outputs,
        ORACLE(PARAMS, X, CFG, N),
    ),
}

# Lenses that draw or count: a summary, from the lens configured on (f, options).
SUMMARIES = {
    "draw_jaxpr": lambda f, o: viz.draw_jaxpr(f, **o)(PARAMS, X, *_rest(o)).title,
    "draw_hlo": lambda f, o: viz.draw_hlo(f, **o)(PARAMS, X, *_rest(o)).title,
    "compare_stages": lambda f, o: viz.compare_stages(f, **o)(
        PARAMS, X, *_rest(o)
    ).headline(),
    "draw_pipeline": lambda f, o: viz.draw_pipeline(f, **o)(PARAMS, X, *_rest(o)).title,
    "cost_table": lambda f, o: str(cost.cost_table(f, **o)(PARAMS, X, *_rest(o))),
    "fusion_traffic": lambda f, o: cost.fusion_traffic(f, **o)(
        PARAMS, X, *_rest(o)
    )._replace(name=""),
    "draw_roofline": lambda f, o: (
        cost.draw_roofline(f, peaks=FAKE, **o)(PARAMS, X, *_rest(o)).table.flops
    ),
    "profile": lambda f, o: sorted(
        row.op for row in cost.profile(f, calls=1, **o)(PARAMS, X, *_rest(o)).rows
    ),
    "grad_memory": _memory,
}


def _rest(opts: dict) -> tuple:
    return (CFG, N) if opts else ()


@functools.cache
def _closed_summary(lens: str):
    """The lens on the closed-over twin: computed once for the three spellings."""
    return SUMMARIES[lens](closed, {})


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("lens", [*VALUES, *SUMMARIES])
def test_every_lens_reads_static_arguments_as_jax_jit(lens, spelling):
    opts = SPELLINGS[spelling]
    if lens in VALUES:
        got, want = VALUES[lens](opts)
        _same(got, want)
    else:
        assert SUMMARIES[lens](forward, opts) == _closed_summary(lens)


NUMPY_ARGNUMS = {  # numpy argnums and the ints jax.grad reads them as
    "np.int64(1)": (np.int64(1), (1,)),
    "np ints": ((np.int32(0), np.int64(1)), (0, 1)),
    "np.arange(2)": (np.arange(2), (0, 1)),
}


@pytest.mark.parametrize("spelling", NUMPY_ARGNUMS)
def test_numpy_integer_argnums_are_read_as_jax_grad_reads_them(spelling):
    argnums, ints = NUMPY_ARGNUMS[spelling]
    statics = {"static_argnums": (2, 3)}
    graph = autodiff.grad_graph(forward, argnums=argnums, **statics)(PARAMS, X, CFG, N)
    _same(graph.values_of("gradient"), jax.grad(forward, argnums)(PARAMS, X, CFG, N))
    got = _memory(forward, {"argnums": argnums, **statics})
    assert got == _memory(forward, {"argnums": ints, **statics})


def test_grad_memory_takes_what_jax_grad_takes():
    """Issue 45: a Python int outside `argnums` is passed on as jax.grad passes it."""
    assert _memory(forward, {}, (PARAMS, X, CFG, N)) == _closed_summary("grad_memory")


def test_the_oracle_is_what_the_static_arguments_ask_for():
    """The closed-over twin and jit with static arguments agree (so either oracle)."""
    assert float(ORACLE(PARAMS, X, CFG, N)) == pytest.approx(float(closed(PARAMS, X)))
    counts = _ir.primitive_counts(ORACLE.trace(PARAMS, X, CFG, N).jaxpr.jaxpr)
    assert counts["tanh"] == N


def test_a_static_passed_by_keyword_is_static_when_named_by_position():
    """jax.jit infers names from positions: `n` passed as n=2 is static either way."""
    for opts in (SPELLINGS["position"], SPELLINGS["keyword"]):
        steps = tracing.step_through(forward, **opts)(PARAMS, X, cfg=CFG, n=N)
        _same(steps.outputs, ORACLE(PARAMS, X, cfg=CFG, n=N))


# --- bad options: one message, whichever lens -------------------------------------
CONFIGURE = {
    "draw_jaxpr": viz.draw_jaxpr,
    "draw_hlo": viz.draw_hlo,
    "compare_stages": viz.compare_stages,
    "draw_pipeline": viz.draw_pipeline,
    "cost_table": cost.cost_table,
    "fusion_traffic": cost.fusion_traffic,
    "draw_roofline": cost.draw_roofline,
    "profile": cost.profile,
    "grad_memory": cost.grad_memory,
    "draw_grad": autodiff.draw_grad,
    "draw_vjp": autodiff.draw_vjp,
    "draw_jvp": autodiff.draw_jvp,
    "explain_retraces": tracing.explain_retraces,
    "step_through": tracing.step_through,
    "find_nans": tracing.find_nans,
    "diff": lambda f, **opts: viz.diff(f, f, **opts),
}

BAD_OPTIONS = {
    "out of range": (
        {"static_argnums": 4},
        ValueError,
        "static_argnums=4 is out of range: forward(params, x, cfg, n) takes 4 "
        "positional arguments, so a position is 0..3 (or -4..-1 from the end). Give "
        "the position of one of its parameters, or name it in static_argnames=.",
    ),
    "negative out of range": (
        {"static_argnums": (2, -5)},
        ValueError,
        "static_argnums=-5 is out of range: forward(params, x, cfg, n) takes 4 "
        "positional arguments, so a position is 0..3 (or -4..-1 from the end). Give "
        "the position of one of its parameters, or name it in static_argnames=.",
    ),
    "not a name": (
        {"static_argnames": "config"},
        ValueError,
        "static_argnames='config' is not a parameter of forward(params, x, cfg, n). "
        "Spell it as the signature does, or give its position in static_argnums=.",
    ),
    "not ints": (
        {"static_argnums": "cfg"},
        TypeError,
        "`static_argnums` must be None, an int or a tuple of ints (positions of the "
        "function's arguments, as in jax.jit); got 'cfg' (str). Write "
        "static_argnums=1 or static_argnums=(1, 2).",
    ),
}


def _message(lens: str, call) -> str:
    with pytest.raises(Exception) as err:
        call()
    return str(err.value)


@pytest.mark.parametrize("bad", BAD_OPTIONS)
def test_a_bad_static_option_gets_the_same_words_from_every_lens(bad):
    opts, error, words = BAD_OPTIONS[bad]
    for lens, configure in CONFIGURE.items():
        with pytest.raises(error) as err:
            configure(forward, **opts)
        assert str(err.value) == f"{lens}: {words}", lens
        assert not re.search(r"jaxtour|\.py\b|_ir|_args", str(err.value))


UNHASHABLE = (
    "the static argument `cfg` (static_argnums=2) is {'scale': 2.0} (dict), which "
    "cannot be hashed, and jax.jit keys its cache on the hash of each static "
    "argument. Pass a tuple instead of a list, a frozen dataclass or NamedTuple "
    "instead of a dict (with no arrays inside), or leave `cfg` out of the static "
    "arguments so that it is traced."
)


@pytest.mark.parametrize("lens", CONFIGURE)
def test_an_unhashable_static_value_gets_the_same_words_from_every_lens(lens):
    configured = CONFIGURE[lens](forward, static_argnums=(2, 3))
    args = (PARAMS, X, {"scale": 2.0}, N)
    call = (
        (lambda: configured(args, (PARAMS, X, None, None)))
        if lens == "draw_jvp"
        else (lambda: configured(*args))
    )
    with pytest.raises(TypeError) as err:
        call()
    assert str(err.value) == f"{lens}: {UNHASHABLE}"


def test_argnums_and_static_argnums_may_not_name_one_argument():
    with pytest.raises(ValueError) as err:
        autodiff.draw_grad(forward, argnums=(0, 3), static_argnums=3)(PARAMS, X, CFG, N)
    assert str(err.value) == (
        "draw_grad: argnums=3 names a static argument (static_argnums holds position "
        "3): a static argument is a constant and has no gradient. Drop it from one "
        "of the two."
    )


def test_draw_vjp_without_static_argnums_says_so_in_the_users_words():
    """Issue 45: `draw_vjp(forward)(params, x, cfg, 3)` named the kit's file."""
    with pytest.raises(TypeError) as err:
        autodiff.draw_vjp(forward)(PARAMS, X, CFG, N)
    assert str(err.value) == (
        "draw_vjp: forward needs a concrete Python value where it got a traced one "
        "(The __index__() method was called on traced array with shape int32[]). "
        "draw_vjp traces `n` (argument 3) as an array, as jax.jit would. If it is a "
        "size, a loop count or a flag, hold it static: "
        "draw_vjp(f, static_argnums=3)."
    )


def _loops(x, n):
    for _ in range(n):
        x = jnp.sin(x)
    return x.sum()


@pytest.mark.parametrize(
    "lens", [viz.draw_jaxpr, viz.draw_hlo, viz.compare_stages, cost.cost_table]
)
def test_a_lens_that_reads_the_program_takes_a_jitted_functions_own_statics(lens):
    """jax.jit(f, static_argnums=1)(x, 3) works, so the lens does too: it traces the
    jitted function by itself, with its own options."""
    jitted = jax.jit(_loops, static_argnums=1)
    told = lens(jitted, static_argnums=1)(jnp.ones(2), 3)
    alone = lens(jitted)(jnp.ones(2), 3)
    assert str(alone) == str(told)
    assert not re.search(r"\b_\w+\.py:", str(told)), told  # never the kit's own line


def _sines(report):
    """How many sines the program a running lens measured or stepped computes."""
    if isinstance(report, cost.Profile):
        return report.module.op_counts()["sine"]
    if isinstance(report, cost.Roofline):  # one transcendental per sine per element
        return int(sum(row.transcendentals for row in report.table.ops)) // 2
    steps = report.steps if isinstance(report, tracing.NanReport) else report
    return sum(step.primitive == "sin" for step in steps)


_RUNNING = {
    "profile": lambda f, **o: cost.profile(f, calls=1, **o),
    "draw_roofline": lambda f, **o: cost.draw_roofline(f, peaks=FAKE, **o),
    "step_through": tracing.step_through,
    "find_nans": tracing.find_nans,
}


@pytest.mark.parametrize("who", list(_RUNNING))
@pytest.mark.parametrize("by_name", [False, True])
def test_a_lens_that_runs_the_program_holds_static_what_fs_own_jit_does(who, by_name):
    """A running lens wraps f in a jit of its own; f's jit holds `n` static, so the
    lens does too, whether the call passes `n` by position or by name. The oracle
    is the lens told, as jax.jit was, and the number of sines: `n` of them."""
    own = {"static_argnames": "n"} if by_name else {"static_argnums": 1}
    jitted, lens = jax.jit(_loops, **own), _RUNNING[who]
    for n in (2, 3):
        call = ((jnp.ones(2),), {"n": n}) if by_name else ((jnp.ones(2), n), {})
        alone, told = (
            lens(jitted)(*call[0], **call[1]),
            lens(jitted, **own)(*call[0], **call[1]),
        )
        assert _sines(alone) == _sines(told) == n


def test_a_profile_of_a_jitted_function_keys_its_programs_on_the_static_values():
    """NumPy scalars have a shape and a dtype; held static by f's own jit, each value
    is its own program, as jax.jit compiles one per static value."""
    measure = cost.profile(jax.jit(_loops, static_argnums=1), calls=1)
    counts = [_sines(measure(jnp.ones(2), np.int32(n))) for n in (2, 5, 2)]
    assert counts == [2, 5, 2]


@pytest.mark.parametrize("told", [False, True])
def test_a_profile_keys_its_programs_on_a_static_keywords_value(told):
    """A NumPy scalar passed by name to a static keyword: each value its own program."""
    own = {"static_argnames": "n"}
    measure = cost.profile(jax.jit(_loops, **own), calls=1, **(own if told else {}))
    counts = [_sines(measure(jnp.ones(2), n=np.int32(n))) for n in (2, 5, 2)]
    assert counts == [2, 5, 2]


def test_explain_retraces_of_a_jitted_function_names_its_own_static_changing():
    retraced = tracing.explain_retraces(jax.jit(_loops, static_argnums=1))
    for n in (2, 2, 3):
        retraced(jnp.ones(2), n)
    assert [c.event for c in retraced.calls] == ["first trace", "cache hit", "retrace"]
    assert retraced.calls[-1].causes[0].words == "static `n` changed value: 2 → 3"


@pytest.mark.parametrize("own", [{"static_argnums": 1}, {"static_argnames": "n"}])
def test_explain_retraces_holds_a_learned_static_by_name_and_by_position(own):
    """Learned at one call, `n` stays static however a later call passes it, as
    jax.jit infers a position from a name and a name from a position."""
    retraced = tracing.explain_retraces(jax.jit(_loops, **own))
    retraced(jnp.ones(2), n=2)
    retraced(jnp.ones(2), 3)
    retraced(jnp.ones(2), n=3)
    told = tracing.explain_retraces(jax.jit(_loops, **own), **own)
    told(jnp.ones(2), n=2)
    told(jnp.ones(2), 3)
    told(jnp.ones(2), n=3)
    assert [c.event for c in retraced.calls] == [c.event for c in told.calls]


def test_the_autodiff_lenses_hold_static_what_fs_own_jit_does():
    """jax.grad, jax.vjp and jax.jvp of a jitted f pass its static `n` a tracer and
    fail; the lenses hold it static as f's jit does, so each is checked against JAX
    on the same function with `n` bound."""
    jitted, x, t = jax.jit(_loops, static_argnums=1), jnp.arange(3.0), jnp.ones(3)
    bound = functools.partial(_loops, n=3)
    grads = autodiff.grad_graph(jitted)(x, 3).values_of("gradient")
    np.testing.assert_allclose(grads[0], jax.grad(bound)(x), rtol=1e-6)
    cotangents = autodiff.vjp_graph(jitted)(x, 3).values_of("gradient")
    (want,) = jax.vjp(bound, x)[1](jnp.float32(1.0))
    np.testing.assert_allclose(cotangents[0], want, rtol=1e-6)
    drawn = autodiff.jvp_graph(jitted)((x, 3), (t,))
    (tangent,) = [
        n.value for n in drawn.select("output") if n.label.startswith("tangent")
    ]
    np.testing.assert_allclose(tangent, jax.jvp(bound, (x,), (t,))[1], rtol=1e-6)


def _defaulted(x, n=2):
    return _loops(x, n)


def test_explain_retraces_of_a_jitted_function_keeps_a_program_per_set_of_statics():
    """A call that leaves f's static keyword to its default shows no static; one that
    passes it does. Each keeps its own program, so the third call is a cache hit, as
    in jax.jit(f) and in the lens told `static_argnames`."""
    jitted = jax.jit(_defaulted, static_argnames="n")
    learned = tracing.explain_retraces(jitted)
    told = tracing.explain_retraces(jitted, static_argnames="n")
    for retraced in (learned, told):
        retraced(jnp.ones(2))
        retraced(jnp.ones(2), n=3)
        retraced(jnp.ones(2))
        assert [c.event for c in retraced.calls] == [
            "first trace",
            "retrace",
            "cache hit",
        ]
    assert learned.calls[1].causes[0].words == (
        "static `n` is 3 now; the call compared passed no static `n`: jit keys which "
        "arguments are static and their values"
    )


def test_explain_retraces_learned_and_told_give_one_cause_once_a_static_is_seen():
    """Once a call showed f's static keyword, a call leaving it to its default is
    keyed on that default, as the lens told `static_argnames` keys it."""
    jitted = jax.jit(_defaulted, static_argnames="n")
    learned = tracing.explain_retraces(jitted)
    told = tracing.explain_retraces(jitted, static_argnames="n")
    for retraced in (learned, told):
        retraced(jnp.ones(2), n=2)
        retraced(jnp.ones(2))
        retraced(jnp.ones(2), 3)
    causes = [[c.words for c in call.causes] for call in learned.calls]
    assert causes == [[c.words for c in call.causes] for call in told.calls]
    assert causes[1] == [
        "static `n` was passed as 2, now left to its default 2: jit keys a keyword "
        "passed apart from one left to its default, even of equal value"
    ]


def _star(x, *rest):
    return x * rest[-1]


def test_explain_retraces_reads_a_position_from_the_end_at_each_call():
    """f's jit holds its last argument static: the second call's is `rest[1]`, not the
    `rest[0]` the first call showed (which it traces)."""
    retraced = tracing.explain_retraces(jax.jit(_star, static_argnums=-1))
    x = jnp.ones(2)
    outs = [retraced(*args) for args in ((x, 2), (x, x, 3), (x, 2))]
    assert [c.event for c in retraced.calls] == ["first trace", "retrace", "cache hit"]
    for out, want in zip(outs, (2.0, 3.0, 2.0), strict=True):
        np.testing.assert_allclose(out, [want, want])


def _scaled(x, s):
    return x * s


@pytest.mark.parametrize(
    "who, lens",
    [
        ("find_nans", tracing.find_nans),
        ("explain_retraces", tracing.explain_retraces),
        ("profile", cost.profile),
    ],
)
def test_a_jitted_functions_statics_that_cannot_be_told_apart_are_asked_for(who, lens):
    """Two Python floats trace alike: which one f's jit holds static is not guessed."""
    jitted = jax.jit(_scaled, static_argnums=1)
    message = (
        f"{who} traced an argument that _scaled's own jax.jit holds static, so jit met "
        f"a tracer where it wants a hashable value. Tell {who} too, as you told "
        f"jax.jit: {who}(_scaled, static_argnums=…) or static_argnames=…."
    )
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        lens(jitted)(2.0, 3.0)
    lens(jitted, static_argnums=1)(2.0, 3.0)  # the fix it names works


def test_a_jitted_function_told_its_statics_draws_its_body():
    drawn = viz.draw_jaxpr(jax.jit(_loops, static_argnums=1), static_argnums=1)
    assert drawn(jnp.ones(2), 3).title == "jaxpr of _loops: 4 equations"  # 3 sin, 1 sum


def test_a_jit_inside_f_that_meets_a_tracer_keeps_jaxs_own_error():
    # f's own jit holds nothing static; the jit inside it does. jax.jit(f) fails the
    # same way, so the kit does not tell the user to hold an argument of f static
    inner = jax.jit(lambda x, n: x * n, static_argnums=1)
    outer = jax.jit(lambda x, m: inner(x, m))
    with pytest.raises(ValueError, match=r"^Non-hashable static arguments"):
        jax.jit(outer)(jnp.ones(2), 3)  # the oracle
    for lens in (viz.draw_jaxpr, tracing.find_nans, tracing.explain_retraces):
        with pytest.raises(ValueError, match=r"^Non-hashable static arguments"):
            lens(outer)(jnp.ones(2), 3)


def test_too_many_choices_of_static_positions_are_not_guessed():
    """24 hashable arguments, 2 static: 276 choices, more than are tried. The one
    fit among the first 256 (17, 18) is not f's (22, 23): nothing is guessed."""
    from jaxtour._ir import jit_statics

    jitted = jax.jit(lambda *a: sum(a[:22]), static_argnums=(22, 23))
    assert jit_statics(jitted, (1.0,) * 17 + (1,) * 7, {}) is None
