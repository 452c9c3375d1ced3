"""What the commands print: text for people on stdout, and JSON only when asked for."""

import json
from pathlib import Path

import pytest

from jaxtour.cli import main

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
