"""Lesson 06's exercises: judge a float32 result against a float64 oracle with a tolerance
that fits float32, and count a training step's matmuls off its drawn jaxpr."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._registry import Wrong, checks

LESSON = "06_jax_vs_numpy"


def _cases() -> Any:
    """(name, actual, expected float64, the right verdict)."""
    rng = np.random.default_rng(6)
    a, b = rng.uniform(0.5, 1.5, (64, 64)), rng.uniform(0.5, 1.5, (64, 64))  # no zeros
    product32 = a.astype(np.float32) @ b.astype(np.float32)
    steps = rng.standard_normal(500)
    walk32 = np.cumsum(steps.astype(np.float32))  # a running sum: it crosses zero
    off = (a @ b) * (1 + 1e-3 * rng.choice([-1.0, 1.0], (64, 64)))
    broken = product32.copy()
    broken[3, 5] = np.nan
    return [
        ("a float64 copy of the answer", a @ b, a @ b, True),
        ("a float32 matmul", product32, a @ b, True),
        ("a float32 running sum that crosses zero", walk32, np.cumsum(steps), True),
        ("a result off by 0.1 % everywhere", off.astype(np.float32), a @ b, False),
        ("a float32 matmul with one NaN", broken, a @ b, False),
        *_scaled(a, b, off / (a @ b)),
    ]


def _scaled(a: np.ndarray, b: np.ndarray, off: np.ndarray) -> list:
    """The matmul and the 0.1 % error at scales far from 1, where a fixed tolerance
    (`atol=1e-4`) rejects the one or accepts the other."""
    cases = []
    for scale, right, wrong in ((1e3, True, False), (1e-6, True, False)):
        expected = (a * scale) @ b
        product32 = (a * scale).astype(np.float32) @ b.astype(np.float32)
        size = f"{np.abs(expected).max():.0e}"
        cases.append(
            (f"a float32 matmul of values up to {size}", product32, expected, right)
        )
        shifted = (expected * off).astype(np.float32)
        cases.append(
            (f"a result off by 0.1 % of values up to {size}", shifted, expected, wrong)
        )
    return cases


@checks(LESSON, "ex_agrees", title="float32 against a float64 oracle")
def _check_agrees(fn: Callable[..., Any]) -> None:
    """Practises comparing a float32 result with a float64 oracle at float32's
    precision, against the array's scale."""
    for name, actual, expected, right in _cases():
        got = fn(actual, expected)
        if not isinstance(got, bool | np.bool_) and not (
            isinstance(got, jax.Array | np.ndarray)
            and got.shape == ()
            and got.dtype == jnp.bool_
        ):
            raise Wrong(f"return True or False; for {name} it returned {got!r}")
        if bool(got) == right:
            continue
        relative = np.nanmax(np.abs(actual - expected)) / np.abs(expected).max()
        if "values up to" in name:
            raise Wrong(_scale_blind(name, right))
        if name == "a float64 copy of the answer":
            raise Wrong("it rejects even an exact copy of the expected values")
        if name == "a float32 matmul":
            raise Wrong(
                f"it rejects a correct float32 matmul (off by {relative:.0e} of the "
                "largest entry): float32 keeps about 7 digits, so exact equality or "
                "a float64-sized tolerance (1e-12) expects what float32 cannot give. "
                "Allow about 1e-5 of the values' scale"
            )
        if name.startswith("a float32 running sum"):
            raise Wrong(
                "it rejects a correct float32 running sum: where the sum passes near "
                "zero, an error of 1e-7 of the scale is a huge error *relative to that "
                "entry*. Measure the error against the whole array's scale "
                "(max |expected|), not entry by entry"
            )
        if name.startswith("a result off"):
            raise Wrong(
                "too loose: it accepts a result that is off by 0.1 %, ten thousand "
                "times float32's rounding"
            )
        raise Wrong(
            "it accepts a result with a NaN in it: NaN never agrees with anything"
            + _nan_passed_over(actual)
        )


def _nan_passed_over(actual: np.ndarray) -> str:
    """A hint, when `jnp.max` here gives a number for an array holding a NaN (XLA's CPU
    reduction can pass over one), where NumPy's `np.max` gives NaN."""
    if np.isnan(float(jnp.max(jnp.abs(jnp.asarray(actual))))):
        return ""
    return (
        ". Here `jnp.max` of that result is a number, not NaN (XLA's reduction passed "
        "over it, where `np.max` gives NaN): look for a NaN with `jnp.isnan(...).any()`"
    )


def _count_dots(jaxpr: Any) -> int:
    count = 0
    for eqn in jaxpr.eqns:
        count += eqn.primitive.name == "dot_general"
        for value in eqn.params.values():
            for item in value if isinstance(value, list | tuple) else (value,):
                inner = getattr(item, "jaxpr", item)
                if hasattr(inner, "eqns"):
                    count += _count_dots(inner)
    return count


@checks(LESSON, "ex_matmuls_per_step", title="matmuls in a step, from the jaxpr")
def _check_matmuls_per_step(fn: Callable[..., Any]) -> None:
    """Practises reading a training step's jaxpr: which matmuls the backward pass
    makes."""
    from jaxtour.mlp import init_params, update

    key = jax.eval_shape(jax.random.key, 0)
    for layers in (3, 1, 2, 5):
        sizes = (12, *(8,) * (layers - 1), 4)
        # shapes only: tracing needs no numbers, so nothing is drawn or compiled
        params = jax.eval_shape(functools.partial(init_params, sizes=sizes), key)
        x = jax.ShapeDtypeStruct((2, sizes[0]), jnp.float32)
        y = jax.ShapeDtypeStruct((2,), jnp.int32)
        want = _count_dots(jax.make_jaxpr(update)(params, x, y).jaxpr)
        got = fn(layers)
        if got == want:
            continue
        if got == 3 * layers:
            raise Wrong(
                f"{got} for {layers} layers counts a gradient for the input images "
                "too; nothing asks for d(loss)/d(pixels), so the first layer passes "
                "no gradient back"
            )
        if got == 2 * layers:
            raise Wrong(
                f"{got} for {layers} layers: the forward products and the weight "
                "gradients, but not the products that pass the gradient back to the "
                "layer below (delta @ w.T)"
            )
        if got == layers:
            raise Wrong(
                f"{got} is the forward pass only: `update` also takes the gradient"
            )
        raise Wrong(
            f"for {layers} layer{'s' * (layers != 1)} a step makes {want} "
            f"`dot_general`s, got {got}"
        )


def _scale_blind(name: str, right: bool) -> str:
    """What a tolerance that ignores the values' scale did wrong on case `name`."""
    what = (
        f"rejects a correct {name.removeprefix('a ')}" if right else f"accepts {name}"
    )
    return (
        f"it {what}: a fixed tolerance (an `atol` like 1e-4) "
        f"ignores the values' scale. Allow about 1e-5 of the scale, measured against "
        "the whole array (max |expected|)"
    )
