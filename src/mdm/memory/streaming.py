"""Streaming L1 (``l1.allocate_on = 'fill'``, paper 004 section III-C): numba helpers.

A read miss allocates no line: it only takes an MSHR entry (one per in-flight sector,
or line when not sectored) recorded in a per-SM table of pending fills; the line is
allocated -- LRU victim chosen, sector made valid -- when the fill returns. So there
is no reservation and no ``LINE_ALLOC_FAIL``: a set whose every way has a fill in flight
never stalls a miss. A read to a sector with a fill in flight merges into its entry (a
pending hit) up to ``l1.mshr_max_merge`` requests, the miss included (``pend[c, i, 3]``
starts at 1, as GPGPU-Sim's ``mshr_table`` list starts with the miss); beyond that it
waits for the fill, holding the SM's L1 port (a reservation fail), and counts as a hit:
the rule of the allocate-on-miss L1. Until 2026-11-26 the entry started at 0 (one
pending hit more) and the refused read did not hold the port. A line's sectors are
therefore valid only once filled, and the per-sector fill times and merge counts that
the allocate-on-miss L1 keeps with its lines (``l1_fill``, ``l1_merges``) are neither
read nor written: a valid sector is a hit at once.

Table of SM ``c`` (``P`` entries in stable slots): ``pend[c, i] = (line, set, sector,
merges, seq, bucket)`` and ``pend_t[c, i]`` = fill time (core cycles) of slot ``i``;
``pend_t[c, P]`` caches the earliest fill time (``inf`` when empty) so that a read with
nothing to fill costs O(1) (the caller tests it inline). Row ``pend_n[c]`` holds, in
order: the entries in use, ``H`` (the hash's buckets in use), the next ``seq``, the
tombstones; a binary min-heap of the slots in use ordered by (fill time, insertion
``seq``); the stack of free slots; an open-addressing hash (linear probing) from
``line * 32 + sector`` to the slot, room for ``Hmax`` buckets (a power of two >= 2P)
of which the first ``H`` are used (``Hmax`` keys, -1 = empty, -2 = deleted, then
``Hmax`` slots). An entry never moves in the hash, so its slot keeps its bucket and a
fill deletes it with one store (a tombstone) instead of a probe: in tables of thousands
of entries per SM (Volta: 4,096) that probe missed the CPU's caches on nearly every
fill. When live entries and tombstones would pass 3/4 of ``H`` the hash is rebuilt from
the heap's slots, with twice the buckets when the live entries alone pass half of
them. ``H`` starts at :data:`_H0` and grows only as far as the fills in flight need
(the stride benchmark on v100: 4,096 buckets, 1,024 to 2,048 fills in flight); a hash
sized for all ``P`` entries from the start spread them over ``2P`` keys (64 KB per SM
at ``P`` = 4,096), so that nearly every probe of an L1 miss missed the CPU's caches
(9 % of a Volta simulation's time). Before a
read at time ``t`` the fills with time ``<= t`` are applied in that order
(:func:`drain`); a full table applies its earliest fill first (the MSHR ring of the
caller already delays a miss until the oldest entry completes, so this only reorders
equal-time events). Every fill is the heap's
minimum when it is applied, so an SM with hundreds of MSHR entries (Volta: 256-512)
pays O(log P) per fill, not a scan of the table.
"""

from __future__ import annotations

import numpy as np

from mdm._jit import inlined, njit
from mdm.memory import _core  # module, not names: _core imports this module
from mdm.memory._index import u as _u

_HEAP = 4  # offset of the heap in a row of ``pend_n`` (after the four counters)
_H0 = 256  # buckets of a new table's hash (it doubles as the fills in flight grow)


