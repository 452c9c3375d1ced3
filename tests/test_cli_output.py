"""What the commands print: text for people on stdout, and JSON only when asked for."""

import json
from pathlib import Path

import pytest

from jaxtour.cli import main
from jaxtour.cli._tour import STEPS

FIGURES = {"speedup_vs_numpy_f64": 9.5, "epoch_s": {"numpy-f64": 2.0}}
PROGRESS = "round 1/1  numpy-f64  2.00 s/epoch"
TABLE = "variant    s/epoch\nnumpy-f64     2.00"


class _Picture:
    """A stand-in for the ladder's plot: `save` writes a few bytes."""

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"png")
        return path


@pytest.fixture
def fake_ladder(monkeypatch):
    """`jaxtour compare` with the timing replaced: one progress line and a table."""

    def run_ladder(data, log=print, **options):
        log(PROGRESS)
        return dict(FIGURES)

    monkeypatch.setattr("jaxtour.mlp.load_mnist", lambda *a: None)
    monkeypatch.setattr("jaxtour.mlp.run_ladder", run_ladder)
    monkeypatch.setattr("jaxtour.mlp.format_ladder", lambda result: TABLE)
    monkeypatch.setattr("jaxtour.mlp.plot_ladder", lambda result: _Picture())


def _compare_text(build: Path) -> list[str]:
    out = build / "mlp"
    wrote = [f"wrote {out / name}" for name in ("ladder.png", "ladder.json")]
    return [PROGRESS, *TABLE.splitlines(), *wrote]


def test_compare_prints_its_table_and_no_json(fake_ladder, tmp_path, capsys):
    assert main(["compare", "--build-dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == _compare_text(tmp_path)  # was: then one JSON line
    assert err == ""
    assert json.loads((tmp_path / "mlp" / "ladder.json").read_text()) == FIGURES


def test_compare_json_prints_only_the_figures(fake_ladder, tmp_path, capsys):
    assert main(["compare", "--json", "--build-dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert out == json.dumps(FIGURES) + "\n"
    assert err.splitlines() == _compare_text(tmp_path)  # the text, out of the way
    assert json.loads((tmp_path / "mlp" / "ladder.json").read_text()) == FIGURES


@pytest.fixture
def fake_steps(monkeypatch):
    """The tour's steps replaced: each returns one path, BUILD/<step>/made, and those
    in `silent` return none (a step with nothing to write)."""
    from jaxtour.cli import _tour

    silent: set[str] = set()

    def bound(build_dir, notebooks):
        def step(name):
            return [] if name in silent else [build_dir / name / "made"]

        return {name: lambda name=name: step(name) for name in _tour.STEPS}

    monkeypatch.setattr(_tour, "bound_steps", bound)
    return silent


def test_tour_only_diagrams_says_to_open_the_diagrams(fake_steps, tmp_path, capsys):
    (tmp_path / "slides").mkdir()  # an earlier run's decks: not this run's to name
    (tmp_path / "slides" / "index.html").write_text("<html></html>")
    assert main(["tour", "--only", "diagrams", "--build-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out  # was: Open BUILD/slides/index.html in a browser
    assert out.endswith(
        f"  {tmp_path / 'diagrams' / 'made'}\n\nOpen:\n"
        f"  {(tmp_path / 'diagrams').resolve()}  the diagrams: .svg files, in a browser\n"
    )


def _open_lines(build: Path, *steps: str) -> str:
    from jaxtour.cli._tour import OPEN

    return "\nOpen:\n" + "".join(
        f"  {(build / OPEN[name][0]).resolve()}  {OPEN[name][1]}\n" for name in steps
    )


@pytest.mark.parametrize("step", STEPS)
def test_a_tour_says_to_open_only_what_it_built(step, fake_steps, tmp_path, capsys):
    from jaxtour.cli._tour import OPEN

    assert sorted(OPEN) == sorted(STEPS)
    assert main(["tour", "--only", step, "--build-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith(_open_lines(tmp_path, step))


def test_a_tour_names_each_step_it_built_slides_first(fake_steps, tmp_path, capsys):
    fake_steps.add("exercises")  # wrote nothing: nothing to open
    steps = ["--only", "diagrams", "--only", "exercises", "--only", "slides"]
    assert main(["tour", *steps, "--build-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.endswith(_open_lines(tmp_path, "slides", "diagrams"))
    assert main(["tour", "--only", "exercises", "--build-dir", str(tmp_path)]) == 0
    assert "Open" not in capsys.readouterr().out
