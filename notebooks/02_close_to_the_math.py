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
# # 02 · Close to the math: `grad`, `jvp`, `vjp`, and what the backward pass is
#
# [![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/notebooks/02_close_to_the_math.ipynb)
#
# - `grad(f)` is f′, and it nests
# - **the backward pass drawn**: residuals and cotangents
# - `jvp` and `vjp`, and the Jacobians `jacfwd` and `jacrev`
# - the **memory of `grad`**, and what `jax.checkpoint` trades for it
# - **your own derivative**: `custom_vjp`, `stop_gradient`, `checkpoint_name` in a `scan`
# - how a PyTorch-style tape differs, measured like with like
#
# *About 60 minutes.*

# %% [markdown] slideshow={"slide_type": "notes"}
# In JAX a derivative is a function, and you write it the way the maths does: `grad(f)`
# is f′. Everything drawn in this lesson is what JAX itself built, and every number is
# checked against `jax.grad`, finite differences or a formula.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# %matplotlib inline
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxtour import paths
from jaxtour.exercises import check

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `grad(f)` is f′
#
# f(x) = x³ + 2x² − 3x + 8, so by hand f′(x) = 3x² + 4x − 3 and f′(1) = 4.

# %%
def f(x):
    return x**3 + 2 * x**2 - 3 * x + 8


df = jax.grad(f)
print("f(1.0) =", f(1.0), "  grad(f)(1.0) =", df(1.0))

# %% tags=["check"] jupyter={"source_hidden": true}
assert f(1.0) == 8.0
assert df(1.0) == 4.0

# %% [markdown] slideshow={"slide_type": "notes"}
# `jax.grad` takes a function and returns a new function, its derivative: no tape, no
# `.backward()`, no `.grad` field. Called at 1.0 it gives 4.0, the value worked out by
# hand above. By default it differentiates with respect to the first argument.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The derivative everywhere, not just at 1
#
# Against the formula, and against float64 finite differences that know nothing of JAX:

# %%
xs = np.linspace(-3.0, 3.0, 13)
by_hand = 3 * xs**2 + 4 * xs - 3
by_jax = np.array([df(float(x)) for x in xs])
h = 1e-6
by_differences = (f(xs + h) - f(xs - h)) / (2 * h)  # NumPy float64
print(np.c_[xs, by_jax, by_hand][::3])

# %% tags=["check"] jupyter={"source_hidden": true}
assert np.allclose(by_jax, by_hand, rtol=1e-6, atol=1e-5)
assert np.allclose(by_jax, by_differences, rtol=1e-5, atol=1e-5)

# %% [markdown] slideshow={"slide_type": "notes"}
# Two independent oracles: the formula, and central finite differences computed in
# float64 NumPy, which knows nothing of JAX. The check cell compares all 13 points with
# both; the slide prints every third row.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Higher derivatives: `grad(grad(f))`
#
# `grad` returns a function, so it nests: f″ = 6x + 4, f‴ = 6, f⁽⁴⁾ = 0.

# %%
from jaxtour.autodiff import derivative_table

table = derivative_table(f, order=4)(1.0)
table

# %% tags=["check"] jupyter={"source_hidden": true}
assert table.values == [8.0, 4.0, 10.0, 6.0, 0.0]
assert jax.grad(jax.grad(f))(1.0) == 6 * 1.0 + 4
assert all(a < b for a, b in zip(table.eqns, table.eqns[1:], strict=False))

# %% [markdown] slideshow={"slide_type": "notes"}
# `derivative_table` nests `jax.grad` and, for each level, counts the equations in the
# jaxpr JAX builds: each `grad` differentiates the program the previous one made, so the
# programs grow, even though the maths gets simpler.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What the backward pass is
#
# `jax.grad` runs f forward, **saves residuals**, then pulls a seed 1.0 back to the input.
# Here for s(x) = sin(x)·x at x = 1:

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.autodiff import draw_grad, grad_graph


def s(x):
    return jnp.sin(x) * x


# %%
draw_grad(s)(1.0)

# %% tags=["check"] jupyter={"source_hidden": true}
small_graph = grad_graph(s)(1.0)
assert np.isclose(small_graph.values_of("gradient")[0], float(jnp.sin(1.0) + jnp.cos(1.0)))
drawn = sorted(map(float, small_graph.values_of("residual")))
assert np.allclose(drawn, sorted([1.0, np.cos(1.0), np.sin(1.0)]))  # x, cos x, sin x
assert all(np.isclose(drawn, float(r)).any() for r in jax.tree.leaves(jax.vjp(s, 1.0)[1]))

# %% [markdown] slideshow={"slide_type": "notes"}
# `draw_grad` draws what JAX built: the forward jaxpr (left), the residuals (middle: the
# values the derivative needs, here x, cos x and sin x), and the VJP's jaxpr (right,
# upwards from the seed), each box with its value at x = 1. The gradient,
# sin 1 + cos 1 = 1.382, is the product rule.

