"""MNIST files: checksums, truncation, offline, real downloads from 127.0.0.1 mirrors."""

from __future__ import annotations

import gzip
import shutil
import socket
import struct
from pathlib import Path

import numpy as np
import pytest
from mirrors import HAVE_MNIST, NAMES, SHARED, Mirrors, mirror_root

from jaxtour.data import _download
from jaxtour.data._mnist import read_idx
from jaxtour.mlp import Mnist, MnistFormatError, MnistUnavailableError, load_mnist

needs_mnist = pytest.mark.skipif(not HAVE_MNIST, reason=f"MNIST files not in {SHARED}")


@pytest.fixture
def mirror_dir(tmp_path: Path) -> Path:
    """A mirror's document root: /mnist/<the four files> (links to the shared copies)."""
    return mirror_root(tmp_path / "www")


@pytest.fixture
def serve():
    """serve(folder, mode) -> base URL of a mirror on 127.0.0.1 for this test."""
    started = {}

    def start(folder: Path, mode: str = "good") -> str:
        started.setdefault(folder, Mirrors(folder))
        return started[folder].start(mode)

    yield start
    for mirrors in started.values():
        mirrors.close()


@pytest.fixture
def dead_mirror() -> str:
    """A URL on a port where nothing listens: connection refused, like being offline."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/mnist/"


def _leftovers(folder: Path) -> list[str]:
    return sorted(
        p.name for p in folder.iterdir() if p.name.startswith(".") or "part" in p.name
    )


def _with_files(folder: Path, copy: str | None = None) -> Path:
    """`folder` holding the four files: links, except `copy`, a real copy we may damage."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        if name == copy:
            shutil.copyfile(SHARED / name, folder / name)
        else:
            (folder / name).symlink_to(SHARED / name)
    return folder


@needs_mnist
def test_loads_the_shared_files_with_the_published_shapes():
    mnist = load_mnist(SHARED, mirrors=[])
    assert mnist.train_images.shape == (60000, 28, 28)
    assert mnist.train_images.dtype == np.uint8
    assert mnist.test_images.shape == (10000, 28, 28)
    assert mnist.train_labels.shape == (60000,) and mnist.test_labels.shape == (10000,)
    # The first five test labels are famous: 7, 2, 1, 0, 4.
    assert mnist.test_labels[:5].tolist() == [7, 2, 1, 0, 4]
    assert np.bincount(mnist.train_labels).tolist()[:2] == [5923, 6742]
    assert mnist.train_images.max() == 255


@needs_mnist
def test_download_skips_a_failing_and_a_bad_mirror(
    tmp_path, serve, mirror_dir, dead_mirror
):
    folder = tmp_path / "cache"
    mirrors = [
        dead_mirror,
        serve(mirror_dir, "wrong-bytes"),
        serve(mirror_dir, "truncating"),
        serve(mirror_dir),
    ]
    mnist = load_mnist(folder, mirrors=mirrors, progress=False)
    assert sorted(p.name for p in folder.iterdir()) == sorted(NAMES)  # nothing else
    for name in NAMES:
        assert (folder / name).read_bytes() == (SHARED / name).read_bytes()
    assert oct((folder / NAMES[0]).stat().st_mode & 0o777) == "0o644"
    assert mnist.test_labels[:3].tolist() == [7, 2, 1]


@needs_mnist
def test_download_shows_progress(tmp_path, serve, mirror_dir, capsys):
    load_mnist(tmp_path, mirrors=[serve(mirror_dir)], progress=True)
    assert "t10k-labels-idx1-ubyte.gz" in capsys.readouterr().err


def test_offline_with_no_files_names_folder_variable_and_files(tmp_path, dead_mirror):
    folder = tmp_path / "empty"
    with pytest.raises(MnistUnavailableError) as info:
        load_mnist(folder, mirrors=[dead_mirror], progress=False)
    message = str(info.value)
    assert (
        f"MNIST is not usable in {folder}: train-images-idx3-ubyte.gz is missing"
        in message
    )
    assert f"{dead_mirror}train-images-idx3-ubyte.gz: cannot connect" in message
    assert "set JAXTOUR_DATA to a folder holding them" in message
    for name in NAMES:
        assert name in message
    assert not folder.exists()  # no partial file, and not the folder it made


def test_a_failed_download_leaves_no_folder_it_made_and_keeps_the_others(
    tmp_path, dead_mirror
):
    (tmp_path / "kept").mkdir()
    folder = tmp_path / "kept" / "typo" / "mnist"
    with pytest.raises(MnistUnavailableError):
        load_mnist(folder, mirrors=[dead_mirror], progress=False)
    assert list(tmp_path.iterdir()) == [tmp_path / "kept"]
    assert list((tmp_path / "kept").iterdir()) == []


