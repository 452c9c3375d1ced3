"""Data-parallel training: the same numbers as one device, with an all-reduce in between.

The 8-device checks run once, in a subprocess with 8 simulated CPU devices (this
process initialised JAX with one device); it sends back JSON. The oracle throughout
is single-device training (`jaxtour.mlp.train`, `update`) with the same seed.
"""

import re

import jax
import numpy as np
import pytest
from devices import run_with_devices

from jaxtour import mlp
from jaxtour.mlp import _parallel as par
from jaxtour.mlp._train import UNROLL

SIZES = (784, 32, 10)  # small, so that compiling is quick; the program is the same

# Random digits-shaped data: the equivalence needs no real MNIST (nor JAXTOUR_DATA).
FAKE_MNIST = """
import numpy as np
from jaxtour import mlp

def fake_mnist(n_train, n_test, seed=0):
    rng = np.random.default_rng(seed)
    images = lambda n: rng.integers(0, 256, (n, 28, 28), np.uint8)
    labels = lambda n: rng.integers(0, 10, n, np.uint8)
    return mlp.Mnist(images(n_train), labels(n_train), images(n_test), labels(n_test))

def fake_step_inputs(sizes, n, seed=0):
    # NumPy, not jax.random: nothing to compile before the step itself
    rng = np.random.default_rng(seed)
    names = [f"hidden{i}" for i in range(1, len(sizes) - 1)] + ["output"]
    params = {name: {"w": rng.normal(0, 0.1, (a, b)).astype(np.float32),
                     "b": rng.normal(0, 0.1, b).astype(np.float32)}
              for name, a, b in zip(names, sizes[:-1], sizes[1:])}
    velocity = {k: {kk: np.zeros_like(vv) for kk, vv in v.items()} for k, v in params.items()}
    x = rng.normal(0, 1, (n, sizes[0])).astype(np.float32)
    return params, velocity, x, rng.integers(0, sizes[-1], n).astype(np.int32)
"""
exec(FAKE_MNIST)

SNIPPET = (
    FAKE_MNIST
    + """
import json
import jax, jax.numpy as jnp, jax.random as jr
import numpy as np
from jaxtour import _ir, mlp
from jaxtour.mlp import _parallel as par
from jaxtour.mlp._train import UNROLL

SIZES = (784, 32, 10)
data = fake_mnist(1024, 256)
out = {"devices": jax.device_count()}
kw = dict(epochs=2, batch_size=64, seed=3, sizes=SIZES, progress=False)
p1, h1 = mlp.train(data, **kw)
p8, h8 = par.train_data_parallel(data, devices="all", **kw)
out["single"], out["parallel"] = h1.to_dict(), h8.to_dict()
out["param_diff"] = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                        for a, b in zip(jax.tree.leaves(p1), jax.tree.leaves(p8)))
w = p8["hidden1"]["w"]
out["param_sharding"] = [w.sharding.is_fully_replicated, len(w.sharding.device_set)]

def collectives(compiled):
    counts = _ir.parse_hlo(compiled.as_text()).op_counts()
    return {k: v for k, v in counts.items() if k.startswith(("all-", "reduce-scatter"))}

mesh = par.data_mesh()
params, velocity, x, y = fake_step_inputs(SIZES, 64)
reference = jax.jit(mlp.update)(params, x, y, velocity)
single = jax.jit(mlp.update).lower(params, x, y, velocity).compile()
out["hlo"] = {"single": collectives(single)}
for name, make in [("jit", par.data_parallel_update), ("shard_map", par.psum_update)]:
    step = make(mesh)
    out["hlo"][name] = collectives(step.lower(params, x, y, velocity).compile())
    got = step(params, x, y, velocity)
    out[name + "_diff"] = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
                              for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(reference)))
    shards = jax.device_put(x, par.batch_sharded(mesh)).addressable_shards
    out[name + "_x_shards"] = sorted({s.data.shape[0] for s in shards})
from jaxtour import _palette
from jaxtour.viz import draw_hlo
picture = draw_hlo(par.data_parallel_update(mesh), max_depth=0)(params, x, y, velocity)
red = _palette.FAMILIES["collective"].fill
out["draw_hlo"] = {"title": picture.title,
                   "red_nodes": [line.strip().split(" [")[0]
                                 for line in picture.source.splitlines()
                                 if f'fillcolor="{red}"' in line and "all-reduce" in line]}
imgs, labels = np.zeros((256, 28, 28), np.uint8), np.zeros(256, np.int32)
epoch, _ = par.compile_epoch_sharded(mesh, params, velocity, imgs, labels, jr.key(0),
                                     batch_size=64)
out["hlo"]["epoch"] = collectives(epoch)
# pcast: the gradient with respect to an invariant (P()) value is already summed over the
# devices; a psum on top of it counts it 8 times. Oracle: the full batch's gradient.
from jax.sharding import PartitionSpec as P
true_grad = jax.jit(jax.grad(mlp.loss))(params, x, y)
def psum_grad(params, x, y, cast):
    if cast:
        params = jax.lax.pcast(params, "batch", to="varying")
    grads = jax.grad(mlp.loss)(params, x, y)
    return jax.tree.map(lambda g: jax.lax.psum(g, "batch") / 8, grads)
for cast in (True, False):
    got = jax.jit(jax.shard_map(lambda p, a, b: psum_grad(p, a, b, cast), mesh=mesh,
                                in_specs=(P(), P("batch"), P("batch")), out_specs=P()))(
        params, x, y)
    out[f"grad_ratio_cast_{cast}"] = [
        float(np.linalg.norm(g) / np.linalg.norm(t))
        for g, t in zip(jax.tree.leaves(got), jax.tree.leaves(true_grad))]
out["axis_types"] = {"data_mesh": [str(t) for t in mesh.axis_types],
                     "make_mesh": [str(t) for t in jax.make_mesh((8,), ("x",)).axis_types]}
try:
    par.train_data_parallel(data, **{**kw, "batch_size": 100})
except ValueError as err:
    out["batch_error"] = str(err)
try:
    par.data_mesh(16)
except ValueError as err:
    out["mesh_error"] = str(err)
print(json.dumps(out))
"""
)


