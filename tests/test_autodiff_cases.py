"""Functions the autodiff tests differentiate, and a float64 finite-difference oracle.

Other test_autodiff_* modules import from here; the tests below check the oracle itself.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def cubic(x):
    return x**3 + 2 * x**2 - 3 * x + 8


def mlp_loss(params, images, labels):
    """A 4-8-3 MLP's mean cross-entropy; params is a dict pytree."""
    hidden = jax.nn.relu(images @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"] + params["b2"]
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


def _mlp_args():
    # NumPy draws them: every worker imports this module, and each eager jax.random call
    # would compile (a second per worker)
    rng = np.random.default_rng(0)
    f32 = lambda *shape, scale=1.0: jnp.asarray(
        scale * rng.normal(size=shape), "float32"
    )
    params = {"w1": f32(4, 8, scale=0.5), "b1": jnp.asarray(np.full(8, 0.1, "float32"))}
    params |= {"w2": f32(8, 3, scale=0.5), "b2": jnp.asarray(np.zeros(3, "float32"))}
    return params, f32(5, 4), jnp.asarray(np.array([0, 2, 1, 1, 0], "int32"))


def _scan_power(x):
    def step(carry, _):
        return carry * jnp.sin(carry) + 0.5, carry

    return lax.scan(step, x, None, length=4)[0]


# name -> (f, example args, argnums); points stay away from kinks (relu, where).
CASES = {
    "cubic": (cubic, (1.3,), 0),
    "sin_times_x": (lambda x: jnp.sin(x) * x, (0.7,), 0),
    "array_exp_tanh": (
        lambda x: jnp.sum(jnp.exp(-(x**2)) * jnp.tanh(x)),
        (jnp.array([0.3, -1.2, 2.0]),),
        0,
    ),
    "where": (
        lambda x: jnp.sum(jnp.where(x > 0, x**2, -3 * x)),
        (jnp.array([1.5, -0.5, 0.25]),),
        0,
    ),
    "cond_true": (lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x) * x, (0.6,), 0),
    "cond_false": (lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x) * x, (-0.6,), 0),
    "scan": (_scan_power, (0.7,), 0),
    "relu": (lambda x: jnp.sum(jax.nn.relu(x) ** 2), (jnp.array([1.5, -0.5, 0.3]),), 0),
    "gelu": (lambda x: jnp.sum(jax.nn.gelu(x) * x), (jnp.array([1.0, -2.0, 0.4]),), 0),
    "log_softmax": (
        lambda x: jax.nn.log_softmax(x)[1],
        (jnp.array([1.0, -2.0, 3.0]),),
        0,
    ),
    "two_args": (lambda x, y: x * jnp.sin(y) + y**2, (0.5, 1.5), (0, 1)),
    "second_arg_only": (lambda x, y: x * jnp.sin(y) + y**2, (0.5, 1.5), 1),
    "matvec": (
        lambda w, x: jnp.sum(jnp.tanh(w @ x)),
        (
            jnp.asarray(np.arange(12.0).reshape(3, 4) / 10 - 0.5, "float32"),
            jnp.array([0.3, -0.1, 0.8, 0.2]),
        ),
        (0, 1),
    ),
    "mlp": (mlp_loss, _mlp_args(), 0),
}


def nums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def split(f, args, argnums):
    """(g, diff): g(*diff) calls f with the other arguments fixed."""
    argnums = nums(argnums)

    def g(*diff):
        full = list(args)
        for i, value in zip(argnums, diff, strict=True):
            full[i] = value
        return f(*full)

    return g, tuple(args[i] for i in argnums)


def _to64(x):
    x = np.asarray(x)
    return jnp.asarray(x, dtype=jnp.float64) if x.dtype.kind == "f" else jnp.asarray(x)


def directional_fd(f, args, argnums, direction, h=1e-6):
    """(f(x + h v) - f(x - h v)) / 2h in float64, v a pytree like the differentiated args.

    Returns a NumPy float64 array shaped like f's output.
    """
    with jax.enable_x64(True):
        args64 = jax.tree.map(_to64, tuple(args))
        g, diff = split(f, args64, argnums)
        v = jax.tree.map(_to64, direction)

        def along(t):
            return np.asarray(
                g(*jax.tree.map(lambda x, d: x + t * d, diff, v)), dtype=np.float64
            )

        return (along(h) - along(-h)) / (2 * h)


def random_like(tree, seed=0):
    leaves, treedef = jax.tree.flatten(tree)
    rng = np.random.default_rng(seed)
    return jax.tree.unflatten(
        treedef, [rng.standard_normal(np.shape(x)) for x in leaves]
    )


def dot(a, b):
    return sum(
        float(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)))
        for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    )


def test_the_oracle_differentiates_a_known_function():
    # d/dt (x + t v)·(x + t v) at t = 0 is 2 x·v, exactly.
    x, v = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1])
    fd = directional_fd(lambda y: jnp.sum(y * y), (x,), 0, (v,))
    assert fd.dtype == np.float64
    np.testing.assert_allclose(fd, 2 * x @ v, rtol=1e-9)


def test_the_cases_cover_what_the_issue_lists():
    import inspect

    sources = " ".join(inspect.getsource(f) for f, _, _ in CASES.values())
    for feature in (
        "jnp.where",
        "lax.cond",
        "lax.scan",
        "jax.nn.relu",
        "jax.nn.gelu",
        "log_softmax",
    ):
        assert feature in sources, feature
    assert len(CASES) >= 12
