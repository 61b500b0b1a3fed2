"""Streaming L1 (``l1.allocate_on = 'fill'``, paper 004 section III-C): numba helpers.

A read miss allocates no line: it only takes an MSHR entry (one per in-flight sector,
or line when not sectored) recorded in a per-SM table of pending fills; the line is
allocated -- LRU victim chosen, sector made valid -- when the fill returns. So there
is no reservation and no ``LINE_ALLOC_FAIL``: a set whose every way has a fill in flight
never stalls a miss. A read to a sector with a fill in flight merges into its entry (a
pending hit) up to ``l1.mshr_max_merge`` requests; beyond that it waits for the fill and
counts as a hit (the rule of the allocate-on-miss L1). A line's sectors are therefore
valid only once filled, and the per-sector fill times and merge counts that the
allocate-on-miss L1 keeps with its lines (``l1_fill``, ``l1_merges``) are neither read
nor written: a valid sector is a hit at once.

Table of SM ``c`` (``P`` entries in stable slots): ``pend[c, i] = (line, set, sector,
merges, seq, bucket)`` and ``pend_t[c, i]`` = fill time (core cycles) of slot ``i``;
``pend_t[c, P]`` caches the earliest fill time (``inf`` when empty) so that a read with
nothing to fill costs O(1) (the caller tests it inline). Row ``pend_n[c]`` holds, in
order: the entries in use, ``H``, the next ``seq``, the tombstones; an open-addressing
hash (linear probing) of ``H`` buckets from ``line * 32 + sector`` to the slot (``H``
keys, -1 = empty, -2 = deleted, then ``H`` slots); the stack of free slots
(:func:`new_table` sizes it). An entry never moves in the hash, so its slot keeps its
bucket and a fill deletes it with one store (a tombstone) instead of a probe: in
tables of thousands of entries per SM (Volta: 4,096) that probe missed the CPU's
caches on nearly every fill. When live entries and tombstones would pass 3/4 of ``H``
the hash is rebuilt from the heap's slots. Before a
read at time ``t`` the fills with time ``<= t`` are applied in (fill time, ``seq``)
order (:func:`drain`); a full table applies its earliest fill first (the MSHR ring of
the caller already delays a miss until the oldest entry completes, so this only
reorders equal-time events).

That order is kept by a 4-ary min-heap in ``pend_t[c, _heap_base(P):]`` whose nodes
carry their keys: node ``k`` is the record ``(fill time, seq * Q + slot)`` (``Q`` the
power of two >= ``P``; exact in a float64 below 2**53, i.e. for fewer than 2**53 / Q
misses per SM and kernel) at record position ``k + 3``, so the four children of a node
(positions ``4k + 4 .. 4k + 7``) fill one aligned 64-byte cache line and a level of
the heap costs one line, not a line per child for its slot's time and another for its
``seq``. Streaming L1s have thousands of entries per SM (Volta: 4,096), so a fill's
:func:`_heap_pop` sifts through 6 levels instead of a binary heap's 12. Every fill is
the heap's minimum when it is applied, so an SM with hundreds of MSHR entries pays
O(log P) per fill, not a scan of the table.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mdm.memory import _core  # module, not names: _core imports this module
from mdm.memory._index import u as _u

_KEYS = 5  # offset of the hash's keys in a row of ``pend_n``


def _heap_base(entries: int) -> int:
    """Column of ``pend_t`` where the heap's records start (a multiple of 8 floats)."""
    return (entries + 1 + 7) // 8 * 8


def _pow2_at_least(n: int) -> int:
    q = 1
    while q < n:
        q *= 2
    return q


