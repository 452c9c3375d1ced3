"""The markers that size a run mean what they say, and the Makefile's runs use them."""

from pathlib import Path
from types import SimpleNamespace

import markers

ROOT = Path(__file__).resolve().parent.parent


def _target(name: str) -> str:
    """The recipe of one Makefile target."""
    makefile = (ROOT / "Makefile").read_text()
    return makefile.split(f"\n{name}:", 1)[1].split("\n\n", 1)[0]


def test_every_plumbing_module_exists():
    # a renamed module would silently go back to the newest-JAX run
    missing = sorted(
        name
        for name in markers.PLUMBING_MODULES
        if not (ROOT / "tests" / name).is_file()
    )
    assert not missing, f"tests/markers.py's PLUMBING_MODULES names {missing}"


def test_every_longest_first_module_exists_and_the_runs_keep_its_order():
    missing = [n for n in markers.LONGEST_FIRST if not (ROOT / "tests" / n).is_file()]
    assert not missing, f"tests/markers.py's LONGEST_FIRST names {missing}"
    makefile = (ROOT / "Makefile").read_text()
    pytest_line = makefile.split("\nPYTEST ", 1)[1].split("\n\n", 1)[0]
    assert "--dist loadfile --no-loadscope-reorder" in pytest_line
    for target in ("test", "test-fast", "test-latest"):
        assert "$(PYTEST)" in _target(target), target


def test_longest_first_moves_whole_files_and_keeps_the_rest_in_place(tmp_path):
    names = [
        "test_a.py",
        "test_browser.py",
        "test_a.py",
        "test_install.py",
        "test_b.py",
    ]
    items = [SimpleNamespace(path=tmp_path / n, n=i) for i, n in enumerate(names)]
    markers.longest_first(items)
    assert [(Path(i.path).name, i.n) for i in items] == [
        ("test_install.py", 3),
        ("test_browser.py", 1),
        ("test_a.py", 0),
        ("test_a.py", 2),
        ("test_b.py", 4),
    ]


def test_fast_run_leaves_out_slow_browser_and_lesson_execution():
    assert '-m "not slow and not browser and not notebooks"' in _target("test-fast")


def test_newest_jax_run_leaves_out_plumbing_only():
    recipe = _target("test-latest")
    assert '-m "not plumbing"' in recipe
    assert "slow" not in recipe and "browser" not in recipe


def _report(nodeid: str, when: str, seconds: float, *marks: str):
    keywords = {nodeid.split("::")[-1]: 1, **dict.fromkeys(marks, 1)}
    return SimpleNamespace(
        nodeid=nodeid, when=when, duration=seconds, keywords=keywords
    )


def test_unmarked_slow_adds_setup_and_call_and_spares_marked_tests():
    reports = [
        _report("t.py::a", "setup", 2.0),
        _report("t.py::a", "call", 1.5),  # 3.5 s in all: over
        _report("t.py::a", "teardown", 9.0),  # not counted
        _report("t.py::b", "call", 2.9),  # under
        _report("t.py::c", "call", 30.0, "slow"),
        _report("t.py::d", "call", 30.0, "browser"),
        _report("t.py::e", "call", 4.0),
    ]
    assert markers.unmarked_slow(reports, slow_s=3.0) == [
        ("t.py::e", 4.0),
        ("t.py::a", 3.5),
    ]


def test_a_lesson_notebook_cell_is_marked_as_executing_a_lesson(tmp_path):
    class Item:
        def __init__(self, path):
            self.path, self.marks = path, []

        def add_marker(self, mark):
            self.marks.append(mark.name)

        def get_closest_marker(self, name):
            return name if name in self.marks else None

    cell = Item(tmp_path / "00_setup.ipynb")
    plumbing = Item(tmp_path / "test_notebooks.py")
    lesson_run = Item(tmp_path / "test_notebooks.py")
    lesson_run.marks.append("notebooks")  # a lesson executed: it runs on every JAX
    other = Item(tmp_path / "test_parallel.py")
    markers.mark_by_place([cell, plumbing, lesson_run, other])
    assert cell.marks == ["notebooks", "slow"]
    assert plumbing.marks == ["plumbing"]
    assert lesson_run.marks == ["notebooks"]
    assert other.marks == []
