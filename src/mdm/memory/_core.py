"""Numba kernels of the cache simulator (arrays and scalars only; validated by the caller).

Cache state of a group of ``C`` caches (the L1s of all SMs, or the L2 banks), ``S``
sets, ``W`` ways, ``NS`` state sectors per line (1 when not sectored):
``tags[C,S,W]`` (line index, -1 = invalid), ``lru[C,S,W]`` (last-use stamp, int32:
:func:`renumber_stamps`),
``valid``/``dirty``/``partial`` ``[C,S,W]`` sector bit masks, ``fill[C,S,W,NS]`` time
(core cycles) at which an in-flight sector arrives, ``merges[C,S,W,NS]`` requests
merged into that sector's MSHR entry.

Speed: the per-access functions that take arrays but allocate none (:func:`l2_access`,
:func:`_run_kernel`'s ``run_kernel``, :mod:`mdm.memory.streaming`) are compiled with
``_nrt=False``: without numba's reference counting, a call no longer increfs/decrefs
every array argument (out-of-line atomic NRT calls: the L2 call cost ~130 ns per
access). ``run_kernel`` and the helpers it calls are inlined into the issue loop
(:func:`_timed_loop`), which calls it once per memory instruction, by LLVM
(``forceinline``; :data:`mdm._jit.inlined` for the helpers: numba's IR-level
``inline="always"`` copied and typed their IR at every call site). It takes the
cache state as one tuple (``cache_args``, unpacked inside: CPython passes more than 30
arguments as ``*args``, which numba cannot inline), so no call passes its ~50 arrays
(~300 scalars) per instruction. The issue loop is compiled once per (L1, L2) sectoring
and L1 fill policy that occurs, with the other layouts' branches pruned
(:func:`run_timed`). Every index of the hot loops goes through
:func:`mdm.memory._index.u` (unsigned: no negative-index wraparound code).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import types
from numba.extending import overload

from mdm._jit import inlined, njit
from mdm.memory import streaming
from mdm.memory._index import u as _u

# access outcomes
HIT = 0
PENDING = 1
MISS = 2
PENDING_FULL = 3  # a pending hit whose MSHR entry has no merge slot left (L2 only)

# counter slots
C_L1_RD = 0
C_L1_RD_HIT = 1
C_L1_RD_PEND = 2
C_L1_RD_MISS = 3
C_L1_WR = 4
C_L2 = 5
C_L2_MISS = 6
C_L2_RD = 7
C_L2_RD_MISS = 8
C_DRAM_RD = 9
C_DRAM_WR = 10
C_L2_PEND = 11
C_L2_MERGE_STALLS = 12
C_L2_BLOCKED = 13
C_L2_MSHR_STALLS = 14  # L2 misses that found every MSHR entry of their bank in flight
C_L2_MSHR_BLOCKED = 15  # bank-cycles those misses held their bank's input
C_L2_MSHR_ALLOC = 16  # L2 MSHR entries taken (DRAM fetches that did not share a line's entry)
N_COUNTERS = 17

# per-instruction slots
I_L1_ACC = 0
I_L1_HIT = 1
I_L1_PEND = 2
I_L1_MISS = 3
I_L2_ACC = 4
I_L2_MISS = 5
I_DRAM_BYTES = 6  # DRAM bytes the instruction's L2 accesses moved (fetches + write-backs)
I_L1_WAIT = 7  # cycles its accesses held the blocking L1 waiting (all causes, rounded)
I_DRAM_ACT = 8  # row activations' channel time beyond its transfers' bytes, in bytes at
# the channel's rate (0 without the row model; :func:`dram_queue`)
N_INST = 9

# slots of the L1's wait sums (``mq_wait`` of ``cache_args``; core cycles, over the SMs):
# why a blocking L1 held its port (Accel-Sim's ``l1d_fail_*`` reservation-fail causes)
W_MISS_QUEUE = 0  # the miss queue was full (MISS_QUEUE_FULL)
W_MSHR = 1  # no free MSHR entry (MSHR_ENRTY_FAIL)
W_MERGE = 2  # the read's MSHR entry had no merge slot left (MSHR_MERGE_ENRTY_FAIL)
W_ALLOC = 3  # every way of the set was reserved by a fill in flight (LINE_ALLOC_FAIL)
N_WAITS = 4


@inlined
def waited(wait: np.ndarray) -> float:
    """The L1's waits so far, all causes (the sum of ``wait``'s ``N_WAITS`` slots)."""
    return wait[W_MISS_QUEUE] + wait[W_MSHR] + wait[W_MERGE] + wait[W_ALLOC]


@inlined
def n_bits(m: np.uint32) -> np.int64:
    """Number of set bits of the sector mask ``m``."""
    n = np.int64(0)
    while m:
        n += np.int64(m & np.uint32(1))
        m >>= np.uint32(1)
    return n


@inlined
def fermi_hash_set(line: np.int64, line_log2: np.int64, nsets: np.int64) -> np.int64:
    """GPGPU-Sim FERMI_HASH_SET_FUNCTION (Nugteren et al. HPCA 2014), 32 or 64 sets."""
    addr = line << line_log2
    lower = (addr >> line_log2) & 0x1F
    upper = (addr & 0xE000) >> 13
    upper |= (addr & 0x20000) >> 14
    upper |= (addr & 0x80000) >> 15
    s = lower ^ upper
    if nsets == 64:
        s |= (addr & 0x1000) >> 7
    return s


#: Sets of at most this many ways are searched by an early-exit scan, wider ones by
#: vectorised reductions (measured: 6-8 ways faster scanned, 24-256 reduced).
_SCAN_WAYS = 16


@inlined
def find_way(tags: np.ndarray, c: np.int64, s: np.int64, line: np.int64) -> np.int64:
    """First way of set ``s`` of cache ``c`` holding ``line``, or -1. Above
    ``_SCAN_WAYS`` ways a branch-free min reduction that LLVM vectorises (a 256-way
    Volta L1 set costs a few dozen vector operations, not 256 branches); below, the
    early-exit scan is faster."""
    nw = tags.shape[2]
    if nw <= _SCAN_WAYS:
        for w in range(nw):
            if tags[_u(c), _u(s), _u(w)] == line:
                return w
        return -1
    first = nw
    for w in range(nw):
        first = min(first, w if tags[_u(c), _u(s), _u(w)] == line else nw)
    return first if first < nw else -1


@inlined
def find_or_lru(
    tags: np.ndarray, lru: np.ndarray, c: np.int64, s: np.int64, line: np.int64
) -> tuple[np.int64, np.int64]:
    """``(find_way, _lru_scan)`` of set ``s`` in one pass: the way holding ``line`` (-1:
    none) and, when none does, the set's LRU candidate (the first invalid way, else
    the first with the least stamp; -1 when the line is found). A miss reads the set
    once instead of twice (a lookup, then a victim scan); a hit exits where
    :func:`find_way` would. Wide sets (above ``_SCAN_WAYS``): the two functions."""
    nw = tags.shape[2]
    if nw > _SCAN_WAYS:
        w = find_way(tags, c, s, line)
        return w, (_lru_scan(tags, lru, c, s) if w < 0 else np.int64(-1))
    # an invalid way's key is -1, below every stamp (stamps count from 0, and are a
    # set's ranks after renumber_stamps): the least key, first on ties, is the first
    # invalid way, else the first least recently used one (branch-free selects)
    lo = np.int64(0)
    lo_key = np.iinfo(np.int64).max
    for w in range(nw):
        tg = tags[_u(c), _u(s), _u(w)]
        if tg == line:
            return w, np.int64(-1)
        key = np.int64(lru[_u(c), _u(s), _u(w)]) if tg >= 0 else np.int64(-1)
        better = key < lo_key
        lo = w if better else lo
        lo_key = key if better else lo_key
    return np.int64(-1), lo


@inlined
def victim(
    tags: np.ndarray, lru: np.ndarray, fill: np.ndarray, c: np.int64, s: np.int64, t: float
) -> tuple[np.int64, float]:
    """Way to allocate: an invalid one, else the LRU way with nothing in flight at ``t``;
    if every way is reserved, the one that frees first (the access waits until then)."""
    return _victim_at(tags, lru, fill, c, s, _lru_scan(tags, lru, c, s), t)


@inlined
def _lru_scan(tags: np.ndarray, lru: np.ndarray, c: np.int64, s: np.int64) -> np.int64:
    """The first invalid way of set ``s``, else the first way with the least stamp:
    an early-exit scan up to ``_SCAN_WAYS`` ways, branch-free (vectorised) min
    reductions above."""
    nw = tags.shape[2]
    if nw <= _SCAN_WAYS:
        lo = -1
        lo_lru = np.int64(0)
        for w in range(nw):
            if tags[_u(c), _u(s), _u(w)] < 0:
                return w
            if lo < 0 or lru[_u(c), _u(s), _u(w)] < lo_lru:
                lo = w
                lo_lru = lru[_u(c), _u(s), _u(w)]
        return lo
    inval = nw
    lo_lru = np.iinfo(np.int64).max
    for w in range(nw):
        inval = min(inval, w if tags[_u(c), _u(s), _u(w)] < 0 else nw)
        lo_lru = min(lo_lru, lru[_u(c), _u(s), _u(w)])
    if inval < nw:
        return inval
    lo = nw
    for w in range(nw):
        lo = min(lo, w if lru[_u(c), _u(s), _u(w)] == lo_lru else nw)
    return lo


@inlined
def _victim_at(
    tags: np.ndarray,
    lru: np.ndarray,
    fill: np.ndarray,
    c: np.int64,
    s: np.int64,
    lo: np.int64,
    t: float,
) -> tuple[np.int64, float]:
    """:func:`victim` given the set's LRU candidate ``lo`` (:func:`_lru_scan`, or in the
    issue loop :func:`find_or_lru` and :func:`way_or_lru`, which reads it from the way
    index of wide sets). Fast path: the candidate is nearly always invalid or free,
    and then it is the answer; only when it is reserved are all ways' fill times read
    (a 256-way Volta L1 set would otherwise read 1,024 of them per miss)."""
    if _reserved(tags, fill, c, s, lo, t):
        return _victim_reserved(lru, fill, c, s, t)
    return lo, t


@inlined
def _reserved(
    tags: np.ndarray, fill: np.ndarray, c: np.int64, s: np.int64, w: np.int64, t: float
) -> bool:
    """Way ``w`` is valid and has a sector fill in flight at ``t``."""
    if tags[_u(c), _u(s), _u(w)] < 0:
        return False
    for k in range(fill.shape[3]):
        if fill[_u(c), _u(s), _u(w), _u(k)] > t:
            return True
    return False


@inlined
def _victim_reserved(
    lru: np.ndarray, fill: np.ndarray, c: np.int64, s: np.int64, t: float
) -> tuple[np.int64, float]:
    """:func:`victim` when the set's LRU way has a fill in flight at ``t``: the least
    recently used way with none, else the way that frees first (and when)."""
    nw = lru.shape[2]
    best = -1
    best_lru = np.int64(0)
    soon = -1
    soon_t = np.inf
    for w in range(nw):
        busy = _busy(fill, c, s, w)
        if busy <= t:
            if best < 0 or lru[_u(c), _u(s), _u(w)] < best_lru:
                best = w
                best_lru = lru[_u(c), _u(s), _u(w)]
        elif busy < soon_t:
            soon = w
            soon_t = busy
    if best >= 0:
        return best, t
    return soon, soon_t


@inlined
def _busy(fill: np.ndarray, c: np.int64, s: np.int64, w: np.int64) -> float:
    """Time way ``w`` of set ``s`` stops being reserved: its latest sector fill."""
    b = fill[_u(c), _u(s), _u(w), 0]
    for k in range(1, fill.shape[3]):
        b = max(b, fill[_u(c), _u(s), _u(w), _u(k)])
    return b


# ---- reserved-way heaps of wide sets (H100 L1: 4 sets x 512 ways) --------------------
#
# When every way of a wide set has a fill in flight (stride32 on the H100 preset: 64
# warps x 32 lines in flight fill all 2,048 ways of an SM's L1), each miss asks which way
# frees first, and :func:`_victim_reserved` read every way's fill times for it: 512 ways x
# 4 sectors (16 KB) per miss, 80 % of that simulation's time. So the first time a set's
# LRU way is reserved at a miss, :func:`_victim_heap` builds a binary min-heap of the
# set's ways by the time each frees (:func:`_busy`; ties by way): ``hw[C, S, W + 1]`` the
# way at each heap position (``hw[..., W]``: the heap's size, 0 until built) and ``ht[C,
# S, W]`` its key. Nothing updates the heap when a fill is written: a way's free time only
# rises (a miss's fill is later than the time its way was chosen, and a sector's fill is
# written only while the sector is not in flight), so every stored key is a lower bound
# of its way's time, and a top whose stored key is stale is given its current time and
# sifted down until the top's key is current: that top is the exact minimum, ties by way
# included. When the heap's top is free, some way is, and the least recently used free
# way is found by walking the LRU list of the way index from its head. The answers are
# :func:`_victim_reserved`'s, exactly (tested on random traces against the scans).


def new_victim_heaps(
    n_caches: int, sets: int, ways: int, on: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Empty reserved-way heaps ``(hw, ht)`` for ``n_caches`` caches of ``sets`` x
    ``ways``; empty arrays (none) for sets of at most ``_SCAN_WAYS`` ways or when ``on``
    is false (an L1 that allocates on fill reserves no way)."""
    if ways <= _SCAN_WAYS or not on:
        return np.zeros((n_caches, sets, 0), np.int16), np.zeros((n_caches, sets, 0))
    hw = np.zeros((n_caches, sets, ways + 1), np.int16 if ways < 2**15 else np.int32)
    return hw, np.empty((n_caches, sets, ways))


