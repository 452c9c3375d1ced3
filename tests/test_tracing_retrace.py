"""explain_retraces: each cause provoked and named, no false retrace, stale reads."""

import dataclasses
import functools
import logging
import re
import types
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour._wait import run_interruptibly
from jaxtour.tracing import explain_retraces

SCALE = 2.0


def scaled(x):
    return x * SCALE


def counting(times: list):
    """A function that notes each trace itself: an oracle independent of the wrapper."""

    def f(x, n=1):
        times.append(1)
        return jax.tree.map(lambda leaf: leaf * n, x)

    return f


def noting(times: list, fn):
    """`fn`, noting each trace in `times` (the same independent oracle)."""

    @functools.wraps(fn)
    def f(*args, **kwargs):
        times.append(1)
        return fn(*args, **kwargs)

    return f


def test_identical_calls_trace_once_and_report_no_retrace():
    times = []
    f = explain_retraces(counting(times))
    for _ in range(4):
        f(jnp.ones(3))
    f(np.ones(3, np.float32))  # another array type, same shape and dtype
    assert len(times) == f.traces == 1
    assert [c.event for c in f.calls] == ["first trace"] + ["cache hit"] * 4
    assert f.retraces == 0 and "0 retraces" in str(f.report)


def test_leaves_that_change_alike_are_one_cause_against_the_closest_call():
    f = explain_retraces(lambda xs, n: sum(xs) * n, static_argnums=1)
    f([1.0, 2.0], 2)
    f([1.0, 2.0, 3.0], 3)
    f([1, 2, 3], 3)  # against the call before: one change (int items), not two
    (cause,) = f.calls[-1].causes
    assert (cause.kind, cause.words) == (
        "dtype",
        "`xs[0]`, `xs[1]`, `xs[2]` changed dtype: f32[] → i32[]",
    )
    f(list(range(5)), 3)
    f([1.0] * 5, 3)
    (cause,) = f.calls[-1].causes
    assert (
        cause.words
        == "`xs[0]`, `xs[1]`, `xs[2]` and 2 more changed dtype: i32[] → f32[]"
    )


@pytest.mark.parametrize(
    ("first", "second", "kind", "words"),
    [
        (jnp.ones(3), jnp.ones(4), "shape", "`x` changed shape: f32[3] → f32[4]"),
        (
            jnp.ones(3),
            jnp.ones(3, jnp.int32),
            "dtype",
            "`x` changed dtype: f32[3] → i32[3]",
        ),
        (
            1.0,
            jnp.float32(1.0),
            "weak type",
            "`x` was a Python scalar (weakly typed), now an array: f32[] either way",
        ),
        (
            [1.0, 2.0],
            [1.0, 2.0, 3.0],
            "structure",
            "`x` was a list of 2, now a list of 3",
        ),
        (
            {"a": 1.0},
            {"a": 1.0, "b": 2.0},
            "structure",
            "`x` was a dict with keys a, now a dict with keys a, b",
        ),
        # where the summary reads alike before and after, both treedefs (JAX's
        # jax_explain_cache_misses names the path: [0][0]['b'])
        (
            {"a": 1.0, "b": None},
            {"a": 1.0, "b": 2.0},
            "structure",
            "`x` changed pytree structure: PyTreeDef({'a': *, 'b': None}) → "
            "PyTreeDef({'a': *, 'b': *})",
        ),
        (
            {"a": {"p": 1.0}},
            {"a": {"q": 1.0}},
            "structure",
            "`x` changed pytree structure: PyTreeDef({'a': {'p': *}}) → "
            "PyTreeDef({'a': {'q': *}})",
        ),
    ],
)
def test_each_traced_argument_cause_is_named(first, second, kind, words):
    times = []
    f = explain_retraces(counting(times))
    f(first)
    f(second)
    assert len(times) == 2
    (cause,) = f.calls[-1].causes
    assert (f.calls[-1].event, cause.kind, cause.words) == ("retrace", kind, words)


def test_it_works_inside_grad_vmap_and_jit_as_jax_jit_does():
    def f(x):
        return jnp.sum(jnp.sin(x) * x)

    watched, x = explain_retraces(f), jnp.linspace(0.0, 1.0, 3)
    np.testing.assert_allclose(jax.grad(watched)(x), jax.grad(f)(x), rtol=1e-6)
    np.testing.assert_allclose(
        jax.vmap(watched)(jnp.stack([x, 2 * x])), [f(x), f(2 * x)]
    )
    np.testing.assert_allclose(jax.jit(watched)(x), f(x), rtol=1e-6)
    np.testing.assert_allclose(watched(x), f(x), rtol=1e-6)
    # each call saw f32[3] (a tracer of it, or the array): one trace. The trace made
    # under grad serves vmap's call and the plain one, but each needs a program of
    # its own; under the outer jit the call only traces, compiling happens after it
    assert watched.traces == 1
    assert [c.event for c in watched.calls] == [
        "first trace", "compiled again", "cache hit", "compiled again"
    ]  # fmt: skip


def test_concrete_numbers_and_keys_are_not_taken_for_tracers():
    from jaxtour.tracing._jits import under_a_transformation as _under_a_transformation

    concrete = (jnp.ones(2), jax.random.key(0), np.ones(2), 1.0)
    assert not _under_a_transformation((concrete, {"key": jax.random.key(1)}))
    seen = []
    jax.grad(lambda x: seen.append(_under_a_transformation(((x,), {}))) or x)(1.0)
    assert seen == [True]


