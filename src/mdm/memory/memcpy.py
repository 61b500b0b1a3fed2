"""Host-to-device copies into the L2 (``l2.fill_on_memcpy``, GPGPU-Sim ``-gpgpu_perf_sim_memcpy``).

Accel-Sim lists an application's ``cudaMemcpy`` host-to-device copies in
``kernelslist.g`` (``MemcpyHtoD,<address>,<bytes>``) and, with
``-gpgpu_perf_sim_memcpy 1`` (its default), hands each to ``perf_memcpy_to_gpu``: for
every 32 B step ``a = address + 32 k`` (``k < ceil(bytes / 32)``) the L2 bank of ``a``
fills the sector of ``a`` through its tag array (``force_tag_access``), so a kernel that
reads data copied just before it finds them in the L2 as far as they fit. What
:func:`install` does with each step, as ``tag_array::fill`` does:

* a line not in its set is allocated in the set's first invalid way, else its least
  recently used one, and becomes the most recently used; a dirty victim is dropped
  without a DRAM write (GPGPU-Sim allocates over it; the copy is not kernel time, so no
  kernel counter moves either way);
* the sector becomes valid and clean (a fill for a copy is not a write-allocate fill, so
  GPGPU-Sim's ``m_set_modified_on_fill`` is unset), not partially written, with no fill
  in flight and no merged request; an unsectored L2 validates its whole line;
* a sector newly valid in a resident line makes the line the most recently used
  (``allocate_sector`` stamps it); a step to a sector already valid changes nothing
  (GPGPU-Sim's ``fill`` does not touch the access time).

Steps use ``l2.sector_bytes`` (32 B in every GPGPU-Sim configuration) and the cache
simulator's L2 bank and set mapping (:func:`mdm.memory.hashing.l2_bank_and_set`). Copies
are applied in chunks of :data:`CHUNK_STEPS` steps, so a copy of many GB needs no array
of its size, and from the first step that can still be in the L2 at the copy's end
(:func:`first_live_step`) when the lines from there on are new to the L2 (the same L2,
tested).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mdm._jit import njit
from mdm.memory._core import STAMP_LIMIT, _lru_scan, find_way, renumber_stamps
from mdm.memory.hashing import l2_bank_and_set

if TYPE_CHECKING:
    from mdm.config.gpu import GPUConfig
    from mdm.memory.cachesim import _L2State

#: Steps (sectors) of a copy mapped and installed per call of the compiled loop.
CHUNK_STEPS = 1 << 20


def copy_steps(addr: int, nbytes: int, step: int, line_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(lines, sector)`` of each ``step``-byte step of a copy of ``nbytes`` at ``addr``:
    the line index (``a // line_bytes``) and the sector index within the line of
    ``a = addr + step k`` for ``k < ceil(nbytes / step)`` (GPGPU-Sim's
    ``perf_memcpy_to_gpu`` walks the copy in 32 B steps from its unaligned start)."""
    if addr < 0 or nbytes < 0:
        raise ValueError(f"a copy needs a non-negative address and size, got {addr}, {nbytes}")
    n = -(-nbytes // step)
    a = np.uint64(addr) + np.arange(n, dtype=np.uint64) * np.uint64(step)
    lines = (a // np.uint64(line_bytes)).astype(np.int64)
    sector = ((a % np.uint64(line_bytes)) // np.uint64(step)).astype(np.int64)
    return lines, sector


@njit(cache=True)
def install(
    tags: np.ndarray,
    lru: np.ndarray,
    valid: np.ndarray,
    dirty: np.ndarray,
    partial: np.ndarray,
    fill: np.ndarray,
    merges: np.ndarray,
    stamp: np.ndarray,
    bank: np.ndarray,
    l2set: np.ndarray,
    lines: np.ndarray,
    sector: np.ndarray,
) -> None:
    """Apply the copy steps ``lines`` / ``sector`` (in bank ``bank``, set ``l2set``) to the
    L2 arrays of :class:`mdm.memory.cachesim._L2State`, in order (module docstring). An
    unsectored L2 (one fill column) takes sector 0 for every step."""
    ns = fill.shape[3]
    for i in range(lines.shape[0]):
        b = np.int64(bank[i])
        s = np.int64(l2set[i])
        line = lines[i]
        k = sector[i] if ns > 1 else 0
        bit = np.uint32(1) << np.uint32(k)
        w = find_way(tags, b, s, line)
        if w < 0:  # allocate: the first invalid way, else the LRU one
            w = _lru_scan(tags, lru, b, s)
            tags[b, s, w] = line
            valid[b, s, w] = 0
            dirty[b, s, w] = 0
            partial[b, s, w] = 0
            for q in range(ns):
                fill[b, s, w, q] = -np.inf
                merges[b, s, w, q] = 0
        elif valid[b, s, w] & bit:
            continue  # already valid: GPGPU-Sim's fill leaves the access time
        stamp[0] += 1
        lru[b, s, w] = stamp[0]
        valid[b, s, w] |= bit
        dirty[b, s, w] &= ~bit
        partial[b, s, w] &= ~bit
        fill[b, s, w, k] = -np.inf
        merges[b, s, w, k] = 0


def first_live_step(gpu: GPUConfig, addr: int, nbytes: int, tags: np.ndarray | None = None) -> int:
    """The first step of a copy whose line can still be in the L2 when the copy ends:
    the start of the shortest suffix, cut at a line boundary and found in chunks of
    twice the L2's lines from the end, that brings at least ``l2.ways`` lines to every set
    of every bank; 0 when no suffix does, or when one of the suffix's lines is in the L2
    already (``tags``: the L2's, checked as the suffix is mapped). Installing only from
    there gives the same L2 (:func:`copy_to_l2`): a copy's lines are distinct (its
    addresses increase), so the suffix alone fills every way of every set with its own
    lines, newest last, and each line before it is evicted before the copy ends; what the
    earlier steps did to the set (victims, stamps) is overwritten. A suffix line already
    resident (a buffer copied twice) would keep its old LRU stamp (a valid sector's copy
    does not refresh it) where, without the cut, the earlier steps could have evicted it
    first. A copy many times the L2 (an application's input arrays) then costs about a
    pass over the L2's capacity."""
    l2 = gpu.l2
    step, line_bytes = l2.sector_bytes, l2.line_bytes
    n = -(-nbytes // step)
    first_line, last_line = addr // line_bytes, (addr + (n - 1) * step) // line_bytes
    if (last_line - first_line + 1) < l2.banks * l2.sets_per_bank * l2.ways:
        return 0  # too few lines to fill the L2
    count = np.zeros(l2.banks * l2.sets_per_bank, np.int64)
    chunk = 2 * count.size * l2.ways  # lines per pass: twice the L2's
    chunk = min(chunk, max(CHUNK_STEPS * step // line_bytes, 1))
    hi = last_line + 1
    while hi > first_line:
        lo = max(first_line, hi - chunk)
        lines = np.arange(lo, hi, dtype=np.int64)
        bank, l2set = l2_bank_and_set(lines, gpu)
        if tags is not None and any_resident(tags, bank, l2set, lines):
            return 0
        count += np.bincount(bank.astype(np.int64) * l2.sets_per_bank + l2set, minlength=count.size)
        if count.min() >= l2.ways:  # the steps of lines lo .. last_line suffice
            return max(0, -(-(lo * line_bytes - addr) // step))
        hi = lo
    return 0


@njit(cache=True)
def any_resident(tags: np.ndarray, bank: np.ndarray, l2set: np.ndarray, lines: np.ndarray) -> bool:
    """Whether any of ``lines`` (in bank ``bank``, set ``l2set``) is in the L2."""
    for i in range(lines.shape[0]):
        if find_way(tags, np.int64(bank[i]), np.int64(l2set[i]), lines[i]) >= 0:
            return True
    return False


def copy_to_l2(state: _L2State, gpu: GPUConfig, addr: int, nbytes: int) -> int:
    """Install a host-to-device copy in the L2 arrays of ``state`` (an
    :class:`mdm.memory.cachesim._L2State` of ``gpu``) from its :func:`first_live_step`
    (its first step when a line from there on is in the L2 already); returns the number
    of steps installed. Nothing happens unless ``gpu.l2.fill_on_memcpy``."""
    if not gpu.l2.fill_on_memcpy or nbytes <= 0:
        return 0
    start = first_live_step(gpu, addr, nbytes, state.tags)
    return install_steps(state, gpu, addr, nbytes, start)


def install_steps(state: _L2State, gpu: GPUConfig, addr: int, nbytes: int, start: int) -> int:
    """:func:`install` the steps ``start ..`` of a copy, :data:`CHUNK_STEPS` at a time;
    returns their number."""
    l2 = gpu.l2
    step = l2.sector_bytes
    n = -(-nbytes // step)
    for k0 in range(start, n, CHUNK_STEPS):
        k1 = min(n, k0 + CHUNK_STEPS)
        lines, sector = copy_steps(addr + k0 * step, (k1 - k0) * step, step, l2.line_bytes)
        bank, l2set = l2_bank_and_set(lines, gpu)
        if state.stamp[0] + (k1 - k0) >= STAMP_LIMIT:  # int32 stamps (no L1 between kernels)
            renumber_stamps(state.lru[:0], state.lru, state.stamp)
        install(
            state.tags, state.lru, state.valid, state.dirty, state.partial, state.fill,
            state.merges, state.stamp, bank, l2set, lines, sector,
        )  # fmt: skip
    return max(n - start, 0)
