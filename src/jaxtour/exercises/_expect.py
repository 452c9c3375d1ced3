"""`expect_close`: compare a student's result with JAX's, and say how they differ."""

from __future__ import annotations

import numbers
from typing import Any

import jax
import numpy as np

from jaxtour.exercises._registry import Wrong


def expect_close(
    got: Any,
    want: Any,
    *,
    where: str = "",
    rtol: float = 1e-5,
    atol: float = 1e-6,
    check_dtype: bool = True,
) -> None:
    """Raise `Wrong` unless `got` is an array (or pytree of arrays) close to `want`.

    Checks, in this order, so the first problem is the one reported: that `got` is an
    array at all, its pytree structure, its shape, its dtype, then its values.

    Args:
        got: what the student's function returned.
        want: the oracle's answer (computed with JAX); an array or a pytree of arrays.
        where: the input, in words, named in the message, e.g. "x=1.5".
        rtol: relative tolerance, as `np.allclose`.
        atol: absolute tolerance, as `np.allclose`.
        check_dtype: compare dtypes too (Python numbers pass as any dtype's value).

    Raises:
        Wrong: e.g. "at x=1.5: expected shape (3,), got (3, 1)".

    Example:
        >>> import jax.numpy as jnp
        >>> expect_close(jnp.ones(3), jnp.ones(3))
        >>> expect_close(jnp.ones((3, 1)), jnp.ones(3), where="x=1.5")
        Traceback (most recent call last):
        jaxtour.exercises._registry.Wrong: at x=1.5: expected shape (3,), got (3, 1)
    """
    at = f"at {where}: " if where else ""
    if got is Ellipsis or want is not None:
        expect_returned(got, where=where)
    if _is_array(want):
        _expect_leaf_close(got, np.asarray(want), at, rtol, atol, check_dtype)
        return
    got_leaves, got_tree = jax.tree.flatten_with_path(got)
    want_leaves, want_tree = jax.tree.flatten_with_path(want)
    if str(got_tree) != str(want_tree):  # the structures, as JAX spells them
        raise Wrong(f"{at}expected {_describe_tree(want)}, got {_describe_tree(got)}")
    for (path, got_leaf), (_, want_leaf) in zip(got_leaves, want_leaves, strict=True):
        name = f"{at}{jax.tree_util.keystr(path)}: " if path else at
        _expect_leaf_close(
            got_leaf, np.asarray(want_leaf), name, rtol, atol, check_dtype
        )


def expect_returned(got: Any, *, where: str = "") -> Any:
    """`got`, unless the answer returned None (a forgotten `return`) or `...`.

    A checker that looks at the shape of an answer before `expect_close` calls this
    first: `np.shape(None)` is `()`, "one number", which blames the wrong mistake.

    Raises:
        Wrong: e.g. "at x=1.5: your function returned None: did it forget to `return`
            its result?"
    """
    at = f"at {where}: " if where else ""
    if got is Ellipsis:
        raise Wrong(
            f"{at}your function returned `...`: replace the `...` with your code"
        )
    if got is None:
        raise Wrong(
            f"{at}your function returned None: did it forget to `return` its result?"
        )
    return got


def whole_number(answer: Any) -> int | None:
    """`answer` as an int when it is a whole number: a Python or NumPy int, or a
    0-d integer array (what `jnp.sum` of a count gives); else None (a bool too)."""
    if isinstance(answer, bool | np.bool_):
        return None
    if isinstance(answer, numbers.Integral):
        return int(answer)
    array = isinstance(answer, jax.Array | np.ndarray) and answer.ndim == 0
    if array and np.issubdtype(answer.dtype, np.integer):
        return int(answer)
    return None


def expect_pair(answer: Any, *, of: str) -> tuple[Any, Any]:
    """`answer` as a tuple, if it is a tuple (or a list) of two; else `Wrong` asking for
    "a tuple of two `of`"."""
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        raise Wrong(f"return a tuple of two {of}")
    return tuple(answer)


def _describe_tree(tree: Any) -> str:
    if isinstance(tree, dict):
        return f"a dict with keys {sorted(map(str, tree))}"
    if isinstance(tree, list | tuple):
        return f"a {type(tree).__name__} of {len(tree)}"
    if _is_array(tree):
        return "an array"
    return f"a {type(tree).__name__}"


def _is_array(x: Any) -> bool:
    return isinstance(x, jax.Array | np.ndarray | np.generic | numbers.Number)


def _expect_leaf_close(
    got: Any, want: np.ndarray, at: str, rtol: float, atol: float, check_dtype: bool
) -> None:
    if not _is_array(got):
        raise Wrong(
            f"{at}expected an array, got {type(got).__name__} {_short(got)}"
            + _container_hint(got)
        )
    python_number = isinstance(got, numbers.Number)
    got = np.asarray(got)
    if got.shape != want.shape:
        raise Wrong(f"{at}expected shape {want.shape}, got {got.shape}")
    if check_dtype and not python_number and got.dtype != want.dtype:
        raise Wrong(
            f"{at}expected dtype {want.dtype}, got {got.dtype}{_dtype_hint(got, want)}"
        )
    if np.issubdtype(want.dtype, np.inexact) or np.issubdtype(got.dtype, np.inexact):
        ok = np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = got == want
    if not np.all(ok):
        raise Wrong(
            f"{at}got {_short(got)}, expected {_short(want)}"
            + _first_difference(got, want, ok)
        )


def _container_hint(got: Any) -> str:
    if isinstance(got, list | tuple) and len(got) == 1 and _is_array(got[0]):
        return (
            f": a {type(got).__name__} holding one array; take the array out with `[0]`"
        )
    if isinstance(got, list | tuple):
        return ": make one array of it with `jnp.array` or `jnp.stack`"
    return ""


def _dtype_hint(got: np.ndarray, want: np.ndarray) -> str:
    if got.dtype == np.float64 and want.dtype == np.float32:
        return (
            "; JAX computes in float32 unless `jax_enable_x64` is on, and NumPy (`np.…`) "
            "in float64: compute with `jnp.…`"
        )
    if np.issubdtype(got.dtype, np.integer) and np.issubdtype(want.dtype, np.floating):
        return "; integer inputs stay integers: start from floats (`1.0`, `.astype(float)`)"
    return ""


def _first_difference(got: np.ndarray, want: np.ndarray, ok: np.ndarray) -> str:
    if got.ndim == 0:
        return ""
    index = tuple(int(i) for i in np.argwhere(~ok)[0])
    return f" (first difference at index {index}: {_num(got[index])} vs {_num(want[index])})"


def _num(value: Any) -> str:
    try:
        return f"{value:.6g}"
    except (TypeError, ValueError):
        return str(value)


def _short(x: Any) -> str:
    if isinstance(x, np.ndarray) and x.ndim == 0:
        return _num(x.item())
    if isinstance(x, np.ndarray):
        return np.array2string(x, precision=4, threshold=8, edgeitems=2).replace(
            "\n", ""
        )
    text = repr(x)
    return text if len(text) <= 60 else text[:59] + "…"
