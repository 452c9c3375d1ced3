"""A teaching model, not JAX: the dynamic-graph, per-value tape of PyTorch or micrograd.

Every arithmetic operation on a `Value` records a node (its inputs and local
derivatives) while the Python runs; `backward()` walks that tape in reverse. The tape is
rebuilt on every call and walked by the Python interpreter. JAX under `jit` traces `f`
once to a jaxpr, transforms that program (`grad`) and compiles it: later calls run
compiled code with no tape at all. Without `jit`, `jax.grad` traces `f` on every call.
`tape_grad` is checked against `jax.grad` in tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np


class Value:
    """A scalar that remembers how it was computed (one node of the tape).

    Example:
        >>> x = Value(1.0)
        >>> y = x**3 + 2 * x**2 - 3 * x + 8
        >>> y.backward()
        >>> y.data, x.grad
        (8.0, 4.0)
    """

    def __init__(
        self, data: float, parents: tuple = (), local: tuple = (), op: str = ""
    ):
        self.data = float(data)
        self.grad = 0.0
        self.parents = parents  # the Values this one was computed from
        self.local = local  # d(self)/d(parent), one number per parent
        self.op = op

    def __repr__(self) -> str:
        op = f", op={self.op}" if self.op else ""
        return f"Value({self.data:.4g}, grad={self.grad:.4g}{op})"

    @staticmethod
    def lift(other: Any) -> Value:
        return other if isinstance(other, Value) else Value(other)

    def __add__(self, other: Any) -> Value:
        other = Value.lift(other)
        return Value(self.data + other.data, (self, other), (1.0, 1.0), "+")

    def __mul__(self, other: Any) -> Value:
        other = Value.lift(other)  # d(ab)/da = b, d(ab)/db = a
        return Value(
            self.data * other.data, (self, other), (other.data, self.data), "*"
        )

    def __pow__(self, k: Any) -> Value:
        if isinstance(k, Value):
            return self._pow_value(k)
        # d(x^k)/dx = k x^(k-1); an integer k = 0 makes a constant: 0 (JAX's integer_pow)
        local = 0.0 if k == 0 and isinstance(k, int) else k * _pow(self.data, k - 1)
        return Value(_pow(self.data, k), (self,), (local,), f"**{k}")

    def _pow_value(self, k: Value) -> Value:
        # d(a^b)/da = b a^(b-1), d(a^b)/db = a^b ln a, as JAX's pow takes them for a
        # float b: no special case for b (0 * 0^-1 is nan at a = b = 0), and ln 1 for
        # ln 0 (so 0 at a = 0, nan where a^b is inf); ln of a negative base is nan
        out = _pow(self.data, k.data)
        da = k.data * _pow(self.data, k.data - 1)
        with np.errstate(invalid="ignore"):
            db = out * float(np.log(np.float64(self.data if self.data != 0 else 1.0)))
        return Value(out, (self, k), (da, db), "**")

    def __rpow__(self, base: Any) -> Value:
        return Value.lift(base) ** self

    # Python control flow reads the value, as on a PyTorch tensor: `if x > 0:` branches
    # on this run's number, and the tape records the branch taken.
    def __lt__(self, other: Any) -> bool:
        return self.data < Value.lift(other).data

    def __le__(self, other: Any) -> bool:
        return self.data <= Value.lift(other).data

    def __gt__(self, other: Any) -> bool:
        return self.data > Value.lift(other).data

    def __ge__(self, other: Any) -> bool:
        return self.data >= Value.lift(other).data

    def __neg__(self) -> Value:
        return self * -1.0

    def __sub__(self, other: Any) -> Value:
        return self + (-Value.lift(other))

    def __truediv__(self, other: Any) -> Value:
        return self * Value.lift(other) ** -1

    __radd__ = __add__
    __rmul__ = __mul__

    def __rsub__(self, other: Any) -> Value:
        return Value.lift(other) - self

    def __rtruediv__(self, other: Any) -> Value:
        return Value.lift(other) / self

    def sin(self) -> Value:
        return Value(math.sin(self.data), (self,), (math.cos(self.data),), "sin")

    def exp(self) -> Value:
        e = math.exp(self.data)
        return Value(e, (self,), (e,), "exp")

    def tanh(self) -> Value:
        t = math.tanh(self.data)  # d(tanh x)/dx = 1 - tanh² x
        return Value(t, (self,), (1.0 - t * t,), "tanh")

    def tape(self) -> list[Value]:
        """Every node that led to this one, inputs first (a topological order)."""
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
            elif id(node) not in seen:
                seen.add(id(node))
                stack.append((node, True))
                stack.extend((p, False) for p in node.parents)
        return order

    def backward(self) -> None:
        """Reverse sweep over the tape: each node passes grad · local derivative back."""
        self.sweep(self.tape())

    def sweep(self, tape: list[Value]) -> None:
        """`backward` over a `tape` already walked from this node."""
        self.grad = 1.0
        for node in reversed(tape):
            for parent, local in zip(node.parents, node.local, strict=True):
                parent.grad += local * node.grad


def _pow(x: float, k: float) -> float:
    """x**k as IEEE floats (and JAX) give it: 0.0**-1 is inf and (-2.0)**0.5 is nan,
    where Python raises ZeroDivisionError or returns a complex number."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(x) ** k)


def tape_grad(f: Callable, *xs: float) -> tuple[float, list[float], int]:
    """Record `f` on a fresh tape and sweep it back: (f(x), [df/dx_i], tape length).

    Example:
        >>> tape_grad(lambda x: x**3 + 2 * x**2 - 3 * x + 8, 1.0)
        (8.0, [4.0], 13)
    """
    inputs = [Value(x) for x in xs]
    out = Value.lift(f(*inputs))
    tape = out.tape()  # walked once, as a tape-based framework walks it
    out.sweep(tape)
    return out.data, [x.grad for x in inputs], len(tape)
