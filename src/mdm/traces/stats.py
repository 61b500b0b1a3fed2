"""Trace summary statistics for ``mdm trace info``: counts, instruction mix and DPKI.

DPKI (paper 001, Section I) is *divergent loads per kilo warp instructions*. The
paper calls a load divergent when its threads access different cache lines; we make
that precise (our choice, tested): a **global load** (class ``LD_GLOBAL``) is
divergent when the number of distinct 128-byte lines touched by its active lanes
(line of each lane's start address) exceeds the minimum that could hold the bytes
it reads when packed contiguously from its lowest address,
``ceil((min_addr % 128 + active_lanes * mem_width) / 128)``. A unit-stride ``LDG.E``
(one line, or two when not 128 B aligned) or ``LDG.E.128`` (four or five) is
therefore not divergent; the paper's Listing 1 with GS=32 (32 lines for 128 bytes)
and point-major k-means (a 64 B stride) are.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mdm.traces.model import MEMORY_CLASSES, AnyApp, InstrClass, KernelTrace, Memcpy

LINE_BYTES = 128


def lines_touched(kt: KernelTrace, line_bytes: int = LINE_BYTES) -> np.ndarray:
    """Number of distinct ``line_bytes`` lines touched by each instruction (0 if no addresses)."""
    n = kt.n_instructions
    counts = np.diff(kt.addr_ptr)
    if kt.addrs.shape[0] == 0:
        return np.zeros(n, np.int64)
    inst = np.repeat(np.arange(n, dtype=np.int64), counts)
    line = np.asarray(kt.addrs) // np.uint64(line_bytes)
    order = np.lexsort((line, inst))
    inst_s, line_s = inst[order], line[order]
    new = np.ones(inst_s.shape[0], bool)
    new[1:] = (inst_s[1:] != inst_s[:-1]) | (line_s[1:] != line_s[:-1])
    return np.bincount(inst_s[new], minlength=n).astype(np.int64)


def divergent_loads(kt: KernelTrace, line_bytes: int = LINE_BYTES) -> np.ndarray:
    """Boolean mask of the divergent global loads of ``kt`` (definition in the module doc)."""
    counts = np.diff(kt.addr_ptr)
    is_load = (kt.iclass == InstrClass.LD_GLOBAL) & (counts > 0)
    touched = lines_touched(kt, line_bytes)
    offset = np.zeros(kt.n_instructions, np.int64)
    nz = counts > 0
    if np.any(nz):
        lo = np.minimum.reduceat(np.asarray(kt.addrs), kt.addr_ptr[:-1][nz])
        offset[nz] = (lo % np.uint64(line_bytes)).astype(np.int64)
    nbytes = counts * kt.mem_width.astype(np.int64)
    need = -(-(offset + nbytes) // line_bytes)
    return is_load & (touched > np.maximum(need, 1))


def kernel_stats(kt: KernelTrace) -> dict[str, Any]:
    """Counts, instruction mix and DPKI of one kernel."""
    n = kt.n_instructions
    mix = np.bincount(kt.iclass, minlength=len(InstrClass))
    mem_ids = [int(c) for c in MEMORY_CLASSES]
    div = int(divergent_loads(kt).sum()) if n else 0
    return {
        "name": kt.name,
        "kernel_id": kt.kernel_id,
        "grid": list(kt.grid),
        "block": list(kt.block),
        "thread_blocks": int(np.unique(kt.warp_block).shape[0]),
        "warps": kt.n_warps,
        "warp_instructions": n,
        "thread_instructions": kt.thread_instructions,
        "memory_instructions": int(mix[mem_ids].sum()),
        "global_loads": int(mix[InstrClass.LD_GLOBAL]),
        "divergent_loads": div,
        "dpki": 1000.0 * div / n if n else 0.0,
        "mix": {c.name.lower(): int(mix[c]) for c in InstrClass},
    }


def app_stats(app: AnyApp) -> dict[str, Any]:
    """Totals over the kernels of ``app`` plus the per-kernel statistics (one kernel in
    memory at a time for a :class:`~mdm.traces.model.LazyApp`)."""
    per: list[dict[str, Any]] = []
    memcpys = 0
    for cmd in app.iter_commands():
        if isinstance(cmd, Memcpy):
            memcpys += 1
        else:
            per.append(kernel_stats(cmd))
        del cmd  # not kept alive while the next kernel is read
    keys = (
        "thread_blocks",
        "warps",
        "warp_instructions",
        "thread_instructions",
        "memory_instructions",
        "global_loads",
        "divergent_loads",
    )
    tot = {k: sum(p[k] for p in per) for k in keys}
    n = tot["warp_instructions"]
    mix = {c.name.lower(): sum(p["mix"][c.name.lower()] for p in per) for c in InstrClass}
    return {
        "name": app.name,
        "kernels": len(per),
        "memcpys": memcpys,
        **tot,
        "dpki": 1000.0 * tot["divergent_loads"] / n if n else 0.0,
        "mix": mix,
        "per_kernel": per,
    }
