"""A lesson's checks: asserts live in cells tagged ``check``, and their count never falls.

Every claim a lesson makes is asserted in a ``check`` cell (decks and exported HTML leave those
out; Jupyter shows them collapsed). This test counts the ``assert`` statements in each
lesson's check cells and compares the count with the floor recorded in
``tests/check_floor.json`` (``{"NN_topic": minimum count}``): a lesson whose count falls
below its floor lost a check. It also fails when any other code cell holds an ``assert``:
the code a student reads has none.

After adding checks, raise the floors to today's counts (never lowers one)::

    python tests/test_checks.py --raise

Lowering a floor is a deliberate edit of the JSON file, in a commit that says which check
went and why.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import pytest

from jaxtour.lesson import Kind, kind_of

ROOT = Path(__file__).resolve().parent.parent
FLOOR = Path(__file__).resolve().parent / "check_floor.json"
UPDATE = "python tests/test_checks.py --raise"


def python_of(cell_source: str) -> str:
    """A code cell's text as plain Python: IPython magics (``%pip``, ``!ls``) become calls,
    and a cell magic's body (``%%time``, ``%%capture``) is read as the Python it runs."""
    from IPython.core.inputtransformer2 import TransformerManager

    if cell_source.lstrip().startswith("%%"):
        cell_source = cell_source.lstrip().partition("\n")[2]
    return TransformerManager().transform_cell(cell_source)


def count_asserts(cell_source: str) -> int:
    """How many ``assert`` statements a code cell holds (nested ones included).

    Example:
        >>> count_asserts("x = 1\\nassert x == 1\\nfor i in range(3):\\n    assert i < 3")
        2
        >>> count_asserts("# assert in a comment\\nprint('assert')")
        0
    """
    tree = ast.parse(python_of(cell_source))
    return sum(isinstance(node, ast.Assert) for node in ast.walk(tree))


def lesson_checks(notebook) -> tuple[int, list[int]]:
    """(asserts in check cells, indices of other code cells that hold an assert)."""
    in_checks, stray = 0, []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        found = count_asserts(cell.source)
        if kind_of(cell) is Kind.CHECK:
            in_checks += found
        elif found:
            stray.append(index)
    return in_checks, stray


def lessons() -> dict[str, Path]:
    from jaxtour.lesson import find_lessons

    return {p.stem: p for p in find_lessons(ROOT / "notebooks")}


def read_floor() -> dict[str, int]:
    return json.loads(FLOOR.read_text())


def read_lesson(path: Path):
    import jupytext

    return jupytext.read(path)


# --- the counting, on synthetic lessons -----------------------------------------------------


def _lesson(*cells):
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    made = []
    for kind, source, tags in cells:
        maker = new_code_cell if kind == "code" else new_markdown_cell
        made.append(maker(source, metadata={"tags": tags} if tags else {}))
    return new_notebook(cells=made)


def test_asserts_are_counted_in_check_cells_and_found_anywhere_else():
    notebook = _lesson(
        ("code", '# %pip install --quiet "jaxtour"\nimport jax', ["setup"]),
        ("markdown", "We assert nothing here: `assert x` is prose.", []),
        ("code", "y = 2 * 3", []),
        ("code", "assert y == 6\nassert y > 0, y", ["check"]),
        ("code", "for i in range(2):\n    assert i < 2", ["check"]),
        ("code", "def f(x):\n    assert x > 0\n    return x", []),
        ("code", "!echo assert\nz = 'assert'", []),
    )
    assert lesson_checks(notebook) == (3, [5])


def test_a_cell_with_a_magic_still_counts():
    assert count_asserts("%%time\nassert 1 == 1") == 1
    assert (
        count_asserts("# %pip install x\nif True:\n    %pip install y\nassert True")
        == 1
    )


# --- the lessons ----------------------------------------------------------------------------


def test_every_lesson_has_a_floor_and_every_floor_a_lesson():
    floor, found = read_floor(), lessons()
    assert sorted(found) == sorted(floor), (
        f"tests/check_floor.json lists {sorted(floor)}, the lessons are {sorted(found)}: add "
        f"the new lesson (`{UPDATE}` adds it at today's count) or remove a deleted one."
    )


@pytest.mark.parametrize("name", sorted(lessons()))
def test_a_lesson_keeps_its_checks_and_no_teaching_cell_asserts(name):
    notebook = read_lesson(lessons()[name])
    in_checks, stray = lesson_checks(notebook)
    where = "; ".join(
        f"cell {i} ({notebook.cells[i].source.strip().splitlines()[0][:50]!r})"
        for i in stray
    )
    assert not stray, (
        f"{name}: {where} hold an `assert` (cells count from 0). The code a student "
        "reads has none: move each assert into a cell of its own right after, written as "
        '`# %% tags=["check"] jupyter={"source_hidden": true}`.'
    )
    floor = read_floor().get(name, 0)
    assert in_checks >= floor, (
        f"{name}: {in_checks} asserts in check cells, fewer than its floor {floor} in "
        "tests/check_floor.json. A check was lost: put it back (never weaken or drop one). "
        "If it went on purpose, lower the floor in the same commit and say why."
    )


def main(argv: list[str]) -> int:
    floor = read_floor() if FLOOR.exists() else {}
    counts = {
        name: lesson_checks(read_lesson(path)) for name, path in lessons().items()
    }
    for name, (in_checks, stray) in counts.items():
        print(
            f"{name}: {in_checks} asserts in check cells (floor {floor.get(name, '-')})"
            + (f"; asserts outside check cells in code cells {stray}" if stray else "")
        )
    if argv[1:2] == ["--raise"]:
        raised = {
            name: max(floor.get(name, 0), in_checks)
            for name, (in_checks, _) in counts.items()
        }
        FLOOR.write_text(json.dumps(raised, indent=2) + "\n")
        print(f"wrote {FLOOR}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))


def test_the_exported_html_lesson_leaves_out_check_cells_that_still_ran(
    tmp_path, capfd
):
    from jaxtour.lesson import execute

    source = tmp_path / "03_demo.py"
    source.write_text(
        "# %% [markdown]\n# # 03 · Demo\n\n"
        "# %%\nanswer = 6 * 7\nprint('the answer is', answer)\n\n"
        '# %% tags=["check"] jupyter={"source_hidden": true}\n'
        "assert answer == 42\nchecked = True\n\n"
        "# %%\nprint('checked' if checked else 'not checked')\n"
    )
    ipynb, html = execute(source, tmp_path / "out", timeout=120)
    text = html.read_text()
    assert "the answer is 42" in text and "assert" not in text
    assert "<pre>checked\n</pre>" in text  # the check cell ran: it defined `checked`
    assert "assert answer == 42" in ipynb.read_text()
    # the kernel's own stderr (this process's): no plain-TCP warning once per lesson
    assert "without encryption" not in capfd.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["03_demo.py", "out"]


def test_the_kernel_talks_over_ipc_where_its_socket_paths_fit(tmp_path, monkeypatch):
    from jaxtour.lesson._execute import kernel_ipc_address

    short = Path("/tmp") if Path("/tmp").is_dir() else tmp_path
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(short))
    address = kernel_ipc_address()
    if os.name == "posix":
        assert address is not None and Path(address).parent == short
        assert Path(address).name.startswith("jaxtour-")
        assert address != kernel_ipc_address()  # two kernels at once: two addresses
    assert address is None or os.name == "posix"
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / ("deep" * 25)))
    assert kernel_ipc_address() is None  # the socket's path would not fit: TCP
