"""Lesson 05's exercises: `vmap` a per-example loss, write `accuracy`, and read a matmul's
shape off the drawn jaxpr of `batched_predict`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._expect import expect_close, expect_returned
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._uses import first_use

LESSON = "05_mnist_mlp"


def _example_loss(params: Any, image: jax.Array, label: jax.Array) -> Any:
    """Cross-entropy of ONE example: image f32[6], label i32[]."""
    logits = image @ params["w"] + params["b"]
    return -jax.nn.log_softmax(logits)[label]


def _problem(batch: int, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    params = {
        "w": jnp.asarray(rng.standard_normal((6, 3)), jnp.float32),
        "b": jnp.asarray(rng.standard_normal(3), jnp.float32),
    }
    images = jnp.asarray(rng.standard_normal((batch, 6)), jnp.float32)
    labels = jnp.asarray(rng.integers(0, 3, batch), jnp.int32)
    return params, images, labels


@checks(LESSON, "ex_losses_per_digit", title="per-example losses with `vmap`")
def _check_losses_per_digit(fn: Callable[..., Any]) -> None:
    """Practises batching a one-example function with `jax.vmap` and the right
    `in_axes`."""
    for batch in (4, 1):
        params, images, labels = _problem(batch, seed=batch)
        want = jnp.stack(
            [_example_loss(params, images[i], labels[i]) for i in range(batch)]
        )
        try:
            got = expect_returned(fn(_example_loss, params, images, labels))
        except ValueError as err:
            # vmap names the mapped arguments as `_example_loss` calls them
            if "argument params[" in str(err):
                raise Wrong(
                    "`vmap` mapped over `params` too (the default `in_axes=0` maps "
                    "every argument): the weights are shared by every example, so "
                    "give `params` the axis `None`: `in_axes=(None, 0, 0)`"
                ) from None
            raise
        if np.shape(got) == () and batch > 1:
            raise Wrong(
                "you returned one number; the task wants one loss per example, "
                f"f32[batch] (here shape ({batch},)): leave the mean to the caller"
            )
        expect_close(got, want, where=f"a batch of {batch}", rtol=1e-5, atol=1e-6)
    if first_use(fn, {"vmap": jax.vmap}) is None:  # in a helper of its own too
        raise Wrong(
            "the values are right, but the task is to batch `example_loss` with "
            "`jax.vmap`, not with a Python loop over the examples"
        )


@checks(LESSON, "ex_accuracy", title="accuracy of a batch")
def _check_accuracy(fn: Callable[..., Any]) -> None:
    """Practises reducing logits to a prediction with `argmax` over the right axis."""
    rng = np.random.default_rng(5)
    for batch, classes in (
        (6, 6),
        (10, 4),
    ):  # 6x6: argmax over the wrong axis still fits
        logits = jnp.asarray(rng.standard_normal((batch, classes)), jnp.float32)
        labels = jnp.asarray(rng.integers(0, classes, batch), jnp.int32)
        labels = labels.at[:2].set(
            jnp.argmax(logits[:2], axis=-1)
        )  # some right answers
        right = np.asarray(jnp.argmax(logits, axis=-1) == labels)
        got = expect_returned(fn(logits, labels))
        if np.shape(got) == (batch,):
            raise Wrong(
                "you returned one value per example; accuracy is one number: the "
                "fraction of examples whose largest logit is the label"
            )
        if np.shape(got) != ():
            raise Wrong(f"expected one number, got an array of shape {np.shape(got)}")
        value = float(got)
        if np.isclose(value, right.sum()) and right.sum() != right.mean():
            raise Wrong(
                f"{value:g} is the number of right answers; accuracy is a fraction: "
                "divide by the batch size (`jnp.mean` does both)"
            )
        if batch == classes:
            by_class = np.mean(
                np.asarray(jnp.argmax(logits, axis=0)) == np.asarray(labels)
            )
            if np.isclose(value, by_class) and not np.isclose(by_class, right.mean()):
                raise Wrong(
                    "`argmax` ran over the batch axis (axis 0): for each class it "
                    "picked an example. Take it over the classes: `axis=-1`"
                )
        if not np.isclose(value, right.mean()):
            raise Wrong(
                f"for a batch of {batch} with {right.sum()} right answers, expected "
                f"{right.mean():g}, got {value:g}"
            )


def _nested(eqn: Any) -> Iterator[Any]:
    """The jaxprs inside an equation's params (a `jit`'s body, a `custom_jvp`'s ...)."""
    for value in eqn.params.values():
        for item in value if isinstance(value, list | tuple) else (value,):
            inner = getattr(item, "jaxpr", item)  # a ClosedJaxpr holds its Jaxpr
            if hasattr(inner, "eqns"):
                yield inner


def _first_dot_shape(jaxpr: Any) -> tuple[int, ...] | None:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            return tuple(eqn.outvars[0].aval.shape)
        for inner in _nested(eqn):
            found = _first_dot_shape(inner)
            if found:
                return found
    return None


@checks(LESSON, "ex_first_matmul_shape", title="a shape read off the jaxpr")
def _check_first_matmul_shape(fn: Callable[..., Any]) -> None:
    """Practises reading a drawn jaxpr: what `vmap` does to the shapes of `predict`."""
    from jaxtour.mlp import SIZES, batched_predict, init_params

    params = init_params(jax.random.key(0))
    for batch in (8, 1, 32):
        x = jnp.zeros((batch, SIZES[0]), jnp.float32)
        want = _first_dot_shape(jax.make_jaxpr(batched_predict)(params, x).jaxpr)
        if want is None:  # the checker's own oracle: a kit bug, not the student's
            raise RuntimeError("batched_predict's jaxpr has no dot_general")
        got = fn(batch)
        try:
            got = tuple(int(n) for n in got)
        except (TypeError, ValueError):  # not a sequence, or "f32[8,512]" as text
            raise Wrong(
                f"return a shape, a tuple such as (3, 4); got {got!r}"
            ) from None
        if got == want:
            continue
        if got == want[1:]:
            raise Wrong(
                f"{got} is one image's shape, as `predict` sees it; `vmap` adds the "
                f"batch axis in front: for a batch of {batch}, ({batch}, ...)"
            )
        if got == (SIZES[0], SIZES[1]):
            raise Wrong(
                f"{got} is the shape of the weights `hidden1.w`, an INPUT of the "
                "first `dot_general`; the task asks for its output (the arrow out)"
            )
        if got == want[::-1]:
            raise Wrong(
                f"{got}: the axes are the wrong way round; the batch axis comes first"
            )
        raise Wrong(
            f"for a batch of {batch} the first `dot_general` makes {want}, got {got}"
            + (" (is the batch size taken from the argument?)" if batch != 8 else "")
        )
