"""diff(f, g): canonical edits with known answers, at every level, and the page it saves.

Each program is written as source text compiled under the name `before.py` or
`after.py`, so the lines a diff names are known in advance: an edit on line 5 must be
reported as `after.py:5` (and `before.py:5`), and nothing else.
"""

import json
import re
import textwrap

import jax
import jax.numpy as jnp
import pytest
from devices import run_with_devices

from jaxtour import Diagram
from jaxtour.tracing import explain_retraces
from jaxtour.viz import ProgramDiff, diff, diff_calls, diff_hint


def program(source: str, file: str, name: str = "f"):
    """The function `name` defined by `source`, its lines numbered from 1 in `file`."""
    namespace = {"jax": jax, "jnp": jnp}
    exec(compile(textwrap.dedent(source), file, "exec"), namespace)
    return namespace[name]


def pair(before: str, after: str):
    return program(before, "before.py"), program(after, "after.py")


X, W = jnp.ones((8, 16)), jnp.ones((16, 4))

MATMUL = """
def f(x, w):
    h = jnp.tanh(x)
    return h @ w
"""
BF16 = """
def f(x, w):
    h = jnp.tanh(x)
    return h.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)
"""


@pytest.fixture(scope="module")
def cast() -> ProgramDiff:
    return diff(*pair(MATMUL, BF16))(X, W)


def test_a_cast_to_bf16_adds_two_converts_on_the_edited_line(cast):
    assert dict(cast.jaxpr.added) == {"convert_element_type": 2}
    assert not cast.jaxpr.removed
    (dot,) = cast.jaxpr.changed
    assert dot.name == "dot_general"
    assert "out: f32[8,4] → bf16[8,4]" in dot.what
    assert cast.jaxpr.lines == ["after.py:4", "before.py:4"]
    assert set(cast.compiled.lines) <= {"after.py:3", "after.py:4", "before.py:3"} | {
        "before.py:4"
    }
    assert not cast.same and not cast.compiled.same


def test_the_text_leads_with_the_edit_and_its_cost(cast):
    text = str(cast)
    first = text.splitlines()[0]
    assert first.startswith("diff f → f: 2 convert_element_type added (after.py:4)")
    assert "FLOPs unchanged" in first  # a bf16 matmul does as many multiply-adds
    assert "dot_general changed on after.py:4, before.py:4" in str(cast.jaxpr)
    assert "Levels:" in text and "By line" in text and "Cost:" in text
    # one line, every level: the equations it wrote and the ops they became
    first = cast.by_line()[0]
    assert first[:3] == [
        "after.py:4",
        "+2 convert_element_type, ~1 dot_general",
        "+2 convert, ~1 dot_general",
    ]
    assert "convert" in first[3]
    assert repr(cast).startswith("ProgramDiff(f → f: differences in jaxpr 2,")


def test_renamed_variables_are_the_same_program():
    before, after = pair(
        "def f(x, w):\n    h = jnp.tanh(x)\n    return h @ w\n",
        "def f(inputs, weights):\n    hidden = jnp.tanh(inputs)\n    return hidden @ weights\n",
    )
    d = diff(before, after)(X, W)
    assert d.same, str(d)
    first = str(d).splitlines()[0]
    assert first == "diff f → f: f and f compile to the same program at every level."


def test_reordered_independent_lines_are_the_same_program():
    before, after = pair(
        "def f(x, w):\n    a = jnp.sin(x)\n    b = jnp.cos(w)\n    return a @ b\n",
        "def f(x, w):\n    b = jnp.cos(w)\n    a = jnp.sin(x)\n    return a @ b\n",
    )
    d = diff(before, after)(X, W)
    assert d.jaxpr.same and d.stablehlo.same and d.compiled.same, str(d)


TEN = """
def f(x):
    x = x + 1.0
    x = x * 2.0
    x = jnp.sin(x)
    x = x - 3.0
    x = x * {}
    x = jnp.exp(x)
    x = x + 4.0
    x = x * 5.0
    x = jnp.cos(x)
    return x / 6.0
"""


@pytest.fixture(scope="module")
def edited() -> ProgramDiff:
    return diff(*pair(TEN.format("0.5"), TEN.format("0.25")))(X)


