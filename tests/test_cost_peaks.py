"""Measured peaks (cached per device, on disk and in memory) and the roofline plot."""

import json
import warnings
import xml.etree.ElementTree as ET

import jax
import jax.numpy as jnp
import matplotlib.text
import pytest

from jaxtour import _ir, mlp
from jaxtour.cost import Peaks, Roofline, _peaks, device_peaks, draw_roofline

FAKE = Peaks("cpu:cpu", 50e9, 10e9)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and no peaks remembered in memory."""
    monkeypatch.setenv("JAXTOUR_CACHE", str(tmp_path))
    monkeypatch.setattr(_peaks, "_MEMORY", {})
    return tmp_path


@pytest.fixture
def measured(monkeypatch):
    """Replace the micro-benchmarks with a counter returning FAKE's figures, for the
    default device (whichever it is: the cache is keyed by it)."""
    calls = []
    mine = Peaks(_this_device(), FAKE.flops_per_s, FAKE.bytes_per_s)
    monkeypatch.setattr(_peaks, "measure", lambda device: calls.append(device) or mine)
    return calls


def _this_device() -> str:
    return _peaks.device_key(jax.devices()[0])


def _fake() -> Peaks:
    """FAKE's figures, as the default device's."""
    return Peaks(_this_device(), FAKE.flops_per_s, FAKE.bytes_per_s)


def test_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("JAXTOUR_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _peaks.cache_dir() == tmp_path / "jaxtour"
    monkeypatch.setenv("JAXTOUR_CACHE", str(tmp_path / "here"))
    assert _peaks.cache_dir() == tmp_path / "here"


def test_peaks_are_measured_once_then_cached(cache, measured, monkeypatch):
    assert device_peaks() == _fake() and len(measured) == 1
    assert device_peaks() == _fake() and len(measured) == 1  # memory
    monkeypatch.setattr(_peaks, "_MEMORY", {})
    assert device_peaks() == _fake() and len(measured) == 1  # disk
    stored = json.loads((cache / "peaks.json").read_text())
    assert stored[_peaks.device_key(jax.devices()[0])]["flops_per_s"] == 50e9
    device_peaks(refresh=True)
    assert len(measured) == 2


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[1, 2]",
        '{"KEY": {"flops": 1}}',
        '{"KEY": {"flops_per_s": 0, "bytes_per_s": 1e9}}',
        '{"KEY": {"flops_per_s": NaN, "bytes_per_s": 1e9}}',
        '{"KEY": {"flops_per_s": 1e9, "bytes_per_s": -5}}',
    ],
)
def test_corrupt_cache_is_measured_again_and_rewritten(cache, measured, text):
    (cache / "peaks.json").write_text(text.replace("KEY", _this_device()))
    with pytest.warns(UserWarning, match="measuring again") as caught:
        assert device_peaks() == _fake() and len(measured) == 1
    assert str(cache / "peaks.json") in str(caught[0].message)
    assert (
        json.loads((cache / "peaks.json").read_text())[_this_device()]["bytes_per_s"]
        == 10e9
    )


def test_bad_device_message():
    with pytest.raises(
        TypeError,
        match=r"^device_peaks needs a jax.Device .e.g. "
        r"jax.devices\(\)\[0\]. or None; got str.$",
    ):
        device_peaks("gpu")


@pytest.mark.slow  # measures the device
def test_measured_peaks_are_sane_and_repeatable():
    device = jax.devices()[0]
    first, second = _peaks.measure(device), _peaks.measure(device)
    for peaks in (first, second):
        # a laptop CPU core does ~1e10 FLOP/s; an accelerator under 1e16
        assert 1e8 < peaks.flops_per_s < 1e16
        assert 1e8 < peaks.bytes_per_s < 1e14
    # best-of-10 runs, the same method twice: the same order of magnitude even when a
    # busy machine halves one of them (a broken measure is off by far more: 1e3 and up)
    assert 1 / 10 < first.flops_per_s / second.flops_per_s < 10
    assert 1 / 10 < first.bytes_per_s / second.bytes_per_s < 10


@pytest.mark.slow  # measures the device
def test_roofline_holds_every_fusion(tmp_path):
    params, (x, y) = mlp.init_params(jax.random.key(0)), mlp.example_batch(32)
    roof = draw_roofline(mlp.update, peaks=FAKE)(params, x, y)
    assert isinstance(roof, Roofline)
    compiled = jax.jit(mlp.update).lower(params, x, y).compile()
    fusions = {op.name for op in _ir.parse_hlo(compiled.as_text()).fusions()}
    assert fusions <= {p.name for p in roof.points}
    for point in roof.points:
        assert point.flops_per_s == min(
            FAKE.flops_per_s, FAKE.bytes_per_s * point.intensity
        )
    assert roof.table.intensity == roof.table.flops / roof.table.bytes
    assert roof.bound == ("memory" if roof.table.intensity < 5 else "compute")
    assert roof.title.startswith("Roofline of update on CPU: ")
    assert roof.figure.axes[0].get_title().startswith("update on CPU: ")
    assert repr(roof) == f"Plot({roof.title!r})"
    assert roof._repr_png_().startswith(b"\x89PNG")
    ET.fromstring(roof.save(tmp_path / "roof.svg").read_text())
    with pytest.raises(ValueError, match=r"^Cannot save a Plot as 'roof.gif': use a "):
        roof.save(tmp_path / "roof.gif")


def test_roofline_bad_input():
    with pytest.raises(TypeError, match=r"^draw_roofline needs a function to trace"):
        draw_roofline(None)


def test_a_program_without_flops_is_said_in_words():
    roof = draw_roofline(jnp.sin, peaks=FAKE)(jnp.ones(3))  # sin: transcendental only
    assert roof.table.flops == 0 and not roof.above_roof
    assert roof.title == (
        "Roofline of sin on CPU: no FLOPs counted (3 transcendentals, which XLA "
        "counts apart), so the program has no place on the roof; its ops are drawn at "
        "the left edge"
    )
    assert roof._repr_png_().startswith(b"\x89PNG")


def _png_size(data: bytes) -> tuple[int, int]:
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.parametrize(
    "peaks",
    [Peaks("cpu:cpu", 1e3, 1e15), Peaks("cpu:cpu", 1e19, 1e-2), FAKE],
    ids=["ridge 1e-12", "ridge 1e21", "ordinary"],
)
def test_the_rooflines_size_and_fonts_do_not_depend_on_the_peaks(peaks):
    """A slide shows the PNG at one scale: its pixels and font sizes are constants."""
    roof = draw_roofline(lambda a, b: jnp.tanh(a @ b), peaks=peaks)(
        jnp.ones((32, 32)), jnp.ones((32, 32))
    )
    assert _png_size(roof.png()) == (836, 594)  # 7.6 x 5.4 in at 110 dpi
    texts = [t for t in roof.figure.findobj(matplotlib.text.Text) if t.get_text()]
    assert len(texts) > 10
    assert min(t.get_fontsize() for t in texts) >= 10  # points: 15 px at 110 dpi


def test_roofline_marks_another_program():
    roof = draw_roofline(lambda a, b: a @ b, peaks=FAKE)(
        jnp.ones((64, 64)), jnp.ones((64, 64))
    )
    before = len(roof.figure.axes[0].collections)
    assert roof.add("NumPy float64", 0.01, 1e6) is roof
    ax = roof.figure.axes[0]
    assert len(ax.collections) == before + 1
    (legend,) = roof.figure.legends  # one, redrawn
    assert "NumPy float64" in [t.get_text() for t in legend.get_texts()]
    assert ax.get_xlim()[0] <= 0.01 / 3 and ax.get_ylim()[0] <= 1e6 / 3  # in view
    with pytest.raises(
        ValueError,
        match=r"^Roofline.add needs a positive intensity and "
        r"rate; got 0 FLOP/B and 1000000.0 FLOP/s.$",
    ):
        roof.add("nothing", 0, 1e6)


def test_a_program_above_the_roof_says_the_roof_is_stale():
    slow = Peaks("cpu:cpu", 1e3, 1e3)  # a roof any real program outruns
    roof = draw_roofline(lambda a, b: a @ b, peaks=slow)(
        jnp.ones((64, 64)), jnp.ones((64, 64))
    )
    assert roof.above_roof and roof.flops_per_s > 1e3
    assert roof.title.endswith(
        "; above the measured roof: the peaks were measured at a "
        "busier moment or the data sat in cache; "
        "device_peaks(refresh=True) measures again"
    )
    assert roof.figure.axes[0].get_ylim()[1] >= roof.flops_per_s  # the star is in view
    assert not draw_roofline(lambda a, b: a @ b, peaks=FAKE)(
        jnp.ones((2, 2)), jnp.ones((2, 2))
    ).above_roof  # 16 FLOPs: slower than 50 GFLOP/s


def test_an_unwritable_cache_warns_and_keeps_the_peaks_in_memory(
    tmp_path, monkeypatch, measured
):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("JAXTOUR_CACHE", str(blocker / "jaxtour"))  # cannot be made
    monkeypatch.setattr(_peaks, "_MEMORY", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert device_peaks() == _fake()
    # one warning, the true one: there is no cache to read, and none can be written
    [warning] = caught
    assert str(warning.message).startswith("device_peaks could not write its cache ")
    assert device_peaks() == _fake() and len(measured) == 1  # from memory
