"""Higher order: nested `jax.grad`, the table of derivatives, and the classic tanh plot."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxtour import _ir
from jaxtour._report import Report, Reported, Table
from jaxtour.autodiff._args import is_array_like


@dataclass(frozen=True)
class DerivativeRow:
    """The k-th derivative at the example point, and the size of its program (None
    where `jax.make_jaxpr` cannot trace it: Python control flow on x)."""

    order: int
    value: float
    eqns: int | None


@dataclass
class DerivativeTable(Reported):
    """Values of f, f', f'', ... at one point, and how many equations each jaxpr holds.

    `print` shows one row per order; Jupyter shows the same table in HTML.
    """

    name: str
    x: float
    rows: list[DerivativeRow]

    @property
    def values(self) -> list[float]:
        """[f(x), f'(x), f''(x), ...]."""
        return [row.value for row in self.rows]

    @property
    def eqns(self) -> list[int | None]:
        """Eqn counts of the jaxprs of f, grad(f), grad(grad(f)), ... (nested ones
        included); None where f cannot be traced (a Python branch on x)."""
        return [row.eqns for row in self.rows]

    def report(self) -> Report:
        """A row per order: the derivative, its value, its jaxpr's equations (or "not
        counted", and a note why)."""
        rows = [
            [
                f"{_symbol(self.name, r.order)}(x)",
                f"{r.value:.6g}",
                "not counted" if r.eqns is None else str(r.eqns),
            ]
            for r in self.rows
        ]
        head = ["derivative", "value", "equations in its jaxpr"]
        untraced = any(r.eqns is None for r in self.rows)
        return Report(
            f"derivatives of {self.name} at x = {self.x:g}",
            tables=[Table(head, rows, align="lrr")],
            notes=[UNTRACED.format(name=self.name)] if untraced else [],
        )

    def __repr__(self) -> str:
        return (
            f"DerivativeTable({self.name!r} at x = {self.x:g}: "
            f"{', '.join(f'{v:.6g}' for v in self.values)})"
        )


def _symbol(name: str, order: int) -> str:
    return name + ("′" * order if order <= 3 else f"⁽{order}⁾".translate(_SUPERSCRIPT))


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
UNTRACED = (
    "{name} needs Python values of x (an `if` on x, say), so jax.make_jaxpr cannot "
    "trace it and its equations are not counted; the values are jax.grad's, which runs "
    "{name} on the concrete x."
)


def nested_grads(f: Callable, order: int) -> list[Callable]:
    """[f, grad(f), grad(grad(f)), ...] up to `order` nested `jax.grad` calls."""
    fns = [f]
    for _ in range(order):
        fns.append(jax.grad(fns[-1]))
    return fns


def derivative_table(f: Callable, order: int = 4) -> Callable[[float], DerivativeTable]:
    """As nesting `jax.grad` `order` times, but tabulates every level at one point.

    Each row holds the k-th derivative's value and the eqn count of its jaxpr
    (`jax.make_jaxpr(grad(...grad(f)))(x)`), which shows how programs grow. Where f
    branches in Python on x, `jax.grad` still gives the values (it runs f on the
    concrete x) but no jaxpr can be traced: the count is None, and the table says so.

    Args:
        f: a function from a real scalar to a real scalar.
        order: the highest derivative, at least 1.

    Returns:
        A function of the point `x` (a float) returning a `DerivativeTable`.

    Raises:
        ValueError: `order` is not a positive int.
        TypeError: `x` is not a floating-point scalar, or f(x) is not one.

    Example:
        >>> table = derivative_table(lambda x: x**3 + 2*x**2 - 3*x + 8, order=3)(1.0)
        >>> table.values
        [8.0, 4.0, 10.0, 6.0]
    """
    _ir.check_callable(f, "derivative_table")
    _check_order(order, "derivative_table")
    fns = nested_grads(f, order)

    def table(x: Any) -> DerivativeTable:
        _check_scalar_point(x, "derivative_table")
        _check_scalar_value(f(x), "derivative_table")
        rows = [DerivativeRow(k, float(g(x)), _eqns(g, x)) for k, g in enumerate(fns)]
        name = _ir.function_name(f)
        return DerivativeTable("f" if name == "<lambda>" else name, float(x), rows)

    return table


def _check_order(order: Any, who: str) -> None:
    if not isinstance(order, numbers.Integral) or isinstance(order, bool) or order < 1:
        raise ValueError(
            f"{who}: `order` must be a positive int (1 for f′, 4 "
            f"for f′ to f⁽⁴⁾); got {order!r}."
        )


def _eqns(g: Callable, x: Any) -> int | None:
    """Equations in g's jaxpr at x, nested ones included; None where f needs a
    concrete x to be traced."""
    try:
        return _ir.count_eqns(jax.make_jaxpr(g)(x).jaxpr)
    except _ir.CONCRETE as err:
        if not _ir.needs_concrete(err):
            raise
        return None


def _check_scalar_point(x: Any, who: str) -> None:
    if not is_array_like(x) or not jnp.issubdtype(jnp.result_type(x), jnp.floating):
        raise TypeError(
            f"{who} needs the point x to be a real number such as 1.0 (floats: "
            f"gradients need them); got {_ir.describe(x)}."
        )
    if np.ndim(x) != 0:
        raise TypeError(
            f"{who} evaluates derivatives of a function of one real number; x "
            f"has shape {np.shape(x)}. Pass a float such as 1.0 (for arrays, "
            "use jax.jacfwd or jax.hessian)."
        )


def _check_scalar_value(y: Any, who: str) -> None:
    """f(x) must be one real number, as nested `jax.grad` asks of f."""
    if not is_array_like(y) or np.ndim(y) != 0 or not _is_real(y):
        got = _ir.type_str(y) if hasattr(y, "dtype") else _ir.describe(y)
        raise TypeError(
            f"{who} needs f to return one real floating-point number, as nested "
            f"jax.grad does; f(x) returned {got}. Reduce an array to one float, "
            f"e.g. {who}(lambda x: f(x).sum()) or f(x)[0]."
        )


def _is_real(y: Any) -> bool:
    return bool(jnp.issubdtype(jnp.result_type(y), jnp.floating))


def plot_derivatives(
    f: Callable = jnp.tanh, order: int = 4, xs: Any = None, ax: Any = None
) -> Any:
    """The classic plot: `f` (tanh by default) and its first `order` derivatives.

    Every curve is ``jax.vmap`` of nested `jax.grad` over `xs`: no formulas involved.

    Args:
        f: a function from a real scalar to a real scalar.
        order: how many derivatives to draw besides `f`.
        xs: the points, by default 401 points on [-7, 7].
        ax: a Matplotlib Axes to draw on; a new figure when None.

    Returns:
        The Matplotlib Axes: one line per derivative, labelled ``f``, ``f′``, ...

    Raises:
        ValueError: `order` is not a positive int, or `xs` is not one line of points.
    """
    _check_order(order, "plot_derivatives")
    import matplotlib.pyplot as plt

    xs = (
        jnp.linspace(-7.0, 7.0, 401)
        if xs is None
        else jnp.asarray(xs, dtype=jnp.float32)
    )
    if xs.ndim != 1:  # each curve maps a scalar f's derivatives over a line of points
        raise ValueError(
            "plot_derivatives: `xs` must be a 1-D array of points, as each curve is "
            f"jax.vmap of a nested jax.grad over it (f takes a scalar); got "
            f"{_ir.type_str(xs)}. Pass e.g. jnp.linspace(-7.0, 7.0, 401), or xs.ravel()."
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.5))
    name = _ir.function_name(f)
    name = "f" if name == "<lambda>" else name
    for k, g in enumerate(nested_grads(f, order)):
        ys = jax.vmap(g)(xs)
        ax.plot(
            np.asarray(xs),
            np.asarray(ys),
            label=f"{_symbol(name, k)}(x)",
            lw=2.2 - 0.3 * k,
        )
    ax.axhline(0, color="#888888", lw=0.8)
    ax.set(
        xlabel="x",
        title=f"{name} and its first {order} derivatives, by nested jax.grad",
    )
    ax.legend(loc="upper left", frameon=False)
    return ax
