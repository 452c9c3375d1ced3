"""Autodiff you can see: forward and backward graphs, JVP/VJP, higher order, mode costs.

Every number comes from JAX's own transformations (`jax.vjp`, `jax.jvp`, `jax.grad`,
`jax.jacfwd`, `jax.jacrev`); nothing here re-derives a rule that could disagree with
JAX. The one exception is `Value`/`tape_grad`, a labelled teaching model of a
PyTorch-style tape, checked against `jax.grad`.
"""

from jaxtour.autodiff._adgraph import ADEdge, ADGraph, ADNode
from jaxtour.autodiff._display import Display
from jaxtour.autodiff._gallery import GALLERY
from jaxtour.autodiff._grad_graph import draw_grad, grad_graph
from jaxtour.autodiff._higher import (
    DerivativeRow,
    DerivativeTable,
    derivative_table,
    nested_grads,
    plot_derivatives,
)
from jaxtour.autodiff._jvp_vjp import draw_jvp, draw_vjp, jvp_graph, vjp_graph
from jaxtour.autodiff._modes import RULE, ModeCost, ModeCosts, dense_family, mode_costs
from jaxtour.autodiff._tape import Value, tape_grad

__all__ = [
    "GALLERY",
    "RULE",
    "ADEdge",
    "ADGraph",
    "ADNode",
    "DerivativeRow",
    "DerivativeTable",
    "Display",
    "ModeCost",
    "ModeCosts",
    "Value",
    "dense_family",
    "derivative_table",
    "draw_grad",
    "draw_jvp",
    "draw_vjp",
    "grad_graph",
    "jvp_graph",
    "mode_costs",
    "nested_grads",
    "plot_derivatives",
    "tape_grad",
    "vjp_graph",
]
