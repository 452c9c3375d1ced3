# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: tags,slideshow,-all
#     formats: ipynb,py:percent
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
# In JAX a derivative is a function, and you write it the way the maths does:
# `grad(f)` is f′. You will see:
#
# - `grad` of a cubic, checked against the formula and against finite differences;
# - nested `grad` for higher derivatives, and how each level makes the program bigger;
# - **the backward pass drawn**: the forward pass, the residuals it saves, and the
#   cotangents flowing back, with the numbers at the example point;
# - `jvp` (forward mode) and `vjp` (reverse mode), and the Jacobians they build,
#   `jacfwd` and `jacrev`, with the rule for which one is cheaper;
# - `tanh` and its first four derivatives, and how a PyTorch-style tape differs.

# %% tags=["setup"] slideshow={"slide_type": "skip"}
# Set-up: install jaxtour where it is missing (Colab), then say what JAX runs on.
import importlib.util

if importlib.util.find_spec("jaxtour") is None:
    # %pip install --quiet "jaxtour @ git+https://github.com/jaxtour/jaxtour"
    pass

import jaxtour

print(jaxtour.describe_devices())

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `grad(f)` is f′
#
# Take f(x) = x³ + 2x² − 3x + 8. By hand, f′(x) = 3x² + 4x − 3, so f′(1) = 4.
# `jax.grad(f)` is a new Python function that computes f′:

# %%
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import paths


def f(x):
    return x**3 + 2 * x**2 - 3 * x + 8


df = jax.grad(f)
print("f(1.0) =", f(1.0), "  grad(f)(1.0) =", df(1.0))
assert f(1.0) == 8.0
assert df(1.0) == 4.0

# %% [markdown]
# It is the derivative everywhere, not just at 1: it matches the formula at any point,
# and a central finite difference computed in float64 NumPy, an oracle that knows nothing
# about JAX.

# %%
xs = np.linspace(-3.0, 3.0, 13)
by_hand = 3 * xs**2 + 4 * xs - 3
by_jax = np.array([df(float(x)) for x in xs])
h = 1e-6
by_differences = (f(xs + h) - f(xs - h)) / (2 * h)  # NumPy float64
print(np.c_[xs, by_jax, by_hand][::3])
assert np.allclose(by_jax, by_hand, rtol=1e-6, atol=1e-5)
assert np.allclose(by_jax, by_differences, rtol=1e-5, atol=1e-5)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Higher derivatives: `grad(grad(f))`
#
# `grad` takes a function and returns a function, so it nests: f″(x) = 6x + 4,
# f‴(x) = 6, and f⁽⁴⁾ = 0. `derivative_table` nests `jax.grad` and, for each level,
# counts the eqns in the jaxpr JAX builds: each `grad` differentiates the program the
# previous one made, so the programs grow.

# %%
from jaxtour.autodiff import derivative_table

table = derivative_table(f, order=4)(1.0)
table

# %%
assert table.values == [8.0, 4.0, 10.0, 6.0, 0.0]
assert jax.grad(jax.grad(f))(1.0) == 6 * 1.0 + 4
assert all(a < b for a, b in zip(table.eqns, table.eqns[1:], strict=False))
print("eqns per level:", table.eqns)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## What the backward pass is
#
# `jax.grad` is reverse mode: `jax.vjp` runs f forward and **saves residuals**, the
# intermediate values the derivative needs (here 3x² and 2x, and the constants 3 and 2);
# the backward pass then starts from a seed cotangent 1.0 and multiplies its way back to
# the input. `draw_grad` draws exactly what JAX built: the jaxpr of the forward pass
# (left), the residuals (middle), and the jaxpr of the VJP JAX returned (right, drawn
# upwards), every box with its value at x = 1.

# %%
from jaxtour.autodiff import draw_grad, grad_graph

picture = draw_grad(f)(1.0)
picture

# %% [markdown] slideshow={"slide_type": "subslide"}
# The gradient the picture shows is `jax.grad`'s, and the residual boxes hold exactly
# what the VJP object JAX returns carries (it is a pytree whose leaves are its residuals).

