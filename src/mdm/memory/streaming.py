"""Streaming L1 (``l1.allocate_on = 'fill'``, paper 004 section III-C): numba helpers.

A read miss allocates no line: it only takes an MSHR entry (one per in-flight sector,
or line when not sectored) recorded in a per-SM table of pending fills; the line is
allocated -- LRU victim chosen, sector made valid -- when the fill returns. So there
is no reservation and no ``LINE_ALLOC_FAIL``: a set whose every way has a fill in flight
never stalls a miss. A read to a sector with a fill in flight merges into its entry (a
pending hit) up to ``l1.mshr_max_merge`` requests; beyond that it waits for the fill and
counts as a hit (the rule of the allocate-on-miss L1).

Table of SM ``c`` (``P`` entries): ``pend[c, i] = (line, set, sector, merges)`` and
``pend_t[c, i]`` = fill time (core cycles); ``pend_t[c, P]`` caches the earliest fill time
(``inf`` when empty) so that a read with nothing to fill costs O(1). ``pend_n[c, 0]`` =
entries in use, then an open-addressing hash (linear probing, backward-shift deletion)
of ``H`` buckets from ``line * 32 + sector`` to the entry: keys ``pend_n[c, 1:1+H]``
(-1 = empty), entries ``pend_n[c, 1+H:1+2H]`` (:func:`new_table` sizes it). Before a
read at time ``t`` the fills with time ``<= t`` are applied in time order
(:func:`drain`); a full table applies its earliest fill first (the MSHR ring of the
caller already delays a miss until the oldest entry completes, so this only reorders
equal-time events).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from mdm.memory import _core  # module, not names: _core imports this module


def new_table(n_sm: int, entries: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty ``(pend, pend_t, pend_n)`` for ``entries`` in-flight fills per SM (0 = off)."""
    buckets = 1
    while buckets < 2 * entries:
        buckets *= 2
    pend_n = np.full((n_sm, 1 + 2 * buckets), -1, np.int64)
    pend_n[:, 0] = 0
    return (
        np.zeros((n_sm, entries, 4), np.int64),
        np.full((n_sm, entries + 1), np.inf),
        pend_n,
    )


@njit(cache=True, inline="always")
def _home(key: np.int64, nb: np.int64) -> np.int64:
    return ((key * np.int64(0x9E3779B1)) ^ (key >> 13)) & (nb - 1)


@njit(cache=True, _nrt=False)
def _h_find(pend_n: np.ndarray, c: np.int64, key: np.int64) -> np.int64:
    """Bucket of ``key`` in SM ``c``'s hash, or -1."""
    nb = (pend_n.shape[1] - 1) // 2
    h = _home(key, nb)
    while pend_n[c, 1 + h] >= 0:
        if pend_n[c, 1 + h] == key:
            return h
        h = (h + 1) & (nb - 1)
    return -1


@njit(cache=True, _nrt=False)
def _h_insert(pend_n: np.ndarray, c: np.int64, key: np.int64, slot: np.int64) -> None:
    nb = (pend_n.shape[1] - 1) // 2
    h = _home(key, nb)
    while pend_n[c, 1 + h] >= 0:
        h = (h + 1) & (nb - 1)
    pend_n[c, 1 + h] = key
    pend_n[c, 1 + nb + h] = slot


@njit(cache=True, _nrt=False)
def _h_delete(pend_n: np.ndarray, c: np.int64, h: np.int64) -> None:
    """Empty bucket ``h``, shifting back the entries of its probe run."""
    nb = (pend_n.shape[1] - 1) // 2
    i = h
    j = h
    while True:
        j = (j + 1) & (nb - 1)
        kj = pend_n[c, 1 + j]
        if kj < 0:
            break
        home = _home(kj, nb)
        # the entry at j may move to i unless its home lies cyclically in (i, j]
        if i <= j:
            stays = i < home <= j
        else:
            stays = home > i or home <= j
        if not stays:
            pend_n[c, 1 + i] = kj
            pend_n[c, 1 + nb + i] = pend_n[c, 1 + nb + j]
            i = j
    pend_n[c, 1 + i] = -1


@njit(cache=True, inline="always")
def _lru_way(tags: np.ndarray, lru: np.ndarray, c: np.int64, s: np.int64) -> np.int64:
    """An invalid way, else the least recently used one (nothing is ever reserved)."""
    best = 0
    for w in range(tags.shape[2]):
        if tags[c, s, w] < 0:
            return w
        if lru[c, s, w] < lru[c, s, best]:
            best = w
    return best


