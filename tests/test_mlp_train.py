"""Training: devices, shuffles, the scan against a Python loop, real-data accuracy, the CLI."""

from __future__ import annotations

import contextlib
import functools
import io
import itertools
import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import jax.random as jr
import numpy as np
import pytest

from jaxtour.cli import main
from jaxtour.data._download import FILES
from jaxtour.mlp import (
    History,
    Mnist,
    NumpyTwin,
    _ladder,
    batch_indices,
    compile_epoch,
    evaluate,
    format_ladder,
    init_params,
    load_mnist,
    load_params,
    plot_ladder,
    preprocess,
    run_ladder,
    train,
    train_data_parallel,
    train_epoch,
    update,
)
from jaxtour.mlp._ladder import VARIANTS, matmul_flops
from jaxtour.mlp._ladder_runners import _step_matmuls
from jaxtour.mlp._train import UNROLL, resolve_device

SHARED = Path(
    os.environ.get("JAXTOUR_DATA") or Path(__file__).parents[2] / "shared" / "mnist"
)
needs_mnist = pytest.mark.skipif(
    not all((SHARED / f.name).is_file() for f in FILES),
    reason=f"MNIST files not in {SHARED}",
)


@pytest.fixture(scope="module")
def mnist():
    return load_mnist(SHARED, mirrors=[])


def test_resolve_device_default_named_and_absent():
    assert resolve_device() == jax.devices()[0]
    assert resolve_device("cpu").platform == "cpu"
    assert resolve_device(jax.devices()[0]) is jax.devices()[0]
    absent = next(p for p in ("gpu", "tpu") if p != jax.default_backend())
    with pytest.raises(
        ValueError,
        match=rf"^No {absent.upper()} here: JAX sees "
        rf"cpu \(\d+ devices?\).*--device cpu",
    ):
        resolve_device(absent)
    with pytest.raises(
        ValueError, match=r"^`device` must be one of cpu, gpu, tpu; got 'npu'\.$"
    ):
        resolve_device("npu")


def test_batch_indices_is_a_permutation_in_batches():
    order = np.asarray(batch_indices(jr.key(0), 1000, 128))
    assert order.shape == (7, 128)  # the last 104 images wait for the next shuffle
    assert len(set(order.ravel().tolist())) == 7 * 128
    assert order.min() >= 0 and order.max() < 1000
    again = np.asarray(batch_indices(jr.key(0), 1000, 128))
    other = np.asarray(batch_indices(jr.key(1), 1000, 128))
    assert (order == again).all() and not (order == other).all()
    with pytest.raises(
        ValueError, match=r"^`batch_size` 128 is larger than the 100 training"
    ):
        batch_indices(jr.key(0), 100, 128)


@pytest.fixture(scope="module")
def small_epoch():
    """A 5-step epoch of a small MLP, the same epoch as `update` in a Python loop (one
    jitted step: run eagerly, the loop compiled each of the step's operations, 10 s of
    CPU), and `compile_epoch`'s program for it, compiled once for the tests below."""
    # drawn by NumPy: an eager (320, 28, 28) randint compiles for seconds on CPU
    rng = np.random.default_rng(1)
    images = jnp.asarray(rng.integers(0, 256, (320, 28, 28), np.uint8))
    labels = jnp.asarray(rng.integers(0, 10, 320, np.int32))
    params = init_params(jr.key(0), (784, 32, 10))
    velocity = jax.tree.map(lambda p: jnp.asarray(np.zeros(p.shape, p.dtype)), params)
    key = jr.key(3)

    @jax.jit
    def step(params, velocity, idx):
        return update(params, preprocess(images[idx]), labels[idx], velocity)

    looped, v, looped_losses = params, velocity, []
    for idx in batch_indices(key, 320, 64):
        looped, v, batch_loss = step(looped, v, idx)
        looped_losses.append(batch_loss)
    compiled, seconds = compile_epoch(
        params, velocity, images, labels, key, batch_size=64
    )  # unroll=UNROLL: 5 steps leave a remainder
    return SimpleNamespace(
        args=(params, velocity, images, labels, key),
        looped=looped,
        looped_losses=looped_losses,
        compiled=compiled,
        compile_seconds=seconds,
    )