def new_table(n_sm: int, entries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty ``(pend, pend_t, pend_n)`` for ``entries`` in-flight fills per SM (0 = off).

    Each row of ``pend_t`` starts on a 64-byte boundary, so that the heap's groups of
    four children are cache lines."""
    buckets = _pow2_at_least(2 * entries)
    pend_n = np.full((n_sm, _KEYS + 2 * buckets + entries), -1, np.int64)
    pend_n[:, 0] = 0  # entries in use
    pend_n[:, 1] = buckets
    pend_n[:, 2] = 0  # next seq
    pend_n[:, 3] = 0  # tombstones
    pend_n[:, 4] = _pow2_at_least(entries)  # Q of the heap's keys
    free = _KEYS + 2 * buckets
    pend_n[:, free : free + entries] = np.arange(entries)[::-1]  # slot 0 on top
    width = _heap_base(entries) + 2 * (entries + 3)
    width = (width + 7) // 8 * 8
    buf = np.empty(n_sm * width + 8)
    off = (-buf.ctypes.data // 8) % 8  # first 64-byte aligned float
    pend_t = buf[off : off + n_sm * width].reshape(n_sm, width)
    pend_t[:] = np.inf
    return np.zeros((n_sm, entries, 6), np.int64), pend_t, pend_n


@njit(cache=True, inline="always")
def _key(line: np.int64, k: np.int64) -> np.int64:
    """Hash key of sector ``k`` of ``line``."""
    return line * 32 + k


@njit(cache=True, inline="always")
def _home(key: np.int64, nb: np.int64) -> np.int64:
    return ((key * np.int64(0x9E3779B1)) ^ (key >> 13)) & (nb - 1)


@njit(cache=True, _nrt=False)
def _h_find(pend_n: np.ndarray, c: np.int64, key: np.int64) -> np.int64:
    """Bucket of ``key`` in SM ``c``'s hash, or -1 (tombstones are probed past)."""
    nb = pend_n[_u(c), 1]
    h = _home(key, nb)
    while True:
        kh = pend_n[_u(c), _u(_KEYS + h)]
        if kh == key:
            return h
        if kh == -1:
            return -1
        h = (h + 1) & (nb - 1)


@njit(cache=True, _nrt=False)
def _h_insert(
    pend: np.ndarray, pend_n: np.ndarray, c: np.int64, key: np.int64, slot: np.int64
) -> None:
    """Put ``key`` (absent) -> ``slot`` in the first free or deleted bucket of its probe
    run and record the bucket in the slot's row."""
    nb = pend_n[_u(c), 1]
    h = _home(key, nb)
    while pend_n[_u(c), _u(_KEYS + h)] >= 0:
        h = (h + 1) & (nb - 1)
    if pend_n[_u(c), _u(_KEYS + h)] == -2:
        pend_n[_u(c), 3] -= 1
    pend_n[_u(c), _u(_KEYS + h)] = key
    pend_n[_u(c), _u(_KEYS + nb + h)] = slot
    pend[_u(c), _u(slot), 5] = h


@njit(cache=True, _nrt=False)
def _h_rebuild(pend: np.ndarray, pend_t: np.ndarray, pend_n: np.ndarray, c: np.int64) -> None:
    """Empty SM ``c``'s hash (tombstones too) and insert its live slots again."""
    nb = pend_n[_u(c), 1]
    for h in range(nb):
        pend_n[_u(c), _u(_KEYS + h)] = -1
    pend_n[_u(c), 3] = 0
    base = _hb(pend.shape[1])
    for j in range(pend_n[_u(c), 0]):
        i = _heap_slot(pend_t, pend_n, c, base, j)
        _h_insert(pend, pend_n, c, _key(pend[_u(c), _u(i), 0], pend[_u(c), _u(i), 2]), i)


@njit(cache=True, inline="always")
def _hb(p: np.int64) -> np.int64:
    """:func:`_heap_base` in compiled code."""
    return (p + 8) // 8 * 8


@njit(cache=True, inline="always")
def _free_at(pend_n: np.ndarray, c: np.int64) -> np.int64:
    """Offset of SM ``c``'s free-slot stack in its ``pend_n`` row (after the hash's
    ``2H`` cells)."""
    return _KEYS + 2 * pend_n[_u(c), 1]


@njit(cache=True, inline="always")
def _rec(base: np.int64, k: np.int64) -> np.int64:
    """Column in ``pend_t`` of heap node ``k``'s fill time (its key is the next one)."""
    return base + 2 * (k + 3)


@njit(cache=True, inline="always")
def _heap_slot(
    pend_t: np.ndarray, pend_n: np.ndarray, c: np.int64, base: np.int64, k: np.int64
) -> np.int64:
    """Slot of heap node ``k``."""
    return np.int64(pend_t[_u(c), _u(_rec(base, k) + 1)]) & (pend_n[_u(c), 4] - 1)


@njit(cache=True, _nrt=False)
def _heap_push(
    pend_t: np.ndarray,
    c: np.int64,
    tf: float,
    key: float,
    base: np.int64,
    n: np.int64,
) -> None:
    """Add the record ``(tf, key)`` to the heap at ``pend_t[c, base:]`` holding ``n``."""
    i = n
    while i > 0:
        parent = (i - 1) >> 2
        r = _rec(base, parent)
        pt = pend_t[_u(c), _u(r)]
        if tf > pt or (tf == pt and key > pend_t[_u(c), _u(r + 1)]):
            break
        q = _rec(base, i)
        pend_t[_u(c), _u(q)] = pt
        pend_t[_u(c), _u(q + 1)] = pend_t[_u(c), _u(r + 1)]
        i = parent
    q = _rec(base, i)
    pend_t[_u(c), _u(q)] = tf
    pend_t[_u(c), _u(q + 1)] = key


@njit(cache=True, _nrt=False)
def _heap_pop(pend_t: np.ndarray, c: np.int64, base: np.int64, n: np.int64) -> None:
    """Remove the earliest record of the heap holding ``n`` (> 0) records; an empty
    heap's root time becomes ``inf``."""
    n -= 1
    last = _rec(base, n)
    lt = pend_t[_u(c), _u(last)]
    lk = pend_t[_u(c), _u(last + 1)]
    i = 0
    while True:
        ch = 4 * i + 1
        if ch >= n:
            break
        best = _rec(base, ch)
        bt = pend_t[_u(c), _u(best)]
        bk = pend_t[_u(c), _u(best + 1)]
        for j in range(ch + 1, min(ch + 4, n)):
            r = _rec(base, j)
            rt = pend_t[_u(c), _u(r)]
            if rt < bt or (rt == bt and pend_t[_u(c), _u(r + 1)] < bk):
                best = r
                bt = rt
                bk = pend_t[_u(c), _u(r + 1)]
        if lt < bt or (lt == bt and lk < bk):
            break
        q = _rec(base, i)
        pend_t[_u(c), _u(q)] = bt
        pend_t[_u(c), _u(q + 1)] = bk
        i = (best - base) // 2 - 3
    q = _rec(base, i)
    if n > 0:
        pend_t[_u(c), _u(q)] = lt
        pend_t[_u(c), _u(q + 1)] = lk
    else:
        pend_t[_u(c), _u(q)] = np.inf


@njit(cache=True, _nrt=False, inline="always")
def _apply_first(
    pend: np.ndarray,
    pend_t: np.ndarray,
    pend_n: np.ndarray,
    c: np.int64,
    tags: np.ndarray,
    lru: np.ndarray,
    valid: np.ndarray,
    ix: np.ndarray,
    stamp: np.ndarray,
) -> None:
    """Fill SM ``c``'s earliest entry into the cache and free its slot."""
    p = pend.shape[1]
    base = _hb(p)
    n = pend_n[_u(c), 0]
    i = _heap_slot(pend_t, pend_n, c, base, 0)
    _heap_pop(pend_t, c, base, n)
    line = pend[_u(c), _u(i), 0]
    s = pend[_u(c), _u(i), 1]
    k = pend[_u(c), _u(i), 2]
    w = _core.way_of(tags, ix, c, s, line)
    if w < 0:
        w = _core.lru_way(tags, lru, ix, c, s)
        _core.set_tag(tags, ix, c, s, w, line)
        valid[_u(c), _u(s), _u(w)] = 0
    stamp[0] += 1
    _core.use_way(lru, ix, c, s, w, stamp[0])
    valid[_u(c), _u(s), _u(w)] |= np.uint32(1) << np.uint32(k)
    pend_n[_u(c), _u(_KEYS + pend[_u(c), _u(i), 5])] = -2  # delete: a tombstone
    pend_n[_u(c), 3] += 1
    pend_n[_u(c), _u(_free_at(pend_n, c) + p - n)] = i  # push the slot on the free stack
    pend_n[_u(c), 0] = n - 1
    pend_t[_u(c), _u(p)] = pend_t[_u(c), _u(_rec(base, 0))]  # inf when empty


@njit(cache=True, _nrt=False)
def drain(
    pend: np.ndarray,
    pend_t: np.ndarray,
    pend_n: np.ndarray,
    c: np.int64,
    t: float,
    tags: np.ndarray,
    lru: np.ndarray,
    valid: np.ndarray,
    ix: np.ndarray,
    stamp: np.ndarray,
) -> None:
    """Apply SM ``c``'s fills that arrived by ``t``, earliest first."""
    p = pend.shape[1]
    while pend_t[_u(c), _u(p)] <= t and pend_n[_u(c), 0] > 0:  # earliest fill time (inf: empty)
        _apply_first(pend, pend_t, pend_n, c, tags, lru, valid, ix, stamp)


@njit(cache=True, _nrt=False)
def find(
    pend: np.ndarray, pend_n: np.ndarray, c: np.int64, line: np.int64, k: np.int64
) -> np.int64:
    """Slot of SM ``c``'s in-flight entry for sector ``k`` of ``line``, or -1."""
    h = _h_find(pend_n, c, _key(line, k))
    if h < 0:
        return -1
    return pend_n[_u(c), _u(_KEYS + pend_n[_u(c), 1] + h)]


@njit(cache=True, _nrt=False)
def add(
    pend: np.ndarray,
    pend_t: np.ndarray,
    pend_n: np.ndarray,
    c: np.int64,
    line: np.int64,
    s: np.int64,
    k: np.int64,
    tf: float,
    tags: np.ndarray,
    lru: np.ndarray,
    valid: np.ndarray,
    ix: np.ndarray,
    stamp: np.ndarray,
) -> None:
    """Record a new in-flight fill (sector ``k`` of ``line`` in set ``s``) arriving at ``tf``."""
    p = pend.shape[1]
    if pend_n[_u(c), 0] == p:  # full: the earliest fill completes first
        _apply_first(pend, pend_t, pend_n, c, tags, lru, valid, ix, stamp)
    n = pend_n[_u(c), 0]
    if 4 * (n + 1 + pend_n[_u(c), 3]) > 3 * pend_n[_u(c), 1]:  # keep a quarter empty
        _h_rebuild(pend, pend_t, pend_n, c)
    i = pend_n[_u(c), _u(_free_at(pend_n, c) + p - n - 1)]  # pop a free slot
    seq = pend_n[_u(c), 2]
    pend_n[_u(c), 2] = seq + 1
    pend[_u(c), _u(i), 0] = line
    pend[_u(c), _u(i), 1] = s
    pend[_u(c), _u(i), 2] = k
    pend[_u(c), _u(i), 3] = 0
    pend[_u(c), _u(i), 4] = seq
    pend_t[_u(c), _u(i)] = tf
    base = _hb(p)
    _heap_push(pend_t, c, tf, np.float64(seq * pend_n[_u(c), 4] + i), base, n)
    pend_n[_u(c), 0] = n + 1
    _h_insert(pend, pend_n, c, _key(line, k), i)
    pend_t[_u(c), _u(p)] = pend_t[_u(c), _u(_rec(base, 0))]
