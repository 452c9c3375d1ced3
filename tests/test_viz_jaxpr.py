"""draw_jaxpr: node and cluster counts against the jaxpr, source grouping, collapse, errors."""

import inspect
import itertools
import re
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import pytest
from jax.extend import core as jex_core
from jax.sharding import PartitionSpec as P

from jaxtour import Diagram, _palette
from jaxtour.viz import draw_jaxpr


def nodes(d: Diagram, prefix: str) -> list[str]:
    """Ids of the nodes declared with this prefix (eqn, in, out, head, group, ...)."""
    return re.findall(rf"^\s*({prefix}\d+) \[", d.source, re.MULTILINE)


def clusters(d: Diagram) -> list[str]:
    """The labels of the clusters, in order (HTML labels reduced to their text)."""
    attrs = re.findall(r"subgraph cluster_\d+ \{\s*\n([^\n]*)", d.source)
    labels = [re.search(r'label=("[^"]*"|\S+)', line)[1] for line in attrs]
    return [" ".join(label.strip('"').replace("\\n", " ").split()) for label in labels]


def oracle_eqns(jaxpr) -> int:
    """All equations, nested included, walked with JAX's own `jaxprs_in_params`."""
    return sum(
        1 + sum(oracle_eqns(s) for s in jex_core.jaxprs_in_params(e.params))
        for e in jaxpr.eqns
    )


def oracle_leaves(jaxpr) -> int:
    """Equations that hold no jaxpr: the ones drawn as nodes when everything is open."""
    total = 0
    for eqn in jaxpr.eqns:
        subs = list(jex_core.jaxprs_in_params(eqn.params))
        total += sum(oracle_leaves(s) for s in subs) if subs else 1
    return total


def svg_parses(d: Diagram) -> ET.Element:
    root = ET.fromstring(d.svg().encode())
    assert root.tag.endswith("svg")
    return root


def with_cond(x, y):
    return jax.lax.cond(y > 0, lambda a: jnp.sin(a) * 2.0, lambda a: a - 1.0, x)


def with_while(x):
    return jax.lax.while_loop(lambda v: v.sum() < 10.0, lambda v: v * 2.0 + 1.0, x)


def with_scan(x):
    return jax.lax.scan(lambda c, a: (c + a, jnp.exp(c * a)), 0.0, x)


X = jnp.arange(1.0, 4.0)


@pytest.mark.parametrize(
    ("f", "args", "n_clusters"),
    [
        (with_cond, (X, 1.0), 3),  # cond, branch 0, branch 1
        (with_while, (X,), 3),  # while, cond, body
        (with_scan, (X,), 1),
        (lambda x: jnp.cos(jax.jit(lambda y: jax.jit(jnp.sin)(y) + 1.0)(x)), (X,), 2),
    ],
)
def test_every_equation_is_a_node_and_every_nested_jaxpr_a_cluster(f, args, n_clusters):
    jaxpr = jax.make_jaxpr(f)(*args).jaxpr
    d = draw_jaxpr(f, max_depth=None)(*args)
    assert len(nodes(d, "eqn")) == oracle_leaves(jaxpr)
    assert len(clusters(d)) == n_clusters
    assert d.title.endswith(f": {oracle_eqns(jaxpr)} equations")
    svg_parses(d)


def test_cond_clusters_are_labelled_and_the_index_has_its_own_node():
    d = draw_jaxpr(with_cond)(X, 1.0)
    assert clusters(d) == ["cond", "branch 0", "branch 1"]
    assert len(nodes(d, "head")) == 1 and "branch index" in d.source


def test_while_and_scan_clusters_say_what_they_are():
    assert clusters(draw_jaxpr(with_while)(X)) == ["while", "cond", "body"]
    assert clusters(draw_jaxpr(with_scan)(X))[0].startswith("scan length=3")


def test_custom_jvp_relu_is_one_cluster_around_its_jit():
    jaxpr = jax.make_jaxpr(jax.nn.relu)(X).jaxpr
    assert [e.primitive.name for e in jaxpr.eqns] == ["custom_jvp_call"]
    d = draw_jaxpr(jax.nn.relu)(X)
    assert clusters(d) == ["custom_jvp_call › jit: relu"]
    assert len(nodes(d, "eqn")) == oracle_leaves(jaxpr) == 1
    svg_parses(d)