def _copies(tree):
    return jax.tree.map(jnp.copy, tree)  # the compiled epoch donates what it is given


@pytest.mark.slow  # compiles and runs epochs of the full MLP
@pytest.mark.parametrize("unroll", [1, UNROLL])
def test_the_scan_epoch_equals_update_in_a_python_loop(small_epoch, unroll):
    params, velocity, images, labels, key = small_epoch.args
    if unroll == UNROLL:  # compile_epoch's own program, with its default unroll
        epoch = small_epoch.compiled
    else:
        epoch = jax.jit(functools.partial(train_epoch, batch_size=64, unroll=unroll))
    scanned, _, losses = epoch(_copies(params), _copies(velocity), images, labels, key)
    np.testing.assert_allclose(losses, small_epoch.looped_losses, rtol=1e-5)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6),
        scanned,
        small_epoch.looped,
    )


@pytest.mark.slow  # compiles and runs epochs of the full MLP
def test_compiled_epoch_donates_params_and_velocity(small_epoch):
    params, velocity, images, labels, key = small_epoch.args
    params, velocity = _copies(params), _copies(velocity)
    assert small_epoch.compile_seconds > 0
    new_params, _, losses = small_epoch.compiled(params, velocity, images, labels, key)
    assert losses.shape == (5,)
    if jax.default_backend() == "cpu" and not params["output"]["w"].is_deleted():
        pytest.skip("this jaxlib ignores donation on CPU")
    assert (
        params["output"]["w"].is_deleted()
        and not new_params["output"]["w"].is_deleted()
    )


def test_train_rejects_bad_arguments_before_any_work():
    with pytest.raises(
        ValueError, match=r"^`epochs` must be >= 0 and `batch_size` >= 1"
    ):
        train(None, epochs=1, batch_size=0)
    with pytest.raises(ValueError, match=r"^`device` must be one of"):
        train(None, device="npu")


def _labelled(train_labels: list[int], test_labels: list[int]) -> Mnist:
    """Blank images with these labels (int64, so that -1 can be written)."""
    return Mnist(
        np.zeros((len(train_labels), 28, 28), np.uint8),
        np.array(train_labels),
        np.zeros((len(test_labels), 28, 28), np.uint8),
        np.array(test_labels),
    )


OUT_OF_RANGE = "; labels must be class indices from 0 to 9. Fix or drop those examples."


@pytest.mark.parametrize("trainer", [train, train_data_parallel])
def test_training_refuses_a_label_outside_0_to_9(trainer):
    # jax.nn.one_hot scores such a label as no class: the run went on, silently.
    run = dict(epochs=1, batch_size=4, progress=False)
    if trainer is train_data_parallel:
        run["devices"] = 1
    with pytest.raises(ValueError) as info:
        trainer(_labelled([0, 1, 2, 10, 4, 5, 6, 7], [0, 1]), **run)
    assert str(info.value) == "`data.train_labels[3]` is 10" + OUT_OF_RANGE
    with pytest.raises(ValueError) as info:
        trainer(_labelled([0, 1, 2, 3, 4, 5, 6, 7], [0, -1, 12]), **run)
    assert str(info.value) == (
        "`data.test_labels[1]` is -1 (and 1 more label outside 0..9)" + OUT_OF_RANGE
    )


def test_the_numpy_twin_and_the_ladder_refuse_a_label_outside_0_to_9():
    hidden = {"w": np.zeros((784, 16)), "b": np.zeros(16)}  # a small net, no JAX
    output = {"w": np.zeros((16, 10)), "b": np.zeros(10)}
    twin = NumpyTwin({"hidden1": hidden, "output": output})
    x = np.zeros((4, 784))
    with pytest.raises(ValueError) as info:
        twin.step(x, np.array([3, -1, 2, 1]))  # NumPy read -1 as class 9
    assert str(info.value) == "`y[1]` is -1" + OUT_OF_RANGE
    with pytest.raises(ValueError, match=r"^`y\[0\]` is 10;"):  # was an IndexError
        twin.loss_and_grads(x, np.array([10, 0, 0, 0]))
    images, order = np.zeros((8, 28, 28), np.uint8), np.arange(8).reshape(2, 4)
    with pytest.raises(ValueError, match=r"^`labels\[5\]` is -1;"):
        twin.epoch(images, np.array([0, 1, 2, 3, 4, -1, 6, 7]), order)
    with pytest.raises(ValueError) as info:
        run_ladder(
            _labelled([0, 1, 2, 3, 4, 5, -1, 7], [0]),
            batch_size=4,
            rounds=1,
            variants=("numpy-f64", "jaxtour-train"),
            control=False,
            rate_repeat=1,
            log=None,
        )
    assert str(info.value) == "`data.train_labels[6]` is -1" + OUT_OF_RANGE


