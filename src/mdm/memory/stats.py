"""Results of the cache simulation (pipeline step 3) consumed by the models.

Counting conventions (shared by the simulator, the models and ``mdm validate``):

* An *access* is one request after coalescing: a 128 B line request for a
  non-sectored L1 (coalescer ``warp``), a 32 B sector request for a sectored one.
* L1 *reads* are global loads (and local loads); ``l1_read_pending_hits`` are reads
  merged into an MSHR entry already in flight (Accel-Sim's ``HIT_RESERVED``), they are
  neither hits nor misses. ``l1_read_misses`` are new MSHR allocations.
* L1 *writes* are global stores (write-through, no-allocate in the default L1).
* L2 counters include reads and writes arriving from all L1s.
* ``dram_read_bytes`` / ``dram_write_bytes`` are bytes moved; divide by the
  configuration's ``dram.atom_bytes`` for Accel-Sim's column-command counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mdm.memory.coalesce import global_memory_instructions
from mdm.traces.model import KernelTrace


@dataclass
class PCStats:
    """Per static instruction (PC) counters of one kernel, columnar, sorted by ``pc``."""

    pc: np.ndarray  # uint32[p]
    executions: np.ndarray  # int64[p]: warp instructions executed at this PC
    l1_accesses: np.ndarray  # int64[p]
    l1_hits: np.ndarray  # int64[p]
    l1_pending_hits: np.ndarray  # int64[p]
    l1_misses: np.ndarray  # int64[p]
    l2_accesses: np.ndarray  # int64[p]
    l2_misses: np.ndarray  # int64[p]
    # int64[p]: DRAM bytes moved by the PC's L2 accesses (fetches, and write-backs of the
    # dirty lines they evict); None when not simulated (then eq. 8's LLC miss ratio)
    dram_bytes: np.ndarray | None = None
    # int64[p]: DRAM channel time the PC's row activations added beyond their transfers'
    # bytes, in bytes at the channel's rate (0 without the row model, dram.activate_ns);
    # None when not simulated
    dram_act_bytes: np.ndarray | None = None
    # int64[p]: cycles the PC's accesses held the blocking L1 waiting (miss queue, MSHR
    # entry, merge slot, line allocation; each execution's waits rounded); None when not
    # simulated
    l1_wait_cycles: np.ndarray | None = None

    def index(self, pc: int) -> int:
        i = int(np.searchsorted(self.pc, pc))
        if i >= len(self.pc) or self.pc[i] != pc:
            raise KeyError(f"no memory statistics for pc {pc:#x}")
        return i


@dataclass
class WarpMemTrace:
    """Per warp instruction counters of one tracked warp (all instructions of the warp)."""

    warp: int  # warp index in the kernel trace
    requests: np.ndarray  # int32[n]: coalesced L1 requests of each instruction (0 if not global)
    l1_misses: np.ndarray  # int32[n]: requests that missed L1 (new MSHRs or write-through writes)
    l1_pending_hits: np.ndarray  # int32[n]
    l2_misses: np.ndarray  # int32[n]: of those, requests that missed L2
    dram_bytes: np.ndarray | None = None  # int32[n]: DRAM bytes the instruction moved
    dram_act_bytes: np.ndarray | None = None  # int32[n]: as PCStats.dram_act_bytes


@dataclass
class KernelCacheStats:
    kernel_id: int
    name: str
    l1_read_accesses: int = 0
    l1_read_hits: int = 0
    l1_read_pending_hits: int = 0
    l1_read_misses: int = 0
    l1_write_accesses: int = 0
    l2_accesses: int = 0
    l2_misses: int = 0
    l2_read_accesses: int = 0
    l2_read_misses: int = 0
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
    l2_pending_hits: int = 0  # L2 accesses to a line (sector) whose fill is in flight
    # L2 reads that found their MSHR entry's merge slots full and blocked their bank until
    # the fill, and the bank-cycles so blocked (summed over banks; core cycles)
    l2_merge_stalls: int = 0
    l2_blocked_cycles: int = 0
    # L2 misses that found every MSHR entry of their bank in flight (l2.mshr_per_bank) and
    # held their bank until the oldest entry's fill, and the bank-cycles so blocked
    l2_mshr_stalls: int = 0
    l2_mshr_blocked_cycles: int = 0
    # L2 MSHR entries taken: DRAM fetches that did not share the entry of another sector
    # of their line in flight (each holds its entry at least dram.latency_ns)
    l2_mshr_allocations: int = 0
    # cycles the SMs' L1s waited for a free miss-queue entry (summed over SMs; core cycles)
    l1_miss_queue_wait_cycles: int = 0
    # cycles they waited for a free MSHR entry, for a merge slot (the read's entry full)
    # and for a way of the set not reserved by a fill in flight (summed over SMs)
    l1_mshr_wait_cycles: int = 0
    l1_merge_wait_cycles: int = 0
    l1_alloc_wait_cycles: int = 0
    # the timed simulation's own clock from the kernel's start to its last block's end
    # (core cycles): a diagnostic of the simulation's timing, not a performance prediction
    # (its L2 ports serve requests in simulation order, so it runs long on memory-divergent
    # kernels: docs/status.md, "Known gaps")
    timeline_cycles: int = 0
    per_pc: PCStats | None = None
    warps: dict[int, WarpMemTrace] = field(default_factory=dict)

    @property
    def l1_miss_rate(self) -> float:
        """Read miss rate as Accel-Sim reports it: misses / accesses (pending hits count
        as hits)."""
        return self.l1_read_misses / self.l1_read_accesses if self.l1_read_accesses else 0.0

    @property
    def l1_blocked_cycles(self) -> int:
        """Cycles the SMs' blocking L1s waited, all causes (summed over SMs)."""
        return sum(getattr(self, f) for f in L1_WAIT_FIELDS)

    @property
    def l2_miss_rate(self) -> float:
        return self.l2_misses / self.l2_accesses if self.l2_accesses else 0.0

    @property
    def l2_read_miss_rate(self) -> float:
        return self.l2_read_misses / self.l2_read_accesses if self.l2_read_accesses else 0.0


