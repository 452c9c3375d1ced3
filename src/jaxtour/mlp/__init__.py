"""The MNIST MLP: real data, trained with one jitted scan per epoch, and its NumPy twin."""

from jaxtour.mlp._data import Mnist, MnistFormatError, MnistUnavailableError, load_mnist, read_idx
from jaxtour.mlp._download import FILES, MIRRORS
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
from jaxtour.mlp._train import (
    History,
    batch_indices,
    compile_epoch,
    evaluate,
    resolve_device,
    train,
    train_epoch,
)

__all__ = [
    "FILES",
    "LR",
    "MIRRORS",
    "MOMENTUM",
    "SIZES",
    "History",
    "Mnist",
    "MnistFormatError",
    "MnistUnavailableError",
    "Params",
    "accuracy",
    "batch_indices",
    "batched_predict",
    "compile_epoch",
    "evaluate",
    "example_batch",
    "init_params",
    "load_mnist",
    "loss",
    "predict",
    "preprocess",
    "read_idx",
    "resolve_device",
    "train",
    "train_epoch",
    "update",
]