@inlined
def _earlier_way(ta: float, a: np.int64, tb: float, b: np.int64) -> bool:
    """Heap order: way ``a`` (free at ``ta``) before way ``b``, ties by way."""
    return ta < tb or (ta == tb and a < b)


@njit(cache=True, _nrt=False)
def _sift_down(
    hw: np.ndarray, ht: np.ndarray, c: np.int64, s: np.int64, i: np.int64, n: np.int64
) -> None:
    """Move heap entry ``i`` (of ``n``) of set ``s`` down to its place."""
    w = np.int64(hw[_u(c), _u(s), _u(i)])
    tw = ht[_u(c), _u(s), _u(i)]
    while True:
        ch = 2 * i + 1
        if ch >= n:
            break
        cw = np.int64(hw[_u(c), _u(s), _u(ch)])
        tc = ht[_u(c), _u(s), _u(ch)]
        if ch + 1 < n:
            rw = np.int64(hw[_u(c), _u(s), _u(ch + 1)])
            tr = ht[_u(c), _u(s), _u(ch + 1)]
            if _earlier_way(tr, rw, tc, cw):
                ch += 1
                cw = rw
                tc = tr
        if not _earlier_way(tc, cw, tw, w):
            break
        hw[_u(c), _u(s), _u(i)] = cw
        ht[_u(c), _u(s), _u(i)] = tc
        i = ch
    hw[_u(c), _u(s), _u(i)] = w
    ht[_u(c), _u(s), _u(i)] = tw


