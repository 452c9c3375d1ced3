"""Files the kit writes: whole or not at all, never through a symlink out of the folder,
and a failed write that names the path and what to do."""

import errno
import os
from pathlib import Path

import pytest

from jaxtour import _files
from jaxtour._files import WriteError, copy_atomically, copy_tree, write_atomically
from jaxtour.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _full_disk_after(monkeypatch, nbytes: int) -> None:
    """Writes in `_files` fail with ENOSPC once `nbytes` have gone through."""
    left = [nbytes]

    class Full:
        def __init__(self, out):
            self.out = out

        def write(self, data):
            if len(data) > left[0]:
                self.out.write(data[: left[0]])
                raise OSError(errno.ENOSPC, "No space left on device")
            left[0] -= len(data)
            return self.out.write(data)

    real_write = _files._write
    monkeypatch.setattr(
        _files, "_write", lambda path, fill: real_write(path, lambda o: fill(Full(o)))
    )


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*"))


def test_a_symlink_at_the_target_is_replaced_and_its_file_left_alone(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.txt").symlink_to(outside)
    write_atomically(tmp_path / "out" / "a.txt", b"new")
    assert outside.read_text() == "precious"
    assert not (tmp_path / "out" / "a.txt").is_symlink()
    assert (tmp_path / "out" / "a.txt").read_text() == "new"


def test_a_dangling_symlink_creates_nothing_where_it_points(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.txt").symlink_to(tmp_path / "elsewhere.txt")
    copy_atomically(Path(__file__), tmp_path / "out" / "a.txt")
    assert not (tmp_path / "elsewhere.txt").exists()
    assert (tmp_path / "out" / "a.txt").read_bytes() == Path(__file__).read_bytes()


def test_copy_tree_replaces_symlinked_files_and_folders_inside_the_target(tmp_path):
    source = tmp_path / "src"
    (source / "dist").mkdir(parents=True)
    (source / "dist" / "r.css").write_text("css")
    (source / "top.js").write_text("js")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "r.css").write_text("mine")
    target = tmp_path / "out" / "reveal.js"
    target.mkdir(parents=True)
    (target / "dist").symlink_to(elsewhere)  # a folder link out of the target
    (target / "top.js").symlink_to(elsewhere / "r.css")
    written = copy_tree(source, target)
    assert sorted(p.relative_to(target).as_posix() for p in written) == [
        "dist/r.css",
        "top.js",
    ]
    assert (elsewhere / "r.css").read_text() == "mine"
    assert _names(elsewhere) == ["r.css"]
    assert (target / "dist" / "r.css").read_text() == "css"


def test_a_full_disk_leaves_no_partial_file_and_names_the_path(tmp_path, monkeypatch):
    _full_disk_after(monkeypatch, 100)
    (tmp_path / "out").mkdir()
    with pytest.raises(WriteError) as info:
        copy_atomically(Path(__file__), tmp_path / "out" / "big.py")
    assert str(info.value) == (
        f"Could not write {tmp_path / 'out' / 'big.py'}: no space left on that disk. "
        "Free some space, or write elsewhere. Nothing half-written was left."
    )
    assert info.value.errno == errno.ENOSPC
    assert _names(tmp_path / "out") == []  # no .part file, no truncated copy


def test_a_full_disk_keeps_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "a.json"
    path.write_text("old")
    monkeypatch.setattr(
        _files.os,
        "replace",
        lambda *a: (_ for _ in ()).throw(OSError(errno.ENOSPC, "x")),
    )
    with pytest.raises(WriteError, match="no space left on that disk"):
        write_atomically(path, b"new contents")
    assert path.read_text() == "old"
    assert _names(tmp_path) == ["a.json"]


def test_a_folder_that_cannot_be_made_is_named_with_what_to_do(tmp_path, monkeypatch):
    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(WriteError) as info:
        write_atomically(tmp_path / "new" / "a.svg", b"<svg/>")
    assert str(info.value) == (
        f"Could not write {tmp_path / 'new'}: permission denied. Choose a folder you can "
        "write to, or fix its permissions. Nothing half-written was left."
    )


def test_ctrl_c_during_a_write_leaves_nothing(tmp_path):
    def interrupted(out):
        out.write(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _files._write(tmp_path / "a.bin", interrupted)
    assert _names(tmp_path) == []


# --- the commands ---------------------------------------------------------------------


def test_jaxtour_lessons_replaces_a_dangling_symlink_only_with_force(tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "00_setup.ipynb").symlink_to(tmp_path / "outside.ipynb")
    assert main(["lessons", str(mine)]) == 1
    err = capsys.readouterr().err
    assert "1 lesson files that differ from jaxtour's (00_setup.ipynb, ...)" in err
    assert "a symlink is replaced by the file, never written through" in err
    assert main(["lessons", str(mine), "--force"]) == 0
    assert not (tmp_path / "outside.ipynb").exists()
    assert not (mine / "00_setup.ipynb").is_symlink()
    assert (mine / "00_setup.ipynb").read_bytes() == (
        ROOT / "notebooks" / "00_setup.ipynb"
    ).read_bytes()


def test_jaxtour_lessons_on_a_full_disk_leaves_nothing_a_rerun_calls_edits(
    tmp_path, monkeypatch, capsys
):
    mine = tmp_path / "mine"
    with monkeypatch.context() as patch:
        _full_disk_after(patch, 1000)
        assert main(["lessons", str(mine)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"jaxtour lessons: error: Could not write {mine / '00_setup'}"
    )
    assert "no space left on that disk" in err
    assert all(p.stat().st_size > 0 for p in mine.iterdir())  # no 0-byte lesson
    assert main(["lessons", str(mine)]) == 0  # what was copied is jaxtour's own bytes


def test_jaxtour_slides_never_writes_through_a_reveal_symlink(tmp_path, capsys):
    outside = tmp_path / "outside.css"
    outside.write_text("precious")
    dist = tmp_path / "build" / "slides" / "reveal.js" / "dist"
    dist.mkdir(parents=True)
    (dist / "reveal.css").symlink_to(outside)
    lesson = ROOT / "notebooks" / "00_setup.py"
    assert main(["slides", str(lesson), "--build-dir", str(tmp_path / "build")]) == 0
    assert outside.read_text() == "precious"
    assert not (dist / "reveal.css").is_symlink()


def test_jaxtour_slides_on_a_full_disk_names_the_file_and_leaves_no_part(
    tmp_path, monkeypatch, capsys
):
    _full_disk_after(monkeypatch, 50_000)
    lesson = ROOT / "notebooks" / "00_setup.py"
    assert main(["slides", str(lesson), "--build-dir", str(tmp_path / "build")]) == 1
    err = capsys.readouterr().err.splitlines()[1:]  # after the note on .py lessons
    assert err[0].startswith("jaxtour slides: error: Could not write ")
    assert err[0].endswith(
        ": no space left on that disk. Free some space, or write elsewhere. Nothing "
        "half-written was left."
    )
    assert "[(" not in err[0]  # not the repr of shutil's list of errors
    reveal = tmp_path / "build" / "slides" / "reveal.js"
    assets = _files_of(_files_root())
    for path in reveal.rglob("*"):
        assert not path.name.endswith(".part")
        if path.is_file():
            rel = path.relative_to(reveal).as_posix()
            assert path.read_bytes() == assets[rel]  # every file there is whole


def _files_root() -> Path:
    from jaxtour.slides import assets_dir

    return assets_dir() / "vendor" / "reveal.js"


def _files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file()
    }


def test_write_errors_keep_os_error_for_callers_that_catch_it(tmp_path):
    err = WriteError(tmp_path / "x", OSError(errno.EROFS, "Read-only file system"))
    assert isinstance(err, OSError)
    assert err.filename == str(tmp_path / "x")
    assert "the disk is read-only. Write to another folder" in str(err)
    assert os.fspath(tmp_path / "x") in str(err)


def test_jaxtour_tour_on_a_full_disk_names_the_file_and_leaves_no_part(
    tmp_path, monkeypatch, capsys
):
    _full_disk_after(monkeypatch, 2000)
    build = tmp_path / "build"
    assert main(["tour", "--only", "diagrams", "--build-dir", str(build)]) == 1
    err = [e for e in capsys.readouterr().err.splitlines() if e.startswith("jaxtour")]
    assert err[0].startswith(f"jaxtour tour: error: Could not write {build}")
    assert err[0].endswith(
        ": no space left on that disk. Free some space, or write "
        "elsewhere. Nothing half-written was left."
    )
    assert not [p for p in build.rglob("*") if p.name.endswith(".part")]
    assert all(p.stat().st_size > 0 for p in build.rglob("*") if p.is_file())


@pytest.mark.parametrize("below", ["", "sub/"])
def test_a_file_where_a_folder_should_be_is_named_with_what_to_do(below, tmp_path):
    blocker = tmp_path / "m.py"
    blocker.write_text("print('mine')")
    with pytest.raises(WriteError) as info:
        write_atomically(tmp_path / f"m.py/{below}x.svg", b"<svg/>")
    assert f"{blocker} is a file, where a folder should be. Move or rename it" in str(
        info.value
    )
    assert blocker.read_text() == "print('mine')"
    (tmp_path / "x.svg").mkdir()
    with pytest.raises(WriteError, match="a folder is there, where the file goes"):
        write_atomically(tmp_path / "x.svg", b"<svg/>")
    assert _names(tmp_path) == ["m.py", "x.svg"]


def test_a_build_folder_or_lesson_cache_that_is_a_file_is_named(tmp_path, capsys):
    from jaxtour import lesson

    taken = tmp_path / "build"
    taken.write_text("")
    assert main(["tour", "--only", "diagrams", "--build-dir", str(taken / "b")]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"jaxtour tour: error: Could not write {taken / 'b'}: ")
    assert f"{taken} is a file, where a folder should be" in err
    assert not (tmp_path / "b").exists()
    source = tmp_path / "01_demo.py"
    source.write_text("# %%\n1\n")
    with pytest.raises(WriteError) as info:
        lesson.executed(source, cache=taken)  # before any kernel starts
    assert f"{taken} is a file, where a folder should be" in str(info.value)


@pytest.mark.parametrize("case", ["a file", "below a file", "no permission"])
def test_check_folder_says_what_make_folder_would_and_makes_nothing(
    case, tmp_path, monkeypatch
):
    (tmp_path / "notes").write_text("mine")
    folder = tmp_path / {"a file": "notes", "below a file": "notes/sub/mlp"}.get(
        case, "new/mlp"
    )
    if case == "no permission":  # as a user who may not write in tmp_path (not root)

        def refuse(self, *args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))

        monkeypatch.setattr(Path, "mkdir", refuse)
        monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path)
    with pytest.raises(WriteError) as checked:
        _files.check_folder(folder)
    with pytest.raises(WriteError) as made:
        _files.make_folder(folder)
    assert str(checked.value) == str(made.value)
    assert ("permission denied" in str(made.value)) == (case == "no permission")
    assert _names(tmp_path) == ["notes"]
    monkeypatch.undo()
    _files.check_folder(tmp_path / "new" / "mlp")  # one that can be made: made not
    assert _names(tmp_path) == ["notes"]


def test_check_folder_refuses_an_existing_folder_it_cannot_write(tmp_path, monkeypatch):
    """`jaxtour train` into a read-only build/mlp: said before training, not after."""
    folder = tmp_path / "mlp"
    folder.mkdir()
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != folder)
    with pytest.raises(WriteError) as checked:
        _files.check_folder(folder)
    assert str(folder) in str(checked.value)
    assert "permission denied" in str(checked.value).lower()