def test_one_edited_line_among_ten_is_the_only_line_named(edited):
    d = edited
    (mul,) = d.jaxpr.changed
    assert mul.what == ["input 1: 0.5 → 0.25"]
    assert not d.jaxpr.added and not d.jaxpr.removed
    for level in d.levels:  # downstream ops read a changed value but are not changes
        assert level.lines == ["after.py:7", "before.py:7"], str(level)
    assert d.by_line() == [
        ["after.py:7", "~1 mul", "~1 constant", "~1 constant"],
        ["before.py:7", "~1 mul", "~1 constant", "~1 constant"],
    ]


CHAIN = """
def f(ws, x):
    for w in ws:
        x = jnp.tanh(x @ w) * 0.5
    return x
"""
SCALED = """
def f(ws, x):
    ws = [w * 0.5 for w in ws]
    for w in ws:
        x = jnp.tanh(x @ w) * 0.5
    return x
"""


def test_swapped_outputs_are_a_difference_at_every_level():
    # the same ops, returned in the other order: jax.jit(f)(x) != jax.jit(g)(x)
    def f(x):
        return jnp.sin(x), jnp.cos(x)

    def g(x):
        return jnp.cos(x), jnp.sin(x)

    assert not (jax.jit(f)(X)[0] == jax.jit(g)(X)[0]).all()
    d = diff(f, g)(X)
    assert not d.same
    for level in d.levels:
        assert not level.added and not level.removed, str(level)
        assert [c.name for c in level.changed] == ["return"], str(level)
        assert level.changed[0].what == [
            "output 0 now comes from a different value",
            "output 1 now comes from a different value",
        ]
        assert level.ops[0] == level.ops[1]
    # what f returns has no line of its own: its row says so, not "(no line)"
    assert d.by_line() == [["(outputs)", "~1 return", "~1 return", "~1 return"]]


def test_swapped_cond_branches_are_a_difference_in_stablehlo():
    # StableHLO's case branches read the caller's values: only what each returns differs
    def f(x):
        return jax.lax.cond(x[0, 0] > 0, jnp.sin, jnp.cos, x)

    def g(x):
        return jax.lax.cond(x[0, 0] > 0, jnp.cos, jnp.sin, x)

    d = diff(f, g)(X)
    assert not d.jaxpr.same and not d.stablehlo.same and not d.compiled.same, str(d)
    assert "case › return" in {c.name for c in d.stablehlo.changed}


def test_the_same_program_twice_has_no_return_changed():
    d = diff(*pair(MATMUL, MATMUL))(X, W)
    assert d.same and d.jaxpr.ops == (2, 2), str(d)
    assert all("return" not in row[0] for row in d.by_line())


def test_inserted_ops_like_later_ones_pair_with_no_one_else():
    # the three new `w * 0.5` look like the loop's `* 0.5`: only the new ones are named
    d = diff(*pair(CHAIN, SCALED))([jnp.ones((4, 4))] * 3, jnp.ones((2, 4)))
    assert dict(d.jaxpr.added) == {"mul": 3}
    assert dict(d.stablehlo.added) == {
        "constant": 3,
        "broadcast_in_dim": 3,
        "multiply": 3,
    }
    for level in d.levels:
        assert not level.removed and not level.changed, str(level)
        assert level.lines == ["after.py:3"], str(level)


def test_sum_to_mean_adds_one_division():
    before = program("def f(x):\n    return x.sum()\n", "before.py")
    after = program("def f(x):\n    return x.mean()\n", "after.py")
    d = diff(before, after)(X)
    assert dict(d.jaxpr.added) == {"div": 1}
    assert not d.jaxpr.removed and not d.jaxpr.changed
    assert d.jaxpr.lines == ["after.py:2"]


def test_checkpoint_wraps_the_same_equations():
    f = program(MATMUL, "before.py")
    d = diff(f, jax.checkpoint(f))(X, W)
    (wrapper,) = d.jaxpr.added
    assert wrapper in ("checkpoint", "remat", "remat2")
    assert d.jaxpr.added[wrapper] == 1
    assert not d.jaxpr.removed and not d.jaxpr.changed
    assert d.compiled.same  # no gradient: nothing to recompute, XLA drops the wrapper


LOOP = """
def f(c, w):
    for _ in range(3):
        c = jnp.sin(c * w)
    return c
"""
SCAN = """
def f(c, w):
    def body(c, _):
        return jnp.sin(c * w), None
    return jax.lax.scan(body, c, None, length=3)[0]
"""