# %%
graph = grad_graph(f)(1.0)
_, f_vjp = jax.vjp(f, 1.0)
print(picture.title)
assert graph.values_of("gradient") == [4.0]
assert sorted(map(float, graph.values_of("residual"))) == sorted(
    map(float, jax.tree.leaves(f_vjp))) == [2.0, 2.0, 3.0, 3.0]
assert picture.svg().lstrip().startswith("<?xml")

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### A classifier's loss, drawn the same way
#
# The same picture for a small MLP's loss (4 inputs, 8 hidden units, 3 classes): the
# backward lane holds the transposed matmuls (`dot_general` with the weights swapped),
# and a gradient for every weight and bias, each beside its parameter.

# %%
from jaxtour.mlp import init_params, loss

params = init_params(jax.random.key(0), (4, 8, 3))
x_batch = jax.random.normal(jax.random.key(1), (5, 4))
y_batch = jnp.array([0, 2, 1, 1, 0])
mlp_picture = draw_grad(loss)(params, x_batch, y_batch)
mlp_graph = grad_graph(loss)(params, x_batch, y_batch)
expected = jax.tree.leaves(jax.grad(loss)(params, x_batch, y_batch))
assert all(np.allclose(a, b, rtol=1e-6) for a, b in
           zip(mlp_graph.values_of("gradient"), expected, strict=True))
assert mlp_graph.primitive_counts("backward")["dot_general"] == 3
mlp_picture

# %% [markdown] slideshow={"slide_type": "slide"}
# ## `jvp`: forward mode, a tangent beside every value
#
# `jax.jvp(f, (x,), (v,))` returns f(x) and f′(x)·v in one forward sweep: every primal
# value travels with a tangent. With v = 1 the tangent out is f′(1) = 4 again. In the
# picture the tangent lane (right) reads primal values (orange) but never the reverse.

# %%
from jaxtour.autodiff import draw_jvp

primal_out, tangent_out = jax.jvp(f, (1.0,), (1.0,))
print("jvp:", primal_out, tangent_out)
assert (primal_out, tangent_out) == (8.0, 4.0)
draw_jvp(lambda x: jnp.sin(x) * x)((1.0,), (1.0,))

# %% [markdown] slideshow={"slide_type": "subslide"}
# ## `vjp`: reverse mode, for any output
#
# `jax.vjp` returns f(x) and a function that pulls a cotangent u back: uᵀ J. For a vector
# output, `draw_vjp` draws it (where `draw_grad` needs a scalar, like `jax.grad`).

# %%
from jaxtour.autodiff import draw_vjp


def g(x):  # R³ → R²
    return jnp.stack([jnp.sin(x[0]) * x[1], jnp.sum(x**2)])


x3 = jnp.array([0.5, -1.0, 2.0])
u = jnp.array([1.0, -2.0])
out, g_vjp = jax.vjp(g, x3)
(pulled,) = g_vjp(u)
J = jax.jacrev(g)(x3)
print("uᵀJ =", pulled)
assert np.allclose(pulled, u @ J)
draw_vjp(g, cotangents=u)(x3)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## Jacobians: `jacfwd` and `jacrev`, and which one to use
#
# A Jacobian of f: Rⁿ → Rᵐ is m × n. `jax.jacfwd` builds it column by column, one JVP
# per input; `jax.jacrev` row by row, one VJP per output. Both give the same matrix:

# %%
J_forward, J_reverse = jax.jacfwd(g)(x3), jax.jacrev(g)(x3)
print(J_forward)
assert J_forward.shape == (2, 3)
assert np.allclose(J_forward, J_reverse)

# %% [markdown]
# The cost differs. `mode_costs` compiles both for f(x) = tanh(A sin x) over a sweep of
# n and m and reads the FLOPs from XLA's `cost_analysis()` (wall times are noisier at
# these small sizes). Forward mode wins where n < m, reverse mode where n > m: a loss has
# m = 1, which is why training uses `grad`, reverse mode.

# %%
from jaxtour.autodiff import mode_costs

costs = mode_costs()
print(costs)
_ = costs.plot()  # Jupyter shows the figure

# %%
for n, m in costs.sizes:
    if n >= 4 * m:
        assert costs.winner(n, m) == "jacrev", (n, m)
    if m >= 4 * n:
        assert costs.winner(n, m) == "jacfwd", (n, m)
