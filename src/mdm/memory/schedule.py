"""Thread blocks to SMs, and the time order of the memory instructions.

The cache simulator uses :func:`timed_layout` (blocks in launch order, issue segments)
and :func:`run_timed` (blocks to SMs as slots free, below; GTO or LRR issue per SM with timing
feedback from the caches: a warp waits for its loads' data, the LD/ST unit and the
blocking L1 stall the SM; see its docstring). :func:`schedule_kernel` is the older feedback-free approximation
(described next), kept for callers that need issue times without a cache simulation.

The cache simulator is timing-free, but the order in which the L1s and the shared L2
see the accesses, and which misses are still *in flight* when a later access to the
same line arrives (MSHR merging), depend on time. This module gives every warp
instruction an SM and an approximate issue time in core cycles:

* **Block assignment** (GPGPU-Sim ``issue_block2core``): blocks are issued in linear
  order, round robin over the SMs, each SM taking blocks until it holds
  ``blocks_per_sm``; a finished block is replaced by the next one. :func:`run_timed`
  does exactly this with time: when a block's last warp has finished, its slot takes
  the next block in launch order, so the SM that frees a slot first gets it (blocks
  of unequal length move to the SMs that finish early, as in GPGPU-Sim).
  :func:`schedule_kernel` has no time to decide by: it fixes block rank ``r`` -> SM
  ``r mod n_active`` (``n_active = min(n_sm, n_blocks)``), as if blocks lasted equally
  long, and runs waves of ``blocks_per_sm`` blocks back to back (wave ``(r //
  n_active) // blocks_per_sm``).
* **Issue time inside a wave** (:func:`schedule_kernel`): the ``R`` warps resident on
  an SM share its ``S`` schedulers; with loose round robin every warp issues one
  instruction every ``max(R, S) / S`` cycles, so instruction ``j`` of the warp at
  position ``p`` among the SM's resident warps is issued at ``start + (j + p / R) *
  max(R, S) / S``. A wave starts when the previous wave of the same SM has finished,
  i.e. after its longest warp.
* **Across SMs** all SMs run concurrently, so the global order is the sort by that
  time (ties broken by SM), which gives the shared L2 a realistic mix of SMs.

Why this approximation: it needs no timing feedback (it is one vectorised pass), it
keeps the two properties the cache counts are sensitive to -- which warps are
co-resident and interleave on an SM, and the rough distance in cycles between two
accesses to a line (compared with the miss latency for MSHR merging) -- and it is
exact in the limit of issue-bound kernels. It ignores stalls: memory-bound warps
advance more slowly than one instruction per round, so absolute times are too early,
but the relative order of co-resident warps is what GTO/LRR schedulers keep close to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from mdm.config.gpu import GPUConfig
from mdm.memory._core import run_timed
from mdm.profile.occupancy import occupancy
from mdm.traces.model import InstrClass, KernelTrace


@dataclass
class Schedule:
    """SM and approximate issue time (core cycles) of every instruction of a kernel."""

    inst_sm: np.ndarray  # int32[n]
    inst_time: np.ndarray  # float64[n]
    n_active_sms: int
    blocks_per_sm: int
    n_waves: int
    end_time: float  # issue time after the last instruction of the kernel


def resident_blocks(kernel: KernelTrace, gpu: GPUConfig) -> int:
    """Concurrent blocks per SM (:func:`mdm.profile.occupancy.occupancy`; register counts
    above the architectural maximum, garbage in some trace headers, are ignored)."""
    occ = occupancy(
        gpu,
        kernel.threads_per_block,
        kernel.nregs,
        kernel.shmem_bytes,
        max(kernel.n_blocks, 1),
        nregs_policy="ignore",
    )
    return occ.blocks_per_sm


def schedule_kernel(
    kernel: KernelTrace,
    n_sm: int,
    blocks_per_sm: int,
    schedulers: int,
    min_round_cycles: float = 0.0,
    requests: np.ndarray | None = None,
) -> Schedule:
    """Assign the kernel's blocks to SMs and give every instruction an issue time.

    ``min_round_cycles``: the shortest time between two segments of a warp (the
    latency of the load it waits for; the L2 hit latency is a good choice).
    ``requests``: L1 accesses of every instruction (0 for non-memory ones), each taking
    one cycle of the SM's LD/ST unit.
    """
    n_warps = kernel.n_warps
    if n_warps == 0:
        return Schedule(np.zeros(0, np.int32), np.zeros(0, np.float64), 0, blocks_per_sm, 0, 0.0)
    blocks, block_rank = np.unique(kernel.warp_block, return_inverse=True)
    n_blocks = blocks.shape[0]
    n_active = min(n_sm, n_blocks)
    warp_sm = (block_rank % n_active).astype(np.int32)
    slot = block_rank // n_active
    warp_wave = (slot // blocks_per_sm).astype(np.int64)
    n_waves = int(warp_wave.max()) + 1
    # warps ordered by (SM, wave, position in the trace = age)
    order = np.lexsort((np.arange(n_warps), warp_wave, warp_sm)).astype(np.int64)
    gseg, wseg_ptr, seg_first = _split(kernel)
    nseg = int(wseg_ptr[-1])
    # issue cost of an instruction: 1/schedulers cycles, or one cycle per L1 access
    cost = np.full(kernel.n_instructions, 1.0 / schedulers)
    if requests is not None:
        cost = np.maximum(cost, requests)
    cum = np.cumsum(cost)
    first = seg_first[:nseg]
    off = cum - cost - (cum[first] - cost[first])[gseg]
    seg_cost = np.bincount(gseg, weights=cost, minlength=nseg)
    seg_start, end_time = _issue_times(
        order,
        warp_sm.astype(np.int64),
        warp_wave,
        wseg_ptr,
        seg_cost,
        n_active,
        schedulers,
        float(min_round_cycles),
    )
    return Schedule(
        inst_sm=warp_sm[kernel.inst_warp],
        inst_time=seg_start[gseg] + off,
        n_active_sms=n_active,
        blocks_per_sm=blocks_per_sm,
        n_waves=n_waves,
        end_time=float(end_time),
    )


_LD = int(InstrClass.LD_GLOBAL)
_LOCAL = int(InstrClass.LOCAL)
_ATOM = int(InstrClass.ATOMIC)
_BAR = int(InstrClass.BARRIER)


def _split(kernel: KernelTrace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_segments` of ``kernel``: ``(gseg, wseg_ptr, seg_first)``. The
    per-instruction outputs are allocated by NumPy (huge pages; numba's allocator
    page-faults every 4 KiB of these 10-100 MB arrays)."""
    n = kernel.n_instructions
    gseg, seg_first = np.empty(n, np.int64), np.empty(n + 1, np.int64)
    wseg_ptr = _segments(
        kernel.warp_ptr.astype(np.int64),
        np.ascontiguousarray(kernel.iclass, dtype=np.uint8),
        np.ascontiguousarray(kernel.src, dtype=np.int16),
        np.ascontiguousarray(kernel.dst, dtype=np.int16),
        gseg,
        seg_first,
    )
    return gseg, wseg_ptr, seg_first[: int(wseg_ptr[-1]) + 1]


