"""Lesson 04's exercises: `vmap` with `in_axes`, a `lax.scan` loop, scans in a drawing."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour.exercises._expect import expect_close, expect_pair, expect_returned
from jaxtour.exercises._probes import grad_of_sum, primitives_of
from jaxtour.exercises._registry import Wrong, checks
from jaxtour.exercises._remote import in_answer
from jaxtour.exercises._tracing import under_jit
from jaxtour.exercises._uses import first_use

LESSON = "04_transformations"


def squared_error(w: jax.Array, b: jax.Array, x: jax.Array, t: jax.Array) -> Any:
    """One example's loss, as in the lesson: w f32[3], b f32[], x f32[3], t f32[] -> f32[]."""
    return (jnp.tanh(jnp.sum(w * x) + b) - t) ** 2


def _batch(n: int, seed: int = 0) -> Any:
    kw, kx, kt = jax.random.split(jax.random.key(seed), 3)
    return (
        jax.random.normal(kw, (3,)),
        jnp.float32(0.5),
        jax.random.normal(kx, (n, 3)),
        jax.random.normal(kt, (n,)),
    )


def _equations(fn: Callable[..., Any], *args: Any) -> int:
    return len(in_answer(fn, primitives_of, *args, before=(squared_error,)))


@checks(LESSON, "ex_per_example_losses", title="`vmap` a per-example loss")
def _check_per_example_losses(fn: Callable[..., Any]) -> None:
    """Practises `jax.vmap` with `in_axes`: batching some arguments and sharing
    others."""
    w, b, xs, ts = _batch(8)
    want = jnp.stack([squared_error(w, b, x, t) for x, t in zip(xs, ts, strict=True)])
    try:
        got = expect_returned(fn(squared_error, w, b, xs, ts))
    except ValueError as err:
        if not _mapped_a_shared_argument(err):
            raise  # another mistake (`in_axes` of the wrong length, say): `check` says it
        raise Wrong(
            "`vmap` tried to map an argument that has no batch axis (w has shape "
            "(3,), b is a scalar): in `in_axes`, give the shared arguments `None` "
            "and the batched ones 0"
        ) from None
    if np.shape(got) == ():
        raise Wrong(
            "you returned one number; the task asks for one loss per example, "
            "shape (8,) for 8 examples: do not average"
        )
    expect_close(got, want, where="8 examples")
    expect_close(
        under_jit(fn, squared_error, w, b, xs, ts), want, where="8 examples, jitted"
    )
    if _equations(fn, *_batch(16)) > _equations(fn, w, b, xs, ts):
        raise Wrong(
            "right values, but your program grows with the batch: a Python loop "
            "writes one copy per example. `jax.vmap(loss, in_axes=...)` writes one"
        )


def _mapped_a_shared_argument(err: ValueError) -> bool:
    """Whether `vmap` refused to map `w` or `b` (`squared_error`'s shared arguments):
    the scalar `b` has no axis 0, and `w`'s axis 0 is not the batch's."""
    said = str(err)
    return "rank should be at least" in said or bool(
        re.search(r"argument [wb] of type", said)
    )


@checks(LESSON, "ex_cumulative_product", title="a running product with `lax.scan`")
def _check_cumulative_product(fn: Callable[..., Any]) -> None:
    """Practises writing a loop as `lax.scan(step, init, xs)` with a carry, which `grad`
    goes through."""
    xs = jnp.array([1.5, -2.0, 0.5, 3.0, 1.0], jnp.float32)
    got = expect_returned(fn(xs))
    if np.shape(got) == ():
        raise Wrong(
            "you returned one number (the last product?); return every running "
            "product: `scan`'s second output, the stacked `y`s"
        )
    if np.shape(got) == xs.shape and np.allclose(got, 0.0):
        raise Wrong(
            "every running product is 0: a product starts from 1, not 0 "
            "(the carry's initial value)"
        )
    expect_close(
        got, jnp.asarray(np.cumprod(np.asarray(xs))), where="xs=[1.5, -2, 0.5, 3, 1]"
    )
    primitives = set(in_answer(fn, primitives_of, xs))
    if "scan" not in primitives:
        raise Wrong(
            "right values, but there is no `lax.scan` in your program (a Python loop "
            "is unrolled; `jnp.cumprod` skips the exercise): write the step "
            "function and let `lax.scan` run it"
        )
    if "cumprod" in primitives:  # beside a scan: the product is not scanned
        raise Wrong(
            "right values, but `cumprod` computes them, which skips the exercise "
            "(a `lax.scan` beside it does not count): write the step function and let "
            "`lax.scan` run it"
        )
    # reverse mode goes through scan: d/dx_i of sum of the running products
    grad = in_answer(fn, grad_of_sum, xs)
    want = jax.grad(lambda v: jnp.sum(jnp.cumprod(v)))(xs)
    expect_close(grad, want, where="the gradient of the products' sum", rtol=1e-4)


