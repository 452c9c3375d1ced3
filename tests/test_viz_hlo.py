"""draw_hlo: fusion boxes, collectives, source lines and XLA's figures; bad input."""

import inspect
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import pytest

from jaxtour import Diagram, _palette
from jaxtour.viz import compare_stages, draw_hlo


def cluster_labels(d: Diagram) -> list[str]:
    attrs = re.findall(r"subgraph cluster_\d+ \{\s*\n([^\n]*)", d.source)
    return [re.search(r'label=("[^"]*"|\S+)', line)[1].strip('"') for line in attrs]


def op_labels(d: Diagram) -> list[str]:
    return re.findall(r'^\s*op\d+ \[label="([^"]*)"', d.source, re.MULTILINE)


def entry_lines(compiled_text: str) -> list[str]:
    """The ENTRY computation's lines, read without jaxtour (the oracle)."""
    entry = compiled_text[compiled_text.index("\nENTRY") :]
    return entry[: entry.index("\n}")].splitlines()[1:]


def layer(w, x):
    return jnp.tanh(x @ w) * 2.0 + 1.0  # MARK-LAYER


W, XS = jnp.ones((8, 16)), jnp.ones((4, 8))


def _line(marker: str) -> int:
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    return next(
        i for i, text in enumerate(lines, 1) if marker in text and "_line(" not in text
    )


def test_compiled_fusions_are_boxes_holding_their_ops():
    compiled = jax.jit(layer).lower(W, XS).compile().as_text()
    oracle = sum(1 for line in entry_lines(compiled) if re.search(r"\sfusion\(", line))
    d = draw_hlo(layer)(W, XS)
    fusion_boxes = [label for label in cluster_labels(d) if label.startswith("fusion ")]
    assert oracle >= 1 and len(fusion_boxes) == oracle
    assert f"{oracle} fusion{'s' * (oracle != 1)}" in d.title
    assert any(label.startswith(("tanh", "multiply", "add")) for label in op_labels(d))
    ET.fromstring(d.svg().encode())


def test_title_and_subtitle_give_counts_and_xla_figures():
    d = draw_hlo(layer)(W, XS)
    assert d.title.startswith(f"compiled HLO of layer ({jax.default_backend()}): ")
    flops = jax.jit(layer).lower(W, XS).compile().cost_analysis()
    flops = (flops[0] if isinstance(flops, list) else flops)["flops"]
    assert flops >= 2 * 4 * 8 * 16
    assert "FLOP" in d.source and "B accessed" in d.source and "temp memory" in d.source
    inside = compare_stages(layer)(W, XS).fused.total()
    assert f"{inside} op{'s' * (inside != 1)} inside the fusions" in d.source


def test_nodes_carry_source_lines_and_jaxpr_primitives():
    d = draw_hlo(layer)(W, XS)
    line = f"test_viz_hlo.py:{_line('MARK-LAYER')}"
    labels = op_labels(d)
    assert any(line in label for label in labels)
    assert any("from dot_general" in label for label in labels) or any(
        label.startswith("dot_general") for label in labels
    )


def test_a_long_source_and_primitive_pair_takes_two_lines():
    # Issue 22: "file.py:157 · from while" on one line made rows of copies too wide.
    rows = [label.split("\\n") for label in op_labels(draw_hlo(layer)(W, XS))]
    where = f"test_viz_hlo.py:{_line('MARK-LAYER')}"
    paired = [r for r in rows if where in r and any(x.startswith("from ") for x in r)]
    assert paired, rows
    assert all(len(x) <= 32 for r in rows for x in r if " · " in x)


def test_stablehlo_stage_draws_ops_before_fusion():
    lowered_text = jax.jit(layer).lower(W, XS).as_text()
    constants = set(re.findall(r"(%\w+) = stablehlo\.constant", lowered_text))
    # a broadcast of a constant is a constant array too: not drawn
    broadcasts = [
        line
        for line in lowered_text.splitlines()
        if re.search(r"= stablehlo\.broadcast_in_dim (%\w+)", line)
    ]
    folded = [
        b
        for b in broadcasts
        if re.search(r"broadcast_in_dim (%\w+)", b)[1] in constants
    ]
    oracle = sum(
        1
        for line in lowered_text.splitlines()
        if re.search(r"= stablehlo\.(?!constant)", line)
    ) - len(folded)
    assert len(folded) == 2  # `* 2.0` and `+ 1.0`
    d = draw_hlo(layer, stage="stablehlo")(W, XS)
    assert d.title.startswith("StableHLO of layer")
    assert not [label for label in cluster_labels(d) if label.startswith("fusion")]
    assert len(op_labels(d)) == oracle
    assert {"dot_general", "tanh", "multiply", "add"} <= {
        label.split("\\n")[0] for label in op_labels(d)
    }