@pytest.fixture(scope="module")
def eight() -> dict:
    return run_with_devices(SNIPPET)


@pytest.mark.slow  # compiles for 8 devices
def test_the_subprocess_really_has_8_devices(eight):
    assert eight["devices"] == 8
    assert eight["parallel"]["device"] == "8 × cpu"


@pytest.mark.slow  # compiles for 8 devices
def test_data_parallel_training_follows_the_single_device_trajectory(eight):
    single, parallel = eight["single"], eight["parallel"]
    assert len(parallel["batch_loss"]) == len(single["batch_loss"]) == 2 * 1024 // 64
    # float32: the 8 partial gradient sums are added in a different order, nothing more
    np.testing.assert_allclose(parallel["batch_loss"], single["batch_loss"], rtol=2e-5)
    np.testing.assert_allclose(parallel["loss"], single["loss"], rtol=2e-5)
    assert parallel["test_accuracy"] == single["test_accuracy"]
    assert eight["param_diff"] < 1e-5
    # ... and the trajectory is a real one: the loss moved
    assert single["batch_loss"][0] != single["batch_loss"][-1]


@pytest.mark.slow  # compiles for 8 devices
def test_params_come_back_replicated_on_every_device(eight):
    assert eight["param_sharding"] == [True, 8]


@pytest.mark.slow  # compiles for 8 devices
def test_the_compiled_data_parallel_step_adds_gradients_with_an_all_reduce(eight):
    hlo = eight["hlo"]
    assert hlo["single"] == {}  # one device: nothing to communicate
    # XLA combines the gradients (and the loss) into ONE all-reduce; no gathers of data
    assert hlo["jit"] == {"all-reduce": 1}
    assert hlo["shard_map"] == {"all-reduce": 1}
    # inside the scan's loop body: one per step, UNROLL steps per trip round the loop
    assert hlo["epoch"] == {"all-reduce": UNROLL}


@pytest.mark.slow  # compiles for 8 devices
def test_draw_hlo_shows_the_all_reduce_of_the_data_parallel_step_in_red(eight):
    assert "1 collective" in eight["draw_hlo"]["title"]
    assert len(eight["draw_hlo"]["red_nodes"]) == 1


@pytest.mark.slow  # compiles for 8 devices
def test_jit_with_shardings_and_shard_map_with_psum_equal_update(eight):
    assert eight["jit_diff"] < 1e-5
    assert eight["shard_map_diff"] < 1e-5
    assert eight["jit_x_shards"] == [8]  # 64 examples, 8 on each device


@pytest.mark.slow  # compiles for 8 devices
def test_psum_of_a_gradient_of_uncast_params_counts_it_once_per_device(eight):
    # with pcast, psum / n is the full batch's gradient; without, n times it
    np.testing.assert_allclose(eight["grad_ratio_cast_True"], 1, rtol=1e-5)
    np.testing.assert_allclose(eight["grad_ratio_cast_False"], 8, rtol=1e-5)