def test_a_loop_rewritten_as_scan_keeps_one_body():
    d = diff(*pair(LOOP, SCAN))(jnp.ones(256), jnp.ones(256))
    assert dict(d.jaxpr.removed) == {"mul": 3, "sin": 3}
    assert dict(d.jaxpr.added) == {"scan": 1, "mul": 1, "sin": 1}
    assert "after.py:4" in d.jaxpr.lines and "before.py:4" in d.jaxpr.lines
    # the same work: the scan's body is counted once per iteration, as its unrolled twin
    # (its counter's few adds and compares aside)
    assert d.cost["jaxpr flops"][0] == d.cost["jaxpr flops"][1]
    before, after = d.cost["flops"]
    assert after == pytest.approx(before, rel=0.15) and not any(d.loops)


NESTED = """
@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x * {}))

softplus.defjvp(lambda p, t: (softplus(p[0]), t[0] * jax.nn.sigmoid(p[0])))

def f(x):
    return jax.lax.cond(x.sum() > 0, softplus, jnp.cos, x)
"""


def test_an_edit_inside_a_custom_rule_inside_a_cond_is_found_there():
    d = diff(*pair(NESTED.format("1.0"), NESTED.format("2.0")))(jnp.ones(4))
    (mul,) = d.jaxpr.changed
    assert mul.name.startswith("cond › ") and mul.name.endswith("mul")
    assert mul.what == ["input 1: 1.0 → 2.0"]
    assert not d.jaxpr.added and not d.jaxpr.removed
    for level in d.levels:  # XLA folds `x * 1.0` away: the compiled level gains ops
        if level is d.compiled and jax.default_backend() != "cpu":
            continue  # a GPU makes this small cond a select, fused with its branches
        assert level.lines == ["after.py:4", "before.py:4"], str(level)


def test_an_added_matmul_costs_two_m_n_k_flops():
    before = program("def f(x, w):\n    return jnp.tanh(x)\n", "before.py")
    after = program(MATMUL, "after.py")
    d = diff(before, after)(X, W)
    assert dict(d.jaxpr.added) == {"dot_general": 1}
    m, k, n = 8, 16, 4
    for key in ("jaxpr flops", "flops"):  # tanh is a transcendental: 0 FLOPs
        b, a = d.cost[key]
        assert a - b == 2 * m * n * k, key


def test_donation_shows_only_after_lowering():
    f = program("def f(x):\n    return x * 2.0 + 1.0\n", "before.py")
    d = diff(jax.jit(f), jax.jit(f, donate_argnums=0))(X)
    assert d.jaxpr.same and not d.same
    for level in (d.stablehlo, d.compiled):  # the same ops; the module says it aliases
        assert not level.matching.added and not level.matching.removed
        assert not level.matching.changed
    (signature,) = d.stablehlo.module
    assert signature.startswith("main: + {") and "aliasing_output" in signature
    (alias,) = d.compiled.module
    assert alias.startswith("input_output_alias: — → {")
    assert str(d).startswith(
        f"diff f → f: same jaxpr; in StableHLO, module: {signature};"
    )


def test_measure_times_both_programs():
    d = diff(jnp.sin, jnp.cos, measure=True)(jnp.ones(4))
    before, after = d.cost["time"]
    assert before > 0 and after > 0
    assert "time per call (measured)" in str(d)


def test_a_sharding_constraint_on_8_devices():
    reply = run_with_devices(
        """
        import json
        import jax.numpy as jnp
        from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
        from jaxtour.viz import diff

        mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
        def f(x):
            return jnp.sin(x) * 2.0
        def g(x):
            x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("x")))
            return jnp.sin(x) * 2.0
        d = diff(f, g)(jnp.ones((64, 4)))
        print(json.dumps({"added": dict(d.jaxpr.added), "devices": d.devices,
                          "cost": d.cost, "compiled_same": d.compiled.same,
                          "text": str(d)}))
        """
    )
    assert reply["added"] == {"sharding_constraint": 1}
    assert reply["devices"] == [1, 8]
    assert not reply["compiled_same"]
    jaxpr_flops, flops = reply["cost"]["jaxpr flops"][1], reply["cost"]["flops"][1]
    assert flops == jaxpr_flops / 8  # one device's share of an elementwise program
    assert "FLOPs (compiled, per device)" in reply["text"]
    assert "FLOPs (jaxpr, global)" in reply["text"]


def test_draw_puts_the_programs_side_by_side(cast):
    picture = cast.draw()
    assert isinstance(picture, Diagram)
    assert picture.title == "jaxpr: f → f"
    assert "before: f" in picture.source and "after: f" in picture.source
    assert picture.source.count("#E0F2E9") == 2  # the two converts, green
    assert "rank=same" in picture.source
    with pytest.raises(
        ValueError, match='`level` must be "jaxpr", "stablehlo" or "compiled"'
    ):
        cast.draw("hlo")