def control(x, y):
    z = jax.lax.cond(y > 0, lambda a: jnp.sin(a), lambda a: jnp.cos(a) * 2.0, x)
    return jax.lax.fori_loop(0, 3, lambda i, v: v * 1.5 + z, z)


def test_a_jitted_function_counts_as_its_own_lowering():
    # the oracle: the module `step.lower(...)` prints, not one with the lens's own
    # jax.jit wrapped around it (a `call` more, and the jaxpr a `jit` equation more)
    from jaxtour.viz import draw_pipeline

    step = jax.jit(layer)
    text = step.lower(W, XS).as_text()
    oracle = sum(
        1
        for line in text.splitlines()
        if "stablehlo." in line
        and "stablehlo.return" not in line
        and "=" in line.split("stablehlo.")[0]
    )
    assert " call @" not in text
    title = draw_hlo(step, stage="stablehlo")(W, XS).title
    assert re.search(r": (\d+) ops", title)[1] == str(oracle), title
    comparison = compare_stages(step)(W, XS)
    assert comparison.stablehlo_ops == oracle
    eqns = len(step.trace(W, XS).jaxpr.eqns)
    assert comparison.jaxpr_eqns == eqns
    assert (
        f"{eqns} equations, {oracle} StableHLO ops" in draw_pipeline(step)(W, XS).title
    )


@pytest.mark.parametrize("stage", ["stablehlo", "compiled"])
def test_loops_and_branches_are_clusters(stage):
    d = draw_hlo(control, stage=stage, max_depth=None)(jnp.ones(3), 1.0)
    labels = cluster_labels(d)
    branches = True  # StableHLO keeps the cond; XLA may make a small one a select (GPU)
    if stage == "compiled":
        compiled = jax.jit(control).lower(jnp.ones(3), 1.0).compile().as_text()
        branches = " conditional(" in compiled
        assert branches or jax.default_backend() != "cpu"
    assert ({"branch 0", "branch 1"} <= set(labels)) == branches
    assert any(label.startswith("while") for label in labels)
    heads = re.findall(r"head\d+ \[label=\"branch index\"", d.source)
    assert len(heads) == int(branches)
    ET.fromstring(d.svg().encode())


def test_a_big_program_collapses():
    def many(x):
        for _ in range(300):
            x = jnp.sin(x) + 1.0
        return x

    d = draw_hlo(many, stage="stablehlo")(1.0)
    assert "(collapsed: one node per source line" in d.title
    assert len(re.findall(r"^\s*group\d+ \[", d.source, re.MULTILINE)) <= 4
    compiled = draw_hlo(many)(1.0)
    assert "1 fusion" in compiled.title
    assert "(collapsed: fusions and calls closed)" in compiled.title


def test_collectives_stand_out(tmp_path):
    script = textwrap.dedent("""
        import os, sys
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
        import jax, jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        from jaxtour.viz import draw_hlo
        mesh = jax.make_mesh((4,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
        f = jax.shard_map(lambda a: jax.lax.psum(a, "i") * 2.0, mesh=mesh,
                          in_specs=P("i"), out_specs=P("i"))
        d = draw_hlo(f)(jnp.arange(8.0))
        print(d.title)
        open(sys.argv[1], "w").write(d.source)
    """)
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "g.dot")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )
    assert out.returncode == 0, out.stderr
    assert "1 collective" in out.stdout
    source = (tmp_path / "g.dot").read_text()
    node = re.search(r'op\d+ \[label="all-reduce[^\n]*', source)[0]
    assert "penwidth=3" in node and _palette.FAMILIES["collective"].fill in node


# --- bad input -----------------------------------------------------------------------------


def test_an_unknown_stage_is_named_with_the_choices():
    with pytest.raises(
        ValueError,
        match=r'`stage` must be "stablehlo" \(what JAX hands XLA, '
        r'before optimisation\) or "compiled" .*got '
        r"'optimised'",
    ):
        draw_hlo(layer, stage="optimised")


def test_stage_aliases():
    assert draw_hlo(layer, stage="lowered")(W, XS).title.startswith("StableHLO")


