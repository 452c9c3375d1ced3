"""The MNIST MLP: real data, trained with one jitted scan per epoch, and its NumPy twin.

The names here are what a lesson or a user calls; the machinery behind them (the
ladder's variants, device resolution) stays in the private modules. MNIST on disk is
`jaxtour.data`'s (`load_mnist` and its companions are re-exported here); training over
several JAX processes is `jaxtour.launch`'s (`train_multiprocess`).
"""

from typing import TYPE_CHECKING, Any

from jaxtour.data import (
    MIRRORS,
    Budget,
    Mnist,
    MnistFormatError,
    MnistUnavailableError,
    load_mnist,
)
from jaxtour.mlp._checkpoint import load_params, save_params
from jaxtour.mlp._ladder import format_ladder, run_ladder
from jaxtour.mlp._model import (
    LR,
    MOMENTUM,
    SIZES,
    Params,
    accuracy,
    batched_predict,
    example_batch,
    init_params,
    loss,
    predict,
    preprocess,
    update,
)
from jaxtour.mlp._numpy_twin import NumpyTwin
from jaxtour.mlp._plots import plot_history, plot_ladder, plot_predictions
from jaxtour.mlp._train import (
    TRAIN_EVAL_SIZE,
    UNROLL,
    History,
    batch_indices,
    check_schedule,
    compile_epoch,
    describe_device,
    evaluate,
    resolve_device,
    train,
    train_epoch,
)

# The same network in NumPy, float64 by default: `numpy_twin(params).step(x, y)`.
numpy_twin = NumpyTwin

__all__ = [
    "LR",
    "MIRRORS",
    "MOMENTUM",
    "SIZES",
    "TRAIN_EVAL_SIZE",
    "UNROLL",
    "Budget",
    "History",
    "Mnist",
    "MnistFormatError",
    "MnistUnavailableError",
    "NumpyTwin",
    "Params",
    "accuracy",
    "batch_indices",
    "batched_predict",
    "check_schedule",
    "compile_epoch",
    "describe_device",
    "evaluate",
    "example_batch",
    "format_ladder",
    "init_params",
    "load_mnist",
    "load_params",
    "loss",
    "numpy_twin",
    "plot_history",
    "plot_ladder",
    "plot_predictions",
    "predict",
    "preprocess",
    "resolve_device",
    "run_ladder",
    "save_params",
    "train",
    "train_epoch",
    "update",
]

# Data parallelism: the same training over every local device (mlp/_parallel.py).
# Its parts are exported for `jaxtour.launch`, which runs the same epoch over processes.
from jaxtour.mlp._parallel import (  # noqa: E402
    batch_sharded,
    check_batch_size,
    compile_epoch_of_batches,
    data_mesh,
    data_parallel_update,
    psum_update,
    replicated,
    train_data_parallel,
)

__all__ += [
    "batch_sharded",
    "check_batch_size",
    "compile_epoch_of_batches",
    "data_mesh",
    "data_parallel_update",
    "psum_update",
    "replicated",
    "train_data_parallel",
]

# Zero-argument pictures of the MLP for the tour (stem -> function returning a Diagram).
# They draw with the lenses (Graphviz and all): imported when asked for, so that a
# launcher's worker or a lesson that only trains does not load them.
if TYPE_CHECKING:
    from jaxtour.mlp._gallery import GALLERY

__all__ += ["GALLERY"]


def __getattr__(name: str) -> Any:
    if name == "GALLERY":
        from jaxtour.mlp._gallery import GALLERY

        return GALLERY
    raise AttributeError(f"module 'jaxtour.mlp' has no attribute {name!r}")
