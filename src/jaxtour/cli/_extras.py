"""The optional extras: what each holds, whether it is installed, and one-line refusals."""

from __future__ import annotations

import importlib.util
import re
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path

EXTRAS = ("lessons", "notebook", "test")

# What executing lessons or building decks imports (import names), all in the notebook extra.
NOTEBOOK_TOOLS = ("jupytext", "nbformat", "nbconvert", "nbclient", "ipykernel")
DECK_TOOLS = ("jupytext", "nbformat", "nbconvert")
# What the lessons import beyond jaxtour's own dependencies.
LESSON_IMPORTS = ("optax", "flax", "orbax", "grain")

# Used only when neither a checkout's pyproject.toml nor installed metadata declares the extra.
_FALLBACK = {
    "lessons": ["optax", "flax", "orbax-checkpoint", "grain"],
    "notebook": [
        "jupyterlab",
        "jupytext",
        "nbconvert",
        "nbclient",
        "ipykernel",
        "optax",
    ],
    "test": ["pytest", "nbval", "ruff", "playwright"],
}
# An import name whose absence means this extra is missing.
_MODULE_EXTRA = {name: "notebook" for name in (*NOTEBOOK_TOOLS, *LESSON_IMPORTS)}


class MissingExtraError(RuntimeError):
    """A command needs packages of an extra that is not installed (one line: what to run)."""


def install_line(extra: str) -> str:
    """The pip command that adds `extra`."""
    return f'pip install "jaxtour[{extra}]"'


def require(what: str, modules: tuple[str, ...], extra: str = "notebook") -> None:
    """Raise `MissingExtraError` naming `extra` unless every module in `modules` imports."""
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingExtraError(
            f"{what} needs {', '.join(missing)}, from the {extra!r} extra: "
            f"{install_line(extra)}"
        )


def extra_of_module(name: str | None) -> str | None:
    """The extra that provides top-level module `name`, if jaxtour knows one."""
    return _MODULE_EXTRA.get((name or "").partition(".")[0])


def missing_packages(extra: str) -> list[str]:
    """The distributions of `extra` that are not installed (empty: the extra is present)."""
    return [name for name in declared(extra) if not _installed(name)]


def declared(extra: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """The distribution names `extra` lists, with ``jaxtour[other]`` expanded."""
    lines = _requirements()
    names = [_name(line) for line in lines if _extra(line) == extra]
    if not names:
        return list(_FALLBACK.get(extra, []))
    out = []
    for line in (line for line in lines if _extra(line) == extra):
        inner = re.match(r"jaxtour\[([^\]]+)\]", line)
        if inner and inner.group(1) not in seen:
            out += declared(inner.group(1), seen | {extra})
        elif not inner:
            out.append(_name(line))
    return list(dict.fromkeys(out))


def _requirements() -> list[str]:
    """jaxtour's requirement lines: a checkout's pyproject.toml, else installed metadata."""
    pyproject = Path(__file__).resolve().parents[3] / "pyproject.toml"
    if pyproject.is_file():
        import tomllib

        project = tomllib.loads(pyproject.read_text()).get("project", {})
        if project.get("name") == "jaxtour":
            return [
                f'{req}; extra == "{extra}"'
                for extra, reqs in project.get("optional-dependencies", {}).items()
                for req in reqs
            ]
    try:
        return list(requires("jaxtour") or [])
    except PackageNotFoundError:
        return []


def _name(line: str) -> str:
    found = re.match(r"\s*([A-Za-z0-9._-]+)", line)
    return found.group(1) if found else line.strip()


def _extra(line: str) -> str | None:
    found = re.search(r"""extra\s*==\s*["']([^"']+)["']""", line)
    return found.group(1) if found else None


def _installed(name: str) -> bool:
    try:
        version(name)
    except PackageNotFoundError:
        return False
    return True
