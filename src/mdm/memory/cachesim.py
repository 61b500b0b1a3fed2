"""Cache simulator (pipeline step 3): every warp's loads and stores through the L1s and L2.

Model (all choices the papers leave open are listed here):

* **L1**, private per SM, flushed at every kernel (Accel-Sim ``-gpgpu_flush_l1_cache 1``):
  LRU; set index ``linear`` (line mod sets) or ``fermi_hash`` (GPGPU-Sim's 32/64-set
  Fermi hash); sectored or not. Loads allocate on miss (the line is reserved at the
  miss, and a victim is never a line with a fill in flight; if every way of the set
  is reserved the access waits for the first fill), or, with ``l1.allocate_on =
  'fill'`` (streaming L1, paper 004 III-C, :mod:`mdm.memory.streaming`), when the fill
  returns (no reservation, an MSHR entry per in-flight sector), unless
  ``l1.streaming_tags = 'miss'``: the streaming L1's tags are then taken at the miss
  as in an allocate-on-miss L1 (the least recently used way without a fill in flight,
  else the access waits for the first fill), so that lines are replaced in miss
  order, as measured on an H100 (stride32's L1 hits: ncu 4.0 %, 0.7 % this way, 67 %
  with tags at the fill; with a 28 KB L1 kmeans keeps its hits only if lines in flight
  are kept; docs/measurement-log.md). With the adaptive carve-out
  (``l1.unified_bytes``) the L1 ways are set per kernel (:mod:`mdm.memory.carveout`),
  and a streaming L1 allocates on miss for kernels without shared memory (GPGPU-Sim
  ``max_cta``). Stores are write-through: they count
  as L1 write accesses, refresh the LRU position of a line they hit and go to the L2;
  they never take an MSHR. A write-allocate L1 (GPGPU-Sim lazy fetch-on-read ``L``,
  SM7_QV100) is simulated as no-write-allocate: written sectors are not installed in
  the L1 (only reads of data the same kernel wrote, and L1 capacity taken by written
  lines, would differ). Atomics are performed at
  the L2 (L2 write with a read-modify-write, no L1 access). A non-sectored L1 counts
  one access per coalesced request (line), a sectored one one access per sector.
* **MSHRs** (paper 001 section III-D; Accel-Sim ``HIT_RESERVED``): a read to a line
  (sector, if sectored) whose fill is still in flight merges into its MSHR entry -- a
  *pending hit* -- while the entry holds fewer than ``l1.mshr_max_merge`` requests,
  the miss itself included (GPGPU-Sim's ``mshr_table::full``: ``m_list.size() >=
  m_max_merged``, the list starting with the miss), i.e. at most ``mshr_max_merge - 1``
  pending hits per entry (same rule in the L2); when the entry is full the request
  waits for the fill and is then a hit. In the L2 such a read also blocks its bank
  until the fill (GPGPU-Sim keeps the failed request at the head of the
  sub-partition's input queue): the bank's port serves nothing else before then
  (``l2_merge_stalls`` events; ``l2_blocked_cycles``, the bank-cycles from the
  blocked read's L2 access to the fill, summed over banks). Each L2 bank has
  ``l2.mshr_per_bank`` entries, one per line in flight from DRAM (the sectors of a
  line share one, GPGPU-Sim's ``A`` MSHRs); a miss that finds them all in flight
  waits for the oldest one's fill and blocks its bank the same way
  (``MSHR_ENRTY_FAIL``: ``l2_mshr_stalls``, ``l2_mshr_blocked_cycles``). Since
  2026-11-26; before, the field was read and ignored. Over the 83 reference runs the
  simulation blocks in the same runs as Accel-Sim in 68 (stride32 on mdm_pascal 3,719
  bank-cycles per bank against Accel-Sim's 3,665; elsewhere 1-4x fewer), and the miss
  rates did not move (docs/measurement-log.md).
* **Timing** (core cycles; decides hit vs pending hit vs miss): the simulation is
  driven by :func:`mdm.memory.schedule.run_timed`, which issues every warp's
  instructions per SM by the configuration's ``sm.scheduler_policy`` (GTO: per warp
  scheduler its greedy, else its oldest ready warp, the ``sm.schedulers`` schedulers
  taking turns at every LD/ST instruction; LRR: one instruction, round robin over the
  warp slots) and simulates each memory instruction when it issues; a
  warp that reads a loaded register waits until ALL requests of that load completed.
  Per SM, the L1 takes ``l1.banks`` accesses per cycle and is blocking (a miss without
  a free MSHR entry, with every way of its set reserved, or a read whose MSHR entry
  has ``mshr_max_merge`` merges waits, and every later access of the SM with it); an
  MSHR entry frees when its fill returns. Every request the L1 sends to the L2 (a read
  miss; a store, one per sector written when sectored; an atomic) leaves through the
  SM's miss queue, one per cycle (GPGPU-Sim ``baseline_cache::cycle``), and a request
  that finds its ``l1.miss_queue_entries`` entries taken holds the L1 until one leaves
  (``MISS_QUEUE_FULL``; ``l1_miss_queue_wait_cycles`` sums those waits over the SMs).
  The other waits of the blocking L1 are summed by cause the same way, as Accel-Sim
  counts its reservation fails: ``l1_mshr_wait_cycles`` (no free MSHR entry,
  ``MSHR_ENRTY_FAIL``), ``l1_merge_wait_cycles`` (merge slots full,
  ``MSHR_MERGE_ENRTY_FAIL``) and ``l1_alloc_wait_cycles`` (every way of the set
  reserved, ``LINE_ALLOC_FAIL``): the cycles from the access's turn at the port to its
  going ahead. A streaming L1 never fails a line allocation.
  A miss queues at its L2 bank's port (FIFO in simulation order): the port serves one
  miss per :func:`_l2_port_cycles` (a reply of a line, or sector when sectored, at
  ``noc.sm_port_gbps``, one packet per interconnect cycle per port; with
  ``noc.fifo_crossbar`` slowed by the head-of-line efficiency
  ``fifo_crossbar_packets_per_cycle(active SMs, banks) / min(active SMs, banks)``; no
  limit without ``sm_port_gbps``), and the L2 access happens at ``max(t, bank free)``;
  the port state persists across the kernels of an app. An L2 miss then queues at its
  DRAM channel (``dram.bandwidth_gbps / dram.channels`` per channel, L2 bank ``b`` ->
  channel ``b * channels // banks``). The reply takes a slot of the SM's share
  ``GPUConfig.noc_gbps(active SMs) / active SMs`` (NoC bandwidth, SM port, FIFO-crossbar
  head-of-line blocking; a line, or a sector when the L1 is sectored, per reply), given
  in request order, and the miss completes ``L2 hit latency`` (paper 001 eq. 4,
  ``L_MinLLC``) after the later of that slot and the L2's data (``dram latency``,
  ``L_MinDRAM``, after the DRAM transfer starts for an L2 miss). The reply share delays
  the data only: until 2026-11-25 it also delayed the L2 access, so a burst of one SM's
  misses reached the L2 spread over its reply queue, and reads of a line from many SMs
  (gemm_tiled's shared tiles) overflowed the line's L2 MSHR merge slots late in its
  flight (L2 merge-limit blocking 49 cycles per bank against Accel-Sim's 902 on
  SM7_QV100, now 624; docs/measurement-log.md). Uncontended, a load completes
  ``l1.hit_latency_cycles`` (+ L2 hit latency (+ DRAM latency)) after issue. With the
  L1 off (``l1.enabled = false``) a load's requests take the same bank port and reply
  slot (before 2026-11-25 they took neither, so a disabled L1 ignored the NoC). A
  store's or an atomic's requests take a miss-queue slot and a slot of their bank's port
  (the bank's input serves reads and writes alike; since 2026-11-25), and an atomic
  with a destination register returns its data in a reply slot, which its warp waits
  for as for a load's (before, atomics took a miss-queue slot only and no warp waited
  for them). Not modelled: the request-direction NoC bandwidth of store data, the
  finite queues between the L1s, the L2 and DRAM (a full L2 bank holds later requests
  to it, but never the SMs' miss queues), DRAM read/write turnarounds, and row-buffer
  effects other than ``dram.activate_ns``'s activation rate (:func:`_core.dram_queue`).
* **L2**, shared, ``l2.banks`` banks (memory sub-partitions), bank and set from
  :func:`mdm.memory.hashing.l2_bank_and_set`: ``consecutive`` banks (one per channel:
  ``(addr // bank_interleave_bytes) mod banks``), or GPGPU-Sim's ``ipoly``,
  ``bitwise_xor`` or ``random`` partition index; the set index is ``linear``, ``ipoly``
  or ``xor`` on the partition-local address with the bank bits removed,
  e.g. ``((addr // il // banks) * il + addr % il) // line mod sets_per_bank`` (the
  mapping of ``mdm_pascal``: channel = (addr >> 8) mod 24). LRU, write-back,
  write-allocate: a non-sectored L2 fetches a partially written line from DRAM first
  (fetch-on-write), a sectored one marks the sector partial and fetches it at the
  first read (lazy fetch-on-read); dirty victims are written to DRAM (dirty sectors,
  or the whole line when not sectored). The L2 persists across the kernels of an app
  and is not flushed at the end. L2 misses to a line in flight are L2 pending hits
  (``l2_pending_hits``), not misses; the MSHRs are above. With ``l2.fill_on_memcpy``
  (Accel-Sim ``-gpgpu_perf_sim_memcpy 1``, its default) the host-to-device copies listed
  before a kernel fill the L2 with the copied sectors, valid and clean
  (:mod:`mdm.memory.memcpy`); without it (the schema's default) they leave it as it is.
* **DRAM** bytes: a non-sectored L2 moves whole lines, a sectored one sectors.

Not supported (a :class:`~mdm.errors.ConfigError` says so): a write-back L1, L1 and L2
with different line or sector sizes, bank index functions other than ``consecutive``
and ``ipoly``, IPOLY with other than 16, 32 or 64 banks or sets.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mdm._jit import njit
from mdm.config.gpu import GPUConfig, fifo_crossbar_packets_per_cycle
from mdm.errors import ConfigError
from mdm.memory import _core, streaming
from mdm.memory.carveout import (
    kernel_allocates_on_fill,
    kernel_l1_ways,
    l1_may_allocate_on_fill,
)
from mdm.memory.coalesce import (
    GLOBAL_CLASS,
    CoalescedRequests,
    coalesce,
    memory_kinds,
    sector_mask_dtype,
)
from mdm.memory.hashing import check_l2_mapping, l2_bank_and_set
from mdm.memory.memcpy import copy_to_l2
from mdm.memory.schedule import (
    TimedLayout,
    kernel_segments,
    resident_blocks,
    run_timed,
    timed_layout,
)
from mdm.memory.stats import (
    L1_WAIT_FIELDS,
    CacheSimResult,
    KernelCacheStats,
    PCStats,
    WarpMemTrace,
)
from mdm.traces.model import AnyApp, AppTrace, InstrClass, KernelTrace, Memcpy

_COUNTER_FIELDS = {
    _core.C_L1_RD: "l1_read_accesses",
    _core.C_L1_RD_HIT: "l1_read_hits",
    _core.C_L1_RD_PEND: "l1_read_pending_hits",
    _core.C_L1_RD_MISS: "l1_read_misses",
    _core.C_L1_WR: "l1_write_accesses",
    _core.C_L2: "l2_accesses",
    _core.C_L2_MISS: "l2_misses",
    _core.C_L2_RD: "l2_read_accesses",
    _core.C_L2_RD_MISS: "l2_read_misses",
    _core.C_DRAM_RD: "dram_read_bytes",
    _core.C_DRAM_WR: "dram_write_bytes",
    _core.C_L2_PEND: "l2_pending_hits",
    _core.C_L2_MERGE_STALLS: "l2_merge_stalls",
    _core.C_L2_BLOCKED: "l2_blocked_cycles",
    _core.C_L2_MSHR_STALLS: "l2_mshr_stalls",
    _core.C_L2_MSHR_BLOCKED: "l2_mshr_blocked_cycles",
    _core.C_L2_MSHR_ALLOC: "l2_mshr_allocations",
}


#: The configuration fields that set only the timing of the cache simulation (clocks,
#: latencies, bandwidths), as dotted names: :func:`cache_key` with ``timing=False`` leaves
#: them out and :func:`with_timing_of` copies them from another configuration.
TIMING_FIELDS = (
    "core_clock_mhz",
    "l1.hit_latency_cycles",
    "l2.hit_latency_ns",
    "dram.latency_ns",
    "noc.bandwidth_gbps",
    "noc.sm_port_gbps",
    "dram.bandwidth_gbps",
)


def config_field(gpu: GPUConfig, dotted: str) -> Any:
    """Value of a dotted configuration field (``l1.mshr_entries``)."""
    node: Any = gpu
    for part in dotted.split("."):
        node = getattr(node, part)
    return node


def with_timing_of(gpu: GPUConfig, base: GPUConfig) -> GPUConfig:
    """``gpu`` with ``base``'s :data:`TIMING_FIELDS`: the configuration on which a sweep
    with ``cache_timing = "base"`` simulates a point's caches (:mod:`mdm.explore.spec`).

    Choice, measured: the timed simulation's miss rates hardly depend on these fields
    (the order of accesses it interleaves is robust to its clock: docs/measurement-log.md), so a
    point that differs from another only in timing can reuse its simulation, and the
    models alone account for the bandwidths, clocks and latencies, as in paper 001's
    pipeline, whose cache simulation is per cache configuration. The simulated wait
    counters (``l2_blocked_cycles``, ``l1_miss_queue_wait_cycles``) then come from the
    base's timing too.
    """
    return gpu.with_updates({f: config_field(base, f) for f in TIMING_FIELDS})


def cache_key(gpu: GPUConfig, timing: bool = True) -> tuple:
    """Exactly the configuration fields the cache simulation depends on.

    Two configurations with the same key give identical :class:`CacheSimResult` counts.
    The simulation is timed (hit vs pending hit vs miss depends on when fills return),
    so the key holds everything that sets those times: the core clock, the L1 pipeline
    latency and banks, the memory latencies, the NoC bandwidths (per-SM reply share,
    L2 port rate: ``noc.sm_port_gbps``, ``noc.fifo_crossbar``) and the DRAM bandwidth
    and channels (queueing), and the warp scheduler's policy and LD/ST queue (issue
    order); a sweep over DRAM or NoC bandwidth therefore needs one simulation per point.
    ``dram.atom_bytes`` is not included (results are in bytes).
    """
    sm, l1, l2 = gpu.sm, gpu.l1, gpu.l2

    def t(dotted: str) -> Any:  # a timing field, or its placeholder
        return config_field(gpu, dotted) if timing else None

    return (
        gpu.n_sm,
        t("core_clock_mhz"),
        sm.max_threads,
        sm.max_warps,
        sm.max_blocks,
        sm.registers,
        sm.shared_mem_bytes,
        sm.schedulers,
        sm.scheduler_policy,
        ldst_queue_entries(gpu),
        sm.register_alloc_granularity,
        sm.shared_mem_alloc_granularity,
        l1.enabled,
        l1.size_bytes,
        l1.ways,
        l1.line_bytes,
        l1.sector_bytes,
        l1.sectored,
        l1.mshr_entries,
        l1.mshr_max_merge,
        l1.miss_queue_entries,
        l1.write_policy,
        l1.write_allocate,
        l1.allocate_on,
        l1.streaming_tags,
        l1.set_index,
        l1.coalescer,
        l1.unified_bytes,
        l1.shared_carveouts_bytes,
        l2.bank_index,
        gpu.dram.channels,
        l2.size_bytes,
        l2.banks,
        l2.ways,
        l2.line_bytes,
        l2.sector_bytes,
        l2.sectored,
        l2.mshr_per_bank,
        l2.mshr_max_merge,
        l2.write_policy,
        l2.write_allocate,
        l2.set_index,
        l2.bank_interleave_bytes,
        l2.sub_partition_bits,
        l2.fetch_bytes,
        l2.fill_on_memcpy,
        t("l2.hit_latency_ns"),
        t("dram.latency_ns"),
        # timing (mdm.memory._core._run_kernel, mdm.memory.schedule.run_timed)
        l1.banks,
        t("l1.hit_latency_cycles"),
        t("noc.bandwidth_gbps"),
        t("noc.sm_port_gbps"),
        gpu.noc.fifo_crossbar,
        t("dram.bandwidth_gbps"),
        t("dram.activate_ns"),
        t("dram.row_bytes"),
        t("dram.banks"),
    )


def ldst_queue_entries(gpu: GPUConfig) -> int:
    """Memory instructions that may wait for an SM's LD/ST unit at once
    (:func:`mdm.memory.schedule.run_timed`): ``sm.ldst_queue_entries``, by default
    ``max_warps / schedulers`` (GPGPU-Sim's ID_OC_MEM 4 + 8 operand collectors +
    OC_EX_MEM 4 = 16 on both reference configurations)."""
    q = gpu.sm.ldst_queue_entries
    return q if q is not None else max(1, gpu.sm.max_warps // gpu.sm.schedulers)


def _sm_reply_bytes_per_cycle(gpu: GPUConfig, n_active: int) -> float:
    """An SM's share of the L2-to-SM bandwidth, bytes per core cycle.

    ``GPUConfig.noc_gbps(active SMs) / active SMs / core GHz``: the NoC bandwidth,
    at most one ejection port per SM, and the head-of-line-blocking limit of a FIFO
    crossbar (``noc.fifo_crossbar``), the same bandwidth the models use."""
    return gpu.noc_gbps(n_active) / n_active / gpu.core_clock_ghz


def _l2_port_cycles(gpu: GPUConfig, n_active: int) -> float:
    """Core cycles an L2 bank's port is busy per L1 miss it serves (0: not modelled).

    One packet per interconnect cycle per L2 port, a port moving ``noc.sm_port_gbps``
    of data, so a miss's reply (a line, or a sector when the L1 is sectored) occupies
    its bank's port ``reply bytes / sm_port`` (the request packet, one flit, is never
    longer than its reply). With ``noc.fifo_crossbar`` the port's rate is scaled by the
    head-of-line efficiency ``fifo_crossbar_packets_per_cycle(active SMs, banks) /
    min(active SMs, banks)`` (0.65 for 80 SMs x 64 ports). Without ``sm_port_gbps``
    there is no port limit."""
    port = gpu.noc.sm_port_gbps
    if port is None:
        return 0.0
    rate = port
    if gpu.noc.fifo_crossbar:
        banks = gpu.l2.banks
        rate *= fifo_crossbar_packets_per_cycle(n_active, banks) / min(n_active, banks)
    return gpu.l1.request_bytes / (rate / gpu.core_clock_ghz)


def _pending_table(gpu: GPUConfig, on_fill: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-SM table of in-flight fills of a streaming L1 (:mod:`mdm.memory.streaming`);
    zero entries (allocate-on-miss) switch streaming off."""
    return streaming.new_table(gpu.n_sm, gpu.l1.mshr_entries if on_fill else 0)


