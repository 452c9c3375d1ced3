"""Small models as researchers write them, one per framework, for the code-nesting tests
and benchmarks/models.py: a Flax NNX transformer block (and its `nnx.jit` train step),
a Linen MLP, an Equinox MLP, and plain functions calling plain functions.

Each model is built abstractly (`nnx.eval_shape`, `eqx.filter_eval_shape`,
`jax.eval_shape` of Linen's `init`) and its weights drawn by NumPy: what the tests draw
is the model's call, never its initialisation, and eager initialisers compile each
`jax.random` draw per shape (XLA's CPU compiler takes seconds over a narrow one): built
eagerly, the zoo took 15 s of CPU."""

import equinox as eqx
import flax.linen as linen
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

D, HEADS, T = 16, 2, 4


def filled(abstract, seed: int | None):
    """`abstract` (a model built by `eval_shape`) with its arrays drawn by NumPy, normal
    and scaled by 0.3, or zero (`seed=None`: as Optax starts its moments and counts);
    device_put, nothing compiled. A leaf that is no ShapeDtypeStruct (an Equinox
    activation) stays as it is."""
    rng = np.random.default_rng(seed)

    def fill(s):
        if not isinstance(s, jax.ShapeDtypeStruct):
            return s
        if seed is None:
            return jnp.asarray(np.zeros(s.shape, s.dtype))
        return jnp.asarray((0.3 * rng.standard_normal(s.shape)).astype(s.dtype))

    return jax.tree.map(fill, abstract)


def _ones(*shape):
    return jnp.asarray(np.ones(shape, np.float32))


def _nnx_built(make, seed):
    """`make()`'s NNX modules with their `nnx.Param`s drawn by NumPy and every other
    state (an optimizer's moments and count) zero, as Optax starts them."""
    graphdef, params, rest = nnx.split(nnx.eval_shape(make), nnx.Param, ...)
    return nnx.merge(graphdef, filled(params, seed), filled(rest, None))


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

    def make():
        block = Block(D, HEADS, nnx.Rngs(0))
        return block, nnx.Optimizer(block, optax.adam(1e-3), wrt=nnx.Param)

    block, optimizer = _nnx_built(make, 0)
    graphdef, params, rest = nnx.split(block, nnx.Param, ...)
    x = _ones(2, T, D)

    def block_loss(params, rest, x):
        return jnp.mean(nnx.merge(graphdef, params, rest)(x) ** 2)

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
    model, x = LinenMLP(), _ones(3, 8)
    params = filled(jax.eval_shape(lambda x: model.init(jax.random.key(0), x), x), 0)
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
    model = filled(eqx.filter_eval_shape(EqxMLP, jax.random.key(0)), 0)
    return (lambda m, x: jnp.sum(jax.vmap(m)(x) ** 2)), (model, _ones(3, 8))


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
    w1, w2 = np.random.default_rng(1).standard_normal((2, 8, 8)).astype(np.float32)
    p = {
        "w1": jnp.asarray(w1),
        "b1": jnp.asarray(np.zeros(8, np.float32)),
        "s": _ones(8),
        "w2": jnp.asarray(w2),
        "b2": jnp.asarray(np.zeros(8, np.float32)),
    }
    return plain_model, (p, _ones(3, 8))


class Cell(nnx.Module):
    def __init__(self, d, rngs):
        self.inp = nnx.Linear(d, d, rngs=rngs)
        self.rec = nnx.Linear(d, d, rngs=rngs)

    def __call__(self, h, x):
        h = jnp.tanh(self.inp(x) + self.rec(h))
        return h, h


def scan():
    """A recurrent cell scanned over time: `lax.scan` of a user's module."""
    cell, xs = _nnx_built(lambda: Cell(8, nnx.Rngs(2)), 2), _ones(6, 3, 8)

    def rnn(cell, xs):
        h, hs = jax.lax.scan(cell, jnp.zeros((3, 8)), xs)
        return jnp.sum(hs**2) + jnp.sum(h)

    return rnn, (cell, xs)


def combine(a, b):
    """An affine map composed: (a1, b1) then (a2, b2), the body of a linear recurrence."""
    return a[0] * b[0], b[0] * a[1] + b[1]


def associative():
    """A linear recurrence h_t = a_t h_{t-1} + b_t by `lax.associative_scan`."""

    def recurrence(a, b):
        return jnp.sum(jax.lax.associative_scan(combine, (a, b))[1])

    return recurrence, (jnp.asarray(np.full((64, 8), 0.9, np.float32)), _ones(64, 8))


def checked():
    """An Equinox MLP's loss under `checkify`: a check that the loss is finite."""
    from jax.experimental import checkify

    model = filled(eqx.filter_eval_shape(EqxMLP, jax.random.key(3)), 3)

    def loss(m, x):
        out = jnp.sum(jnp.log(jax.nn.softplus(jax.vmap(m)(x))))
        checkify.check(jnp.isfinite(out), "loss is not finite")
        return out

    return checkify.checkify(loss, errors=checkify.float_checks), (model, _ones(3, 8))


def sgd(p, batch):
    """One SGD step of `plain_model` on one batch."""
    loss, g = jax.value_and_grad(plain_model)(p, batch)
    return jax.tree.map(lambda w, d: w - 0.01 * d, p, g), loss


def epoch():
    """A scanned epoch: `sgd` over 5 batches by `lax.scan`."""
    p, x = plain()[1]

    def run(p, batches):
        return jax.lax.scan(sgd, p, batches)

    return run, (p, jnp.asarray(np.stack([np.asarray(x)] * 5)))


def all_models():
    """name -> (f, args, loss or None): every zoo program a test or benchmark draws;
    `loss` (differentiable in its first argument, scalar) is what the gradient
    drawings take."""
    (loss, args), (step, step_args) = nnx_block()
    rnn, rnn_args = scan()
    rec, rec_args = associative()
    chk, chk_args = checked()
    run, run_args = epoch()
    lin, eqx_ = linen_mlp(), eqx_mlp()
    return {
        "nnx block": (loss, args, loss),
        "nnx.jit step": (step, step_args, None),
        "linen mlp": (*lin, lin[0]),
        "equinox mlp": (*eqx_, eqx_[0]),
        "plain functions": (*plain(), plain_model),
        "scan": (rnn, rnn_args, rnn),
        "associative scan": (rec, rec_args, rec),
        "checkify": (chk, chk_args, None),
        "scanned epoch": (run, run_args, None),
    }