@njit(cache=True)
def _segments(
    warp_ptr: np.ndarray,
    iclass: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    gseg: np.ndarray,
    seg_first: np.ndarray,
) -> np.ndarray:
    """Split every warp into issue segments: a segment ends before the first instruction
    that reads a register written by a global/local load or atomic of the same segment,
    and after a barrier. Fills the global segment id ``gseg`` of every instruction and
    the first instruction ``seg_first`` of every segment (then the instruction count);
    returns the first segment id of every warp (CSR)."""
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
        for i in range(warp_ptr[w], warp_ptr[w + 1]):
            new = False
            if i > warp_ptr[w]:
                if iclass[i - 1] == _BAR:
                    new = True
                else:
                    for q in range(src.shape[1]):
                        r = src[i, q]
                        if r >= 0 and stamp[r] == g:
                            new = True
                            break
            if new:
                g += 1
                seg_first[g] = i
            gseg[i] = g
            c = iclass[i]
            if c == _LD or c == _LOCAL or c == _ATOM:
                for q in range(dst.shape[1]):
                    d = dst[i, q]
                    if d >= 0:
                        stamp[d] = g
    wseg_ptr[nw] = g + 1
    seg_first[g + 1] = n
    return wseg_ptr


@njit(cache=True)
def _issue_times(
    order: np.ndarray,
    warp_sm: np.ndarray,
    warp_wave: np.ndarray,
    wseg_ptr: np.ndarray,
    seg_cost: np.ndarray,
    n_active: int,
    schedulers: int,
    min_round: float,
) -> tuple[np.ndarray, float]:
    """Start time of every segment with a greedy-then-oldest issue model per SM.

    Per SM, waves run back to back. Inside a wave the SM repeatedly issues the next
    segment of the oldest warp that is ready; issuing takes the sum over its
    instructions of ``max(1 / schedulers, L1 accesses)`` cycles (instruction issue, or
    the LD/ST unit's one L1 access per cycle), and the warp is ready again
    ``min_round`` cycles (a load latency) later."""
    seg_start = np.zeros(seg_cost.shape[0], np.float64)
    clock = np.zeros(n_active, np.float64)
    nw = order.shape[0]
    ready = np.zeros(nw, np.float64)
    nxt = np.zeros(nw, np.int64)
    i = 0
    while i < nw:
        sm = warp_sm[order[i]]
        wave = warp_wave[order[i]]
        j = i
        while j < nw and warp_sm[order[j]] == sm and warp_wave[order[j]] == wave:
            j += 1
        t = clock[sm]
        left = 0
        for p in range(i, j):
            w = order[p]
            ready[p] = t
            nxt[p] = wseg_ptr[w]
            left += wseg_ptr[w + 1] - wseg_ptr[w]
        end = t
        while left > 0:
            pick = -1
            soonest = np.inf
            for p in range(i, j):  # oldest ready warp; else the first to become ready
                if nxt[p] < wseg_ptr[order[p] + 1]:
                    if ready[p] <= t:
                        pick = p
                        break
                    if ready[p] < soonest:
                        soonest = ready[p]
            if pick < 0:
                t = soonest
                continue
            gs = nxt[pick]
            seg_start[gs] = t
            t += seg_cost[gs]
            ready[pick] = t + min_round
            if t > end:
                end = t
            nxt[pick] += 1
            left -= 1
        clock[sm] = end
        i = j
    return seg_start, clock.max()