def check_supported(gpu: GPUConfig) -> None:
    """ConfigError listing what of ``gpu`` the cache simulator cannot run (its L2 address
    mapping, L1 write policy, set hash, sector counts), naming the fields."""
    l1, l2 = gpu.l1, gpu.l2
    problems = []
    problems.extend(check_l2_mapping(gpu))
    if l1.write_policy != "write_through":
        problems.append("l1.write_policy: only a write-through L1 is implemented")
    if l1.line_bytes != l2.line_bytes or l1.sector_bytes != l2.sector_bytes:
        problems.append("L1 and L2 must have the same line_bytes and sector_bytes")
    if l1.set_index == "fermi_hash" and l1.sets not in (32, 64):
        problems.append(f"l1.set_index='fermi_hash' needs 32 or 64 sets, not {l1.sets}")
    if l1.line_bytes // l1.sector_bytes > 32 or l1.sector_bytes > 64:
        problems.append("at most 32 sectors of at most 64 B per line")
    if problems:
        raise ConfigError(None, f"cache simulator, config {gpu.name!r}: " + "; ".join(problems))


@dataclass
class _KernelInputs:
    """Per-kernel inputs that no timing field changes: global memory instructions,
    coalesced requests, their L2 bank and set, kinds, the LD/ST-unit map and the PC
    grouping of the per-PC statistics."""

    inst: np.ndarray
    reqs: CoalescedRequests
    bank: np.ndarray
    l2set: np.ndarray
    kinds: np.ndarray
    # the LD/ST-unit instructions: their positions in the kernel (ascending) and, for
    # each, -2 (shared memory or constant) or the position of the global memory
    # instruction in ``inst`` (in the stored order, see ``perm``)
    ldst_pos: np.ndarray
    ldst_mem: np.ndarray
    upc: np.ndarray
    pc_idx: np.ndarray
    executions: np.ndarray
    segments: tuple[np.ndarray, np.ndarray, np.ndarray]  # schedule.kernel_segments
    # Memory locality: ``kinds``, ``reqs`` (all but ``inst``), ``bank``, ``l2set`` and the
    # positions in ``ldst_mem`` may be stored with the memory instructions renumbered:
    # position ``i`` holds instruction ``perm[i]`` of ``inst`` (None: kernel order). The
    # second simulation of a layout ``perm_key`` = (n_sm, blocks per SM) stores them in
    # the issue order ``observed`` in the first (:func:`_reorder`): in kernel order the
    # interleaved SMs jump between n_sm regions of these arrays (cache misses; spmv_csr
    # with 80 SMs took twice the time per access of 8 SMs). Results never depend on it.
    perm: np.ndarray | None = None
    perm_key: tuple | None = None
    perm_observed: bool = False  # arrays in the observed order of layout perm_key
    observed: np.ndarray | None = None  # issue order of the last simulation of perm_key
    # Reused per layout (sweep points after the first): the timed layout of perm_key,
    # and, in the stored order, the load flag and PC index of every memory instruction.
    # Reset when the layout or the stored order changes.
    layout: TimedLayout | None = None
    is_load: np.ndarray | None = None
    pc_pos: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        arrays = [*vars(self).values(), *vars(self.reqs).values(), *self.segments]
        return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


