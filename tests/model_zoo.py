"""Small models as researchers write them, one per framework, for the code-nesting tests
and benchmarks/models.py: a Flax NNX transformer block (and its `nnx.jit` train step),
a Linen MLP, an Equinox MLP, and plain functions calling plain functions."""

import equinox as eqx
import flax.linen as linen
import jax
import jax.numpy as jnp
import optax
from flax import nnx

D, HEADS, T = 16, 2, 4


class CausalSelfAttention(nnx.Module):
    def __init__(self, d, heads, rngs):
        self.qkv = nnx.Linear(d, 3 * d, rngs=rngs)
        self.proj = nnx.Linear(d, d, rngs=rngs)
        self.heads = heads

    def __call__(self, x):
        b, t, d = x.shape
        q, k, v = jnp.split(self.qkv(x), 3, axis=-1)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = q.reshape(shape), k.reshape(shape), v.reshape(shape)
        att = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(d // self.heads)
        att = jnp.where(jnp.tril(jnp.ones((t, t), bool)), att, -jnp.inf)
        y = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(att, axis=-1), v)
        return self.proj(y.reshape(b, t, d))


class Block(nnx.Module):
    def __init__(self, d, heads, rngs):
        self.ln1 = nnx.LayerNorm(d, rngs=rngs)
        self.attn = CausalSelfAttention(d, heads, rngs)
        self.ln2 = nnx.LayerNorm(d, rngs=rngs)
        self.fc1 = nnx.Linear(d, 4 * d, rngs=rngs)
        self.fc2 = nnx.Linear(4 * d, d, rngs=rngs)

    def __call__(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc2(jax.nn.gelu(self.fc1(self.ln2(x))))


def nnx_block():
    """(loss of the block's params, its args), (the `nnx.jit` train step, its args)."""
    block = Block(D, HEADS, nnx.Rngs(0))
    graphdef, params, rest = nnx.split(block, nnx.Param, ...)
    x = jnp.ones((2, T, D))

    def block_loss(params, rest, x):
        return jnp.mean(nnx.merge(graphdef, params, rest)(x) ** 2)

    optimizer = nnx.Optimizer(block, optax.adam(1e-3), wrt=nnx.Param)

    @nnx.jit
    def train_step(block, optimizer, x):
        loss, grads = nnx.value_and_grad(lambda b: jnp.mean(b(x) ** 2))(block)
        optimizer.update(block, grads)
        return loss

    return (block_loss, (params, rest, x)), (train_step, (block, optimizer, x))


class LinenMLP(linen.Module):
    @linen.compact
    def __call__(self, x):
        x = linen.relu(linen.Dense(32, name="hidden")(x))
        x = linen.LayerNorm(name="norm")(x)
        return linen.Dense(4, name="out")(x)


def linen_mlp():
    model, x = LinenMLP(), jnp.ones((3, 8))
    params = model.init(jax.random.key(0), x)
    return (lambda p, x: jnp.sum(model.apply(p, x) ** 2)), (params, x)


class EqxMLP(eqx.Module):
    hidden: eqx.nn.Linear
    norm: eqx.nn.LayerNorm
    out: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.hidden = eqx.nn.Linear(8, 32, key=k1)
        self.norm = eqx.nn.LayerNorm(32)
        self.out = eqx.nn.Linear(32, 4, key=k2)

    def __call__(self, x):
        return self.out(self.norm(jax.nn.relu(self.hidden(x))))


def eqx_mlp():
    model = EqxMLP(jax.random.key(0))
    return (lambda m, x: jnp.sum(jax.vmap(m)(x) ** 2)), (model, jnp.ones((3, 8)))


def layer_norm(x, scale):
    mu = jnp.mean(x, -1, keepdims=True)
    sigma = jnp.sqrt(jnp.var(x, -1, keepdims=True) + 1e-5)
    return scale * (x - mu) / sigma


def dense(w, b, x):
    return jnp.tanh(x @ w + b) * 0.5 + 0.5 * x @ w


def plain_model(p, x):
    h = layer_norm(dense(p["w1"], p["b1"], x), p["s"])
    return jnp.sum(dense(p["w2"], p["b2"], h) ** 2)


def plain():
    k = jax.random.split(jax.random.key(1), 2)
    p = {
        "w1": jax.random.normal(k[0], (8, 8)),
        "b1": jnp.zeros(8),
        "s": jnp.ones(8),
        "w2": jax.random.normal(k[1], (8, 8)),
        "b2": jnp.zeros(8),
    }
    return plain_model, (p, jnp.ones((3, 8)))
