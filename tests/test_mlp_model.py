"""The MLP's pure functions against independent oracles: finite differences, NumPy, counts."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np
import pytest

from jaxtour.mlp import (
    accuracy,
    batched_predict,
    example_batch,
    init_params,
    load_params,
    loss,
    predict,
    preprocess,
    save_params,
    update,
)
from jaxtour.mlp._ladder import matmul_flops

pytestmark = pytest.mark.usefixtures("full_float32")  # float64 oracles, on any backend

# One batch size for every test that runs the MLP: `predict`, `loss` and `update` run
# eagerly, and each operation compiles once per shape (five sizes cost 8 s of CPU more).
N = 8


@pytest.fixture(scope="module")
def params():
    return init_params(jr.key(0))


@pytest.fixture(scope="module")
def batch():
    return example_batch(N)


def test_init_params_names_shapes_dtype_and_scale(params):
    assert list(params) == ["hidden1", "hidden2", "output"]
    shapes = {
        name: (layer["w"].shape, layer["b"].shape) for name, layer in params.items()
    }
    assert shapes == {
        "hidden1": ((784, 512), (512,)),
        "hidden2": ((512, 256), (256,)),
        "output": ((256, 10), (10,)),
    }
    assert all(leaf.dtype == jnp.float32 for leaf in jax.tree.leaves(params))
    # He for ReLU layers (variance 2 / fan-in), 1 / fan-in for the output layer.
    assert float(jnp.std(params["hidden1"]["w"])) == pytest.approx(
        np.sqrt(2 / 784), rel=0.02
    )
    assert float(jnp.std(params["output"]["w"])) == pytest.approx(
        np.sqrt(1 / 256), rel=0.1
    )
    assert not any(jnp.any(layer["b"]) for layer in params.values())
    # the names are structure: traced, not drawn (each draw's shape compiles)
    deep = jax.eval_shape(lambda k: init_params(k, (4, 3, 3, 3, 2)), jr.key(1))
    assert list(deep) == ["hidden1", "hidden2", "hidden3", "output"]


def test_init_params_draws_what_a_normal_draw_of_each_weight_s_shape_gives():
    # init_params draws each weight flat and shapes it (XLA compiles that faster):
    # the numbers must be those of jr.normal with the weight's own shape
    params = init_params(jr.key(5), (6, 5, 3))
    keys = jr.split(jr.key(5), 2)
    for (name, gain, shape), k in zip(
        [("hidden1", 2.0, (6, 5)), ("output", 1.0, (5, 3))], keys, strict=True
    ):
        want = jr.normal(k, shape) * jnp.sqrt(gain / shape[0])
        np.testing.assert_array_equal(params[name]["w"], want)


def test_init_params_rejects_bad_sizes():
    with pytest.raises(
        ValueError,
        match=r"^`sizes` must be two or more positive widths, e\.g\. "
        r"\(784, 512, 256, 10\); got \(784, 0, 10\)\.$",
    ):
        init_params(jr.key(0), (784, 0, 10))


def test_predict_is_one_image_and_vmap_batches_it(params, batch):
    x, _ = batch
    one_by_one = jnp.stack([predict(params, image) for image in x])
    np.testing.assert_allclose(
        batched_predict(params, x), one_by_one, rtol=1e-5, atol=1e-5
    )
    assert predict(params, x[0]).shape == (10,)


def test_predict_matches_float64_numpy(params, batch):
    x, _ = batch
    h = np.asarray(x, np.float64)
    w = {
        n: {k: np.asarray(v, np.float64) for k, v in layer.items()}
        for n, layer in params.items()
    }
    for name in ("hidden1", "hidden2"):
        h = np.maximum(h @ w[name]["w"] + w[name]["b"], 0)
    expected = h @ w["output"]["w"] + w["output"]["b"]
    np.testing.assert_allclose(
        batched_predict(params, x), expected, rtol=1e-4, atol=1e-5
    )


def test_loss_is_cross_entropy_and_accuracy_counts_hits(params, batch):
    x, y = batch
    logits = np.asarray(batched_predict(params, x), np.float64)
    log_probs = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    assert float(loss(params, x, y)) == pytest.approx(
        -log_probs[np.arange(N), y].mean(), 1e-5
    )
    hits = np.argmax(logits, 1) == np.asarray(y)
    assert float(accuracy(params, x, y)) == pytest.approx(hits.mean())


@pytest.mark.slow  # float64 oracles over the full MLP
def test_grad_of_loss_matches_central_differences(params, batch):
    """d(loss)/d(params) along unit directions (the gradient's own, then random ones):
    jax.grad vs central differences, in float64 so the differences are exact enough."""
    x, y = batch
    eps = 1e-5

    @jax.jit
    def central_difference(params, direction, x, y):
        """(loss(params + eps·direction) - loss(params - eps·direction)) / (2·eps)."""
        step = jax.tree.map(lambda d: eps * d, direction)
        plus = jax.tree.map(jnp.add, params, step)
        minus = jax.tree.map(jnp.subtract, params, step)
        return (loss(plus, x, y) - loss(minus, x, y)) / (2 * eps)

    with jax.enable_x64(True):
        p64 = jax.tree.map(lambda a: a.astype(jnp.float64), params)
        x64 = x.astype(jnp.float64)
        grads = [
            np.asarray(g) for g in jax.tree.leaves(jax.jit(jax.grad(loss))(p64, x64, y))
        ]
        leaves, treedef = jax.tree.flatten(p64)
        for seed in range(3):
            rng = np.random.default_rng(seed + 10)
            noise = (
                grads if seed == 0 else [rng.standard_normal(p.shape) for p in leaves]
            )
            norm = np.sqrt(sum(np.sum(n**2) for n in noise))
            unit = [n / norm for n in noise]
            analytic = sum(np.vdot(g, d) for g, d in zip(grads, unit, strict=True))
            direction = jax.tree.unflatten(treedef, unit)
            numeric = central_difference(p64, direction, x64, y)
            assert float(analytic) == pytest.approx(float(numeric), rel=1e-6, abs=1e-9)


@pytest.mark.slow  # float64 oracles over the full MLP
def test_update_is_sgd_with_momentum(params, batch):
    x, y = batch
    grads = jax.grad(loss)(params, x, y)
    plain, _, batch_loss = update(params, x, y, lr=0.1, momentum=0.0)
    assert float(batch_loss) == pytest.approx(float(loss(params, x, y)))
    expected = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, atol=1e-7), plain, expected
    )
    # Two momentum steps: v1 = g0, p1 = p0 - lr v1; v2 = m v1 + g1, p2 = p1 - lr v2.
    p1, v1, _ = update(params, x, y, lr=0.1, momentum=0.9)
    p2, v2, _ = update(p1, x, y, v1, lr=0.1, momentum=0.9)
    g1 = jax.grad(loss)(p1, x, y)
    jax.tree.map(
        lambda v, g, w: np.testing.assert_allclose(
            v, 0.9 * g + w, rtol=1e-5, atol=1e-7
        ),
        v2,
        grads,
        g1,
    )
    jax.tree.map(
        lambda a, b, v: np.testing.assert_allclose(a, b - 0.1 * v, atol=1e-6),
        p2,
        p1,
        v2,
    )


def test_update_jaxpr_has_eight_matmuls_whose_flops_the_ladder_counts(params):
    """3 forward, 3 weight gradients, 2 input gradients (none for the pixels)."""
    # traced for the batch's shapes: nothing drawn, nothing compiled
    x = jax.ShapeDtypeStruct((128, 784), jnp.float32)
    y = jax.ShapeDtypeStruct((128,), jnp.int32)
    jaxpr = jax.make_jaxpr(update)(params, x, y)
    dots = [e for e in _all_eqns(jaxpr.jaxpr) if e.primitive.name == "dot_general"]
    assert len(dots) == 8
    flops = 0
    for eqn in dots:
        (contract, _), _ = eqn.params["dimension_numbers"]
        k = int(np.prod([eqn.invars[0].aval.shape[d] for d in contract]))
        flops += 2 * int(np.prod(eqn.outvars[0].aval.shape)) * k
    assert flops == matmul_flops(batch_size=128)


def _all_eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in _sub_jaxprs(eqn.params):
            yield from _all_eqns(sub)


def _sub_jaxprs(params):
    """Jaxprs nested in an eqn's params (pjit, custom_jvp, ...), through public attributes."""
    for value in params.values():
        inner = getattr(value, "jaxpr", value)
        if hasattr(inner, "eqns"):
            yield inner


def test_preprocess_standardises_pixels():
    images = np.array([[[0] * 28] * 28, [[255] * 28] * 28], np.uint8)
    x = preprocess(images)
    assert x.shape == (2, 784) and x.dtype == jnp.float32
    assert float(x[0, 0]) == pytest.approx(-0.1307 / 0.3081, rel=1e-6)
    assert float(x[1, 0]) == pytest.approx((1 - 0.1307) / 0.3081, rel=1e-6)


def test_example_batch_is_deterministic_and_shaped(batch):
    x, y = example_batch(N, seed=3)
    x2, y2 = example_batch(N, seed=3)
    assert not (np.asarray(x) == np.asarray(batch[0])).all()  # the seed counts
    assert (
        x.shape == (N, 784)
        and y.dtype == jnp.int32
        and 0 <= int(y.min()) <= int(y.max()) < 10
    )
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)


