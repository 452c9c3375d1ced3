"""The house's floor plan, read from every module's imports (ast, nothing imported).

- every room (a package of jaxtour: `_ir`, `viz`, `mlp`, `cli`, ...) keeps its private
  modules private: no module outside it imports one (`jaxtour.mlp._train`, `from
  jaxtour.viz import _gallery`), nor names one in a string that is imported dynamically
  ("jaxtour.viz._gallery:ai_stack", `importlib.import_module`); what others need is
  exported from the room's `__init__`, its front door;
- no import circle between modules, nor between the top-level packages;
- no import up a floor: curriculum (explorer, exercises, slides, cli, the lesson
  machinery) -> models (mlp, data, launch) -> lenses (viz, autodiff, tracing, cost) ->
  base (`_ir`, `_diagram`, `_style`, `paths`, ...); the package's face, `jaxtour`
  itself, stands above them all and nothing imports it;
- `mlp/` holds the model and its training: no module there downloads data or starts
  processes (that is `jaxtour.data`'s and `jaxtour.launch`'s work).

Every import counts, at the top of a module, inside a function or under
`TYPE_CHECKING`: a deferred import is still an arrow in the plan. The checks run on a
tiny planted tree too, so that a checker that finds nothing cannot pass unnoticed.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import NamedTuple

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

CURRICULUM = {"explorer", "exercises", "slides", "cli", "lesson", "_lessons"}
CURRICULUM |= {"_notebooks", "__main__"}
MODELS = {"mlp", "data", "launch"}
LENSES = {"viz", "autodiff", "tracing", "cost"}
FACE = 4  # the root package `jaxtour`: its __init__ re-exports from every floor
# What a model module may not import: downloading and process launching live elsewhere.
NOT_IN_MLP = ("urllib", "http", "socket", "subprocess", "multiprocessing", "signal")
NOT_IN_MLP += ("jax.distributed", "jaxtour.data._download", "jaxtour.data._http")
NOT_IN_MLP += ("jaxtour.launch",)


def floor(module: str) -> int:
    """0 base, 1 lenses, 2 models, 3 curriculum, 4 the package's face."""
    parts = module.split(".")
    if len(parts) == 1:
        return FACE
    top = parts[1]
    return 3 if top in CURRICULUM else 2 if top in MODELS else 1 if top in LENSES else 0


