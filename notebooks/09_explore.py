# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,slideshow,jupyter,-all
#     notebook_metadata_filter: kernelspec,jupytext,colab,accelerator
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] slideshow={"slide_type": "slide"}
# # 09 · A transformer block, through JAX's lenses
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/09_explore.ipynb)
#
# - **attention**, LayerNorm and an MLP in plain JAX, checked against float64 NumPy;
# - its **jaxpr, nested by your own classes**, forward and backward;
# - where the **FLOPs** go, and where XLA puts the **softmax**;
# - the **explorer**: every lens on your function in one panel.
#
# *About 20 minutes.*

# %% [markdown] slideshow={"slide_type": "notes"}
# The block has GPT-2's layout (LayerNorm first, causal attention, a GELU MLP four times
# wide), small, no biases in its matrix products: 16 tokens of 64 features, 4 heads. Every lens of
# lessons 02–04 applies unchanged: it is only a function of arrays.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import explore
from jaxtour.cost import cost_table
from jaxtour.viz import compare_stages, draw_hlo, draw_jaxpr

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Softmax, in the explorer
#
# Attention turns scores into weights with a softmax. `explore(f, *args)` shows it
# through any lens; → turns the picture on its side.

# %%
def softmax(scores):  # one row of attention scores
    e = jnp.exp(scores - scores.max())  # minus the max: exp cannot overflow
    return e / e.sum()


row = jnp.array([1.0, 2.0, 3.0])
panel = explore(softmax, row)
panel.rankdir.value = "LR"
panel

# %% tags=["check"] jupyter={"source_hidden": true}
assert panel.shown.result.source == draw_jaxpr(softmax, rankdir="LR")(row).source
np.testing.assert_allclose(softmax(row), jax.nn.softmax(row), rtol=1e-6)
row64 = np.array([1.0, 2.0, 3.0])
np.testing.assert_allclose(softmax(row), np.exp(row64) / np.exp(row64).sum(), rtol=1e-6)
assert np.isfinite(softmax(jnp.array([1000.0, 1001.0]))).all()  # the max keeps it finite
big = jnp.array([1000.0, 1001.0])
assert np.isnan(jnp.exp(big) / jnp.exp(big).sum()).all()  # the notes: without it, inf / inf

# %% [markdown] slideshow={"slide_type": "notes"}
# Under the picture the panel prints the call that drew it: `draw_jaxpr(softmax, ...)`.
# Subtracting the row's maximum changes nothing mathematically and keeps `exp` below
# overflow (the check cell: without it, `exp(1000)` is inf and the weights nan).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## A block is a few classes
#
# Each part is a dataclass registered as a pytree (lesson 04): arrays as leaves, the
# head count static.

# %%
@jax.tree_util.register_dataclass
@dataclasses.dataclass
class LayerNorm:
    scale: jax.Array  # f32[d]
    bias: jax.Array  # f32[d]

    def __call__(self, x):  # each token's features to mean 0, variance 1
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * self.scale + self.bias


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class MLP:
    up: jax.Array  # f32[d, 4d]
    down: jax.Array  # f32[4d, d]

    def __call__(self, x):
        return jax.nn.gelu(x @ self.up) @ self.down

# %% [markdown] slideshow={"slide_type": "notes"}
# No framework: a class with arrays in it and a `__call__`. `register_dataclass` makes
# it a pytree, so `jit`, `grad` and `vmap` take it as they take a dict. Flax NNX
# (lesson 08) writes the same classes with `nnx.Module`; the jaxprs are alike.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## Causal self-attention
#
# Each token mixes the values of itself and the tokens before it, weighted by a softmax
# of query · key.

# %%
@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Attention:
    qkv: jax.Array  # f32[d, 3d]: queries, keys and values in one product
    out: jax.Array  # f32[d, d]
    heads: int = dataclasses.field(metadata={"static": True})

    def __call__(self, x):  # x: f32[tokens, d]
        t, d = x.shape
        q, k, v = jnp.split(x @ self.qkv, 3, axis=-1)
        q, k, v = (a.reshape(t, self.heads, -1).swapaxes(0, 1) for a in (q, k, v))
        scores = q @ k.swapaxes(1, 2) / jnp.sqrt(q.shape[-1])  # f32[heads, t, t]
        causal = jnp.tril(jnp.ones((t, t), bool))  # token i sees tokens 0..i
        with jax.named_scope("attention_weights"):
            weights = jax.nn.softmax(jnp.where(causal, scores, -jnp.inf), axis=-1)
        return (weights @ v).swapaxes(0, 1).reshape(t, d) @ self.out

