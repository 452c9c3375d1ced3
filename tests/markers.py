"""The markers that size a run: which files carry which marker, and which tests ran over
the slow budget without one (used by conftest.py, tested by test_markers.py)."""

from pathlib import Path

import pytest

# Seconds (set-up and call) past which a test counts as slow; a run names the unmarked ones.
SLOW_S = 3.0

# Modules that never reach JAX beyond importing it: lesson files and their pairing, the
# check-cell floor, slide decks from hand-made notebooks, MNIST files and downloads,
# Diagram rendering, option names; and the programs around the kit's JAX code: nbgrader's
# grading of a course (its release and its autograde of four submissions), JupyterLab
# redrawing the explorer's panel (what the kit computes there, every exercise's check of
# its stub and its solution, the explorer's views, runs on every JAX in
# test_exercises_lessons, test_exercises_integrity and test_explore). The newest-JAX run
# skips them (`-m "not plumbing"`); tests/test_markers.py says when one is renamed or gone.
PLUMBING_MODULES = frozenset(
    {
        "test_checks.py",
        "test_contract.py",
        "test_diagram.py",
        "test_exercises_grading.py",
        "test_exercises_nbgrader.py",
        "test_explore_browser.py",
        "test_markers.py",
        "test_mlp_data.py",
        "test_mlp_download.py",
        "test_notebooks.py",
        "test_slides.py",
    }
)


# The files that take longest (a fresh clone, 2026-11-27: 50 to 130 s each), in the order
# pytest-xdist hands them out (`--no-loadscope-reorder`; by default it starts the files
# with the most tests first, and the install test, with 9, ran last, alone). The two
# lesson consumers start at once and ask for the lessons in opposite orders; the browser
# tests, which need every lesson, come last of these, so that the lessons have run by
# then (in a newest-JAX run, where the browser tests are short, their first test's
# set-up took 26 s, against 5 s with every lesson cached). The other files follow as
# collected.
LONGEST_FIRST = (
    "test_install.py",
    "test_notebooks.py",
    "test_exercises_lessons.py",
    "test_multiprocess.py",
    "test_corpus_models.py",
    "test_mlp_download.py",
    "test_types.py",  # one test of ~12 s: early, not in the run's tail
    "test_viz_models_zoo.py",  # every lens's drawing of nine zoo models
    "test_viz_models.py",  # Flax, Equinox and an NNX block built and drawn
    "test_cost_profile.py",  # 2^34-FLOP matmuls timed
    "test_static_args.py",  # every lens on one program, four ways
    "test_cost_loops.py",  # scans against their unrolled twins
    "test_exercises_grading.py",  # nbgrader's round on two assignments, four submissions
    "test_browser.py",
)


def longest_first(items: list[pytest.Item]) -> None:
    """Orders `items` file by file: LONGEST_FIRST's files in its order, then the rest as
    they were (a file's own tests keep their order)."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.path)).name, len(rank)))


def mark_by_place(items: list[pytest.Item]) -> None:
    """Marks what a file's place says: a cell of a lesson notebook executes the lesson
    (slow); a test in a plumbing module is plumbing."""
    for item in items:
        path = Path(str(item.path))
        if path.suffix == ".ipynb":
            item.add_marker(pytest.mark.notebooks)
            item.add_marker(pytest.mark.slow)
        elif path.name in PLUMBING_MODULES and not item.get_closest_marker("notebooks"):
            # a lesson executed in such a module runs on every JAX: it is not plumbing
            item.add_marker(pytest.mark.plumbing)


def unmarked_slow(reports: list, slow_s: float = SLOW_S) -> list[tuple[str, float]]:
    """(test id, seconds) of each test whose set-up and call took over `slow_s` and
    that no size marker (slow, browser, notebooks, install) names."""
    sizes = {"slow", "browser", "notebooks", "install"}
    took: dict[str, float] = {}
    for report in reports:
        if report.when in ("setup", "call") and not sizes & set(report.keywords):
            took[report.nodeid] = took.get(report.nodeid, 0.0) + report.duration
    return sorted(
        ((nodeid, s) for nodeid, s in took.items() if s > slow_s),
        key=lambda pair: -pair[1],
    )
