"""What the explorer's panel shows, as HTML: a picture, a text, a table, or a problem.

The same HTML is the live panel's content and, with every other view (`_save.views`),
what exported HTML shows when no kernel is running.
"""

from __future__ import annotations

import re
from html import escape
from typing import Any, NamedTuple

from jaxtour import _table
from jaxtour.explorer._request import Shown, Table, Text

_PROLOGUE = re.compile(
    r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?(<!--.*?-->\s*)*", re.S
)
_BOX = "max-height:70vh;overflow:auto;border:1px solid #e2e8f0;border-radius:6px;padding:6px"


class Problem(NamedTuple):
    """Why a combination could not be drawn, in words, and what to try instead."""

    title: str
    message: str
    hint: str


# (pattern in the error message, what to try); the first match wins.
_HINTS = (
    (
        r"scalar",
        "grad differentiates a function that returns one real number. Untick grad "
        "and tick jvp (forward mode takes any output shape), or pick the autodiff "
        "graph view, which draws a VJP for any output.",
    ),
    (
        r"ShapeDtypeStruct",
        "This view runs the function on the example's values (as vmap's batch is made "
        "of them), and a jax.ShapeDtypeStruct is a shape with no values: pass an array "
        "(jnp.zeros(shape, dtype)), or pick a view that reads the program alone (jaxpr, "
        "StableHLO, compiled HLO, cost).",
    ),
    (
        r"Non-hashable static arguments",
        "Your function's own jax.jit holds an argument static (static_argnums), and this "
        "transformation passes it a traced value: pass that argument to explore by "
        "keyword, explore(f, x, n=3), and it is held fixed outside every transformation.",
    ),
    (
        r"PRNG key|key<",
        "grad (and the autodiff graph's reverse mode) differentiates with respect to "
        "the first argument, and here it is a PRNG key, which has no derivative: explore "
        "a function that takes the key last, explore(lambda x, key: f(key, x), x, key), "
        "or tick jvp instead of grad (keys get no tangent).",
    ),
    (
        r"real- or complex-valued inputs|floating-point|float0|integer",
        "Derivatives need floating-point inputs, and this example takes integers: untick "
        "grad and jvp and pick a view other than the autodiff graph, or pass floats (1.0, "
        "not 1).",
    ),
    (
        r"No module named",
        "This view needs a part of jaxtour that is not installed here.",
    ),
)


def explain(err: BaseException, label: str, view: str) -> Problem:
    """A `Problem` for an exception raised while drawing `view` of `label`."""
    message = f"{type(err).__name__}: {err}".strip()
    if len(message) > 800:
        message = message[:800] + " …"
    hint = next(
        (h for pattern, h in _HINTS if re.search(pattern, message)),
        "Change a transformation or pick another view.",
    )
    return Problem(f"The {view} of {label} cannot be drawn", message, hint)


def svg_body(svg: str) -> str:
    """`svg` without its XML prologue, doctype and comments, ready to inline in HTML.

    Scaled down to fit the panel, whichever of its width or height runs out first: a
    picture that scrolled inside its panel would hide part of itself on a slide.
    """
    svg = _PROLOGUE.sub("", svg, count=1)
    fit = "max-width:100%;max-height:calc(70vh - 16px);width:auto;height:auto"
    return svg.replace("<svg ", f'<svg style="{fit}" ', 1)


def body(result: Any) -> str:
    """The HTML of a view's result, without header."""
    if isinstance(result, Problem):
        return (
            '<div class="jaxtour-problem" style="border-left:4px solid #c0392b;'
            'background:#fdecea;padding:8px 12px;border-radius:4px">'
            f"<b>{escape(result.title)}</b><pre style='white-space:pre-wrap'>"
            f"{escape(result.message)}</pre><div>{escape(result.hint)}</div></div>"
        )
    if isinstance(result, Text):
        style = f"{_BOX};font-size:12px"
        return f'<pre class="jaxtour-text" style="{style}">{escape(result.body)}</pre>'
    if isinstance(result, Table):
        table = _table.Table(["figure", "value"], result.rows, align="lr")
        return f'<div class="jaxtour-table">{table.html()}</div>'
    if hasattr(result, "svg"):  # a Diagram
        return f'<div class="jaxtour-diagram" style="{_BOX}">{svg_body(result.svg())}</div>'
    if hasattr(result, "_repr_html_"):
        return result._repr_html_()
    return f"<pre>{escape(repr(result))}</pre>"


def panel(shown: Shown | Problem) -> str:
    """Header (the title and the code that makes the same thing), then the result."""
    if isinstance(shown, Problem):
        return body(shown)
    code = f'<code style="white-space:pre-wrap">{escape(shown.code)}</code>'
    head = f'<div style="margin:2px 0 6px">{code}</div>'
    if isinstance(
        shown.result, Text | Table
    ):  # pictures and tables carry their own title
        head = f'<div class="jaxtour-title"><b>{escape(shown.result.title)}</b></div>{head}'
    return head + body(shown.result)