# %% [markdown] slideshow={"slide_type": "notes"}
# Four heads of 16 features each; the mask puts −inf above the diagonal, so a token's
# weights for later tokens are exactly 0. `jax.named_scope("attention_weights")` names
# the operations it wraps for every tool after the jaxpr (later in this lesson).

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## The block: two residual branches

# %%
@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Block:
    norm1: LayerNorm
    attention: Attention
    norm2: LayerNorm
    mlp: MLP

    def __call__(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def transformer(block, x):
    return block(x)

# %% slideshow={"slide_type": "skip"}
# Weights from NumPy's generator, so that the float64 twin below reads the same numbers
d, heads, tokens = 64, 4, 16
rng = np.random.default_rng(0)


def dense(m, n):
    return jnp.asarray(rng.standard_normal((m, n)) / np.sqrt(m), jnp.float32)


def layer_norm():
    return LayerNorm(*(jnp.asarray(rng.normal(mu, 0.1, d), jnp.float32) for mu in (1, 0)))


block = Block(layer_norm(), Attention(dense(d, 3 * d), dense(d, d), heads),
              layer_norm(), MLP(dense(d, 4 * d), dense(4 * d, d)))
x = jnp.asarray(rng.standard_normal((tokens, d)), jnp.float32)
forward = jax.jit(transformer)
y = forward(block, x)
print(y.shape, len(jax.tree.leaves(block)), "arrays in the block")

# %% slideshow={"slide_type": "skip"}
def transformer64(block, x):  # the oracle: the same block in float64 NumPy
    b = jax.tree.map(lambda leaf: np.asarray(leaf, np.float64), block)

    def norm(n, x):
        z = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        return z * n.scale + n.bias

    def gelu(z):  # the tanh approximation, jax.nn.gelu's default
        return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3)))

    t, dim = x.shape
    q, k, v = np.split(norm(b.norm1, x) @ b.attention.qkv, 3, axis=-1)
    q, k, v = (a.reshape(t, heads, -1).swapaxes(0, 1) for a in (q, k, v))
    scores = q @ k.swapaxes(1, 2) / np.sqrt(q.shape[-1])
    scores = np.where(np.tril(np.ones((t, t), bool)), scores, -np.inf)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    h = x + (weights @ v).swapaxes(0, 1).reshape(t, dim) @ b.attention.out
    return h + gelu(norm(b.norm2, h) @ b.mlp.up) @ b.mlp.down


# %% tags=["check"] jupyter={"source_hidden": true}
x64 = np.asarray(x, np.float64)
if jax.default_backend() == "cpu":  # full float32 matmuls (lesson 01)
    y_checked = y
else:  # a GPU's TF32 or a TPU's bfloat16 pass would need a looser tolerance
    with jax.default_matmul_precision("highest"):
        y_checked = jax.jit(transformer)(block, x)
np.testing.assert_allclose(y_checked, transformer64(block, x64), rtol=1e-4, atol=1e-4)
assert y.shape == x.shape and len(jax.tree.leaves(block)) == 8  # heads is not a leaf
later = x.at[-1].set(100.0)  # change the last token only
np.testing.assert_allclose(forward(block, later)[:-1], y[:-1], rtol=1e-6, atol=1e-6)  # causal


@jax.jit
def attention_twice(block, x):  # JAX's own attention beside ours, on the same inputs
    attention, h = block.attention, block.norm1(x)
    q, k, v = (a.reshape(1, tokens, heads, -1) for a in jnp.split(h @ attention.qkv, 3, -1))
    library = jax.nn.dot_product_attention(q, k, v, is_causal=True).reshape(tokens, d)
    return library @ attention.out, attention(h)


with jax.default_matmul_precision("highest"):  # both in float32 on any device
    np.testing.assert_allclose(*attention_twice(block, x), rtol=1e-5, atol=1e-5)