def test_a_function_closing_over_a_transformations_tracer_works_as_under_jax_jit(
    monkeypatch,
):
    # `w` is jax.grad's tracer, read through the lambda's closure; `scale_by_w` reaches it
    # one function further down, where the closure is not looked into
    def outer(w, deep):
        scale_by_w = lambda x: x * w
        wrapped = explain_retraces(
            (lambda x: jnp.sum(scale_by_w(x))) if deep else (lambda x: jnp.sum(x * w))
        )
        total = wrapped(jnp.ones(3)) + wrapped(jnp.ones(3))
        events.append([c.event for c in wrapped.calls])
        return total

    threads = []
    monkeypatch.setattr(
        "jaxtour.tracing._retrace.run_interruptibly",
        lambda work, what: threads.append(what) or run_interruptibly(work, what),
    )
    tried = {}
    for deep in (False, True):
        events: list[list[str]] = []
        threads.clear()
        # d/dw (3w + 3w) = 6, checked against the same function under jax.jit
        assert float(jax.grad(outer)(2.0, deep)) == 6.0
        assert float(jax.jit(outer, static_argnums=1)(2.0, deep)) == 12.0
        np.testing.assert_allclose(
            jax.vmap(outer, (0, None))(jnp.arange(2.0), deep), [0, 6]
        )
        assert events == [["first trace", "cache hit"]] * 3, deep
        tried[deep] = len(threads)
    # the closure is read first, so the thread is never tried there; a tracer one
    # function down is found by trying it
    assert tried[False] == 0 and tried[True] >= 3


def test_a_call_made_by_a_transformation_names_the_users_line():
    f = explain_retraces(lambda x: jnp.sum(jnp.sin(x)))
    jax.grad(f)(jnp.ones(2))  # JAX calls f from its own code
    lines = Path(__file__).read_text().splitlines()
    line = (
        lines.index("    jax.grad(f)(jnp.ones(2))  # JAX calls f from its own code") + 1
    )
    assert f.calls[0].site.where == f"test_tracing_retrace.py:{line}"


def test_a_call_made_by_a_lens_names_the_users_line_not_the_lens():
    from jaxtour.viz import draw_jaxpr

    f = explain_retraces(lambda x: jnp.sum(jnp.sin(x)))
    draw_jaxpr(f)(jnp.ones(2))  # jaxtour traces f, through JAX
    lines = Path(__file__).read_text().splitlines()
    line = lines.index(
        "    draw_jaxpr(f)(jnp.ones(2))  # jaxtour traces f, through JAX"
    )
    assert f.calls[0].site.where == f"test_tracing_retrace.py:{line + 1}"


def test_a_static_value_that_changes_retraces_each_time():
    times = []
    f = explain_retraces(counting(times), static_argnums=1)
    for n in (1, 2, 2, 3):
        f(jnp.ones(2), n)
    assert len(times) == f.traces == 3
    assert [c.causes[0].words for c in f.calls if c.event == "retrace"] == [
        "static `n` changed value: 1 → 2",
        "static `n` changed value: 2 → 3",
    ]


def test_a_static_object_hashed_by_identity_is_named():
    class Config:  # no __eq__/__hash__: a new instance is a new cache key
        scale = 2.0

    @dataclasses.dataclass(frozen=True)
    class Frozen:
        scale: float = 2.0

    times = []
    f = explain_retraces(
        lambda x, cfg: times.append(1) or x * cfg.scale, static_argnames="cfg"
    )
    f(jnp.ones(2), cfg=Config())
    f(jnp.ones(2), cfg=Config())
    assert f.calls[-1].causes[0].kind == "static object"
    f(jnp.ones(2), cfg=Frozen())
    f(jnp.ones(2), cfg=Frozen())  # equal by value: a cache hit
    assert f.calls[-1].event == "cache hit" and len(times) == 3


def test_a_new_closure_passed_as_a_static_function_is_named():
    apply = explain_retraces(lambda fn, x: fn(x), static_argnums=0)
    for k in (1.0, 2.0):
        apply(lambda v, k=k: v * k, jnp.ones(2))  # a new lambda each call
    square = lambda v: v**2
    apply(square, jnp.ones(2))
    apply(square, jnp.ones(2))  # the same object: a cache hit
    assert [c.event for c in apply.calls] == [
        "first trace",
        "retrace",
        "retrace",
        "cache hit",
    ]
    for call in apply.calls[1:3]:
        (cause,) = call.causes
        assert cause.kind == "static object"
        assert cause.words.startswith("static `fn` is a new function (<function ")
        assert cause.hint.startswith("define the function once")


def test_a_changed_global_is_a_stale_result_not_a_retrace():
    global SCALE
    f = explain_retraces(scaled)
    first = f(jnp.ones(2))
    SCALE = 5.0
    try:
        second = f(jnp.ones(2))
    finally:
        SCALE = 2.0
    assert f.traces == 1 and np.array_equal(first, second)  # jit kept the old 2.0
    (stale,) = f.calls[-1].stale
    assert stale.startswith("`SCALE` changed (2.0 → 5.0) but jit did not retrace")
    assert "STALE" in str(f.report)


def test_a_changed_closure_cell_is_stale_too():
    offset = jnp.zeros(2)
    f = explain_retraces(lambda x: x + offset)
    f(jnp.ones(2))
    offset = jnp.ones(2)  # the lambda reads the cell
    f(jnp.ones(2))
    assert f.calls[-1].stale and f.calls[-1].stale[0].startswith(
        "`offset` changed (f32[2]"
    )