def modules(src: Path, package: str = "jaxtour") -> dict[str, Path]:
    """Every module of `package` under `src`, by dotted name (a package by its own)."""
    found = {}
    for path in sorted((src / package).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


class Parsed(NamedTuple):
    """What the checks read off a module: its imports, and its strings that are not
    docstrings."""

    imports: list[ast.Import | ast.ImportFrom]
    strings: list[ast.Constant]


def parse(path: Path) -> Parsed:
    """`path`'s imports and strings, from one walk of its syntax tree per text (the checks
    read each module several times)."""
    return _parse(path.read_text(encoding="utf-8"))


@functools.cache
def _parse(text: str) -> Parsed:
    nodes = list(ast.walk(ast.parse(text)))
    docstrings = {
        id(node.body[0].value)
        for node in nodes
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return Parsed(
        [n for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)],
        [
            n
            for n in nodes
            if isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and id(n) not in docstrings
        ],
    )


def imports(name: str, path: Path, known: dict[str, Path]) -> set[tuple[str, int]]:
    """(imported name, line) for every import in the module, relative ones resolved.

    `from a.b import c` counts as an import of `a.b.c` when that is a module, else of
    `a.b`; names outside `known`'s packages are kept as written (`urllib.request`).
    """
    is_package = path.name == "__init__.py"
    found = set()
    for node in parse(path).imports:
        if isinstance(node, ast.Import):
            found |= {(alias.name, node.lineno) for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name if is_package else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    here = here.rpartition(".")[0]
                base = f"{here}.{base}" if base else here
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add((full if full in known else base, node.lineno))
    return found


def owner(imported: str, known: dict[str, Path]) -> str | None:
    """The module of ours that an imported name lands in (None: not ours)."""
    while imported and imported not in known:
        imported = imported.rpartition(".")[0]
    return imported or None


def graph(src: Path) -> dict[str, dict[str, int]]:
    """module -> {module of ours it imports: first line that does}."""
    known = modules(src)
    edges: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        edges[name] = {}
        for imported, line in sorted(imports(name, path, known)):
            target = owner(imported, known)
            if target is not None and target != name:
                edges[name].setdefault(target, line)
    return edges


def circles(edges: dict[str, set[str]] | dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def packages(edges: dict[str, dict[str, int]]) -> dict[str, set[str]]:
    """The same arrows between top-level packages (`jaxtour.viz`, `jaxtour._ir`, ...)."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: dict[str, set[str]] = {}
    for source, targets in edges.items():
        out.setdefault(top(source), set())
        out[top(source)] |= {top(t) for t in targets if top(t) != top(source)}
    return out


def room_of(module: str, known: dict[str, Path]) -> str | None:
    """The room a module is in: its top-level package (`viz`), or None (the root's own
    modules, `jaxtour._diagram`, and the face `jaxtour`)."""
    parts = module.split(".")
    if len(parts) < 2 or known.get(".".join(parts[:2]), Path()).name != "__init__.py":
        return None
    return parts[1]


def private_room(module: str, known: dict[str, Path]) -> str | None:
    """The room whose private module `module` is (`jaxtour.mlp._train` -> `mlp`)."""
    room = room_of(module, known)
    inside = module.split(".")[2:]
    is_private = any(p.startswith("_") and not p.startswith("__") for p in inside)
    return room if room is not None and is_private else None


PRIVATE_NAME = re.compile(r"\bjaxtour(?:\.\w+)+")


def named_modules(path: Path, known: dict[str, Path]) -> set[tuple[str, int]]:
    """(module of ours, line) for each dotted name of one in a string that is not a
    docstring: "jaxtour.viz._gallery:ai_stack", "python -m jaxtour.launch._worker"."""
    found = set()
    for node in parse(path).strings:
        for match in PRIVATE_NAME.finditer(node.value):
            target = owner(match.group(0), known)
            if target is not None:
                found.add((target, node.lineno))
    return found


def private_reaches(src: Path) -> list[str]:
    """Every import of, or string naming, another room's private module."""
    known = modules(src)
    edges = graph(src)
    found = []
    for source, targets in sorted(edges.items()):
        for target, line in sorted(targets.items()):
            room = private_room(target, known)
            if room is not None and room != room_of(source, known):
                found.append(
                    f"{source}:{line} imports {target}: a private module of {room} "
                    f"(use jaxtour.{room})"
                )
    for source, path in sorted(known.items()):
        for target, line in sorted(named_modules(path, known)):
            room = private_room(target, known)
            if room is not None and room != room_of(source, known):
                found.append(
                    f"{source}:{line} names {target} in a string: a private module of "
                    f"{room} (use jaxtour.{room})"
                )
    return found


def violations(src: Path) -> list[str]:
    """Every breach of the floor plan, one line each (empty: the house is in order)."""
    known = modules(src)
    edges = graph(src)
    found = private_reaches(src)
    for source, targets in sorted(edges.items()):
        for target, line in sorted(targets.items()):
            where = f"{source}:{line} imports {target}"
            if floor(target) > floor(source):
                found.append(
                    f"{where}: up a floor ({floor(source)} -> {floor(target)})"
                )
    for component in circles(edges):
        found.append("import circle: " + " <-> ".join(component))
    for component in circles(packages(edges)):
        found.append("package circle: " + " <-> ".join(component))
    for name, path in sorted(known.items()):
        if name.startswith("jaxtour.mlp"):
            for imported, line in sorted(imports(name, path, known)):
                if any(
                    imported == n or imported.startswith(n + ".") for n in NOT_IN_MLP
                ):
                    found.append(
                        f"{name}:{line} imports {imported}: mlp/ neither downloads "
                        "nor launches (jaxtour.data, jaxtour.launch do)"
                    )
    return found


def test_the_house_keeps_its_floor_plan():
    assert violations(SRC) == []


def test_the_checker_reads_the_real_house():
    edges = graph(SRC)
    assert len(edges) > 100
    assert "jaxtour._ir" in edges["jaxtour.cost._table"]
    assert "jaxtour.explorer._request" in edges["jaxtour.explorer._step_through"]


def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "jaxtour" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


CLEAN = {
    "__init__.py": "from jaxtour.explorer import explore\n",
    "_diagram.py": "class Diagram: ...\n",
    "_ir/__init__.py": "from jaxtour._ir._jaxpr import walk\n",
    "_ir/_jaxpr.py": "def walk(): ...\n",
    "viz/__init__.py": "from jaxtour import _ir\nfrom jaxtour.viz._gallery import GALLERY\n",
    "viz/_gallery.py": "from jaxtour._diagram import Diagram\nGALLERY = {}\n",
    "cli/__init__.py": 'COMMANDS = {"tour": "jaxtour.cli._tour"}\n',
    "cli/_tour.py": '"""Draws `jaxtour.viz._gallery`\'s pictures."""\n'
    "from jaxtour.viz import GALLERY\n",
    "mlp/__init__.py": "from jaxtour.viz import draw\nimport numpy\n",
    "explorer/__init__.py": "from . import _views\n",
    "explorer/_views.py": "def f():\n    from jaxtour.mlp import train\n",
}


def test_a_clean_planted_house_passes(tmp_path):
    assert violations(_plant(tmp_path, CLEAN)) == []


def test_no_room_reaches_into_another_s_private_modules():
    assert private_reaches(SRC) == []
    known = modules(SRC)  # the rule covers every room, not only _ir
    rooms = {room_of(name, known) for name in known} - {None}
    assert {"_ir", "viz", "mlp", "launch", "slides", "cli", "lesson"} <= rooms
    assert room_of("jaxtour._diagram", known) is None  # the root's own: shared base


@pytest.mark.parametrize(
    ("planted", "expected"),
    [
        (
            {"viz/_draw.py": "from jaxtour._ir._jaxpr import walk\n"},
            "jaxtour.viz._draw:1 imports jaxtour._ir._jaxpr: a private module of _ir "
            "(use jaxtour._ir)",
        ),
        (
            {
                "cli/_train.py": "def f():\n    from jaxtour.viz._gallery import GALLERY\n"
            },
            "jaxtour.cli._train:2 imports jaxtour.viz._gallery: a private module of viz "
            "(use jaxtour.viz)",
        ),
        (
            {"cli/_steps.py": "from jaxtour.viz import _gallery\n"},
            "jaxtour.cli._steps:1 imports jaxtour.viz._gallery: a private module of viz "
            "(use jaxtour.viz)",
        ),
        (
            {"cli/_steps.py": 'STEPS = [("ai", "jaxtour.viz._gallery:ai_stack")]\n'},
            "jaxtour.cli._steps:1 names jaxtour.viz._gallery in a string: a private "
            "module of viz (use jaxtour.viz)",
        ),
        (
            {"__init__.py": "from jaxtour.viz._gallery import GALLERY\n"},
            "jaxtour:1 imports jaxtour.viz._gallery: a private module of viz "
            "(use jaxtour.viz)",
        ),
        (
            {"viz/_draw.py": "import os\n\ndef f():\n    from jaxtour.mlp import x\n"},
            "jaxtour.viz._draw:4 imports jaxtour.mlp: up a floor (1 -> 2)",
        ),
        (
            {"cli.py": "from jaxtour import __version__\n"},
            "jaxtour.cli:1 imports jaxtour: up a floor (3 -> 4)",
        ),
        (
            {
                "viz/_a.py": "from jaxtour.viz._b import B\n",
                "viz/_b.py": "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from ._a import A\n",
            },
            "import circle: jaxtour.viz._a <-> jaxtour.viz._b",
        ),
        (
            {"data.py": "from jaxtour.mlp import Params\n"},
            "package circle: jaxtour.data <-> jaxtour.mlp",
        ),
        (
            {"mlp/_fetch.py": "import urllib.request\n"},
            "jaxtour.mlp._fetch:1 imports urllib.request: mlp/ neither downloads nor "
            "launches (jaxtour.data, jaxtour.launch do)",
        ),
    ],
    ids=[
        "private-ir",
        "private-room",
        "private-module-imported-from",
        "private-string",
        "private-from-face",
        "upward",
        "face",
        "circle",
        "package-circle",
        "mlp-download",
    ],
)
def test_a_planted_violation_is_named(tmp_path, planted, expected):
    files = dict(CLEAN)
    if "data.py" in planted:
        files["mlp/__init__.py"] += "from jaxtour.data import load\n"
    found = violations(_plant(tmp_path, files | planted))
    assert expected in found


def _internal_uses(tree: ast.AST) -> list[str]:
    """`jax._src…`/`jax.core…` as imported or reached as an attribute (`jax.core.Tracer`)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            found.append(f"{node.value.id}.{node.attr}")
    return [n for n in found if n.startswith(("jax._src", "jax.core"))]


def test_no_module_reaches_into_jax_internals():
    """Public JAX only, in every room: jax._src and jax.core change between releases."""
    assert _internal_uses(ast.parse("import jax\nx = jax.core.Tracer")) == ["jax.core"]
    breaches = [
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted((SRC / "jaxtour").rglob("*.py"))
        for name in _internal_uses(ast.parse(path.read_text()))
    ]
    assert breaches == []
