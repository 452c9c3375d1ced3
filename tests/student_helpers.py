"""A student's own module beside their notebook (read by test_exercises_bans.py): a
helper that calls the `jax.grad` an exercise bans, and a `grad` of their own built from
`jax.vjp`, which shares only the name."""

import jax
import jax.numpy as jnp


def helper(f):
    return jax.grad(f)


def grad(f):
    def gradient(x):
        y, pull = jax.vjp(f, x)
        return pull(jnp.ones_like(y))[0]

    return gradient
