"""jaxtour as a user installs it: an sdist and a wheel built from this checkout, installed
into a fresh Python 3.12+ venv with the newest JAX, run from an empty folder.

Slow (a venv, three installs, one lesson executed and its deck built); pip's cache makes
the installs quick after the first run. Nothing in the checkout is written: the build runs
on a copy.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_LAPTOP_LINE = 'pip install "jaxtour[notebook]"'
# Not copied anywhere in the tree, and (ROOT_ONLY) not at the checkout's top: the vendored
# reveal.js has a dist/ of its own that the wheel must ship.
NOT_COPIED = (
    ".git",
    ".venv",
    ".venv-latest",
    ".venv-newest",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".ruff_cache",
    ".mypy_cache",
    ".ipynb_checkpoints",
)
ROOT_ONLY = ("build", "dist", "data", ".whl", ".mnist", ".exp")


def _not_copied(folder: str, names: list[str]) -> set[str]:
    ignored = set(shutil.ignore_patterns(*NOT_COPIED)(folder, names))
    if Path(folder).resolve() == ROOT:
        ignored |= set(names) & set(ROOT_ONLY)
    return ignored


LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
# The one lesson the installed wheel executes: the shortest, which imports the kit in a
# kernel and shows a Diagram (its deck holds an SVG): 2 s of cells, lesson 01's took 11.
ONE_LESSON = "00_setup"

# A picture of the user's own, beside their lesson.
PICTURE = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
    '<rect width="40" height="20" fill="teal"/></svg>'
)
# What `python -m build --sdist --no-isolation` does: pyproject's backend's PEP 517 hook.
BUILD_SDIST = """import importlib, sys, tomllib
with open("pyproject.toml", "rb") as f:
    backend = tomllib.load(f)["build-system"]["build-backend"]
print(importlib.import_module(backend).build_sdist(sys.argv[1]))
"""

# CI runs the suite twice (make test, then make test-latest on the newest JAX); the check
# builds its own Python 3.12+ venv either way, so it runs in the first run only.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.install,
    pytest.mark.skipif(
        Path(sys.prefix).name in (".venv-latest", ".venv-newest"),
        reason="runs in `make test`; it builds its own Python 3.12+ venv",
    ),
]


def find_new_python() -> str | None:
    """A Python 3.12+ that runs: .ci/newest-python's, on PATH, or under pyenv's versions."""
    script = ROOT / ".ci" / "newest-python"
    found = subprocess.run(["sh", str(script)], capture_output=True, text=True)
    candidates = [found.stdout.strip()] if found.returncode == 0 else []
    candidates += [shutil.which(name) for name in ("python3.12", "python3.13")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    pattern = pyenv_root / "versions" / "3.1[23].*" / "bin" / "python3.1[23]"
    candidates += sorted(glob.glob(str(pattern)))
    check = "import sys, venv; sys.exit(sys.version_info < (3, 12))"
    for candidate in filter(None, candidates):
        ok = subprocess.run([candidate, "-c", check], capture_output=True)
        if ok.returncode == 0:
            return candidate
    return None


def _env(venv: Path) -> dict[str, str]:
    """The user's environment: this venv first on PATH, no checkout on PYTHONPATH."""
    # pytest's options and plugins are this run's (a plugin of the checkout's, say), not
    # the sdist suite's
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS", "PYTEST_PLUGINS")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env.pop("JAXTOUR_QUICK", None)
    # a user's Python keeps the bytecode it compiles (the --no-compile installs rely on it)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # a user has no suite's lesson cache: with it, a lesson the newest-JAX run already
    # executed (same kit, same JAX) came back cached, and the wheel's tour ran nothing
    env.pop("JAXTOUR_EXECUTED", None)
    # OPENBLAS_NUM_THREADS (../conftest.py) stays: the wheel's commands run beside the
    # suite's other processes, as the suite's own do
    # a user has no run's compilation cache (../conftest.py); with the newest jaxlib in the
    # key the wheel's processes could only have written to it
    for name in (
        "JAXTOUR_TESTS_XLA_CACHE",
        "JAX_COMPILATION_CACHE_DIR",
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
        "JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY",
        "JAX_TRACEBACK_IN_LOCATIONS_LIMIT",
    ):
        env.pop(name, None)
    filters = env.pop("PYTHONWARNINGS", "").split(",")
    kept = [f for f in filters if f and "persistent compilation cache" not in f]
    if kept:
        env["PYTHONWARNINGS"] = ",".join(kept)
    return env