def new_table(n_sm: int, entries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty ``(pend, pend_t, pend_n)`` for ``entries`` in-flight fills per SM (0 = off)."""
    buckets = 1
    while buckets < 2 * entries:
        buckets *= 2
    pend_n = np.full((n_sm, _HEAP + 2 * entries + 2 * buckets), -1, np.int64)
    pend_n[:, 0] = 0  # entries in use
    pend_n[:, 1] = min(_H0, buckets)  # buckets in use
    pend_n[:, 2] = 0  # next seq
    pend_n[:, 3] = 0  # tombstones
    free = _HEAP + entries
    pend_n[:, free : free + entries] = np.arange(entries)[::-1]  # slot 0 on top
    return (
        np.zeros((n_sm, entries, 6), np.int64),
        np.full((n_sm, entries + 1), np.inf),
        pend_n,
    )


@inlined
def _key(line: np.int64, k: np.int64) -> np.int64:
    """Hash key of sector ``k`` of ``line``."""
    return line * 32 + k


@inlined
def _home(key: np.int64, nb: np.int64) -> np.int64:
    return ((key * np.int64(0x9E3779B1)) ^ (key >> 13)) & (nb - 1)


@inlined
def _keys_at(pend: np.ndarray) -> np.int64:
    """Offset of the hash's keys in a row of ``pend_n`` (after the heap and the free
    stack, ``P`` cells each); its slots start ``Hmax`` cells later."""
    return _HEAP + 2 * pend.shape[1]


@inlined
def _slots_at(pend: np.ndarray, pend_n: np.ndarray) -> np.int64:
    """Offset of the hash's slot column: the keys' offset plus ``Hmax``."""
    return pend_n.shape[1] - (pend_n.shape[1] - _keys_at(pend)) // 2


@njit(cache=True, _nrt=False)
def _h_find(pend: np.ndarray, pend_n: np.ndarray, c: np.int64, key: np.int64) -> np.int64:
    """Bucket of ``key`` in SM ``c``'s hash, or -1 (tombstones are probed past)."""
    nb = pend_n[_u(c), 1]
    keys = _keys_at(pend)
    h = _home(key, nb)
    while True:
        kh = pend_n[_u(c), _u(keys + h)]
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
    keys = _keys_at(pend)
    h = _home(key, nb)
    while pend_n[_u(c), _u(keys + h)] >= 0:
        h = (h + 1) & (nb - 1)
    if pend_n[_u(c), _u(keys + h)] == -2:
        pend_n[_u(c), 3] -= 1
    pend_n[_u(c), _u(keys + h)] = key
    pend_n[_u(c), _u(_slots_at(pend, pend_n) + h)] = slot
    pend[_u(c), _u(slot), 5] = h


@njit(cache=True, _nrt=False)
def _h_rebuild(pend: np.ndarray, pend_n: np.ndarray, c: np.int64, nb: np.int64) -> None:
    """Empty SM ``c``'s hash (tombstones too), make it ``nb`` buckets and insert its
    live slots again."""
    keys = _keys_at(pend)
    for h in range(max(nb, pend_n[_u(c), 1])):
        pend_n[_u(c), _u(keys + h)] = -1
    pend_n[_u(c), 1] = nb
    pend_n[_u(c), 3] = 0
    for j in range(pend_n[_u(c), 0]):
        i = pend_n[_u(c), _u(_HEAP + j)]
        _h_insert(pend, pend_n, c, _key(pend[_u(c), _u(i), 0], pend[_u(c), _u(i), 2]), i)


@inlined
def _before(pend: np.ndarray, pend_t: np.ndarray, c: np.int64, a: np.int64, b: np.int64) -> bool:
    """Slot ``a`` fills before slot ``b``: earlier time, then earlier insertion."""
    ta = pend_t[_u(c), _u(a)]
    tb = pend_t[_u(c), _u(b)]
    return ta < tb or (ta == tb and pend[_u(c), _u(a), 4] < pend[_u(c), _u(b), 4])


@njit(cache=True, _nrt=False)
def _heap_push(
    pend: np.ndarray,
    pend_t: np.ndarray,
    pend_n: np.ndarray,
    c: np.int64,
    slot: np.int64,
    base: np.int64,
    n: np.int64,
) -> None:
    """Add ``slot`` to the heap at ``pend_n[c, base:]`` holding ``n`` slots."""
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        ps = pend_n[_u(c), _u(base + parent)]
        if not _before(pend, pend_t, c, slot, ps):
            break
        pend_n[_u(c), _u(base + i)] = ps
        i = parent
    pend_n[_u(c), _u(base + i)] = slot


