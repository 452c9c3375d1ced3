"""Params to and from `.npz`: one array per ``layer/w`` and ``layer/b``."""

from __future__ import annotations

import io
import os
from pathlib import Path

import jax.numpy as jnp
import numpy as np

from jaxtour._files import write_atomically
from jaxtour.mlp._model import Params, layer_names


def save_params(params: Params, path: str | os.PathLike) -> Path:
    """Write `params` as an ``.npz`` with keys like ``hidden1/w`` (atomically).

    Example:
        >>> import jax, tempfile
        >>> from jaxtour.mlp import init_params
        >>> params = init_params(jax.random.key(0))
        >>> scratch = tempfile.TemporaryDirectory()
        >>> path = save_params(params, Path(scratch.name) / "params.npz")
        >>> sorted(np.load(path))[:2]
        ['hidden1/b', 'hidden1/w']
        >>> scratch.cleanup()
    """
    arrays = {
        f"{layer}/{part}": np.asarray(value)
        for layer, parts in params.items()
        for part, value in parts.items()
    }
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    path = Path(path)
    write_atomically(path, buffer.getvalue())
    return path


def load_params(path: str | os.PathLike) -> Params:
    """Read params written by `save_params` (e.g. by ``jaxtour train``).

    Raises:
        ValueError: the file does not hold MLP params.
    """
    with np.load(path) as archive:
        params: dict[str, dict] = {}
        for key in archive.files:
            layer, _, part = key.partition("/")
            params.setdefault(layer, {})[part] = jnp.asarray(archive[key])
    names = layer_names(len(params))
    if sorted(params) != sorted(names) or any(
        set(p) != {"w", "b"} for p in params.values()
    ):
        raise ValueError(
            f"{path} does not hold MLP params (expected keys {names} with w and "
            f"b each); found {sorted(params)}."
        )
    return {name: params[name] for name in names}