@jax.custom_vjp
def clip_gradient(x):
    return x  # an identity: the custom_vjp body holds no equations


clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))
ONE_DEVICE = jax.make_mesh((1,), ("i",))


@pytest.mark.parametrize(
    ("f", "primitive"),
    [
        (lambda x: jnp.sin(clip_gradient(x)), "custom_vjp_call"),
        (lambda x: jax.checkpoint(lambda v: jnp.sin(jnp.sin(v)))(x) * 2.0, "remat"),
        (
            jax.shard_map(
                lambda b: jnp.cos(b) * 2.0, mesh=ONE_DEVICE, in_specs=P(), out_specs=P()
            ),
            "shard_map",
        ),
    ],
)
def test_custom_vjp_remat_and_shard_map_bodies_are_drawn_clusters(f, primitive):
    jaxpr = jax.make_jaxpr(f)(X).jaxpr
    assert any(e.primitive.name.startswith(primitive) for e in jaxpr.eqns)
    d = draw_jaxpr(f, max_depth=None)(X)
    assert len(clusters(d)) == 1 and clusters(d)[0].startswith(primitive)
    assert len(nodes(d, "eqn")) == oracle_leaves(jaxpr)
    # the cluster reaches the picture (Graphviz silently drops an empty one)
    assert ET.tostring(svg_parses(d)).decode().count('class="cluster"') == 1


def test_gelu_and_vmap_draw_one_node_per_equation():
    for f in (jax.nn.gelu, jax.vmap(lambda w, v: jnp.tanh(w @ v))):
        args = (X,) if f is jax.nn.gelu else (jnp.ones((5, 3, 3)), jnp.ones((5, 3)))
        jaxpr = jax.make_jaxpr(f)(*args).jaxpr
        d = draw_jaxpr(f)(*args)
        assert len(nodes(d, "eqn")) == oracle_leaves(jaxpr) == oracle_eqns(jaxpr)
        assert clusters(d) == []
        svg_parses(d)
    assert "contract 2·1 batch 0·0" in d.source


def test_max_depth_collapses_nested_jaxprs_into_counted_nodes():
    jaxpr = jax.make_jaxpr(with_while)(X).jaxpr
    d = draw_jaxpr(with_while, max_depth=0)(X)
    assert clusters(d) == []
    assert len(nodes(d, "eqn")) == len(jaxpr.eqns) == 1
    assert f"{oracle_eqns(jaxpr) - 1} equations inside" in d.source
    svg_parses(d)
    one = draw_jaxpr(lambda x: jax.jit(jnp.sin)(x) * 2.0, max_depth=0)(X)
    assert "1 equation inside" in one.source and "1 equations" not in one.source


def test_inputs_outputs_literals_and_edges_are_labelled():
    def loss(w, x):
        return jnp.sum((x @ w - 1.0) ** 2)

    d = draw_jaxpr(loss)(jnp.ones((3, 2)), jnp.ones((4, 3)))
    assert len(nodes(d, "in")) == 2 and len(nodes(d, "out")) == 1
    assert 'label="w\\nf32[3,2]"' in d.source and 'label="result\\nf32[]"' in d.source
    assert "(·, 1.0)" in d.source  # the literal of `- 1.0`, inline
    assert re.search(r"-> eqn\d+ \[label=\"f32\[4,2\]\"\]", d.source)
    assert _palette.FAMILIES["matmul"].fill in d.source
    assert re.search(r'legend\d+ \[label="matmul / contraction"', d.source)


def test_a_jitted_function_is_drawn_as_its_body():
    plain, jitted = (
        draw_jaxpr(with_cond)(X, 1.0),
        draw_jaxpr(jax.jit(with_cond))(X, 1.0),
    )
    assert plain.title.replace("with_cond", "") == jitted.title.replace("with_cond", "")
    assert len(nodes(plain, "eqn")) == len(nodes(jitted, "eqn"))


def test_unused_results_are_marked():
    d = draw_jaxpr(lambda x: jax.grad(lambda y: jnp.sum(jax.nn.relu(y)))(x))(X)
    assert "result unused" in d.source