# %% [markdown] slideshow={"slide_type": "skip"}
# The same picture for the cubic: its residuals (JAX 0.10.2 and 0.12) are 3x² and 2x and
# the constants 3 and 2 (the picture is too big for a slide: the notebook only).

# %% slideshow={"slide_type": "skip"}
picture = draw_grad(f)(1.0)
picture

# %% [markdown] slideshow={"slide_type": "skip"}
# The gradient the picture shows is `jax.grad`'s, and the residual boxes hold exactly
# what the VJP object JAX returns carries (it is a pytree whose leaves are its residuals).

# %% slideshow={"slide_type": "skip"}
graph = grad_graph(f)(1.0)
_, f_vjp = jax.vjp(f, 1.0)
print(picture.title)

# %% tags=["check"] jupyter={"source_hidden": true}
assert graph.values_of("gradient") == [4.0] and f_vjp(1.0)[0] == 4.0
drawn_residuals = sorted(map(float, graph.values_of("residual")))
assert drawn_residuals == sorted(map(float, jax.tree.leaves(f_vjp))) != []  # JAX's own
if jax.__version__.startswith(("0.10.", "0.12.")):  # which residuals: JAX's choice
    assert drawn_residuals == [2.0, 2.0, 3.0, 3.0]  # 2x, 3x² at x = 1, and the constants 2, 3
assert picture.svg().lstrip().startswith("<?xml")

# %% [markdown] slideshow={"slide_type": "skip"}
# ### A classifier's loss, drawn the same way
#
# The same picture for a small MLP's loss (4 inputs, 8 hidden units, 3 classes): the
# backward lane holds the transposed matmuls (`dot_general` with the weights swapped),
# and a gradient for every weight and bias, each beside its parameter.

# %% slideshow={"slide_type": "skip"}
from jaxtour.mlp import init_params, loss

params = init_params(jax.random.key(0), (4, 8, 3))
x_batch = jnp.linspace(-2.0, 2.0, 20).reshape(5, 4)
y_batch = jnp.array([0, 2, 1, 1, 0])
mlp_picture = draw_grad(loss)(params, x_batch, y_batch)
mlp_picture

# %% tags=["check"] jupyter={"source_hidden": true}
mlp_graph = grad_graph(loss)(params, x_batch, y_batch)
expected = jax.tree.leaves(jax.jit(jax.grad(loss))(params, x_batch, y_batch))
assert all(np.allclose(a, b, rtol=1e-6) for a, b in
           zip(mlp_graph.values_of("gradient"), expected, strict=True))
assert mlp_graph.primitive_counts("backward")["dot_general"] == 3

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `jvp`: forward mode, a tangent beside every value
#
# `jax.jvp(f, (x,), (v,))` returns f(x) and f′(x)·v in one forward sweep. With v = 1:

# %%
primal_out, tangent_out = jax.jvp(f, (1.0,), (1.0,))
print("jvp:", primal_out, tangent_out)

# %% tags=["check"] jupyter={"source_hidden": true}
assert (primal_out, tangent_out) == (8.0, 4.0)

# %% [markdown] slideshow={"slide_type": "notes"}
# `jvp` takes the primals and a tangent of the same shape, and returns the primal output
# and the tangent output, J·v. For a scalar f and v = 1 that is f′(x): the same 4.0 as
# `grad`, computed forwards.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The tangent lane, drawn
#
# For sin(x)·x: the tangents (right) read the primal values, never the reverse.

# %%
from jaxtour.autodiff import draw_jvp

draw_jvp(s)((1.0,), (1.0,))

# %% [markdown] slideshow={"slide_type": "notes"}
# Every primal value travels with a tangent, computed in the same sweep; nothing is saved
# for later, so forward mode needs no residuals. One JVP gives J·v, one column of the
# Jacobian when v is a basis vector (for s, a 1 × 1 Jacobian: s′(1)·v).

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `vjp`: reverse mode, for any output
#
# `jax.vjp` returns f(x) and a function that pulls a cotangent u back: uᵀJ.

# %%
A = jnp.array([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])


def g(x):  # R³ → R²
    return jnp.sin(A @ x)


x3 = jnp.array([0.5, -1.0, 2.0])
u = jnp.array([1.0, -2.0])
out, g_vjp = jax.vjp(g, x3)
(pulled,) = g_vjp(u)
print("uᵀJ =", pulled)

# %% tags=["check"] jupyter={"source_hidden": true}
J = jax.jacrev(g)(x3)
assert np.allclose(pulled, u @ J)
by_hand = np.asarray(A).T @ (np.asarray(u) * np.cos(np.asarray(A) @ np.asarray(x3)))
assert np.allclose(pulled, by_hand, atol=1e-6)  # Aᵀ (u ⊙ cos(Ax))

