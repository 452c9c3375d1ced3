"""Colab and Binder badges point at lessons that exist, and every set-up cell runs alone.

A student's first click is a badge; its first cell is the set-up cell. So: every badge in
the README, docs/ and the lessons opens a lesson that exists, the README lists every
lesson with both badges, and each lesson's set-up cell runs by itself, doing nothing
where jaxtour is installed and installing it (`%pip`) where it is not. The set-up cell
is what Colab runs first on the newest JAX, so only its runs go to the newest-JAX run;
the links and rows are plumbing.
"""

import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import nbformat
import pytest

from jaxtour.lesson import Kind, View, find_lessons, kind_of, notebook_text

ROOT = Path(__file__).resolve().parent.parent
LESSONS = find_lessons(ROOT / "notebooks")
COLAB = "https://colab.research.google.com/github/jaxtour/jaxtour/blob/main/"
BINDER = "https://mybinder.org/v2/gh/jaxtour/jaxtour/main?labpath="
_LINK = re.compile(
    r"https://(?:colab\.research\.google\.com|mybinder\.org)/[^\s)\"'\]>]+"
)
_BADGE_IMAGES = (
    "https://colab.research.google.com/assets/colab-badge.svg",
    "https://mybinder.org/badge_logo.svg",
)
# the lessons extra
INSTALL = '--quiet "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"'


def documents() -> list[Path]:
    return [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.*")),
    ]


@functools.cache
def instructor_cells(source: Path) -> list:
    """The lesson's cells as its instructor notebook holds them, read once per file (a
    lesson's conversion is ~0.5 s of jupytext)."""
    return nbformat.reads(notebook_text(source, View.INSTRUCTOR), as_version=4).cells


def lesson_of(url: str) -> str:
    """The repository path a Colab or Binder link opens; fails on any other form of link."""
    for prefix in (COLAB, BINDER):
        if url.startswith(prefix):
            return unquote(url[len(prefix) :])
    raise AssertionError(
        f"{url} is neither {COLAB}notebooks/NN_topic.ipynb nor "
        f"{BINDER}notebooks%2FNN_topic.ipynb"
    )


def readme_row(source: Path) -> str:
    """The README table row a lesson needs (said in the failure message, to copy)."""
    notebook = f"notebooks/{source.stem}.ipynb"
    title = instructor_cells(source)[0].source
    title = re.search(r"^#\s+(.+)$", title, re.MULTILINE).group(1).split(":")[0]
    return (
        f"| [{title}]({notebook}) | WHAT YOU WILL SEE | [![Open in Colab]({_BADGE_IMAGES[0]})]"
        f"({COLAB}{notebook}) [![Binder]({_BADGE_IMAGES[1]})]"
        f"({BINDER}{notebook.replace('/', '%2F')}) |"
    )


@pytest.mark.plumbing
def test_lesson_of_reads_both_kinds_of_link_and_rejects_others():
    assert (
        lesson_of(COLAB + "notebooks/01_why_jax.ipynb") == "notebooks/01_why_jax.ipynb"
    )
    assert (
        lesson_of(BINDER + "notebooks%2F01_why_jax.ipynb")
        == "notebooks/01_why_jax.ipynb"
    )
    with pytest.raises(AssertionError, match="is neither"):
        lesson_of(
            "https://colab.research.google.com/github/someone/fork/blob/main/x.ipynb"
        )


@pytest.mark.plumbing
@pytest.mark.parametrize("document", documents(), ids=lambda p: p.name)
def test_every_badge_opens_a_lesson_that_exists(document):
    links = [u for u in _LINK.findall(document.read_text()) if u not in _BADGE_IMAGES]
    for url in links:
        path = lesson_of(url)
        assert re.fullmatch(r"notebooks/\d\d_\w+\.ipynb", path), (
            f"{url} opens no lesson"
        )
        assert (ROOT / path).is_file(), (
            f"{document.name}: {url} opens {path}, which is missing"
        )
        assert (ROOT / path).with_suffix(".py").is_file(), (
            f"{path} has no py:percent source"
        )


@pytest.mark.plumbing
@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_each_lesson_opens_with_a_colab_badge_for_itself(source):
    first = instructor_cells(source)[0].source
    assert f"{COLAB}notebooks/{source.stem}.ipynb" in first
    assert _BADGE_IMAGES[0] in first


@pytest.mark.plumbing
def test_the_readme_lists_every_lesson_with_both_badges_in_order():
    readme = (ROOT / "README.md").read_text()
    start, end = (
        readme.index("<!-- lessons:start -->"),
        readme.index("<!-- lessons:end -->"),
    )
    table = readme[start:end]
    for source in LESSONS:
        notebook = f"notebooks/{source.stem}.ipynb"
        row = next(
            (line for line in table.splitlines() if f"]({notebook})" in line), None
        )
        assert row, f"README has no row for {source.stem}; add:\n{readme_row(source)}"
        assert (
            f"({COLAB}{notebook})" in row
            and f"({BINDER}notebooks%2F{source.stem}" in row
        ), (
            f"README's row for {source.stem} lacks a badge; it should read:\n"
            f"{readme_row(source)}"
        )
    rows = re.findall(r"^\| \[(\d\d) ", table, re.MULTILINE)
    assert rows == [s.stem[:2] for s in LESSONS], "README rows are not in lesson order"