@njit(cache=True, _nrt=False)
def _victim_heap(
    lru: np.ndarray,
    fill: np.ndarray,
    ix: np.ndarray,
    hw: np.ndarray,
    ht: np.ndarray,
    c: np.int64,
    s: np.int64,
    lo: np.int64,
    t: float,
) -> tuple[np.int64, float]:
    """:func:`_victim_reserved` of a set whose LRU way ``lo`` (the head of the way
    index's list) is reserved at ``t``: from the set's heap (built the first time), or
    by the scan where there are no heaps (``hw`` empty)."""
    if hw.shape[2] == 0:
        return _victim_reserved(lru, fill, c, s, t)
    nw = fill.shape[2]
    if hw[_u(c), _u(s), _u(nw)] == 0:  # first time: every way, heapified bottom-up
        for w in range(nw):
            hw[_u(c), _u(s), _u(w)] = w
            ht[_u(c), _u(s), _u(w)] = _busy(fill, c, s, w)
        for i in range(nw // 2 - 1, -1, -1):
            _sift_down(hw, ht, c, s, i, nw)
        hw[_u(c), _u(s), _u(nw)] = nw
    while True:  # refresh stale tops: stored keys are lower bounds of the free times
        top = np.int64(hw[_u(c), _u(s), 0])
        t_top = _busy(fill, c, s, top)
        if t_top == ht[_u(c), _u(s), 0]:
            break
        ht[_u(c), _u(s), 0] = t_top
        _sift_down(hw, ht, c, s, 0, nw)
    if t_top > t:  # every way reserved: the first to free
        return top, t_top
    w = np.int64(ix[_u(c), _u(s), _u(2 * lo)])  # some way is free: the LRU-most one
    while _busy(fill, c, s, w) > t:
        w = np.int64(ix[_u(c), _u(s), _u(2 * w)])
    return w, t


@inlined
def victim_ix(
    tags: np.ndarray,
    lru: np.ndarray,
    fill: np.ndarray,
    ix: np.ndarray,
    hw: np.ndarray,
    ht: np.ndarray,
    c: np.int64,
    s: np.int64,
    lo: np.int64,
    t: float,
) -> tuple[np.int64, float]:
    """:func:`_victim_at` in the issue loop (``lo`` from :func:`way_or_lru`; ``hw``, ``ht``
    from :func:`new_victim_heaps`): the same way and time, out of line when ``lo`` is
    reserved."""
    if _reserved(tags, fill, c, s, lo, t):
        return _victim_heap(lru, fill, ix, hw, ht, c, s, lo, t)
    return lo, t


# ---- way index of wide sets (Volta-class L1s: 4 sets x 256 ways) ----------------------
#
# ``ix[C, S, X]`` (int16, or int32 past 16,383 ways) beside ``tags``: for each set, a
# doubly linked list of its ``W`` ways in LRU order (``ix[..., 2w]`` next, ``ix[..., 2w+1]``
# previous: a way's two links share a cache line; ``W`` is the list's sentinel:
# ``ix[..., 2W]`` is the least recently used way, ``ix[..., 2W+1]`` the most) and an
# open-addressing hash of ``NB`` buckets (a power of two >= 2W; linear probing,
# backward-shift deletion) from the line to its way (-1 empty; the key is read back
# from ``tags``). ``X = 0`` (sets of at most ``_SCAN_WAYS``
# ways) switches the index off and the scans above are used. The list stays in the order
# of the ``lru`` stamps because every stamp written is a fresh maximum and ways are only
# invalid before their first use (the L1s are flushed per kernel, the list starts as
# ways 0, 1, ... W-1): so its head is :func:`victim`'s "first invalid way, else the least
# stamp", and lookups and victims cost O(1) instead of O(W).
_HASH_MUL = np.uint64(0x9E3779B97F4A7C15)


def new_way_index(n_caches: int, sets: int, ways: int) -> np.ndarray:
    """An empty way index for ``n_caches`` caches of ``sets`` x ``ways`` (see above)."""
    if ways <= _SCAN_WAYS:
        return np.zeros((n_caches, sets, 0), np.int16)
    nb = 1
    while nb < 2 * ways:
        nb *= 2
    ix = np.full((n_caches, sets, 2 * ways + 2 + nb), -1, np.int16 if ways < 2**14 else np.int32)
    ix[:, :, 0 : 2 * ways + 2 : 2] = np.roll(np.arange(ways + 1), -1)  # next: w -> w + 1, W -> 0
    ix[:, :, 1 : 2 * ways + 2 : 2] = np.roll(np.arange(ways + 1), 1)  # prev
    return ix


@inlined
def _bucket0(line: np.int64, nb: np.int64) -> np.int64:
    """Home bucket of ``line`` (Fibonacci hashing: the product's bits 32 and up)."""
    return np.int64(((np.uint64(line) * _HASH_MUL) >> np.uint64(32)) & np.uint64(nb - 1))


@inlined
def way_of(tags: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64, line: np.int64) -> np.int64:
    """The way of set ``s`` of cache ``c`` holding ``line``, or -1 (:func:`find_way`)."""
    if ix.shape[2] == 0:
        return find_way(tags, c, s, line)
    return _way_of_wide(tags, ix, c, s, line)


@inlined
def way_or_lru(
    tags: np.ndarray, lru: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64, line: np.int64
) -> tuple[np.int64, np.int64]:
    """``(way_of, lru_way)``: the way holding ``line`` (-1: none) and, when none does,
    the set's LRU candidate (:func:`find_or_lru`; the way index's list head in wide
    sets)."""
    if ix.shape[2] == 0:
        return find_or_lru(tags, lru, c, s, line)
    w = _way_of_wide(tags, ix, c, s, line)
    return w, (lru_way(tags, lru, ix, c, s) if w < 0 else np.int64(-1))


# The wide-set bodies below are not marked for inlining: only the narrow path, the
# common one, is inlined into the issue loop's call sites.
@njit(cache=True, _nrt=False)
def _way_of_wide(
    tags: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64, line: np.int64
) -> np.int64:
    base = 2 * tags.shape[2] + 2
    m = ix.shape[2] - base - 1
    h = _bucket0(line, m + 1)
    while True:
        w = np.int64(ix[_u(c), _u(s), _u(base + h)])
        if w < 0:
            return -1
        if tags[_u(c), _u(s), _u(w)] == line:
            return w
        h = (h + 1) & m


@inlined
def set_tag(
    tags: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64, w: np.int64, line: np.int64
) -> None:
    """Put ``line`` in way ``w`` (replacing its line) and update the hash."""
    if ix.shape[2] == 0:
        tags[_u(c), _u(s), _u(w)] = line
    else:
        _set_tag_wide(tags, ix, c, s, w, line)


@njit(cache=True, _nrt=False)
def _set_tag_wide(
    tags: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64, w: np.int64, line: np.int64
) -> None:
    base = 2 * tags.shape[2] + 2
    m = ix.shape[2] - base - 1
    old = tags[_u(c), _u(s), _u(w)]
    if old >= 0:  # delete: find w's bucket, then shift later entries of its run back
        i = _bucket0(old, m + 1)
        while ix[_u(c), _u(s), _u(base + i)] != w:
            i = (i + 1) & m
        j = i
        while True:
            j = (j + 1) & m
            e = np.int64(ix[_u(c), _u(s), _u(base + j)])
            if e < 0:
                break
            home = _bucket0(tags[_u(c), _u(s), _u(e)], m + 1)
            if ((j - home) & m) >= ((j - i) & m):  # its home is not in (i, j]: move it
                ix[_u(c), _u(s), _u(base + i)] = e
                i = j
        ix[_u(c), _u(s), _u(base + i)] = -1
    tags[_u(c), _u(s), _u(w)] = line
    h = _bucket0(line, m + 1)
    while ix[_u(c), _u(s), _u(base + h)] >= 0:
        h = (h + 1) & m
    ix[_u(c), _u(s), _u(base + h)] = w


#: LRU stamps are stored as int32, half the bytes of int64 per way (the stride benchmark's
#: repeated simulations 2-4 % faster, docs/measurement-log.md). The counter
#: ``stamp[0]`` (int64, shared by the L1s and the L2) is renumbered by
#: :func:`renumber_stamps` before it passes this limit; the margin (16 M) is more than
#: one memory instruction (or one chunk of a host-to-device copy) can stamp.
STAMP_LIMIT = (1 << 31) - (1 << 24)


@njit(cache=True, _nrt=False)
def _rank_sets(lru: np.ndarray, scratch: np.ndarray) -> None:
    """Replace every set's stamps by their ranks (the number of the set's ways with a
    smaller stamp): the order within each set, ties included, is kept, and every rank
    is below the set's way count. ``scratch``: at least ``W`` int64."""
    nw = lru.shape[2]
    for c in range(lru.shape[0]):
        for s in range(lru.shape[1]):
            for w in range(nw):
                v = lru[c, s, w]
                r = 0
                for x in range(nw):
                    if lru[c, s, x] < v:
                        r += 1
                scratch[w] = r
            for w in range(nw):
                lru[c, s, w] = scratch[w]


@njit(cache=True, _nrt=False)
def renumber_stamps(l1_lru: np.ndarray, l2_lru: np.ndarray, stamp: np.ndarray) -> None:
    """Renumber the LRU stamps of the L1s and the L2 so that the int32 arrays never
    overflow: each set's stamps become their ranks (:func:`_rank_sets`) and the counter
    ``stamp[0]`` restarts above every rank. Only the order of the stamps within a set
    is ever compared (victims, the way index's list), so no result changes (tested).
    ``stamp[1:]`` is the scratch (the caller sizes it for the widest set). Called when
    ``stamp[0]`` reaches :data:`STAMP_LIMIT`: once per about two billion stamps."""
    scratch = stamp[1:]
    _rank_sets(l1_lru, scratch)
    _rank_sets(l2_lru, scratch)
    stamp[0] = max(l1_lru.shape[2], l2_lru.shape[2])


@inlined
def use_way(
    lru: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64, w: np.int64, stamp: np.int64
) -> None:
    """Way ``w`` was used at ``stamp`` (a fresh maximum): set its stamp, and move it to
    the most recently used end of the set's list."""
    lru[_u(c), _u(s), _u(w)] = stamp
    if ix.shape[2] > 0:
        _to_mru(ix, lru.shape[2], c, s, w)


@njit(cache=True, _nrt=False)
def _to_mru(ix: np.ndarray, nw: np.int64, c: np.int64, s: np.int64, w: np.int64) -> None:
    # way x's next link is ix[.., 2x], its previous 2x + 1; nw is the sentinel
    tail = np.int64(ix[_u(c), _u(s), _u(2 * nw + 1)])
    if tail == w:
        return
    p = np.int64(ix[_u(c), _u(s), _u(2 * w + 1)])
    n = np.int64(ix[_u(c), _u(s), _u(2 * w)])
    ix[_u(c), _u(s), _u(2 * p)] = n
    ix[_u(c), _u(s), _u(2 * n + 1)] = p
    ix[_u(c), _u(s), _u(2 * tail)] = w
    ix[_u(c), _u(s), _u(2 * w + 1)] = tail
    ix[_u(c), _u(s), _u(2 * w)] = nw
    ix[_u(c), _u(s), _u(2 * nw + 1)] = w


@inlined
def lru_way(
    tags: np.ndarray, lru: np.ndarray, ix: np.ndarray, c: np.int64, s: np.int64
) -> np.int64:
    """The first invalid way, else the least recently used one (the first of equal
    stamps), ignoring fills in flight."""
    if ix.shape[2] > 0:
        return np.int64(ix[_u(c), _u(s), _u(2 * tags.shape[2])])
    return _lru_scan(tags, lru, c, s)


@inlined
def fifo_slot(free: np.ndarray, i: np.int64, t: float, step: float) -> float:
    """A "free at" FIFO resource ``i`` (an L2 bank's port, an SM's NoC reply share, a
    DRAM channel): served from ``max(t, free[i])`` for ``step`` cycles; returns the
    start."""
    s = free[_u(i)] if free[_u(i)] > t else t
    free[_u(i)] = s + step
    return s


@inlined
def block_bank(
    bank_free: np.ndarray,
    b: np.int64,
    t: float,
    until: float,
    step: float,
    cnt: np.ndarray,
    stalls: np.int64,
    cycles: np.int64,
) -> None:
    """A request reaching bank ``b`` at ``t`` cannot be taken before ``until``: its L2
    MSHR entry's merge slots are full (it waits for the fill) or every MSHR entry of the
    bank is in flight (it waits for the oldest one's fill). GPGPU-Sim's reservation fail
    keeps the request at the head of the sub-partition's queue, so the bank's input
    serves nothing else before ``until`` (+ ``step`` for the request itself). Counts the
    event in ``cnt[stalls]`` and the cycles the bank's free time moved in
    ``cnt[cycles]``."""
    free = bank_free[_u(b)] if bank_free[_u(b)] > t else t
    if until + step > free:
        cnt[stalls] += 1
        cnt[cycles] += np.int64(until + step - free + 0.5)
        bank_free[_u(b)] = until + step


@njit(cache=True, _nrt=False)
def _block_bank_mshr(
    bank_free: np.ndarray, b: np.int64, t: float, until: float, step: float, cnt: np.ndarray
) -> None:
    """:func:`block_bank` for a miss without a free L2 MSHR entry, out of line: the path
    is rare, and inlining it into the issue loop lengthened its compilation."""
    block_bank(bank_free, b, t, until, step, cnt, C_L2_MSHR_STALLS, C_L2_MSHR_BLOCKED)


@inlined
def dram_queue(
    dram_free: np.ndarray,
    ch: np.int64,
    t: float,
    nbytes: np.int64,
    bpc: float,
    cnt: np.ndarray,
    counter: np.int64,
    rows: np.ndarray,
    line: np.int64,
    row_lines: np.int64,
    act: float,
) -> tuple[float, float]:
    """Occupy DRAM channel ``ch`` for ``nbytes`` at ``bpc`` bytes per core cycle from
    ``max(t, channel free)`` and add ``nbytes`` to ``cnt[counter]`` (``C_DRAM_RD`` or
    ``C_DRAM_WR``), so that every transfer queued is counted; returns the service start
    (FIFO in arrival order).

    Row activations (``dram.activate_ns`` > 0): ``rows[ch, bank]`` is the open row of
    each bank of channel ``ch`` (-1: none). A transfer of ``line`` whose row (``line //
    row_lines``, the lines of ``dram.row_bytes`` per channel in the global address
    space; bank ``row mod banks``) is not open opens it and occupies the channel at least
    ``act`` core cycles: a channel activates one row at a time (tRRD / tFAW), so random
    accesses are limited by their number, not their bytes. ``rows`` without columns: no
    row model."""
    cnt[counter] += nbytes
    service = nbytes / bpc
    extra = 0.0
    nb = rows.shape[1]
    if nb > 0:
        row = line // row_lines
        bank = row % nb
        if rows[ch, bank] != row:
            rows[ch, bank] = row
            if act > service:
                extra = (act - service) * bpc
                service = act
    return fifo_slot(dram_free, ch, t, service), extra


@inlined
def l2_access(
    tags: np.ndarray,
    lru: np.ndarray,
    valid: np.ndarray,
    dirty: np.ndarray,
    partial: np.ndarray,
    fill: np.ndarray,
    merges: np.ndarray,
    stamp: np.ndarray,
    cnt: np.ndarray,
    b: np.int64,
    s: np.int64,
    line: np.int64,
    k: np.int64,
    t: float,
    is_write: bool,
    full: bool,
    write_back: bool,
    write_alloc: bool,
    max_merge: np.int64,
    fetch_bytes: np.int64,
    dram_lat: float,
    dram_free: np.ndarray,
    ch: np.int64,
    dram_bpc: float,
    group: np.int64,
    rows: np.ndarray,
    row_lines: np.int64,
    act: float,
    mshr: tuple,
) -> tuple[np.int64, float, np.int64, float]:
    """One L2 access to state sector ``k`` of ``line``; returns (outcome, data-ready time,
    DRAM bytes moved: the fetch and a dirty victim's write-back, and the channel time
    their row activations added, in bytes at the channel's rate).

    Write-back write-allocate: a hit marks the sector dirty; a write miss allocates,
    without a fetch when ``full`` (the whole line, or sector when sectored, is written),
    else fetching it first (non-sectored, GPGPU-Sim fetch-on-write ``F``) or marking it
    partial so that a later read fetches it (sectored, lazy fetch-on-read ``L``). A
    write hit that covers the whole sector makes a partial sector readable (GPGPU-Sim
    ``wr_hit_wb`` -> ``update_m_readable``); partial writes that only together cover
    it leave it partial (no byte masks are kept: a later read fetches it).
    A dirty victim writes its dirty sectors (the whole line when not sectored) to DRAM.

    Timing: every DRAM transfer (fetch or write) occupies channel ``ch`` for
    ``bytes / dram_bpc`` cycles, or a row activation (:func:`dram_queue`); a fetch's data
    is ready ``dram_lat`` after its service starts (the uncontended latency includes the
    transfer).

    Fetch granularity (``l2.fetch_bytes``, sectored L2): a read miss fetches the aligned
    group of ``group`` sectors around sector ``k`` in one transfer; the group's sectors
    that are not valid become valid with the same fill time and no merged request, so a
    later access to them hits (or merges while in flight) as on the hardware.

    MSHR capacity (``l2.mshr_per_bank``; ``mshr`` = ``(mring, mhead, bank_free,
    bank_step)``): a fetch takes one of its bank's MSHR entries until its data are back
    from DRAM; a fetch of a sector whose line has another sector in flight shares that
    line's entry (GPGPU-Sim's L2 MSHRs are per line, ``A`` in ``-gpgpu_cache:dl2``).
    ``mring[b]`` holds the fill times of bank ``b``'s last ``mshr_per_bank`` entries,
    oldest at ``mhead[b]``; entries free in that order (a bank's fetches queue FIFO at
    one DRAM channel, so their fills are in order, except for an entry shared by a later
    sector, which frees at its first fill). A fetch that finds the oldest still in
    flight waits for its fill (``MSHR_ENRTY_FAIL``) and holds its bank's input until
    then (:func:`block_bank` on ``bank_free``: ``C_L2_MSHR_STALLS``,
    ``C_L2_MSHR_BLOCKED``).
    """
    ns = fill.shape[3]
    moved = np.int64(0)
    act_b = 0.0
    bit = np.uint32(1) << np.uint32(k)
    stamp[0] += 1
    w, lo = find_or_lru(tags, lru, b, s, line)
    if (
        w >= 0
        and (valid[_u(b), _u(s), _u(w)] & bit)
        and not (partial[_u(b), _u(s), _u(w)] & bit and not is_write)
    ):
        lru[_u(b), _u(s), _u(w)] = stamp[0]
        if is_write:
            if full:  # every byte of the sector written: readable (update_m_readable)
                partial[_u(b), _u(s), _u(w)] &= ~bit
            if write_back:
                dirty[_u(b), _u(s), _u(w)] |= bit
            else:
                moved += fetch_bytes
                _, x = dram_queue(
                    dram_free, ch, t, fetch_bytes, dram_bpc, cnt, C_DRAM_WR,
                    rows, line, row_lines, act,
                )  # fmt: skip
                act_b += x
        if fill[_u(b), _u(s), _u(w), _u(k)] > t:
            cnt[C_L2_PEND] += 1
            if merges[_u(b), _u(s), _u(w), _u(k)] < max_merge:
                merges[_u(b), _u(s), _u(w), _u(k)] += 1
                return PENDING, fill[_u(b), _u(s), _u(w), _u(k)], moved, act_b
            return PENDING_FULL, fill[_u(b), _u(s), _u(w), _u(k)], moved, act_b
        return HIT, t, moved, act_b
    # miss
    if is_write and not write_alloc:
        moved += fetch_bytes
        _, x = dram_queue(
            dram_free, ch, t, fetch_bytes, dram_bpc, cnt, C_DRAM_WR, rows, line, row_lines, act
        )
        act_b += x
        return MISS, t, moved, act_b
    t_eff = t
    if w < 0:
        w, t_eff = _victim_at(tags, lru, fill, b, s, lo, t)
        old = tags[_u(b), _u(s), _u(w)]
        if old >= 0 and dirty[_u(b), _u(s), _u(w)]:
            if ns == 1:
                moved += fetch_bytes
                _, x = dram_queue(
                    dram_free, ch, t, fetch_bytes, dram_bpc, cnt, C_DRAM_WR,
                    rows, old, row_lines, act,
                )  # fmt: skip
                act_b += x
            else:
                n = n_bits(dirty[_u(b), _u(s), _u(w)])
                moved += n * fetch_bytes
                _, x = dram_queue(
                    dram_free, ch, t, n * fetch_bytes, dram_bpc, cnt, C_DRAM_WR, rows, old,
                    row_lines, act,
                )  # fmt: skip
                act_b += x
        tags[_u(b), _u(s), _u(w)] = line
        valid[_u(b), _u(s), _u(w)] = 0
        dirty[_u(b), _u(s), _u(w)] = 0
        partial[_u(b), _u(s), _u(w)] = 0
        for q in range(ns):
            fill[_u(b), _u(s), _u(w), _u(q)] = -np.inf
            merges[_u(b), _u(s), _u(w), _u(q)] = 0
    lru[_u(b), _u(s), _u(w)] = stamp[0]
    valid[_u(b), _u(s), _u(w)] |= bit
    merges[_u(b), _u(s), _u(w), _u(k)] = (
        1  # the entry's list holds the miss itself (GPGPU-Sim mshr_table)
    )
    ready = t_eff
    # a read fetches its sector (and its fetch group); a write only the non-sectored
    # line it does not cover (fetch-on-write), a sectored one marks the sector partial
    fetch = not is_write
    extra = np.uint32(0)  # the fetch group's other sectors that are not valid
    if is_write:
        if write_back:
            dirty[_u(b), _u(s), _u(w)] |= bit
        else:
            moved += fetch_bytes
            _, x = dram_queue(
                dram_free, ch, t_eff, fetch_bytes, dram_bpc, cnt, C_DRAM_WR,
                rows, line, row_lines, act,
            )  # fmt: skip
            act_b += x
        if full:
            partial[_u(b), _u(s), _u(w)] &= ~bit
        elif ns > 1:
            partial[_u(b), _u(s), _u(w)] |= bit
        else:
            fetch = True
    else:
        partial[_u(b), _u(s), _u(w)] &= ~bit
        if group > 1:
            g0 = (k // group) * group
            for q in range(g0, g0 + group):
                qb = np.uint32(1) << np.uint32(q)
                if q != k and not valid[_u(b), _u(s), _u(w)] & qb:
                    extra |= qb
    if fetch:
        entry = True  # a new MSHR entry, unless another sector of the line is in flight
        if ns > 1:
            for q in range(ns):
                if q != k and fill[_u(b), _u(s), _u(w), _u(q)] > t:
                    entry = False
        mring, mhead, bank_free, bank_step = mshr
        h = mhead[_u(b)]
        if entry and mring[_u(b), _u(h)] > t_eff:  # every entry in flight: the oldest frees
            t_eff = mring[_u(b), _u(h)]
            _block_bank_mshr(bank_free, b, t, t_eff, bank_step, cnt)
        nbytes = fetch_bytes * (1 + n_bits(extra))
        moved += nbytes
        start, x = dram_queue(
            dram_free, ch, t_eff, nbytes, dram_bpc, cnt, C_DRAM_RD,
            rows, line, row_lines, act,
        )  # fmt: skip
        act_b += x
        ready = start + dram_lat
        if extra:
            valid[_u(b), _u(s), _u(w)] |= extra
            for q in range(ns):
                if (extra >> np.uint32(q)) & np.uint32(1):
                    fill[_u(b), _u(s), _u(w), _u(q)] = ready
                    merges[_u(b), _u(s), _u(w), _u(q)] = 0
        if entry:
            mring[_u(b), _u(h)] = ready
            mhead[_u(b)] = h + 1 if h + 1 < mring.shape[1] else 0
            cnt[C_L2_MSHR_ALLOC] += 1
    fill[_u(b), _u(s), _u(w), _u(k)] = ready
    return MISS, ready, moved, act_b


@inlined
def miss_queue(
    ring: np.ndarray,
    head: np.ndarray,
    c: np.int64,
    t: float,
    l1_port: np.ndarray,
    port_step: float,
    wait: np.ndarray,
) -> float:
    """Send one request of SM ``c`` ready at ``t`` through its L1 miss queue; returns
    when it leaves for the L2.

    GPGPU-Sim's ``baseline_cache::cycle`` moves one request per cycle from the miss
    queue (``l1.miss_queue_entries``) to the interconnect; an access that finds the queue
    full fails (``MISS_QUEUE_FULL``) and retries, holding the L1 (blocking). ``ring[c]``
    holds the departure times of the SM's last ``entries`` requests, oldest at
    ``head[c]``: the request enters when that one has left, departs one cycle after the
    previous one at the earliest, and the L1 port waits until it has entered
    (``wait[W_MISS_QUEUE]`` sums those waits)."""
    n = ring.shape[1]
    h = head[_u(c)]
    t_in = ring[_u(c), _u(h)] if ring[_u(c), _u(h)] > t else t
    if t_in > t:
        wait[W_MISS_QUEUE] += t_in - t
        if t_in + port_step > l1_port[_u(c)]:
            l1_port[_u(c)] = t_in + port_step
    prev = ring[_u(c), _u(h - 1 if h > 0 else n - 1)] + 1.0
    t_out = prev if prev > t_in else t_in
    ring[_u(c), _u(h)] = t_out
    head[_u(c)] = h + 1 if h + 1 < n else 0
    return t_out


@functools.cache
def _run_kernel(l1_sectored: bool, l2_sectored: bool, may_fill: bool) -> Callable[..., None]:
    """``run_kernel`` (below) for one sectoring of the L1 and the L2, and for an L1 that
    may allocate on fill (a streaming L1 with its tags at the fill) or never does: the
    flags are closure constants, so numba prunes the other layout's branches, and
    without ``may_fill`` the streaming L1's table (:mod:`mdm.memory.streaming`) is not
    compiled at all (about 4-6 s of a cold compilation); LLVM inlines it into
    the issue loop (:func:`_timed_loop_impl`): ``forceinline``. Cold compile of the
    mdm_pascal loop 91-97 s -> 54-60 s in one slow hour (numba copies an IR-inlined
    callee's IR block by block, with its whole scope each time); repeated simulations
    within the noise, at most ~5 % slower (docs/measurement-log.md)."""

    @njit(_nrt=False, forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
    def run_kernel(
        order: np.ndarray,
        i_sm: np.ndarray,
        i_time: np.ndarray,
        cache_args: tuple,
    ) -> None:
        """Simulate the instructions ``order`` (indices into the coalesced requests) in order.

        ``cache_args``: the tuple unpacked below, in that order (``i_kind`` ...
        ``l2_mhead``).

        ``i_kind``: 0 load, 1 store, 2 atomic (performed at the L2, bypassing the L1).
        Timing (core cycles; :mod:`mdm.memory.schedule` gives ``i_time``):

        * a request enters the L1 of SM ``c`` at ``max(i_time, l1_port[c])`` and occupies it
          ``port_step`` (1 / ``l1.banks``) cycles; the L1 is *blocking*: a miss that waits for
          a free MSHR entry (the entry allocated ``mshr_entries`` misses earlier frees at its
          fill), for a reserved way (every way of the set has a fill in flight), or a
          read to a line whose merge slots are full (waits for the fill) holds every later
          access of the SM;
        * a request for the L2 (read miss, store, atomic) leaves through the SM's miss queue,
          one per cycle, holding the L1 while the queue is full (:func:`miss_queue`);
        * a miss (and a store) queues at its L2 bank's port: served at ``max(t,
          bank_free[bank])``, then ``bank_free[bank]`` advances by ``bank_step`` (core
          cycles per request a port serves; 0: no port limit);
        * the L2 sees it then; an L2 miss takes one of its bank's MSHR entries (waiting,
          and holding the bank, while all are in flight: :func:`l2_access`) and queues at
          its DRAM channel (``bank_ch[bank]`` = ``bank * channels // banks``,
          :func:`dram_queue`);
        * its reply takes a slot of the SM's share of the NoC, ``max(t, noc_free[c])``,
          then ``noc_free[c]`` advances by ``noc_step`` (reply bytes / the SM's bytes per
          cycle): the reply bandwidth is enforced in request order, and the data arrive
          ``l2_lat`` after the later of that slot and the L2's data (+ ``dram_lat`` for
          a miss; paper 001 eq. 4: L_MinLLC + L_MinDRAM when uncontended). The slot
          delays the data, not the L2's view of the request: a burst of one SM's misses
          queues for its reply port while the L2 already merges (or, past the merge
          limit, blocks on) the other SMs' requests for the same lines;
        * ``i_done[j]``: when all of instruction ``j``'s requests have their data, plus
          ``l1_lat`` (the L1 pipeline paid by hits and misses alike).
        """
        (
            i_kind,
            req_ptr,
            req_line,
            req_mask,
            req_full,
            req_bank,
            req_l2set,
            pend,
            pend_t,
            pend_n,
            spl,
            line_log2,
            l1_enabled,
            l1_hash,
            l1_max_merge,
            l1_tags,
            l1_lru,
            l1_valid,
            l1_fill,
            l1_merges,
            l1_ix,
            l1_hw,
            l1_ht,
            mshr_ring,
            mshr_head,
            banks,
            interleave,
            l2_max_merge,
            write_back,
            write_alloc,
            sector_bytes,
            l2_tags,
            l2_lru,
            l2_valid,
            l2_dirty,
            l2_partial,
            l2_fill,
            l2_merges,
            stamp,
            l2_lat,
            dram_lat,
            cnt,
            per_inst,
            l1_port,
            port_step,
            noc_free,
            noc_step,
            dram_free,
            bank_ch,
            dram_bpc,
            l2_group,
            dram_rows,
            dram_row_lines,
            dram_act,
            l1_lat,
            i_done,
            bank_free,
            bank_step,
            mq_ring,
            mq_head,
            mq_wait,
            l2_mring,
            l2_mhead,
        ) = cache_args

        l1_sets = l1_tags.shape[1]
        # a linear set index: a mask for a power-of-two set count (lines are >= 0), not
        # a 64-bit division per access
        l1_set_mask = l1_sets - 1 if l1_sets & (l1_sets - 1) == 0 else -1
        if may_fill:  # streaming L1: allocate on fill (mdm.memory.streaming), per kernel
            on_fill = pend.shape[1] > 0
        else:
            on_fill = False
        p_due = pend_t.shape[1] - 1  # column of each SM's earliest pending fill time
        line_bytes = np.int64(1) << line_log2
        l2_fetch = sector_bytes if l2_sectored else line_bytes
        all_sec = np.uint32((np.int64(1) << spl) - 1)
        nq2 = spl if l2_sectored else 1  # L2 accesses per request: one per sector, or the line
        n_mshr = mshr_ring.shape[1]
        for oi in range(order.shape[0]):
            if stamp[0] >= STAMP_LIMIT:  # int32 LRU stamps: renumber before they overflow
                renumber_stamps(l1_lru, l2_lru, stamp)
            j = order[_u(oi)]
            c = np.int64(i_sm[_u(j)])
            kind = i_kind[_u(j)]
            t0 = i_time[_u(j)]
            done_j = t0
            # this instruction's counts, kept in registers and stored once at its end
            n_acc = 0  # L1 accesses
            n_hit = 0
            n_pend = 0
            n_miss = 0  # L1 misses (reads and writes)
            n_wr = 0  # L1 write accesses
            n_l2 = 0
            n_l2m = 0
            n_l2rd = 0
            n_l2rdm = 0
            n_dram = 0  # DRAM bytes moved
            n_act = 0.0  # DRAM channel time of row activations, bytes at the channel rate
            w0 = waited(mq_wait)
            for r in range(req_ptr[_u(j)], req_ptr[_u(j + 1)]):
                t = l1_port[_u(c)] if l1_port[_u(c)] > t0 else t0
                l1_port[_u(c)] = t + port_step
                line = req_line[_u(r)]
                rmask = req_mask[_u(r)]
                # a store's fully written sectors; a load or atomic never reads them, and
                # skipping the array spares a first simulation its kernel-order reads
                rfull = np.uint32(req_full[_u(r)]) if kind == 1 else np.uint32(0)
                # L2 bank and partition-local set (channel bits removed)
                b = req_bank[_u(r)]  # precomputed by mdm.memory.hashing.l2_bank_and_set
                s2 = req_l2set[_u(r)]
                ch = bank_ch[_u(b)]  # DRAM channel of the bank: b * channels // banks
                is_w = kind != 0
                # stores (write-through, no allocate) and atomics go to the L2 directly, as
                # do loads when the L1 is off; one pass of the loop below, the L2 access
                # at t's bank-port slot
                direct = kind != 0 or not l1_enabled
                s1 = 0
                if l1_enabled and kind != 2:  # the L1 set of a read or a store
                    if l1_hash:
                        s1 = fermi_hash_set(line, line_log2, l1_sets)
                    elif l1_set_mask >= 0:
                        s1 = line & l1_set_mask
                    else:
                        s1 = line % l1_sets
                if direct:
                    nk = 1
                    if l1_enabled:
                        # L1 requests: a store's sectors written (sectored L1), else one
                        n1 = n_bits(rmask) if l1_sectored and kind == 1 else 1
                        for _ in range(n1):  # each leaves through the miss queue
                            t = miss_queue(mq_ring, mq_head, c, t, l1_port, port_step, mq_wait)
                        if kind == 1:
                            w1 = way_of(l1_tags, l1_ix, c, s1, line)
                            if w1 >= 0:
                                stamp[0] += 1
                                use_way(l1_lru, l1_ix, c, s1, w1, stamp[0])
                            n_wr += n1
                            n_acc += n1
                            n_miss += n1
                else:
                    nk = spl if l1_sectored else 1
                for k in range(nk):
                    if direct:
                        qmask = rmask  # the request's sectors (sectored L2)
                        # a load past a disabled L1, a store or an atomic: the bank's port
                        # serves it as an L1 miss
                        t_l2 = fifo_slot(bank_free, b, t, bank_step)
                        t_eff = t_l2
                        if kind != 1:  # a load's or an atomic's data take a reply slot
                            t_eff = fifo_slot(noc_free, c, t_eff, noc_step)
                    else:
                        # ---- L1 read of sector k (the line when not sectored) ----
                        if l1_sectored and not (rmask >> np.uint32(k)) & np.uint32(1):
                            continue
                        bit = np.uint32(1) << np.uint32(k)
                        n_acc += 1
                        # a fill due by t (pend_t[c, P]: the earliest; inf when none): apply
                        # the due ones; the test is inline, as most reads find none and the
                        # out-of-line call passes ~80 words of array arguments
                        if on_fill and pend_t[_u(c), _u(p_due)] <= t:
                            streaming.drain(
                                pend, pend_t, pend_n, c, t, l1_tags, l1_lru, l1_valid, l1_ix,
                                stamp,
                            )  # fmt: skip
                        stamp[0] += 1
                        if on_fill:  # no victim: the streaming L1 allocates at the fill
                            w = way_of(l1_tags, l1_ix, c, s1, line)
                            lo = np.int64(-1)
                        else:
                            w, lo = way_or_lru(l1_tags, l1_lru, l1_ix, c, s1, line)
                        if w >= 0 and (l1_valid[_u(c), _u(s1), _u(w)] & bit):
                            use_way(l1_lru, l1_ix, c, s1, w, stamp[0])
                            if on_fill:  # a streaming L1 holds only filled sectors: a hit
                                n_hit += 1
                                if t > done_j:
                                    done_j = t
                            elif (
                                l1_fill[_u(c), _u(s1), _u(w), _u(k)] > t
                                and l1_merges[_u(c), _u(s1), _u(w), _u(k)] < l1_max_merge
                            ):
                                l1_merges[_u(c), _u(s1), _u(w), _u(k)] += 1
                                n_pend += 1
                                if l1_fill[_u(c), _u(s1), _u(w), _u(k)] > done_j:
                                    done_j = l1_fill[_u(c), _u(s1), _u(w), _u(k)]
                            else:  # a hit (after waiting for the fill when merge slots are full)
                                n_hit += 1
                                tf = l1_fill[_u(c), _u(s1), _u(w), _u(k)]
                                if tf > t:  # blocking: the cache waits with it
                                    mq_wait[W_MERGE] += tf - t
                                    if tf + port_step > l1_port[_u(c)]:
                                        l1_port[_u(c)] = tf + port_step
                                else:
                                    tf = t
                                if tf > done_j:
                                    done_j = tf
                            continue
                        if on_fill:  # streaming: a sector in flight is an MSHR entry, not a line
                            pi = streaming.find(pend, pend_n, c, line, k)
                            if pi >= 0:
                                tf = pend_t[_u(c), _u(pi)]
                                if pend[_u(c), _u(pi), 3] < l1_max_merge:
                                    pend[_u(c), _u(pi), 3] += 1
                                    n_pend += 1
                                else:  # merge slots full: waits for the fill, then hits
                                    n_hit += 1
                                    if tf > t:  # blocking, as the allocate-on-miss L1
                                        mq_wait[W_MERGE] += tf - t
                                        if tf + port_step > l1_port[_u(c)]:
                                            l1_port[_u(c)] = tf + port_step
                                if tf > done_j:
                                    done_j = tf
                                continue
                        # miss: a new MSHR entry; when all are in flight, wait for the oldest
                        n_miss += 1
                        h = mshr_head[_u(c)]
                        t_eff = t
                        if mshr_ring[_u(c), _u(h)] > t_eff:
                            t_eff = mshr_ring[_u(c), _u(h)]
                            mq_wait[W_MSHR] += t_eff - t
                        if w < 0 and not on_fill:
                            w, t_free = victim_ix(
                                l1_tags, l1_lru, l1_fill, l1_ix, l1_hw, l1_ht, c, s1, lo, t_eff
                            )  # fmt: skip
                            if t_free > t_eff:
                                mq_wait[W_ALLOC] += t_free - t_eff
                                t_eff = t_free
                            set_tag(l1_tags, l1_ix, c, s1, w, line)
                            l1_valid[_u(c), _u(s1), _u(w)] = 0
                            for q in range(l1_fill.shape[3]):
                                l1_fill[_u(c), _u(s1), _u(w), _u(q)] = -np.inf
                                l1_merges[_u(c), _u(s1), _u(w), _u(q)] = 0
                        if not on_fill:
                            use_way(l1_lru, l1_ix, c, s1, w, stamp[0])
                            l1_valid[_u(c), _u(s1), _u(w)] |= bit
                            l1_merges[_u(c), _u(s1), _u(w), _u(k)] = 1  # the miss itself, see below
                        if t_eff > t and t_eff + port_step > l1_port[_u(c)]:  # blocking cache
                            l1_port[_u(c)] = t_eff + port_step
                        # it leaves the L1 through the miss queue (one request per cycle)
                        t_eff = miss_queue(mq_ring, mq_head, c, t_eff, l1_port, port_step, mq_wait)
                        # its L2 bank's port serves one request per bank_step cycles (FIFO)
                        t_eff = fifo_slot(bank_free, b, t_eff, bank_step)
                        t_l2 = t_eff  # the L2 sees the request when it arrives
                        # its reply takes a slot of the SM's NoC share (reply bandwidth),
                        # in request order: the data come back no earlier than that slot
                        t_eff = fifo_slot(noc_free, c, t_eff, noc_step)
                        # fetch sector k (sectored L1), else the whole line
                        qmask = bit if l1_sectored else all_sec
                    # ---- the L2 accesses: one per sector of qmask (sectored L2), else the
                    # line; the only call site of l2_access, so the loop holds one inlined
                    # copy of it ----
                    ready = -np.inf
                    for q in range(nq2):
                        if l2_sectored:
                            if not (qmask >> np.uint32(q)) & np.uint32(1):
                                continue
                            full = bool((rfull >> np.uint32(q)) & np.uint32(1)) and kind == 1
                        else:
                            full = rfull == all_sec and kind == 1
                        o, rd, moved, act_b = l2_access(
                            l2_tags, l2_lru, l2_valid, l2_dirty, l2_partial, l2_fill,
                            l2_merges, stamp, cnt, b, s2, line, q, t_l2, is_w, full,
                            write_back, write_alloc, l2_max_merge, l2_fetch, dram_lat,
                            dram_free, ch, dram_bpc, l2_group, dram_rows, dram_row_lines, dram_act,
                            (l2_mring, l2_mhead, bank_free, bank_step),
                        )  # fmt: skip
                        n_l2 += 1
                        n_dram += moved
                        n_act += act_b
                        if not is_w:
                            n_l2rd += 1
                        if o == MISS:
                            n_l2m += 1
                            if not is_w:
                                n_l2rdm += 1
                        elif o == PENDING_FULL and not is_w:
                            block_bank(
                                bank_free, b, t_l2, rd, bank_step, cnt, C_L2_MERGE_STALLS,
                                C_L2_BLOCKED,
                            )  # fmt: skip
                        if rd > ready:
                            ready = rd
                    if direct:  # a load's or atomic's data (after its reply slot)
                        if kind != 1:
                            if t_eff > ready:
                                ready = t_eff
                            if ready + l2_lat > done_j:
                                done_j = ready + l2_lat
                        continue
                    # ---- the L1 read miss's fill ----
                    fill_t = (ready if ready > t_eff else t_eff) + l2_lat
                    if on_fill:
                        streaming.add(
                            pend, pend_t, pend_n, c, line, s1, k, fill_t, l1_tags, l1_lru,
                            l1_valid, l1_ix, stamp,
                        )  # fmt: skip
                    else:
                        l1_fill[_u(c), _u(s1), _u(w), _u(k)] = fill_t
                    mshr_ring[_u(c), _u(h)] = fill_t
                    mshr_head[_u(c)] = h + 1 if h + 1 < n_mshr else 0  # (h + 1) % n_mshr
                    if fill_t > done_j:
                        done_j = fill_t
            i_done[_u(j)] = done_j + l1_lat
            cnt[C_L1_RD] += n_acc - n_wr
            cnt[C_L1_RD_HIT] += n_hit
            cnt[C_L1_RD_PEND] += n_pend
            cnt[C_L1_RD_MISS] += n_miss - n_wr
            cnt[C_L1_WR] += n_wr
            cnt[C_L2] += n_l2
            cnt[C_L2_MISS] += n_l2m
            cnt[C_L2_RD] += n_l2rd
            cnt[C_L2_RD_MISS] += n_l2rdm
            per_inst[_u(j), I_L1_ACC] += n_acc
            per_inst[_u(j), I_L1_HIT] += n_hit
            per_inst[_u(j), I_L1_PEND] += n_pend
            per_inst[_u(j), I_L1_MISS] += n_miss
            per_inst[_u(j), I_L2_ACC] += n_l2
            per_inst[_u(j), I_L2_MISS] += n_l2m
            per_inst[_u(j), I_DRAM_BYTES] += n_dram
            per_inst[_u(j), I_DRAM_ACT] += np.int32(n_act + 0.5)
            per_inst[_u(j), I_L1_WAIT] += np.int32(waited(mq_wait) - w0 + 0.5)

    return run_kernel


# The timed driver lives in this module, beside run_kernel, so that numba's on-disk
# cache (invalidated per source file) never keeps a compiled copy of an older
# run_kernel inside it; mdm.memory.schedule re-exports it.


@inlined
def _update(tree: np.ndarray, clock: np.ndarray, v: np.int64) -> None:
    """Re-run the matches above leaf ``v`` after its SM's clock changed: each node takes
    the right child's SM only if its clock is strictly earlier (select, no branch), so
    on equal clocks the left one, whose index is lower, wins."""
    v //= 2
    while v >= 1:
        a = tree[_u(2 * v)]
        b = tree[_u(2 * v + 1)]
        tree[_u(v)] = b if clock[_u(b)] < clock[_u(a)] else a
        v //= 2


@inlined
def _before(ht: np.ndarray, hq: np.ndarray, a: np.int64, b: np.int64) -> bool:
    """Heap order of the slot events: earlier time first, then earlier push."""
    return ht[_u(a)] < ht[_u(b)] or (ht[_u(a)] == ht[_u(b)] and hq[_u(a)] < hq[_u(b)])


@inlined
def _swap(ht: np.ndarray, hq: np.ndarray, hs: np.ndarray, a: np.int64, b: np.int64) -> None:
    """Exchange heap entries ``a`` and ``b``."""
    ht[_u(a)], ht[_u(b)] = ht[_u(b)], ht[_u(a)]
    hq[_u(a)], hq[_u(b)] = hq[_u(b)], hq[_u(a)]
    hs[_u(a)], hs[_u(b)] = hs[_u(b)], hs[_u(a)]


@njit(cache=True, _nrt=False)
def _push(
    ht: np.ndarray, hq: np.ndarray, hs: np.ndarray, hn: np.ndarray, t: float, sm: np.int64
) -> None:
    """Add the event "a slot of SM ``sm`` is free at ``t``" to the binary heap."""
    i = hn[0]
    hn[0] = i + 1
    ht[_u(i)] = t
    hq[_u(i)] = hn[1]
    hn[1] += 1
    hs[_u(i)] = sm
    while i > 0:
        j = (i - 1) // 2
        if not _before(ht, hq, i, j):
            break
        _swap(ht, hq, hs, i, j)
        i = j


@njit(cache=True, _nrt=False)
def _pop(ht: np.ndarray, hq: np.ndarray, hs: np.ndarray, hn: np.ndarray) -> None:
    """Remove the earliest event (the heap's root)."""
    n = hn[0] - 1
    hn[0] = n
    ht[0], hq[0], hs[0] = ht[_u(n)], hq[_u(n)], hs[_u(n)]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _before(ht, hq, c + 1, c):
            c += 1
        if not _before(ht, hq, c, i):
            break
        _swap(ht, hq, hs, i, c)
        i = c


def run_timed(
    *args: object,
    l1_sectored: bool = False,
    l2_sectored: bool = False,
    may_fill: bool = True,
) -> float:
    """Issue every warp's segments with cache timing feedback; returns the end time.

    ``args``: ``order, blk_ptr, wblk, blocks_per_sm, wseg_ptr, seg_first, seg_bar, ldst_pos,
    ldst_mem, mem_is_load, n_sm, issue_cost, ldst_queue, t_start, i_sm, i_time, i_done,
    proc, l1_port, cache_args, lrr, n_sched`` (as :func:`_run_timed` unpacks them).

    Blocks (``blk_ptr``: their warps' ranges in ``order``, blocks in launch order;
    ``wblk``: the block of every position of ``order``) go to SMs as GPGPU-Sim's
    ``issue_block2core`` gives them: every SM has ``blocks_per_sm`` residency slots; at
    ``t_start`` the first blocks fill them round robin (block ``r`` -> SM ``r mod
    n_sm``, one block per SM per round), and whenever a slot frees -- when a block's
    last warp has finished (its last segment issued and its loads' data back) -- the
    next block in launch order takes it, so the SM that frees a slot first gets the
    next block (equal times: the slot freed first in simulation order). ``i_sm``
    receives the SM of every memory instruction.

    Greedy-then-oldest (GPGPU-Sim ``-gpgpu_scheduler gto``) with ``n_sched`` warp
    schedulers per SM: hardware warp ``h`` (a block in slot ``k`` -- the lowest free one
    when it arrives, as ``find_available_hwtid`` gives it -- has warps ``k * wpb + i``)
    belongs to scheduler ``h mod n_sched`` (``shader_core_ctx::create_schedulers``).
    Each scheduler issues its greedy warp (the last it issued) while that one is ready,
    else its oldest ready warp (blocks in launch order, warps by age). The schedulers
    take turns: each turn issues the picked warp's instructions up to and including the
    next LD/ST-unit instruction, or to its segment's end, and the next turn is the next
    scheduler's (one with no ready warp is skipped). GPGPU-Sim's schedulers issue in
    the same cycle and share the LD/ST unit; taking turns at every LD/ST instruction
    interleaves their memory instructions the same way. With one scheduler the SM
    issues the oldest ready warp's whole segment at once. Against Accel-Sim on 83
    reference runs this turned the L1 miss-rate difference from 0.018 into 0.009
    (docs/measurement-log.md). ``issue_cost`` cycles per instruction (1 / schedulers: the SM's
    total issue rate); each global memory instruction is
    simulated at once (:func:`_run_kernel`'s ``run_kernel`` with ``cache_args``, which
    sets its completion ``i_done``). A warp is ready again when its segment has issued
    and ALL requests of the segment's loads (``mem_is_load``: loads, and atomics that
    return a value) have completed, since the next segment
    starts with an instruction that reads a loaded register. A segment that ends with
    a barrier (``seg_bar``; GPGPU-Sim ``bar.sync``) holds its warp until every
    unfinished warp of the block has reached the barrier: the waiting warps are then
    ready when the last arrived (or when their own loads are back, if later); a warp
    that exits without reaching it is not waited for. The SM with the earliest
    clock always goes next (a freed slot is handed out before any SM steps past its
    time), so the L2 sees all SMs' accesses in approximate time order. One exception
    that changes no result: after a turn that touched only its SM's own state (no global
    memory instruction, not the end of a warp: :func:`_local_turn`), the SM goes on with
    its next turn without consulting the tournament if that turn is local too, since
    such turns commute with the other SMs' steps; a turn that is not local waits for
    its place in the tournament's order, and a slot event due by the SM's clock hands
    the order back to it. Every counter and time is as in the strict order
    (``benchmarks/cachesim_fingerprint.py``: 258 result sets), while instruction-heavy
    kernels skip most tournament steps: gemm_tiled 1.7-2.2x faster. The LD/ST-unit
    instructions are listed apart (``ldst_pos``: their positions in the kernel, ascending;
    ``ldst_mem``: the memory instruction, >= 0 global, -2 shared/constant), so the loop
    steps over the other instructions without reading a per-instruction array (each
    warp keeps a cursor into the list). A memory instruction enters the
    SM's LD/ST unit in order when the L1 port (``l1_port``, shared with ``cache_args``)
    is free (a blocking L1 stalls the unit), in arrival order, and at most
    ``ldst_queue`` instructions wait for the unit at a time. With several GTO
    schedulers, a turn that reaches an LD/ST-unit instruction while ``ldst_queue`` wait
    ends before it (the instructions before it have issued; the warp stays ready at
    it) and the next scheduler's turn, picking its greedy or oldest ready warp then,
    follows: at once if this turn issued instructions (the others may issue theirs
    meanwhile), else when the oldest waiting one enters. As in GPGPU-Sim, where a
    scheduler skips a warp whose next instruction finds no free pipeline register,
    issues other warps' instructions, and the freed slot goes to whichever warp a
    scheduler issues next. Against stalling the SM with the turn's warp until a slot
    frees, over the 72 mdm_pascal reference runs: mean |L2 miss rate - Accel-Sim's|
    0.0143 -> 0.0058, DRAM reads 2.8 -> 0.8 % (stride32, whose lines are reused at the
    edge of the L2's capacity: 0.376 -> 0.464 against 0.443 at baseline), L1 miss rate
    0.0091 -> 0.0090 (docs/measurement-log.md). Loose round robin and a single scheduler keep the
    stall (there the waiting warp is the first candidate when the slot frees). The
    caller uses ``max_warps / schedulers`` = 16 on both reference configurations, which
    is also GPGPU-Sim's count of memory instructions that can wait between issue and
    the unit there (ID_OC_MEM 4 + 8 operand collector units + OC_EX_MEM 4): with 1 the
    SM would stall at every busy unit and a returning warp would jump ahead by GTO
    priority (L1 reuse distances far too short: stride32 ~60 % L1 hits vs 1 % in
    Accel-Sim); with no limit every warp's first load would be queued before any second
    one (L2 reuse distances too long: stride32 100 % L2 misses vs 44 %). A configuration
    sets its own count with ``sm.ldst_queue_entries`` (the ``h100`` preset: measured,
    128; :func:`mdm.memory.cachesim.ldst_queue_entries`). Shared-memory and
    constant instructions take one cycle of the unit (bank conflicts ignored). ``proc``
    receives the memory instructions in simulation order.

    ``lrr`` (GPGPU-Sim ``-gpgpu_scheduler lrr``, ``scheduler_unit::order_lrr``): loose
    round robin instead of GTO. The SM issues ONE instruction at a time, from the first
    ready warp after the one that issued last, in the order of the SM's warp slots: a
    new block takes the slot its predecessor freed (GPGPU-Sim's
    ``find_available_hwtid`` gives a block the lowest free range of hardware threads),
    so warps interleave instruction by instruction instead of one running a whole
    segment. A warp is still ready again only when its segment's loads are back. One
    rotation over all slots: GPGPU-Sim rotates per scheduler over warps ``h mod
    n_sched``, and with the schedulers issuing side by side that is the same order
    (warp 0 on scheduler 0, 1 on 1, ..., then ``n_sched`` on 0 again).

    ``l1_sectored`` and ``l2_sectored`` (the L1's and the L2's sectoring) and
    ``may_fill`` (the L1 may allocate on fill: a streaming L1 with its tags at the fill,
    :func:`mdm.memory.carveout.l1_may_allocate_on_fill`) select a compiled entry per
    triple (:data:`_RUN_TIMED`), which hands them to the issue loop as numba literals:
    the loop is compiled once per triple that occurs (about 30 s each, on first use;
    then numba's on-disk cache), without the other layout's branches, and without the
    streaming L1's code when ``may_fill`` is false (:func:`_run_kernel`; a pending-fill
    table in ``cache_args`` then raises ``ValueError``). Against one loop for all
    layouts, mdm_pascal's simulation takes about 20 % less time per access
    (docs/measurement-log.md). ``may_fill`` is per configuration, not per kernel (on an
    adaptive carve-out, only kernels with shared memory allocate on fill), so an
    application on one GPU needs one loop.
    """
    pend = args[19][7]  # cache_args (the 20th argument)'s pending-fill table: run_kernel's
    if not may_fill and pend.shape[1] > 0:  # this kernel's L1 allocates on fill
        raise ValueError("an L1 that allocates on fill needs the issue loop with may_fill")
    return _RUN_TIMED[bool(l1_sectored), bool(l2_sectored), bool(may_fill)](args)


@njit(cache=True, inline="always")
def _run_timed(args: tuple, l1_sectored: bool, l2_sectored: bool, may_fill: bool) -> float:
    """:func:`run_timed` on ``args`` (its arguments, in order); the three flags are
    constants of the caller (:data:`_RUN_TIMED`). Inlined into it by numba, so they
    reach :func:`_timed_loop` as numba literals (its overload takes nothing else): one
    compilation per triple, no per-call dispatch on them, and no compiled level of
    its own (each level's finalisation re-optimises and re-emits the whole linked loop:
    about 4 s of the cold compilation)."""
    (
        order,
        blk_ptr,
        wblk,
        blocks_per_sm,
        wseg_ptr,
        seg_first,
        seg_bar,
        ldst_pos,
        ldst_mem,
        mem_is_load,
        n_sm,
        issue_cost,
        ldst_queue,
        t_start,
        i_sm,
        i_time,
        i_done,
        proc,
        l1_port,
        cache_args,
        lrr,
        n_sched,
    ) = args
    # tournament tree over the SMs' clocks: the root is the SM with the earliest clock,
    # the lowest index among equal ones (the order of a linear scan with ``<``); the
    # leaves past n_sm are never-ready SMs (clock inf), so every node holds an SM
    leaves = 1
    while leaves < n_sm:
        leaves *= 2
    clock = np.full(leaves, np.inf)
    tree = np.zeros(2 * leaves, np.int64)
    for q in range(leaves):
        tree[leaves + q] = q
    for v in range(leaves - 1, 0, -1):  # all clocks equal: the lowest index everywhere
        tree[v] = tree[2 * v]
    nw = order.shape[0]
    # ready time of every warp, inf until its block starts and once it has no segment
    # left (one array to scan)
    ready = np.full(nw, np.inf)
    nxt = np.zeros(nw, np.int64)
    wend = np.zeros(nw, np.int64)  # end of every warp's segments, in ``order``
    for p in range(nw):
        nxt[p] = wseg_ptr[order[p]]
        wend[p] = wseg_ptr[order[p] + 1]
    n_blk = blk_ptr.shape[0] - 1
    live = np.zeros(n_blk, np.int64)  # warps of a started block with segments left
    bend = np.zeros(n_blk, np.float64)  # when the block's warps have finished so far
    blo = blk_ptr[:-1].copy()  # every block's first warp that has not finished
    barn = np.zeros(n_blk, np.int64)  # warps of the block waiting at its barrier
    bart = np.full(n_blk, -np.inf)  # when the last of them arrived
    bwait = np.zeros(nw, np.float64)  # a waiting warp's own ready time (its loads)
    slots = max(blocks_per_sm, 1)
    # every SM's nres resident blocks: GTO oldest first, LRR in slot order (rslot: slots)
    res = np.zeros((n_sm, slots), np.int64)
    rslot = np.zeros((n_sm, slots), np.int64)
    nres = np.zeros(n_sm, np.int64)
    waiting = np.ones(n_sm, np.bool_)  # the SM's clock is a wait for a ready warp
    # free-slot events (time, push count, SM): a binary heap; hn = (size, pushes, next block)
    ht = np.empty(n_sm * slots + 1, np.float64)
    hq = np.empty(n_sm * slots + 1, np.int64)
    hs = np.empty(n_sm * slots + 1, np.int64)
    hn = np.zeros(3, np.int64)
    for _ in range(slots):
        for sm in range(n_sm):
            _push(ht, hq, hs, hn, t_start, sm)
    one = np.zeros(1, np.int64)
    lsq = np.full((n_sm, ldst_queue), -np.inf)  # unit entry times of the last instructions
    lsq_head = np.zeros(n_sm, np.int64)
    icur = np.zeros(nw, np.int64)  # every warp's next instruction
    for p in range(nw):
        icur[p] = seg_first[min(nxt[p], seg_first.shape[0] - 1)]
    lcur = np.searchsorted(ldst_pos, icur)  # every warp's next LD/ST-unit instruction
    sacc = np.zeros(nw, np.float64)  # when the current segment's loads are back so far
    last = np.full((n_sm, 2), -1, np.int64)  # LRR: the slot and warp that issued last
    greedy = np.full((n_sm, max(n_sched, 1)), -1, np.int64)  # GTO: every scheduler's last
    gcur = np.zeros(n_sm, np.int64)  # GTO: the scheduler whose turn is next
    # GTO: no warp of the scheduler is ready before this (valid until one of its warps
    # issues or a block arrives)
    ssoon = np.full((n_sm, max(n_sched, 1)), -np.inf)
    return _timed_loop(
        blk_ptr, wblk, seg_first, seg_bar, ldst_pos, ldst_mem, mem_is_load, issue_cost,
        ldst_queue, i_sm, i_time, i_done, proc, l1_port, cache_args, clock, tree, leaves,
        ready, nxt, wend, live, bend, blo, barn, bart, bwait, res, nres, waiting, ht, hq,
        hs, hn, one, lsq, lsq_head, t_start, lrr, icur, lcur, sacc, last, rslot, n_sched,
        greedy, gcur, ssoon,
        l1_sectored,
        l2_sectored,
        may_fill,
    )  # fmt: skip


# Module-level entries, one per (L1 sectored, L2 sectored, may allocate on fill), named
# ``_run_timed_`` + n/s (not sectored / sectored) for the L1 and the L2 + m/f (the L1
# allocates on miss only / may allocate on fill), written out: numba's on-disk cache keys
# a function by its name and source line, so entries made by one factory would share
# (and overwrite) one cached compilation for the same argument types.
@njit(cache=True)
def _run_timed_nnm(args: tuple) -> float:
    return _run_timed(args, False, False, False)


@njit(cache=True)
def _run_timed_nsm(args: tuple) -> float:
    return _run_timed(args, False, True, False)


@njit(cache=True)
def _run_timed_snm(args: tuple) -> float:
    return _run_timed(args, True, False, False)


@njit(cache=True)
def _run_timed_ssm(args: tuple) -> float:
    return _run_timed(args, True, True, False)


@njit(cache=True)
def _run_timed_nnf(args: tuple) -> float:
    return _run_timed(args, False, False, True)


@njit(cache=True)
def _run_timed_nsf(args: tuple) -> float:
    return _run_timed(args, False, True, True)


@njit(cache=True)
def _run_timed_snf(args: tuple) -> float:
    return _run_timed(args, True, False, True)


@njit(cache=True)
def _run_timed_ssf(args: tuple) -> float:
    return _run_timed(args, True, True, True)


# (L1 sectored, L2 sectored, may allocate on fill) -> its compiled entry: Python bools
# reach numba as plain booleans, so every triple has an entry that passes it as constants
_RUN_TIMED = {
    (False, False, False): _run_timed_nnm,
    (False, True, False): _run_timed_nsm,
    (True, False, False): _run_timed_snm,
    (True, True, False): _run_timed_ssm,
    (False, False, True): _run_timed_nnf,
    (False, True, True): _run_timed_nsf,
    (True, False, True): _run_timed_snf,
    (True, True, True): _run_timed_ssf,
}


#: Ready time of a warp waiting at its block's barrier: never ready by its clock (and
#: not ``inf``, which marks a finished warp), until :func:`_release`.
_AT_BARRIER = 1e300


@inlined
def _release(
    b: np.int64,
    blo: np.ndarray,
    blk_ptr: np.ndarray,
    ready: np.ndarray,
    bwait: np.ndarray,
    barn: np.ndarray,
    bart: np.ndarray,
    ssoon: np.ndarray,
    sm: np.int64,
    multi: bool,
) -> None:
    """Every unfinished warp of block ``b`` has reached its barrier: each waiting warp is
    ready when the last one arrived, or when its own loads are back if later."""
    for p in range(blo[_u(b)], blk_ptr[_u(b + 1)]):
        if ready[_u(p)] == _AT_BARRIER:
            ready[_u(p)] = max(bwait[_u(p)], bart[_u(b)])
    barn[_u(b)] = 0
    bart[_u(b)] = -np.inf
    if multi:  # the schedulers' bounds on their next ready warp no longer hold
        for sc in range(ssoon.shape[1]):
            ssoon[_u(sm), _u(sc)] = -np.inf


@inlined
def _live_warps(
    b: np.int64, blo: np.ndarray, blk_ptr: np.ndarray, ready: np.ndarray
) -> tuple[np.int64, np.int64]:
    """Block ``b``'s warps from its first unfinished one: ``(first, end)`` positions.
    Finished warps at the front leave the scan for good (``blo``)."""
    p = blo[_u(b)]
    pe = blk_ptr[_u(b + 1)]
    while p < pe and ready[_u(p)] == np.inf:
        p += 1
    blo[_u(b)] = p
    return p, pe


@inlined
def _local_turn(
    w: np.int64,
    icur: np.ndarray,
    lcur: np.ndarray,
    nxt: np.ndarray,
    wend: np.ndarray,
    seg_first: np.ndarray,
    ldst_pos: np.ndarray,
    ldst_mem: np.ndarray,
    lrr: bool,
    multi: bool,
) -> bool:
    """Warp ``w``'s next turn touches only its SM's own state: it issues no global memory
    instruction (no cache, NoC or DRAM access, which other SMs share) and does not reach
    the end of the warp's last segment (which may end its block and free a slot for the
    next block, an event shared by all SMs). The turn's instructions: one (LRR), up to
    and including the next LD/ST-unit instruction (GTO with several schedulers), or the
    rest of the segment (one GTO scheduler); see :func:`run_timed`."""
    g = nxt[_u(w)]
    seg_end = seg_first[_u(g + 1)]
    i1 = icur[_u(w)] + 1 if lrr else seg_end
    lc = lcur[_u(w)]
    while lc < ldst_pos.shape[0] and ldst_pos[_u(lc)] < i1:
        if ldst_mem[_u(lc)] >= 0:
            return False
        if multi:  # the turn ends after its first LD/ST-unit instruction
            i1 = ldst_pos[_u(lc)] + 1
            break
        lc += 1
    return i1 < seg_end or g + 1 < wend[_u(w)]


@inlined
def _first_ready(
    ready: np.ndarray, p: np.int64, pe: np.int64, t: float, soonest: float
) -> tuple[np.int64, float]:
    """The first of warps ``p`` to ``pe - 1`` ready at ``t`` (-1: none) and ``soonest``
    lowered to the ready times of the warps before it (``inf``: finished). Eight warps
    at a time without a branch on each (an LRR SM stalled on memory scans most of its
    warps at every issue), then one by one from the block that holds a ready warp."""
    while p + 8 <= pe:
        hit = False
        lo = soonest
        for q in range(8):
            r = ready[_u(p + q)]
            hit |= r <= t
            lo = r if r < lo else lo
        if hit:
            break
        soonest = lo
        p += 8
    while p < pe:
        r = ready[_u(p)]
        if r <= t:
            return p, soonest
        if r < soonest:
            soonest = r
        p += 1
    return np.int64(-1), soonest


@inlined
def _pick_per_scheduler(
    sm: np.int64,
    t: float,
    n_sched: np.int64,
    res: np.ndarray,
    rslot: np.ndarray,
    nk: np.int64,
    blo: np.ndarray,
    blk_ptr: np.ndarray,
    ready: np.ndarray,
    greedy: np.ndarray,
    gcur: np.ndarray,
    ssoon: np.ndarray,
) -> tuple[np.int64, np.int64, float]:
    """GTO per warp scheduler (:func:`run_timed`): from the scheduler whose turn it is
    on, the first with a ready warp issues its greedy warp if ready, else its oldest
    ready one. Returns ``(warp, scheduler, soonest)``; warp -1 when none is ready at
    ``t``, then ``soonest`` is the earliest ready time of the SM's warps. ``ssoon``
    keeps, per scheduler, the earliest ready time found by a scan that found none."""
    soonest = np.inf
    s0 = gcur[_u(sm)]
    for si in range(n_sched):
        sc = s0 + si
        if sc >= n_sched:
            sc -= n_sched
        g = greedy[_u(sm), _u(sc)]
        if g >= 0 and ready[_u(g)] <= t:
            return g, sc, soonest
        if ssoon[_u(sm), _u(sc)] > t:  # none of its warps is ready before then
            if ssoon[_u(sm), _u(sc)] < soonest:
                soonest = ssoon[_u(sm), _u(sc)]
            continue
        s_soon = np.inf
        for k in range(nk):  # blocks oldest first
            b = res[_u(sm), _u(k)]
            p, pe = _live_warps(b, blo, blk_ptr, ready)
            # hardware warp of position p: slot * warps per block + index in the block
            q = (rslot[_u(sm), _u(k)] * (pe - blk_ptr[_u(b)]) + p - blk_ptr[_u(b)]) % n_sched
            p += sc - q if q <= sc else n_sched + sc - q  # the scheduler's first warp
            while p < pe:
                r = ready[_u(p)]
                if r <= t:
                    return p, sc, soonest
                if r < s_soon:
                    s_soon = r
                p += n_sched
        ssoon[_u(sm), _u(sc)] = s_soon
        if s_soon < soonest:
            soonest = s_soon
    return -1, -1, soonest


def _timed_loop(*args: object) -> float:
    """The issue loop of :func:`run_timed` on its allocated state, without numba's
    reference counting (no per-call incref/decref of the arrays in ``cache_args``).
    ``args``: the parameters of :func:`_timed_loop_impl`'s ``impl``, then the L1's and
    the L2's sectoring and whether the L1 may allocate on fill.

    Compiled code only (:func:`run_timed` calls it with the three flags as numba
    literals): numba builds it with :func:`_run_kernel` for those flags
    (:func:`_timed_loop_impl`).
    """
    raise NotImplementedError("_timed_loop runs inside compiled code only (run_timed)")


# error_model="numpy": no zero-divisor check (and exception path) on the loop's divisions
# and modulos, whose divisors are validated positive configuration values (sets, schedulers,
# bytes per cycle): repeated simulations of the stride benchmark 9-18 % faster on v100 and
# sm7_qv100 (docs/measurement-log.md), identical counts
@overload(
    _timed_loop,
    inline="never",
    jit_options={
        "_nrt": False,
        "error_model": "numpy",
        "no_cpython_wrapper": True,
        "no_cfunc_wrapper": True,
    },
    strict=False,
)
def _timed_loop_overload(*args: types.Type) -> Callable[..., float] | None:
    """:func:`_timed_loop`'s implementation for the numba literal types of its last three
    arguments (the sectoring, may allocate on fill), else none."""
    flags = args[-3:]
    if all(isinstance(f, types.BooleanLiteral) for f in flags):
        return _timed_loop_impl(*(f.literal_value for f in flags))
    return None  # numba retries with the literal values


@functools.cache
def _timed_loop_impl(l1_sectored: bool, l2_sectored: bool, may_fill: bool) -> Callable[..., float]:
    """The issue loop with ``run_kernel`` for one sectoring and fill policy (arguments:
    those of :func:`_timed_loop`)."""
    run_kernel = _run_kernel(l1_sectored, l2_sectored, may_fill)

    def impl(
        blk_ptr: np.ndarray,
        wblk: np.ndarray,
        seg_first: np.ndarray,
        seg_bar: np.ndarray,
        ldst_pos: np.ndarray,
        ldst_mem: np.ndarray,
        mem_is_load: np.ndarray,
        issue_cost: float,
        ldst_queue: int,
        i_sm: np.ndarray,
        i_time: np.ndarray,
        i_done: np.ndarray,
        proc: np.ndarray,
        l1_port: np.ndarray,
        cache_args: tuple,
        clock: np.ndarray,
        tree: np.ndarray,
        leaves: np.int64,
        ready: np.ndarray,
        nxt: np.ndarray,
        wend: np.ndarray,
        live: np.ndarray,
        bend: np.ndarray,
        blo: np.ndarray,
        barn: np.ndarray,
        bart: np.ndarray,
        bwait: np.ndarray,
        res: np.ndarray,
        nres: np.ndarray,
        waiting: np.ndarray,
        ht: np.ndarray,
        hq: np.ndarray,
        hs: np.ndarray,
        hn: np.ndarray,
        one: np.ndarray,
        lsq: np.ndarray,
        lsq_head: np.ndarray,
        end: float,
        lrr: bool,
        icur: np.ndarray,
        lcur: np.ndarray,
        sacc: np.ndarray,
        last: np.ndarray,
        rslot: np.ndarray,
        n_sched: np.int64,
        greedy: np.ndarray,
        gcur: np.ndarray,
        ssoon: np.ndarray,
        _l1_sectored: bool,
        _l2_sectored: bool,
        _may_fill: bool,
    ) -> float:
        n_blk = blk_ptr.shape[0] - 1
        n_ldst = ldst_pos.shape[0]
        n_proc = 0
        prev = -1
        multi = n_sched > 1 and not lrr
        ahead = -1  # the SM that runs ahead of the tournament (its local turns)
        while True:
            if ahead >= 0:
                # the SM of the last turn goes on without the tournament while its
                # turns touch nothing but its own state (below); a slot event due by
                # its clock, or no warp left, hands the order back to the tournament
                sm = ahead
                t = clock[_u(sm)]
                if not t < np.inf or (hn[0] > 0 and ht[0] <= t):
                    ahead = -1
                    continue  # prev == sm: its leaf is updated first
            else:
                if prev >= 0:  # only the SM of the last step changed its clock
                    _update(tree, clock, leaves + prev)
                    prev = -1
                sm = tree[1]
                tmin = clock[_u(sm)]
                if hn[0] > 0 and ht[0] <= tmin:  # a slot is free before any SM's next step
                    e = ht[0]
                    s = hs[0]
                    _pop(ht, hq, hs, hn)
                    b = hn[2]
                    if b >= n_blk:
                        continue  # no block left
                    hn[2] = b + 1
                    n = 0
                    for p in range(blk_ptr[_u(b)], blk_ptr[_u(b + 1)]):
                        if nxt[_u(p)] < wend[_u(p)]:
                            ready[_u(p)] = e
                            n += 1
                    live[_u(b)] = n
                    bend[_u(b)] = e
                    if e > end:
                        end = e
                    if n == 0:  # a block without segments ends at once
                        _push(ht, hq, hs, hn, e, s)
                        continue
                    k = nres[_u(s)]  # GTO: the youngest resident block
                    if multi or lrr:  # its slot: the lowest free one (find_available_hwtid)
                        free = 0
                        j = 0
                        while j < k:
                            if rslot[_u(s), _u(j)] == free:
                                free += 1
                                j = 0
                            else:
                                j += 1
                        if lrr:  # resident blocks in slot order: slots 0 .. free - 1 come first
                            for j in range(k, free, -1):
                                res[_u(s), _u(j)] = res[_u(s), _u(j - 1)]
                                rslot[_u(s), _u(j)] = rslot[_u(s), _u(j - 1)]
                            k = free
                        rslot[_u(s), _u(k)] = free
                    if multi:  # a new block's warps are ready at e: lower every scheduler's bound
                        for sc in range(n_sched):
                            if e < ssoon[_u(s), _u(sc)]:
                                ssoon[_u(s), _u(sc)] = e
                    res[_u(s), _u(k)] = b
                    nres[_u(s)] += 1
                    if waiting[_u(s)] and e < clock[_u(s)]:
                        clock[_u(s)] = e
                        prev = s
                    continue
                if not tmin < np.inf:
                    break
                t = tmin
            prev = sm
            pick = -1
            pslot = -1  # LRR: the slot of the picked warp's block
            soonest = np.inf
            nk = nres[_u(sm)]
            k0 = 0  # GTO: the oldest ready resident warp
            after = -1  # LRR: the first ready warp after the last issued one (slot k0)
            if lrr and last[_u(sm), 0] >= 0 and nk > 0:
                while k0 < nk and rslot[_u(sm), _u(k0)] < last[_u(sm), 0]:
                    k0 += 1  # the last issuer's slot, else the next occupied one
                if k0 == nk:
                    k0 = 0
                elif rslot[_u(sm), _u(k0)] == last[_u(sm), 0]:
                    if res[_u(sm), _u(k0)] == wblk[_u(last[_u(sm), 1])]:
                        after = last[_u(sm), 1]
            sched = -1
            if multi:
                pick, sched, soonest = _pick_per_scheduler(
                    sm, t, n_sched, res, rslot, nk, blo, blk_ptr, ready, greedy, gcur, ssoon
                )
                nk = 0  # skips the single-order scan below
            for j in range(nk + 1 if after >= 0 else nk):
                k = k0 + j
                if k >= nk:
                    k -= nk
                b = res[_u(sm), _u(k)]
                p, pe = _live_warps(b, blo, blk_ptr, ready)
                if after >= 0:  # the last issuer's slot: after it first, before it last
                    if j == 0:
                        p = max(p, after + 1)
                    elif j == nk:
                        pe = after + 1
                pick, soonest = _first_ready(ready, p, pe, t, soonest)
                if pick >= 0:
                    pslot = rslot[_u(sm), _u(k)]
                    break
            if pick < 0:
                # none ready: wait for the soonest, or (none resident) for a new block
                clock[_u(sm)] = soonest
                waiting[_u(sm)] = True
                ahead = -1
                continue
            local = _local_turn(
                pick, icur, lcur, nxt, wend, seg_first, ldst_pos, ldst_mem, lrr, multi
            )
            if ahead >= 0 and not local:
                # a turn that reaches the caches or ends a warp runs in the tournament's
                # order: now if this SM is still the earliest, else after the others
                _update(tree, clock, leaves + sm)
                ahead = -1
                if tree[1] != sm:
                    continue
            # after a local turn the SM goes on ahead; after any other, the tournament
            # picks (an SM ahead whose next turn is not local has picked in vain)
            ahead = sm if local else -1
            waiting[_u(sm)] = False
            if lrr:
                last[_u(sm), 0] = pslot
                last[_u(sm), 1] = pick
            gs = nxt[_u(pick)]
            i0 = icur[_u(pick)]
            i1 = seg_first[_u(gs + 1)]
            if lrr:
                i1 = i0 + 1
            if multi:
                greedy[_u(sm), _u(sched)] = pick
                ssoon[_u(sm), _u(sched)] = -np.inf  # its warp's ready time changes
                gcur[_u(sm)] = sched + 1 if sched + 1 < n_sched else 0
            sready = t if i0 == seg_first[_u(gs)] else sacc[_u(pick)]
            t_defer = -np.inf
            lc = lcur[_u(pick)]
            i = i0
            while i < i1:
                nl = ldst_pos[_u(lc)] if lc < n_ldst else i1
                if nl > i1:
                    nl = i1
                while i < nl:  # instructions outside the LD/ST unit: issue_cost each
                    t += issue_cost
                    i += 1
                if i == i1:
                    break
                # an LD/ST-unit instruction: at most `ldst_queue` wait for the unit
                h = lsq_head[_u(sm)]
                if lsq[_u(sm), _u(h)] > t:  # none free until the oldest waiting enters
                    if multi:
                        # the scheduler's turn ends before it (the warp stays ready at
                        # it); the SM's next turn comes now if this one issued
                        # instructions, else when the slot frees
                        t_defer = lsq[_u(sm), _u(h)]
                        i1 = i
                        break
                    t = lsq[_u(sm), _u(h)]  # LRR, one scheduler: the SM waits with it
                m = ldst_mem[_u(lc)]
                lc += 1
                lsq[_u(sm), _u(h)] = l1_port[_u(sm)] if l1_port[_u(sm)] > t else t
                lsq_head[_u(sm)] = h + 1 if h + 1 < ldst_queue else 0
                if m == -2:  # shared memory / constant: one cycle of the unit
                    l1_port[_u(sm)] = lsq[_u(sm), _u(h)] + 1.0
                else:
                    i_time[_u(m)] = t
                    i_sm[_u(m)] = sm
                    one[0] = m
                    run_kernel(one, i_sm, i_time, cache_args)  # inlined by LLVM (this sectoring's)
                    proc[_u(n_proc)] = m
                    n_proc += 1
                    if mem_is_load[_u(m)] and i_done[_u(m)] > sready:
                        sready = i_done[_u(m)]
                t += issue_cost
                i += 1
                if multi:  # the next scheduler's turn after an LD/ST instruction
                    i1 = i
                    break
            lcur[_u(pick)] = lc
            clock[_u(sm)] = t_defer if (t_defer > t and i1 == i0) else t
            icur[_u(pick)] = i1
            if i1 < seg_first[_u(gs + 1)]:  # LRR or a scheduler's turn ended: the segment goes on
                sacc[_u(pick)] = sready
                ready[_u(pick)] = t
                continue
            if t > sready:
                sready = t
            ready[_u(pick)] = sready
            nxt[_u(pick)] += 1
            b = wblk[_u(pick)]
            if nxt[_u(pick)] < wend[_u(pick)]:
                if seg_bar[_u(gs)]:  # the warp waits at its block's barrier
                    bwait[_u(pick)] = sready
                    ready[_u(pick)] = _AT_BARRIER
                    barn[_u(b)] += 1
                    if t > bart[_u(b)]:
                        bart[_u(b)] = t
                    if barn[_u(b)] == live[_u(b)]:
                        _release(b, blo, blk_ptr, ready, bwait, barn, bart, ssoon, sm, multi)
            else:  # the warp has finished
                ready[_u(pick)] = np.inf
                if sready > bend[_u(b)]:
                    bend[_u(b)] = sready
                live[_u(b)] -= 1
                if live[_u(b)] > 0 and live[_u(b)] == barn[_u(b)]:  # the others wait
                    _release(b, blo, blk_ptr, ready, bwait, barn, bart, ssoon, sm, multi)
                if live[_u(b)] == 0:  # its block has ended: its slot is free at bend
                    if bend[_u(b)] > end:
                        end = bend[_u(b)]
                    k = 0
                    while res[_u(sm), _u(k)] != b:
                        k += 1
                    for j in range(k + 1, nres[_u(sm)]):
                        res[_u(sm), _u(j - 1)] = res[_u(sm), _u(j)]
                        rslot[_u(sm), _u(j - 1)] = rslot[_u(sm), _u(j)]
                    nres[_u(sm)] -= 1
                    _push(ht, hq, hs, hn, bend[_u(b)], sm)
        return end

    return impl


@njit(cache=True)
def pc_sums(per_inst: np.ndarray, pc_pos: np.ndarray, n_pc: int) -> np.ndarray:
    """Per-PC sums (int64) of the rows of ``per_inst``; row ``i`` belongs to PC
    ``pc_pos[i]`` (in ``0 .. n_pc - 1``)."""
    out = np.zeros((n_pc, per_inst.shape[1]), np.int64)
    for i in range(per_inst.shape[0]):
        p = pc_pos[i]
        for f in range(per_inst.shape[1]):
            out[p, f] += per_inst[i, f]
    return out


def gather_requests(
    rel: np.ndarray,
    req_ptr: np.ndarray,
    line: np.ndarray,
    mask: np.ndarray,
    full: np.ndarray,
    bank: np.ndarray,
    l2set: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The CSR requests (and their bank and set) with instruction ``i`` taking the
    requests of instruction ``rel[i]`` (a sweep's second simulation of a layout stores its
    inputs in the observed issue order). The outputs are allocated by NumPy (huge pages;
    numba's allocator page-faults every 4 KiB) and filled in one pass."""
    ptr = np.zeros(rel.shape[0] + 1, np.int64)
    np.cumsum(np.diff(req_ptr)[rel], out=ptr[1:])
    n = int(ptr[-1])
    out = tuple(np.empty(n, a.dtype) for a in (line, mask, full, bank, l2set))
    _gather(rel, req_ptr, ptr, (line, mask, full, bank, l2set), out)
    return (ptr, *out)


@njit(cache=True)
def _gather(rel: np.ndarray, req_ptr: np.ndarray, ptr: np.ndarray, src: tuple, dst: tuple) -> None:
    """``dst[k][ptr[i]:ptr[i+1]] = src[k][req_ptr[rel[i]]:req_ptr[rel[i]+1]]`` for the
    five request arrays, in one pass."""
    line, mask, full, bank, l2set = src
    o_line, o_mask, o_full, o_bank, o_set = dst
    for i in range(rel.shape[0]):
        j = rel[_u(i)]
        q = ptr[_u(i)]
        for p in range(req_ptr[_u(j)], req_ptr[_u(j + 1)]):
            o_line[_u(q)] = line[_u(p)]
            o_mask[_u(q)] = mask[_u(p)]
            o_full[_u(q)] = full[_u(p)]
            o_bank[_u(q)] = bank[_u(p)]
            o_set[_u(q)] = l2set[_u(p)]
            q += 1
