"""What an assignment carries over from its lesson, so it runs top to bottom by itself.

The lesson's imports; each exercise's task; the drawings its text points at ("in the
picture above"); and every definition those need, found by name and taken in the
lesson's order: the functions and classes, and the values (`A = jnp.array(...)`) they
read, each the last one the lesson made before it is read.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from jaxtour import lesson

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POINTS_AT_A_DRAWING = re.compile(r"\b(picture|drawing|diagram)s? above", re.IGNORECASE)
_ALWAYS = (
    "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jax import lax\n\n"
    "from jaxtour.exercises import check"
)


@dataclass(frozen=True)
class _Statement:
    position: int  # in the lesson's order
    code: str
    defines: frozenset[str]
    is_function: bool  # a `def` or a `class`, not a value


def tasks(cells: Any) -> dict[str, str]:
    """Each exercise's task: the markdown cell tagged `exercise` before its stub."""
    found: dict[str, str] = {}
    pending = None
    for cell in cells:
        kind = lesson.kind_of(cell)
        if kind is lesson.Kind.TASK:
            pending = cell.source
        elif kind is lesson.Kind.STUB and pending is not None:
            for name in lesson.defined_functions(cell.source):
                found[name] = pending
    return found


def imports(cells: Any) -> str:
    """The imports the lesson makes at the top level of its cells, after the usual ones,
    and the JAX settings its set-up makes (`jax.config.update(...)`: 8 CPU devices, say),
    which must come before JAX computes anything."""
    lines = [_ALWAYS]
    settings = []
    for index, node, text in _teaching_code(cells):
        segment = ast.get_source_segment(text, node) or ""
        if isinstance(node, ast.Import | ast.ImportFrom):
            if segment not in "\n".join(lines):
                lines.append(segment)
        elif lesson.kind_of(cells[index]) is lesson.Kind.SETUP and _configures(node):
            settings.append(segment)
    return "\n".join(lines) + "".join(f"\n\n{s}" for s in settings)


def _configures(node: ast.stmt) -> bool:
    """Whether `node` calls `jax.config.update` (directly or in a `try`)."""
    return any(
        isinstance(n, ast.Attribute)
        and n.attr == "update"
        and isinstance(n.value, ast.Attribute)
        and n.value.attr == "config"
        for n in ast.walk(node)
    )


def pictures(cells: Any, said: dict[str, str]) -> dict[str, str]:
    """For each exercise whose words (`said`: its task and hints) point at a drawing
    above, the code of the lesson's last drawing (a `draw_…` call) before its task."""
    found = {}
    for name, words in said.items():
        if not _POINTS_AT_A_DRAWING.search(words):
            continue
        drawing = None
        for cell in cells:
            if lesson.kind_of(cell) is lesson.Kind.TASK and name in cell.source:
                break
            if lesson.kind_of(cell) is lesson.Kind.TEACH and _draws(cell.source):
                drawing = cell.source.strip()
        if drawing is not None:
            found[name] = drawing
    return found


def context(cells: Any, words: str, code: str = "") -> str:
    """The functions and classes `words` (tasks, hints) name, the definitions `code`
    (a drawing) reads, and those they read in turn, in the lesson's order. Prose names
    only functions and classes: a word such as "params" is not a request for the
    lesson's trained parameters."""
    statements = _definitions(cells)
    named = set(_NAME.findall(words))
    chosen: dict[int, _Statement] = {}
    wanted = [(n, len(statements)) for n in sorted(lesson.names(code)[1])]
    wanted += [
        (n, len(statements))
        for s in statements
        if s.is_function
        for n in sorted(s.defines & named)
    ]
    while wanted:
        name, before = wanted.pop()
        made = [s for s in statements if name in s.defines]
        earlier = [s for s in made if s.position < before]
        for statement in (earlier or made)[-1:]:
            if statement.position not in chosen:
                chosen[statement.position] = statement
                _, reads = lesson.names(statement.code)
                wanted += [(n, statement.position) for n in sorted(reads)]
    return "\n\n\n".join(chosen[p].code for p in sorted(chosen))


def _definitions(cells: Any) -> list[_Statement]:
    found = []
    for position, (_, node, text) in enumerate(_teaching_code(cells)):
        names = _defined_by(node)
        if names:
            code = ast.get_source_segment(text, node) or ""
            function = isinstance(node, ast.FunctionDef | ast.ClassDef)
            found.append(_Statement(position, code, frozenset(names), function))
    return found


def _defined_by(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.If):  # `if ...: devices = a` `else: devices = b`
        return set().union(*(_defined_by(n) for n in [*node.body, *node.orelse]))
    targets = (
        node.targets
        if isinstance(node, ast.Assign)
        else [node.target]
        if isinstance(node, ast.AnnAssign) and node.value is not None
        else []
    )
    names = set()
    for target in targets:
        elements = target.elts if isinstance(target, ast.Tuple) else [target]
        if not all(isinstance(e, ast.Name) for e in elements):
            return set()  # `x[0] = ...`, `a.b = ...`: changes a value, defines none
        names |= {e.id for e in elements if isinstance(e, ast.Name)}
    return names


def _draws(source: str) -> bool:
    try:
        tree = ast.parse(lesson.python_of(source))
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.Name) and node.id.startswith("draw_")
        for node in ast.walk(tree)
    )


def _teaching_code(cells: Any) -> list[tuple[int, ast.stmt, str]]:
    teaching = {lesson.Kind.TEACH, lesson.Kind.SETUP}
    found: list[tuple[int, ast.stmt, str]] = []
    for index, cell in enumerate(cells):
        if cell.cell_type != "code" or lesson.kind_of(cell) not in teaching:
            continue
        code = lesson.python_of(cell.source)  # a `%pip` line becomes a call
        try:
            found += [(index, node, code) for node in ast.parse(code).body]
        except SyntaxError:  # not Python, even read as IPython: nothing to carry
            continue
    return found