# %% [markdown] slideshow={"slide_type": "notes"}
# `g` maps R³ to R², so its Jacobian is 2 × 3. `jax.vjp` runs g forward once and hands
# back a function; each call of it pulls one output cotangent u back to the input: uᵀJ,
# for about the cost of one backward pass, without ever building J.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### The cotangent pulled back, drawn
#
# The residuals are A and cos(Ax); the backward pass multiplies by cos(Ax), then by Aᵀ.

# %%
from jaxtour.autodiff import draw_vjp

draw_vjp(g, cotangents=u)(x3)

# %% [markdown] slideshow={"slide_type": "notes"}
# `draw_vjp` draws a VJP for a vector output (`draw_grad` needs a scalar, like
# `jax.grad`). Reverse mode saves what the derivative needs, here the matrix A and cos(Ax),
# and pulls u back through the transposed operations: uᵀJ = Aᵀ(u ⊙ cos(Ax)).

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: gradient from `vjp`
#
# Write `ex_grad_from_vjp(f, x)` that returns ∇f(x) for a scalar-valued `f`, using only
# `jax.vjp`.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_grad_from_vjp(f, x):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_grad_from_vjp(f, x):
    y, f_vjp = jax.vjp(f, x)
    return f_vjp(jnp.ones_like(y))[0]  # seed cotangent 1: uᵀJ is the gradient


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>`jax.vjp(f, x)` returns f(x) and a function of the
# cotangent.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>Seed it with 1.0 shaped like f(x); it returns a tuple,
# one cotangent per input of `f`.</details>

# %% [markdown] slideshow={"slide_type": "notes"}
# About 5 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/02_close_to_the_math.ipynb`, or the Colab badge. Hint: `jax.vjp(f, x)` returns
# f(x) and a function; seed it with `jnp.ones_like(f(x))` and take the first element of
# the tuple it returns.

# %% slideshow={"slide_type": "skip"}
check(ex_grad_from_vjp)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_grad_from_vjp, quiet=True).passed

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: read a VJP off its picture
#
# In the `draw_vjp` picture above, which input of `g` gets the cotangent of largest
# magnitude? Write `ex_biggest_cotangent()` returning (its index, its value).

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_biggest_cotangent():
    ...  # your code here: return (index, value)


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_biggest_cotangent():
    return (2, -2.17)  # the cotangent of x reads [-0.9365, 1.306, -2.17]


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>The green box, "cotangent of x", holds uᵀJ: one
# number per input x[0], x[1], x[2].</details>

# %% [markdown] slideshow={"slide_type": "notes"}
# About 3 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/02_close_to_the_math.ipynb`, or the Colab badge. Hint: the green box,
# "cotangent of x", holds three numbers; compare their magnitudes, signs kept in the
# answer.

# %% slideshow={"slide_type": "skip"}
check(ex_biggest_cotangent)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_biggest_cotangent, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Jacobians: `jacfwd` and `jacrev`
#
# The Jacobian of f: Rⁿ → Rᵐ is m × n. Both build it, and agree:

# %%
J_forward, J_reverse = jax.jacfwd(g)(x3), jax.jacrev(g)(x3)
print(J_forward)

# %% tags=["check"] jupyter={"source_hidden": true}
assert J_forward.shape == (2, 3)
assert np.allclose(J_forward, J_reverse)
basis = jnp.eye(3)  # jacfwd = vmap of jvp over the input basis: one batched pass
columns = jax.vmap(lambda v: jax.jvp(g, (x3,), (v,))[1], out_axes=1)(basis)
assert np.allclose(columns, J_forward)

# %% [markdown] slideshow={"slide_type": "notes"}
# `jacfwd` is `vmap` of `jvp` over the n input basis vectors: one batched forward pass
# yields the n columns. `jacrev` is `vmap` of the VJP over the m output basis vectors:
# one batched backward pass yields the m rows. A batch of n vectors still costs about n
# single passes of arithmetic: hence the next slide's rule.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: a Jacobian from `vmap` of `jvp`
#
# Write `ex_jacobian_from_jvp(f, x)`: the m × n Jacobian of f: Rⁿ → Rᵐ at x, one `jax.jvp`
# per basis vector, batched with `jax.vmap`.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_jacobian_from_jvp(f, x):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_jacobian_from_jvp(f, x):
    basis = jnp.eye(x.shape[0], dtype=x.dtype)  # row j: the j-th basis vector

    def push(v):  # one JVP: J v, the column of J along v
        return jax.jvp(f, (x,), (v,))[1]

    return jax.vmap(push, out_axes=1)(basis)  # columns side by side: m × n


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>`jax.jvp(f, (x,), (v,))[1]` is J·v: with v the j-th
# basis vector, column j of J.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>`jax.vmap` stacks its results along axis 0 (rows);
# `out_axes=1` stacks them as columns.</details>

# %% [markdown] slideshow={"slide_type": "notes"}
# About 7 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/02_close_to_the_math.ipynb`, or the Colab badge. Hint: the basis vectors are
# the rows of `jnp.eye(n)`; `jax.vmap` stacks results as rows unless `out_axes=1`.