def test_unchanged_runs_fold(edited):
    source = edited.draw().source
    assert "⋯ 4 unchanged" in source and "⋯ 5 unchanged" in source


def test_one_rich_mime_type(cast):
    assert hasattr(cast, "_repr_html_")
    assert not any(
        hasattr(cast, f"_repr_{k}_") for k in ("svg", "png", "markdown", "json")
    )
    assert "<svg" in cast._repr_html_()


def test_the_saved_page_holds_no_address(cast, tmp_path):
    page = cast.save(tmp_path / "d.html").read_text()
    assert page.startswith("<!doctype html>")
    assert page.count("<svg") == 3  # a drawing per level that differs
    for needle in ("http", "//", "<script", "src=", "@import", "url("):
        assert needle not in page.replace("</", "<"), needle
    assert cast.save(tmp_path / "d.txt").read_text() == str(cast) + "\n"
    assert cast.save(tmp_path / "d.md").read_text().startswith("**diff f → f")
    with pytest.raises(
        ValueError, match=r"ProgramDiff.save\(\) writes .html, .txt or .md"
    ):
        cast.save(tmp_path / "d.svg")


def test_a_retrace_diff_shows_what_the_new_dtype_changed():
    f = explain_retraces(program("def f(x):\n    return (x * 2).sum()\n", "loss.py"))
    f(jnp.ones(4))
    f(jnp.ones(4))  # a cache hit: no program of its own
    f(jnp.ones(4, jnp.int32))
    d = f.report.diff(3)
    assert d.names == ("f (call 1)", "f (call 3)")
    assert [c.name for c in d.jaxpr.changed] == ["mul", "reduce_sum"]
    assert "out: f32[4] → i32[4]" in d.jaxpr.changed[0].what
    assert d.jaxpr.lines == ["loss.py:2"] and not d.jaxpr.added
    with pytest.raises(ValueError, match=r"call 2 of f did not trace .* \[1, 3\]"):
        f.report.diff(2)
    with pytest.raises(ValueError, match="call 1 was f's first trace"):
        f.report.diff(1)


def test_a_checker_can_show_a_student_their_extra_op():
    reference = program("def f(x):\n    return x.mean()\n", "solution.py")
    answer = program("def f(x):\n    return x.sum() / x.size / x.size\n", "cell.py")
    hint = diff_hint(answer, reference)(X)
    assert hint.splitlines() == [
        "Your program, compared with the reference (jaxpr):",
        "  - 1 div added (cell.py:2)",
    ]
    assert diff_hint(reference, reference)(X) == ""


def test_a_hint_takes_a_loop_count_held_static_as_jax_jit_does():
    reference = program(
        "def f(x, n):\n    for _ in range(n):\n        x = x * 2\n    return x\n",
        "ref.py",
    )
    answer = program(
        "def f(x, n):\n    for _ in range(n + 1):\n        x = x * 2\n    return x\n",
        "cell.py",
    )
    hint = diff_hint(answer, reference, static_argnames="n")(X, n=2)
    assert hint.splitlines() == [
        "Your program, compared with the reference (jaxpr):",
        "  - 1 mul added (cell.py:3)",
    ]


def test_bad_input_says_what_to_do():
    with pytest.raises(TypeError, match="diff"):
        diff(jnp.sin, 3)


@pytest.mark.browser
def test_the_saved_page_opens_offline_in_chromium(cast, tmp_path):
    from browser import ARGS, find_chromium
    from playwright.sync_api import sync_playwright

    path = cast.save(tmp_path / "d.html")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=find_chromium(), args=ARGS)
        context = browser.new_context()
        asked = []

        def gate(route):  # the network is closed: only the file itself may load
            asked.append(route.request.url)
            local = route.request.url.startswith("file://")
            route.continue_() if local else route.abort()

        context.route("**/*", gate)
        page = context.new_page()
        page.goto(path.as_uri())
        drawn = page.locator("svg").count()
        text = page.inner_text("body")
        browser.close()
    assert asked == [path.as_uri()]
    assert drawn == 3
    assert "2 convert_element_type added" in text


def test_json_of_the_cost_is_plain(cast):
    json.dumps(cast.cost)  # floats only: a notebook can store it


