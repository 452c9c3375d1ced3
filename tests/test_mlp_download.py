"""MNIST downloads that never hang or litter: real loader processes against 127.0.0.1 mirrors.

Each load runs in a process of its own with a time limit, so a loader that hung would
fail the test instead of hanging the suite. The fast tests shrink the `Budget`; the slow
ones keep the defaults a user gets.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from mirrors import (
    HAVE_MNIST,
    NAMES,
    SHARED,
    Mirrors,
    load_command,
    load_in_process,
    mirror_root,
)

from jaxtour.data._download import FILES, _abandoned, remove_leftovers
from jaxtour.mlp import Budget, load_mnist

pytestmark = pytest.mark.skipif(not HAVE_MNIST, reason=f"MNIST files not in {SHARED}")
FAST = {"stall_s": 1.0, "grace_s": 2.0, "min_rate": 2000.0}


@pytest.fixture
def mirrors(tmp_path: Path):
    served = Mirrors(mirror_root(tmp_path / "www"))
    yield served
    served.close()


def _parts(folder: Path) -> list[Path]:
    return sorted(folder.glob(".*")) if folder.is_dir() else []


AT_THE_DEFAULTS = (
    "test_at_the_defaults_a_trickle_is_given_up_and_a_stall_skipped_in_time"
)


def _load_at_the_defaults(pool: ThreadPoolExecutor, served: Mirrors, top: Path) -> dict:
    """Starts two loads at the deadlines a user gets: one from a mirror that trickles a
    byte every 5 s; one from a mirror that stalls, then a healthy one."""
    trickle = served.start("trickle", interval=5)
    stalled, healthy = served.start("stall"), served.start()
    return {
        "top": top,
        "stalled": stalled,
        "gives_up": pool.submit(load_in_process, top / "a", [trickle], timeout=150),
        "skips": pool.submit(
            load_in_process, top / "b", [stalled, healthy], timeout=60
        ),
    }


@pytest.fixture(scope="module", autouse=True)
def loads_at_the_defaults(request, tmp_path_factory):
    """The loads at the default deadlines, started with this file and checked by its last
    test: their ~35 s of waiting runs beside the other tests here. None when that test
    is not selected, or when this file's tests may be spread over workers (pytest-xdist
    without --dist loadfile): the test then starts its own. A run stopped early (-x)
    waits for them at the file's end, ~35 s (each load is killed after its timeout)."""
    selected = any(item.name == AT_THE_DEFAULTS for item in request.session.items)
    whole_file = request.config.getoption("dist", "no") in (
        "no",
        "loadfile",
        "loadscope",
    )
    if not (selected and whole_file):
        yield None
        return
    top = tmp_path_factory.mktemp("defaults")
    served = Mirrors(mirror_root(top / "www"))
    try:
        with ThreadPoolExecutor(2) as pool:
            yield _load_at_the_defaults(pool, served, top)
    finally:
        served.close()


@pytest.mark.slow  # waits out a mirror's deadlines
def test_trickling_mirror_gives_up_within_the_budget(tmp_path, mirrors):
    folder = tmp_path / "data"
    result, seconds = load_in_process(
        folder, [mirrors.start("trickle", interval=0.5)], timeout=60, **FAST
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "train-images-idx3-ubyte.gz: too slow: " in result.stderr
    assert "a mirror must send at least 2 kB/s after the first 2 s" in result.stderr
    assert seconds < 20  # 2 s of grace, then the first check after the next byte
    assert _parts(folder) == []


@pytest.mark.slow  # waits out a mirror's deadlines
def test_mirror_trickling_its_headers_is_cut_at_the_files_deadline(tmp_path, mirrors):
    folder = tmp_path / "data"
    # A deadline of 2 s + 9912422 B / 2 MB/s = 7 s for the first file; each byte resets
    # the 1 s stall clock, so only the overall deadline can stop this mirror.
    budget = {"stall_s": 1.0, "grace_s": 2.0, "min_rate": 2_000_000.0}
    slow = mirrors.start("slow-headers", interval=0.3)
    result, seconds = load_in_process(folder, [slow], timeout=60, **budget)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "train-images-idx3-ubyte.gz: too slow: 0 of 9912422 bytes in 7 s"
        in result.stderr
    )
    assert seconds < 30
    assert _parts(folder) == []


@pytest.mark.slow  # waits out a mirror's deadlines
def test_stalling_mirror_is_skipped_for_every_later_file(tmp_path, mirrors):
    folder = tmp_path / "data"
    stalled, healthy = mirrors.start("stall"), mirrors.start()
    result, seconds = load_in_process(folder, [stalled, healthy], timeout=60, **FAST)
    assert result.returncode == 0, result.stderr
    assert mirrors.hits[stalled] == [
        "/mnist/train-images-idx3-ubyte.gz"
    ]  # asked once only
    assert len(mirrors.hits[healthy]) == 4
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"MNIST: mirror {stalled} failed (no answer for 1 s); "
        "not trying it again in this load."
    )
    assert lines[1:] == [
        f"MNIST: {name} from {healthy} (skipped {stalled})" for name in NAMES
    ]
    assert seconds < 30
    assert sorted(p.name for p in folder.iterdir()) == sorted(NAMES)


