"""step_through: values vs jax.jit and a float64 NumPy oracle, nested jaxprs."""

import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.tracing import step_through


def layer(x, w, b):
    h = x @ w + b
    return jnp.tanh(h).sum()


def by_primitive(steps, name):
    return [s for s in steps if s.primitive == name]


def test_final_values_equal_jit_and_the_numpy_oracle(full_float32):
    rng = np.random.default_rng(0)
    x, w, b = (rng.normal(size=s).astype(np.float32) for s in ((4, 3), (3, 5), (5,)))
    steps = step_through(layer)(x, w, b)
    np.testing.assert_allclose(steps.outputs, jax.jit(layer)(x, w, b), rtol=1e-6)
    x64, w64, b64 = (a.astype(np.float64) for a in (x, w, b))
    (dot,) = by_primitive(steps, "dot_general")
    np.testing.assert_allclose(dot.outputs[0], x64 @ w64, rtol=1e-5, atol=1e-6)
    (tanh,) = by_primitive(steps, "tanh")
    np.testing.assert_allclose(
        tanh.outputs[0], np.tanh(x64 @ w64 + b64), rtol=1e-5, atol=1e-6
    )
    assert tanh.line.code == "return jnp.tanh(h).sum()"
    assert [s.index for s in steps] == list(range(len(steps)))


def inner(x):
    return jnp.exp(x) - 1.0


def nested(x, flag):
    y = jax.jit(inner)(x)  # stepped inside: one scope "inner"
    y = jax.lax.cond(flag, lambda a: jnp.sin(a), lambda a: a * 3.0, y)
    y = jax.nn.relu(y)  # a custom_jvp: its primal stepped inside
    carry, ys = jax.lax.scan(lambda c, a: (c + a, c * a), 0.0, y)  # one step
    return carry + ys.sum()


@pytest.mark.parametrize("flag", [True, False])
def test_nested_jaxprs_are_stepped_inside_except_loops(flag):
    x = jnp.array([-1.0, 0.5, 2.0])
    steps = step_through(nested)(x, flag)
    np.testing.assert_allclose(steps.outputs, jax.jit(nested)(x, flag), rtol=1e-6)
    prims = [s.primitive for s in steps]
    assert "jit" not in prims and "pjit" not in prims and "custom_jvp_call" not in prims
    assert prims.count("scan") == 1 and prims.count("cond") == 1
    (exp,) = by_primitive(steps, "exp")
    assert exp.scope == ("inner",)
    np.testing.assert_allclose(
        exp.outputs[0], np.exp(np.asarray(x, np.float64)), rtol=1e-6
    )
    taken = "cond branch 1" if flag else "cond branch 0"  # cond's index: False is 0
    branch = [s for s in steps if taken in s.scope]
    assert [s.primitive for s in branch] == (["sin"] if flag else ["mul"])
    assert not any(
        "cond branch" in " ".join(s.scope) and s not in branch for s in steps
    )
    y = np.exp(np.asarray(x, np.float64)) - 1.0
    y = np.maximum(np.sin(y) if flag else y * 3.0, 0.0)
    (relu,) = by_primitive(steps, "max")
    np.testing.assert_allclose(relu.outputs[0], y, rtol=1e-5)


def test_static_arguments_keywords_and_pytrees():
    def f(params, n, *, scale):
        return {"y": params["w"] * n * scale}

    steps = step_through(f, static_argnums=1)({"w": jnp.arange(3.0)}, 4, scale=0.5)
    np.testing.assert_allclose(steps.outputs["y"], [0.0, 2.0, 4.0])
    assert [s.primitive for s in steps] == ["mul", "convert_element_type", "mul"]
    assert float(steps[0].inputs[1]) == 4.0  # the static n, a literal of the jaxpr


def test_picture_shows_values_source_lines_and_progress():
    x = jnp.array([[1.0, 2.0], [3.0, 4.0]])
    steps = step_through(lambda x: jnp.sin(x) * 2.0)(x)
    full = steps.diagram()
    assert full.title == "<lambda> step by step: 2 equations"
    assert full.counts[0] == 2 + 1 + 1 + 1  # 2 steps, 1 legend swatch, input, output
    source = full.source
    assert "f32[2,2] min 1 max 4 mean 2.5" in source
    line = (
        Path(__file__)
        .read_text()
        .splitlines()
        .index("    steps = step_through(lambda x: jnp.sin(x) * 2.0)(x)")
        + 1
    )
    assert f"test_tracing_steps.py:{line}" in source
    half = steps.diagram(upto=0)
    assert half.title.startswith("<lambda>: step 0 of 2, sin at test_tracing_steps.py")
    after = re.search(
        r'step1 \[label="([^"]*)"[^\n]*style="rounded,dashed"', half.source
    )
    assert after[1] == f"1: mul\\ntest_tracing_steps.py:{line}"  # not run yet: no value
    assert 'out0 [label="out0\\nf32[2,2]"' in half.source
    assert half.svg().lstrip().startswith("<?xml")
    assert repr(steps) == "Steps('<lambda>': 2 steps, 1 output)"
    lines = str(steps).splitlines()
    assert lines[0] == repr(steps) and lines[2].split() == [
        "step",
        "primitive",
        "result",
        "line",
    ]
    assert [line.split()[:2] for line in lines[4:]] == [["0", "sin"], ["1", "mul"]]


