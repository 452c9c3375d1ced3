"""Params to and from `.npz`: one array per ``layer/w`` and ``layer/b``."""

from __future__ import annotations

import io
import os
from pathlib import Path
from zipfile import BadZipFile

import jax.numpy as jnp
import numpy as np

from jaxtour._files import user_path, write_atomically
from jaxtour.mlp._model import Params, layer_names

_NUMBERS = "biufc"  # the dtype kinds an .npz names: bool, ints, floats, complex


def save_params(params: Params, path: str | os.PathLike) -> Path:
    """Write `params` as an ``.npz`` with keys like ``hidden1/w`` (atomically).

    Raises:
        TypeError: a leaf's dtype is one NumPy's format cannot name (bfloat16, float8):
            cast the params to float32 first.

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
    for key, value in arrays.items():
        if value.dtype.kind not in _NUMBERS:  # bfloat16, float8: NumPy has no name
            raise TypeError(
                f"save_params: `{key}` is {value.dtype.name}, which an .npz holds only "
                f"as raw bytes ({value.dtype.str}): load_params could not read it "
                "back. Cast first: jax.tree.map(lambda a: a.astype(jnp.float32), "
                "params) (exact for bfloat16 and float8)."
            )
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    path = user_path(path)
    write_atomically(path, buffer.getvalue())
    return path


def load_params(path: str | os.PathLike) -> Params:
    """Read params written by `save_params` (e.g. by ``jaxtour train``).

    Raises:
        OSError: the file cannot be read (e.g. `FileNotFoundError`).
        ValueError: the file does not hold MLP params: not an ``.npz`` archive (or a
            truncated one), other keys, or layers whose shapes do not chain.
    """
    path = user_path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (AttributeError, TypeError, EOFError, ValueError, BadZipFile) as err:
        # TypeError (AttributeError before 3.11): a .npy, one array and no archive.
        # Not numpy's message: for a foreign file it suggests unpickling it.
        raise ValueError(
            f"{path} is not an .npz archive of MLP params as `save_params` writes: it "
            f"is truncated, of another format, or holds Python objects "
            f"({type(err).__name__}). Train again, or pass the file `save_params` wrote."
        ) from None
    params: dict[str, dict] = {}
    for key, value in arrays.items():
        if value.dtype.kind not in _NUMBERS:
            raise ValueError(
                f"{path} does not hold MLP params: `{key}` is {value.dtype.str}, not "
                "numbers (raw bytes are how NumPy stores a bfloat16 array). Cast "
                "params to float32 before `save_params`, or pass the file it wrote."
            )
        layer, _, part = key.partition("/")
        params.setdefault(layer, {})[part] = jnp.asarray(value)
    names = layer_names(len(params))
    if sorted(params) != sorted(names) or any(
        set(p) != {"w", "b"} for p in params.values()
    ):
        raise ValueError(
            f"{path} does not hold MLP params (expected keys {names} with w and "
            f"b each); found {sorted(params)}."
        )
    _check_shapes(path, [params[name] for name in names], names)
    return {name: params[name] for name in names}


def _check_shapes(
    path: str | os.PathLike, layers: list[dict], names: list[str]
) -> None:
    """Each w is 2-D, each b as wide as its w, and each w as deep as the last is wide."""
    width = None
    for name, layer in zip(names, layers, strict=True):
        w, b = layer["w"].shape, layer["b"].shape
        if len(w) != 2 or b != w[1:] or width not in (None, w[0]):
            after = "" if width is None else f" after a layer {width} wide"
            raise ValueError(
                f"{path} does not hold MLP params: {name} has w {w} and b {b}{after} "
                "(each w is [inputs, outputs], its b [outputs])."
            )
        width = w[1]
