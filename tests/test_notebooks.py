"""Lesson plumbing: every py:percent source has an up-to-date paired .ipynb.

The lessons themselves are executed by nbval (see `testpaths` in pyproject.toml).
"""

import json
from pathlib import Path

import pytest

from jaxtour import _notebooks

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
SOURCES = _notebooks.find_notebooks(NOTEBOOKS)


def _cells(ipynb_text: str) -> list[tuple[str, str, list[str], dict]]:
    """Type, source, tags and slide metadata of each cell (cell ids are random: ignored)."""
    cells = json.loads(ipynb_text)["cells"]
    return [
        (
            c["cell_type"],
            "".join(c["source"]),
            c["metadata"].get("tags", []),
            c["metadata"].get("slideshow", {}),
        )
        for c in cells
    ]


def test_there_are_lessons():
    assert [p.name for p in SOURCES][:1] == ["00_setup.py"]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_paired_ipynb_matches_its_source(source):
    ipynb = source.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run `make notebooks`"
    committed = ipynb.read_text()
    assert _cells(committed) == _cells(_notebooks.paired_ipynb(source)), (
        f"{ipynb.name} has drifted from {source.name}: run `make notebooks`"
    )
    assert all(not c.get("outputs") for c in json.loads(committed)["cells"]), (
        f"{ipynb.name} holds outputs: they must be stripped (`make notebooks`)"
    )


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_lesson_opens_with_what_you_will_see_and_closes_with_a_summary(source):
    cells = _cells(_notebooks.paired_ipynb(source))
    assert cells[0][0] == "markdown" and "colab.research.google.com" in cells[0][1]
    assert cells[-1][0] == "markdown" and "In this notebook we:" in cells[-1][1]
    first_code = next(c for c in cells if c[0] == "code")
    assert "setup" in first_code[2], (
        "the first code cell is the set-up cell, tagged `setup`"
    )


def test_pair_check_detects_drift(tmp_path):
    source = tmp_path / "00_x.py"
    source.write_text("# %% [markdown]\n# # Title\n\n# %%\nx = 1\n")
    drifted = _notebooks.paired_ipynb(source).replace("x = 1", "x = 2")
    assert _cells(drifted) != _cells(_notebooks.paired_ipynb(source))
