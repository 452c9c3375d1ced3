"""explain_retraces: each cause provoked and named, no false retrace, stale reads."""

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

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
        "explain_retraces: the static argument `n` is [1, 2] (list), which jax.jit "
        "cannot hash. Pass a tuple instead of a list (or a frozen dataclass instead "
        "of a dict), or make it a traced argument."
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
