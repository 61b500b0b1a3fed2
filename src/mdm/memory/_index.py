"""Shared pieces of the cache simulator's compiled loops: unsigned array indices and
the decorator of the loops' helper functions."""

from __future__ import annotations

import numpy as np
from numba import njit

#: Decorator of the issue loop's helpers (cache lookups, victims, queues, the L2 access,
#: the streaming L1's table): each is compiled once on its own, without numba's
#: reference counting (``_nrt=False``: they allocate nothing) and with the issue loop's
#: error model (``numpy``: no zero-divisor exception path; their divisors are validated
#: positive configuration values), and LLVM inlines it at every call site
#: (``forceinline``). Numba's IR-level ``inline="always"``, used before, copied every
#: helper's IR into each call site and typed it again there: the mdm_pascal issue
#: loop's cold compilation took 41-53 s that way against 30-35 s (three interleaved
#: rounds, fresh ``NUMBA_CACHE_DIR``); repeated simulations run as fast
#: (docs/measurement-log.md).
inlined = njit(cache=True, _nrt=False, error_model="numpy", forceinline=True)


@njit(cache=True)
def u(i: np.int64) -> np.uint64:
    """``i`` as an unsigned index. Numba wraps a negative *signed* index (``a[-1]``)
    with a compare and select per dimension; every index of the simulator's hot loops
    is non-negative, and indexing through this skips that work (measured: the stride
    benchmark's simulation 685 -> 538 ms, spmv_csr 43 -> 28 ms, identical results).

    Not ``inline="always"``: numba would copy its IR into each of the several hundred
    call sites, which made the cache simulator's first compilation 72 s instead of
    39 s; LLVM inlines this one-instruction function anyway (run time unchanged)."""
    return np.uint64(i)
