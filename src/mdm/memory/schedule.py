"""Thread blocks to SMs, and the time order of the memory instructions.

The cache simulator is timed: the order in which the L1s and the shared L2 see the
accesses, and which misses are still *in flight* when a later access to the same line
arrives (MSHR merging, hit vs pending hit), depend on time. :func:`timed_layout` gives
the static inputs (blocks in launch order, every warp's issue segments: a segment ends
before the first instruction that reads a register loaded in it, and after a barrier)
and :func:`run_timed` issues them with timing feedback from the caches:

* **Block assignment** (GPGPU-Sim ``issue_block2core``): every SM has
  ``blocks_per_sm`` residency slots; the first blocks fill them round robin (block
  ``r`` -> SM ``r mod n_sm``), and when a block's last warp has finished its slot takes
  the next block in launch order, so the SM that frees a slot first gets it (blocks of
  unequal length move to the SMs that finish early).
* **Issue** per SM by ``sm.scheduler_policy``: greedy-then-oldest per warp scheduler
  (warp ``h`` of the SM's slots on scheduler ``h mod sm.schedulers``): each scheduler
  issues its greedy, else its oldest ready warp, and the schedulers take turns at every
  LD/ST instruction (with one scheduler: the oldest ready warp's whole segment); loose
  round robin one instruction of the next ready warp after the last issuer, over the
  SM's warp slots. A warp is ready again when its
  segment's loads have their data, and after a barrier when every unfinished warp of
  its block has reached it; the LD/ST unit and the blocking L1 stall the SM.
* **Across SMs** the SM with the earliest clock always goes next, so the L2 sees all
  SMs' accesses in approximate time order.

See :func:`run_timed` for the details.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdm._jit import njit
from mdm.config.gpu import GPUConfig
from mdm.memory._core import run_timed
from mdm.profile.occupancy import kernel_occupancy
from mdm.traces.model import InstrClass, KernelTrace


def resident_blocks(kernel: KernelTrace, gpu: GPUConfig) -> int:
    """Concurrent blocks per SM (:func:`mdm.profile.occupancy.occupancy`; register counts
    above the architectural maximum, garbage in some trace headers, are ignored)."""
    return kernel_occupancy(gpu, kernel, "ignore").blocks_per_sm


_LD = int(InstrClass.LD_GLOBAL)
_LOCAL = int(InstrClass.LOCAL)
_ATOM = int(InstrClass.ATOMIC)
_BAR = int(InstrClass.BARRIER)


@njit(cache=True)
def _segments(
    warp_ptr: np.ndarray,
    iclass: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    seg_first: np.ndarray,
) -> np.ndarray:
    """Split every warp into issue segments: a segment ends before the first instruction
    that reads a register written by a global/local load or atomic of the same segment,
    and after a barrier. Fills the first instruction ``seg_first`` of every segment
    (then the instruction count); returns the first segment id of every warp (CSR).
    An instruction's sources are looked up only once a load of its segment has written
    a register (``loaded``): a segment's address arithmetic before its first load, most
    of a memory-bound kernel, skips the lookups (stride benchmark trace, 6.2 M warp
    instructions: 51 -> 30 ms)."""
    n = iclass.shape[0]
    nw = warp_ptr.shape[0] - 1
    wseg_ptr = np.zeros(nw + 1, np.int64)
    stamp = np.full(32768, -1, np.int64)
    g = -1
    for w in range(nw):
        wseg_ptr[w] = g + 1
        if warp_ptr[w + 1] == warp_ptr[w]:
            continue
        g += 1
        seg_first[g] = warp_ptr[w]
        loaded = False  # a load of segment g has written a register
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            new = False
            if i > warp_ptr[w]:
                if iclass[i - 1] == _BAR:
                    new = True
                elif loaded:
                    for q in range(src.shape[1]):
                        r = src[i, q]
                        if r >= 0 and stamp[r] == g:
                            new = True
                            break
            if new:
                g += 1
                seg_first[g] = i
                loaded = False
            c = iclass[i]
            if c == _LD or c == _LOCAL or c == _ATOM:
                for q in range(dst.shape[1]):
                    d = dst[i, q]
                    if d >= 0:
                        stamp[d] = g
                        loaded = True
    wseg_ptr[nw] = g + 1
    seg_first[g + 1] = n
    return wseg_ptr


@dataclass
class TimedLayout:
    """Static inputs of :func:`run_timed`: blocks in launch order, warp order, segments."""

    order: np.ndarray  # int64[n_warps]: warps sorted by (block rank, age)
    blk_ptr: np.ndarray  # int64[n_blocks+1]: every block's warps in ``order``
    wblk: np.ndarray  # int64[n_warps]: the block of every position of ``order``
    wseg_ptr: np.ndarray  # int64[n_warps+1]: segments of every warp (CSR)
    seg_first: np.ndarray  # int64[n_seg+1]: first instruction of every segment
    seg_bar: np.ndarray  # bool[n_seg]: the segment ends with a barrier (BAR)
    n_active_sms: int
    n_waves: int


def kernel_segments(kernel: KernelTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(wseg_ptr, seg_first, seg_bar)`` of :class:`TimedLayout`: the issue segments of
    every warp (:func:`_segments`), which depend on the kernel only. ``seg_first`` is
    allocated by NumPy (huge pages; numba's allocator page-faults every 4 KiB of a large
    array)."""
    seg_first = np.empty(kernel.n_instructions + 1, np.int64)
    wseg_ptr = _segments(
        kernel.warp_ptr.astype(np.int64),
        np.ascontiguousarray(kernel.iclass, dtype=np.uint8),
        np.ascontiguousarray(kernel.src, dtype=np.int16),
        np.ascontiguousarray(kernel.dst, dtype=np.int16),
        seg_first,
    )
    seg_first = seg_first[: int(wseg_ptr[-1]) + 1]
    seg_bar = kernel.iclass[seg_first[1:] - 1] == _BAR  # a barrier ends the segment
    return wseg_ptr, seg_first, seg_bar


def timed_layout(
    kernel: KernelTrace,
    n_sm: int,
    blocks_per_sm: int,
    segments: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> TimedLayout:
    """Blocks in launch order (:func:`run_timed` gives them to SMs) and issue segments
    (:func:`_segments`; ``segments``: :func:`kernel_segments` of ``kernel`` computed
    before, to reuse)."""
    n_warps = kernel.n_warps
    if n_warps == 0:
        z = np.zeros(1, np.int64)
        return TimedLayout(z[:0], z, z[:0], z, z, np.zeros(0, np.bool_), 0, 0)
    blocks, block_rank = np.unique(kernel.warp_block, return_inverse=True)
    n_active = min(n_sm, blocks.shape[0])
    order = np.lexsort((np.arange(n_warps), block_rank)).astype(np.int64)
    rank = block_rank[order]
    first = np.r_[True, rank[1:] != rank[:-1]]  # a block's first warp
    wseg_ptr, seg_first, seg_bar = kernel_segments(kernel) if segments is None else segments
    return TimedLayout(
        order=order,
        blk_ptr=np.r_[np.flatnonzero(first), n_warps].astype(np.int64),
        wblk=np.cumsum(first, dtype=np.int64) - 1,
        wseg_ptr=wseg_ptr,
        seg_first=seg_first,
        seg_bar=seg_bar,
        n_active_sms=n_active,
        n_waves=-(-blocks.shape[0] // (n_active * blocks_per_sm)),
    )


__all__ = [
    "TimedLayout",
    "kernel_segments",
    "resident_blocks",
    "run_timed",
    "timed_layout",
]