@njit(cache=True, _nrt=False)
def _heap_pop(
    pend: np.ndarray,
    pend_t: np.ndarray,
    pend_n: np.ndarray,
    c: np.int64,
    base: np.int64,
    n: np.int64,
) -> np.int64:
    """Remove and return the earliest slot of the heap holding ``n`` (> 0) slots."""
    top = pend_n[_u(c), _u(base)]
    n -= 1
    if n > 0:
        last = pend_n[_u(c), _u(base + n)]
        i = 0
        while True:
            ch = 2 * i + 1
            if ch >= n:
                break
            cs = pend_n[_u(c), _u(base + ch)]
            if ch + 1 < n:
                rs = pend_n[_u(c), _u(base + ch + 1)]
                if _before(pend, pend_t, c, rs, cs):
                    ch += 1
                    cs = rs
            if not _before(pend, pend_t, c, cs, last):
                break
            pend_n[_u(c), _u(base + i)] = cs
            i = ch
        pend_n[_u(c), _u(base + i)] = last
    return top


@inlined  # into drain and add: no call per fill
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
    heap = _HEAP
    free = heap + p
    n = pend_n[_u(c), 0]
    i = _heap_pop(pend, pend_t, pend_n, c, heap, n)
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
    pend_n[_u(c), _u(_keys_at(pend) + pend[_u(c), _u(i), 5])] = -2  # delete: a tombstone
    pend_n[_u(c), 3] += 1
    pend_n[_u(c), _u(free + p - n)] = i  # push the slot on the free stack
    n -= 1
    pend_n[_u(c), 0] = n
    pend_t[_u(c), _u(p)] = pend_t[_u(c), _u(pend_n[_u(c), _u(heap)])] if n > 0 else np.inf


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
    p = pend_t.shape[1] - 1
    while pend_t[_u(c), _u(p)] <= t and pend_n[_u(c), 0] > 0:  # earliest fill time (inf: empty)
        _apply_first(pend, pend_t, pend_n, c, tags, lru, valid, ix, stamp)


@njit(cache=True, _nrt=False)
def find(
    pend: np.ndarray, pend_n: np.ndarray, c: np.int64, line: np.int64, k: np.int64
) -> np.int64:
    """Slot of SM ``c``'s in-flight entry for sector ``k`` of ``line``, or -1."""
    h = _h_find(pend, pend_n, c, _key(line, k))
    if h < 0:
        return -1
    return pend_n[_u(c), _u(_slots_at(pend, pend_n) + h)]


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
    nb = pend_n[_u(c), 1]
    if 4 * (n + 1 + pend_n[_u(c), 3]) > 3 * nb:  # keep a quarter empty
        if 2 * (n + 1) > nb and 2 * nb <= _slots_at(pend, pend_n) - _keys_at(pend):
            nb *= 2  # live entries alone past half: twice the buckets
        _h_rebuild(pend, pend_n, c, nb)
    heap = _HEAP
    free = heap + p
    i = pend_n[_u(c), _u(free + p - n - 1)]  # pop a free slot
    seq = pend_n[_u(c), 2]
    pend_n[_u(c), 2] = seq + 1
    pend[_u(c), _u(i), 0] = line
    pend[_u(c), _u(i), 1] = s
    pend[_u(c), _u(i), 2] = k
    pend[_u(c), _u(i), 3] = 1  # the entry's list holds the miss itself (mshr_table)
    pend[_u(c), _u(i), 4] = seq
    pend_t[_u(c), _u(i)] = tf
    _heap_push(pend, pend_t, pend_n, c, i, heap, n)
    pend_n[_u(c), 0] = n + 1
    _h_insert(pend, pend_n, c, _key(line, k), i)
    pend_t[_u(c), _u(p)] = pend_t[_u(c), _u(pend_n[_u(c), _u(heap)])]
