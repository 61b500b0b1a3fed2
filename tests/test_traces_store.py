"""Trace store (``.mdmtrace``): format checks, the lazy listing, corrupt kernels."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from mdm.errors import TraceFormatError
from mdm.profile.handmade import kernel_from_warps
from mdm.traces.model import AppTrace, Memcpy
from mdm.traces.model import InstrClass as C
from mdm.traces.store import is_store, lazy_store, load_store, save_store


def _app() -> AppTrace:
    """memcpy, kernel, memcpy, kernel: 2 kernels, 2 copies."""
    k = kernel_from_warps(
        [[(C.LD_GLOBAL, [1], [0], [4 * i for i in range(32)]), (C.INT, [2], [1])]]
    )
    k = dataclasses.replace(k, header={"-gpgpu_ptx_sim_mode": "0"})
    return AppTrace(commands=[Memcpy(0, 256), k, Memcpy(4096, 64), k], name="two")


def test_lazy_listing_counts_kernels_not_copies(tmp_path: Path) -> None:
    """A store of memcpy, kernel, memcpy, kernel: the lazy app has 2 kernels and yields
    the 4 commands in order (copies with their address and size, the header kept)."""
    p = save_store(_app(), tmp_path / "a.mdmtrace")
    lazy = lazy_store(p)
    assert lazy.n_kernels == 2 and lazy.name == "two"
    cmds = list(lazy.iter_commands())
    assert cmds[0] == Memcpy(0, 256) and cmds[2] == Memcpy(4096, 64)
    assert [c.header for c in cmds[1::2]] == [{"-gpgpu_ptx_sim_mode": "0"}] * 2


def test_another_store_version_is_refused(tmp_path: Path) -> None:
    """meta.json of this format but version 2: a TraceFormatError naming both versions."""
    p = save_store(_app(), tmp_path / "a.mdmtrace")
    meta = json.loads((p / "meta.json").read_text())
    meta["version"] = 2
    (p / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(TraceFormatError, match=r"version 1, found mdm-trace-store version 2"):
        load_store(p)


def test_is_store_reads_the_format_name(tmp_path: Path) -> None:
    """A folder is a store when its meta.json names the format: not with another format's
    name, nor with a JSON list, nor without meta.json."""
    d = tmp_path / "d"
    d.mkdir()
    assert not is_store(d)
    (d / "meta.json").write_text(json.dumps({"format": "other", "version": 1}))
    assert not is_store(d)
    (d / "meta.json").write_text("[]")
    assert not is_store(d)
    assert is_store(save_store(_app(), tmp_path / "a.mdmtrace"))


def test_a_kernel_whose_arrays_disagree_is_refused(tmp_path: Path) -> None:
    """k0.pc.npy with 3 entries (right dtype) for a kernel of 2 instructions: the loaded
    kernel fails validation, a TraceFormatError naming kernel 0."""
    p = save_store(_app(), tmp_path / "a.mdmtrace")
    pc = np.load(p / "k0.pc.npy")
    np.save(p / "k0.pc.npy", np.zeros(3, pc.dtype))
    with pytest.raises(TraceFormatError, match="kernel 0"):
        load_store(p)
