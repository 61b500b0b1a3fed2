"""Atomic writes shared by the stages: a temp file (or folder) beside the target, then
``os.replace``, so a reader never sees a half-written result and a crash leaves the old
one (or none). What is written gets the permissions of a plain ``open`` (0666, or 0777
for a folder, less the umask), not the temp file's private 0600."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_dir", "atomic_file", "atomic_write_bytes"]


def _umask() -> int:
    mask = os.umask(0o022)  # read it (the only way before Python 3.13), then restore
    os.umask(mask)
    return mask


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """A temp file beside ``path`` to write (by name); when the block ends without an
    error it becomes ``path``, on an error it is deleted. A folder at ``path`` is an
    :class:`IsADirectoryError` naming it, before anything is written."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "a folder is there, expected a file name", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        tmp.chmod(0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same folder and ``os.replace``."""
    with atomic_file(path) as tmp:
        tmp.write_bytes(data)


@contextmanager
def atomic_dir(path: Path) -> Iterator[Path]:
    """A new temp folder beside ``path`` to write into; when the block ends without an
    error it becomes ``path`` (an existing folder there is replaced whole), on an error
    it is deleted and ``path`` is left as it was. Deciding whether an existing ``path``
    may be replaced is the caller's job."""
    if path.exists() and not path.is_dir():
        raise FileExistsError(f"{path} exists and is not a folder")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    tmp.chmod(0o777 & ~_umask())
    old = None
    if path.exists():
        old = tmp.with_suffix(".old")
        os.replace(path, old)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
