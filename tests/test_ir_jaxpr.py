"""jaxtour._ir reading jaxprs, pinned on the installed JAX: nested jaxprs, sources, types.

Counts are checked against JAX's own `jax.extend.core.jaxprs_in_params` walk and the
line numbers of `ir_cases.py`, never against printed text.
"""

import os

import ir_cases
import jax
import jax.numpy as jnp
import pytest
from ir_cases import ARGS, control_flow, eqn, line_of, oracle_count

from jaxtour import _ir


def test_count_eqns_matches_jax_own_sub_jaxpr_walk():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    assert _ir.count_eqns(jaxpr) == oracle_count(jaxpr)
    assert _ir.count_eqns(jaxpr) > len(jaxpr.eqns)


def test_sub_jaxprs_are_named_after_their_params():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    labels = {
        e.primitive.name: [s.label for s in _ir.sub_jaxprs(e)]
        for _, e in _ir.walk(jaxpr)
        if _ir.sub_jaxprs(e)
    }
    assert labels["cond"] == ["branches[0]", "branches[1]"]
    assert sorted(labels["while"]) == ["body_jaxpr", "cond_jaxpr"]
    assert labels["scan"] == ["jaxpr"]
    assert labels["jit"] == ["jaxpr"]
    assert labels["custom_jvp_call"] == ["call_jaxpr"]
    assert any("remat" in name or "checkpoint" in name for name in labels)


def test_cond_branches_take_the_operands_after_the_index():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    cond = eqn(jaxpr, "cond")
    for sub in _ir.sub_jaxprs(cond):
        assert sub.inputs == list(cond.invars[1:])
        assert sub.outputs == list(cond.outvars)


def test_while_cond_and_body_line_up_with_consts_and_carry():
    def f(x, k):
        return jax.lax.while_loop(lambda v: v < k, lambda v: v + x, 0.0)

    jaxpr = jax.make_jaxpr(f)(1.0, 5.0).jaxpr
    loop = eqn(jaxpr, "while")
    subs = {s.label: s for s in _ir.sub_jaxprs(loop)}
    cn = loop.params["cond_nconsts"]
    carry = list(loop.invars[cn + loop.params["body_nconsts"] :])
    assert subs["cond_jaxpr"].inputs == list(loop.invars[:cn]) + carry
    assert subs["body_jaxpr"].inputs[-len(carry) :] == carry
    assert subs["cond_jaxpr"].outputs == [None]  # a bool, not the loop's result
    assert subs["body_jaxpr"].outputs == list(loop.outvars)


def test_custom_vjp_and_shard_map_are_found():
    @jax.custom_vjp
    def clip(x):
        return x

    clip.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))
    mesh = jax.make_mesh((1,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    sharded = jax.shard_map(
        lambda a: jnp.sin(a),
        mesh=mesh,
        in_specs=jax.sharding.PartitionSpec("i"),
        out_specs=jax.sharding.PartitionSpec("i"),
    )
    jaxpr = jax.make_jaxpr(lambda x: sharded(clip(x)))(jnp.ones(4)).jaxpr
    found = {e.primitive.name: len(_ir.sub_jaxprs(e)) for _, e in _ir.walk(jaxpr)}
    assert found["custom_vjp_call"] == 1
    assert found["shard_map"] == 1
    assert _ir.primitive_counts(jaxpr)["sin"] == 1


def test_source_line_points_at_the_users_file():
    jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    line = _ir.source_line(eqn(jaxpr, "sin"))
    assert line is not None
    assert os.path.samefile(line.file, ir_cases.__file__)
    assert line.line == line_of("MARK-SIN")
    assert line.function == "control_flow"
    assert "jnp.sin(x)" in line.code
    assert str(line) == f"ir_cases.py:{line.line} (control_flow)"


@pytest.mark.parametrize(
    ("file", "where"),
    [
        ("/tmp/ipykernel_4242/1830275.py", "cell line 3"),
        ("<ipython-input-7-abc>", "cell line 3"),
        ("/home/me/loss.py", "loss.py:3"),
    ],
)
def test_notebook_cells_are_named_as_cells(file, where):
    assert _ir.SourceLine(file, 3, "f").where == where
    assert str(_ir.SourceLine(file, 3, "f")) == f"{where} (f)"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (jnp.zeros((3, 4)), "f32[3,4]"),
        (jnp.array(True), "bool[]"),
        (jnp.zeros(2, jnp.int32), "i32[2]"),
        (jnp.zeros(2, jnp.bfloat16), "bf16[2]"),
        (jnp.zeros(1, jnp.uint8), "u8[1]"),
    ],
)
def test_type_str_is_the_jaxpr_spelling(value, text):
    assert _ir.type_str(jax.typeof(value)) == text


def test_literals_and_important_params():
    jaxpr = jax.make_jaxpr(lambda x: jnp.sum(x * 2.5, axis=0).astype(jnp.int32))(
        jnp.ones((2, 3))
    ).jaxpr
    mul = eqn(jaxpr, "mul")
    literals = [a for a in mul.invars if _ir.is_literal(a)]
    assert [_ir.literal_str(a) for a in literals] == ["2.5"]
    assert _ir.important_params(eqn(jaxpr, "reduce_sum")) == ["axes=0"]
    assert _ir.important_params(eqn(jaxpr, "convert_element_type")) == ["new_dtype=i32"]
    cond_jaxpr = jax.make_jaxpr(control_flow)(*ARGS).jaxpr
    assert all("jaxpr" not in p for p in _ir.important_params(eqn(cond_jaxpr, "scan")))


@pytest.mark.parametrize(
    ("f", "x", "text"),
    [
        (lambda x: x * 2.0, jnp.ones(2), "2.0"),
        (lambda x: x * 1e-8, jnp.ones(2), "1e-08"),
        (lambda x: x * 3, jnp.ones(2, jnp.int32), "3"),
        (lambda z: z * (1 + 2j), jnp.ones(2, jnp.complex64), "1+2j"),
        (lambda z: z / 0j, jnp.ones(2, jnp.complex64), "0+0j"),
    ],
    ids=["float", "small float", "int", "complex", "complex zero"],
)
def test_a_scalar_literal_reads_as_python_writes_it(f, x, text):
    [op] = [
        e for e in jax.make_jaxpr(f)(x).jaxpr.eqns if e.primitive.name in ("mul", "div")
    ]
    assert [_ir.literal_str(a) for a in op.invars if _ir.is_literal(a)] == [text]


def test_unwrap_jit_opens_a_jitted_function_and_keeps_its_names():
    def layer(weights, x):
        return {"y": jnp.tanh(x @ weights)}

    w, x = jnp.ones((3, 2)), jnp.ones(3)
    closed = jax.make_jaxpr(jax.jit(layer))(w, x)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["jit"]
    body = _ir.unwrap_jit(closed)
    assert [e.primitive.name for e in body.jaxpr.eqns] == ["dot_general", "tanh"]
    names, paths = _ir.io_names(body.jaxpr)
    assert list(names) == ["weights", "x"] and "y" in str(paths[0])
    plain = jax.make_jaxpr(lambda v: jax.jit(jnp.sin)(v) * 2.0)(x)
    assert _ir.unwrap_jit(plain) is plain  # more than the one jit eqn: left as it is