# %% [markdown] slideshow={"slide_type": "notes"}
# The block is checked against a float64 NumPy twin, for causality, and against
# `jax.nn.dot_product_attention` (JAX's own: XLA's by default in 0.10.2 and 0.12;
# cuDNN's fused kernel with `implementation="cudnn"` and half-precision inputs on a
# GPU).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The jaxpr, nested by your classes
#
# About a hundred equations, boxed by the calls that made them: `Block.attention`,
# `Block.mlp`, `gelu`; the softmax under its scope's name, `Attention.attention_weights`.

# %%
nested = draw_jaxpr(transformer)(block, x)  # group_by="auto": by your code past 40
print(nested.title)
nested

# %% tags=["check"] jupyter={"source_hidden": true}
assert "nested by your code's calls" in nested.title
for box in ("Block.attention", "Block.mlp", "Block.norm1", "Block.norm2", "gelu",
            "Attention.attention_weights"):  # the named_scope names the softmax's box
    assert f'"{box}' in nested.source or f">{box}" in nested.source, box
block_jaxpr = jax.make_jaxpr(transformer)(block, x)
products = [e for e in block_jaxpr.eqns if e.primitive.name == "dot_general"]
assert len(products) == 6  # qkv, scores, weights @ v, out, up, down

# %% [markdown] slideshow={"slide_type": "notes"}
# `group_by="auto"` reads the Python call stack JAX records with every equation and
# nests equations by your calls: no adapter per framework, so Flax or Equinox models are
# boxed the same way. A library call inside a `jax.named_scope` takes the scope's name.
# Six matrix products: the work.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where the FLOPs go
#
# Per token: 24·d² for the four weight matrices, 4·t·d for the two products over
# tokens. Attention's share grows with the sequence.

# %%
ledger = cost_table(transformer)(block, x)
weight_flops = 2 * tokens * d * (3 * d + d + 4 * d + 4 * d)  # qkv, out, up, down
token_flops = 2 * 2 * tokens * tokens * d  # q·k and weights·v, all heads
print(repr(ledger))
print(f"weights {weight_flops:,} FLOPs, tokens × tokens {token_flops:,}")

# %% tags=["check"] jupyter={"source_hidden": true}
matmul_flops = weight_flops + token_flops
assert matmul_flops <= ledger.flops <= 1.1 * matmul_flops  # the rest: elementwise
if "flops" in ledger.xla and jax.default_backend() == "cpu":  # as lesson 03's ledger
    # XLA's count of elementwise ops is its own (checked: JAX 0.10.2, 0.12); matmuls agree
    assert abs(ledger.flops / ledger.xla["flops"] - 1) < 0.05
assert weight_flops / matmul_flops > 0.95  # the notes: 96 % here

# %% [markdown] slideshow={"slide_type": "notes"}
# Here the weight matrices do 96 % of the arithmetic. The two t × t products grow with
# the square of the sequence: at t = 6·d tokens (384 here) they match the weights' share,
# and in long-context models they dominate, with a t × t weight matrix per head to store.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Where XLA puts the softmax
#
# `jax.named_scope("attention_weights")` is in each compiled op's `op_name` metadata:
# XLA's dumps, profiler traces and `draw_hlo`'s tooltips all show it.

# %%
after_xla = compare_stages(transformer)(block, x)
print(after_xla.headline())
compiled_text = forward.lower(block, x).compile().as_text()
scoped = sorted(set(re.findall(r'op_name="([^"]*attention_weights[^"]*)"', compiled_text)))
print(*scoped[:4], sep="\n")

# %% tags=["check"] jupyter={"source_hidden": true}
assert scoped and all("/attention_weights/" in name for name in scoped), scoped  # op names
exp_fusions = [f for f in after_xla.fusions if f.ops["exponential"]]
assert exp_fusions  # exp is fused with its neighbours on every backend
if jax.default_backend() == "cpu" and jax.__version__.startswith(("0.10.", "0.12.")):
    assert not any(f.ops["reduce"] for f in exp_fusions)  # the notes: split at reductions
    assert any(f.ops["reduce"] for f in after_xla.fusions)