# Reuse across the configurations of a sweep (same trace in one process): kernel ->
# {input key: _KernelInputs}, weakly keyed so that a dropped trace frees its entries,
# and bounded in bytes (least recently used entries dropped first).
_INPUTS: weakref.WeakKeyDictionary[KernelTrace, dict[tuple, _KernelInputs]] = (
    weakref.WeakKeyDictionary()
)
_INPUTS_LRU: OrderedDict[tuple[int, tuple], tuple[weakref.ref, int]] = OrderedDict()
INPUT_CACHE_BYTES = 512 * 2**20


_LOCK = threading.RLock()


def _serialised(fn: Callable) -> Callable:
    """Run ``fn`` under the module lock: the per-kernel input cache and the per-layout
    state in :class:`_KernelInputs` are shared and updated in place, so two threads of
    one process (e.g. a multi-threaded dask worker) must not simulate at the same time.
    This costs no parallelism: the numba code holds the GIL (no ``nogil``)."""

    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with _LOCK:
            return fn(*args, **kwargs)

    return locked


@_serialised
def clear_input_cache() -> None:
    """Forget the per-kernel inputs reused across configurations (benchmarks: cold runs)."""
    _INPUTS.clear()
    _INPUTS_LRU.clear()


def _input_key(gpu: GPUConfig) -> tuple:
    """The configuration fields :func:`_kernel_inputs` depends on."""
    l1, l2 = gpu.l1, gpu.l2
    return (
        l1.line_bytes,
        l1.sector_bytes,
        l1.coalescer,
        l2.line_bytes,
        l2.banks,
        l2.sets_per_bank,
        l2.bank_interleave_bytes,
        l2.bank_index,
        l2.set_index,
        l2.sub_partition_bits,
        gpu.dram.channels,
    )