def test_counts_of_one_read_as_english_and_the_cost_row_says_what_it_counts():
    # the Levels table counts the ops inside fusions; the cost row counts a fusion once
    def one(x):
        return jnp.sin(x)

    d = diff(one, one)(1.0)
    assert str(d.jaxpr) == "jaxpr: the same (1 op each)"
    compiled = jax.jit(one).lower(1.0).compile().as_text()
    entry = compiled.split("ENTRY", 1)[1].split("\n}", 1)[0].splitlines()[1:]
    ops = str(sum(" parameter(" not in line for line in entry))  # a fusion is one
    [row] = [r for r in d.cost_rows() if r[0].startswith("compiled ops")]
    assert row[:3] == ["compiled ops, a fusion once", ops, ops]


SUM = "def f(x):\n    return x.sum()\n"
MEAN = "def f(x):\n    return x.mean()\n"


def test_a_framework_jit_is_diffed_as_the_function_it_wraps():
    import equinox as eqx
    from flax import nnx

    f = program(MEAN, "after.py")
    # nnx.jit(f) lowers to the program jax.jit(f) does; equinox's jit returns an extra
    # output of its own, a jit equation f lacks, but compiles to the same program
    assert diff(nnx.jit(f), f)(X).same and diff(jax.jit(f), f)(X).same
    wrapped = diff(eqx.filter_jit(f), f)(X)
    assert wrapped.compiled.same
    assert wrapped.cost["flops"][0] == wrapped.cost["flops"][1]
    # an edit under nnx.jit is found where it is without one
    plain = diff(*pair(SUM, MEAN))(X)
    for jit in (nnx.jit, eqx.filter_jit):
        d = diff(*(jit(h) for h in pair(SUM, MEAN)))(X)
        assert d.jaxpr.added == plain.jaxpr.added == {"div": 1}
        assert d.jaxpr.lines == plain.jaxpr.lines == ["after.py:2"]
    hint = diff_hint(nnx.jit(f), nnx.jit(program(SUM, "ref.py")))(X)
    assert hint.splitlines()[1] == "  - 1 div added (after.py:2)"
    calls = ((X,), {}), ((X.astype(jnp.int32),), {})
    retyped, oracle = diff_calls(nnx.jit(f), *calls), diff_calls(f, *calls)
    assert retyped.jaxpr.added == oracle.jaxpr.added == {"convert_element_type": 1}


@pytest.mark.parametrize(
    "before, got, fix",
    [
        ((X,), "(f32[8,16],), a tuple of 1", "If these are the positional arguments"),
        (X, "f32[8,16]", "If it is the one positional argument"),
        (((X,),), "((f32[8,16],),), a tuple of 1", "If the kwargs are missing"),
        (
            (X, {}),
            "(f32[8,16], {}), a tuple of 2",
            "If it is the one positional argument",
        ),
    ],
)
def test_diff_calls_says_what_form_before_takes(before, got, fix):
    message = (
        "diff_calls takes `before` as (args, kwargs): a tuple of the call's positional "
        f"arguments and a dict of its keyword ones, ((x,), {{}}) for f(x); got {got}. "
        f"{fix}, pass ((f32[8,16],), {{}})."
    )
    with pytest.raises(TypeError) as caught:
        diff_calls(jnp.sum, before, ((X,), {}))
    assert str(caught.value) == message
    with pytest.raises(TypeError, match=re.escape(message.replace("before", "after"))):
        diff_calls(jnp.sum, ((X,), {}), before)
    # a list of arguments will do
    assert diff_calls(jnp.sum, ([X], {}), ((X,), {})).same


def test_a_replaced_op_is_named_removed_and_added_in_the_headline():
    cos = program("def f(x):\n    return jnp.cos(x)\n", "before.py")
    sin = program("def f(x):\n    return jnp.sin(x)\n", "after.py")
    d = diff(cos, sin)(X)
    assert d.headline() == (
        "1 cos removed (before.py:2), 1 sin added (after.py:2); "
        "FLOPs unchanged, bytes unchanged."
    )
    assert d.report().title.startswith("diff f → f: 1 cos removed (before.py:2), 1 sin")
    # the largest of each (the first of equals): a loop as scan drops 3 mul, adds a scan
    loop = diff(*pair(LOOP, SCAN))(jnp.ones(256), jnp.ones(256)).jaxpr
    ((gone, n), (came, m)) = loop.removed.most_common(1) + loop.added.most_common(1)
    said = f"{n} {gone} removed (before.py:4), {m} {came} added (after.py:5)"
    assert loop.gist() == said
    assert diff(*pair(SUM, MEAN))(X).jaxpr.gist() == "1 div added (after.py:2)"
