"""Memory coalescer (pipeline step 3): warp memory instructions -> cache requests.

Two rules, selected by ``l1.coalescer``:

* ``"warp"`` (Fermi-style, GPGPU-Sim ``-gpgpu_coalesce_arch 20``, Pascal and earlier,
  the MDM paper's baseline): the 32 lanes form one group; one request per distinct
  *segment* touched, where the segment is the 128 B line for 4, 8 and 16 B accesses,
  64 B for 2 B and 32 B for 1 B accesses (GPGPU-Sim ``memory_coalescing_arch``).
* ``"quarter_warp"`` (Volta and later, paper 004 section III-A, arch 70): the warp is
  split into four 8-thread groups; inside a group the distinct 32 B sectors touched
  are merged per line into one request carrying a sector mask. A sectored L1 then
  performs one access per sector of the mask.
* ``"warp_sector"`` (GPGPU-Sim 4.x / Accel-Sim ``-gpgpu_coalesce_arch`` >= 40, what the
  SM7_QV100 reference runs use): like ``quarter_warp`` with one 32-lane group, i.e. one
  access per distinct 32 B sector touched by the whole warp (reproduces the reference
  L1 read access counts of every SM7_QV100 workload exactly; ``quarter_warp`` gives more).

A lane access of ``mem_width`` bytes that straddles a segment or sector boundary
touches both (as GPGPU-Sim does for trace-driven accesses). Within a group the
requests are sorted by address (GPGPU-Sim keeps them in a ``std::map``).

Output, CSR over the selected instructions: ``req_ptr[m+1]``; per request
``req_line`` (line index = byte address // line_bytes), ``req_mask`` (sectors of the
line touched, bit ``k`` = sector ``k``) and ``req_full`` (sectors whose every byte is
written by the instruction, 0 for instructions that do not write; used for the L2's
fetch-on-write decision); the masks in :func:`sector_mask_dtype` (a byte for 4 sectors:
written so by the coalescer, not narrowed by a copy, which took 12 ms and 100 MB of
uint32 buffers for the stride benchmark's 12.6 M requests).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdm._jit import njit, prefetch
from mdm.errors import ConfigError
from mdm.traces.model import GLOBAL_MEMORY_CLASSES, InstrClass, KernelTrace

_MAX_KEYS = 320  # per group: 32 lanes x at most 2 + 255 // 32 segments each
_HASH = 1024  # slots of the per-group key hash (power of two, > 2 x _MAX_KEYS)
_RANK_KEYS = 64  # a group's keys are sorted by rank up to this many, else by insertion
#: the fewest global instructions for which the scatter variant runs: compiling it takes
#: about 8 s once per installation (a cold ``mdm demo`` 45 -> 56 s when its small bfs
#: and spmv_csr chose it), while it saves about 70 ns per scattered instruction
_SCATTER_MIN = 1 << 18
_AHEAD = 8  # the look-ahead: addresses this many instructions ahead, entries twice as far


@dataclass
class CoalescedRequests:
    """Coalesced requests of a kernel's global memory instructions (CSR)."""

    inst: np.ndarray  # int64[m]: instruction index in the kernel trace
    req_ptr: np.ndarray  # int64[m+1]
    req_line: np.ndarray  # int64[r]
    req_mask: np.ndarray  # [r], dtype sector_mask_dtype(sectors per line)
    req_full: np.ndarray  # [r], same dtype

    @property
    def n_requests(self) -> np.ndarray:
        return np.diff(self.req_ptr)


#: Per instruction class (a uint8): goes through L1/L2 (a table lookup is several times
#: faster than ``np.isin`` over a kernel's instructions).
GLOBAL_CLASS = np.zeros(256, np.bool_)
GLOBAL_CLASS[[int(c) for c in GLOBAL_MEMORY_CLASSES]] = True


def global_memory_instructions(
    kernel: KernelTrace, lo: int = 0, hi: int | None = None
) -> np.ndarray:
    """Indices of the instructions that go through L1/L2 (``GLOBAL_MEMORY_CLASSES``),
    among instructions ``lo`` to ``hi`` (default: all; e.g. one warp's range)."""
    return lo + np.flatnonzero(GLOBAL_CLASS[kernel.iclass[lo:hi]]).astype(np.int64)


