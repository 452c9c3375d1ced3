"""A regression corpus of user programs, written in the styles of JAX's documentation.

Each `Program` is a function and example arguments as a user would bring them: the
autodiff cookbook, custom derivative rules, control flow, pytrees, random keys,
gradient checkpointing, a training step on a pytree state, a bfloat16 model, a step
that mutates `jax.ref` Refs, and sharding (explicit mode, `shard_map` with `psum`).
`check(program)` gives it to every visualiser and checks values and picture widths;
the sharded ones need 8 devices (`tests/devices.py`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

MAX_WIDTH_PX = 5000


@dataclass
class Program:
    """A function, its example arguments, and what JAX can do with it.

    `grad`: jax.grad applies (a real scalar output); `vjp`, `jvp`: jax.vjp, jax.jvp
    apply (JAX refuses jvp of a custom_vjp function, and so does draw_jvp). `argnums`
    are the arguments `draw_grad` differentiates. `devices`: how many it needs.
    """

    name: str
    fn: Callable
    make_args: Callable[[], tuple]
    argnums: int | tuple[int, ...] = 0
    grad: bool = True
    vjp: bool = True
    jvp: bool = True
    devices: int = 1
    skip: str = ""
    heavy: bool = False
    tags: list[str] = field(default_factory=list)


# --- the autodiff cookbook: logistic regression -------------------------------------------


def _logistic_loss(W, b, inputs, targets):
    preds = jax.nn.sigmoid(inputs @ W + b)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


def _normal(seed: int, shape: tuple[int, ...], dtype=np.float32) -> jax.Array:
    """Example inputs drawn by NumPy (cast by NumPy, ml_dtypes for bfloat16): each eager
    `jax.random` draw or cast compiles once per shape, in every process that runs one."""
    x = np.random.default_rng(seed).standard_normal(shape)
    return jnp.asarray(x.astype(dtype))


def _logistic_args():
    return (
        _normal(2, (3,)),
        _normal(3, ()),
        _normal(1, (4, 3)),
        jnp.asarray(np.array([1.0, 1.0, 0.0, 1.0], np.float32)),
    )


# --- custom derivative rules ---------------------------------------------------------------


@jax.custom_jvp
def _softplus(x):
    return jnp.log1p(jnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * jax.nn.sigmoid(x)


@jax.custom_vjp
def _clip_gradient(x):
    return x


def _clip_fwd(x):
    return x, None


def _clip_bwd(_, g):
    return (jnp.clip(g, -0.5, 0.5),)


_clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def _custom_rules(x):
    return jnp.sum(_softplus(x) * _clip_gradient(3.0 * x))


# --- control flow --------------------------------------------------------------------------


def _control_flow(x, n):
    y = jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)
    y = jax.lax.fori_loop(0, 3, lambda i, v: v * 0.9 + jnp.tanh(v), y)

    def cell(carry, xt):
        carry = jnp.tanh(carry * xt + 0.1)
        return carry, carry.sum()

    carry, ys = jax.lax.scan(cell, y, jnp.arange(1.0, 4.0))
    return carry.sum() + ys.sum() + n


# --- pytrees -------------------------------------------------------------------------------


def _mlp_params(sizes, seed, dtype=jnp.float32):
    rng = np.random.default_rng(seed)
    return [
        {
            "w": jnp.asarray((rng.standard_normal((m, n)) / np.sqrt(m)).astype(dtype)),
            "b": jnp.asarray(np.zeros(n, dtype)),
        }
        for m, n in itertools.pairwise(sizes)
    ]


def _mlp(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def _mlp_loss(params, batch):
    logits = _mlp(params, batch["x"])
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * batch["y"], axis=-1))


def _batch(n, d, classes, dtype=jnp.float32):
    y = np.eye(classes)[np.arange(n) % classes]  # one-hot labels
    return {"x": _normal(7, (n, d), dtype), "y": jnp.asarray(y.astype(dtype))}


# --- random keys: dropout with a key argument ---------------------------------------------


def _dropout_loss(w, key, x):
    h = jnp.tanh(x @ w)
    keep = jax.random.bernoulli(key, 0.8, h.shape)
    h = jnp.where(keep, h / 0.8, 0.0)
    return jnp.sum(h**2)


def _keys_normal(keys, x):
    return (x * jax.vmap(jax.random.normal)(keys)).sum()


# --- jax.checkpoint ------------------------------------------------------------------------


def _remat_loss(ws, x):
    layer = jax.checkpoint(lambda w, h: jnp.sin(h @ w))
    for w in ws:
        x = layer(w, x)
    return jnp.sum(x**2)


# --- a training step on a pytree state of ~50 arrays --------------------------------------


def _big_state():
    params = _mlp_params([8] + [8] * 24 + [4], 3)  # 25 layers: 50 arrays
    return params, _batch(16, 8, 4)


def _train_step(params, batch):
    loss, grads = jax.value_and_grad(_mlp_loss)(params, batch)
    params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    return params, loss


# --- a bfloat16 model ----------------------------------------------------------------------


def _bf16_args():
    return (
        _mlp_params([16, 32, 8], 5, jnp.bfloat16),
        _batch(8, 16, 8, jnp.bfloat16),
    )


def _bf16_loss(params, batch):
    return _mlp_loss(params, batch).astype(jnp.float32)


# --- Refs (jax.ref) ------------------------------------------------------------------------


def _ref_step(state):
    state["w"][...] += 1.0
    return {"loss": state["w"][...].sum()}


def _ref_args():
    return ({"w": jax.ref.new_ref(jnp.ones(3))},)


# --- sharding (8 devices) ------------------------------------------------------------------


def _explicit_mesh():
    from jax.sharding import AxisType

    return jax.make_mesh((4, 2), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)


def _explicit_args():
    jax.set_mesh(_explicit_mesh())
    x = jax.device_put(jnp.arange(32.0).reshape(8, 4) / 32, jax.P(None, "X"))
    y = jax.device_put(jnp.ones((4, 16)) / 4, jax.P("X", None))
    return x, y


def _explicit_dot(x, y):
    return jnp.dot(x, y, out_sharding=jax.P("X", None))


def _explicit_loss(x, y):
    return jnp.sum(jnp.tanh(_explicit_dot(x, y)) ** 2)


def _data_parallel_args():
    mesh = jax.make_mesh((8,), ("data",))
    jax.set_mesh(
        mesh
    )  # the programs run one after another; each sets the mesh it needs
    params = _mlp_params([16, 32, 32, 4], 11)
    batch = jax.device_put(_batch(64, 16, 4), jax.NamedSharding(mesh, jax.P("data")))
    return params, batch, mesh


def _data_parallel_loss(params, batch, mesh):
    def local(params, batch):
        return jax.lax.pmean(_mlp_loss(params, batch), "data")

    return jax.shard_map(
        local, mesh=mesh, in_specs=(jax.P(), jax.P("data")), out_specs=jax.P()
    )(params, batch)


PROGRAMS = [
    Program("cookbook_logistic", _logistic_loss, _logistic_args, argnums=(0, 1)),
    Program(
        "custom_jvp_vjp",
        _custom_rules,
        lambda: (jnp.linspace(-1.0, 1.0, 4),),
        jvp=False,
    ),
    Program("control_flow", _control_flow, lambda: (jnp.linspace(0.1, 0.5, 3), 2)),
    Program(
        "pytree_mlp",
        _mlp_loss,
        lambda: (_mlp_params([6, 8, 3], 1), _batch(5, 6, 3)),
    ),
    Program(
        "dropout_key",
        _dropout_loss,
        lambda: (jnp.ones((3, 4)) / 3, jax.random.key(2), jnp.ones((5, 3))),
        heavy=True,
    ),
    Program(
        "vmap_keys",
        _keys_normal,
        lambda: (jax.random.split(jax.random.key(42), 3), jnp.ones(3)),
        argnums=1,
    ),
    Program(
        "checkpoint",
        _remat_loss,
        lambda: ([jnp.eye(4) * 0.5, jnp.ones((4, 4)) / 4], jnp.arange(4.0)),
    ),
    Program(
        "train_step_50", _train_step, _big_state, grad=False, jvp=False, heavy=True
    ),
    Program("train_loss_50", _mlp_loss, _big_state, heavy=True),
    Program("bf16_model", _bf16_loss, _bf16_args),
    Program(
        "ref_step",
        _ref_step,
        _ref_args,
        grad=False,
        vjp=False,
        jvp=False,
        skip="" if hasattr(jax, "ref") else "this JAX has no jax.ref",
    ),
    Program("explicit_dot", _explicit_dot, _explicit_args, grad=False, devices=8),
    Program("explicit_loss", _explicit_loss, _explicit_args, argnums=(0, 1), devices=8),
    Program(
        "shard_map_data_parallel",
        _data_parallel_loss,
        _data_parallel_args,
        devices=8,
        heavy=True,
    ),
]

BY_NAME = {p.name: p for p in PROGRAMS}


def svg_width_px(svg: str) -> float:
    """The picture's width in CSS px (Graphviz writes pt: 1 pt = 4/3 px)."""
    match = re.search(r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"', svg)
    if match is None:
        raise ValueError("no width in the SVG")
    value = float(match.group(1))
    return value * 4 / 3 if match.group(2) in (None, "pt") else value


def _static(program: Program, args: tuple) -> tuple[Callable, tuple]:
    """Bind arguments that are not arrays (a Mesh): the function of the array arguments."""
    keep = [i for i, a in enumerate(args) if not isinstance(a, jax.sharding.Mesh)]
    if len(keep) == len(args):
        return program.fn, args

    def fn(*arrays):
        full = list(args)
        for i, a in zip(keep, arrays, strict=True):
            full[i] = a
        return program.fn(*full)

    return fn, tuple(args[i] for i in keep)


def _close(shown, expected) -> None:
    expected = [
        np.asarray(e, np.float64)
        for e in jax.tree.leaves(expected)
        if jnp.issubdtype(e.dtype, jnp.inexact)
    ]
    assert len(shown) == len(expected), (len(shown), len(expected))
    for a, b in zip(shown, expected, strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), b, rtol=2e-2, atol=1e-5)