@needs_mnist
@pytest.mark.slow
def test_a_short_real_training_run_beats_95_percent(mnist):
    params, history = train(mnist.subset(30_720), epochs=2, seed=0, progress=False)
    assert isinstance(history, History)
    assert (
        len(history.loss)
        == len(history.test_accuracy)
        == len(history.epoch_seconds)
        == 2
    )
    assert len(history.batch_loss) == 2 * 240
    assert history.loss[1] < history.loss[0] < 2.3
    assert history.test_accuracy[-1] > 0.95
    assert history.compile_seconds > 0
    assert history.device.partition(":")[0] == jax.default_backend()
    again = float(
        evaluate(params, mnist.test_images, np.asarray(mnist.test_labels, np.int32))
    )
    assert again == pytest.approx(history.test_accuracy[-1])


@needs_mnist
@pytest.mark.slow
def test_cli_train_writes_curve_and_params_and_ends_with_the_figures(
    tmp_path, capsys, mnist
):
    code = main(
        [
            "train",
            "--epochs",
            "1",
            "--train-size",
            "2560",
            "--data-dir",
            str(SHARED),
            "--build-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 0
    assert re.fullmatch(r"test_accuracy=0\.\d{4} epoch_seconds=\d+\.\d{3}", out[-1])
    assert out[0].startswith("epoch  1/1  loss ")
    curve = tmp_path / "mlp" / "learning_curve.png"
    assert curve.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    params = load_params(tmp_path / "mlp" / "params.npz")
    accuracy = float(
        evaluate(params, mnist.test_images, np.asarray(mnist.test_labels, np.int32))
    )
    assert f"test_accuracy={accuracy:.4f}" == out[-1].split()[0]
    history = json.loads((tmp_path / "mlp" / "history.json").read_text())
    assert len(history["batch_loss"]) == 20


def test_cli_train_on_an_absent_platform_lists_what_is_there(capsys, tmp_path):
    absent = next(p for p in ("gpu", "tpu") if p != jax.default_backend())
    # an empty data folder: the platform is checked before MNIST is looked for or fetched
    assert main(["train", "--device", absent, "--data-dir", str(tmp_path)]) == 2
    assert list(tmp_path.iterdir()) == []
    err = capsys.readouterr().err
    assert err.startswith(
        f"jaxtour train: error: No {absent.upper()} here: JAX sees cpu ("
    )


@pytest.fixture(scope="module")
def small_matmul_rate():
    """The ladder's matmul rate measured on 256x256 matrices: its 2,048x2,048 ones cost
    5 s of CPU per ladder, and these tests assert only that the rate is positive."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            _ladder, "matmul_rate", functools.partial(_ladder.matmul_rate, n=256)
        )
        yield


@pytest.fixture(scope="module")
def compared(small_matmul_rate, tmp_path_factory):
    """One smoke run of `jaxtour compare` in this process: (exit code, its stdout's
    lines, its build folder). The ladder's tests and the command's read the same run:
    a ladder compiles the full MLP's step and epoch (7 s of CPU)."""
    build = tmp_path_factory.mktemp("compare")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(
            [
                "compare",
                "--rounds",
                "2",
                "--train-size",
                "512",
                "--eager-steps",
                "2",
                "--data-dir",
                str(SHARED),
                "--build-dir",
                str(build),
            ]
        )
    return code, printed.getvalue().strip().splitlines(), build


@needs_mnist
@pytest.mark.slow
def test_ladder_smoke_run_agrees_on_the_loss_and_reports_the_headline(compared):
    _, out, build = compared
    result = json.loads((build / "mlp" / "ladder.json").read_text())
    lines = [line for line in out if line.startswith("round ")]  # the ladder's log
    assert len(lines) == 2 * 7
    controls = [line for line in lines if "  matmuls-" in line]
    assert len(controls) == 4 and all("matmuls only, no loss)" in x for x in controls)
    assert not any("nan" in line for line in lines)
    assert list(result["epoch_s"]) == [
        "numpy-f64",
        "numpy-f32",
        "jax-eager",
        "jax-jit-loop",
        "jaxtour-train",
        "matmuls-numpy-f32",
        "matmuls-jax",
    ]
    assert result["steps_timed"] == {
        "numpy-f64": 4,
        "numpy-f32": 4,
        "jax-eager": 2,
        "jax-jit-loop": 4,
        "jaxtour-train": 4,
        "matmuls-numpy-f32": 4,
        "matmuls-jax": 4,
    }
    for name, (low, median, high) in result["spread_s"].items():
        assert low <= median <= high and median == result["epoch_s"][name]
    assert "control: one step's matmuls alone" in format_ladder(result)
    losses = result["epoch_loss"]  # same weights, same batches: same losses
    assert set(losses) == set(VARIANTS)  # the controls train nothing
    for name in ("numpy-f32", "jax-jit-loop", "jaxtour-train"):
        assert losses[name] == pytest.approx(losses["numpy-f64"], rel=1e-4)
    assert result["ratio_vs_numpy_f64"]["numpy-f64"] == 1.0
    assert (
        result["speedup_vs_numpy_f64"] == result["ratio_vs_numpy_f64"]["jaxtour-train"]
    )
    assert result["compile_s"] > 0 and result["matmul_gflops"] > 0
    assert "jaxtour-train compile:" in format_ladder(result)
    assert plot_ladder(result).figure.axes[0].get_xscale() == "log"


def test_the_ladder_plot_names_the_batch_size_that_was_run():
    result = {
        "epoch_s": {"numpy-f64": 8.0, "jaxtour-train": 1.0},
        "ratio_vs_numpy_f64": {"numpy-f64": 1.0, "jaxtour-train": 8.0},
        "matmul_fraction_by_variant": {"numpy-f64": 0.1, "jaxtour-train": 0.6},
        "platform": "cpu",
        "device": "cpu",
        "matmul_gflops": 50.0,
        "batch_size": 32,
    }
    label = plot_ladder(result).figure.axes[0].get_xlabel()
    assert label.startswith("seconds per epoch (60,000 images, batch 32; log scale)")
    assert "128" not in label


def test_the_matmul_control_is_the_steps_eight_products_in_numpy_and_in_jax():
    rng = np.random.default_rng(0)
    sizes, batch = (20, 12, 7, 3), 5
    w = [rng.standard_normal((i, o)) for i, o in itertools.pairwise(sizes)]
    x = rng.standard_normal((batch, sizes[0]))
    d = [rng.standard_normal((batch, o)) for o in sizes[1:]]
    h1 = x @ w[0]
    h2 = h1 @ w[1]
    operands = [
        (x, w[0]),
        (h1, w[1]),
        (h2, w[2]),
        (h2.T, d[2]),
        (d[2], w[2].T),
        (h1.T, d[1]),
        (d[1], w[1].T),
        (x.T, d[0]),
    ]  # no gradient for the pixels
    products = _step_matmuls(w, x, d)
    assert len(products) == len(operands) == 8
    for got, (a, b) in zip(products, operands, strict=True):
        np.testing.assert_allclose(got, a @ b, rtol=1e-12)
    # the products it makes cost what the ladder counts as a step's matmul FLOPs
    flops = sum(2 * a.shape[0] * a.shape[1] * b.shape[1] for a, b in operands)
    assert flops == matmul_flops(sizes, batch)
    as32 = jax.tree.map(lambda a: jnp.asarray(a, jnp.float32), (w, x, d))
    with jax.default_matmul_precision("highest"):
        in_jax = jax.jit(_step_matmuls)(*as32)
    for got, want in zip(in_jax, products, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.slow  # compiles and runs epochs of the full MLP
@needs_mnist
def test_a_ladder_without_jaxtours_epoch_has_no_headline_and_still_prints(
    mnist, small_matmul_rate
):
    result = run_ladder(
        mnist,
        rounds=1,
        train_size=256,
        variants=("numpy-f64", "numpy-f32"),
        control=False,
        log=None,
    )
    assert "compile_s" not in result and "speedup_vs_numpy_f64" not in result
    assert result["compile_s_by_variant"] == {}
    table = format_ladder(result)
    assert table.splitlines()[1].startswith("numpy-f64") and "compile:" not in table


@pytest.mark.slow  # compiles and runs steps of the full MLP
def test_the_ladder_compares_every_variants_loss_over_the_steps_they_all_ran(
    small_matmul_rate,
):
    rng = np.random.default_rng(0)  # 4 batches of 32; JAX without jit runs 2 of them
    images = rng.integers(0, 256, (128, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, 128, dtype=np.uint8)
    data = Mnist(images, labels, images[:32], labels[:32])
    result = run_ladder(
        data,
        rounds=1,
        eager_steps=2,
        batch_size=32,
        variants=("numpy-f64", "jax-eager"),
        control=False,
        rate_repeat=1,
        log=None,
    )
    assert result["steps_timed"] == {"numpy-f64": 4, "jax-eager": 2}
    order = batch_indices(jr.fold_in(jr.key(0), 0), 128, 32)  # round 1's batches
    twin = NumpyTwin(init_params(jr.split(jr.key(0))[0]))  # the oracle, by hand
    want = twin.epoch(images, labels.astype(np.int32), np.asarray(order[:2])).mean()
    losses = result["epoch_loss"]
    assert losses["numpy-f64"] == pytest.approx(want, rel=1e-12)
    assert losses["jax-eager"] == pytest.approx(want, rel=1e-4)
    assert result["loss_steps"] == 2


@needs_mnist
@pytest.mark.slow
def test_cli_compare_prints_the_table_and_writes_the_plot_and_the_figures(compared):
    code, out, build = compared
    assert code == 0
    assert out[0].startswith(
        "round 1/2  numpy-f64"
    )  # progress, one line per measurement
    header = [
        "variant",
        "s/epoch",
        "fastest-slowest",
        "vs",
        "numpy-f64",
        "of",
        "matmul",
    ]
    assert header in [line.split() for line in out]
    assert not [line for line in out if line.startswith("{")]  # JSON: --json's only
    figures = json.loads((build / "mlp" / "ladder.json").read_text())
    assert {
        "speedup_vs_numpy_f64",
        "matmul_fraction",
        "compile_s",
        "epoch_s",
        "spread_s",
    } <= set(figures)
    assert (build / "mlp" / "ladder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {build / 'mlp' / 'ladder.png'}" in out


def test_ladder_rejects_unknown_variants():
    with pytest.raises(
        ValueError, match=r"^Unknown variants \['torch'\]; choose from numpy-f64"
    ):
        run_ladder(None, variants=("torch",))


def test_tour_runs_train_and_compare_before_the_notebooks():
    from jaxtour.cli._tour import STEPS

    names = list(STEPS)
    assert names.index("train") < names.index("compare") < names.index("notebooks")


@needs_mnist
@pytest.mark.slow
def test_tour_train_step_is_short_under_quick(tmp_path, monkeypatch, capsys):
    from jaxtour.cli import _train

    monkeypatch.setenv("JAXTOUR_QUICK", "1")
    monkeypatch.setenv("JAXTOUR_DATA", str(SHARED))
    # the size itself is test_cli's test_train_and_compare_sizes_follow_jaxtour_quick's
    monkeypatch.setattr(_train, "QUICK_TRAIN_SIZE", 2560)
    written = _train.tour_step(tmp_path)
    assert [p.name for p in written] == [
        "learning_curve.png",
        "params.npz",
        "history.json",
    ]
    history = json.loads(written[2].read_text())
    assert len(history["loss"]) == _train.QUICK_EPOCHS
    assert (
        len(history["batch_loss"])
        == _train.QUICK_EPOCHS * _train.QUICK_TRAIN_SIZE // 128
    )
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("test_accuracy=")
