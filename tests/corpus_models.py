"""A corpus of models as researchers write them, for every lens (issue 27).

Not the lessons' functions and not JAX's docs: a Flax NNX model with Dropout and its
Optax step, an Equinox MLP called as Equinox's docs call it, a bfloat16 transformer
block, typed keys under `vmap`, static config arguments by keyword. `run_lenses` gives
each to every lens and checks values against JAX (or the framework's own grad) and the
width of each picture.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from model_zoo import filled

MAX_WIDTH_PX = 5000


@dataclass
class Model:
    """`fn(*args, **kwargs)`: what the forward lenses see; `loss(*args)`: a scalar for
    the gradient lenses (kwargs bound); `grad_ref(*args)`: the framework's gradient;
    `fn_ref(*args, **kwargs)`: `fn` as the framework runs it. Both references are
    compiled by the framework's own jit: one compilation each, where an eager call
    compiles each of a model's ~50-100 operations (nnx_optax_step's eager step and
    gradient: 200 compilations, 25 s of CPU)."""

    name: str
    fn: Callable
    make_args: Callable[[], tuple]
    loss: Callable
    grad_ref: Callable
    fn_ref: Callable
    kwargs: dict = field(default_factory=dict)
    static_argnames: tuple[str, ...] = ()
    argnums: int = 0
    rtol: float = 1e-4


def _normal(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """Example inputs drawn by NumPy: each eager `jax.random` draw (or cast) compiles
    once per shape, a second or so of CPU per model."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _bf16(x: np.ndarray) -> jax.Array:
    return jnp.asarray(x.astype(jnp.bfloat16))  # cast by NumPy (ml_dtypes): no compile


# --- Flax NNX: a model with Dropout, and its Optax step ----------------------------------
class _NnxMlp(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(6, 16, rngs=rngs)
        self.drop = nnx.Dropout(0.1, rngs=rngs)
        self.out = nnx.Linear(16, 3, rngs=rngs)

    def __call__(self, x):
        return self.out(self.drop(nnx.gelu(self.hidden(x))))


def _nnx_loss(model, x, y):
    return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()


def _nnx_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(_nnx_loss)(model, x, y)
    optimizer.update(model, grads)
    return loss


def _nnx_model_and_optimizer():
    model = _NnxMlp(nnx.Rngs(0, dropout=1))
    return model, nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)


def _nnx_args():
    graphdef, keys, params, rest = nnx.split(
        nnx.eval_shape(_nnx_model_and_optimizer), nnx.RngKey, nnx.Param, ...
    )
    # the Dropout stream's key as nnx.Rngs(dropout=1) makes it
    keys = jax.tree.map(lambda _: jax.random.key(1), keys)
    model, optimizer = nnx.merge(graphdef, keys, filled(params, 0), filled(rest, None))
    x = jnp.asarray(_normal(1, (8, 6)))
    return model, optimizer, x, jnp.asarray(np.arange(8) % 3)


def _nnx_loss_of_step(model, optimizer, x, y):
    return _nnx_loss(model, x, y)


@nnx.jit
def _nnx_grad_ref(model, optimizer, x, y):
    return nnx.grad(_nnx_loss)(model, x, y)


# --- Equinox: loss(model, x, y), as Equinox's docs write it ------------------------------
def _eqx_loss(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


def _eqx_args():
    model = filled(
        eqx.filter_eval_shape(
            lambda: eqx.nn.MLP(
                4, 2, 16, 2, activation=jax.nn.gelu, key=jax.random.key(0)
            )
        ),
        0,
    )
    x = _normal(1, (8, 4))
    return model, jnp.asarray(x), jnp.asarray(np.sin(x[:, :2]))


# --- a bfloat16 transformer block ----------------------------------------------------------
def _layer_norm(x, scale):
    x32 = x.astype(jnp.float32)
    mean, var = x32.mean(-1, keepdims=True), x32.var(-1, keepdims=True)
    return ((x32 - mean) * jax.lax.rsqrt(var + 1e-5)).astype(x.dtype) * scale


def _block(p, x):
    h = _layer_norm(x, p["ln1"])
    q, k, v = (h @ p[name] for name in ("wq", "wk", "wv"))
    scores = (q @ k.swapaxes(-1, -2)) / jnp.sqrt(jnp.bfloat16(q.shape[-1]))
    mask = jnp.tril(jnp.ones(scores.shape[-2:], bool))
    attn = jax.nn.softmax(jnp.where(mask, scores, -jnp.inf).astype(jnp.float32), -1)
    x = x + (attn.astype(x.dtype) @ v) @ p["wo"]
    h = _layer_norm(x, p["ln2"])
    return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]