def test_a_file_given_as_the_folder_is_named_as_a_file(tmp_path, dead_mirror):
    notes = tmp_path / "SOURCES.md"
    notes.write_text("notes")
    with pytest.raises(MnistUnavailableError) as info:
        load_mnist(notes, mirrors=[dead_mirror], progress=False)
    assert str(info.value) == (
        f"MNIST cannot be loaded: {notes} is a file, not a folder. Point JAXTOUR_DATA "
        "(or --data-dir) at the folder that holds the four files, or at a new one they "
        "can be downloaded to."
    )
    assert notes.read_text() == "notes"


def test_one_mirror_given_as_a_string_is_refused_before_any_request(tmp_path):
    folder = tmp_path / "cache"
    url = "http://127.0.0.1:9/mnist/"
    with pytest.raises(TypeError) as info:
        load_mnist(folder, mirrors=url, progress=False)  # not each character a mirror
    assert str(info.value) == (
        "`mirrors` must be a list of base URLs, tried in order; got the string "
        f"'{url}'. Pass mirrors=['{url}']."
    )
    assert not folder.exists()


@needs_mnist
def test_only_bad_mirrors_fail_and_leave_nothing(tmp_path, serve, mirror_dir):
    folder = tmp_path / "cache"
    with pytest.raises(MnistUnavailableError) as info:
        load_mnist(
            folder,
            mirrors=[serve(mirror_dir, "wrong-bytes"), serve(mirror_dir, "truncating")],
            progress=False,
        )
    assert "not the published file (9912422 bytes, 440fcabf73cc546f…)" in str(
        info.value
    )
    assert "train-images-idx3-ubyte.gz: served 3304140 bytes" in str(
        info.value
    )  # a third
    assert not folder.exists()


@needs_mnist
def test_corrupt_file_is_never_used_silently(tmp_path, dead_mirror):
    folder = _with_files(tmp_path / "data", copy="t10k-labels-idx1-ubyte.gz")
    damaged = folder / "t10k-labels-idx1-ubyte.gz"
    data = bytearray(damaged.read_bytes())
    data[100] ^= 0xFF  # one flipped byte: same size, wrong SHA-256
    damaged.write_bytes(bytes(data))
    with (
        pytest.warns(UserWarning, match="has SHA-256 .* expected f7ae60f9"),
        pytest.raises(
            MnistUnavailableError, match=r"t10k-labels-idx1-ubyte\.gz is corrupt"
        ),
    ):
        load_mnist(folder, mirrors=[dead_mirror], progress=False)
    assert damaged.read_bytes() == bytes(data)  # left for the user to inspect
    assert _leftovers(folder) == []


@needs_mnist
def test_truncated_file_is_replaced_by_a_verified_download(tmp_path, serve, mirror_dir):
    folder = _with_files(tmp_path / "data", copy="t10k-images-idx3-ubyte.gz")
    truncated = folder / "t10k-images-idx3-ubyte.gz"
    truncated.write_bytes(truncated.read_bytes()[:5000])
    with pytest.warns(
        UserWarning, match=r"has 5000 bytes, expected 1648877 \(truncated\?\)"
    ):
        mnist = load_mnist(folder, mirrors=[serve(mirror_dir)], progress=False)
    assert truncated.read_bytes() == (SHARED / truncated.name).read_bytes()
    assert mnist.test_images.shape == (10000, 28, 28)
    assert _leftovers(folder) == []


def test_unwritable_folder_says_it_cannot_write(tmp_path, dead_mirror):
    (tmp_path / "a-file").write_text("not a folder")
    folder = tmp_path / "a-file" / "mnist"
    with pytest.raises(
        MnistUnavailableError, match=f"cannot write to {folder}: Not a directory"
    ):
        load_mnist(folder, mirrors=[dead_mirror], progress=False)


@needs_mnist
@pytest.mark.parametrize("name", [NAMES[0], NAMES[-1]])  # the last: before any request
def test_a_directory_where_a_file_should_be_is_named_and_no_mirror_is_blamed(
    tmp_path, mirror_dir, name
):
    folder = tmp_path / "data"
    in_the_way = folder / name
    in_the_way.mkdir(parents=True)
    served = Mirrors(mirror_dir)
    try:
        healthy = served.start()
        with pytest.raises(MnistUnavailableError) as info:
            load_mnist(folder, mirrors=[healthy], progress=False)
        assert served.hits[healthy] == []  # no download that could never be renamed
    finally:
        served.close()
    message = str(info.value)
    assert message.startswith(
        f"MNIST cannot be loaded: {in_the_way} is a directory, not the file {name}. "
        "Remove or move that directory"
    )
    assert "set JAXTOUR_DATA to another folder" in message
    assert "missing" not in message and healthy not in message
    assert [p.name for p in folder.iterdir()] == [in_the_way.name]  # nothing else
    assert in_the_way.is_dir() and list(in_the_way.iterdir()) == []


