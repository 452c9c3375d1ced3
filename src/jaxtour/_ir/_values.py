"""Values a run produced, brought to NumPy for showing: keys as key data, narrow floats.

NumPy cannot hold a typed PRNG key (`jax.random.key`), and it calls bfloat16, float16's
cousins and float8 kind 'V', so `dtype.kind in "fc"` misses their NaNs. Every lens that
shows or scans a value goes through `host` and `nonfinite` instead of `np.asarray`.
"""

from __future__ import annotations

import functools
import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour._ir._jaxpr import type_str


def is_array_like(leaf: Any) -> bool:
    """Whether JAX can trace `leaf`: an array or a Python/NumPy number."""
    return isinstance(leaf, jax.Array | np.ndarray | np.generic | numbers.Number)


def dtype_of(leaf: Any) -> Any:
    """The dtype JAX gives `leaf` (a key array's extended dtype included)."""
    return leaf.dtype if hasattr(leaf, "dtype") else np.result_type(leaf)


def is_differentiable(leaf: Any) -> bool:
    """Whether JAX differentiates `leaf`: an array or number of a floating (or complex)
    dtype, bfloat16 and float8 included; integers, booleans and PRNG keys are not."""
    return is_array_like(leaf) and jnp.issubdtype(dtype_of(leaf), jnp.inexact)


def is_tracer(value: Any) -> bool:
    """Whether `value` is a tracer: a JAX array of a transformation being traced
    (`jax.grad`, `jax.vmap`, `jax.jit`), not a concrete array or key."""
    return isinstance(value, jax.Array) and not isinstance(value, _concrete_arrays())


@functools.cache
def _concrete_arrays() -> tuple[type, ...]:
    """The types of concrete JAX arrays: numbers, and typed PRNG keys (made concrete
    even when the first call comes inside a trace, where they would be tracers)."""
    with jax.ensure_compile_time_eval():
        return type(jnp.zeros(())), type(jax.random.key(0))


def is_key(value: Any) -> bool:
    """Whether `value` is a typed PRNG key array (`jax.random.key`, an NNX `Rngs` key)."""
    dtype = getattr(value, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key)


def is_float(dtype: Any) -> bool:
    """Floating or complex, bfloat16, float16 and float8 included (as `jnp.issubdtype`).

    Example:
        >>> is_float(jnp.bfloat16), is_float(np.int32)
        (True, False)
    """
    try:
        return bool(jnp.issubdtype(dtype, jnp.inexact))
    except TypeError:
        return False


def host(value: Any) -> np.ndarray:
    """`value` as a NumPy array: a typed key as its key data (`jax.random.key_data`),
    a bfloat16/float8 array as float32 (exact), anything else as `np.asarray` gives it.

    Example:
        >>> host(jax.random.key(0)).tolist()
        [0, 0]
        >>> host(jnp.array([1.5], jnp.bfloat16)).dtype
        dtype('float32')
    """
    if is_key(value):
        return np.asarray(jax.random.key_data(value))
    array = np.asarray(value)
    if array.dtype.kind == "V" and is_float(array.dtype):
        return array.astype(np.float32)
    return array


def nonfinite(value: Any, include_inf: bool = True) -> bool:
    """Whether `value` holds a NaN (or, with `include_inf`, an Inf), in any float dtype.

    Example:
        >>> nonfinite(jnp.array([jnp.nan], jnp.bfloat16))
        True
    """
    dtype = value.dtype if hasattr(value, "dtype") else np.result_type(value)
    if is_key(value) or not is_float(dtype):
        return False
    array = host(value)
    bad = ~np.isfinite(array) if include_inf else np.isnan(array)
    return bool(np.any(bad))


def value_type(value: Any) -> str:
    """The JAX type of a concrete value, ``f32[3]`` or ``key<fry>[]``."""
    return type_str(value if hasattr(value, "dtype") else np.asarray(value))