@dataclass
class CacheSimResult:
    """Cache statistics of a whole application on one configuration."""

    config_name: str
    kernels: list[KernelCacheStats]

    def total(self) -> KernelCacheStats:
        """Sum of the scalar counters over all kernels."""
        tot = KernelCacheStats(kernel_id=-1, name="total")
        for k in self.kernels:
            for f in SCALAR_FIELDS:
                setattr(tot, f, getattr(tot, f) + getattr(k, f))
        return tot


#: The L1's wait sums by cause, in the order of the simulator's slots
#: (``mdm.memory._core.W_MISS_QUEUE`` ... ``W_ALLOC``)
L1_WAIT_FIELDS = (
    "l1_miss_queue_wait_cycles",
    "l1_mshr_wait_cycles",
    "l1_merge_wait_cycles",
    "l1_alloc_wait_cycles",
)

SCALAR_FIELDS = (
    "l1_read_accesses",
    "l1_read_hits",
    "l1_read_pending_hits",
    "l1_read_misses",
    "l1_write_accesses",
    "l2_accesses",
    "l2_misses",
    "l2_read_accesses",
    "l2_read_misses",
    "dram_read_bytes",
    "dram_write_bytes",
    "l2_pending_hits",
    "l2_merge_stalls",
    "l2_blocked_cycles",
    "l2_mshr_stalls",
    "l2_mshr_blocked_cycles",
    "l2_mshr_allocations",
    *L1_WAIT_FIELDS,
    "timeline_cycles",
)


def _opcode(kernel: KernelTrace, i: int) -> str:
    """Opcode name of instruction ``i`` ('' when the trace keeps no opcode names)."""
    code = int(kernel.opcode[i])
    return kernel.opcodes[code] if code < len(kernel.opcodes) else ""


def _rate(num: int, den: int) -> float:
    return num / den if den else 0.0


def pc_rows(stats: KernelCacheStats, kernel: KernelTrace) -> list[dict[str, object]]:
    """One row per static global memory instruction of ``stats.per_pc`` (ascending PC):
    its opcode (from ``kernel``, the trace simulated), executions, L1 and L2 counters and
    miss rates (misses / accesses; an L1 write is a miss, as in the kernel's counters),
    DRAM bytes its accesses moved, cycles they held the L1 waiting. Plain Python values,
    ready for JSON or a DataFrame."""
    p = stats.per_pc
    if p is None:
        return []
    inst = global_memory_instructions(kernel)
    upc, at = np.unique(kernel.pc[inst], return_index=True)
    first = inst[at[np.searchsorted(upc, p.pc)]]  # first execution of each PC
    rows = []
    for i in range(p.pc.shape[0]):
        acc, l2 = int(p.l1_accesses[i]), int(p.l2_accesses[i])
        rows.append(
            {
                "pc": int(p.pc[i]),
                "opcode": _opcode(kernel, int(first[i])),
                "executions": int(p.executions[i]),
                "l1_accesses": acc,
                "l1_hits": int(p.l1_hits[i]),
                "l1_pending_hits": int(p.l1_pending_hits[i]),
                "l1_misses": int(p.l1_misses[i]),
                "l1_miss_rate": _rate(int(p.l1_misses[i]), acc),
                "l2_accesses": l2,
                "l2_misses": int(p.l2_misses[i]),
                "l2_miss_rate": _rate(int(p.l2_misses[i]), l2),
                "dram_bytes": None if p.dram_bytes is None else int(p.dram_bytes[i]),
                "l1_wait_cycles": None if p.l1_wait_cycles is None else int(p.l1_wait_cycles[i]),
            }
        )
    return rows


def warp_rows(stats: KernelCacheStats, kernel: KernelTrace, warp: int) -> list[dict[str, object]]:
    """One row per global memory instruction of tracked warp ``warp`` (``stats.warps``),
    in program order: its position in the warp's instruction stream (``index``), PC,
    opcode, coalesced L1 requests, L1 misses, L1 pending hits, L2 misses, DRAM bytes."""
    w = stats.warps[warp]
    lo, hi = int(kernel.warp_ptr[warp]), int(kernel.warp_ptr[warp + 1])
    mine = global_memory_instructions(kernel, lo, hi)  # the warp's slice only
    return [
        {
            "index": int(i - lo),
            "pc": int(kernel.pc[i]),
            "opcode": _opcode(kernel, int(i)),
            "requests": int(w.requests[i - lo]),
            "l1_misses": int(w.l1_misses[i - lo]),
            "l1_pending_hits": int(w.l1_pending_hits[i - lo]),
            "l2_misses": int(w.l2_misses[i - lo]),
            "dram_bytes": None if w.dram_bytes is None else int(w.dram_bytes[i - lo]),
        }
        for i in mine
    ]
