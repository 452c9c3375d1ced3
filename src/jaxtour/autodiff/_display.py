"""The display options `draw_grad`, `draw_vjp` and `draw_jvp` share, written once.

Each drawer takes them as ``**display: Unpack[Display]`` (a type checker sees every
option and its type) and `lists_display_options` gives it a signature that names them
one by one, so Jupyter's Shift-Tab and `help` show them with their defaults.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypedDict, TypeVar, get_type_hints

from jaxtour._io_nodes import check_expand
from jaxtour._options import (
    MAX_DEPTH,
    MAX_WIDTH_PX,
    check_count,
    check_max_depth,
    check_max_width,
    check_rankdir,
)

F = TypeVar("F", bound=Callable[..., Any])


class Display(TypedDict, total=False):
    """How an autodiff drawing looks; each is keyword-only, defaults in `DEFAULTS`.

    - `values`: show the numbers at the example point (arrays: type, first entries).
    - `rankdir`: Graphviz direction, "TB" (top to bottom) or "LR".
    - `max_depth`: `jit` calls nested deeper than this are one node each, naming the
      call and its equations (as `draw_jaxpr`; 0 closes every call, None opens all).
    - `max_eqns`: past this many drawn equations, every `jit` call is closed, then
      each line of source is one node (with the residuals it saves); the title says so.
    - `expand_pytrees`: None draws a pytree of more than 8 leaves (an argument, its
      gradient, the output) as one node naming its structure and leaf count; True
      draws every leaf, False folds every pytree of two leaves or more.
    - `max_width`: a picture wider than this many pixels folds a step further (every
      `jit` call closed, then one node per source line), as far as folding goes;
      None draws it as the options above say, however wide.
    """

    values: bool
    rankdir: str
    max_depth: int | None
    max_eqns: int
    expand_pytrees: bool | None
    max_width: int | None


DEFAULTS: Display = {
    "values": True,
    "rankdir": "TB",
    "max_depth": MAX_DEPTH,
    "max_eqns": 150,
    "expand_pytrees": None,
    "max_width": MAX_WIDTH_PX,
}


def lists_display_options(drawer: F) -> F:
    """Replace `drawer`'s ``**display`` by the options it stands for, in its signature."""
    signature = inspect.signature(drawer)
    kept = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    types = get_type_hints(Display)
    options = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=default,
            annotation=types[name],
        )
        for name, default in DEFAULTS.items()
    ]
    drawer.__signature__ = signature.replace(parameters=kept + options)  # type: ignore[attr-defined]
    return drawer


def display_options(who: str, display: Display) -> Display:
    """`display` checked and completed with the defaults, at configure time.

    Raises:
        TypeError: an option `who` does not take (a misspelling, say).
        ValueError: an option's value is out of its range.
    """
    unknown = [name for name in display if name not in DEFAULTS]
    if unknown:
        raise TypeError(
            f"{who}() got an unexpected keyword argument {unknown[0]!r}; its display "
            f"options are {', '.join(DEFAULTS)}."
        )
    options: Display = {**DEFAULTS, **display}
    check_rankdir(options["rankdir"], who)
    check_max_depth(options["max_depth"], who)
    check_count(options["max_eqns"], "max_eqns", who)
    check_expand(options["expand_pytrees"], who)
    check_max_width(options["max_width"], who)
    return options