def test_call_site_compile_time_and_report_forms():
    f = explain_retraces(lambda x: jnp.sin(x) * 2)
    f(jnp.ones(3))  # the first call's site
    lines = Path(__file__).read_text().splitlines()
    line = lines.index("    f(jnp.ones(3))  # the first call" + "'s site") + 1
    f(jnp.ones(4))
    first = f.calls[0]
    assert first.site.where == f"test_tracing_retrace.py:{line}"
    assert 0 < first.compile_s <= first.call_s
    text = str(f.report)
    assert re.search(r"2 calls, 2 traces \(1 retrace\), 0 cache hits", text)
    assert max(len(row) for row in text.splitlines()) <= 88  # fits a slide's box
    assert "`x` changed shape: f32[3] → f32[4]" in " ".join(text.split())
    html = f._repr_html_()
    table = ET.fromstring(html)  # well-formed
    assert len(table.findall(".//tr")) == 3  # a header and two traces
    assert repr(f) == "explain_retraces(<lambda>): 2 calls, 2 traces"


def test_results_equal_jit():
    f = explain_retraces(lambda x, n: jnp.cumsum(x) ** n, static_argnums=1)
    x = jnp.arange(5.0)
    assert np.array_equal(f(x, 2), jax.jit(lambda x: jnp.cumsum(x) ** 2)(x))


def test_bad_inputs_say_what_to_do():
    with pytest.raises(TypeError) as err:
        explain_retraces(3)
    assert str(err.value) == (
        "explain_retraces needs a function to trace, as jax.make_jaxpr does; "
        "got 3 (int). Pass the function itself, "
        "then call the result with example arguments: "
        "explain_retraces(loss)(params, batch)."
    )
    f = explain_retraces(lambda x, n: x * len(n), static_argnums=1)
    with pytest.raises(TypeError) as err:
        f(jnp.ones(2), [1, 2])
    assert str(err.value) == (
        "explain_retraces: the static argument `n` (static_argnums=1) is [1, 2] "
        "(list), which cannot be hashed, and jax.jit keys its cache on the hash of "
        "each static argument. Pass a tuple instead of a list, a frozen dataclass or "
        "NamedTuple instead of a dict (with no arrays inside), or leave `n` out of "
        "the static arguments so that it is traced."
    )
    with pytest.raises(
        TypeError,
        match=r"explain_retraces cannot trace args\[0\]: it is "
        r"'a' \(str\)",
    ):
        explain_retraces(lambda x: x)("a")


def test_the_closest_earlier_signature_is_blamed():
    """Issue 27: {"a": f32}, {"a", "b"}, {"a": i32}: the third changed a dtype."""
    f = explain_retraces(lambda d: sum(d.values()))
    f({"a": jnp.float32(1)})
    f({"a": jnp.float32(1), "b": jnp.float32(2)})
    f({"a": jnp.int32(1)})
    (cause,) = f.calls[-1].causes
    assert (
        cause.kind == "dtype" and "`d['a']` changed dtype: f32[] → i32[]" in cause.words
    )


def test_a_static_keyword_left_to_its_default_then_passed_is_named():
    def g(x, mode="sin"):
        return jnp.sin(x) if mode == "sin" else jnp.cos(x)

    f = explain_retraces(g, static_argnames="mode")
    f(1.0)
    f(1.0, mode="sin")
    f(1.0, mode="cos")
    first, second = f.calls[1].causes, f.calls[2].causes
    assert [c.words for c in first] == [
        "static `mode` was left to its default 'sin', now passed as 'sin': jit keys a "
        "keyword passed apart from one left to its default, even of equal value"
    ]
    assert [c.words for c in second] == ["static `mode` changed value: 'sin' → 'cos'"]


@pytest.mark.parametrize("nums", [None, -1])
def test_static_argnums_none_and_negative_as_jax_jit(nums):
    f = explain_retraces(lambda x, n=2: x * n, static_argnums=nums)
    assert float(f(jnp.float32(2.0), 3)) == 6.0


def test_a_mutated_closed_over_dict_is_flagged_stale():
    cfg = {"scale": 2.0}
    f = explain_retraces(lambda x: x * cfg["scale"])
    f(jnp.ones(2))
    cfg["scale"] = 3.0
    f(jnp.ones(2))
    (stale,) = f.calls[-1].stale
    assert stale.startswith("`cfg` changed (dict(scale=2.0) → dict(scale=3.0))")


# --- issue 45: each retrace against the closest earlier call, field by field --------
def _loss(params, x):
    return jnp.sum(x @ params["w"] + params["b"])


def _params(dtype):
    return {"w": jnp.ones((8, 8), dtype), "b": jnp.ones(8, dtype)}


def _issue_calls(f):
    f(_params(jnp.float32), jnp.ones((5, 8), jnp.float32))
    f(_params(jnp.float32), jnp.ones((7, 8), jnp.float32))
    f(_params(jnp.bfloat16), jnp.ones((5, 8), jnp.bfloat16))