#: Per instruction class: uses the LD/ST unit without going through L1/L2 (shared
#: memory, constant and texture); the global memory instructions are added per kernel.
_LDST_ONLY = np.zeros(256, np.bool_)
_LDST_ONLY[[InstrClass.LD_SHARED, InstrClass.ST_SHARED, InstrClass.TEX_CONST]] = True


@njit(cache=True)
def _count_ldst(iclass: np.ndarray, is_global: np.ndarray, ldst_only: np.ndarray) -> tuple:
    """(LD/ST-unit instructions, global memory ones among them) of a kernel."""
    n_ldst = 0
    n_glob = 0
    for i in range(iclass.shape[0]):
        c = iclass[i]
        n_glob += is_global[c]
        n_ldst += is_global[c] | ldst_only[c]
    return n_ldst, n_glob


@njit(cache=True)
def _fill_ldst(
    iclass: np.ndarray,
    is_global: np.ndarray,
    ldst_only: np.ndarray,
    inst: np.ndarray,
    both: np.ndarray,
) -> None:
    """Fill ``inst`` (the global memory instructions) and ``both`` (per LD/ST-unit
    instruction: its position, and its index in ``inst`` or -2), in one pass."""
    m = 0
    j = 0
    for i in range(iclass.shape[0]):
        c = iclass[i]
        if is_global[c]:
            inst[m] = i
            both[j, 0] = i
            both[j, 1] = m
            m += 1
            j += 1
        elif ldst_only[c]:
            both[j, 0] = i
            both[j, 1] = -2
            j += 1