@pytest.mark.slow  # waits out a mirror's deadlines
def test_killed_download_leaves_no_part_file_after_the_next_load(tmp_path, mirrors):
    folder = tmp_path / "data"
    loader = subprocess.Popen(
        load_command(folder, [mirrors.start("slow", interval=0.2)]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not [p for p in _parts(folder) if p.stat().st_size > 0]:
            assert loader.poll() is None and time.monotonic() < deadline, (
                "no download began"
            )
            time.sleep(0.1)
    finally:
        loader.send_signal(signal.SIGKILL)
        loader.wait(timeout=30)
    (left,) = _parts(folder)
    assert (
        left.name.startswith(".train-images-idx3-ubyte.gz.") and left.suffix == ".part"
    )
    mnist = load_mnist(folder, mirrors=[mirrors.start()], progress=False)
    assert mnist.train_images.shape == (60000, 28, 28)
    assert _parts(folder) == []
    assert sorted(p.name for p in folder.iterdir()) == sorted(NAMES)


def test_a_live_downloads_part_file_is_left_alone(tmp_path):
    import fcntl

    part = tmp_path / ".train-images-idx3-ubyte.gz.abc.part"
    dead = tmp_path / ".t10k-labels-idx1-ubyte.gz.def.part"
    part.write_bytes(b"partial")
    dead.write_bytes(b"left by a killed run")
    (tmp_path / ".notes.part").write_text("not a download of ours")
    with open(part, "rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a download in progress holds it
        assert not _abandoned(part)
        assert remove_leftovers(tmp_path) == [dead]
    assert part.exists() and not dead.exists() and (tmp_path / ".notes.part").exists()
    assert remove_leftovers(tmp_path) == [part]


@pytest.mark.skipif(
    os.geteuid() == 0 and not shutil.which("setpriv"),
    reason="root writes anywhere; setpriv is needed to drop that",
)
def test_read_only_folder_says_cannot_write_once_before_any_request(tmp_path, mirrors):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    # Root ignores file modes; without its capabilities it is held to them like anyone.
    prefix = ("setpriv", "--bounding-set=-all") if os.geteuid() == 0 else ()
    healthy = mirrors.start()
    result, _ = load_in_process(folder, [healthy], timeout=60, prefix=prefix)
    assert result.returncode == 1
    assert result.stderr.count("cannot write to") == 1
    assert (
        f"cannot write to {folder}: Permission denied. Make that folder writable"
        in (result.stderr)
    )
    assert "JAXTOUR_DATA" in result.stderr
    assert mirrors.hits[healthy] == []
    assert list(folder.iterdir()) == []


def test_budget_bounds_every_file():
    budget = Budget()
    assert budget.deadline(FILES[0].size) == pytest.approx(30 + 9912422 / 20_000)
    assert max(budget.deadline(f.size) for f in FILES) < 600  # ten minutes at worst


@pytest.mark.parametrize(
    ("field", "value", "floor"),
    [
        ("min_rate", 0, "above 0"),  # no rate floor: deadline() divided by zero
        ("stall_s", 0, "above 0"),  # a socket that never waits
        ("stall_s", -1.0, "above 0"),
        ("grace_s", -5, "0 or more"),
        ("grace_s", math.inf, "0 or more"),  # the deadline's timer thread overflowed
        ("min_rate", math.nan, "above 0"),
    ],
)
def test_a_budget_that_bounds_nothing_is_refused_when_made(field, value, floor):
    with pytest.raises(ValueError) as info:
        Budget(**{field: value})
    assert str(info.value).startswith(
        f"`Budget.{field}` must be a finite number {floor}; got {value!r}. "
    )
    assert Budget(grace_s=0).deadline(20_000) == 1.0  # no grace is a bound still


@pytest.mark.slow  # waits out the default deadlines (both loads at once, ~35 s)
def test_at_the_defaults_a_trickle_is_given_up_and_a_stall_skipped_in_time(
    loads_at_the_defaults, tmp_path, mirrors
):
    loads = loads_at_the_defaults  # started with the file: this test is its last
    if loads is None:  # the file spread over workers: they start here
        with ThreadPoolExecutor(2) as pool:  # leaving it waits for both
            loads = _load_at_the_defaults(pool, mirrors, tmp_path)
    given_up, given_up_s = loads["gives_up"].result()
    skipped, skipped_s = loads["skips"].result()
    assert given_up.returncode == 1, given_up.stderr
    assert "too slow: " in given_up.stderr and "after the first 30 s" in given_up.stderr
    assert given_up_s < 150
    assert _parts(loads["top"] / "a") == []
    assert skipped.returncode == 0, skipped.stderr
    assert f"mirror {loads['stalled']} failed (no answer for 30 s)" in skipped.stderr
    assert skipped_s < 60
    print(
        f"trickle given up after {given_up_s:.1f} s; stall skipped, loaded after "
        f"{skipped_s:.1f} s"
    )