# %% slideshow={"slide_type": "skip"}
check(ex_jacobian_from_jvp)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_jacobian_from_jvp, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Which one is cheaper

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.autodiff import mode_costs

# %%
costs = mode_costs()  # XLA's FLOPs for f: Rⁿ → Rᵐ
figure = costs.plot()  # drawn with pyplot: Jupyter shows it under the cell

# %% tags=["check"] jupyter={"source_hidden": true}
for n, m in costs.sizes:
    if n >= 4 * m:
        assert costs.winner(n, m) == "jacrev", (n, m)
    if m >= 4 * n:
        assert costs.winner(n, m) == "jacfwd", (n, m)

# %% [markdown] slideshow={"slide_type": "notes"}
# `mode_costs` compiles both for f(x) = tanh(A sin x) over a sweep of n inputs and m
# outputs and reads the FLOPs from XLA's `cost_analysis()` (wall times are noisier at
# these small sizes). Forward mode wins where n < m, reverse mode where n > m:
# a loss has m = 1, which is why training uses `grad`, reverse mode.

# %% slideshow={"slide_type": "skip"}
print(costs)  # the table, and the rule under it

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What `grad` keeps: the residuals
#
# The backward pass reads values from the forward pass: the residuals, held in memory in
# between. `jax.checkpoint` keeps fewer of them and computes the rest again.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
from jaxtour.cost import grad_memory
from jaxtour.mlp import example_batch

# %%
mnist_params = init_params(jax.random.key(0))  # 784 → 512 → 256 → 10
images, labels = example_batch(128)
memory = grad_memory(loss)(mnist_params, images, labels)
for p in memory.policies:
    print(f"{p.name:<17} {p.residual_bytes / 1e3:6.0f} kB kept, {p.flops / 1e6:4.0f} MFLOP")

# %% tags=["check"] jupyter={"source_hidden": true}
default, dots, nothing = (memory.policy(name) for name in
                          ("no checkpoint", "dots_saveable", "nothing_saveable"))
assert nothing.residual_bytes < dots.residual_bytes < default.residual_bytes
assert nothing.residuals == 0  # nothing saved: only the inputs are kept
assert default.residual_bytes >= 4 * 128 * (512 + 256)  # the hidden activations, float32
forward_matmuls = 2 * 128 * (784 * 512 + 512 * 256 + 256 * 10)
assert abs(nothing.flops - default.flops - forward_matmuls) < 0.01 * forward_matmuls

# %% [markdown] slideshow={"slide_type": "notes"}
# `grad_memory` weighs what `jax.vjp`'s backward function holds (inputs left out) and
# counts the FLOPs of `grad(f)`'s jaxpr per policy. By default JAX keeps every layer's
# activations; `dots_saveable` keeps the matmul outputs only; `nothing_saveable` keeps
# nothing and runs the forward pass again in the backward pass: three matmuls more.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `jax.checkpoint` trades memory for FLOPs

# %%
memory.plot()

# %% [markdown] slideshow={"slide_type": "notes"}
# These are JAX's numbers: what `jax.vjp` holds between two separate calls, and what the
# jaxpr asks for. Inside one `jit` the picture changes, because the two passes become
# one program: the next slide. The trade pays in big models with each layer
# checkpointed, where every layer's residuals would not fit in memory at once.

# %% slideshow={"slide_type": "skip"}
print(memory)

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Checkpointing the whole loss, under `jit`
#
# Matrix products in the StableHLO JAX hands XLA, with `nothing_saveable`:

# %%
remat_loss = jax.checkpoint(loss, policy=jax.checkpoint_policies.nothing_saveable)


def stablehlo_dots(fn):
    text = jax.jit(fn).lower(mnist_params, images, labels).as_text()
    return text.count("stablehlo.dot_general")


dot_counts = {
    "grad, no checkpoint": stablehlo_dots(jax.grad(loss)),
    "grad, checkpointed": stablehlo_dots(jax.grad(remat_loss)),
    "value_and_grad, checkpointed": stablehlo_dots(jax.value_and_grad(remat_loss)),
}
for name, count in dot_counts.items():
    print(f"{name:<29} {count:2} dot_general")

# %% tags=["check"] jupyter={"source_hidden": true}
plain, remat_grad, remat_both = dot_counts.values()
forward_dots = stablehlo_dots(loss)
assert forward_dots == 3  # three layers: the oracle is the network's shape
assert plain == forward_dots + 3 + 2  # a weight-gradient product per layer, input ones for 2
assert remat_grad == plain  # the unused first forward pass: dead code, removed
assert remat_both == plain + forward_dots  # both forward passes stay: 11
assert "optimization_barrier" in jax.jit(jax.value_and_grad(remat_loss)).lower(
    mnist_params, images, labels).as_text()  # prevent_cse=True, the default

