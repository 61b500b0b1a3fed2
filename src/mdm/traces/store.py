"""Compact binary trace store: one directory per application.

Layout (format version :data:`STORE_VERSION`)::

    <name>.mdmtrace/
        meta.json          format name and version, application name, the ordered
                           commands (memcpys; kernels with header fields and opcodes)
        k<i>.<field>.npy   one NumPy array per ARRAY_FIELDS entry of the i-th kernel

Loading reads no text: by default the arrays are memory-mapped read-only
(``mmap=True``: near-instant, pages are read on first use and shared between
processes); ``mmap=False`` reads them into memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from mdm.errors import TraceFormatError
from mdm.traces.model import (
    ARRAY_DTYPES,
    ARRAY_FIELDS,
    AnyApp,
    AppTrace,
    KernelTrace,
    LazyApp,
    Memcpy,
)

STORE_FORMAT = "mdm-trace-store"
STORE_VERSION = 1
STORE_SUFFIX = ".mdmtrace"


def save_store(app: AnyApp, path: str | Path) -> Path:
    """Save ``app`` as a store directory at ``path`` (created; existing arrays replaced).

    A :class:`~mdm.traces.model.LazyApp` is written one kernel at a time.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    commands: list[dict[str, Any]] = []
    k = 0
    for cmd in app.iter_commands():
        if isinstance(cmd, Memcpy):
            commands.append({"type": "memcpy", "addr": cmd.addr, "nbytes": cmd.nbytes})
            continue
        cmd.validate()
        commands.append(
            {
                "type": "kernel",
                "index": k,
                "name": cmd.name,
                "kernel_id": cmd.kernel_id,
                "grid": list(cmd.grid),
                "block": list(cmd.block),
                "nregs": cmd.nregs,
                "shmem_bytes": cmd.shmem_bytes,
                "binary_version": cmd.binary_version,
                "opcodes": list(cmd.opcodes),
                "header": dict(cmd.header),
            }
        )
        for f in ARRAY_FIELDS:
            np.save(path / f"k{k}.{f}.npy", np.ascontiguousarray(getattr(cmd, f)))
        k += 1
        del cmd  # not kept alive while the next kernel is read
    meta = {
        "format": STORE_FORMAT,
        "version": STORE_VERSION,
        "name": app.name,
        "commands": commands,
    }
    (path / "meta.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")
    return path


def is_store(path: str | Path) -> bool:
    """Whether ``path`` is a store directory (has a ``meta.json`` naming this format)."""
    meta = Path(path) / "meta.json"
    if not meta.is_file():
        return False
    try:
        return json.loads(meta.read_text(encoding="utf-8")).get("format") == STORE_FORMAT
    except (ValueError, UnicodeDecodeError, AttributeError):
        return False


def _read_meta(path: Path) -> tuple[Path, dict[str, Any]]:
    meta_file = path / "meta.json"
    if not meta_file.is_file():
        raise TraceFormatError(path, None, "expected an mdm trace store directory with meta.json")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise TraceFormatError(meta_file, None, f"expected JSON: {exc}") from None
    if meta.get("format") != STORE_FORMAT or meta.get("version") != STORE_VERSION:
        raise TraceFormatError(
            meta_file,
            None,
            f"expected {STORE_FORMAT} version {STORE_VERSION}, found "
            f"{meta.get('format')} version {meta.get('version')}",
        )
    return meta_file, meta


def _command(path: Path, meta_file: Path, c: dict[str, Any], mmap: bool) -> KernelTrace | Memcpy:
    if c["type"] == "memcpy":
        try:
            return Memcpy(addr=int(c["addr"]), nbytes=int(c["nbytes"]))
        except ValueError as exc:
            raise TraceFormatError(meta_file, None, f"memcpy command: {exc}") from None
    i = c["index"]
    arrs: dict[str, np.ndarray] = {}
    for f in ARRAY_FIELDS:
        fp = path / f"k{i}.{f}.npy"
        try:
            arrs[f] = np.load(fp, mmap_mode="r" if mmap else None, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise TraceFormatError(fp, None, f"expected a NumPy array file: {exc}") from None
        if arrs[f].dtype != ARRAY_DTYPES[f]:
            raise TraceFormatError(
                fp, None, f"expected dtype {ARRAY_DTYPES[f]}, got {arrs[f].dtype}"
            )
    kt = KernelTrace(
        name=c["name"],
        kernel_id=int(c["kernel_id"]),
        grid=tuple(c["grid"]),
        block=tuple(c["block"]),
        nregs=int(c["nregs"]),
        shmem_bytes=int(c["shmem_bytes"]),
        binary_version=int(c["binary_version"]),
        opcodes=tuple(c["opcodes"]),
        header=dict(c["header"]),
        **arrs,
    )
    try:
        kt.validate()
    except ValueError as exc:
        raise TraceFormatError(meta_file, None, f"kernel {i}: {exc}") from None
    return kt


def load_store(path: str | Path, *, mmap: bool = True) -> AppTrace:
    """Load an application saved by :func:`save_store` (memory-mapped unless ``mmap=False``)."""
    path = Path(path)
    meta_file, meta = _read_meta(path)
    commands = [_command(path, meta_file, c, mmap) for c in meta["commands"]]
    return AppTrace(commands=commands, name=str(meta.get("name", "")))


def lazy_store(path: str | Path) -> LazyApp:
    """:func:`load_store` one kernel at a time (memory-mapped; the listing is read now)."""
    path = Path(path)
    meta_file, meta = _read_meta(path)
    cmds = meta["commands"]

    def commands() -> Iterator[KernelTrace | Memcpy]:
        for c in cmds:
            yield _command(path, meta_file, c, True)

    return LazyApp(
        name=str(meta.get("name", "")),
        n_kernels=sum(c["type"] != "memcpy" for c in cmds),
        commands_factory=commands,
        data_bytes=sum(f.stat().st_size for f in path.rglob("*") if f.is_file()),
    )
