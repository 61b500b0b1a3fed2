"""Build small :class:`~mdm.traces.model.KernelTrace` objects by hand (tests, examples).

Each warp is a list of instructions ``(iclass, dst_regs, src_regs)`` or
``(iclass, dst_regs, src_regs, addrs)`` with per-lane addresses for memory
instructions (all 32 lanes active when ``addrs`` has 32 entries; otherwise the first
``len(addrs)`` lanes). PCs are ``16 * position`` in the warp, so the same position
in different warps is the same static instruction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mdm.traces.model import MAX_DST, MAX_SRC, InstrClass, KernelTrace

Inst = tuple  # (InstrClass, Sequence[int], Sequence[int]) or with a 4th item: addresses


def kernel_from_warps(
    warps: Sequence[Sequence[Inst]],
    *,
    name: str = "handmade",
    warps_per_block: int = 1,
    nregs: int = 32,
    shmem_bytes: int = 0,
) -> KernelTrace:
    """A validated kernel whose warps are ``warps`` (module docstring)."""
    if len(warps) % warps_per_block:
        raise ValueError(f"{len(warps)} warps do not fill blocks of {warps_per_block} warps")
    lengths = [len(w) for w in warps]
    n = sum(lengths)
    pc = np.zeros(n, np.uint32)
    iclass = np.zeros(n, np.uint8)
    mask = np.zeros(n, np.uint32)
    dst = np.full((n, MAX_DST), -1, np.int16)
    src = np.full((n, MAX_SRC), -1, np.int16)
    width = np.zeros(n, np.uint8)
    addr_lists: list[np.ndarray] = []
    k = 0
    for w in warps:
        for pos, inst in enumerate(w):
            cls, d, s = inst[0], inst[1], inst[2]
            addrs = np.asarray(inst[3] if len(inst) > 3 else [], dtype=np.uint64)
            pc[k] = 16 * pos
            iclass[k] = int(cls)
            dst[k, : len(d)] = d
            src[k, : len(s)] = s
            lanes = len(addrs) if len(addrs) else 32
            mask[k] = 0xFFFFFFFF if lanes == 32 else (1 << lanes) - 1
            width[k] = 4 if len(addrs) else 0
            addr_lists.append(addrs)
            k += 1
    addr_ptr = np.zeros(n + 1, np.int64)
    addr_ptr[1:] = np.cumsum([a.size for a in addr_lists]) if n else []
    n_blocks = len(warps) // warps_per_block
    kt = KernelTrace(
        name=name,
        kernel_id=1,
        grid=(n_blocks, 1, 1),
        block=(32 * warps_per_block, 1, 1),
        nregs=nregs,
        shmem_bytes=shmem_bytes,
        binary_version=61,
        warp_ptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        warp_block=np.repeat(np.arange(n_blocks, dtype=np.int32), warps_per_block),
        warp_id=np.tile(np.arange(warps_per_block, dtype=np.int32), n_blocks),
        pc=pc,
        opcode=np.asarray(iclass, dtype=np.uint16),
        iclass=iclass,
        mask=mask,
        dst=dst,
        src=src,
        mem_width=width,
        line=np.full(n, -1, np.int32),
        addr_ptr=addr_ptr,
        addrs=np.concatenate(addr_lists) if addr_lists else np.zeros(0, np.uint64),
        opcodes=tuple(c.name for c in InstrClass),
    )
    kt.validate()
    return kt