def memory_kinds(kernel: KernelTrace, inst: np.ndarray) -> np.ndarray:
    """0 load, 1 store, 2 atomic for each selected instruction (int8); a local access
    is a store when its opcode starts with ``ST``."""
    ic = kernel.iclass[inst]
    kind = np.zeros(inst.shape[0], np.int8)
    kind[ic == InstrClass.ST_GLOBAL] = 1
    kind[ic == InstrClass.ATOMIC] = 2
    local = ic == InstrClass.LOCAL
    if local.any() and kernel.opcodes:
        is_store = np.array([op.upper().startswith("ST") for op in kernel.opcodes], bool)
        kind[local & is_store[kernel.opcode[inst]]] = 1
    return kind


def sector_mask_dtype(sectors_per_line: int) -> type[np.unsignedinteger]:
    """dtype of a sector bit mask (a cache way's valid, dirty and partially written
    sectors; a request's sectors and fully written ones): the narrowest unsigned
    integer with a bit per sector of a line. uint8 for the 4 sectors of a 128 B line:
    the L2's three mask arrays take 3 bytes per line instead of 12, which keeps more of
    the simulated state in the host CPU's caches (the stride benchmark on
    ``mdm_pascal``: repeated simulations 0.69-0.73 -> 0.66-0.67 s,
    docs/measurement-log.md). The loop reads a mask as it is and widens it to uint32
    for its bit operations; a store writes back the low bits, which are the only ones
    set."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if sectors_per_line <= np.iinfo(dt).bits:
            return dt
    raise ValueError(f"{sectors_per_line} sectors per line: at most 32 are supported")


def coalesce(
    kernel: KernelTrace,
    line_bytes: int,
    sector_bytes: int,
    rule: str,
    inst: np.ndarray | None = None,
    writes: np.ndarray | None = None,
    *,
    scatter: bool | None = None,
) -> CoalescedRequests:
    """Coalesce the global memory instructions ``inst`` (default: all) of ``kernel``.

    ``writes`` (bool per instruction of ``inst``): which ones write memory, the only
    ones whose ``req_full`` can be non-zero (default: the stores and atomics of
    :func:`memory_kinds`). ``scatter``: whether the coalescer's compiled variant with
    its scatter paths runs (same requests, different speed; default: :func:`_scattered`
    decides for kernels of at least :data:`_SCATTER_MIN` instructions, else not)."""
    if rule not in ("warp", "quarter_warp", "warp_sector"):
        raise ConfigError(
            None,
            f"l1.coalescer: expected 'warp', 'quarter_warp' or 'warp_sector', got {rule!r}",
        )
    spl = line_bytes // sector_bytes
    if spl > 32 or sector_bytes > 64 or line_bytes % sector_bytes:
        raise ConfigError(
            None,
            f"cache geometry line {line_bytes} B / sector {sector_bytes} B: the coalescer "
            "supports at most 32 sectors per line and sectors of at most 64 B",
        )
    if inst is None:
        inst = global_memory_instructions(kernel)
    inst = np.ascontiguousarray(inst, dtype=np.int64)
    if writes is None:
        writes = memory_kinds(kernel, inst) != 0
    writes = np.ascontiguousarray(writes, dtype=np.bool_)
    if writes.shape != inst.shape:
        raise ValueError(f"writes: expected {inst.shape[0]} flags, got {writes.shape}")
    md = sector_mask_dtype(spl)  # the coalescer stores its uint32 masks' low bits
    if inst.shape[0] == 0:  # no global memory instruction: nothing to compile or run
        z = np.zeros(1, np.int64)
        return CoalescedRequests(inst, z, np.empty(0, np.int64), np.empty(0, md), np.empty(0, md))
    width = np.ascontiguousarray(kernel.mem_width, dtype=np.uint8)
    addr_ptr = np.ascontiguousarray(kernel.addr_ptr, dtype=np.int64)
    cap = _request_bound(inst, width, addr_ptr)
    # outputs allocated by NumPy (huge pages for large arrays: far fewer page faults
    # than numba's allocator on these multi-100 MB buffers); the results are views of
    # their first ``nr`` entries: the unused tail is never written, so (allocated by
    # mmap) it takes no memory, and no trimming copy is made
    out = (np.empty(cap, np.int64), np.empty(cap, md), np.empty(cap, md))
    ptr = np.zeros(inst.shape[0] + 1, np.int64)
    masks = np.ascontiguousarray(kernel.mask, dtype=np.uint32)
    addrs = np.ascontiguousarray(kernel.addrs, dtype=np.uint64)
    if scatter is None:  # small kernels keep the common variants (_SCATTER_MIN)
        scatter = inst.shape[0] >= _SCATTER_MIN and _scattered(
            inst, masks, addr_ptr, addrs, writes, line_bytes
        )
    nr = _COALESCE[_sparse(inst, addr_ptr), bool(scatter)](
        (
            inst,
            masks,
            width,
            addr_ptr,
            addrs,
            line_bytes,
            sector_bytes,
            8 if rule == "quarter_warp" else 32,
            rule == "warp",
            writes,
            ptr,
            *out,
        )
    )
    line, mask, full = (a[:nr] for a in out)
    return CoalescedRequests(inst, ptr, line, mask, full)


def _sparse(inst: np.ndarray, addr_ptr: np.ndarray) -> bool:
    """Whether the global memory instructions ``inst`` lie far apart in their kernel's
    arrays, on average more than 16 instructions or 64 lane addresses from one to the
    next, so that the coalescer prefetches the instructions ahead. Where they lie
    close, the CPU's own prefetcher streams them, and the look-ahead's work made
    vecadd, stencil2d and transpose 3-5 % slower; it made gemm_tiled (27 instructions
    and 864 addresses apart) 30 % faster."""
    m = inst.shape[0]
    if m < 2:
        return False
    span = int(inst[-1]) - int(inst[0])
    addr_span = int(addr_ptr[inst[-1]]) - int(addr_ptr[inst[0]])
    return span > 16 * m or addr_span > 64 * m


@njit(cache=True)
def _scattered(
    inst: np.ndarray,
    mask: np.ndarray,
    addr_ptr: np.ndarray,
    addrs: np.ndarray,
    writes: np.ndarray,
    line_bytes: int,
) -> bool:
    """Whether at least a quarter of the global memory instructions ``inst`` (up to
    4,096 of them, evenly spaced) are scattered writes or scattered reads under a partial
    mask (their lanes' addresses in more than one line), so that the coalescer sends
    every group but a whole-warp read to its placement first (``scatter``). At the
    ``bench_cachesim.ALL_SIZES`` sizes, coalescing alone, best of 5 (docs/measurement-
    log.md): bfs (66 % such instructions) 525 -> 258-269 ms and spmv_csr (56 %) 330 ->
    280 with it; kmeans (none) 132 -> 171, gather 186 -> 217-228 and the dense
    kernels 5-15 % slower with it (the code's layout: their paths are unchanged)."""
    m = inst.shape[0]
    if m == 0:
        return False
    step = max(1, m // 4096)
    n = 0
    hits = 0
    for j in range(0, m, step):
        n += 1
        i = inst[j]
        a0 = addr_ptr[i]
        a1 = addr_ptr[i + 1]
        if a1 <= a0 or not (writes[j] or mask[i] != np.uint32(0xFFFFFFFF)):
            continue
        lo = addrs[a0] // np.uint64(line_bytes)
        for p in range(a0 + 1, a1):
            if addrs[p] // np.uint64(line_bytes) != lo:
                hits += 1
                break
    return 4 * hits >= n


@njit(cache=True)
def _request_bound(inst: np.ndarray, width: np.ndarray, addr_ptr: np.ndarray) -> int:
    """Upper bound of the requests of instructions ``inst``: a lane of ``w`` bytes touches
    at most ``2 + w // 32`` segments (segments are at least 32 B). One compiled pass:
    the NumPy expression's gathers and temporaries took 7.7 ms for the stride
    benchmark's 393 k instructions, this 1.8 ms."""
    cap = 0
    for j in range(inst.shape[0]):
        i = inst[j]
        cap += (2 + np.int64(width[i]) // 32) * (addr_ptr[i + 1] - addr_ptr[i])
    return cap


@njit(cache=True, inline="always")
def _log2(x: np.int64) -> np.int64:
    """log2 of a power of two ``x`` > 0, else -1."""
    if x <= 0 or x & (x - 1):
        return -1
    n = 0
    while (np.int64(1) << n) < x:
        n += 1
    return n


@njit(cache=True, inline="always")
def _div(a: np.int64, d: np.int64, d_log2: np.int64) -> np.int64:
    """``a // d`` (floor); an arithmetic shift when ``d = 2**d_log2`` (same value, also
    for negative ``a``), no integer division."""
    if d_log2 >= 0:
        return a >> d_log2
    return a // d


@njit(cache=True, inline="always")
def _mod(a: np.int64, d: np.int64, d_log2: np.int64) -> np.int64:
    """``a % d`` (Python sign rule); a mask when ``d = 2**d_log2``."""
    if d_log2 >= 0:
        return a & (d - 1)
    return a % d


@njit(cache=True, inline="always")
def _popcount32(x: np.uint32) -> np.int64:
    """Number of set bits of ``x`` (SWAR: no loop, no branch; numba widens the product
    to 64 bits, hence the final mask)."""
    x = x - ((x >> np.uint32(1)) & np.uint32(0x55555555))
    x = (x & np.uint32(0x33333333)) + ((x >> np.uint32(2)) & np.uint32(0x33333333))
    x = (x + (x >> np.uint32(4))) & np.uint32(0x0F0F0F0F)
    return np.int64(((x * np.uint32(0x01010101)) >> np.uint32(24)) & np.uint32(0xFF))


@njit(cache=True, inline="always")
def _slot(key: np.int64) -> np.int64:
    """Home slot of ``key`` in the per-group hash."""
    return (key ^ (key >> 9) ^ (key >> 19)) & (_HASH - 1)


@njit(cache=True, inline="always")
def _sector_span(off: np.int64, w: np.int64, sec_log2: np.int64) -> np.uint32:
    """Mask of the sectors ``off >> sec_log2 .. (off + w - 1) >> sec_log2`` that ``w``
    bytes at line offset ``off`` touch (``2 << 31`` wraps to 0 in 32 bits, which still
    sets the bits up to 31)."""
    return (np.uint32(2) << np.uint32((off + w - 1) >> sec_log2)) - (
        np.uint32(1) << np.uint32(off >> sec_log2)
    )


@njit(cache=True, inline="always")
def _sector_bits(off: np.int64, offe: np.int64, s: np.int64, sector_bytes: int) -> np.uint64:
    """The bytes ``off`` .. ``offe`` of a line (inclusive) that fall in its sector ``s``,
    as a bitmap of the sector's bytes."""
    lo = max(off, s * sector_bytes) - s * sector_bytes
    hi = min(offe, s * sector_bytes + sector_bytes - 1) - s * sector_bytes
    nbits = hi - lo + 1
    if nbits >= 64:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return ((np.uint64(1) << np.uint64(nbits)) - np.uint64(1)) << np.uint64(lo)


@njit(cache=True, inline="always")
def _add_bytes(
    pbytes: np.ndarray,
    row: np.int64,
    addr: np.uint64,
    w: np.int64,
    line_bytes: int,
    sector_bytes: int,
    sec_log2: np.int64,
) -> None:
    """OR the bytes that a lane's ``w``-byte write at ``addr`` covers into row ``row`` of
    ``pbytes`` (a bitmap of each sector's bytes)."""
    a = np.int64(addr)
    off = a & (line_bytes - 1)
    offe = (a + w - 1) & (line_bytes - 1)
    for s in range(off >> sec_log2, (offe >> sec_log2) + 1):
        pbytes[row, s] |= _sector_bits(off, offe, s, sector_bytes)


@njit(cache=True, inline="always")
def _full_sectors(
    pbytes: np.ndarray, row: np.int64, spl: np.int64, sec_all: np.uint64
) -> np.uint32:
    """The sectors of row ``row`` of ``pbytes`` (a bitmap of each sector's written bytes)
    whose every byte is written."""
    full = np.uint32(0)
    for s in range(spl):
        if pbytes[row, s] == sec_all:
            full |= np.uint32(1) << np.uint32(s)
    return full


@njit(cache=True, inline="always")
def _coalesce(args: tuple, ahead: bool, scatter: bool) -> int:
    """Fill ``req_ptr`` (m + 1, zeroed) and the first requests of ``out_*`` (sized by
    :func:`coalesce`'s bound); returns the number of requests. ``args``: ``inst, mask,
    width, addr_ptr, addrs, line_bytes, sector_bytes, group, segments, writes, req_ptr,
    out_line, out_mask, out_full``. ``ahead``: prefetch the instructions ahead
    (:func:`_sparse`). ``scatter``: every group but a whole-warp read goes first to the
    placement of lanes within one segment each, writes too (:func:`_scattered`);
    without it, a group tries the one-segment lane loop first and only reads are
    placed. Both are constants of the four compiled entries (:data:`_COALESCE`): with
    the look-ahead's code merely present in the loop, bfs coalesced 5 % slower; with
    the scatter paths always on, the dense kernels 5-15 %."""
    (
        inst,
        mask,
        width,
        addr_ptr,
        addrs,
        line_bytes,
        sector_bytes,
        group,
        segments,
        writes,
        req_ptr,
        out_line,
        out_mask,
        out_full,
    ) = args
    m = inst.shape[0]
    spl = line_bytes // sector_bytes
    line_log2 = _log2(line_bytes)
    sec_log2 = _log2(sector_bytes)
    keys = np.empty(_MAX_KEYS, np.int64)  # segment key (address // segment size)
    kslot = np.empty(_MAX_KEYS, np.int64)  # where key x's mask and bytes are (sorting)
    ksorted = np.empty(_MAX_KEYS, np.int64)  # the keys in sorted order (rank sort)
    kmask = np.empty(_MAX_KEYS, np.uint32)
    kbytes = np.zeros((_MAX_KEYS, 32), np.uint64)  # written-byte bitmap per sector
    # key -> position in ``keys`` for the current group: open addressing, an entry is
    # live when its generation is the group's (no clearing per group)
    h_key = np.zeros(_HASH, np.int64)
    h_pos = np.zeros(_HASH, np.int64)
    h_gen = np.zeros(_HASH, np.int64)
    gen = 0
    # the one-segment-lanes read path: its lanes (key, sectors), its places by rank
    # (key, sectors, taken) and by distance from the least key (sectors; zero between
    # groups)
    lkey = np.empty(32, np.int64)
    lsec = np.empty(32, np.uint32)
    pkey = np.empty(32, np.int64)
    psec = np.empty(32, np.uint32)
    ptaken = np.empty(32, np.int64)
    nsec = np.zeros(64, np.uint32)
    # with ``scatter``, a write's bytes per place (zero between groups; rows by distance
    # up to 64, by rank up to 32)
    pbytes = np.zeros((64 if scatter else 1, 32), np.uint64)
    sec_all = np.uint64(0xFFFFFFFFFFFFFFFF)
    if sector_bytes < 64:
        sec_all = (np.uint64(1) << np.uint64(sector_bytes)) - np.uint64(1)
    nr = 0
    for j in range(m):
        # with ``ahead``, the instructions ahead: their per-instruction entries (at
        # 2 x _AHEAD) and their lanes' addresses (at _AHEAD, up to 32 lanes: five cache
        # lines). Where the global memory instructions lie far apart in the trace's
        # arrays (gemm_tiled: 27 instructions with their shared-memory addresses
        # between two), each one's reads otherwise wait on the memory
        if ahead and j + 2 * _AHEAD < m:
            i2 = inst[j + 2 * _AHEAD]
            prefetch(addr_ptr, i2)
            prefetch(mask, i2)
            prefetch(width, i2)
            i1 = inst[j + _AHEAD]
            p1 = addr_ptr[i1]
            for o in range(0, min(addr_ptr[i1 + 1] - p1, 40), 8):
                prefetch(addrs, p1 + o)
        i = inst[j]
        a0 = addr_ptr[i]
        na = addr_ptr[i + 1] - a0
        w = np.int64(width[i])
        if w <= 0:
            w = 4
        seg = np.int64(line_bytes)
        if segments:
            if w == 1:
                seg = 32
            elif w == 2:
                seg = 64
            if seg > line_bytes:
                seg = line_bytes
        else:
            seg = np.int64(line_bytes)  # requests are per line, sectors in the mask
        seg_log2 = _log2(seg)
        fast_ok = seg_log2 >= 0 and line_log2 >= 0 and sec_log2 >= 0
        wr = writes[j]  # only a writing instruction tracks its written bytes (req_full)
        msk = mask[i]
        k = 0
        for g0 in range(0, 32, group):
            gm = ((np.uint64(1) << np.uint64(group)) - np.uint64(1)) << np.uint64(g0)
            whole = (np.uint64(msk) & gm) == gm and k + group <= na  # every lane active
            if fast_ok and whole and not wr:
                # a read with every lane of the group active: branch-free checks (else the
                # paths below). One pass for the lowest and highest address and the
                # sectors the lanes touch if they share a segment (vecadd's coalescing
                # 245 -> 218 ms against a second pass)
                lo = np.int64(addrs[a0 + k])
                hi = lo
                fm = np.uint32(0)
                for q in range(group):
                    a = np.int64(addrs[a0 + k + q])
                    lo = min(lo, a)
                    hi = max(hi, a)
                    fm |= _sector_span(a & (line_bytes - 1), w, sec_log2)
                if lo >> seg_log2 == (hi + w - 1) >> seg_log2:  # one segment
                    out_line[nr] = ((lo >> seg_log2) * seg) >> line_log2
                    out_mask[nr] = fm
                    out_full[nr] = 0
                    nr += 1
                    k += group
                    continue
                # every lane in a segment of its own, in ascending order (a strided read):
                # one request per lane, in lane order, as the general path emits them;
                # else the general path from the group's first lane
                n0 = nr
                prev = np.int64(0)
                for q in range(group):
                    a = np.int64(addrs[a0 + k + q])
                    key = a >> seg_log2
                    if (a + w - 1) >> seg_log2 != key or (q > 0 and key <= prev):
                        nr = n0
                        break
                    prev = key
                    off = a & (line_bytes - 1)
                    out_line[nr] = (key * seg) >> line_log2
                    out_mask[nr] = _sector_span(off, w, sec_log2)
                    out_full[nr] = 0
                    nr += 1
                if nr > n0:
                    k += group
                    continue
                # two segments, the lowest and the highest touched (a coalesced read not
                # aligned to its segment, as a stencil's shifted row; two tile rows):
                # their two requests in address order, if every lane lies in one of them
                # without straddling a boundary
                key_lo = lo >> seg_log2
                key_hi = (hi + w - 1) >> seg_log2
                m_lo = np.uint32(0)
                m_hi = np.uint32(0)
                two = True
                for q in range(group):
                    a = np.int64(addrs[a0 + k + q])
                    key = a >> seg_log2
                    if (a + w - 1) >> seg_log2 != key or (key != key_lo and key != key_hi):
                        two = False
                        break
                    span = _sector_span(a & (line_bytes - 1), w, sec_log2)
                    m_lo |= span if key == key_lo else np.uint32(0)
                    m_hi |= np.uint32(0) if key == key_lo else span
                if two:
                    out_line[nr] = (key_lo * seg) >> line_log2
                    out_mask[nr] = m_lo
                    out_full[nr] = 0
                    out_line[nr + 1] = (key_hi * seg) >> line_log2
                    out_mask[nr + 1] = m_hi
                    out_full[nr + 1] = 0
                    nr += 2
                    k += group
                    continue
            elif fast_ok and not scatter:
                # the active lanes all in one segment, as in every coalesced load or store:
                # one request, its sectors (and a store's written bytes, in row 0 of
                # kbytes) OR-ed lane by lane; anything else falls through to the general
                # path from the group's first lane
                kk = k
                seen = False
                one_seg = True
                key0 = np.int64(0)
                fm = np.uint32(0)
                if wr:
                    for s in range(spl):
                        kbytes[0, s] = 0
                for lane in range(g0, g0 + group):
                    if not (msk >> np.uint32(lane)) & np.uint32(1) or kk >= na:
                        continue
                    a = np.int64(addrs[a0 + kk])
                    kk += 1
                    key = a >> seg_log2
                    if (a + w - 1) >> seg_log2 != key or (seen and key != key0):
                        one_seg = False
                        break
                    seen = True
                    key0 = key
                    off = a & (line_bytes - 1)
                    offe = (a + w - 1) & (line_bytes - 1)
                    for s in range(off >> sec_log2, (offe >> sec_log2) + 1):
                        fm |= np.uint32(1) << np.uint32(s)
                        if wr:
                            kbytes[0, s] |= _sector_bits(off, offe, s, sector_bytes)
                if one_seg:
                    if seen:
                        out_line[nr] = (key0 * seg) >> line_log2
                        out_mask[nr] = fm
                        full = np.uint32(0)
                        if wr:
                            full = _full_sectors(kbytes, 0, spl, sec_all)
                        out_full[nr] = full
                        nr += 1
                    k = kk
                    continue
            if fast_ok and (scatter or not wr):
                # a read whose active lanes each lie within one segment, in any order
                # and under any mask (a gather's), without the general path below,
                # whose per-lane mask test, order checks and hash probes each
                # mispredict in a gather: the lanes' keys are placed in order, equal
                # keys in one place, their sectors OR-ed there, and the places taken,
                # in order, are the requests. Keys within 64 of the least are placed
                # by their distance from it (a bitmap of the places taken), others by
                # their rank among the group's keys (the count of smaller ones). A
                # lane that straddles its segment's end leaves this path. With
                # ``scatter``, writes take it too, each place OR-ing its lanes' written
                # bytes per sector (``pbytes``) for its fully written sectors.
                n = _popcount32(np.uint32(np.uint64(msk) & gm))
                if n > 0 and k + n <= na:
                    bad = False
                    kmin = np.int64(addrs[a0 + k]) >> seg_log2
                    kmax = kmin
                    for q in range(n):
                        a = np.int64(addrs[a0 + k + q])
                        key = a >> seg_log2
                        bad |= (a + w - 1) >> seg_log2 != key
                        kmin = min(kmin, key)
                        kmax = max(kmax, key)
                        lkey[q] = key
                        lsec[q] = _sector_span(a & (line_bytes - 1), w, sec_log2)
                    if not bad:
                        # every place's row written, the next request's row advancing
                        # past the places taken only: at most n rows, within the
                        # buffer's bound of two per lane
                        if kmax - kmin < 64:
                            taken = np.uint64(0)
                            for q in range(n):
                                d = lkey[q] - kmin
                                taken |= np.uint64(1) << np.uint64(d)
                                nsec[d] |= lsec[q]
                                if scatter and wr:
                                    _add_bytes(
                                        pbytes,
                                        d,
                                        addrs[a0 + k + q],
                                        w,
                                        line_bytes,
                                        sector_bytes,
                                        sec_log2,
                                    )
                            for d in range(kmax - kmin + 1):
                                out_line[nr] = ((kmin + d) * seg) >> line_log2
                                out_mask[nr] = nsec[d]
                                out_full[nr] = 0
                                if scatter and wr:
                                    out_full[nr] = _full_sectors(pbytes, d, spl, sec_all)
                                    pbytes[d, :spl] = 0  # zero for the next group
                                nsec[d] = 0  # all zero again for the next group
                                nr += np.int64((taken >> np.uint64(d)) & np.uint64(1))
                        else:
                            for x in range(n):
                                psec[x] = 0
                                ptaken[x] = 0
                            for x in range(n):
                                kx = lkey[x]
                                rank = 0
                                for y in range(n):  # vectorised by LLVM
                                    rank += lkey[y] < kx
                                pkey[rank] = kx
                                psec[rank] |= lsec[x]
                                ptaken[rank] = 1
                                if scatter and wr:
                                    _add_bytes(
                                        pbytes,
                                        rank,
                                        addrs[a0 + k + x],
                                        w,
                                        line_bytes,
                                        sector_bytes,
                                        sec_log2,
                                    )
                            for x in range(n):
                                out_line[nr] = (pkey[x] * seg) >> line_log2
                                out_mask[nr] = psec[x]
                                out_full[nr] = 0
                                if scatter and wr:
                                    out_full[nr] = _full_sectors(pbytes, x, spl, sec_all)
                                    pbytes[x, :spl] = 0
                                nr += ptaken[x]
                        k += n
                        continue
            nk = 0
            gen += 1
            ascending = True
            for lane in range(g0, g0 + group):
                if not (msk >> np.uint32(lane)) & np.uint32(1) or k >= na:
                    continue
                a = np.int64(addrs[a0 + k])
                k += 1
                last = a + w - 1
                b = a
                while b <= last:
                    key = _div(b, seg, seg_log2)
                    seg_end = (key + 1) * seg - 1
                    e = last if last < seg_end else seg_end
                    # fast paths: the key of the previous lane again, or a key above every
                    # key so far while they are still ascending (no hash needed: lanes of
                    # coalesced and of strided accesses); the hash is built from the keys
                    # so far when the order first breaks
                    if nk > 0 and keys[nk - 1] == key:
                        x = nk - 1
                    else:
                        x = -1
                        if not (ascending and (nk == 0 or key > keys[nk - 1])):
                            if ascending:
                                ascending = False
                                for y in range(nk):
                                    h = _slot(keys[y])
                                    while h_gen[h] == gen:
                                        h = (h + 1) & (_HASH - 1)
                                    h_gen[h] = gen
                                    h_key[h] = keys[y]
                                    h_pos[h] = y
                            h = _slot(key)
                            while h_gen[h] == gen and h_key[h] != key:
                                h = (h + 1) & (_HASH - 1)
                            if h_gen[h] == gen:
                                x = h_pos[h]
                            else:
                                h_gen[h] = gen
                                h_key[h] = key
                                h_pos[h] = nk
                        if x < 0:  # a new key: no sector touched, no byte written yet
                            x = nk
                            keys[nk] = key
                            kmask[nk] = 0
                            if wr:
                                for s in range(spl):
                                    kbytes[nk, s] = 0
                            nk += 1
                    off = _mod(b, line_bytes, line_log2)
                    offe = _mod(e, line_bytes, line_log2)
                    s_hi = _div(offe, sector_bytes, sec_log2)
                    for s in range(_div(off, sector_bytes, sec_log2), s_hi + 1):
                        kmask[x] |= np.uint32(1) << np.uint32(s)
                        if wr:
                            kbytes[x, s] |= _sector_bits(off, offe, s, sector_bytes)
                    b = e + 1
            # emit the group's requests sorted by address: the keys are sorted with the
            # slot of their mask and bytes (by rank up to _RANK_KEYS keys, else by
            # insertion; nk <= _MAX_KEYS)
            if not ascending and nk <= _RANK_KEYS:
                # the keys are distinct: each one's rank is the number of smaller keys,
                # counted without a branch (vectorised), and it goes there; a random
                # gather's 32 keys took an insertion sort of about 250 swaps, each
                # insertion ending in a mispredicted branch
                for x in range(nk):
                    kx = keys[x]
                    rank = 0
                    for y in range(nk):
                        rank += keys[y] < kx
                    kslot[rank] = x
                    ksorted[rank] = kx
                for x in range(nk):
                    keys[x] = ksorted[x]
            else:
                for x in range(nk):
                    kslot[x] = x
                for x in range(1, 0 if ascending else nk):
                    y = x
                    while y > 0 and keys[y - 1] > keys[y]:
                        keys[y - 1], keys[y] = keys[y], keys[y - 1]
                        kslot[y - 1], kslot[y] = kslot[y], kslot[y - 1]
                        y -= 1
            for x in range(nk):
                q = kslot[x]
                out_line[nr] = _div(keys[x] * seg, line_bytes, line_log2)
                out_mask[nr] = kmask[q]
                fm = np.uint32(0)
                if wr:
                    fm = _full_sectors(kbytes, q, spl, sec_all)
                out_full[nr] = fm
                nr += 1
        req_ptr[j + 1] = nr
    return nr


# The coalescer compiled with and without its look-ahead and its scatter paths (``ahead``
# and ``scatter`` as constants: four compiled loops, each on first use), by whether the
# instructions are far apart and whether many are scattered. Written
# out, as ``mdm.memory._core``'s ``_RUN_TIMED`` entries are: numba's on-disk cache keys a
# function by its name and source line, so a factory's entries would share one.
@njit(cache=True)
def _coalesce_ahead(args: tuple) -> int:
    return _coalesce(args, True, False)


@njit(cache=True)
def _coalesce_plain(args: tuple) -> int:
    return _coalesce(args, False, False)


@njit(cache=True)
def _coalesce_scatter_ahead(args: tuple) -> int:
    return _coalesce(args, True, True)


@njit(cache=True)
def _coalesce_scatter(args: tuple) -> int:
    return _coalesce(args, False, True)


#: by (:func:`_sparse`, :func:`_scattered`)
_COALESCE = {
    (True, False): _coalesce_ahead,
    (False, False): _coalesce_plain,
    (True, True): _coalesce_scatter_ahead,
    (False, True): _coalesce_scatter,
}