# the drawing folds the block's calls to fit; its page holds every op and its tooltip
assert "/attention_weights/" in draw_hlo(transformer, stage="compiled")(block, x).html()
assert after_xla.compiled_ops < after_xla.stablehlo_ops

# %% [markdown] slideshow={"slide_type": "notes"}
# On a CPU (JAX 0.10.2 and 0.12) the softmax spans fusions: `exp` in one, its max and
# sum reductions in others; on a GPU XLA can fuse a softmax into one kernel.
# Past XLA (attention never storing the t × t weights): Pallas kernels (GPU, TPU;
# `interpret=True` on a CPU); JAX ships flash attention in `pallas.ops`.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The backward pass, in the explorer
#
# Tick `grad` on a loss: the forward boxes, then each class again, `(backward)`, in
# reverse order.

# %%
def loss(block, x):
    return jnp.mean(transformer(block, x) ** 2)


backward = explore(loss, block, x)
backward.grad.value = True
print(backward.shown.code)
print(backward.shown.result.title)

# %% tags=["check"] jupyter={"source_hidden": true}
drawn = backward.shown.result.source
assert backward.shown.result.title == draw_jaxpr(jax.grad(loss), max_depth=2)(block, x).title
for box in ("Block.attention (backward)", "Block.mlp (backward)"):
    assert box in drawn, box
assert drawn.index('"Block.attention') < drawn.index('"Block.mlp')  # forward: in order
assert drawn.index("Block.mlp (backward)") < drawn.index("Block.attention (backward)")
block_grads = jax.eval_shape(jax.grad(loss), block, x)  # shapes only: nothing compiled
assert isinstance(block_grads, Block) and block_grads.attention.heads == heads
assert block_grads.mlp.up.shape == block.mlp.up.shape  # a gradient per weight

# %% [markdown] slideshow={"slide_type": "notes"}
# Reverse mode runs the classes again backwards: the MLP's backward boxes come first,
# attention's last. The gradient is a `Block` of gradients (lesson 04's pytrees). The
# panel prints `draw_jaxpr(grad(loss), ...)`; paste it into a cell for the same picture.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The gradient's cost
#
# Pick the *cost* view: the same step's FLOPs, about three times the forward's.

# %%
backward.view.value = "cost"
print(backward.shown.code)
grad_ledger = backward.shown.result
print(f"forward {ledger.flops / 1e6:.2f} MFLOP, grad {grad_ledger.flops / 1e6:.2f} MFLOP")

# %% tags=["check"] jupyter={"source_hidden": true}
assert backward.shown.code.startswith("cost_table(grad(loss))")  # the library's call
# every product has two in the backward pass: one for its input, one for its weights
assert 3 * matmul_flops <= grad_ledger.flops <= 3.3 * matmul_flops

# %% [markdown] slideshow={"slide_type": "notes"}
# Each matrix product of the forward pass has two in the backward pass: the gradient
# flowing back to its input and the one for its weights. So a training step costs about
# three forward passes, the rule behind "6 × parameters × tokens" FLOPs per step.

# %% [markdown] slideshow={"slide_type": "skip"}
# ### Without a kernel
#
# Exported to HTML, a notebook has no kernel to redraw the panel: unless the notebook
# saved its widget state, the export shows the output's every view, drawn when the cell
# ran, and its buttons switch them. A deck shows the picture.

# %% slideshow={"slide_type": "skip"}
static = panel._repr_mimebundle_()["text/html"]
print(static.count("<section"), "views;", "drawn when the cell ran" in static)

# %% tags=["check"] jupyter={"source_hidden": true}
# one section a view, each of the panel's views
assert static.count("<section class='jt-view") == len(panel.view.options) >= 10
assert "drawn when the cell ran" in static
assert panel._repr_mimebundle_()["image/svg+xml"] == panel.shown.result.svg()

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - wrote a causal attention block as a few pytree classes and checked it against
#   float64 NumPy and `jax.nn.dot_product_attention`;
# - read its jaxpr nested by our classes, forward and backward;
# - counted its FLOPs: weights per token, attention per token pair; a gradient costs
#   about three forward passes;
# - followed a `jax.named_scope` into XLA's fusions; Pallas is the next step.
