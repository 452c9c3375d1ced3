"""The MNIST MLP: real data, trained with one jitted scan per epoch, and its NumPy twin."""

from jaxtour.mlp._checkpoint import load_params, save_params
from jaxtour.mlp._data import Mnist, MnistFormatError, MnistUnavailableError, load_mnist, read_idx
from jaxtour.mlp._download import FILES, MIRRORS, Budget
from jaxtour.mlp._ladder import VARIANTS, format_ladder, matmul_flops, matmul_rate, run_ladder
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
from jaxtour.mlp._plots import plot_history, plot_ladder, plot_predictions, save_figure
from jaxtour.mlp._train import (
    UNROLL,
    History,
    batch_indices,
    compile_epoch,
    evaluate,
    resolve_device,
    train,
    train_epoch,
)

# The same network in NumPy, float64 by default: `numpy_twin(params).step(x, y)`.
numpy_twin = NumpyTwin

__all__ = [
    "FILES",
    "LR",
    "MIRRORS",
    "MOMENTUM",
    "SIZES",
    "UNROLL",
    "VARIANTS",
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
    "compile_epoch",
    "evaluate",
    "example_batch",
    "format_ladder",
    "init_params",
    "load_mnist",
    "load_params",
    "loss",
    "matmul_flops",
    "matmul_rate",
    "numpy_twin",
    "plot_history",
    "plot_ladder",
    "plot_predictions",
    "predict",
    "preprocess",
    "read_idx",
    "resolve_device",
    "run_ladder",
    "save_figure",
    "save_params",
    "train",
    "train_epoch",
    "update",
]

# Data parallelism: the same training over every local device (mlp/_parallel.py).
from jaxtour.mlp._parallel import (  # noqa: E402
    check_batch_size,
    data_mesh,
    data_parallel_update,
    psum_update,
    train_data_parallel,
)

__all__ += [
    "check_batch_size",
    "data_mesh",
    "data_parallel_update",
    "psum_update",
    "train_data_parallel",
]

# The same over several JAX processes, as over several hosts (mlp/_multiprocess.py).
from jaxtour.mlp._multiprocess import (  # noqa: E402
    MultiprocessError,
    MultiprocessRun,
    PortInUseError,
    train_multiprocess,
)

__all__ += ["MultiprocessError", "MultiprocessRun", "PortInUseError", "train_multiprocess"]