def test_params_round_trip_through_npz(params, tmp_path):
    path = save_params(params, tmp_path / "p.npz")
    back = load_params(path)
    assert list(back) == list(params)
    jax.tree.map(np.testing.assert_array_equal, back, params)
    np.savez(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(ValueError, match=r"other\.npz does not hold MLP params"):
        load_params(tmp_path / "other.npz")


def test_a_file_that_is_not_params_is_a_value_error_that_names_it(params, tmp_path):
    saved = save_params(params, tmp_path / "p.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(saved[: len(saved) // 2])  # a killed copy
    np.save(tmp_path / "one.npy", np.zeros(3))
    (tmp_path / "notes.txt").write_text("not an archive")
    for name in ("cut.npz", "one.npy", "notes.txt"):
        with pytest.raises(ValueError) as info:
            load_params(tmp_path / name)
        said = str(info.value)
        assert said.startswith(
            f"{tmp_path / name} is not an .npz archive of MLP params"
        )
        assert "allow_pickle" not in said  # numpy's advice for a text file
    shifted = {**params, "hidden2": {"w": jnp.zeros((500, 256)), "b": jnp.zeros(256)}}
    save_params(shifted, tmp_path / "shifted.npz")
    with pytest.raises(ValueError) as info:  # not left for predict to trip over
        load_params(tmp_path / "shifted.npz")
    assert "hidden2 has w (500, 256) and b (256,) after a layer 512 wide" in str(
        info.value
    )


def test_the_mlp_pictures_are_plots_that_jupyter_shows_without_a_global_formatter():
    from jaxtour._plot import Plot
    from jaxtour.mlp import plot_predictions

    images = np.zeros((3, 28, 28), np.uint8)
    plot = plot_predictions(images, np.array([1, 2, 3]), np.array([1, 0, 3]))
    assert isinstance(plot, Plot)
    assert plot.title == "3 digits, 1 predicted wrong"
    assert plot._repr_png_().startswith(b"\x89PNG")  # shown through its own repr
    assert len(plot.figure.axes) == 8


def test_params_numpy_cannot_name_are_refused_on_save_and_on_load(params, tmp_path):
    """bfloat16 goes into an .npz as raw bytes (|V2): saving says so before writing,
    and a file holding raw bytes or text is refused as not params, by name."""
    half = jax.tree.map(lambda a: a.astype(jnp.bfloat16), params)
    with pytest.raises(TypeError) as info:
        save_params(half, tmp_path / "half.npz")
    assert str(info.value).startswith(
        "save_params: `hidden1/b` is bfloat16, which an .npz holds only as raw bytes "
        "(<V2): load_params could not read it back. Cast first:"
    )
    assert not list(tmp_path.iterdir())  # nothing written
    arrays = {
        f"{k}/{p}": np.asarray(v) for k, ps in half.items() for p, v in ps.items()
    }
    np.savez(tmp_path / "raw.npz", **arrays)  # what the old save_params wrote
    with pytest.raises(ValueError) as info:
        load_params(tmp_path / "raw.npz")
    assert str(info.value).startswith(
        f"{tmp_path / 'raw.npz'} does not hold MLP params: `hidden1/b` is |V2, not numbers"
    )