def test_a_non_callable_and_untraceable_arguments_are_named():
    with pytest.raises(
        TypeError, match=r"draw_hlo needs a function .*got None \(NoneType\)"
    ):
        draw_hlo(None)
    # A string is held fixed, as eqx.filter_jit holds it; `@` refuses it, as in JAX.
    with pytest.raises(TypeError, match="unsupported operand") as err:
        draw_hlo(layer)("w", XS)
    assert "(raised while draw_hlo traced layer(str, f32[4,8]))" in err.value.__notes__


def test_the_functions_own_error_propagates():
    def wrong_shapes(w, x):
        return w @ x  # (8, 16) @ (4, 8) cannot multiply

    with pytest.raises(
        TypeError, match="dot_general requires contracting dimensions"
    ) as info:
        draw_hlo(wrong_shapes)(W, XS)
    assert any(
        "draw_hlo traced wrong_shapes(f32[8,16], f32[4,8])" in note
        for note in info.value.__notes__
    )


def test_the_mlp_training_step_is_drawn_open_with_every_fusion_boxed():
    from jaxtour.mlp import example_batch, init_params, update

    params, (x, y) = init_params(jax.random.key(0), (16, 8, 10)), example_batch(4)
    args = (params, x[:, :16], y)
    d = draw_hlo(update)(*args)
    assert "collapsed" not in d.title
    n = compare_stages(update)(*args).compiled["fusion"]
    assert (
        len([label for label in cluster_labels(d) if label.startswith("fusion ")]) == n
    )


def test_sharding_constraints_are_short_boxes_under_an_explicit_mesh():
    # Under `jax.set_mesh` JAX follows every op with a constraint: each a small box
    # (its type only), the op above it says where in the source it comes from.
    mesh = jax.make_mesh((1,), ("x",), axis_types=(jax.sharding.AxisType.Explicit,))
    with jax.set_mesh(mesh):
        x = jax.device_put(jnp.ones(4), jax.P("x"))
        lowered = jax.jit(lambda x: jnp.sin(x) * 2).lower(x).as_text()
        d = draw_hlo(lambda x: jnp.sin(x) * 2, stage="stablehlo")(x)
    oracle = lowered.count("sdy.sharding_constraint")
    boxes = [label for label in op_labels(d) if "sharding_constraint" in label]
    assert oracle >= 1 and len(boxes) == oracle
    assert all(label == "sharding_constraint\\nf32[4]" for label in boxes), boxes


def test_a_program_whose_locations_keep_only_library_frames_draws_flat():
    # JAX_TRACEBACK_IN_LOCATIONS_LIMIT=1 (the suite's subprocesses, and users who trim
    # their dumps) leaves each op the innermost frame only: a library's, for jax.nn.relu.
    # No op names the user's code, so nothing is nested (it raised on min() of nothing).
    limit = jax.config.jax_traceback_in_locations_limit
    jax.config.update("jax_traceback_in_locations_limit", 1)
    try:
        d = draw_hlo(jax.nn.relu, max_depth=0)(jnp.ones((4, 8)))
    finally:
        jax.config.update("jax_traceback_in_locations_limit", limit)
    assert d.title.startswith("compiled HLO of relu (") and "nested" not in d.title


def test_a_closed_fusion_counts_its_ops_in_english():
    text = jax.jit(jnp.sin).lower(jnp.ones(3)).compile().as_text()
    inner = len(re.findall(r"^\s+(?:ROOT )?%\S+ = \S+ sine\(", text, re.MULTILINE))
    assert inner == 1  # XLA wraps the one sine in a fusion of its own
    labels = op_labels(draw_hlo(jnp.sin, max_depth=0)(jnp.ones(3)))
    assert [label.split("\\n")[2] for label in labels] == ["1 op inside"]


@pytest.mark.parametrize("stage", ["stablehlo", "compiled"])
def test_an_argument_jax_drops_leaves_the_others_named_as_in_the_code(stage):
    """jit drops an unused argument from the module, so positions no longer match the
    names: each input keeps its own (StableHLO's loc, compiled HLO's metadata)."""

    def f(unused, params, y):
        return y * params["w"]

    d = draw_hlo(f, stage=stage)(jnp.ones(3), {"w": jnp.ones(4), "b": jnp.ones(2)}, 1.0)
    inputs = re.findall(r'label="([^"\\]+)\\n(?:f32|bf16)\[', d.source)
    assert "unused" not in d.source and not any(n.startswith("%") for n in inputs)
    assert {"params['w']", "y"} <= set(inputs)