@needs_mnist
def test_a_file_that_cannot_be_read_is_named_and_left_alone(
    tmp_path, mirror_dir, monkeypatch
):
    folder = _with_files(tmp_path / "data")
    unreadable = folder / "train-labels-idx1-ubyte.gz"
    real_sha256_of = _download.sha256_of

    def denied_for_one(path: Path) -> str:  # as chmod 000 would, for anyone but root
        if path == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return real_sha256_of(path)

    monkeypatch.setattr(_download, "sha256_of", denied_for_one)
    served = Mirrors(mirror_dir)
    try:
        healthy = served.start()
        with pytest.raises(MnistUnavailableError) as info:
            load_mnist(folder, mirrors=[healthy], progress=False)
        assert served.hits[healthy] == []  # the user's file is not replaced
    finally:
        served.close()
    assert str(info.value) == (
        f"MNIST cannot be loaded: cannot read {unreadable}: Permission denied. Fix its "
        "permissions so that you can read it, or set JAXTOUR_DATA to a folder holding "
        "readable copies of the four files (or one they can be downloaded to)."
    )
    assert unreadable.is_symlink() and _leftovers(folder) == []


def test_folder_comes_from_jaxtour_data_then_the_xdg_cache(
    tmp_path, monkeypatch, dead_mirror
):
    monkeypatch.setenv("JAXTOUR_DATA", str(tmp_path / "from-env"))
    with pytest.raises(
        MnistUnavailableError, match=f"not usable in {tmp_path}/from-env:"
    ):
        load_mnist(mirrors=[dead_mirror], progress=False)
    monkeypatch.delenv("JAXTOUR_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    with pytest.raises(
        MnistUnavailableError, match=f"not usable in {tmp_path}/xdg/jaxtour/mnist:"
    ):
        load_mnist(mirrors=[dead_mirror], progress=False)


def _tiny_mnist(n_train: int = 20, n_test: int = 7) -> Mnist:
    return Mnist(
        np.zeros((n_train, 28, 28), np.uint8),
        np.arange(n_train, dtype=np.uint8) % 10,
        np.zeros((n_test, 28, 28), np.uint8),
        np.arange(n_test, dtype=np.uint8) % 10,
    )


@pytest.mark.parametrize(
    ("sizes", "said"),
    [
        ((-5, None), "`n_train` must be >= 1 (or None: all); got -5."),  # not all but 5
        ((0, None), "`n_train` must be >= 1 (or None: all); got 0."),
        ((None, -1), "`n_test` must be >= 1 (or None: all); got -1."),
    ],
)
def test_subset_refuses_a_size_below_one_instead_of_slicing_from_the_end(sizes, said):
    with pytest.raises(ValueError) as info:
        _tiny_mnist().subset(*sizes)
    assert str(info.value) == said
    kept = _tiny_mnist().subset(5, None)  # what a size does: the first N, None all
    assert [len(a) for a in kept] == [5, 5, 7, 7]
    assert kept.train_labels.tolist() == [0, 1, 2, 3, 4]


def _idx(path: Path, header: bytes, payload: bytes) -> Path:
    path.write_bytes(gzip.compress(header + payload))
    return path


def test_read_idx_checks_magic_dimensions_and_size(tmp_path):
    header = struct.pack(">II", 0x801, 3)
    labels = read_idx(_idx(tmp_path / "ok-labels.gz", header, b"\x01\x02\x03"))
    assert labels.tolist() == [1, 2, 3]
    images = read_idx(
        _idx(tmp_path / "ok.gz", struct.pack(">IIII", 0x803, 2, 28, 28), bytes(1568))
    )
    assert images.shape == (2, 28, 28)

    bad_magic = _idx(tmp_path / "magic.gz", struct.pack(">II", 0x802, 3), b"abc")
    with pytest.raises(
        MnistFormatError, match=r"^magic.gz has magic number 0x00000802; MNIST"
    ):
        read_idx(bad_magic)
    short = _idx(
        tmp_path / "short.gz", struct.pack(">IIII", 0x803, 2, 28, 28), bytes(1000)
    )
    with pytest.raises(
        MnistFormatError,
        match=r"^short.gz has 1016 bytes after decompression; "
        r"its header \(2, 28, 28\) needs 1584\.$",
    ):
        read_idx(short)
    wrong_size = _idx(
        tmp_path / "size.gz", struct.pack(">IIII", 0x803, 1, 32, 32), bytes(1024)
    )
    with pytest.raises(
        MnistFormatError, match=r"^size.gz holds 32x32 images, not 28x28\.$"
    ):
        read_idx(wrong_size)
    (tmp_path / "plain.gz").write_bytes(b"not gzip at all")
    with pytest.raises(
        MnistFormatError, match=r"^plain.gz is not a readable gzip file"
    ):
        read_idx(tmp_path / "plain.gz")
    cut = gzip.compress(struct.pack(">II", 0x801, 3) + b"abc")[:-12]
    (tmp_path / "cut.gz").write_bytes(cut)
    with pytest.raises(MnistFormatError, match=r"^cut.gz is not a readable gzip file"):
        read_idx(tmp_path / "cut.gz")


def test_a_folder_under_home_is_read_as_a_shell_reads_it(tmp_path, monkeypatch):
    from jaxtour import paths

    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.mnist_dir("~/mnist") == tmp_path / "mnist"
    monkeypatch.setenv(paths.DATA_VARIABLE, "~/data")
    assert paths.mnist_dir() == tmp_path / "data"