@njit(cache=True, inline="always")
def _refresh_min(pend_t: np.ndarray, pend_n: np.ndarray, c: np.int64) -> None:
    m = np.inf
    for i in range(pend_n[c, 0]):
        m = min(m, pend_t[c, i])
    pend_t[c, pend_t.shape[1] - 1] = m


@njit(cache=True, _nrt=False)
def _apply(
    pend: np.ndarray,
    pend_t: np.ndarray,
    pend_n: np.ndarray,
    c: np.int64,
    i: np.int64,
    tags: np.ndarray,
    lru: np.ndarray,
    valid: np.ndarray,
    fill: np.ndarray,
    merges: np.ndarray,
    stamp: np.ndarray,
) -> None:
    """Fill entry ``i`` of SM ``c`` into the cache and remove it from the table."""
    line = pend[c, i, 0]
    s = pend[c, i, 1]
    k = pend[c, i, 2]
    w = _core.find_way(tags, c, s, line)
    if w < 0:
        w = _lru_way(tags, lru, c, s)
        tags[c, s, w] = line
        valid[c, s, w] = 0
        for q in range(fill.shape[3]):
            fill[c, s, w, q] = -np.inf
            merges[c, s, w, q] = 0
    stamp[0] += 1
    lru[c, s, w] = stamp[0]
    valid[c, s, w] |= np.uint32(1) << np.uint32(k)
    _h_delete(pend_n, c, _h_find(pend_n, c, line * 32 + k))
    last = pend_n[c, 0] - 1
    if i != last:
        for f in range(4):
            pend[c, i, f] = pend[c, last, f]
        pend_t[c, i] = pend_t[c, last]
        nb = (pend_n.shape[1] - 1) // 2
        pend_n[c, 1 + nb + _h_find(pend_n, c, pend[c, i, 0] * 32 + pend[c, i, 2])] = i
    pend_n[c, 0] = last


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
    fill: np.ndarray,
    merges: np.ndarray,
    stamp: np.ndarray,
) -> None:
    """Apply SM ``c``'s fills that arrived by ``t``, earliest first."""
    if pend_t[c, pend_t.shape[1] - 1] > t:
        return
    while pend_n[c, 0] > 0:
        best = -1
        best_t = np.inf
        for i in range(pend_n[c, 0]):
            if pend_t[c, i] < best_t:
                best_t = pend_t[c, i]
                best = i
        if best_t > t:
            pend_t[c, pend_t.shape[1] - 1] = best_t
            return
        _apply(pend, pend_t, pend_n, c, best, tags, lru, valid, fill, merges, stamp)
    pend_t[c, pend_t.shape[1] - 1] = np.inf


@njit(cache=True, _nrt=False)
def find(
    pend: np.ndarray, pend_n: np.ndarray, c: np.int64, line: np.int64, k: np.int64
) -> np.int64:
    """Index of SM ``c``'s in-flight entry for sector ``k`` of ``line``, or -1."""
    h = _h_find(pend_n, c, line * 32 + k)
    if h < 0:
        return -1
    return pend_n[c, 1 + (pend_n.shape[1] - 1) // 2 + h]


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
    fill: np.ndarray,
    merges: np.ndarray,
    stamp: np.ndarray,
) -> None:
    """Record a new in-flight fill (sector ``k`` of ``line`` in set ``s``) arriving at ``tf``."""
    if pend_n[c, 0] == pend.shape[1]:  # full: the earliest fill completes first
        best = 0
        for i in range(1, pend_n[c, 0]):
            if pend_t[c, i] < pend_t[c, best]:
                best = i
        _apply(pend, pend_t, pend_n, c, best, tags, lru, valid, fill, merges, stamp)
        _refresh_min(pend_t, pend_n, c)
    n = pend_n[c, 0]
    pend[c, n, 0] = line
    pend[c, n, 1] = s
    pend[c, n, 2] = k
    pend[c, n, 3] = 0
    pend_t[c, n] = tf
    pend_n[c, 0] = n + 1
    _h_insert(pend_n, c, line * 32 + k, n)
    if tf < pend_t[c, pend_t.shape[1] - 1]:
        pend_t[c, pend_t.shape[1] - 1] = tf