def _block_loss(p, x):
    return jnp.mean(_block(p, x).astype(jnp.float32) ** 2)


def _block_args():
    d = 16
    shapes = {"wq": (d, d), "wk": (d, d), "wv": (d, d), "wo": (d, d)}
    shapes |= {"w1": (d, 4 * d), "w2": (4 * d, d)}
    p = {
        name: _bf16(_normal(seed, s) / np.sqrt(s[0]))
        for seed, (name, s) in enumerate(shapes.items())
    }
    p |= {"ln1": _bf16(np.ones(d)), "ln2": _bf16(np.ones(d))}
    return p, _bf16(_normal(7, (8, d)))


# --- typed keys under vmap -----------------------------------------------------------------
def _noisy(keys, x):
    noise = jax.vmap(lambda k: jax.random.normal(k, x.shape[1:]))(keys)
    return jnp.sum(jnp.tanh(x + 0.1 * noise) ** 2)


def _noisy_args():
    x = jnp.asarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    return jax.random.split(jax.random.key(0), 4), x


# --- static config arguments by keyword ----------------------------------------------------
def _configured(w, x, *, act="tanh", depth=2):
    fn = {"tanh": jnp.tanh, "relu": jax.nn.relu}[act]
    for _ in range(depth):
        x = fn(x @ w)
    return jnp.sum(x**2)


def _configured_args():
    w = np.eye(3, dtype=np.float32) * 0.5 + np.float32(0.1)
    return jnp.asarray(w), jnp.asarray(
        np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    )


def _bound(fn, **kwargs):
    return functools.wraps(fn)(functools.partial(fn, **kwargs))


_STATIC = ("act", "depth")
_STATIC_LOSS = _bound(_configured, act="relu", depth=3)

MODELS = [
    Model(
        "nnx_optax_step",
        _nnx_step,
        _nnx_args,
        _nnx_loss_of_step,
        _nnx_grad_ref,
        nnx.jit(_nnx_step),
    ),
    Model(
        "eqx_mlp",
        _eqx_loss,
        _eqx_args,
        _eqx_loss,
        eqx.filter_jit(eqx.filter_grad(_eqx_loss)),
        eqx.filter_jit(_eqx_loss),
    ),
    Model(
        "bf16_block",
        _block_loss,
        _block_args,
        _block_loss,
        jax.jit(jax.grad(_block_loss)),
        jax.jit(_block_loss),
        rtol=5e-2,
    ),
    Model(
        "keys_under_vmap",
        _noisy,
        _noisy_args,
        _noisy,
        jax.jit(jax.grad(_noisy, argnums=1)),
        jax.jit(_noisy),
        argnums=1,
    ),
    Model(
        "static_config",
        _configured,
        _configured_args,
        _STATIC_LOSS,
        jax.jit(jax.grad(_STATIC_LOSS)),
        jax.jit(_configured, static_argnames=_STATIC),
        kwargs={"act": "relu", "depth": 3},
        static_argnames=_STATIC,
    ),
]
BY_NAME = {m.name: m for m in MODELS}


def svg_width_px(svg: str) -> float:
    """The width an SVG asks for, in CSS pixels (Graphviz writes points)."""
    import re

    match = re.search(r'<svg[^>]*\swidth="([\d.]+)(pt|px)?"', svg)
    if not match:
        raise ValueError("no width in the SVG")
    value = float(match.group(1))
    return value * 4 / 3 if match.group(2) in (None, "pt") else value


def close(shown, expected, rtol: float) -> None:
    """The gradient a lens shows against the framework's, leaf by leaf."""
    expected = [
        np.asarray(e, np.float32)
        for e in jax.tree.leaves(expected)
        if jnp.issubdtype(e.dtype, jnp.inexact)
    ]
    assert len(shown) == len(expected), (len(shown), len(expected))
    for a, b in zip(shown, expected, strict=True):
        scale = float(np.max(np.abs(b))) if b.size else 1.0
        np.testing.assert_allclose(
            np.asarray(a, np.float32), b, rtol=rtol, atol=rtol * scale
        )
