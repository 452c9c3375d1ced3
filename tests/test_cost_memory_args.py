"""grad_memory takes what jax.grad takes (holomorphic, allow_int, an empty pytree), and
says what went wrong with what it cannot take, as draw_grad says it."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxtour.cost import grad_memory

ONE = ["no checkpoint"]
X = jnp.arange(1.0, 4.0)


def _square_sum(z):
    return jnp.sum(z**2)


def _scaled(n, x):
    return jnp.sum(x**2 * n)


def _raises(message, call):
    # raised inside a trace, the error has JAX's note on its traceback on a line below
    with pytest.raises(TypeError, match=f"^{re.escape(message)}(\n|$)"):
        call()


def test_holomorphic_is_passed_to_jax_grad():
    z = X.astype(jnp.complex64)
    jax.grad(_square_sum, holomorphic=True)(z)  # the oracle takes it
    [complex_], [real] = (
        grad_memory(_square_sum, holomorphic=True, policies=ONE)(z).policies,
        grad_memory(_square_sum, policies=ONE)(X).policies,
    )
    # the same residual (2z), each complex64 entry twice a float32's 4 bytes
    assert complex_.residuals == real.residuals == 1
    assert complex_.residual_bytes == 2 * real.residual_bytes == 2 * 4 * X.size


def test_allow_int_takes_integer_arguments_as_jax_grad_does():
    n = jnp.arange(3)
    grads = jax.grad(_scaled, (0, 1), allow_int=True)(n, X)
    assert grads[0].dtype == jax.dtypes.float0  # the oracle: an empty gradient for n
    taken = grad_memory(_scaled, argnums=(0, 1), allow_int=True, policies=ONE)(n, X)
    alone = grad_memory(_scaled, argnums=1, policies=ONE)(n, X)
    assert taken.policies == alone.policies
    only_int = grad_memory(_scaled, allow_int=True, policies=ONE)(n, X)
    assert only_int.policy("no checkpoint").residuals == 0  # nothing differentiated


def test_an_empty_pytree_is_differentiated_as_jax_grad_does():
    def f(d, x):
        return jnp.sum(x**2)

    assert jax.grad(f)({}, X) == {}  # the oracle: nothing to differentiate
    [policy] = grad_memory(f, policies=ONE)({}, X).policies
    assert (policy.residuals, policy.residual_bytes) == (0, 0.0)


def test_a_non_scalar_output_is_named_by_its_type():
    _raises(
        "grad_memory needs f to return a scalar, as jax.grad does; <lambda> returns "
        "f32[3]. Reduce it first (e.g. .sum()); if it returns (loss, aux), pass "
        "has_aux=True.",
        lambda: grad_memory(lambda x: x**2)(X),
    )
    _raises(
        "grad_memory needs f to return a scalar, as jax.grad does; <lambda> returns "
        "a tuple (f32[3], f32[]). Reduce it first (e.g. .sum()); if it returns (loss, "
        "aux), pass has_aux=True.",
        lambda: grad_memory(lambda x: (x, x.sum()))(X),
    )
    _raises(
        "grad_memory with has_aux=True needs f to return a pair (loss, aux), as "
        "jax.grad does; <lambda> returned f32[3].",
        lambda: grad_memory(lambda x: x * 2.0, has_aux=True)(X),
    )


def test_an_argument_jax_cannot_trace_is_named():
    with pytest.raises(TypeError):
        jax.grad(_square_sum)("hi")  # the oracle refuses it too
    _raises(
        "grad_memory cannot differentiate with respect to argument 0 (`z`): it holds "
        "'hi' (str), not a number or an array, and jax.grad differentiates "
        "floating-point arrays. Pass e.g. 1.0 or jnp.array([...]), or leave this "
        "argument out of `argnums`.",
        lambda: grad_memory(_square_sum)("hi"),
    )


def test_a_python_if_on_a_traced_value_is_explained_as_draw_grad_explains_it():
    def f(x):
        return jnp.sum(x**2) if x.sum() > 0 else jnp.sum(x)

    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(f))(X)  # the oracle: traced, the branch has no value
    with pytest.raises(TypeError) as caught:
        grad_memory(f)(X)
    text = str(caught.value)
    assert text.startswith(
        "grad_memory: f needs a concrete Python value where it got a "
    )
    assert text.endswith(
        "grad_memory traces f as jax.jit does, so a Python `if`, `while` or int() on "
        "a differentiated value (`x`) has no concrete value, and a differentiated "
        "argument cannot be static. Write the branch with jnp.where(cond, a, b) or "
        "jax.lax.cond, and a loop with jax.lax.scan or jax.lax.fori_loop of fixed "
        "bounds (JAX's docs on control flow): jax.grad differentiates those."
    )
    np.testing.assert_allclose(jax.grad(f)(X), 2 * X)  # unjitted, jax.grad branches