class _Log(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _jax_explains(calls) -> list[str]:
    """What `jax_explain_cache_misses` logs while `calls` runs (JAX's own account)."""
    log, logger = _Log(), logging.getLogger("jax")
    logger.addHandler(log)
    before = jax.config.jax_explain_cache_misses
    jax.config.update("jax_explain_cache_misses", True)
    try:
        calls()
    finally:
        jax.config.update("jax_explain_cache_misses", before)
        logger.removeHandler(log)
    return [m for m in log.messages if "CACHE MISS" in m]


def test_a_retrace_is_explained_against_the_call_that_differs_least():
    """f32 x[5,8], then x[7,8], then all bf16 with x[5,8]: against the first call only
    the dtypes changed (the second call differs in x's shape too)."""
    f = explain_retraces(_loss)
    jax_said = _jax_explains(lambda: _issue_calls(f))
    assert [c.event for c in f.calls] == ["first trace", "retrace", "retrace"]
    assert [f.closest(n) for n in (1, 2, 3)] == [None, 1, 1]
    assert f.report.closest(3) == f.calls[2].compared_with == 1
    text = " ".join(str(f.report).split())
    assert "retrace 〈ms〉 against call 1, the closest:" in re.sub(
        r"\d+(\.\d+)? ms", "〈ms〉", text
    )
    assert text.count("against call") == 1  # not on call 2's row: its closest is 1
    # report.diff(n) sets call n's program beside that same closest trace
    assert f.report.diff(3).names == ("_loss (call 1)", "_loss (call 3)")
    assert [(c.kind, c.words) for c in f.calls[2].causes] == [
        ("dtype", "`params['b']` changed dtype: f32[8] → bf16[8]"),
        ("dtype", "`params['w']` changed dtype: f32[8,8] → bf16[8,8]"),
        ("dtype", "`x` changed dtype: f32[5,8] → bf16[5,8]"),
    ]
    # JAX's own account of the same calls names the same leaves, before and now.
    pairs = re.findall(r"\* at (\S+), now (\S+) and before (\S+)", jax_said[-1])
    words = " ".join(c.words for c in f.calls[2].causes)
    ours = re.findall(r"`(\S+)` changed dtype: (\S+) → (\S+)", words)
    assert sorted(pairs) == sorted((name, now, was) for name, was, now in ours)


def test_a_leaf_that_changed_dtype_and_shape_says_both():
    f = explain_retraces(_loss)
    f(_params(jnp.bfloat16), jnp.ones((7, 8), jnp.bfloat16))
    f(_params(jnp.bfloat16), jnp.ones((5, 8), jnp.float32))
    (cause,) = f.calls[1].causes
    assert (cause.kind, cause.words) == (
        "dtype and shape",
        "`x` changed dtype and shape: bf16[7,8] → f32[5,8]",
    )


def test_closest_refuses_a_call_that_was_not_made():
    f = explain_retraces(lambda x: x)
    f(1.0)
    with pytest.raises(IndexError, match=r"^<lambda>: there is no call 2; calls are"):
        f.closest(2)


@dataclasses.dataclass(frozen=True)
class _Config:
    hidden: int = 16
    activation: str = "gelu"


class _Layer(NamedTuple):
    width: int = 16
    activation: str = "gelu"


@dataclasses.dataclass(frozen=True)
class _Model:
    layers: tuple = (_Layer(), _Layer())
    dropout: float = 0.1


@pytest.mark.parametrize(
    ("first", "second", "words"),
    [
        (
            _Config(),
            _Config(activation="relu"),
            ["static `cfg.activation` changed: 'gelu' → 'relu'"],
        ),
        (
            _Layer(),
            _Layer(activation="a much longer activation name than thirty characters"),
            [
                "static `cfg.activation` changed: 'gelu' → "
                "'a much longer activation name than thirty characters'"
            ],
        ),
        (
            _Model(),
            _Model(layers=(_Layer(), _Layer(32, "relu"))),
            [
                "static `cfg.layers[1].width` changed: 16 → 32",
                "static `cfg.layers[1].activation` changed: 'gelu' → 'relu'",
            ],
        ),
        (
            _Config(),
            _Layer(),  # another type: compared whole, never cut short
            [
                "static `cfg` changed value: _Config(hidden=16, activation='gelu') → "
                "_Layer(width=16, activation='gelu')"
            ],
        ),
    ],
    ids=["dataclass", "namedtuple", "nested", "another-type"],
)
def test_a_static_config_names_the_field_that_changed_and_both_values(
    first, second, words
):
    f = explain_retraces(lambda x, cfg: x * 2.0, static_argnums=1)
    jax_said = _jax_explains(lambda: (f(1.0, first), f(1.0, second)))
    assert f.calls[1].event == "retrace"
    assert [c.words for c in f.calls[1].causes] == words
    assert "..." not in str(f.report)
    # JAX 0.10 names the same argument, whole: both values as repr gives them (0.12
    # says "cache miss explanation unavailable" for a static argument).
    if "explanation unavailable" not in jax_said[-1]:
        assert repr(first) in jax_said[-1] and repr(second) in jax_said[-1]


def test_a_static_config_is_explained_against_the_closest_config():
    f = explain_retraces(lambda x, cfg: x * 2.0, static_argnames="cfg")
    f(1.0, cfg=_Config(8, "gelu"))
    f(1.0, cfg=_Config(16, "relu"))
    f(1.0, cfg=_Config(16, "gelu"))  # one field from each: the latest of equals
    assert f.closest(3) == 2
    assert [c.words for c in f.calls[2].causes] == [
        "static `cfg.activation` changed: 'relu' → 'gelu'"
    ]


def test_an_argument_passed_by_keyword_then_by_position_is_named():
    f = explain_retraces(lambda x, n=2: jnp.sum(x) * n, static_argnames="n")
    traced = jax.jit(lambda x, n=2: jnp.sum(x) * n, static_argnames="n")
    for call in (lambda g: g(jnp.ones(3), n=3), lambda g: g(jnp.ones(3), 3)):
        assert float(call(f)) == float(call(traced)) == 9.0
    (cause,) = f.calls[-1].causes
    assert (f.calls[-1].event, f.traces) == ("retrace", 2)
    assert cause.words == "`n` was passed by keyword, now by position"


def test_a_new_sharding_is_named_exactly_when_jit_traces_again():
    from devices import run_with_devices

    # the oracle is jit itself: the side effect that counts traces. A call is a cache
    # hit exactly when its signature equals one traced before, and each retrace after
    # a change of mesh, explicit spec or memory names the sharding, never the cache
    run = run_with_devices(
        """
        import json
        import jax.numpy as jnp
        from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
        from jax.sharding import SingleDeviceSharding
        from jaxtour.tracing import explain_retraces
        auto = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
        explicit = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Explicit,))
        host = SingleDeviceSharding(jax.devices()[0], memory_kind="pinned_host")
        a = jnp.ones(8)
        layouts = [None, NamedSharding(auto, P("d")), NamedSharding(auto, P()), None,
                   NamedSharding(explicit, P("d")), NamedSharding(explicit, P()),
                   NamedSharding(auto, P("d")), host, None]
        g = explain_retraces(lambda x: jnp.sum(jnp.sin(x)))
        for layout in layouts:
            g(a if layout is None else jax.device_put(a, layout))
        traced, rows = [], []
        for call in g.calls:
            rows.append([call.event, call.signature in traced,
                         [c.kind for c in call.causes], [c.words for c in call.causes]])
            if call.event in ("first trace", "retrace"):
                traced.append(call.signature)
        print(json.dumps(rows))
        """
    )
    hits = ("cache hit", "compiled again")  # jit reused a trace, compiled or not
    assert [seen for event, seen, _, _ in run] == [
        event in hits for event, _, _, _ in run
    ]
    assert [kinds for event, _, kinds, _ in run if event == "retrace"] == (
        [["sharding"]] * 4
    )
    # call 3: the trace of call 2 (an Auto mesh keeps the spec out of the type),
    # but a program compiled for the replicated layout
    assert [event for event, *_ in run] == [
        "first trace", "retrace", "compiled again", "cache hit",
        "retrace", "retrace", "cache hit", "retrace", "cache hit",
    ]  # fmt: skip
    assert run[1][3] == ["`x` changed sharding: no mesh → on mesh (d=8 Auto)"]
    assert run[4][3] == [
        "`x` changed sharding: on mesh (d=8 Auto) → P('d',) on mesh (d=8 Explicit)"
    ]
    # compared with the closest earlier trace: of equals, the latest
    assert run[7][3] == [
        "`x` changed sharding: on mesh (d=8 Explicit) → in host memory"
    ]


def test_it_has_what_a_jitted_function_has_and_only_calls_are_counted():
    def f(x):
        """Doc."""
        return jnp.sin(x)

    watched, plain, x = explain_retraces(f), jax.jit(f), jnp.ones(3)
    assert (watched.__name__, watched.__doc__, watched.__wrapped__) == ("f", "Doc.", f)
    assert str(watched.trace(x).jaxpr) == str(plain.trace(x).jaxpr)
    assert watched.lower(x).as_text() == plain.lower(x).as_text()
    assert watched.eval_shape(x) == plain.eval_shape(x)
    assert (watched.traces, watched.calls) == (0, [])  # none of those is a call
    watched(x)
    watched.clear_cache()
    watched(x)
    assert [c.event for c in watched.calls] == ["first trace", "retrace"]
    assert watched.calls[1].causes[0].kind == "cache"


def test_given_to_a_lens_it_asks_for_its_statics_there_too():
    from jaxtour.tracing import find_nans

    scaled = explain_retraces(lambda x, n: x * n, static_argnums=1)
    with pytest.raises(
        TypeError,
        match=re.escape(
            "explain_retraces(<lambda>) holds `n` static, but a tracer came there: what "
            "traced this call (a lens, jax.jit) traced it. Hold it static there too"
        ),
    ):
        find_nans(scaled)(jnp.ones(2), 3)
    assert not find_nans(scaled, static_argnums=1)(jnp.ones(2), 3).found


def test_the_functions_own_attributes_do_not_reach_the_record():
    def f(x):
        return x

    f.calls, f.traces = "f's", "own"  # names the record uses
    watched = explain_retraces(f)
    watched(jnp.ones(2))
    assert [c.event for c in watched.calls] == ["first trace"] and watched.traces == 1
    twice = explain_retraces(explain_retraces(jnp.sin))
    twice(jnp.ones(2))
    assert twice.traces == 1 and len(twice.calls) == 1


def test_a_setting_jit_keys_on_is_named_when_it_changes():
    from devices import run_with_devices

    run = run_with_devices(
        """
        import contextlib
        import json
        import jax.numpy as jnp
        from jaxtour.tracing import explain_retraces
        g = explain_retraces(lambda x: x * 2)
        plain_traces = []
        plain = jax.jit(lambda x: plain_traces.append(1) or x * 2)  # the oracle
        mesh = jax.make_mesh((8,), ("d",))
        settings = (contextlib.nullcontext, lambda: jax.set_mesh(mesh),
                    lambda: jax.enable_x64(True),
                    lambda: jax.default_matmul_precision("highest"),
                    contextlib.nullcontext)
        for setting in settings:  # made as they are entered: set_mesh sets at once
            with setting():
                g(jnp.ones(2, jnp.float32))
                plain(jnp.ones(2, jnp.float32))
        print(json.dumps([len(plain_traces), g.traces,
                          [[c.words for c in call.causes] for call in g.calls]]))
        """
    )
    plain_traces, traces, causes = run
    assert traces == plain_traces == 4
    assert causes == [
        [],
        ["the mesh of jax.set_mesh changed: none → d=8 Explicit"],
        ["jax_enable_x64 changed: False → True"],
        ["jax_default_matmul_precision changed: None → highest"],
        [],  # back as the first call was: a cache hit
    ]


def test_keywords_in_another_order_are_a_cache_hit_and_a_real_change_is_named():
    # jit flattens keywords as a dict, sorted: their order is not part of its key
    counter = []
    f = explain_retraces(noting(counter, lambda a, b: a.sum() + b))
    f(a=jnp.ones(3), b=1.0)
    f(b=1.0, a=jnp.ones(3))
    f(b=1.0, a=jnp.ones(4))
    assert len(counter) == 2 == f.traces
    assert [c.event for c in f.calls] == ["first trace", "cache hit", "retrace"]
    assert [c.words for c in f.calls[2].causes] == [
        "`a` changed shape: f32[3] → f32[4]"
    ]


def test_a_static_of_equal_value_and_another_type_is_named_as_a_new_type():
    # jit keys a static argument on its type too: 2 and 2.0 are two keys
    counter = []
    f = explain_retraces(noting(counter, lambda x, k: x * k), static_argnums=1)
    for k in (2, 2.0, np.int32(2), 2):
        f(jnp.ones(3), k)
    assert len(counter) == 3 == f.traces
    assert [c.event for c in f.calls][1:] == ["retrace", "retrace", "cache hit"]
    assert [c.words for c in f.calls[1].causes] == [
        "static `k` changed type: int 2 → float 2.0: jit keys a static argument on "
        "its type as well as its value, so equal values of two types are two keys"
    ]
    assert f.calls[2].causes[0].kind == "static type"
    assert "int32" in f.calls[2].causes[0].words


# --- what f reads besides its arguments: only what it reads, all that it reads -------
mean = 0.0  # a global that shares its name with an array method
TRACE_LOG: list = []  # what the traces of a function write


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Weights:
    w: jax.Array


def test_an_attribute_named_like_a_global_is_not_read_as_that_global():
    global mean
    f = explain_retraces(lambda x: x - x.mean())  # .mean is an attribute, no global
    for batch in (jnp.arange(3.0), jnp.arange(3.0, 6.0)):
        mean = float(batch.mean())
        f(batch)
    mean = 0.0
    assert [c.stale for c in f.calls] == [[], []]


def test_a_global_the_trace_itself_changes_is_its_side_effect_not_a_stale_input():
    def logged(x):
        TRACE_LOG.append(x.shape)  # runs only while jit traces
        return x * 2

    f = explain_retraces(logged)
    TRACE_LOG.clear()
    for n in (2, 3, 2):
        f(jnp.ones(n))
    assert TRACE_LOG == [(2,), (3,)]
    assert [c.event for c in f.calls] == ["first trace", "retrace", "cache hit"]
    assert [c.stale for c in f.calls] == [[], [], []]


def test_a_changed_pytree_object_or_method_owner_is_a_stale_result():
    weights = Weights(jnp.ones(2))
    config = types.SimpleNamespace(scale=2.0)

    class Model:
        def __init__(self):
            self.scale = 2.0

        def apply(self, x):
            return x * self.scale

    model = Model()
    reads = [
        explain_retraces(lambda x: x @ weights.w),
        explain_retraces(lambda x: x * config.scale),
        explain_retraces(model.apply),
    ]
    firsts = [f(jnp.ones(2)) for f in reads]
    weights = Weights(weights.w * 10)  # the lambda reads the new cell
    config.scale = 3.0
    model.scale = 3.0
    seconds = [f(jnp.ones(2)) for f in reads]
    for f, first, second in zip(reads, firsts, seconds, strict=True):
        np.testing.assert_array_equal(first, second)  # jit kept the traced values
        assert f.traces == 1 and len(f.calls[-1].stale) == 1, f.calls[-1]
    assert reads[0].calls[-1].stale[0].startswith("`weights` changed (Weights(")
    assert (
        reads[1]
        .calls[-1]
        .stale[0]
        .startswith(
            "`config` changed (SimpleNamespace(scale=2.0) → SimpleNamespace(scale=3.0))"
        )
    )
    assert (
        reads[2]
        .calls[-1]
        .stale[0]
        .startswith("`self` changed (Model(scale=2.0) → Model(scale=3.0))")
    )


def test_a_cache_hit_that_xla_compiles_anew_is_said_to_be_compiled_again():
    counter = []
    f = explain_retraces(noting(counter, lambda x: jnp.sin(x).sum()))
    jax.grad(f)(jnp.ones(3))  # traced under grad: the program run was grad's
    f(jnp.ones(3))  # the same trace, a new program: the primal one
    f(jnp.ones(3))
    assert len(counter) == 1 == f.traces
    events = [c.event for c in f.calls]
    assert events == ["first trace", "compiled again", "cache hit"]
    assert f.calls[1].compile_s > 0 and f.calls[1].causes[0].kind == "compiled"
    assert [row.number for row in f.report.rows] == [1, 2]
    assert "1 trace (0 retraces), 2 cache hits (1 compiled again)" in str(f.report)


def test_a_call_under_disable_jit_is_not_jitted_nor_traced_nor_compiled():
    f = explain_retraces(lambda x: x * 2)
    f(jnp.ones(2))
    with jax.disable_jit():
        f(jnp.ones(2))
    assert f.traces == 1
    assert [c.event for c in f.calls] == ["first trace", "not jitted"]
    assert f.calls[1].compile_s == 0.0 and f.calls[1].causes[0].kind == "disable_jit"
    assert ", 1 not jitted;" in f.report.summary


def test_a_first_call_inside_an_outer_jit_leaves_the_tracer_test_sound():
    # the types of concrete arrays are read once per process: read inside a trace
    # they were the tracer's own, and every tracer passed for a concrete array after
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent(
        """
        import jax, jax.numpy as jnp
        from jaxtour.tracing import explain_retraces
        f = explain_retraces(lambda x, n: x * n, static_argnums=1)
        jax.jit(lambda x: f(x, 1))(jnp.ones(2))  # the process's first look
        try:
            jax.jit(lambda x, n: f(x, n))(jnp.ones(2), 3)
        except TypeError as err:
            print(str(err).split(":")[0])
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert (
        done.stdout.strip()
        == "explain_retraces(<lambda>) holds `n` static, but a tracer came there"
    ), done.stderr


def test_an_argument_passed_or_left_out_is_named_however_it_came():
    """A default argument passed by position, an extra *args item, a keyword dropped:
    the cause names the argument and which way it went (the old words blamed "a
    keyword argument" for every one)."""

    def f(x, y=2.0, *rest, **more):
        return x * y + sum(rest) + sum(more.values())

    g = explain_retraces(f)
    for args, kwargs in [((1.0,), {}), ((1.0, 2.0), {}), ((1.0, 2.0, 3.0), {})]:
        g(*args, **kwargs)
    g(1.0, 2.0, 3.0, z=4.0)
    g(1.0, 2.0, 3.0)  # a cache hit: the trace of call 3
    g(1.0, z=4.0)
    words = [[c.words for c in call.causes] for call in g.calls]
    head = "the traced arguments are not the same ones: "
    assert words == [
        [],
        [head + "`y` passed now, left out before"],
        [head + "`rest[0]` passed now, left out before"],  # as JAX names it
        [head + "`z` passed now, left out before"],
        [],
        [head + "`z` passed now, left out before"],  # against call 1, one off
    ]
    assert [call.compared_with for call in g.calls] == [None, 1, 2, 3, 3, 1]
    assert g.traces == 5


def test_the_closest_call_counts_statics_and_leaves_beside_a_structure_change():
    """Of earlier calls one argument off, the one whose static values and leaves also
    match is the closest: the cause is then the one difference, not three."""

    def f(x, y=2.0, *, n=1):
        return x * y * n

    g = explain_retraces(f, static_argnames="n")
    g(jnp.ones(2))
    g(jnp.ones(2), 2.0)  # y by position, a weak f32[]
    g(jnp.ones(2), n=2)
    g(jnp.ones(2), y=jnp.ones(2))  # 1 and 2 are one off; 1 alone in everything else
    assert g.traces == 4
    last = g.calls[-1]
    assert last.compared_with == 1
    assert [c.words for c in last.causes] == [
        "the traced arguments are not the same ones: `y` passed now, left out before"
    ]


def _nnx_training(seed: int = 0):
    """A linear model, its SGD optimizer and a step that updates both in place."""
    import optax
    from flax import nnx

    model = nnx.Linear(4, 2, rngs=nnx.Rngs(seed))
    opt = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)

    def step(m, o, x, y):
        loss, grads = nnx.value_and_grad(lambda m, x, y: ((m(x) - y) ** 2).mean())(
            m, x, y
        )
        o.update(m, grads)
        return loss

    return model, opt, step


def test_nnx_jit_keeps_its_state_updates_and_a_retrace_is_still_named():
    """Issue: wrapped in the lens's own jax.jit, nnx.jit's updates of the model and
    optimizer were dropped: the loss never fell. The oracle is nnx.jit alone."""
    from flax import nnx

    x, y = jnp.ones((3, 4)), jnp.ones((3, 2))
    model, opt, step = _nnx_training()
    plain = nnx.jit(step)
    expected = [float(plain(model, opt, x, y)) for _ in range(3)]
    model2, opt2, step2 = _nnx_training()
    times = []
    wrapped = explain_retraces(nnx.jit(noting(times, step2)))
    got = [float(wrapped(model2, opt2, x, y)) for _ in range(3)]
    assert got == expected and expected[2] < expected[0]
    assert int(opt2.step[...]) == int(opt.step[...]) == 3
    np.testing.assert_array_equal(model2.kernel[...], model.kernel[...])
    wrapped(model2, opt2, jnp.ones((5, 4)), jnp.ones((5, 2)))
    assert wrapped.traces == len(times) == 2
    assert [c.event for c in wrapped.calls] == ["first trace"] + ["cache hit"] * 2 + [
        "retrace"
    ]
    assert [c.words for c in wrapped.calls[-1].causes] == [
        "`x` changed shape: f32[3,4] → f32[5,4]",
        "`y` changed shape: f32[3,2] → f32[5,2]",
    ]
    assert (
        wrapped.lower(model2, opt2, x, y).as_text()
        == plain.lower(model, opt, x, y).as_text()
    )
    with pytest.raises(TypeError, match=r"jax\.clear_caches\(\) clears every jit's"):
        wrapped.clear_cache()


def _mlp(width: int = 8, activation=jax.nn.relu):
    import equinox as eqx

    return eqx.nn.MLP(4, 2, width, 2, activation=activation, key=jax.random.key(0))


def _mlp_loss(m, x, scale=1.0):
    return (jax.vmap(m)(x) ** 2).mean() * scale


def test_eqx_filter_jit_is_called_as_it_is_and_holds_every_non_array_static():
    """Issue: a model through eqx.filter_jit was refused (its activation), and told
    to make it static, then told it cannot be hashed. The oracle is eqx.filter_jit."""
    import equinox as eqx

    times = []
    wrapped = explain_retraces(eqx.filter_jit(noting(times, _mlp_loss)))
    x = jnp.ones((3, 4))
    assert wrapped(_mlp(), x, 1.0) == eqx.filter_jit(_mlp_loss)(_mlp(), x, 1.0)
    wrapped(_mlp(), x, 1.0)  # a new MLP, equal fields and the same relu: a cache hit
    wrapped(_mlp(), x, 2.0)  # a Python number: static to eqx.filter_jit
    wrapped(_mlp(), jnp.ones((5, 4)), 2.0)
    assert wrapped.traces == len(times) == 3
    assert [c.event for c in wrapped.calls] == [
        "first trace",
        "cache hit",
        "retrace",
        "retrace",
    ]
    assert [c.words for c in wrapped.calls[-2].causes] == [
        "static `scale` changed value: 1.0 → 2.0"
    ]
    assert [c.words for c in wrapped.calls[-1].causes] == [
        "`x` changed shape: f32[3,4] → f32[5,4]"
    ]


def test_a_model_s_functions_are_held_fixed_and_a_new_one_is_named():
    """Issue: `explain_retraces(loss)(mlp, x)` was refused for `m.activation`, as the
    other lenses are not: such a leaf is held fixed, keyed by identity."""
    times = []
    wrapped = explain_retraces(noting(times, _mlp_loss))
    x = jnp.ones((3, 4))
    np.testing.assert_allclose(wrapped(_mlp(), x), _mlp_loss(_mlp(), x), rtol=1e-6)
    wrapped(_mlp(), x)
    np.testing.assert_allclose(
        wrapped(_mlp(activation=jax.nn.tanh), x),
        _mlp_loss(_mlp(activation=jax.nn.tanh), x),
        rtol=1e-6,
    )
    assert wrapped.traces == len(times) == 2
    (cause,) = wrapped.calls[-1].causes
    assert cause.words == (
        "static `m.activation` is a new function (<function tanh>): a lambda or a "
        "closure made anew is a new cache key"
    )


def test_a_module_s_changed_static_field_is_named_in_one_line():
    """Issue: a changed NNX or Equinox module size printed its PyTreeDef, many lines
    of CustomNode(...); the field that changed is named instead."""
    from flax import nnx

    forward = explain_retraces(lambda m, x: m(x))
    forward(nnx.Linear(4, 2, rngs=nnx.Rngs(0)), jnp.ones(4))
    forward(nnx.Linear(4, 3, rngs=nnx.Rngs(0)), jnp.ones(4))
    assert [c.words for c in forward.calls[-1].causes] == [
        "`m.out_features` changed: 2 → 3"
    ]
    loss = explain_retraces(_mlp_loss)
    loss(_mlp(), jnp.ones((3, 4)))
    loss(_mlp(width=16), jnp.ones((3, 4)))
    (cause,) = loss.calls[-1].causes
    assert cause.words == (
        "`m.layers[0].out_features` changed: 8 → 16; `m.layers[1].in_features` "
        "changed: 8 → 16; `m.layers[1].out_features` changed: 8 → 16; and 2 more "
        "fields"
    )


def test_a_framework_jit_under_an_outer_transformation_is_not_counted_as_zero():
    """Issue: JAX records no trace event under jax.grad or an outer jax.jit, so
    nnx.jit under jax.grad read as 'compiled again' then 'cache hit', and
    eqx.filter_jit under jax.jit as a 'cache hit', with 0 traces: claims without
    evidence. Such a call is 'not counted', and the totals say so."""
    import equinox as eqx
    from flax import nnx

    times = []
    r = explain_retraces(nnx.jit(noting(times, lambda x: jnp.sum(jnp.sin(x)))))
    g = jax.grad(lambda x: r(x))
    np.testing.assert_allclose(g(jnp.ones(3)), jnp.cos(jnp.ones(3)), rtol=1e-6)
    g(jnp.ones(3))
    assert len(times) == 1  # it did trace, once: the oracle
    assert [c.event for c in r.calls] == ["not counted"] * 2
    assert [c.words for c in r.calls[0].causes] == [
        "not counted: called under an outer transformation (jax.grad, jax.vmap, an "
        "outer jax.jit), where JAX records no trace event, and a framework's jit is "
        "counted only by those"
    ]
    assert r.report.summary.startswith(
        "<lambda>: 2 calls, 0 traces counted (0 retraces), 0 cache hits, "
        "2 not counted (under a transformation);"
    )
    assert "2 calls not counted" in repr(r)
    r3 = explain_retraces(eqx.filter_jit(lambda x: jnp.sum(jnp.tan(x))))
    jax.jit(lambda x: r3(x))(jnp.ones(3))
    assert [c.event for c in r3.calls] == ["not counted"]


def test_eager_ops_of_a_host_callback_are_not_traces_of_a_framework_jit():
    """Issue: every trace event during a call counted, the eager jnp ops a
    pure_callback's host function runs too: three identical calls read 3 traces."""
    import equinox as eqx

    ran, times = [], []

    def host(x):
        ran.append(1)  # a new shape each time: each eager op traces anew
        return np.asarray(jnp.sum(jnp.ones(len(ran) + 10) * x), np.float32)

    def f(x):
        times.append(1)
        return jax.pure_callback(host, jax.ShapeDtypeStruct((), jnp.float32), x)

    r = explain_retraces(eqx.filter_jit(f))
    for _ in range(3):
        r(jnp.float32(1.0))
    assert len(ran) == 3 and r.traces == len(times) == 1
    assert [c.event for c in r.calls] == ["first trace", "cache hit", "cache hit"]


def test_a_plain_jit_under_jax_grad_is_still_counted_by_its_trace():
    """The control: explain_retraces' own jit counts its traces by a side effect,
    which runs under jax.grad too."""
    r = explain_retraces(jax.jit(lambda x: jnp.sum(jnp.cos(x))))
    g = jax.grad(lambda x: r(x))
    g(jnp.ones(3))
    g(jnp.ones(3))
    assert r.traces == 1
    assert [c.event for c in r.calls] == ["first trace", "cache hit"]
