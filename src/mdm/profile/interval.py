"""Interval profile of one warp with a register scoreboard (model-notes section 1).

The warp runs alone, one instruction per cycle at most, in program order:

* ``issue(k) = max(issue(k-1) + 1, ready[r] for every source register r of k)``
  (``issue(0) = 0``);
* ``ready[d] = issue(k) + latency(k)`` for every destination register ``d`` of k;
* a gap ``g = issue(k) - issue(k-1) - 1 > 0`` ends the current interval: the
  interval is ``(n_i, S_i)`` with ``S_i`` the gap, and k opens the next one;
* the last interval's stall is the time from the cycle after the last issue until
  the longest outstanding result is ready or the last global store is acknowledged
  (0 when all are done).

Store acknowledgements (open choice, decided here): a warp is done only when its
stores are acknowledged, as in the reference simulator (GPGPU-Sim
``shd_warp_t::hardware_done`` = functional done and ``stores_done()`` and nothing in
the pipeline; a CTA frees its slot, and a kernel ends, only when all its warps are
hardware-done), and on hardware a kernel's stores complete before the kernel does.
A global store is acknowledged ``latency`` cycles after its issue: the L1 hit plus
the L2 hit latency with a write-through L1 (the write goes to the L2, the
acknowledgement comes back), the L1 hit latency with a write-back L1
(:func:`gpu_latencies`); its queueing under load is the memory terms' share, as for
a load. Only the warp's end waits for it (a store has no destination register).
Effect on the 83 reference runs (``mdm validate``, ``mdm-pipelined``): SM7_QV100
baselines 22.0% -> 20.2% mean |error| (stencil2d +63% -> +47%, gemm_tiled +73% ->
+70%), mdm_pascal baselines 13.2% -> 13.4%, MD+NMD 15.6% -> 15.7%.

``merge_threshold`` (open choice): a gap ``g < merge_threshold`` does not open a new
interval; it is added to the current interval's stall (the MDM authors' script
uses 10 cycles). ``merge_threshold=0`` opens a new interval on every gap (GCoM).
Total instructions and total stall (hence single-warp cycles) do not depend on it.
The default is :data:`DEFAULT_MERGE_THRESHOLD` = 10, the authors' choice, because
MDM's MD-interval test (eq. 2) and the multi-warp hiding of GPUMech are per
interval and were calibrated with it.

Latency of an instruction: by class from ``gpu.latency``; a global load (and local
or atomic access with a destination) gets the per-PC mean latency
``L1_hit + p1 * (L2_hit + p2 * DRAM)`` where ``p1`` is the PC's L1 miss ratio and
``p2`` the L2 miss ratio of its L1 misses, from the cache simulation's
:class:`~mdm.memory.stats.PCStats`, both raised to the whole warp's chance that
some request misses (``whole_warp``, see :func:`gpu_latencies`). Choice: L1 *pending hits* count as hits for the
latency, as in :attr:`KernelCacheStats.l1_miss_rate`. The cache simulator has no
timing, so a request to a line another warp missed on is a pending hit there, while
in the cycle-level reference the fill has mostly arrived and it is a plain hit
(stride1 on mdm_pascal: ~13.8k pending hits simulated, 29 in Accel-Sim, ~13.9k
hits); counting them as misses made every such load cost a full L2 round trip.

LD/ST column (``ldst_cycles``, open choice): the cycles the interval's memory
instructions hold the SM's single LD/ST unit (see :mod:`mdm.models.multiwarp`).
A shared-memory instruction holds it one cycle per pass over the banks, from its own
addresses as GPGPU-Sim's ``shared_space`` access counts them: per part of the warp
(``sm.shared_mem_warp_parts``), the most distinct 4 B words one bank
(``sm.shared_mem_banks``, word ``addr / 4`` mod banks) must serve, the parts' counts
summed; with ``sm.shared_mem_limited_broadcast`` a bank serves every access, except
that the repeats of one word (the lowest bank's lowest repeated word) count once.
A 128-bit access counts by its first word, as there. An instruction without
addresses holds the unit 1 cycle. A global
access pushes its L1 requests into the L1 one per cycle per L1 bank (reference
README: "a fully divergent load needs 32 cycles just to enter L1"); of those, the
requests served by the L1 (hits and pending hits, per-PC means per execution)
count here, at least 1 cycle per instruction: ``max(1, (hits + pending hits) /
l1_banks)``. The requests that miss are left out: they are the memory system's
share, which the MSHR/NoC/DRAM terms of the models already charge (eqs. 5-10).
Mechanism: mdm_pascal kmeans reads the same 16 lines with 16 loads per warp (1
miss and 15 pending hits per line); 64 warps x 240 served requests hold the
1-bank L1 for 15k cycles per interval, which no memory term counts.

Issue slots (``issue_width > 1``, Accel-Sim's ``-gpgpu_max_insn_issue_per_warp``): a
scheduler issues a *group* of up to ``issue_width`` consecutive instructions of one warp
in a cycle when each is ready at the group's cycle, reads and writes no register that
an earlier member writes (scoreboard) and, with ``dual_issue_diff_units``, uses an
execution unit no earlier member uses (the configuration's units when the profile has
them, :func:`exec_unit_costs`, with every memory class on the LD/ST unit: integer and
FP32 work pair on an SM with INT units; else :data:`UNIT_OF_CLASS`: SP for integer,
FP32, branch, barrier and other instructions, as on Pascal where integer work runs on
the SP units; DP; SFU; tensor; LD/ST for every memory class). ``issue_slots_i`` is the
number of groups with a member in interval i, found by a second scoreboard walk at
group granularity (a group that spans an interval boundary counts in both intervals,
so an interval never has fewer than ``n_i / issue_width`` slots); the stall column
keeps the single-issue walk (approximation: a pair issued one cycle earlier shifts
later issue times by at most a cycle per pair).
Mechanism: mdm_pascal's gemm_tiled inner loop alternates shared-memory loads and FFMAs
that do not depend on each other, which the reference simulator issues in pairs.

Execution units (``unit_cycles``, open choice, decided here): the cycles interval i's
instructions keep one scheduler's share of its busiest execution unit busy. A unit takes
a new warp instruction every *initiation interval* (``gpu.latency.*_initiation_cycles``:
GPGPU-Sim's ``pipelined_simd_unit`` holds its dispatch register that long; 2 where a
sub-core has 16 lanes of the kind, as Volta's FP32 and INT32 units), so an instruction
costs ``initiation x schedulers / units`` of that unit (:func:`exec_unit_costs`; units
per SM from ``gpu.sm``, by default one per scheduler). Unit of each class, as the
reference simulator issues them (``scheduler_unit::cycle``): FP32 on the SP units;
integer, branch, barrier and other ALU work on the INT units when the SM has them
(Volta and later), else on the SP units; branches on the dedicated branch units when
the configuration has them (Accel-Sim's Volta and later: specialized unit BRA); FP64
on the DP units (on the SFU units when ``dp_units`` is 0, as GPGPU-Sim does for
Fermi); SFU and tensor on their own.
Barriers take 1 cycle, as Accel-Sim's ``set_latency`` gives its barrier class no
interval. Memory classes are the LD/ST column's. :mod:`mdm.models.multiwarp` turns the
column into a throughput cap on C_i.
Mechanism: SM7_QV100's stencil2d issues half its instructions to the INT units at an
initiation interval of 2, so its warps cannot issue one instruction per cycle per
scheduler, which the issue cap alone assumed.

Memory columns (open choice, decided here): ``M^Read_i`` / ``M^Write_i`` are the
*per-PC averages over all warps of the kernel* of the interval's instructions
(L1 read misses per execution of each load PC, L1 write requests per execution of
each store PC), and ``l2_miss_rate`` is the request-weighted L2 miss ratio of
those PCs. The representative warp stands for the average warp; one warp's own
counts depend on where it sits in its block (the first warp to touch a line
misses, the others hit), which per-PC averages smooth out. This also needs no
per-warp tracking in the cache simulation. ``dram_bytes`` is the DRAM traffic of the
same requests (per-PC averages of the bytes each access moved: its fetch, and the
write-back of a dirty line it evicted), for eq. (8)
(:func:`mdm.models.interval.memory_inputs`); with the DRAM row model
(``dram.activate_ns``) it also holds the channel time the accesses' row activations
added, in bytes at the channel's rate, so that eq. (8)'s service time is the time the
requests occupy the DRAM (a random 32 B read costs an activation, not 32 B). :func:`interval_profile` can take a
tracked :class:`~mdm.memory.stats.WarpMemTrace` instead (``warp_mem``): then the
warp's own counts are used.

Entry reads (``entry_reads``, with ``l1_entry_bytes``: the L1's line, or its sector when
sectored, as one MSHR entry covers: :attr:`mdm.config.gpu.L1Config.request_bytes`): per
interval, the most read instructions of the warp that touch one entry, each counted once per entry (the coalescer sends one request
per entry), over the entries whose first read in the interval misses. Choice: "misses"
when more than half of that instruction's L1 requests miss (its PC's share over all
warps, or the tracked warp's own); the reads of one interval issue back to back, so a
missed entry's later reads in it merge into the miss's MSHR entry, while a resident
entry's reads hit and merge nothing. MDM-Pipelined checks the count against the L1's
merge limit (:func:`mdm.models.mdm.merge_blocked`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mdm._jit import njit
from mdm.config.gpu import GPUConfig, LatencyConfig
from mdm.memory.stats import PCStats, WarpMemTrace
from mdm.profile.intervals import IntervalProfile
from mdm.traces.model import InstrClass, KernelTrace

DEFAULT_MERGE_THRESHOLD = 10.0

#: Architecture-independent latency of a global load used when no cache statistics
#: are given (representative-warp selection): L1 miss that hits a typical L2.
DEFAULT_GLOBAL_LOAD_CYCLES = 300.0
#: Typical L1 hit latency of the default table (cycles).
DEFAULT_L1_HIT_CYCLES = 28.0

_LOADS = (InstrClass.LD_GLOBAL, InstrClass.LOCAL, InstrClass.ATOMIC)
_N_CLASSES = 16

#: Execution unit of each instruction class for dual issue: 0 SP, 1 DP, 2 SFU,
#: 3 tensor, 4 LD/ST (module docstring).
UNIT_OF_CLASS = np.zeros(_N_CLASSES, np.int8)
UNIT_OF_CLASS[InstrClass.FP64] = 1
UNIT_OF_CLASS[InstrClass.SFU] = 2
UNIT_OF_CLASS[InstrClass.TENSOR] = 3
for _c in (*_LOADS, InstrClass.ST_GLOBAL, InstrClass.LD_SHARED, InstrClass.ST_SHARED):
    UNIT_OF_CLASS[_c] = 4
UNIT_OF_CLASS[InstrClass.TEX_CONST] = 4


@dataclass(frozen=True)
class Latencies:
    """Result latency per instruction class and per global-memory PC (core cycles).

    ``class_cycles[c]`` is the latency of class ``c``; global-memory instructions whose
    PC is in ``pc`` (sorted) get ``pc_cycles`` instead.
    """

    class_cycles: np.ndarray  # float64[16]
    pc: np.ndarray  # uint32[p], sorted
    pc_cycles: np.ndarray  # float64[p]

    def per_instruction(self, pc: np.ndarray, iclass: np.ndarray) -> np.ndarray:
        """Latency of every instruction (vectorised)."""
        lat = self.class_cycles[iclass]
        if self.pc.size:
            is_mem = np.isin(iclass, np.array([int(c) for c in _LOADS], dtype=iclass.dtype))
            idx = np.searchsorted(self.pc, pc)
            idx_c = np.minimum(idx, self.pc.size - 1)
            hit = is_mem & (self.pc[idx_c] == pc)
            lat = np.where(hit, self.pc_cycles[idx_c], lat)
        return lat


#: Execution units of :func:`exec_unit_costs`.
UNIT_SP, UNIT_INT, UNIT_DP, UNIT_SFU, UNIT_TENSOR, UNIT_BRANCH = range(6)


def exec_unit_costs(gpu: GPUConfig) -> tuple[np.ndarray, np.ndarray]:
    """``(unit, cost)`` per instruction class on ``gpu`` (module docstring, "Execution
    units"): the execution unit (``UNIT_*``; -1 for memory classes) and the cycles one
    instruction keeps one scheduler's share of that unit busy, ``initiation x
    schedulers / units``."""
    sm, lat = gpu.sm, gpu.latency
    sched = float(sm.schedulers)

    def share(units: int | None) -> float:
        return sched / (sm.schedulers if units is None else units)

    unit = np.full(_N_CLASSES, -1, np.int8)
    cost = np.zeros(_N_CLASSES, np.float64)
    alu = (UNIT_INT, share(sm.int_units)) if sm.int_units else (UNIT_SP, share(sm.sp_units))
    table = {
        InstrClass.FP32: (UNIT_SP, share(sm.sp_units), lat.fp32_initiation_cycles),
        InstrClass.INT: (*alu, lat.int_alu_initiation_cycles),
        InstrClass.OTHER: (*alu, lat.int_alu_initiation_cycles),
        InstrClass.UNKNOWN: (*alu, lat.int_alu_initiation_cycles),
        InstrClass.BARRIER: (*alu, 1),
        InstrClass.BRANCH: (UNIT_BRANCH, share(sm.branch_units), lat.branch_initiation_cycles)
        if sm.branch_units
        else (*alu, lat.int_alu_initiation_cycles),
        InstrClass.FP64: (UNIT_DP, share(sm.dp_units), lat.fp64_initiation_cycles)
        if sm.dp_units != 0
        else (UNIT_SFU, share(sm.sfu_units), lat.fp64_initiation_cycles),
        InstrClass.SFU: (UNIT_SFU, share(sm.sfu_units), lat.sfu_initiation_cycles),
        InstrClass.TENSOR: (UNIT_TENSOR, share(sm.tensor_units), lat.tensor_initiation_cycles),
    }
    for c, (u, sh, ii) in table.items():
        unit[c] = u
        cost[c] = sh * ii
    return unit, cost


def _pairing_units(unit_costs: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    """Execution unit per class for dual issue: :func:`exec_unit_costs`' units with the
    memory classes on one LD/ST unit, or :data:`UNIT_OF_CLASS` without them."""
    if unit_costs is None:
        return UNIT_OF_CLASS
    unit = unit_costs[0]
    return np.where(unit >= 0, unit, UNIT_BRANCH + 1).astype(np.int8)


def _unit_cycles(
    iclass: np.ndarray, starts: np.ndarray, unit: np.ndarray, cost: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per interval (``starts``), the busiest execution unit's cycles; and per unit
    (``UNIT_*``), the whole warp's cycles."""
    uid = unit[iclass]
    c = cost[iclass]
    out = np.zeros(starts.shape[0])
    totals = np.zeros(UNIT_BRANCH + 1)
    for u in np.unique(uid[uid >= 0]):
        per = np.add.reduceat(np.where(uid == u, c, 0.0), starts)
        out = np.maximum(out, per)
        totals[u] = per.sum()
    return out, totals


def _class_table(
    lat: LatencyConfig, l1_hit: float, global_load: float, store_ack: float
) -> np.ndarray:
    t = np.full(_N_CLASSES, float(lat.other_cycles))
    t[InstrClass.INT] = lat.int_alu_cycles
    t[InstrClass.FP32] = lat.fp32_cycles
    t[InstrClass.FP64] = lat.fp64_cycles
    t[InstrClass.SFU] = lat.sfu_cycles
    t[InstrClass.TENSOR] = lat.tensor_cycles
    t[InstrClass.LD_SHARED] = lat.shared_mem_cycles
    t[InstrClass.ST_SHARED] = lat.shared_mem_cycles
    t[InstrClass.TEX_CONST] = lat.const_tex_cycles
    t[InstrClass.BRANCH] = lat.branch_cycles
    t[InstrClass.BARRIER] = lat.barrier_cycles
    for c in _LOADS:
        t[c] = global_load
    t[InstrClass.ST_GLOBAL] = store_ack  # acknowledgement (module docstring)
    return t


def default_latencies() -> Latencies:
    """Architecture-independent latencies (``LatencyConfig`` defaults, loads
    :data:`DEFAULT_GLOBAL_LOAD_CYCLES`): used to select the representative warp."""
    t = _class_table(
        LatencyConfig(),
        DEFAULT_L1_HIT_CYCLES,
        DEFAULT_GLOBAL_LOAD_CYCLES,
        DEFAULT_GLOBAL_LOAD_CYCLES,
    )
    return Latencies(t, np.zeros(0, np.uint32), np.zeros(0))


def pc_miss_ratios(stats: PCStats) -> tuple[np.ndarray, np.ndarray]:
    """Per PC: (L1 miss ratio, pending hits as hits; L2 miss ratio of its L1 misses)."""
    acc = stats.l1_accesses.astype(np.float64)
    p1 = np.divide(
        stats.l1_misses.astype(np.float64),
        acc,
        out=np.ones_like(acc),
        where=acc > 0,
    )
    l2a = stats.l2_accesses.astype(np.float64)
    p2 = np.divide(stats.l2_misses.astype(np.float64), l2a, out=np.zeros_like(l2a), where=l2a > 0)
    return np.clip(p1, 0.0, 1.0), np.clip(p2, 0.0, 1.0)


def gpu_latencies(
    gpu: GPUConfig, stats: PCStats | None = None, whole_warp: bool = True
) -> Latencies:
    """Latencies on ``gpu``; global loads per PC from the cache simulation.

    Without ``stats`` every global load is taken as an L1 miss that hits in the L2
    (``p1 = 1, p2 = 0``).

    ``whole_warp=True`` (default; open choice) accounts for lockstep execution: a
    warp instruction of ``r = accesses / executions`` requests completes when its
    slowest request does, so ``p1`` becomes ``1 - (1 - p1)^r`` (some request misses,
    requests taken as independent) and ``p2`` ``1 - (1 - p2)^m`` over its ``m = r p1 /
    q1`` misses. Mechanism: the per-request mean understates the wait of a warp
    whose requests are split, most of all with a sectored L1 (4 sector requests per
    line: SM7_QV100 stride1 loads have p1 = 0.29 per sector, yet every load waits
    for a fill). Effect on the 83 reference runs (``mdm validate``): MDM mean |error|
    34.6% -> 33.4% (SM7_QV100 54.3% -> 43.1%, stride1 +79% -> +15%, spmv_csr +49% ->
    +15%; mdm_pascal 32.1% -> 32.2%), GPUMech 52.9% -> 51.7%. ``whole_warp=False``
    is the notes' per-request formula ``L1 + p1 (L2 + p2 DRAM)``.
    """
    l1 = float(gpu.l1.hit_latency_cycles)
    l2 = float(gpu.l2_hit_latency_cycles)
    dram = float(gpu.dram_latency_cycles)
    store_ack = l1 if gpu.l1.enabled and gpu.l1.write_policy == "write_back" else l1 + l2
    t = _class_table(gpu.latency, l1, l1 + l2, store_ack)
    if stats is None or stats.pc.size == 0:
        return Latencies(t, np.zeros(0, np.uint32), np.zeros(0))
    p1, p2 = pc_miss_ratios(stats)
    if not gpu.l1.enabled:
        p1 = np.ones_like(p1)
    order = np.argsort(stats.pc, kind="stable")
    if whole_warp:
        r = np.maximum(stats.l1_accesses / np.maximum(stats.executions, 1), 1.0)
        q1 = 1.0 - (1.0 - p1) ** r  # some request of the instruction misses L1
        m = np.divide(r * p1, q1, out=np.ones_like(q1), where=q1 > 0)
        q2 = 1.0 - (1.0 - p2) ** np.maximum(m, 1.0)  # some of its misses go to DRAM
        p1, p2 = q1, q2
    cycles = l1 + p1 * (l2 + p2 * dram)  # model-notes section 1 load latency
    return Latencies(t, stats.pc[order].astype(np.uint32), cycles[order])


@njit(cache=True)
def _walk(dst, src, lat, store, start, end, merge_threshold, ready, starts, stalls):  # noqa: ANN001, ANN202
    """Scoreboard walk of instructions ``start:end``; fill interval starts and stalls.

    ``store[k]``: instruction k is a global store, done when acknowledged ``lat[k]``
    cycles after its issue (module docstring).

    ``ready`` must be zero on entry (it is left dirty). Returns the interval count.
    """
    n_int = 0
    prev = -1.0
    last_done = 0.0
    cur_stall = 0.0
    for k in range(start, end):
        t = prev + 1.0
        for j in range(src.shape[1]):
            r = src[k, j]
            if r >= 0 and ready[r] > t:
                t = ready[r]
        gap = t - prev - 1.0
        if k == start:
            starts[0] = 0
            n_int = 1
            cur_stall = 0.0
        elif gap > 1e-9:
            if gap >= merge_threshold:
                stalls[n_int - 1] = cur_stall + gap
                starts[n_int] = k - start
                n_int += 1
                cur_stall = 0.0
            else:
                cur_stall += gap
        done = t + lat[k]
        for j in range(dst.shape[1]):
            d = dst[k, j]
            if d >= 0:
                ready[d] = done
                if done > last_done:
                    last_done = done
        if store[k] and done > last_done:
            last_done = done
        prev = t
    if n_int > 0:
        tail = last_done - (prev + 1.0)
        stalls[n_int - 1] = cur_stall + (tail if tail > 0.0 else 0.0)
    return n_int


@njit(cache=True)
def _issue_groups(dst, src, unit, lat, width, diff_units, ready, t_issue):  # noqa: ANN001, ANN202
    """Scoreboard walk at issue-group granularity (module docstring, issue slots).

    Returns a bool per instruction: True when it issues in the same cycle as the one
    before it; ``t_issue`` receives each instruction's issue cycle. ``ready`` must be
    zero on entry. A wider issue never delays an instruction (each ``t_issue`` is
    non-increasing in ``width``), but it can need *more* groups: issuing an instruction
    earlier can leave its successor not yet ready to pair with it (greedy in-order
    grouping; tested).
    """
    n = dst.shape[0]
    joined = np.zeros(n, np.bool_)
    t_group = -1.0
    size = 0
    first = 0
    for k in range(n):
        rk = 0.0
        for j in range(src.shape[1]):
            r = src[k, j]
            if r >= 0 and ready[r] > rk:
                rk = ready[r]
        can = size > 0 and size < width and rk <= t_group
        m = first
        while can and m < k:
            if diff_units and unit[m] == unit[k]:
                can = False
            for jd in range(dst.shape[1]):
                d = dst[m, jd]
                if d < 0:
                    continue
                for js in range(src.shape[1]):
                    if src[k, js] == d:
                        can = False
                for jk in range(dst.shape[1]):
                    if dst[k, jk] == d:
                        can = False
            m += 1
        if can:
            joined[k] = True
            size += 1
            t = t_group
        else:
            t = t_group + 1.0
            if rk > t:
                t = rk
            t_group = t
            size = 1
            first = k
        t_issue[k] = t
        done = t + lat[k]
        for jd in range(dst.shape[1]):
            d = dst[k, jd]
            if d >= 0:
                ready[d] = done
    return joined


@njit(cache=True)
def _all_warps(warp_ptr, dst, src, lat, store, n_regs):  # noqa: ANN001, ANN202
    """Per warp: (instructions, total stall) of the scoreboard walk."""
    w = warp_ptr.shape[0] - 1
    n = np.zeros(w, np.float64)
    s = np.zeros(w, np.float64)
    ready = np.zeros(n_regs, np.float64)
    longest = 0
    for i in range(w):
        longest = max(longest, warp_ptr[i + 1] - warp_ptr[i])
    starts = np.zeros(max(longest, 1), np.int64)
    stalls = np.zeros(max(longest, 1), np.float64)
    for i in range(w):
        a, b = warp_ptr[i], warp_ptr[i + 1]
        ready[:] = 0.0
        m = _walk(dst, src, lat, store, a, b, 0.0, ready, starts, stalls)
        n[i] = b - a
        tot = 0.0
        for j in range(m):
            tot += stalls[j]
        s[i] = tot
    return n, s


def _n_regs(dst: np.ndarray, src: np.ndarray) -> int:
    """Scoreboard size for instructions with registers ``dst`` and ``src`` (-1 padded)."""
    m = -1
    if dst.size:
        m = max(m, int(dst.max()))
    if src.size:
        m = max(m, int(src.max()))
    return m + 1 if m >= 0 else 1


def warp_summaries(
    kernel: KernelTrace, latencies: Latencies | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Instructions and total uncontended stall of every warp (one numba pass)."""
    lat = (latencies or default_latencies()).per_instruction(kernel.pc, kernel.iclass)
    return _all_warps(
        kernel.warp_ptr.astype(np.int64, copy=False),
        np.ascontiguousarray(kernel.dst),
        np.ascontiguousarray(kernel.src),
        lat.astype(np.float64, copy=False),
        kernel.iclass == InstrClass.ST_GLOBAL,
        _n_regs(kernel.dst, kernel.src),
    )


def warp_cycles(
    kernel: KernelTrace, warp: int, latencies: Latencies | None = None, issue_width: int = 1
) -> float:
    """Cycles warp ``warp`` of ``kernel`` takes alone: ``n / issue_width + S`` (its
    instructions at the full issue width and its total uncontended stall, the scoreboard
    walk of the module docstring), 0 for a warp without instructions."""
    if not 0 <= warp < kernel.n_warps:
        raise IndexError(f"kernel {kernel.name!r} has {kernel.n_warps} warps, no warp {warp}")
    a, b = int(kernel.warp_ptr[warp]), int(kernel.warp_ptr[warp + 1])
    if b == a:
        return 0.0
    dst = np.ascontiguousarray(kernel.dst[a:b])
    src = np.ascontiguousarray(kernel.src[a:b])
    lat = (latencies or default_latencies()).per_instruction(kernel.pc[a:b], kernel.iclass[a:b])
    n, s = _all_warps(
        np.array([0, b - a], np.int64),
        dst,
        src,
        lat.astype(np.float64, copy=False),
        kernel.iclass[a:b] == InstrClass.ST_GLOBAL,
        _n_regs(dst, src),
    )
    return float(n[0]) / issue_width + float(s[0])


def _reads_and_writes(kernel: KernelTrace, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """Which of instructions ``[a, b)`` read global memory (loads, and local or atomic
    accesses with a destination) and which write it (stores, the others)."""
    iclass = kernel.iclass[a:b]
    has_dst = (kernel.dst[a:b] >= 0).any(axis=1)
    is_read = np.isin(iclass, [int(c) for c in _LOADS]) & has_dst
    is_write = (iclass == InstrClass.ST_GLOBAL) | (
        np.isin(iclass, [InstrClass.LOCAL, InstrClass.ATOMIC]) & ~has_dst
    )
    return is_read, is_write


def _at_pcs(stats: PCStats, pc: np.ndarray, *columns: np.ndarray) -> list[np.ndarray]:
    """Each per-PC ``column`` of ``stats`` (``stats.pc`` in any order) at every PC of
    ``pc``; 0 where ``stats`` has no row for it."""
    order = np.argsort(stats.pc, kind="stable")
    spc = stats.pc[order]
    idx = np.minimum(np.searchsorted(spc, pc), spc.size - 1)
    known = spc[idx] == pc
    return [np.where(known, np.asarray(col)[order][idx], 0.0) for col in columns]


def _memory_per_instruction(
    kernel: KernelTrace, a: int, b: int, stats: PCStats | None, warp_mem: WarpMemTrace | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """(read misses, write requests, L2 misses, DRAM bytes or None when the statistics
    carry none) of every instruction of the warp."""
    n = b - a
    is_read, is_write = _reads_and_writes(kernel, a, b)
    if warp_mem is not None:
        if warp_mem.l1_misses.shape != (n,):
            raise ValueError(
                f"WarpMemTrace of warp {warp_mem.warp} has {warp_mem.l1_misses.shape[0]} "
                f"instructions, the trace {n}"
            )
        reads = np.where(is_read, warp_mem.l1_misses, 0).astype(np.float64)
        writes = np.where(is_write, warp_mem.requests, 0).astype(np.float64)
        l2m = np.where(is_read | is_write, warp_mem.l2_misses, 0).astype(np.float64)
        dram = None
        if warp_mem.dram_bytes is not None:
            dram = np.where(is_read | is_write, warp_mem.dram_bytes, 0).astype(np.float64)
            if warp_mem.dram_act_bytes is not None:  # the row model's activation time
                dram += np.where(is_read | is_write, warp_mem.dram_act_bytes, 0)
        return reads, writes, l2m, dram
    zeros = np.zeros(n)
    if stats is None or stats.pc.size == 0:
        return zeros, zeros.copy(), zeros.copy(), None
    execs = np.maximum(stats.executions.astype(np.float64), 1.0)
    _, p2 = pc_miss_ratios(stats)
    miss_per, acc_per, p2 = _at_pcs(
        stats, kernel.pc[a:b], stats.l1_misses / execs, stats.l1_accesses / execs, p2
    )
    reads = np.where(is_read, miss_per, 0.0)
    writes = np.where(is_write, acc_per, 0.0)
    l2m = (reads + writes) * p2
    dram = None
    if stats.dram_bytes is not None:
        busy = stats.dram_bytes
        if stats.dram_act_bytes is not None:  # the row model's activation time
            busy = busy + stats.dram_act_bytes
        (dram_per,) = _at_pcs(stats, kernel.pc[a:b], busy / execs)
        dram = np.where(is_read | is_write, dram_per, 0.0)
    return reads, writes, l2m, dram


@njit(cache=True)
def _shared_cycles(idx, mask, addr_ptr, addrs, banks, parts, limited):  # noqa: ANN001, ANN202
    """Bank-conflict cycles of the shared-memory instructions ``idx`` (module docstring,
    "LD/ST column"): per part of the warp, the most accesses one bank serves (distinct 4 B
    words, or with ``limited`` broadcast every access but the repeats of one word), summed
    over the parts; 1 for an instruction without addresses."""
    out = np.ones(idx.shape[0])
    lane_w = np.empty(32, np.uint64)
    lane_b = np.empty(32, np.int64)
    lane_p = np.empty(32, np.int64)
    count = np.zeros(banks, np.int64)
    size = 32 // parts
    for j in range(idx.shape[0]):
        i = idx[j]
        a, b = addr_ptr[i], addr_ptr[i + 1]
        if b <= a:
            continue
        m = np.uint32(mask[i])
        n = 0
        for lane in range(32):  # the addresses are the active lanes', in lane order
            if (m >> np.uint32(lane)) & np.uint32(1) and n < b - a:
                w = addrs[a + n] >> np.uint64(2)
                lane_w[n] = w
                lane_b[n] = np.int64(w % np.uint64(banks))
                lane_p[n] = lane // size
                n += 1
        total = 0
        for part in range(parts):
            count[:] = 0
            # limited broadcast: the lowest bank holding a repeated word, its lowest such word
            bc_bank = banks
            bc_word = np.uint64(0)
            for e in range(n):
                if lane_p[e] != part:
                    continue
                first = True
                for f in range(e):
                    if lane_p[f] == part and lane_w[f] == lane_w[e]:
                        first = False
                        break
                if limited or first:
                    count[lane_b[e]] += 1
                if (
                    limited
                    and not first
                    and (lane_b[e] < bc_bank or (lane_b[e] == bc_bank and lane_w[e] < bc_word))
                ):
                    bc_bank = lane_b[e]
                    bc_word = lane_w[e]
            if limited and bc_bank < banks:
                reps = 0
                for e in range(n):
                    if lane_p[e] == part and lane_w[e] == bc_word:
                        reps += 1
                count[bc_bank] -= reps - 1
            worst = 0
            for k in range(banks):
                if count[k] > worst:
                    worst = count[k]
            total += worst
        out[j] = max(total, 1)
    return out


def _bank_passes(
    kernel: KernelTrace, idx: np.ndarray, shared_banks: tuple[int, int, bool]
) -> np.ndarray:
    """:func:`_shared_cycles` of the kernel's shared instructions ``idx`` under
    ``shared_banks`` = (banks, warp parts, limited broadcast)."""
    banks, parts, limited = shared_banks
    return _shared_cycles(
        idx.astype(np.int64),
        kernel.mask,
        kernel.addr_ptr,
        kernel.addrs,
        int(banks),
        int(parts),
        bool(limited),
    )


def shared_bank_passes(
    kernel: KernelTrace, warp: int, shared_banks: tuple[int, int, bool]
) -> dict[int, float]:
    """Per PC of warp ``warp``'s shared-memory instructions, the mean number of bank
    passes per execution (:func:`_shared_cycles`; 1 = no conflict): where a kernel's
    bank conflicts are, for reports."""
    a, b = int(kernel.warp_ptr[warp]), int(kernel.warp_ptr[warp + 1])
    iclass = kernel.iclass[a:b]
    idx = a + np.flatnonzero((iclass == InstrClass.LD_SHARED) | (iclass == InstrClass.ST_SHARED))
    if idx.size == 0:
        return {}
    passes = _bank_passes(kernel, idx, shared_banks)
    pcs = kernel.pc[idx]
    upc, inv = np.unique(pcs, return_inverse=True)
    mean = np.bincount(inv, weights=passes) / np.bincount(inv)
    return {int(pc): float(m) for pc, m in zip(upc, mean, strict=True)}


def _ldst_per_instruction(
    kernel: KernelTrace,
    a: int,
    b: int,
    stats: PCStats | None,
    warp_mem: WarpMemTrace | None,
    l1_banks: int,
    shared_banks: tuple[int, int, bool] | None = None,
) -> np.ndarray:
    """LD/ST unit cycles of every instruction of the warp (module docstring)."""
    iclass = kernel.iclass[a:b]
    shared = np.isin(iclass, [InstrClass.LD_SHARED, InstrClass.ST_SHARED])
    shared_cycles = np.where(shared, 1.0, 0.0)
    if shared_banks is not None and shared.any():
        idx = a + np.flatnonzero(shared)
        shared_cycles[idx - a] = _bank_passes(kernel, idx, shared_banks)
    glob = np.isin(iclass, [int(c) for c in (*_LOADS, InstrClass.ST_GLOBAL)])
    served = np.zeros(b - a)  # L1 requests served without a new miss (hits, pending hits)
    if warp_mem is not None:
        served = np.maximum(warp_mem.requests - warp_mem.l1_misses, 0).astype(np.float64)
    elif stats is not None and stats.pc.size:
        execs = np.maximum(stats.executions, 1).astype(np.float64)
        (served,) = _at_pcs(stats, kernel.pc[a:b], (stats.l1_hits + stats.l1_pending_hits) / execs)
    return shared_cycles + np.where(glob, np.maximum(served / l1_banks, 1.0), 0.0)


def _miss_fraction(
    kernel: KernelTrace, a: int, b: int, stats: PCStats | None, warp_mem: WarpMemTrace | None
) -> np.ndarray:
    """Share of each instruction's L1 requests that miss: the tracked warp's own, else its
    PC's over all warps (0 without statistics)."""
    if warp_mem is not None:
        req = warp_mem.requests.astype(np.float64)
        return np.divide(warp_mem.l1_misses, req, out=np.zeros(b - a), where=req > 0)
    if stats is None or stats.pc.size == 0:
        return np.zeros(b - a)
    acc = stats.l1_accesses.astype(np.float64)
    per_pc = np.divide(stats.l1_misses, acc, out=np.zeros_like(acc), where=acc > 0)
    return _at_pcs(stats, kernel.pc[a:b], per_pc)[0]


def entry_reads(
    kernel: KernelTrace,
    a: int,
    b: int,
    starts: np.ndarray,
    is_read: np.ndarray,
    miss_fraction: np.ndarray,
    entry_bytes: int,
) -> np.ndarray:
    """Per interval (``starts``, relative to warp start ``a``), the most read instructions
    of instructions ``[a, b)`` that touch one ``entry_bytes`` L1 entry, over the entries
    whose first read in the interval misses (``miss_fraction`` of that instruction > 1/2:
    its requests miss more often than they hit); 0 when none.

    An instruction counts once per entry it touches (the coalescer sends one request per
    entry). Module docstring: what the L1 merge limit is checked against.
    """
    out = np.zeros(starts.shape[0])
    rel = np.flatnonzero(is_read)
    if rel.size == 0 or entry_bytes <= 0:
        return out
    ap = kernel.addr_ptr
    lo = ap[a + rel].astype(np.int64)
    cnt = (ap[a + rel + 1] - ap[a + rel]).astype(np.int64)
    if int(cnt.sum()) == 0:
        return out
    which = np.repeat(np.arange(rel.size), cnt)  # read instruction of each address
    pos = np.arange(which.size) - np.repeat(np.cumsum(cnt) - cnt, cnt) + lo[which]
    shift = np.uint64(int(entry_bytes).bit_length() - 1)
    entry = (kernel.addrs[pos].astype(np.uint64) >> shift).astype(np.int64)
    inst = rel[which]
    interval = np.searchsorted(starts, inst, side="right") - 1
    order = np.lexsort((inst, entry, interval))
    inst, entry, interval = inst[order], entry[order], interval[order]
    keep = np.ones(inst.size, bool)  # one count per (instruction, entry)
    keep[1:] = (inst[1:] != inst[:-1]) | (entry[1:] != entry[:-1])
    inst, entry, interval = inst[keep], entry[keep], interval[keep]
    new = np.ones(inst.size, bool)  # first read of each (interval, entry)
    new[1:] = (entry[1:] != entry[:-1]) | (interval[1:] != interval[:-1])
    first = np.flatnonzero(new)
    reads = np.diff(np.append(first, inst.size)).astype(np.float64)
    counted = miss_fraction[inst[first]] > 0.5
    np.maximum.at(out, interval[first[counted]], reads[counted])
    return out


def interval_profile(
    kernel: KernelTrace,
    warp: int,
    latencies: Latencies | None = None,
    *,
    stats: PCStats | None = None,
    warp_mem: WarpMemTrace | None = None,
    merge_threshold: float = DEFAULT_MERGE_THRESHOLD,
    l1_banks: int = 1,
    issue_width: int = 1,
    dual_issue_diff_units: bool = True,
    unit_costs: tuple[np.ndarray, np.ndarray] | None = None,
    shared_banks: tuple[int, int, bool] | None = None,
    l1_entry_bytes: int | None = None,
) -> IntervalProfile:
    """Interval profile of warp ``warp`` of ``kernel`` (module docstring).

    ``latencies`` default to :func:`default_latencies`; ``stats`` (per-PC cache
    statistics) fill the memory columns, or ``warp_mem`` (the warp's own tracked
    counters) when given. ``l1_banks``: L1 tag lookups per cycle, for the LD/ST
    column; ``issue_width > 1`` fills ``issue_slots``; ``unit_costs``
    (:func:`exec_unit_costs`) fills ``unit_cycles``; ``shared_banks`` = (banks, warp
    parts, limited broadcast) charges shared-memory bank conflicts in the LD/ST column
    (1 cycle per shared instruction without it) (module docstring);
    ``l1_entry_bytes`` (the L1's line, or sector when sectored) fills ``entry_reads``.
    """
    if l1_banks < 1:
        raise ValueError(f"l1_banks must be >= 1, got {l1_banks}")
    if issue_width < 1:
        raise ValueError(f"issue_width must be >= 1, got {issue_width}")
    if not 0 <= warp < kernel.n_warps:
        raise IndexError(f"kernel {kernel.name!r} has {kernel.n_warps} warps, no warp {warp}")
    if merge_threshold < 0:
        raise ValueError(f"merge_threshold must be >= 0, got {merge_threshold}")
    a, b = int(kernel.warp_ptr[warp]), int(kernel.warp_ptr[warp + 1])
    n = b - a
    if n == 0:
        e = np.zeros(0)
        return IntervalProfile(
            e,
            e.copy(),
            e.copy(),
            e.copy(),
            e.copy(),
            warp=warp,
            ldst_cycles=e.copy(),
            unit_cycles=None if unit_costs is None else e.copy(),
            entry_reads=None if l1_entry_bytes is None else e.copy(),
        )
    lat = (latencies or default_latencies()).per_instruction(kernel.pc[a:b], kernel.iclass[a:b])
    # the scoreboard covers the warp's own registers: sizing it from the whole kernel's
    # took 0.4 ms per call on a 373 k-instruction trace, 45 ms on a 28 M-instruction one
    dst = np.ascontiguousarray(kernel.dst[a:b])
    src = np.ascontiguousarray(kernel.src[a:b])
    n_regs = _n_regs(dst, src)
    starts = np.zeros(n, np.int64)
    stalls = np.zeros(n, np.float64)
    m = _walk(
        dst,
        src,
        lat.astype(np.float64, copy=False),
        kernel.iclass[a:b] == InstrClass.ST_GLOBAL,
        0,
        n,
        float(merge_threshold),
        np.zeros(n_regs, np.float64),
        starts,
        stalls,
    )
    starts = starts[:m]
    n_insts = np.diff(np.append(starts, n)).astype(np.float64)
    reads, writes, l2m, dram = _memory_per_instruction(kernel, a, b, stats, warp_mem)
    r = np.add.reduceat(reads, starts)
    w = np.add.reduceat(writes, starts)
    l2 = np.add.reduceat(l2m, starts)
    req = r + w
    l2_rate = np.divide(l2, req, out=np.zeros_like(req), where=req > 0)
    ldst = _ldst_per_instruction(kernel, a, b, stats, warp_mem, l1_banks, shared_banks)
    ldst = np.add.reduceat(ldst, starts)
    slots = None
    if issue_width > 1:
        joined = _issue_groups(
            dst,
            src,
            _pairing_units(unit_costs)[kernel.iclass[a:b]],
            lat.astype(np.float64, copy=False),
            int(issue_width),
            bool(dual_issue_diff_units),
            np.zeros(n_regs, np.float64),
            np.empty(b - a, np.float64),
        )
        joined[starts] = False  # an interval's first instruction opens a slot of its own
        slots = n_insts - np.add.reduceat(joined.astype(np.float64), starts)
    units = totals = None
    if unit_costs is not None:
        units, totals = _unit_cycles(kernel.iclass[a:b], starts, *unit_costs)
    per_entry = None
    if l1_entry_bytes is not None:
        is_read = _reads_and_writes(kernel, a, b)[0]
        miss = _miss_fraction(kernel, a, b, stats, warp_mem)
        per_entry = entry_reads(kernel, a, b, starts, is_read, miss, l1_entry_bytes)
    return IntervalProfile(
        entry_reads=per_entry,
        unit_cycles=units,
        unit_totals=totals,
        issue_slots=slots,
        ldst_cycles=ldst,
        n_insts=n_insts,
        stall=stalls[:m].copy(),
        read_misses=r,
        write_reqs=w,
        l2_miss_rate=np.clip(l2_rate, 0.0, 1.0),
        warp=warp,
        dram_bytes=None if dram is None else np.add.reduceat(dram, starts),
    )
