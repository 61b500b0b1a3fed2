"""Atomic writes (``mdm._atomic``): all or nothing, with a plain file's permissions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mdm._atomic import atomic_dir, atomic_file, atomic_write_bytes


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_and_folders_get_the_umasks_permissions(mask: int, tmp_path: Path) -> None:
    """As ``open`` and ``mkdir`` would make them (0666 / 0777 less the umask), not the
    temp file's 0600 and temp folder's 0700."""
    old = os.umask(mask)
    try:
        atomic_write_bytes(tmp_path / "a.csv", b"x")
        with atomic_dir(tmp_path / "d") as d:
            (d / "f").write_text("y")
    finally:
        os.umask(old)
    assert (tmp_path / "a.csv").stat().st_mode & 0o777 == 0o666 & ~mask
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o777 & ~mask
    assert os.umask(old) == old  # reading the umask left it as it was
    os.umask(old)


def test_an_error_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    atomic_write_bytes(target, b"old")
    with pytest.raises(RuntimeError), atomic_file(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_a_folder_at_the_target_is_named_before_writing(tmp_path: Path) -> None:
    """``--out DIR`` where a file is expected: an error naming DIR (not the temp file
    beside it, as os.replace's did), and nothing left behind."""
    (tmp_path / "out").mkdir()
    with pytest.raises(IsADirectoryError, match=r"a folder is there.*'.*out'"):
        atomic_write_bytes(tmp_path / "out", b"x")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_the_temp_file_is_beside_the_target_and_gone_after(tmp_path: Path) -> None:
    """The temp file lives in the target's folder (so ``os.replace`` is a rename on one
    file system, never a copy that a reader could see half-done) and is hidden."""
    target = tmp_path / "sub" / "r.csv"
    with atomic_file(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".r.csv.")
        assert not target.exists()  # nothing at the target until the block ends
        tmp.write_text("new")
    assert target.read_text() == "new"
    assert [p.name for p in target.parent.iterdir()] == ["r.csv"]


def test_atomic_dir_replaces_whole_or_leaves_the_old_folder(tmp_path: Path) -> None:
    """A finished block replaces an existing folder whole (its old files gone, no
    ``.old`` copy left); a failed one leaves the old folder as it was and no temp
    folder; a file at the target is refused before anything is written."""
    target = tmp_path / "report"
    with atomic_dir(target) as d:
        assert d.parent == tmp_path and d != target
        (d / "old.html").write_text("1")
    with atomic_dir(target) as d:
        (d / "new.html").write_text("2")
    assert sorted(p.name for p in target.iterdir()) == ["new.html"]
    assert [p.name for p in tmp_path.iterdir()] == ["report"]
    with pytest.raises(RuntimeError), atomic_dir(target) as d:
        (d / "half.html").write_text("3")
        raise RuntimeError("killed")
    assert sorted(p.name for p in target.iterdir()) == ["new.html"]
    assert [p.name for p in tmp_path.iterdir()] == ["report"]
    (tmp_path / "afile").write_text("x")
    with pytest.raises(FileExistsError, match="afile exists and is not a folder"):
        with atomic_dir(tmp_path / "afile"):
            pass
    assert (tmp_path / "afile").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "report"]