def _ldst_lists(iclass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(inst, both)`` of a kernel's instruction classes ``iclass``: the global memory
    instructions (as :func:`mdm.memory.coalesce.global_memory_instructions`) and the
    LD/ST-unit lists as the two columns of one array (see :class:`_KernelInputs`), in
    two compiled passes over the classes (three NumPy passes, a search and a scatter
    took 47 ms for 6.2 M warp instructions, these 8 ms)."""
    iclass = np.ascontiguousarray(iclass, dtype=np.uint8)
    n_ldst, n_glob = _count_ldst(iclass, GLOBAL_CLASS, _LDST_ONLY)
    inst = np.empty(n_glob, np.int64)
    both = np.empty((n_ldst, 2), np.int64)
    _fill_ldst(iclass, GLOBAL_CLASS, _LDST_ONLY, inst, both)
    return inst, both


def _kernel_inputs(kernel: KernelTrace, gpu: GPUConfig) -> _KernelInputs:
    """:class:`_KernelInputs` of ``kernel`` under ``gpu``, computed once per input key
    (trace loading, coalescing and address mapping are not paid again per sweep point)."""
    key = _input_key(gpu)
    per = _INPUTS.get(kernel)
    if per is not None and key in per:
        _INPUTS_LRU.move_to_end((id(kernel), key))
        return per[key]
    l1c = gpu.l1
    # the two LD/ST-unit lists as the columns of one array: the issue loop reads both at
    # a warp's cursor, so they share a cache line (views; every warp's cursor is a cold
    # read)
    inst, both = _ldst_lists(kernel.iclass)
    ldst_pos, ldst_mem = both[:, 0], both[:, 1]
    kinds = memory_kinds(kernel, inst)
    # narrow request arrays (the coalescer's masks of 4 sectors in a byte; the L2 mapping
    # gives bank and set in 16 bits where they fit): 24 -> 16 bytes per request held in
    # the input cache and read per simulation
    reqs = coalesce(kernel, l1c.line_bytes, l1c.sector_bytes, l1c.coalescer, inst, kinds != 0)
    bank, l2set = l2_bank_and_set(reqs.req_line, gpu)
    upc, idx = np.unique(kernel.pc[inst], return_inverse=True)
    out = _KernelInputs(
        inst=inst,
        reqs=reqs,
        bank=bank,
        l2set=l2set,
        kinds=kinds,
        ldst_pos=ldst_pos,
        ldst_mem=ldst_mem,
        upc=upc,
        pc_idx=idx,
        executions=np.bincount(idx, minlength=upc.shape[0]).astype(np.int64),
        segments=kernel_segments(kernel),
    )
    size = out.nbytes
    if size <= INPUT_CACHE_BYTES:
        _INPUTS.setdefault(kernel, {})[key] = out
        _INPUTS_LRU[(id(kernel), key)] = (weakref.ref(kernel), size)
        total = sum(v[1] for v in _INPUTS_LRU.values())
        while total > INPUT_CACHE_BYTES:
            (_, k_old), (ref, n) = _INPUTS_LRU.popitem(last=False)
            kern = ref()
            if kern is not None and kern in _INPUTS:
                _INPUTS[kern].pop(k_old, None)
            total -= n
    return out


def _merge_dtype(max_merge: int) -> type[np.signedinteger]:
    """dtype of an MSHR merge-count array: a count never exceeds ``max(max_merge, 1)``
    (:func:`mdm.memory._core.l2_access`), so int8 below 127 (a smaller cache
    footprint per simulation), else int32."""
    return np.int8 if max_merge < 127 else np.int32


def _dram_row_lines(gpu: GPUConfig) -> int:
    """L2 lines per DRAM row in the global address space: a channel's ``row_bytes`` are
    spread over all channels by the ``bank_interleave_bytes`` interleave, so a row spans
    ``row_bytes x channels`` bytes of addresses (at least one line)."""
    return max(gpu.dram.row_bytes * gpu.dram.channels // gpu.l2.line_bytes, 1)


class _L2State:
    """L2 arrays persisting across the kernels of an app."""

    def __init__(self, gpu: GPUConfig) -> None:
        l2 = gpu.l2
        ns = l2.line_bytes // l2.sector_bytes if l2.sectored else 1
        shape = (l2.banks, l2.sets_per_bank, l2.ways)
        self.tags = np.full(shape, -1, np.int64)
        self.lru = np.zeros(shape, np.int32)  # stamps: _core.STAMP_LIMIT
        mask = sector_mask_dtype(l2.line_bytes // l2.sector_bytes)
        self.valid = np.zeros(shape, mask)
        self.dirty = np.zeros(shape, mask)
        self.partial = np.zeros(shape, mask)
        self.fill = np.full((*shape, ns), -np.inf)
        self.merges = np.zeros((*shape, ns), _merge_dtype(l2.mshr_max_merge))
        # the LRU counter, then the scratch of _core.renumber_stamps (a set's ways)
        self.stamp = np.zeros(1 + max(l2.ways, gpu.l1.ways), np.int64)
        self.time = 0.0
        self.dram_free = np.zeros(gpu.dram.channels, np.float64)  # per channel, core cycles
        # open row per (channel, bank) for the row model; no columns when it is off
        nb = gpu.dram.banks if gpu.dram.activate_ns > 0 else 0
        self.dram_rows = np.full((gpu.dram.channels, nb), -1, np.int64)
        self.bank_free = np.zeros(l2.banks, np.float64)  # per L2 bank port, core cycles
        # fill times of each bank's MSHR entries, oldest at mshr_head (_core.l2_access)
        self.mshr_ring = np.full((l2.banks, l2.mshr_per_bank), -np.inf)
        self.mshr_head = np.zeros(l2.banks, np.int64)
        # memory instructions of the last kernel in simulation order, and their SMs
        self.last_order = np.zeros(0, np.int64)
        self.last_sm = np.zeros(0, np.int32)


def _reorder(ki: _KernelInputs, rel: np.ndarray) -> None:
    """Renumber ``ki``'s memory instructions: new position ``i`` takes the instruction
    now at position ``rel[i]`` (per-instruction and per-request arrays gathered)."""
    m = rel.shape[0]
    r = ki.reqs
    req_ptr, line, mask, full, bank, l2set = _core.gather_requests(
        rel, r.req_ptr, r.req_line, r.req_mask, r.req_full, ki.bank, ki.l2set
    )
    ki.reqs = CoalescedRequests(
        inst=r.inst, req_ptr=req_ptr, req_line=line, req_mask=mask, req_full=full
    )
    ki.bank = bank
    ki.l2set = l2set
    ki.kinds = ki.kinds[rel]
    ki.perm = rel if ki.perm is None else ki.perm[rel]
    ki.is_load = ki.pc_pos = None
    pos = np.empty(m, np.int64)
    pos[ki.perm] = np.arange(m)
    ki.ldst_mem[ki.ldst_mem >= 0] = pos  # the global ones, in kernel order as ``inst``


@_serialised
def simulate_kernel(
    kernel: KernelTrace,
    gpu: GPUConfig,
    l2: _L2State | None = None,
    track_warps: Sequence[int] | None = None,
    blocks_per_sm: int | None = None,
) -> KernelCacheStats:
    """Simulate one kernel (fresh L1s; ``l2`` carries the L2 state of earlier kernels)."""
    check_supported(gpu)
    if l2 is None:
        l2 = _L2State(gpu)
    l1c = gpu.l1
    spl = l1c.line_bytes // l1c.sector_bytes
    ki = _kernel_inputs(kernel, gpu)
    inst, reqs, kinds = ki.inst, ki.reqs, ki.kinds
    bps = blocks_per_sm if blocks_per_sm is not None else resident_blocks(kernel, gpu)
    key = (gpu.n_sm, bps)
    if ki.perm_key != key:  # another layout: any stored order is valid, none observed
        ki.perm_key, ki.observed, ki.perm_observed = key, None, False
        ki.layout = None
    elif ki.observed is not None:  # second simulation of this layout: its issue order
        _reorder(ki, ki.observed)
        ki.observed = None
        ki.perm_observed = True
    if ki.layout is None:
        ki.layout = timed_layout(kernel, gpu.n_sm, bps, ki.segments)
    lay = ki.layout
    kinds, reqs = ki.kinds, ki.reqs
    perm = ki.perm if ki.perm is not None else np.arange(inst.shape[0])
    if ki.is_load is None:  # the warp waits for loads and for atomics that return a value
        ki.is_load = kinds == 0
        atom = kinds == 2
        if atom.any():
            ki.is_load |= atom & (kernel.dst[inst[perm]] >= 0).any(axis=1)
    i_sm = np.zeros(inst.shape[0], np.int32)  # set by run_timed
    i_time = np.zeros(inst.shape[0], np.float64)
    i_done = np.zeros(inst.shape[0], np.float64)
    l1_port = np.zeros(gpu.n_sm, np.float64)  # next free L1 access slot per SM
    ns1 = spl if l1c.sectored else 1
    shape = (gpu.n_sm, l1c.sets, kernel_l1_ways(kernel, gpu, bps))  # adaptive carve-out
    if l2.stamp.shape[0] < 1 + shape[2]:  # the renumbering's scratch: the widest set
        l2.stamp = np.concatenate([l2.stamp, np.zeros(shape[2], np.int64)])
    cnt = np.zeros(_core.N_COUNTERS, np.int64)
    per_inst = np.zeros((inst.shape[0], _core.N_INST), np.int32)
    mq_wait = np.zeros(_core.N_WAITS, np.float64)  # the L1's waits by cause
    on_fill = kernel_allocates_on_fill(kernel, gpu, bps)
    cargs = (
        kinds,
        reqs.req_ptr,
        reqs.req_line,
        reqs.req_mask,
        reqs.req_full,
        ki.bank,
        ki.l2set,
        *_pending_table(gpu, on_fill),
        spl,
        int(l1c.line_bytes).bit_length() - 1,
        l1c.enabled,
        l1c.set_index == "fermi_hash",
        l1c.mshr_max_merge,
        np.full(shape, -1, np.int64),
        np.zeros(shape, np.int32),  # LRU stamps (_core.STAMP_LIMIT)
        np.zeros(shape, sector_mask_dtype(spl)),
        np.full((*shape, ns1), -np.inf),
        np.zeros((*shape, ns1), _merge_dtype(l1c.mshr_max_merge)),
        _core.new_way_index(*shape),  # O(1) lookups and victims in wide sets
        *_core.new_victim_heaps(*shape, on=not on_fill),  # victims of reserved wide sets
        np.full((gpu.n_sm, l1c.mshr_entries), -np.inf),
        np.zeros(gpu.n_sm, np.int64),
        gpu.l2.banks,
        gpu.l2.bank_interleave_bytes,
        gpu.l2.mshr_max_merge,
        gpu.l2.write_policy == "write_back",
        gpu.l2.write_allocate,
        gpu.l2.sector_bytes,
        l2.tags,
        l2.lru,
        l2.valid,
        l2.dirty,
        l2.partial,
        l2.fill,
        l2.merges,
        l2.stamp,
        gpu.l2_hit_latency_cycles,
        gpu.dram_latency_cycles,
        cnt,
        per_inst,
        l1_port,
        1.0 / l1c.banks,
        np.zeros(gpu.n_sm, np.float64),  # NoC reply share free time
        l1c.request_bytes / _sm_reply_bytes_per_cycle(gpu, max(lay.n_active_sms, 1)),
        l2.dram_free,
        np.arange(gpu.l2.banks, dtype=np.int64) * gpu.dram.channels // gpu.l2.banks,
        gpu.dram_bytes_per_cycle / gpu.dram.channels,
        np.int64(gpu.l2_fetch_sectors),
        l2.dram_rows,
        np.int64(_dram_row_lines(gpu)),
        gpu.dram_activate_cycles,
        float(l1c.hit_latency_cycles),
        i_done,
        l2.bank_free,
        _l2_port_cycles(gpu, max(lay.n_active_sms, 1)),
        np.full((gpu.n_sm, l1c.miss_queue_entries), -np.inf),  # miss-queue departures
        np.zeros(gpu.n_sm, np.int64),
        mq_wait,
        l2.mshr_ring,
        l2.mshr_head,
    )
    proc = np.zeros(inst.shape[0], np.int64)
    t_start = l2.time
    l1_sectored, l2_sectored, may_fill = issue_loop_key(gpu)
    _await_compilation((l1_sectored, l2_sectored, may_fill))
    end = run_timed(
        lay.order,
        lay.blk_ptr,
        lay.wblk,
        bps,
        lay.wseg_ptr,
        lay.seg_first,
        lay.seg_bar,
        ki.ldst_pos,
        ki.ldst_mem,
        ki.is_load,
        gpu.n_sm,
        1.0 / gpu.sm.schedulers,
        ldst_queue_entries(gpu),
        l2.time,
        i_sm,
        i_time,
        i_done,
        proc,
        l1_port,
        cargs,
        gpu.sm.scheduler_policy == "lrr",
        gpu.sm.schedulers,
        l1_sectored=l1_sectored,
        l2_sectored=l2_sectored,
        may_fill=may_fill,
    )
    l2.last_order = inst[perm[proc]]
    l2.last_sm = i_sm[proc]
    if not ki.perm_observed and _is_permutation(proc):
        ki.observed = proc  # applied if this layout is simulated again (a sweep)
    # the next kernel starts after this one's last fill could have returned
    l2.time = max(end, l2.time) + gpu.l2_hit_latency_cycles + gpu.dram_latency_cycles
    stats = KernelCacheStats(kernel_id=kernel.kernel_id, name=kernel.name)
    for slot, name in _COUNTER_FIELDS.items():
        setattr(stats, name, int(cnt[slot]))
    for name, cycles in zip(L1_WAIT_FIELDS, mq_wait, strict=True):
        setattr(stats, name, int(round(cycles)))
    stats.timeline_cycles = int(round(max(end - t_start, 0.0)))
    stats.per_pc = _per_pc(ki, perm, per_inst)
    if track_warps:
        per_inst_k = np.empty_like(per_inst)  # kernel order
        per_inst_k[perm] = per_inst
        for w in track_warps:
            stats.warps[int(w)] = _warp_trace(kernel, int(w), inst, per_inst_k)
    return stats


def _is_permutation(a: np.ndarray) -> bool:
    """``a`` holds each of ``0 .. len(a) - 1`` once (a marker array: O(n), where
    sorting a sweep's 0.4 M memory instructions took 20 ms)."""
    seen = np.zeros(a.shape[0], np.bool_)
    seen[a] = True
    return bool(seen.all())


def _per_pc(ki: _KernelInputs, perm: np.ndarray, per_inst: np.ndarray) -> PCStats:
    """Per-PC sums of ``per_inst`` (rows in the stored order ``perm``), in one numba
    pass (:func:`mdm.memory._core.pc_sums`; the PC index of every stored row is kept in
    ``ki`` per stored order)."""
    upc = ki.upc
    if ki.pc_pos is None:
        ki.pc_pos = np.ascontiguousarray(ki.pc_idx[perm], dtype=np.int64)
    sums = _core.pc_sums(per_inst, ki.pc_pos, upc.shape[0])
    return PCStats(
        pc=upc.astype(np.uint32),
        executions=ki.executions.copy(),
        l1_accesses=sums[:, _core.I_L1_ACC],
        l1_hits=sums[:, _core.I_L1_HIT],
        l1_pending_hits=sums[:, _core.I_L1_PEND],
        l1_misses=sums[:, _core.I_L1_MISS],
        l2_accesses=sums[:, _core.I_L2_ACC],
        l2_misses=sums[:, _core.I_L2_MISS],
        dram_bytes=sums[:, _core.I_DRAM_BYTES],
        dram_act_bytes=sums[:, _core.I_DRAM_ACT],
        l1_wait_cycles=sums[:, _core.I_L1_WAIT],
    )


def _warp_trace(
    kernel: KernelTrace, w: int, inst: np.ndarray, per_inst: np.ndarray
) -> WarpMemTrace:
    if not 0 <= w < kernel.n_warps:
        raise ConfigError(None, f"track_warps: warp {w} out of range 0..{kernel.n_warps - 1}")
    lo, hi = int(kernel.warp_ptr[w]), int(kernel.warp_ptr[w + 1])
    n = hi - lo
    a, b = np.searchsorted(inst, [lo, hi])
    pos = inst[a:b] - lo
    cols = {}
    for name, slot in (
        ("requests", _core.I_L1_ACC),
        ("l1_misses", _core.I_L1_MISS),
        ("l1_pending_hits", _core.I_L1_PEND),
        ("l2_misses", _core.I_L2_MISS),
        ("dram_bytes", _core.I_DRAM_BYTES),
        ("dram_act_bytes", _core.I_DRAM_ACT),
    ):
        arr = np.zeros(n, np.int32)
        arr[pos] = per_inst[a:b, slot]
        cols[name] = arr
    return WarpMemTrace(warp=w, **cols)


class AppSimulator:
    """Simulate an application's kernels one at a time, in launch order.

    The L2 (contents, bank ports, DRAM queues) and the simulated clock carry over from
    one kernel to the next; the L1s start empty for each kernel. Host-to-device copies
    between kernels go to :meth:`copy` (they fill the L2 when ``l2.fill_on_memcpy``).
    :func:`simulate_app` is a loop over the trace's commands; a caller that streams the
    kernels (:class:`~mdm.traces.model.LazyApp`) holds one kernel at a time.
    """

    def __init__(self, gpu: GPUConfig) -> None:
        check_supported(gpu)
        self.gpu = gpu
        self._l2 = _L2State(gpu)

    def simulate(
        self,
        kernel: KernelTrace,
        track_warps: Sequence[int] | None = None,
        blocks_per_sm: int | None = None,
    ) -> KernelCacheStats:
        """The next kernel's statistics (see :func:`simulate_kernel`)."""
        return simulate_kernel(kernel, self.gpu, self._l2, track_warps, blocks_per_sm)

    def copy(self, memcpy: Memcpy) -> int:
        """A host-to-device copy before the next kernel: its sectors fill the L2 when
        ``l2.fill_on_memcpy`` (:mod:`mdm.memory.memcpy`); returns the sector steps
        installed (0 when the option is off)."""
        return copy_to_l2(self._l2, self.gpu, memcpy.addr, memcpy.nbytes)

    def kernels_of(self, app: AnyApp) -> Iterator[KernelTrace]:
        """``app``'s kernels in launch order, each copy listed before a kernel applied
        (:meth:`copy`) before that kernel is handed out; a pass over a
        :class:`~mdm.traces.model.LazyApp` keeps no kernel it has handed out."""
        for cmd in app.iter_commands():
            if isinstance(cmd, Memcpy):
                self.copy(cmd)
            else:
                yield cmd
            del cmd


def simulate_app(
    app: AnyApp,
    gpu: GPUConfig,
    track_warps: dict[int, Sequence[int]] | None = None,
    blocks_per_sm: Sequence[int] | None = None,
) -> CacheSimResult:
    """Simulate every kernel of ``app`` in order; the L2 persists, the L1s are flushed,
    and the host-to-device copies listed between the kernels fill the L2 when
    ``l2.fill_on_memcpy`` (:meth:`AppSimulator.copy`).

    ``track_warps`` maps a kernel index in ``app.kernels`` to warp indices whose
    per-instruction counters are kept. ``blocks_per_sm`` (per kernel) overrides the
    occupancy computed from the configuration. A :class:`~mdm.traces.model.LazyApp` is
    read one kernel at a time.
    """
    sim = AppSimulator(gpu)
    out = []
    ki = 0
    for kernel in sim.kernels_of(app):
        bps = None if blocks_per_sm is None else blocks_per_sm[ki]
        out.append(sim.simulate(kernel, (track_warps or {}).get(ki), bps))
        ki += 1
        del kernel  # not kept alive while the next kernel is read
    return CacheSimResult(config_name=gpu.name, kernels=out)


def issue_loop_key(gpu: GPUConfig) -> tuple[bool, bool, bool]:
    """``(L1 sectored, L2 sectored, L1 may allocate on fill)`` of ``gpu``: the flags
    :func:`simulate_kernel` gives :func:`~mdm.memory.schedule.run_timed`, and the key of
    its compiled entry in ``mdm.memory._core._RUN_TIMED``."""
    return bool(gpu.l1.sectored), bool(gpu.l2.sectored), l1_may_allocate_on_fill(gpu)


def issue_loop_cached(gpu: GPUConfig) -> bool:
    """Whether numba's on-disk cache holds a compiled issue loop for ``gpu``'s L1/L2
    sectoring and L1 fill policy, and the current source (read through numba's cache
    index, a private API: False when it cannot tell). A first simulation without it
    compiles the loop (30-60 s on one core)."""
    try:
        disp = _core._RUN_TIMED[issue_loop_key(gpu)]
        return bool(disp._cache._cache_file._load_index())  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001  (numba internals: any failure means "unknown")
        return False


def prepare_inputs(app: AppTrace, gpu: GPUConfig) -> None:
    """Coalesce and map every kernel of the in-memory ``app`` for ``gpu`` now, into the
    input cache that :func:`simulate_kernel` reads (as far as it holds them,
    :data:`INPUT_CACHE_BYTES`): the coalescer's compiled code runs (and compiles, on a
    cold start) here rather than in the first simulation."""
    for kernel in app.kernels:
        _kernel_inputs(kernel, gpu)


#: issue-loop key (:func:`issue_loop_key`) -> (the starting process's ID, the process
#: compiling that loop: :func:`compile_in_background`), joined by the first simulation
#: that needs it in the process that started it
_COMPILING: dict[tuple[bool, bool, bool], tuple[int, Any]] = {}


def compile_in_background(gpu: GPUConfig) -> bool:
    """Start :func:`compile_issue_loop` for ``gpu`` in another process (spawned) unless
    numba's cache holds that loop already or a process compiles it; return whether one
    runs. This process meanwhile reads, profiles and coalesces (the coalescer's
    compiled variants: about 7 s each on a cold start), and its first simulation with
    that loop waits for the other process, then loads the loop from numba's on-disk
    cache: a cold start's compilation is split between two cores (a cold ``mdm demo``
    46-48 -> 29-31 s, docs/measurement-log.md). Nothing depends on it: if the other
    process fails, the simulation compiles the loop itself. (In a script without an
    ``if __name__ == "__main__":`` guard the spawned process, re-running the script,
    stops here with multiprocessing's ``RuntimeError``, which is left to propagate so
    that it does not go on to run the script.)"""
    import multiprocessing

    key = issue_loop_key(gpu)
    if _COMPILING.get(key, (0, None))[0] == os.getpid():
        return True
    if issue_loop_cached(gpu):
        return False
    proc = multiprocessing.get_context("spawn").Process(
        target=compile_issue_loop, args=(gpu,), daemon=True
    )
    try:
        proc.start()
    except OSError:  # no process to be had: the simulation compiles the loop
        return False
    _COMPILING[key] = (os.getpid(), proc)
    return True


def uncached_issue_loops(gpus: Iterable[GPUConfig]) -> list[GPUConfig]:
    """One of ``gpus`` per issue loop (:func:`issue_loop_key`) that they need and
    numba's on-disk cache lacks, in first-seen order."""
    out: dict[tuple[bool, bool, bool], GPUConfig] = {}
    for gpu in gpus:
        key = issue_loop_key(gpu)
        if key not in out:
            out[key] = gpu
    return [g for g in out.values() if not issue_loop_cached(g)]


def compile_first_in(pool: Any, gpus: Iterable[GPUConfig]) -> list[Any]:
    """Submit :func:`compile_issue_loop` to the process pool ``pool`` (an executor) for
    each loop of :func:`uncached_issue_loops`, before the caller's tasks: one worker
    compiles each loop, where otherwise every worker compiled every loop at its first
    simulation with it (about 26 s each). The futures' failures only mean that the
    tasks compile the loop."""
    return [pool.submit(compile_issue_loop, g) for g in uncached_issue_loops(gpus)]


def _await_compilation(key: tuple[bool, bool, bool]) -> None:
    """Wait for the process compiling the issue loop ``key``, if this process started
    one (a forked worker forgets its parent's)."""
    pid, proc = _COMPILING.pop(key, (0, None))
    if proc is not None and pid == os.getpid():
        proc.join()


def compile_issue_loop(gpu: GPUConfig) -> None:
    """Compile the issue loop for ``gpu``'s L1/L2 layout (:func:`issue_loop_key`) into
    numba's on-disk cache, and nothing else of the costly code: it simulates a kernel
    without global memory instructions (two warps of shared-memory loads: more than one
    LD/ST-unit instruction, so that its lists are typed as a real kernel's strided
    views), which the coalescer returns without running compiled code. A process that
    runs this beside one that coalesces the kernels to simulate splits a cold start's
    compilation between two cores (:func:`compile_in_background`)."""
    from mdm.profile.handmade import kernel_from_warps

    warp = [(InstrClass.LD_SHARED, [1], [0]), (InstrClass.INT, [2], [1])] * 2
    kernel = kernel_from_warps([warp, warp])
    simulate_kernel(kernel, gpu)
