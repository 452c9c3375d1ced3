"""The lesson lint: what every lesson's cells must hold, whatever it teaches.

Each rule returns the problems it finds as sentences saying where and what to do; an
empty list means the lesson keeps the rule. `lint` runs them all.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from jaxtour.lesson._kinds import Kind, kind_of

SUMMARY_OPENING = "In this notebook we:"


def python_of(code: str) -> str:
    """A code cell's text as plain Python: IPython magics (``%pip``, ``!ls``) become
    calls, and a cell magic's body (``%%time``) is read as the Python it runs."""
    from IPython.core.inputtransformer2 import TransformerManager

    if code.lstrip().startswith("%%"):
        code = code.lstrip().partition("\n")[2]
    return TransformerManager().transform_cell(code)


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def names(code: str) -> tuple[set[str], set[str]]:
    """(names `code` binds at its top level, names it reads that it never binds).

    Names bound inside a function, a lambda or a comprehension stay there (Python scopes
    them), so they are not top-level bindings.

    Example:
        >>> bound, free = names("def f(x):\\n    return x + y\\nz = [f(i) for i in w]")
        >>> sorted(bound), sorted(free)
        (['f', 'z'], ['w', 'y'])
    """
    tree = ast.parse(python_of(code))
    everywhere = _bound(ast.walk(tree))
    top = _bound(_top_level(tree))
    read = {
        n.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return top, read - everywhere


def _top_level(tree: ast.AST) -> Iterator[Any]:
    """The nodes of `tree` outside any nested scope (a def's name is outside its body)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))


def _bound(nodes: Any) -> set[str]:
    bound = set()
    for node in nodes:
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).partition(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


def check_names_taught(notebook: Any, name: str = "the lesson") -> list[str]:
    """A check cell defines no name that a teaching cell reads.

    Decks, the HTML export and the student's notebook leave check cells out: a name
    defined only there is undefined in every view a reader sees.
    """
    in_checks: dict[str, str] = {}
    taught: set[str] = set()  # bound by a cell every view keeps some of
    read_elsewhere: set[str] = set()
    for cell in notebook.cells:
        if cell.get("cell_type") != "code":
            continue
        bound, free = names(cell.source)
        if kind_of(cell) is Kind.CHECK:
            in_checks.update(dict.fromkeys(bound - in_checks.keys(), _first_line(cell)))
        else:
            taught |= bound
            read_elsewhere |= free
    return [
        f"{name}: the check cell {in_checks[n]!r} defines `{n}`, which a teaching cell "
        "uses; views without check cells would not define it. Move the definition into "
        "the teaching cell, or rename it in the check cell."
        for n in sorted((in_checks.keys() & read_elsewhere) - taught)
    ]


def opening_and_summary(notebook: Any, name: str = "the lesson") -> list[str]:
    """It opens with markdown (what you will see), closes with the summary, and its first
    code cell is the set-up cell."""
    cells = notebook.cells
    problems = []
    if not cells or cells[0].cell_type != "markdown":
        problems.append(
            f"{name}: the first cell must be markdown saying what you will see."
        )
    if not cells or SUMMARY_OPENING not in cells[-1].get("source", ""):
        problems.append(
            f"{name}: the last cell must be the summary, {SUMMARY_OPENING!r} ..."
        )
    first_code = next((c for c in cells if c.cell_type == "code"), None)
    if first_code is not None and kind_of(first_code) is not Kind.SETUP:
        problems.append(
            f"{name}: the first code cell must be the set-up cell, tagged `setup`."
        )
    return problems


def lint(notebook: Any, name: str = "the lesson") -> list[str]:
    """Every problem the lesson lint finds in `notebook` (empty when it keeps every rule)."""
    return opening_and_summary(notebook, name) + check_names_taught(notebook, name)


def _first_line(cell: Any) -> str:
    return next((li for li in cell.source.splitlines() if li.strip()), "")