def test_a_2d_value_gets_a_heatmap_of_its_blocks():
    x = np.arange(24.0).reshape(4, 6)  # rows rise by 6, columns by 1
    steps = step_through(lambda x: x * 2.0)(jnp.asarray(x, jnp.float32))
    # An independent oracle: 3 x 6 block means of 2x, scaled from min to max, 4 levels.
    bands = [b.mean(axis=0) for b in np.array_split(2 * x, 3, axis=0)]
    means = np.stack(bands)
    levels = np.minimum(((means - means.min()) / np.ptp(means) * 4).astype(int), 3)
    expected = ["".join("░▒▓█"[k] for k in row) for row in levels]
    assert expected[0][0] == "░" and expected[-1][-1] == "█"
    label = re.search(r'step0 \[label="([^"]*)"', steps.diagram().source)[1]
    assert label.split("\\n")[2:5] == expected
    vector = step_through(lambda v: v * 2.0)(jnp.ones(5))
    assert not re.search("[░▒▓█]", vector.diagram().source)  # 1-D: no heatmap


def test_bad_inputs():
    with pytest.raises(TypeError) as err:
        step_through("sin")
    assert str(err.value) == (
        "step_through needs a function to trace, as jax.make_jaxpr does; "
        "got 'sin' (str). Pass the function itself, "
        "then call the result with example arguments: "
        "step_through(loss)(params, batch)."
    )
    # A string is held fixed (as eqx.filter_jit); jnp.sin refuses it, as in plain JAX.
    with pytest.raises(TypeError, match=r"Error interpreting argument to .*sin") as err:
        step_through(jnp.sin)("x")
    assert "(raised while step_through traced sin(str))" in err.value.__notes__
    with pytest.raises(
        ValueError, match=r'step_through: `rankdir` must be one of "TB"'
    ):
        step_through(jnp.sin, rankdir="up")


def test_typed_keys_are_shown_as_their_key_data():
    def sample(key, x):
        k1, _ = jax.random.split(key)
        return jax.random.normal(k1, x.shape) * x

    key = jax.random.key(0)
    steps = step_through(sample)(key, jnp.ones(3))
    source = steps.diagram().source
    data = " ".join(str(v) for v in jax.random.key_data(key).tolist())
    assert (
        f"key&lt;fry&gt;[] key data {data}" in source
        or f"key<fry>[] key data {data}" in source
    )
    np.testing.assert_allclose(steps.outputs, sample(key, jnp.ones(3)))


def test_a_ref_argument_is_read_and_written_as_jit_does():
    def accumulate(ref, x):
        ref[...] = ref[...] + x
        return ref[...] * 2

    mine, theirs = jax.ref.new_ref(jnp.ones(2)), jax.ref.new_ref(jnp.ones(2))
    steps = step_through(accumulate)(mine, 1.0)
    expected = jax.jit(accumulate)(theirs, 1.0)
    assert steps.outputs.tolist() == expected.tolist() == [4.0, 4.0]
    assert mine[...].tolist() == theirs[...].tolist() == [2.0, 2.0]
    swap = next(s for s in steps if s.primitive == "swap")
    assert swap.inputs[0].tolist() == [1.0, 1.0]  # the Ref as it was before the write
    assert "swap" in str(steps) and "<svg" in steps.diagram().svg()


@pytest.mark.parametrize(
    "option, value, error, words",
    [
        (
            "upto",
            "2",
            TypeError,
            "`upto` is a step's index, an int from 0 to 1; got '2' (str).",
        ),
        (
            "upto",
            0.5,
            TypeError,
            "`upto` is a step's index, an int from 0 to 1; got 0.5 (float).",
        ),
        (
            "highlight",
            2,
            ValueError,
            "`highlight`=2 is not a step of layer2: 2 steps, so highlight is an int "
            "from 0 to 1.",
        ),
        (
            "upto",
            -1,
            ValueError,
            "`upto`=-1 is not a step of layer2: 2 steps, so upto is an int from 0 to 1.",
        ),
    ],
)
def test_a_step_that_is_not_one_is_refused_with_the_steps_there_are(
    option, value, error, words
):
    def layer2(x):
        return jnp.sin(x) * 2.0

    steps = step_through(layer2)(1.0)
    assert len(steps) == 2
    with pytest.raises(error) as err:
        steps.diagram(**{option: value})
    assert str(err.value) == f"step_through: {words}"
    assert steps.diagram(upto=np.int64(1)).source == steps.diagram(upto=1).source


# fmt: off
def continued(x):
    y = jnp.sin(x) + \
        jnp.cos(x)
    return y  # C:\new
# fmt: on


def test_a_step_s_tooltip_is_its_line_as_written_whatever_backslashes_it_holds():
    # a line continued with `\` once ended its DOT string in `\"`: Graphviz refused it
    import inspect
    import xml.etree.ElementTree as ET

    root = ET.fromstring(step_through(continued)(1.0).diagram().svg())
    tips = {
        " ".join(a.get("{http://www.w3.org/1999/xlink}title", "").split())
        for a in root.iter("{http://www.w3.org/2000/svg}a")
    }
    first = inspect.getsourcelines(continued)[1]
    assert f"test_tracing_steps.py:{first + 1} (continued) y = jnp.sin(x) + \\" in tips
    assert f"test_tracing_steps.py:{first + 2} (continued) jnp.cos(x)" in tips


def test_outputs_the_jaxpr_holds_as_literals_are_arrays_as_jit_returns():
    """`lambda x: (3.0, 2, ...)` returns literals of the jaxpr: outputs gives the
    arrays jit gives (dtype, weak type), not JAX's literal types NumPy reads as 64-bit."""

    def f(x):
        return 3.0, 2, jnp.float32(2.0), x

    x = jnp.ones(3)
    got, want = step_through(f)(x).outputs, jax.jit(f)(x)
    assert all(isinstance(leaf, jax.Array) for leaf in got)
    assert [jax.typeof(leaf) for leaf in got] == [jax.typeof(leaf) for leaf in want]
    assert [np.asarray(leaf).dtype for leaf in got] == [np.float32, np.int32] + [
        np.float32
    ] * 2