# %% [markdown] slideshow={"slide_type": "notes"}
# Under `grad` the first forward pass only computes the loss, which `grad` discards:
# dead code, removed before XLA sees it. The recomputed pass is all that is left, so no
# memory is saved. `value_and_grad` keeps the loss: both passes stay (11 products, JAX
# 0.10.2 and 0.12), fenced by an `optimization_barrier` (`prevent_cse=True`).

# %% [markdown] slideshow={"slide_type": "skip"}
# What XLA then does with the barrier depends on the backend and the version: on a CPU
# with JAX 0.10.2 the compiled program of the `value_and_grad` version holds 8 products
# again (XLA merged them after all); with JAX 0.12 it keeps all 11. Checkpointing pays
# where a forward pass's residuals would otherwise live for a long time: per layer, or
# per step of a `scan` (below), never for a whole function whose backward pass follows
# at once. This run's compiled count, on a CPU only: an NVIDIA GPU turns products into
# cuBLAS custom-calls, which a count of ` dot(` misses (lesson 03).

# %% slideshow={"slide_type": "skip"}
compiled_vag = jax.jit(jax.value_and_grad(remat_loss)).lower(mnist_params, images, labels)
if jax.default_backend() == "cpu":  # elsewhere products may be library calls, not dots
    print(compiled_vag.compile().as_text().count(" dot("), "dot ops after XLA")

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Where it pays: per step of a `scan`
#
# Name a value with `checkpoint_name`; a policy keeps only the names you list.

# %%
from jax.ad_checkpoint import checkpoint_name


def layer(h, w):  # one step of the scan: a dense layer
    z = checkpoint_name(h @ w, "pre_activation")
    return jnp.tanh(z), None


def deep_net(policy):
    body = layer if policy is None else jax.checkpoint(layer, policy=policy)
    return lambda ws, h: jnp.sum(lax.scan(body, h, ws)[0])

# %% [markdown] slideshow={"slide_type": "notes"}
# `checkpoint_name` tags a value and changes nothing else. `jax.checkpoint` wraps the
# scan's body, so the policy applies to each step: the backward pass of step k
# recomputes what step k did not keep. The next slide weighs what each policy keeps.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### What each policy keeps, per step
#
# 16 layers of 256 units, a batch of 32, through `lax.scan`:

# %%
policies = {
    "no checkpoint": None,
    "save pre_activation": jax.checkpoint_policies.save_only_these_names("pre_activation"),
    "nothing_saveable": jax.checkpoint_policies.nothing_saveable,
}
ws = jax.random.normal(jax.random.key(2), (16, 256, 256)) / 16  # 16 layers, stacked
h0 = jnp.ones((32, 256))
kept = {}
for name, policy in policies.items():
    _, net_vjp = jax.vjp(deep_net(policy), ws, h0)
    kept[name] = [leaf for leaf in jax.tree.leaves(net_vjp) if leaf.shape == (16, 32, 256)]
    print(f"{name:<20} {len(kept[name])} per-step arrays kept, "
          f"{sum(leaf.nbytes for leaf in kept[name]) / 1e6:.2f} MB")

# %% tags=["check"] jupyter={"source_hidden": true}
default_kept, named_kept, nothing_kept = (len(arrays) for arrays in kept.values())
carries, pre_activations = [], []  # the oracle: the scan unrolled, each step's values
carry = h0
for w_step in np.asarray(ws):  # NumPy rows: iterating a jax.Array compiles an unstack
    carries.append(carry)
    pre_activations.append(carry @ w_step)
    carry = jnp.tanh(pre_activations[-1])


def holds(arrays, oracle):
    return any(np.allclose(a, jnp.stack(oracle), atol=1e-5) for a in arrays)


assert holds(kept["save pre_activation"], pre_activations)  # the name listed: kept
assert not holds(kept["nothing_saveable"], pre_activations)
assert holds(kept["nothing_saveable"], carries)  # the carry each step starts from
assert nothing_kept < named_kept <= default_kept  # JAX's own: 3 in 0.10.2, 2 in 0.12
if jax.__version__.startswith(("0.10.", "0.12.")):
    assert (named_kept, nothing_kept) == (2, 1)  # the counts the slide prints
policy_grads = {name: jax.jit(jax.grad(deep_net(p)))(ws, h0) for name, p in policies.items()}
reference_grads = policy_grads.pop("no checkpoint")
for name, policy_grad in policy_grads.items():  # the same gradient, only memory differs
    assert np.allclose(policy_grad, reference_grads, atol=1e-5), name

# %% [markdown] slideshow={"slide_type": "notes"}
# Each array kept is 16 × 32 × 256: one per step. Without a policy JAX picks what to
# keep (how much varies by JAX version); `save_only_these_names` keeps the named
# pre-activation and the carry each step starts from; `nothing_saveable` only the carry.
# Gradients are identical: the backward pass recomputes the rest.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Your own derivative: `jax.custom_vjp`
#
# Gradient clipping: the identity going forward, the cotangent clipped coming back.

