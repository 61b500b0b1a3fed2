"""Numba decorator shared by the compiled hot loops (trace parser, cache simulator)."""

from __future__ import annotations

from numba import njit

#: Decorator of the hot loops' small helper functions (the trace parser's token scans,
#: the cache simulator's lookups, victims, queues, L2 access and streaming-L1 table):
#: each is compiled once on its own, without numba's reference counting (``_nrt=False``:
#: they allocate nothing) and with the ``numpy`` error model (no zero-divisor exception
#: path; the simulator's divisors are validated positive configuration values), and
#: LLVM inlines it at every call site (``forceinline``). Numba's IR-level
#: ``inline="always"``, used before, copied every helper's IR into each call site and
#: typed it again there. Cold compilations, fresh ``NUMBA_CACHE_DIR``, interleaved
#: rounds: the mdm_pascal issue loop 41-53 s -> 30-35 s, the Accel-Sim parser's
#: ``parse_chunk`` 10.5-11.2 s -> 4.0-4.2 s; run times unchanged
#: (docs/measurement-log.md).
inlined = njit(cache=True, _nrt=False, error_model="numpy", forceinline=True)
