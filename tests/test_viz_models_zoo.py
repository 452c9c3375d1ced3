"""Every drawing of the model zoo at its defaults fits 5,000 px both ways and names the
model's own classes and functions (issue 47), small programs as well as big ones. Each
zoo model is built once for the module; each test draws one picture."""

import jax.numpy as jnp
import model_zoo as zoo
import pytest

from jaxtour import autodiff, tracing, viz

pytestmark = pytest.mark.slow

MAX_PX = 5000

# names of the user's own code: every drawing shows one in a box, a cluster or a
# node's line (`in Cell.inp`, `runs Cell`), not only in its title
OWN = {
    "nnx block": ("Block",),
    "nnx.jit step": ("Block",),
    "linen mlp": ("LinenMLP",),
    "equinox mlp": ("EqxMLP",),
    "plain functions": ("dense",),
    "scan": ("Cell",),
    "associative scan": ("combine", "recurrence"),  # compiled: combine fused away
    "checkify": ("EqxMLP",),
    "scanned epoch": ("dense", "sgd"),  # a scan step: `runs sgd`
}

DRAWINGS = {
    "jaxpr": lambda f, a, loss: viz.draw_jaxpr(f)(*a),
    "stablehlo": lambda f, a, loss: viz.draw_hlo(f, stage="stablehlo")(*a),
    "compiled": lambda f, a, loss: viz.draw_hlo(f)(*a),
    "grad": lambda f, a, loss: autodiff.draw_grad(loss)(*a),
    "step_through": lambda f, a, loss: tracing.step_through(f)(*a).diagram(),
    # the last argument (an array in every model) made NaN: the first NaN's neighbourhood
    "find_nans": lambda f, a, loss: tracing.find_nans(f)(*a[:-1], a[-1] * jnp.nan),
}


@pytest.fixture(scope="module")
def models():
    return zoo.all_models()


# the models whose first NaN is worth a picture: a NaN input flows through many steps
BIG = {"nnx block", "nnx.jit step", "associative scan", "checkify", "scanned epoch"}
# no scalar loss of the first argument to differentiate (a step, a checkified or
# scanned program); a small model's first NaN is a step or two, nothing to fit or name
NO_LOSS = {"nnx.jit step", "checkify", "scanned epoch"}
CASES = [
    (model, drawing)
    for model in OWN
    for drawing in DRAWINGS
    if not (drawing == "grad" and model in NO_LOSS)
    and not (drawing == "find_nans" and model not in BIG)
]


@pytest.mark.parametrize(("model", "drawing"), CASES)
def test_every_zoo_drawing_fits_and_names_the_models_own_code(models, model, drawing):
    f, args, loss = models[model]
    d = DRAWINGS[drawing](f, args, loss)
    d = d.diagram() if drawing == "find_nans" else d
    width, height = d.size_px
    print(f"{model:<17} {drawing:<13} {width:6,.0f} x {height:6,.0f}  {d.title}")
    assert width <= MAX_PX and height <= MAX_PX, (d.title, width, height)
    body = d.source.replace(d.title, "")  # a box, not the title, names the code
    assert any(name in body for name in OWN[model]), d.title