# %%
@jax.custom_vjp
def clip_gradient(x):
    return x


def clip_forward(x):
    return x, None  # the output, and the residuals the backward rule needs (none)


def clip_backward(residuals, cotangent):
    return (jnp.clip(cotangent, -1.0, 1.0),)  # one cotangent per input


clip_gradient.defvjp(clip_forward, clip_backward)

steep = lambda x: 10.0 * clip_gradient(x)
print("value:", steep(2.0), " grad:", jax.grad(steep)(2.0), " unclipped:", 10.0)

# %% tags=["check"] jupyter={"source_hidden": true}
assert steep(2.0) == 20.0 and jax.grad(steep)(2.0) == 1.0
assert jax.grad(lambda x: 0.5 * clip_gradient(x))(2.0) == 0.5  # inside the clip: unchanged
assert np.allclose(jax.vmap(jax.grad(lambda x: 3 * clip_gradient(x) ** 2))(jnp.array([0.1, 1.0])),
                   [0.6, 1.0])  # 6x, clipped where it exceeds 1; vmap goes through
assert len(jax.make_jaxpr(clip_gradient)(1.0).eqns) == 1  # one call; the rules beside it
assert jax.grad(jax.jit(steep))(2.0) == 1.0  # the rule survives tracing and compiling
try:
    jax.jvp(clip_gradient, (1.0,), (1.0,))
    raise AssertionError("forward mode should refuse a custom_vjp function")
except TypeError:  # the notes' claim: custom_vjp has no forward mode (the class, not text)
    pass

# %% [markdown] slideshow={"slide_type": "notes"}
# `custom_vjp` takes two rules: a forward one returning the output and its residuals,
# and a backward one mapping residuals and the output cotangent to one cotangent per
# input. Here the value passes unchanged and the gradient 10 is clipped to 1. Unlike
# `custom_jvp` (lesson 04), it has no forward mode: `jvp` of it raises.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### `lax.stop_gradient`: a value without a derivative
#
# Straight-through rounding: the value of `round(x)`, the gradient of `x`.

# %%
def round_straight_through(x):
    return x + lax.stop_gradient(jnp.round(x) - x)


print("value:", round_straight_through(1.3), " grad:", jax.grad(round_straight_through)(1.3))
print("jnp.round alone, grad:", jax.grad(jnp.round)(1.3))

# %% tags=["check"] jupyter={"source_hidden": true}
assert round_straight_through(1.3) == 1.0 and jax.grad(round_straight_through)(1.3) == 1.0
assert jax.grad(jnp.round)(1.3) == 0.0  # round is flat almost everywhere
assert jax.grad(lambda x: x * lax.stop_gradient(x))(3.0) == 3.0  # not 6: a constant factor

# %% [markdown] slideshow={"slide_type": "notes"}
# `stop_gradient` is the identity whose derivative is zero: `grad` treats its output as
# a constant. The rounding's derivative is zero almost everywhere, useless for training;
# adding `stop_gradient(round(x) - x)` to x keeps the rounded value and x's gradient, 1.
# Targets in reinforcement learning are held fixed the same way.

# %% [markdown] tags=["exercise"] slideshow={"slide_type": "slide"}
# ## Your turn: clip a gradient by its norm
#
# Write `ex_clip_by_norm(x)`: the identity going forward; going back, the cotangent g
# rescaled to g · min(1, 1/‖g‖). Inside it, define a `jax.custom_vjp` function.

# %% tags=["exercise"] slideshow={"slide_type": "skip"}
def ex_clip_by_norm(x):
    ...  # your code here


# %% tags=["solution"] slideshow={"slide_type": "skip"}
def ex_clip_by_norm(x):
    @jax.custom_vjp
    def clip(x):
        return x

    def forward(x):
        return x, None  # no residuals needed

    def backward(_, g):
        return (g * jnp.minimum(1.0, 1.0 / jnp.linalg.norm(g)),)

    clip.defvjp(forward, backward)
    return clip(x)


# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 1</summary>Copy the shape of `clip_gradient` above: a function
# decorated with <code>@jax.custom_vjp</code>, a forward rule returning (output,
# residuals), a backward rule returning a tuple, joined by <code>.defvjp</code>.</details>

# %% [markdown] tags=["hint"] slideshow={"slide_type": "skip"}
# <details><summary>Hint 2</summary>In the backward rule, <code>jnp.linalg.norm(g)</code>
# is ‖g‖; <code>jnp.minimum(1.0, 1.0 / norm)</code> leaves short cotangents as they
# are.</details>

# %% [markdown] slideshow={"slide_type": "notes"}
# About 8 minutes. Open your student copy: `jaxtour lessons` →
# `lessons/02_close_to_the_math.ipynb`, or the Colab badge. Hint: start from
# `clip_gradient`; only the backward rule changes, scaling the whole vector instead of
# clipping each element. Finish by returning `clip(x)`.