print(costs.rule)

# %% [markdown] slideshow={"slide_type": "slide"}
# ## tanh and its first four derivatives
#
# The classic plot: each curve is `jax.vmap` of nested `jax.grad`, no formula typed in.
# tanh′(0) = 1, tanh″(0) = 0, tanh‴(0) = −2, tanh⁽⁴⁾(0) = 0.

# %%
from jaxtour.autodiff import nested_grads, plot_derivatives

ax = plot_derivatives(jnp.tanh, order=4)  # Jupyter shows the figure

# %%
at_zero = [float(d(0.0)) for d in nested_grads(jnp.tanh, 4)]
print(at_zero)
assert np.allclose(at_zero, [0.0, 1.0, 0.0, -2.0, 0.0], atol=1e-6)
assert [line.get_label() for line in ax.get_lines()[:2]] == ["tanh(x)", "tanh′(x)"]

# %% [markdown] slideshow={"slide_type": "slide"}
# ## The other way: a tape (a teaching model, not JAX)
#
# PyTorch (and micrograd) record a **tape** while the Python runs: every `+` and `*` on
# a tracked value adds a node, and `backward()` walks the tape in reverse. `Value` below
# is a 100-line teaching model of that idea. It gets the same f′(1) = 4, but it records
# its 13 nodes again on every call, and Python walks them every time.

# %%
from jaxtour.autodiff import Value, tape_grad

value, (gradient,), tape_length = tape_grad(f, 1.0)
print(f"tape: f(1) = {value}, f'(1) = {gradient}, {tape_length} nodes recorded")
assert (value, gradient, tape_length) == (8.0, 4.0, 13)
x = Value(1.0)
y = f(x)
y.backward()
assert x.grad == 4.0

# %% [markdown]
# JAX traces f **once** to a jaxpr, transforms that program (`grad`, `vmap`), and
# compiles it (`jit`); later calls run compiled code with no tape. Over many points:

# %%
n_points = 2_000 if paths.quick() else 20_000
points = np.linspace(-2.0, 2.0, n_points)
start = time.perf_counter()
tape_grads = [tape_grad(f, float(p))[1][0] for p in points]
tape_s = time.perf_counter() - start

grad_all = jax.jit(jax.vmap(jax.grad(f)))
start = time.perf_counter()
jax_grads = grad_all(points).block_until_ready()  # first call: trace, transform, compile
first_s = time.perf_counter() - start
start = time.perf_counter()
jax_grads = grad_all(points).block_until_ready()
jax_s = time.perf_counter() - start
print(f"tape, {n_points} calls:        {tape_s * 1e3:8.1f} ms")
print(f"JAX, first call (compiles): {first_s * 1e3:8.1f} ms")
print(f"JAX, next calls:            {jax_s * 1e3:8.3f} ms  ({tape_s / jax_s:.0f}x faster)")
assert np.allclose(tape_grads, jax_grads, rtol=1e-5, atol=1e-5)
assert jax_s * 10 < tape_s

# %% [markdown] slideshow={"slide_type": "subslide"}
# ### Where this sits: the autodiff landscape
#
# Static graphs (TensorFlow 1), dynamic tapes (PyTorch), both (TensorFlow 2), and JAX's
# transformations of traced programs, each with what it buys and what it costs.

# %%
from jaxtour.viz import draw_autodiff_landscape

landscape = draw_autodiff_landscape()
assert all(name in landscape.source for name in ("PyTorch", "TensorFlow", "JAX"))
landscape

# %% [markdown] slideshow={"slide_type": "slide"}
# ## In this notebook we:
#
# - took `grad` of a cubic, got f′(1) = 4, and checked it against the formula and float64
#   finite differences;
# - nested `grad` up to f⁽⁴⁾ and saw each level's jaxpr grow;
# - drew the backward pass JAX builds, its residuals and cotangents, for the cubic and
#   for an MLP loss, with gradients equal to `jax.grad`'s;
# - met `jvp` (a tangent beside every value) and `vjp` (a cotangent pulled back), and
#   `jacfwd`/`jacrev`, measuring that forward mode wins for n < m and reverse for n > m;
# - plotted tanh and four derivatives, and compared JAX with a PyTorch-style tape.