def two_lines(x):
    y = jnp.sin(x) * 2.0  # LINE-A
    return jnp.cos(y) + y.sum()  # LINE-B


def test_group_by_source_makes_one_cluster_per_line_of_code():
    lines, start = inspect.getsourcelines(two_lines)
    expected = {
        f"test_viz_jaxpr.py:{start + i}"
        for i, line in enumerate(lines)
        if "LINE-" in line
    }
    d = draw_jaxpr(two_lines, group_by="source")(X)
    labels = clusters(d)
    assert {label.split()[0] for label in labels} == expected
    assert "jnp.sin(x) * 2.0" in labels[0]
    jaxpr = jax.make_jaxpr(two_lines)(X).jaxpr
    assert len(nodes(d, "eqn")) == len(jaxpr.eqns)
    svg_parses(d)


def many_equations(x):
    for _ in range(250):
        x = jnp.sin(x) * 1.01
        x = x + jnp.cos(x)
    return x


def test_a_thousand_equations_collapse_to_source_lines_and_say_so():
    d = draw_jaxpr(many_equations)(1.0)
    assert d.title == (
        "jaxpr of many_equations: 1000 equations "
        "(collapsed: one node per source line, 2 lines)"
    )
    assert len(nodes(d, "group")) == 2 and nodes(d, "eqn") == []
    assert "500 equations: sin×250, mul×250" in d.source
    svg_parses(d)


def test_without_source_lines_a_big_program_collapses_into_chunks():
    d = draw_jaxpr(many_equations, max_eqns=1)(1.0)  # two lines are still too many
    assert d.title.endswith("(collapsed: one node per 25 equations)")
    source = (
        "def g(x):\n"
        + "".join(f"    x = x * {i}.0 + 1.0\n" for i in range(300))
        + "    return x\n"
    )
    namespace: dict = {}
    exec(source, namespace)
    d = draw_jaxpr(namespace["g"], max_eqns=100)(1.0)
    assert "collapsed: one node per 15 equations" in d.title
    assert len(nodes(d, "group")) == 40


def test_chunks_name_the_top_level_equations_they_hold():
    def loop(x):  # each pass: sin, mul and a loop with equations nested in it
        for _ in range(60):
            x = jnp.sin(x) * 2.0
            x = jax.lax.fori_loop(0, 3, lambda _, c: jnp.cos(c) + c * 2.0 - 1.0, x)
        return x

    jaxpr = jax.make_jaxpr(loop)(1.0).jaxpr
    d = draw_jaxpr(loop, max_eqns=1)(1.0)  # three source lines are still too many
    heads = re.findall(r"equations (\d+)–(\d+)(?: and (\d+) nested in them)?", d.source)
    spans = [(int(a), int(b)) for a, b, _ in heads]
    assert spans[0][0] == 1 and spans[-1][1] == len(jaxpr.eqns)
    assert all(b + 1 == c for (_, b), (c, _) in itertools.pairwise(spans))  # no overlap
    nested = [
        sum(
            oracle_eqns(s)
            for e in jaxpr.eqns[a - 1 : b]
            for s in jex_core.jaxprs_in_params(e.params)
        )
        for a, b in spans
    ]
    assert [int(n or 0) for *_, n in heads] == nested


# --- bad input -----------------------------------------------------------------------------


def test_a_non_callable_is_named():
    with pytest.raises(
        TypeError, match=r"draw_jaxpr needs a function .*got 'loss' \(str\)"
    ):
        draw_jaxpr("loss")


@pytest.mark.parametrize("held", ["abc", object(), None])
def test_arguments_jax_cannot_trace_are_held_fixed(held):
    """As eqx.filter_jit: a string or an object is a constant of the trace."""
    d = draw_jaxpr(lambda x, y: jnp.sin(x))(X, held)
    assert len(nodes(d, "eqn")) == 1


def test_static_argnums_make_a_string_argument_fine():
    d = draw_jaxpr(lambda x, how: jnp.sin(x) if how == "sin" else x, static_argnums=1)(
        X, "sin"
    )
    assert len(nodes(d, "eqn")) == 1