@pytest.mark.slow  # compiles for 8 devices
def test_data_mesh_is_auto_while_make_mesh_defaults_to_explicit(eight):
    assert eight["axis_types"]["data_mesh"] == ["AxisType.Auto"]
    assert eight["axis_types"]["make_mesh"] == ["AxisType.Explicit"]  # since JAX 0.9


@pytest.mark.slow  # compiles for 8 devices
def test_a_batch_that_does_not_split_evenly_gets_the_nearest_sizes(eight):
    assert eight["batch_error"] == (
        "`batch_size` 100 does not split evenly over 8 devices: every device must get the "
        "same number of examples. Use 96 or 104 (a multiple of 8)."
    )


@pytest.mark.slow  # compiles for 8 devices
def test_asking_for_more_devices_than_there_are_says_how_to_simulate_them(eight):
    assert eight["mesh_error"] == (
        "Asked for 16 devices; JAX sees 8 (cpu). To simulate more CPU devices, run "
        "jax.config.update('jax_num_cpu_devices', 16) right after `import jax`, before any "
        "computation."
    )


@pytest.mark.parametrize(
    ("batch", "devices", "sizes"),
    [(100, 8, "96 or 104"), (3, 8, "8"), (130, 4, "128 or 132")],
)
def test_check_batch_size_names_the_nearest_multiples(batch, devices, sizes):
    with pytest.raises(
        ValueError, match=re.escape(f"Use {sizes} (a multiple of {devices}).")
    ):
        par.check_batch_size(batch, devices)


def test_check_batch_size_accepts_multiples():
    for batch, devices in [(128, 8), (8, 8), (7, 1), (96, 4)]:
        par.check_batch_size(batch, devices)


def test_data_mesh_is_1d_over_the_local_devices():
    mesh = par.data_mesh()
    assert mesh.axis_names == ("batch",) and mesh.size == len(jax.local_devices())
    assert par.data_mesh(1).size == 1
    assert par.data_mesh(jax.devices()[:1]).devices.tolist() == jax.devices()[:1]
    assert par.data_mesh(mesh) is mesh


def test_data_mesh_refuses_what_it_cannot_use():
    with pytest.raises(ValueError, match=r'`devices` must be "all", a count'):
        par.data_mesh("some")
    with pytest.raises(ValueError, match="Data parallelism needs a 1-D mesh"):
        par.data_mesh(jax.make_mesh((1, 1), ("a", "b")))
    for count in (0, -1):  # not "asked for 0 devices; JAX sees 8": too few, not many
        with pytest.raises(ValueError) as err:
            par.data_mesh(count)
        assert str(err.value) == (
            f"`devices` must be at least 1 (a count of devices to train on); got {count}. "
            f'Pass "all" for every one of the {len(jax.local_devices())} JAX sees.'
        )


def test_on_one_device_the_step_is_update():

    params, velocity, x, y = fake_step_inputs(SIZES, 16)  # noqa: F821 (from exec above)
    step = par.data_parallel_update(par.data_mesh(1), lr=0.1, momentum=0.5)
    got = step(params, x, y, velocity)
    want = jax.jit(mlp.update, static_argnames=("lr", "momentum"))(
        params, x, y, velocity, lr=0.1, momentum=0.5
    )
    for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


EXPLICIT_SNIPPET = """
import json
import jax, jax.numpy as jnp, numpy as np
from jaxtour import mlp

mesh = jax.make_mesh((4,), ("d",))  # Explicit axes: make_mesh's default since JAX 0.9
params = mlp.init_params(jax.random.key(0))
velocity = jax.tree.map(jnp.zeros_like, params)
x, y = jax.random.normal(jax.random.key(1), (16, 784)), jnp.arange(16) % 10
want = mlp.update(params, x, y, velocity)  # the unsharded step
out = {"axis_types": [str(t) for t in mlp.data_mesh(mesh).axis_types]}
for make in (mlp.data_parallel_update, mlp.psum_update):
    got = make(mesh)(params, x, y, velocity)
    out[make.__name__] = max(
        float(np.max(np.abs(g - w)))
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)))
print(json.dumps(out))
"""


def test_a_mesh_from_make_mesh_trains_as_update_does():
    # jax.make_mesh's axes are Explicit: psum_update's shard_map refused the unsplit
    # batch ("in_specs ... does not match"); data_mesh makes them Auto, as its own are
    out = run_with_devices(EXPLICIT_SNIPPET)
    assert out["axis_types"] == ["AxisType.Auto"]
    assert out["data_parallel_update"] < 1e-5
    assert out["psum_update"] < 1e-5