def _run(cmd: list[str], cwd: Path, env: dict, timeout: float = 900, **extra: str):
    result = subprocess.run(
        cmd,
        cwd=cwd,
        env={**env, **extra},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return result


def _ok(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, (
        f"{result.args}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    )
    return result


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    """A fresh venv; the sdist made from a copy of the checkout; its wheel."""
    python = find_new_python()
    if python is None:
        pytest.skip("no Python 3.12 or 3.13 found (PATH or pyenv)")
    top = tmp_path_factory.mktemp("install")
    source = top / "checkout"
    shutil.copytree(ROOT, source, ignore=_not_copied, symlinks=True)
    venv = top / "venv"
    _ok(_run([python, "-m", "venv", str(venv)], top, os.environ))
    env = _env(venv)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--quiet"]
    # pip's compiling every installed module to bytecode was two thirds of an install's
    # time (22 s of 31 here); Python compiles what a run imports, on first import.
    install = [*pip, "install", "--no-compile"]
    # The sdist from pyproject's build backend, run by this run's Python (its lock has
    # the backend, so the user's venv gets nothing a build needs); the wheel from that
    # sdist as a user's pip makes it, in an isolated build environment that installs
    # the backend from pyproject's requirements alone.
    dist = top / "dist"
    _ok(_run([sys.executable, "-c", BUILD_SDIST, str(dist)], source, os.environ))
    (sdist,) = dist.glob("jaxtour-*.tar.gz")
    wheel_cmd = [*pip, "wheel", "--no-deps", "--wheel-dir", str(dist), str(sdist)]
    _ok(_run(wheel_cmd, top, env))
    (wheel,) = dist.glob("jaxtour-*.whl")
    return {
        "top": top,
        "venv": venv,
        "sdist": sdist,
        "wheel": wheel,
        "env": env,
        "install": install,
    }


@pytest.fixture(scope="module")
def bare(built) -> dict:
    """The venv with the wheel alone installed (no extras); an empty folder to run in."""
    _ok(_run([*built["install"], str(built["wheel"])], built["top"], built["env"]))
    work = built["top"] / "bare-user"
    work.mkdir()
    return {**built, "work": work}


@pytest.fixture(scope="module")
def full(bare) -> dict:
    """The same venv after the README's laptop line (from the wheel, not an index)."""
    line = README_LAPTOP_LINE.replace(
        '"jaxtour[notebook]"', f'"jaxtour[notebook] @ {bare["wheel"].as_uri()}"'
    )
    _ok(
        _run(
            [*bare["install"], *shlex.split(line)[2:]],  # after `pip install`
            bare["top"],
            bare["env"],
        )
    )
    work = bare["top"] / "user"
    work.mkdir()
    return {**bare, "work": work}


def test_readme_names_the_laptop_line_and_the_extras():
    readme = (ROOT / "README.md").read_text()
    assert README_LAPTOP_LINE in readme
    assert (
        '%pip install "jaxtour[lessons] @ git+https://github.com/jaxtour/jaxtour"'
        in readme
    )
    assert "make tour" in readme.split("## Install", 1)[1].split("\n## ", 1)[0]


def test_wheel_and_sdist_hold_what_users_and_tests_need(built):
    import zipfile

    wheel = zipfile.ZipFile(built["wheel"]).namelist()
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel)
    for stem in LESSONS:
        assert (
            f"jaxtour/lessons/{stem}.py" in wheel
            and f"jaxtour/lessons/{stem}.ipynb" in wheel
        )
    assert "jaxtour/__main__.py" in wheel
    assets = ROOT / "src" / "jaxtour" / "slides" / "assets"
    for path in (p for p in assets.rglob("*") if p.is_file()):  # reveal.js/dist/ too
        assert (
            f"jaxtour/slides/assets/{path.relative_to(assets).as_posix()}" in wheel
        ), path
    with tarfile.open(built["sdist"]) as sdist:
        names = {n.split("/", 1)[1] for n in sdist.getnames() if "/" in n}
    for needed in (
        "LICENSE",
        "conftest.py",
        "tests/conftest.py",
        "tests/mirrors.py",
        "notebooks/00_setup.py",
        "notebooks/00_setup.ipynb",
        "slides/README.md",
        "jupytext.toml",
        "setup.py",
        ".ci/run",
        "Makefile",
        "requirements.lock",
    ):
        assert needed in names, needed


def test_wheel_holds_every_module_of_the_source_tree(built):
    import zipfile

    wheel = set(zipfile.ZipFile(built["wheel"]).namelist())
    package = ROOT / "src" / "jaxtour"
    modules = {
        f"jaxtour/{p.relative_to(package).as_posix()}" for p in package.rglob("*.py")
    }
    assert modules - wheel == set()


def _one_line_naming_the_notebook_extra(result: subprocess.CompletedProcess) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith("""extra: pip install "jaxtour[notebook]\"""")


def test_bare_package_commands_name_the_missing_extra(bare):
    run = lambda *args, **extra: _run(list(args), bare["work"], bare["env"], **extra)
    assert _ok(run("python", "-m", "jaxtour", "--help")).stdout.startswith(
        "usage: jaxtour"
    )
    doctor = _ok(run("jaxtour", "doctor")).stdout
    assert re.search(r"^extra notebook +missing ", doctor, re.M), doctor
    assert re.search(r"^jax +0\.1\d", doctor, re.M), (
        doctor
    )  # the newest JAX, not the lock's
    _ok(run("jaxtour", "lessons"))
    # A student's copy: the student notebooks only (the .py sources hold the solutions).
    assert sorted(p.stem for p in (bare["work"] / "lessons").glob("*.ipynb")) == LESSONS
    assert not list((bare["work"] / "lessons").glob("*.py"))
    _one_line_naming_the_notebook_extra(run("jaxtour", "tour", JAXTOUR_QUICK="1"))
    _one_line_naming_the_notebook_extra(
        run("jaxtour", "slides", "lessons/00_setup.ipynb")
    )
    assert not (bare["work"] / "build" / "slides").exists()


def test_sdist_test_suite_runs_against_the_installed_wheel(full):
    unpacked = full["top"] / "sdist"
    with tarfile.open(full["sdist"]) as sdist:
        sdist.extractall(unpacked, filter="data")
    (root,) = unpacked.iterdir()
    # pytest alone: the suite loads no nbval (pyproject.toml's `-p no:nbval`)
    _ok(_run([*full["install"], "pytest"], full["top"], full["env"]))
    result = _run(
        [
            "python",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-m",
            "not slow",
            # the suite's own conftest and helpers against the installed package: files
            # that need no lesson, outside network or JAX program, and test_cli's
            # in-process checks of what the wheel declares and ships (its subprocess
            # checks are this file's own: doctor, lessons, tour, slides)
            # the helpers' mirrors (a served one, a dead one) and the shared MNIST files
            "tests/test_mlp_data.py::test_only_bad_mirrors_fail_and_leave_nothing",
            "tests/test_mlp_data.py::test_offline_with_no_files_names_folder_variable_and_files",
            "tests/test_mlp_data.py::test_loads_the_shared_files_with_the_published_shapes",
            "tests/test_diagram.py",
            "tests/test_cli.py::test_every_command_has_help",
            "tests/test_cli.py::test_doctor_lists_every_extra",
            "tests/test_cli.py::test_lessons_command_writes_every_lesson_once",
        ],
        root,
        full["env"],
        timeout=600,
    )
    _ok(result)
    assert " passed" in result.stdout and "error" not in result.stdout.splitlines()[-1]


def test_quick_tour_from_an_empty_folder_runs_from_the_wheel(full):
    """What reads the files the wheel ships, from an empty folder: the packaged lessons
    (sources and instructor notebooks, through jupytext; `jaxtour lessons` gave the
    student notebooks in the bare venv), one of them executed in a kernel by the tour, and
    its deck built from the packaged reveal.js. Run again, the lesson comes from the tour's
    cache (its key hashes the installed kit) and the same files are written, nothing left
    over. The tour's other steps read nothing the wheel alone ships and run in-process on
    both JAX versions: diagrams (test_embedded_render; here the sdist suite's test_diagram
    runs the embedded renderer, and the executed lesson's deck holds an SVG), exercises
    (test_exercises, test_cli's packaged-lessons lookup), train and compare
    (test_mlp_train); the wheel holding their modules is test_wheel_holds_every_module. The
    `slides` command's own options are test_files'."""
    run = lambda *args, **extra: _run(list(args), full["work"], full["env"], **extra)
    assert _ok(run("python", "-m", "jaxtour", "--help")).stdout.startswith(
        "usage: jaxtour"
    )
    assert re.search(
        r"^extra notebook +present$", _ok(run("jaxtour", "doctor")).stdout, re.M
    )
    _ok(run("jaxtour", "lessons", "students"))  # notebooks only: no source, no answers
    assert not list((full["work"] / "students").glob("*.py"))
    _ok(run("jaxtour", "lessons", "mine", "--instructor"))
    for stem in LESSONS:  # the packaged lessons: sources, instructor notebooks
        for suffix in (".py", ".ipynb"):
            assert (full["work"] / "mine" / f"{stem}{suffix}").is_file(), stem
    one = full["work"] / "one"
    one.mkdir()
    shutil.copy(full["work"] / "mine" / f"{ONE_LESSON}.py", one)
    # the user's own picture beside the lesson, which its deck must embed
    (one / "figures").mkdir()
    (one / "figures" / "mine.svg").write_text(PICTURE)
    with open(one / f"{ONE_LESSON}.py", "a", encoding="utf-8") as lesson:
        lesson.write(
            "\n# %% [markdown]\n# ## My picture\n# ![mine](figures/mine.svg)\n"
        )
    tour = ("jaxtour", "tour", "--notebooks", "one", "--only", "notebooks")
    first = _ok(run(*tour, "--only", "slides", JAXTOUR_QUICK="1", timeout=900))
    assert f"executed {ONE_LESSON}.py in" in first.stdout
    assert "[2/2] slides" in first.stdout
    build = full["work"] / "build"
    slides = build / "slides"
    assert sorted(p.name for p in slides.glob("*.html")) == [
        f"{ONE_LESSON}.html",
        "index.html",
    ]
    assert ONE_LESSON in (slides / "index.html").read_text()
    deck = (slides / f"{ONE_LESSON}.html").read_text()
    assert "<svg" in deck  # executed: outputs
    assert "figures/mine.svg" not in deck and "data:image/svg+xml" in deck  # embedded
    # running again is safe: the lesson comes from its cache, the same files
    again = _ok(run(*tour, JAXTOUR_QUICK="1"))
    assert f"{ONE_LESSON}.py: unchanged since" in again.stdout
    assert "The tour wrote" in again.stdout
    assert sorted(p.name for p in (build / "notebooks").iterdir()) == [
        f"{ONE_LESSON}.html",
        f"{ONE_LESSON}.ipynb",
        "figures",
    ]
    assert (build / "notebooks" / "figures" / "mine.svg").read_text() == PICTURE
    assert not list(build.rglob("*.part"))
