"""Compact binary trace store: one uncompressed ``.npz`` file per application.

Layout (format version :data:`STORE_VERSION`): a JSON document ``meta`` (format
name and version, application name, the ordered commands with each kernel's
header fields and opcode strings) and, for the ``i``-th kernel, one array per
:data:`~mdm.traces.model.ARRAY_FIELDS` entry named ``k<i>.<field>``. Loading maps
the arrays straight back, with no text parsing.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from mdm.errors import TraceFormatError
from mdm.traces.model import ARRAY_FIELDS, AppTrace, KernelTrace, Memcpy

STORE_FORMAT = "mdm-trace-store"
STORE_VERSION = 1
STORE_SUFFIX = ".mdmtrace.npz"


def save_store(app: AppTrace, path: str | Path) -> Path:
    """Save ``app`` to ``path`` (``.npz`` appended by NumPy when missing)."""
    path = Path(path)
    if not path.name.endswith(".npz"):
        path = path.with_name(path.name + ".npz")
    arrays: dict[str, np.ndarray] = {}
    commands: list[dict[str, Any]] = []
    k = 0
    for cmd in app.commands:
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
            arrays[f"k{k}.{f}"] = np.ascontiguousarray(getattr(cmd, f))
        k += 1
    meta = {
        "format": STORE_FORMAT,
        "version": STORE_VERSION,
        "name": app.name,
        "commands": commands,
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path


def is_store(path: str | Path) -> bool:
    """Whether ``path`` is a file that looks like a trace store (zip with a ``meta``)."""
    p = Path(path)
    if not p.is_file() or not zipfile.is_zipfile(p):
        return False
    with zipfile.ZipFile(p) as z:
        return "meta.npy" in z.namelist()


def load_store(path: str | Path) -> AppTrace:
    """Load an application saved by :func:`save_store`."""
    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(path, None, "trace store not found")
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise TraceFormatError(path, None, f"expected an mdm trace store (.npz): {exc}") from None
    with data:
        try:
            meta = json.loads(bytes(data["meta"]).decode("utf-8"))
        except (KeyError, ValueError) as exc:
            raise TraceFormatError(path, None, f"expected a 'meta' JSON entry: {exc}") from None
        if meta.get("format") != STORE_FORMAT or meta.get("version") != STORE_VERSION:
            raise TraceFormatError(
                path,
                None,
                f"expected {STORE_FORMAT} version {STORE_VERSION}, found "
                f"{meta.get('format')} version {meta.get('version')}",
            )
        commands: list[KernelTrace | Memcpy] = []
        for c in meta["commands"]:
            if c["type"] == "memcpy":
                commands.append(Memcpy(addr=int(c["addr"]), nbytes=int(c["nbytes"])))
                continue
            i = c["index"]
            try:
                arrs = {f: data[f"k{i}.{f}"] for f in ARRAY_FIELDS}
            except KeyError as exc:
                raise TraceFormatError(path, None, f"missing array {exc}") from None
            kt = KernelTrace(
                name=c["name"],
                kernel_id=int(c["kernel_id"]),
                grid=tuple(c["grid"]),  # type: ignore[arg-type]
                block=tuple(c["block"]),  # type: ignore[arg-type]
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
                raise TraceFormatError(path, None, f"kernel {i}: {exc}") from None
            commands.append(kt)
    return AppTrace(commands=commands, name=str(meta.get("name", "")))