def test_the_functions_own_error_is_not_swallowed():
    def broken(x):
        if x.shape[0] > 2:
            raise ValueError("x is too long for broken()")
        return x

    with pytest.raises(ValueError, match="too long for broken") as info:
        draw_jaxpr(broken)(X)
    assert any("draw_jaxpr traced broken(f32[3])" in n for n in info.value.__notes__)


def test_a_tracer_error_is_jax_own():
    def branchy(x):
        return x if x.sum() > 0 else -x

    with pytest.raises(jax.errors.TracerBoolConversionError):
        draw_jaxpr(branchy)(X)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"rankdir": "up"},
            r"`rankdir` must be one of \"TB\" \(top to bottom\), \"LR\" \(left "
            r"to right\), \"BT\" or \"RL\"; got 'up'",
        ),
        ({"max_depth": -1}, r"`max_depth` must be a whole number >= 0 .* got -1"),
        (
            {"group_by": "line"},
            r'`group_by` must be "auto", "code" .* "source" .* or None .* got \'line\'',
        ),
        ({"max_eqns": 0}, r"`max_eqns` must be a positive whole number; got 0"),
    ],
)
def test_bad_options_are_refused_before_tracing(options, message):
    with pytest.raises(ValueError, match=message):
        draw_jaxpr(jnp.sin, **options)


@pytest.mark.parametrize("renderer", ["embedded", "system"])
def test_both_renderers_show_the_labels_not_the_node_ids(renderer, monkeypatch):
    from jaxtour import _render

    if renderer == "system" and _render.system_dot() is None:
        pytest.skip("no system `dot` here")
    monkeypatch.setenv("JAXTOUR_RENDERER", renderer)
    texts = [
        t.text or ""
        for t in svg_parses(draw_jaxpr(with_cond)(X, 1.0)).iter()
        if t.tag.endswith("text")
    ]
    assert {"sin", "branch index", "x", "result"} <= set(texts)
    assert not [t for t in texts if re.fullmatch(r"(eqn|in|out|head)\d+", t)]


def test_titles_say_what_was_drawn():
    def f(x):
        return jnp.sin(x) * 2.0

    assert draw_jaxpr(jax.grad(f))(1.0).title.startswith("jaxpr of grad of f: ")
    assert draw_jaxpr(jax.vmap(f))(X).title.startswith("jaxpr of vmap of f: ")
    assert draw_jaxpr(f, group_by="source")(1.0).title == (
        "jaxpr of f: 2 equations, grouped by source line"
    )


def test_pvary_is_not_drawn_as_communication():
    assert _palette.family("pvary") != "collective"
    assert _palette.family("psum") == "collective"


def test_a_scan_carry_is_drawn_as_a_loop():
    def cumulative(xs):
        def body(carry, x):
            carry = carry * 0.9 + x
            return carry, carry

        return jax.lax.scan(body, 0.0, xs)[1]

    d = draw_jaxpr(cumulative)(jnp.arange(4.0))
    carries = re.findall(r"^\s*carry\d+ \[", d.source, flags=re.M)
    assert len(carries) == 1  # one carried value, one carry node
    back = [line for line in d.source.splitlines() if "next iteration" in line]
    assert len(back) == 1 and "constraint=false" in back[0] and "dashed" in back[0]
    svg_parses(d)


# fmt: off
def continued(x):
    y = jnp.sin(x) + \
        jnp.cos(x)
    return y * len("\\n")  # C:\new
# fmt: on


def test_a_line_of_code_is_the_tooltip_whatever_backslashes_it_holds():
    # a line continued with `\` once ended its DOT string in `\"`: Graphviz refused it
    root = svg_parses(draw_jaxpr(continued)(1.0))
    tips = {
        " ".join(a.get("{http://www.w3.org/1999/xlink}title", "").split())
        for a in root.iter("{http://www.w3.org/2000/svg}a")
    }
    lines = inspect.getsourcelines(continued)[1]
    assert tips == {
        f"test_viz_jaxpr.py:{lines + 1} (continued) y = jnp.sin(x) + \\",
        f"test_viz_jaxpr.py:{lines + 2} (continued) jnp.cos(x)",
        f'test_viz_jaxpr.py:{lines + 3} (continued) return y * len("\\\\n") # C:\\new',
    }