def check(program: Program, render: bool = True) -> dict:
    """Every visualiser on `program`: values against JAX, widths; returns the widths
    (or, without `render`, the drawings' DOT sizes)."""
    from jaxtour import autodiff, viz

    fn, args = _static(program, program.make_args())
    drawings = {
        "draw_jaxpr": lambda: viz.draw_jaxpr(fn)(*args),
        "draw_hlo_stablehlo": lambda: viz.draw_hlo(fn, stage="stablehlo")(*args),
        "draw_hlo_compiled": lambda: viz.draw_hlo(fn)(*args),
        "draw_pipeline": lambda: viz.draw_pipeline(fn)(*args),
    }
    comparison = viz.compare_stages(fn)(*args)
    assert comparison.headline
    if program.grad:
        graph = autodiff.grad_graph(fn, program.argnums)(*args)
        _close(graph.values_of("gradient"), jax.grad(fn, program.argnums)(*args))
        drawings["draw_grad"] = lambda: autodiff.draw_grad(fn, program.argnums)(*args)
    if program.vjp:
        graph = autodiff.vjp_graph(fn)(*args)
        out, pullback = jax.vjp(fn, *args)
        _close(graph.values_of("gradient"), pullback(_ones(out)))
        drawings["draw_vjp"] = lambda: autodiff.draw_vjp(fn)(*args)
    if program.jvp:
        tangents = tuple(jax.tree.map(_tangent, a) for a in args)
        jgraph = autodiff.jvp_graph(fn)(args, tangents)
        _close([n.value for n in jgraph.select("output")], jax.jvp(fn, args, tangents))
        drawings["draw_jvp"] = lambda: autodiff.draw_jvp(fn)(args, tangents)
    widths = {}
    for name, draw in drawings.items():
        diagram = draw()
        widths[name] = svg_width_px(diagram.svg()) if render else len(diagram.source)
    return widths


def _ones(out):
    return jax.tree.map(
        lambda o: (
            jnp.ones_like(o)
            if jnp.issubdtype(o.dtype, jnp.inexact)
            else np.zeros(o.shape, jax.dtypes.float0)
        ),
        out,
    )


def _tangent(x):
    x = jnp.asarray(x) if not isinstance(x, jax.Array) else x
    if jnp.issubdtype(x.dtype, jnp.inexact):
        return jnp.ones_like(x)
    return np.zeros(x.shape, jax.dtypes.float0)
