"""A student's exception, said as a hint in plain words instead of a traceback."""

from __future__ import annotations

import re

import jax

_TRACED_IF = (
    "a Python `if`, `while`, `and`/`or`/`not` or `bool()` needed the value of a traced "
    "array, which `jax.jit` (and `vmap`, `grad`) does not know while tracing. Choose "
    "between values with `jnp.where(cond, a, b)`, between computations with "
    "`lax.cond(pred, f_true, f_false, x)`, and loop with `lax.fori_loop`/`lax.while_loop`"
)
_TRACED_INT = (
    "`int()`, `range()` or a list index needed the value of a traced array. Index arrays "
    "with `x[i]` or `lax.dynamic_slice`, loop with `lax.fori_loop`, or mark the argument "
    "static (`jax.jit(f, static_argnums=...)`) if it is a size that never varies"
)
_TRACED_NUMPY = (
    "a NumPy function (`np.…`) or `float()` was given a traced array; NumPy runs outside "
    "JAX and cannot see inside a trace: use the `jnp.…` function instead"
)
_CONCRETE = (
    "a value that must be known while tracing (a shape, a size, a Python condition) "
    "depends on a traced array. Shapes must come from `x.shape` or static arguments, "
    "not from array values; pick between values with `jnp.where`"
)
_LEAKED = (
    "a traced value escaped from the function being transformed (a leaked tracer), "
    "usually because the function stored it outside itself: in a global, a list or an "
    "attribute. Return values instead of storing them; a transformed function must be pure"
)
_SHAPES = (
    "shapes don't fit: {message} Check each array's `.shape` against what the task asks"
)
_VMAP_SIZES = (
    "`vmap` mapped axes of different sizes: {message} Map only the batched arguments; give "
    "the others `None` in `in_axes`, e.g. `jax.vmap(f, in_axes=(None, 0))`"
)
_NOT_AN_ARRAY = (
    "`jax.jit` was given an argument that is not an array (a function, a string, …): "
    "close over it, or name it in `static_argnums`"
)
_VMAP_AXES = (
    "`in_axes` does not match the arguments: {message} Give one entry per argument"
)

_SHAPE_PATTERNS = (
    r"incompatible shapes",
    r"requires contracting dimensions",
    r"cannot reshape",
    r"mismatch in (its|their) core dimension",
    r"shapes? must",
    r"dimension.*size",
    r"got (arrays|shapes) of (different|incompatible)",
    r"must have the same shape",
)

# Most specific first: TracerBoolConversionError is a ConcretizationTypeError.
_JAX_ERRORS: tuple[tuple[type[BaseException], str], ...] = (
    (jax.errors.TracerBoolConversionError, _TRACED_IF),
    (jax.errors.TracerIntegerConversionError, _TRACED_INT),
    (jax.errors.TracerArrayConversionError, _TRACED_NUMPY),
    (jax.errors.ConcretizationTypeError, _CONCRETE),
    (jax.errors.UnexpectedTracerError, _LEAKED),
)


def first_line(err: BaseException, limit: int = 240) -> str:
    """An exception's message on one line, without JAX's pointers to docs and traces."""
    text = re.split(
        r"\n\s*\n|The error occurred while|See https://|--------", str(err)
    )[0]
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(err: BaseException, culprit: str = "your function") -> str:
    """Say what `err`, raised by a student's function, means and what to do about it.

    Args:
        err: the exception.
        culprit: who raised it, in the words of the last resort "<culprit> raised …".
    """
    for kind, hint in _JAX_ERRORS:
        if isinstance(err, kind):
            return f"{hint}."
    message = first_line(err)
    if (
        "Tracer" in message and "concrete" in message.lower()
    ) or "concrete values" in message:
        return f"{_CONCRETE}."
    if isinstance(err, TypeError) and "as an abstract array" in message:
        return f"{_NOT_AN_ARRAY}."
    if isinstance(err, ValueError) and "vmap got inconsistent sizes" in message:
        return _VMAP_SIZES.format(message=_sentence(message)) + "."
    if isinstance(err, ValueError) and "in_axes" in message:
        return _VMAP_AXES.format(message=_sentence(message)) + "."
    if isinstance(err, TypeError | ValueError) and any(
        re.search(p, message, re.IGNORECASE) for p in _SHAPE_PATTERNS
    ):
        return _SHAPES.format(message=_sentence(message)) + "."
    return f"{culprit} raised {type(err).__name__}: {message}"


def _sentence(text: str) -> str:
    text = text.rstrip(": ")
    return text if text.endswith(".") else text + "."