@dataclass
class TimedLayout:
    """Static inputs of :func:`run_timed`: blocks in launch order, warp order, segments."""

    order: np.ndarray  # int64[n_warps]: warps sorted by (block rank, age)
    blk_ptr: np.ndarray  # int64[n_blocks+1]: every block's warps in ``order``
    wblk: np.ndarray  # int64[n_warps]: the block of every position of ``order``
    wseg_ptr: np.ndarray  # int64[n_warps+1]: segments of every warp (CSR)
    seg_first: np.ndarray  # int64[n_seg+1]: first instruction of every segment
    n_active_sms: int
    n_waves: int


def kernel_segments(kernel: KernelTrace) -> tuple[np.ndarray, np.ndarray]:
    """``(wseg_ptr, seg_first)`` of :class:`TimedLayout`: the issue segments of every warp
    (:func:`_segments`), which depend on the kernel only."""
    _, wseg_ptr, seg_first = _split(kernel)
    return wseg_ptr, seg_first


def timed_layout(
    kernel: KernelTrace,
    n_sm: int,
    blocks_per_sm: int,
    segments: tuple[np.ndarray, np.ndarray] | None = None,
) -> TimedLayout:
    """Blocks in launch order (:func:`run_timed` gives them to SMs) and issue segments
    (:func:`_segments`; ``segments``: :func:`kernel_segments` of ``kernel`` computed
    before, to reuse)."""
    n_warps = kernel.n_warps
    if n_warps == 0:
        z = np.zeros(1, np.int64)
        return TimedLayout(z[:0], z, z[:0], z, z, 0, 0)
    blocks, block_rank = np.unique(kernel.warp_block, return_inverse=True)
    n_active = min(n_sm, blocks.shape[0])
    order = np.lexsort((np.arange(n_warps), block_rank)).astype(np.int64)
    rank = block_rank[order]
    first = np.r_[True, rank[1:] != rank[:-1]]  # a block's first warp
    wseg_ptr, seg_first = kernel_segments(kernel) if segments is None else segments
    return TimedLayout(
        order=order,
        blk_ptr=np.r_[np.flatnonzero(first), n_warps].astype(np.int64),
        wblk=np.cumsum(first, dtype=np.int64) - 1,
        wseg_ptr=wseg_ptr,
        seg_first=seg_first,
        n_active_sms=n_active,
        n_waves=-(-blocks.shape[0] // (n_active * blocks_per_sm)),
    )


__all__ = [
    "Schedule",
    "TimedLayout",
    "kernel_segments",
    "resident_blocks",
    "run_timed",
    "schedule_kernel",
    "timed_layout",
]