def running_sum(xs: jax.Array) -> Any:
    """The lesson's `cumulative_sum`: a scan carrying the total."""

    def step(total: Any, x: jax.Array) -> Any:
        total = total + x
        return total, total

    return jax.lax.scan(step, 0.0, xs)[1]


def scans(jaxpr: Any) -> int:
    """`scan` equations in a jaxpr, nested ones included (what draw_jaxpr draws as clusters)."""
    found = 0
    for eqn in jaxpr.eqns:
        found += eqn.primitive.name == "scan"
        for param in eqn.params.values():
            inner = getattr(param, "jaxpr", None)
            if inner is not None and hasattr(inner, "eqns"):
                found += scans(inner)
    return found


@checks(LESSON, "ex_count_scans", title="scans in a gradient's drawing")
def _check_count_scans(fn: Callable[..., Any]) -> None:
    """Practises reading `draw_jaxpr` clusters: reverse mode through `scan` is a second,
    reversed `scan`."""
    steps = jnp.arange(5.0)
    answer = expect_pair(
        fn(),
        of="whole numbers: (scans drawn for cumulative_sum, "
        "scans drawn for its gradient)",
    )
    forward = scans(jax.make_jaxpr(running_sum)(steps).jaxpr)
    backward = scans(
        jax.make_jaxpr(jax.grad(lambda v: running_sum(v).sum()))(steps).jaxpr
    )
    if answer[0] != forward:
        raise Wrong(
            f"cumulative_sum's drawing has {forward} scan cluster: one body, traced "
            "once, however long `xs` is"
        )
    if answer[1] == forward:
        raise Wrong(
            "look again at the gradient's drawing: besides the forward scan there is "
            "a second one, labelled `reverse=True`: the backward pass"
        )
    if answer[1] != backward:
        raise Wrong(
            f"the gradient's drawing has {backward} scan clusters, not {answer[1]}: "
            "the forward scan (saving what the backward pass needs) and a reversed one"
        )


# --- ex_histogram: `.at[].add` on an immutable array ------------------------------------


@checks(LESSON, "ex_histogram", title="a histogram with `.at[].add`")
def _check_histogram(fn: Callable[..., Any]) -> None:
    """Practises updating an immutable array with `.at[]`: `.add` accumulates repeated
    indices, and an index out of range is dropped."""
    labels = jnp.array([0, 2, 2, 1, 2, 0], jnp.int32)
    got = fn(labels, 4)
    if np.shape(got) == (4,) and np.allclose(got, [1, 1, 1, 0]):
        raise Wrong(
            "every label seen counts 1: `.set(1)` writes 1 over and over; "
            "`.add(1)` accumulates a label that appears several times"
        )
    expect_close(
        got,
        jnp.array([2, 1, 3, 0]),
        where="labels [0, 2, 2, 1, 2, 0], n = 4",
        check_dtype=False,
    )
    use = first_use(fn, {"bincount": jnp.bincount, "histogram": jnp.histogram})
    if use is not None:
        helper = f" (in `{use.helper}`)" if use.helper else ""
        raise Wrong(
            f"right counts, but `jnp.bincount`/`jnp.histogram`{helper} skip the "
            "exercise: start from `jnp.zeros(n)` and add 1 at every label with "
            "`.at[labels].add(1)`"
        )
    primitives = set(in_answer(fn, primitives_of, labels, after=(4,)))
    if "scatter-add" not in primitives:
        raise Wrong(
            "right counts, but there is no `.at[...].add` in your program (a Python "
            "loop writes one update per label): add at all labels at once"
        )
    expect_close(
        fn(jnp.array([0, 5, 1], jnp.int32), 4),
        jnp.array([1, 1, 0, 0]),
        where="labels [0, 5, 1], n = 4: label 5 is out of range and must be dropped",
        check_dtype=False,
    )