# %% slideshow={"slide_type": "skip"}
check(ex_clip_by_norm)

# %% tags=["check"] jupyter={"source_hidden": true}
assert check(ex_clip_by_norm, quiet=True).passed

# %% [markdown] slideshow={"slide_type": "slide"}
# ## tanh and its first four derivatives
#
# Each curve is `jax.vmap` of nested `jax.grad`: no formula typed in.

# %%
from jaxtour.autodiff import nested_grads, plot_derivatives

ax = plot_derivatives(jnp.tanh, order=4)  # Jupyter shows the figure

# %% tags=["check"] jupyter={"source_hidden": true}
at_zero = [float(d(0.0)) for d in nested_grads(jnp.tanh, 4)]
assert np.allclose(at_zero, [0.0, 1.0, 0.0, -2.0, 0.0], atol=1e-6)
assert [line.get_label() for line in ax.get_lines()[:2]] == ["tanh(x)", "tanh′(x)"]

# %% [markdown] slideshow={"slide_type": "notes"}
# tanh′(0) = 1, tanh″(0) = 0, tanh‴(0) = −2, tanh⁽⁴⁾(0) = 0: the check cell compares them.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The other way: a tape (a teaching model, not JAX)
#
# PyTorch's eager mode (and micrograd) **record a tape** while the Python runs, then
# walk it backwards. `tape_grad` is a small model of that idea:

# %%
from jaxtour.autodiff import Value, tape_grad

value, (gradient,), tape_length = tape_grad(f, 1.0)
print(f"tape: f(1) = {value}, f'(1) = {gradient}, {tape_length} nodes recorded")

# %% tags=["check"] jupyter={"source_hidden": true}
assert (value, gradient, tape_length) == (8.0, 4.0, 13)
x = Value(1.0)
y = f(x)
y.backward()
assert x.grad == 4.0

# %% [markdown] slideshow={"slide_type": "notes"}
# Every `+` and `*` on a tracked `Value` adds a node; `backward()` walks them in
# reverse. Same f′(1) = 4, but the 13 nodes are recorded anew on every call (PyTorch
# too, in C++). JAX under `jit` traces f **once**, transforms and compiles it: later
# calls run compiled code, no tape. Without `jit`, `jax.grad(f)(x)` traces every call.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Like with like: one point per call
#
# The tape; `jax.grad(f)`, which traces f on every call and runs it op by op; and
# `jax.jit(jax.grad(f))`, traced and compiled on its first call. Each is called once per
# point, on a short and a ten-times-longer function:

# %% slideshow={"slide_type": "skip"}
def logistic(x, steps):  # `steps` iterations of the logistic map: 7 tape nodes each
    for _ in range(steps):
        x = 2.5 * x * (1 - x)
    return x


points = np.linspace(0.1, 0.9, 20 if paths.quick() else 100).tolist()
f_runs = []  # one entry per time Python runs f_steps: every tape call, every trace


def f_steps(x, steps):
    f_runs.append(steps)
    return logistic(x, steps)


def tape_derivative(f, x):
    _, (dfdx,), _ = tape_grad(f, x)
    return dfdx


def per_call(fns, rounds=25, points=points):
    """Each function's median seconds per call at `points`, one figure per round, and
    its last round's results. The functions take turns, one pass over the points each."""
    seconds = {name: np.empty(rounds) for name in fns}
    for r in range(rounds):
        results = {}
        for name, fn in fns.items():
            times, results[name] = [], []
            for p in points:
                start = time.perf_counter()
                result = fn(p)
                if isinstance(result, jax.Array):  # the tape returns a float: no wait
                    result.block_until_ready()
                times.append(time.perf_counter() - start)
                results[name].append(result)
            seconds[name][r] = np.median(times)
    return seconds, results


def typical(seconds):
    """A function's median round, in microseconds."""
    return f"{np.median(seconds) * 1e6:7.1f} µs"


def growth(before, after):
    """`after`'s time over `before`'s, taken round by round, then the median."""
    return float(np.median(after / before))


# %%
fast, slow = {}, {}
for steps in (1, 10):
    f = functools.partial(f_steps, steps=steps)
    fast["tape", steps] = functools.partial(tape_derivative, f)  # records every call
    fast["jit(grad)", steps] = jax.jit(jax.grad(f))  # traced, compiled on 1st call
    slow["grad", steps] = jax.grad(f)  # traces every call, runs op by op
seconds, grads = per_call(fast)  # they take turns, one pass over the points each
eager_seconds, eager_grads = per_call(slow, 3, points[:8])  # slow: 8 points
seconds |= eager_seconds
for steps in (1, 10):
    print(f"steps = {steps:2}: " + ", ".join(
        f"{how} {typical(seconds[how, steps])}" for how in ("tape", "grad", "jit(grad)")))