# --- the set-up cell, alone ---------------------------------------------------------------

# Runs each set-up cell as Colab runs a lesson's first cell, with jaxtour installed or with
# `find_spec` saying it is missing: in a fresh process with a fresh shell, forked from one
# interpreter that has imported IPython and JAX and started nothing (no shell, no JAX
# backend, one thread), so a cell still sets JAX's devices before JAX computes anything
# and binds every name it uses. (A Python of its own for each run cost 2 s of CPU a run,
# most of it importing JAX.) `%pip` is replaced by a recorder, so nothing is installed
# and no network is used.
SCENARIOS = ("installed", "missing")
_RUN_SETUP_CELLS = r"""
import contextlib, importlib.util, io, json, os, sys
from IPython.core.interactiveshell import InteractiveShell
import jax

def run(job):
    shell = InteractiveShell.instance()
    pip_lines = []
    shell.register_magic_function(pip_lines.append, "line", "pip")
    shell.register_magic_function(lambda line: None, "line", "matplotlib")  # no GUI here
    real_find_spec = importlib.util.find_spec
    if job["scenario"] == "missing":
        importlib.util.find_spec = lambda name, *args, **kwargs: (
            None if name == "jaxtour" else real_find_spec(name, *args, **kwargs))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        outcome = shell.run_cell(job["source"])
    error = outcome.error_before_exec or outcome.error_in_exec
    return {"error": None if error is None else repr(error),
            "printed": printed.getvalue(), "pip": pip_lines}

def forked(job):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            result = run(job)
        except BaseException as error:
            result = {"error": f"the runner failed: {error!r}", "printed": "", "pip": []}
        with os.fdopen(write_end, "w") as out:
            json.dump(result, out)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as answer:
        text = answer.read()
    _, status = os.waitpid(pid, 0)
    if status or not text:
        return {"error": f"the run's process ended with status {status}",
                "printed": "", "pip": []}
    return json.loads(text)

print(json.dumps([forked(job) for job in json.load(sys.stdin)]))
"""


def setup_cell(source: Path) -> str:
    """The lesson's first code cell: the set-up cell (later `setup` cells only import)."""
    first = next(c for c in instructor_cells(source) if c.cell_type == "code")
    assert kind_of(first) is Kind.SETUP, (
        f"{source.stem}: the first code cell must be the set-up cell, tagged `setup`"
    )
    return first.source


def run_setup_cells(jobs: list[tuple[str, str]]) -> list[dict]:
    """Each (cell, scenario)'s result: error, what it printed, the `%pip` lines."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_SETUP_CELLS],
        input=json.dumps([{"source": c, "scenario": s} for c, s in jobs]),
        text=True,
        capture_output=True,
        timeout=300,
        cwd=ROOT / "notebooks",
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def setup_runs() -> dict[tuple[str, str], dict]:
    """{(lesson, scenario): result}. Lessons share set-up cells (most are the same few
    lines), so each distinct cell runs once per scenario, each run in its own fork."""
    cells = {source.stem: setup_cell(source) for source in LESSONS}
    jobs = sorted(
        {(cell, scenario) for cell in cells.values() for scenario in SCENARIOS}
    )
    ran = dict(zip(jobs, run_setup_cells(jobs), strict=True))
    return {
        (stem, scenario): ran[cell, scenario]
        for stem, cell in cells.items()
        for scenario in SCENARIOS
    }


@pytest.mark.slow  # a fresh process per distinct set-up cell
@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_setup_cell_runs_alone_and_installs_nothing_when_jaxtour_is_there(
    setup_runs, source
):
    run = setup_runs[source.stem, "installed"]
    assert run["error"] is None, run
    assert run["pip"] == [], "the set-up cell must not reinstall jaxtour"
    assert re.match(r"JAX \S+ on (cpu|gpu|tpu): \d+ devices? \(", run["printed"]), run


@pytest.mark.slow  # a fresh process per distinct set-up cell
@pytest.mark.parametrize("source", LESSONS, ids=lambda p: p.stem)
def test_setup_cell_installs_jaxtour_where_it_is_missing(setup_runs, source):
    run = setup_runs[source.stem, "missing"]
    assert run["error"] is None, run
    assert run["pip"] == [f"install {INSTALL}"]


@pytest.mark.plumbing
def test_the_readme_row_of_each_lesson_names_its_exercises():
    from jaxtour import exercises

    readme = (ROOT / "README.md").read_text()
    table = readme[
        readme.index("<!-- lessons:start -->") : readme.index("<!-- lessons:end -->")
    ]
    for source in LESSONS:
        link = f"(notebooks/{source.stem}.ipynb)"
        row = next(line for line in table.splitlines() if link in line)
        for exercise in exercises.for_lesson(source.stem):
            assert f"`{exercise.name}`" in row, (
                f"README's row for {source.stem} does not name its exercise {exercise.name}"
            )