nodes = [tape_grad(lambda x, n=n: logistic(x, n), 0.5)[2] for n in (1, 10)]
print(f"ten steps: tape {nodes[0]} → {nodes[1]} nodes; time " + ", ".join(
    f"{how} ×{growth(seconds[how, 1], seconds[how, 10]):.1f}"
    for how in ("tape", "grad", "jit(grad)")))

# %% tags=["check"] jupyter={"source_hidden": true}
# the same derivatives; jit traced each function once, the tape and eager grad every call
for steps in (1, 10):
    jit_grads = grads["jit(grad)", steps]
    assert np.allclose(grads["tape", steps], jit_grads, rtol=1e-4, atol=1e-5)
    assert np.allclose(eager_grads["grad", steps], jit_grads[:8], rtol=1e-4, atol=1e-5)
rounds, eager_rounds = len(seconds["tape", 1]), len(eager_seconds["grad", 1])
runs = 1 + rounds * len(points) + eager_rounds * len(eager_grads["grad", 1])
assert f_runs.count(1) == f_runs.count(10) == runs
assert len(f_runs) == 2 * runs
# eager grad re-traces and dispatches every op on each call: its work grows with the op
# count (counted, not timed: eager timings are noisy on a busy machine)
n_ops = [len(jax.make_jaxpr(jax.grad(lambda x, n=n: logistic(x, n)))(0.5).eqns)
         for n in (1, 10)]
assert n_ops[1] > 5 * n_ops[0]
# the same arithmetic, compiled once: far cheaper per call
assert seconds["grad", 10].min() > 10 * seconds["jit(grad)", 10].min()
# the mechanism: the tape records 7 nodes per step (and one for x) on every call
assert nodes == [8, 71]
tape_growth = growth(seconds["tape", 1], seconds["tape", 10])
jit_growth = growth(seconds["jit(grad)", 1], seconds["jit(grad)", 10])
assert tape_growth > 4  # the tape's cost grows with the operations it records
# a compiled call's cost here is dispatch, nearly flat in the op count: it grows far less
assert tape_growth > 2 * jit_growth
# CPU only: on a GPU or TPU each call also copies x to the device, runs there and is
# waited for, a larger fixed cost
if jax.default_backend() == "cpu":
    assert growth(seconds["jit(grad)", 10], seconds["tape", 10]) > 3

# %% [markdown] slideshow={"slide_type": "notes"}
# The tape records 8 nodes for one step, 71 for ten; its time grows with them (a little
# less: each call has a fixed cost). Eager `grad` re-traces and dispatches every op on
# each call. `jit(grad)` runs one compiled program: a fixed cost, nearly flat. The gap is
# Python running every op against one compiled call.

# %% [markdown] slideshow={"slide_type": "skip"}
# The tape and `jit(grad)` functions take turns, one pass over the points each, for 25
# rounds (eager `grad`, slow: eight points, three rounds). A time printed is the
# function's median round, each round's figure the median call of its pass. A growth
# factor is a ratio taken within each round, then the median over rounds: a machine
# whose speed drifts during the run (a busy laptop, a shared cloud machine) moves both
# passes of a round alike, and a round caught mid-change is outvoted. The run counter
# `f_runs` shows the mechanism: `f_steps` ran on every tape call and every eager `grad`
# call, but only once under `jax.jit` (the check cell counts). Vectorising is a separate
# win: `jax.vmap(jax.grad(f))` takes all points in one call.

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Where this sits: the autodiff landscape

# %% tags=["hide-input"]
from jaxtour.viz import draw_autodiff_landscape

landscape = draw_autodiff_landscape()
landscape

# %% tags=["check"] jupyter={"source_hidden": true}
assert all(name in landscape.source for name in ("PyTorch", "TensorFlow", "JAX"))

# %% [markdown] slideshow={"slide_type": "notes"}
# Static graphs (TensorFlow 1), a tape recorded as Python runs (PyTorch), both (TensorFlow
# 2), JAX's transformations of traced programs, and PyTorch 2, which compiles graphs
# captured from Python (`torch.compile`) and has JAX-like `grad` and `vmap` (`torch.func`).

# %% [markdown] slideshow={"slide_type": "skip"}
# A note on the figures: the microseconds above are one run on the machine that ran this
# notebook. A jitted call's fixed cost is typically a few to a few tens of microseconds
# on a CPU, and more on an accelerator, where the call also launches device work.

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - took `grad` of a cubic, checked it, and nested it up to f⁽⁴⁾;
# - drew the backward pass: residuals and cotangents;
# - met `jvp` and `vjp`, and `jacfwd`/`jacrev` as `vmap` over a basis;
# - weighed what `grad` keeps, and what `jax.checkpoint` trades for it;
# - wrote a derivative (`custom_vjp`) and removed one (`stop_gradient`);
# - timed a tape against eager `grad` and `jit(grad)`.
#
# *Next: lesson 03, how tracing and XLA work.*
