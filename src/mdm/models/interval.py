"""Shared machinery of the interval models (MDM, GPUMech family).

An interval model computes, for one *wave* (W warps resident on each of ``sms``
SMs), the per-interval terms of paper 001 eq. (1):
``C_i + S_i^MSHR + S_i^NoC + S_i^DRAM``. Their sum is the time the representative
warp (and with it the W concurrent warps) needs: ``IPC^SM = W sum(n) / sum(...)``
(eq. 1) and ``IPC = #SMs x IPC^SM``.

Kernel cycles (an open choice, decided here):

* Waves: with ``waves = n_blocks / (blocks_per_sm * active_sms) <= 1`` there is one
  wave with ``inp.warps_per_sm`` warps (the pipeline gives the actual occupancy: the
  busiest SM's), on as many SMs as hold the grid's warps at that load
  (:func:`partial_wave`). Otherwise ``floor(waves)`` full waves run with ``W =
  warps_per_sm`` warps on ``active_sms`` SMs, and the remaining ``tail_blocks`` blocks
  form a tail wave (:func:`partial_wave`) with ``W_tail = ceil(tail_blocks / sms) *
  warps_per_block`` warps each (a tail has less TLP and less contention).
* The wave times are those of the representative warp; they are scaled by
  ``total_warp_insts / (n_warps * sum(n))`` so that a representative warp shorter
  or longer than the average warp does not bias the kernel's instruction count.
  The kernel IPC is then ``total_warp_insts / cycles`` (paper 001 Section III-C:
  several kernels aggregate as total instructions over total cycles).
* Roofline floor: the interval equations can predict fewer cycles than the
  kernel's bandwidth bound (the half-latency heuristic of eq. 9 halves the queue
  time of NMD intervals whatever the traffic; GPUMech's M/D/1 queue is per
  interval). No execution can beat ``max(compute, NoC bytes/B, DRAM bytes/B)``
  from the cache statistics, nor its longest warp alone (the representative can be
  far shorter: :mod:`mdm.models.roofline`), so cycles are ``max(eq. (1) cycles,
  roofline)``; the excess goes to the binding component of the CPI stack
  (``dependency`` for the longest warp) and ``details`` records
  ``cycles_eq1``, ``roofline_cycles`` and ``roofline_bound`` (1.0 when it binds).

CPI stack (cycles per warp instruction of the whole GPU): ``C_i - S_i`` is split
into ``base`` (issue of this and the other warps' instructions: the scheduler's C_i),
``ldst`` (what the LD/ST unit's cap adds: shared-memory bank passes, L1-served
requests) and ``units`` (what the execution units' cap adds on top: initiation
intervals), :func:`mdm.models.multiwarp.profile_cycle_parts`; ``dependency``
is ``S_i`` (uncontended dependency and latency stalls), ``mshr`` the extra MSHR
batches times the uncontended latency, ``noc``/``dram`` the queueing stalls,
including the queueing part of each extra batch (so ``mshr + noc + dram =
S^MSHR + S^NoC + S^DRAM`` exactly, and ``mshr`` never grows with more MSHRs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mdm.config.gpu import GPUConfig
from mdm.models.base import KernelInput, KernelPrediction
from mdm.models.multiwarp import SchedulerView, issue_columns, profile_cycle_parts
from mdm.models.roofline import noc_bytes_per_cycle, request_bytes, roofline_bound

COMPONENTS = ("base", "dependency", "ldst", "units", "mshr", "noc", "dram")


@dataclass
class MemoryInputs:
    """Per-interval memory quantities of one wave shared by MDM and GPUMech (paper 001 eqs. 2-4, 7-8)."""

    view: SchedulerView
    c: np.ndarray  # C_i
    c_ldst: np.ndarray  # the part of C_i the LD/ST cap adds (multiwarp.profile_cycle_parts)
    c_units: np.ndarray  # the part of C_i the execution-unit cap adds
    stall: np.ndarray  # S_i
    single: np.ndarray  # n_i / IR + S_i: the warp's interval alone
    warps: int  # W (per SM, sharing the L1 MSHRs)
    sms: int  # #SMs of eq. (9)
    # #MSHRs, or the SM's NoC queue for a streaming L1 (l1_blocking_entries); per
    # interval where MDM-Pipelined's merge-limit step lowers it (mdm.models.mdm)
    mshrs: int | np.ndarray
    read: np.ndarray  # M^Read
    write: np.ndarray  # M^Write
    llc_miss: np.ndarray  # LLC miss ratio (eq. 4)
    dram_ratio: np.ndarray  # DRAM blocks moved per L1 request (eq. 8's LLCMissRatio)
    md: np.ndarray  # eq. (2)
    m: np.ndarray  # eq. (3)
    l_min_llc: float
    l_min_dram: float
    l_nocontention: np.ndarray  # eq. (4)
    l_noc_service: float  # eq. (7)
    l_dram_line: float  # f x BlockSize / B^DRAM (eq. 8 without the miss ratio)

    def base(self) -> np.ndarray:
        """The CPI stack's ``base`` per interval: ``C_i - S_i`` less the caps' shares (a
        new array; ``c_ldst`` and ``c_units`` are the stack's ``ldst`` and ``units``)."""
        b = self.c - self.stall
        b -= self.c_ldst
        b -= self.c_units
        return b

    @property
    def l_dram_service(self) -> np.ndarray:
        """Eq. (8): f x LLCMissRatio x BlockSize / B^DRAM, with the DRAM traffic the cache
        simulation measured in place of LLCMissRatio x BlockSize (``dram_ratio``)."""
        return self.dram_ratio * self.l_dram_line


def l1_blocking_entries(gpu: GPUConfig) -> int:
    """``#MSHRs`` of eqs. (2), (3) and (6): the L1's MSHR entries, and for a streaming L1
    (``l1.allocate_on == 'fill'``) paper 001 footnote 2's "SM's NoC queue" when smaller.

    Footnote 2: a streaming L1 "has sufficient MSHRs to avoid MSHR-induced blocking. In
    this case, blocking occurs when the SM's NoC queue is full, and the size of this
    queue should replace the #MSHRs". Open choice, decided here: that queue is the
    SM's injection buffer into the interconnect (``noc.sm_queue_requests``: Accel-Sim
    ``-icnt_in_buffer_limit``, 512 requests in its Volta configuration), not the L1's
    miss queue (``l1.miss_queue_entries``, 16). Mechanism: the miss queue hands one
    request per cycle to the NoC and frees its entry then, so while the NoC accepts
    requests it only paces the L1 (one miss per cycle) and never holds a miss for a
    whole memory latency; the L1 stalls for returning data, eq. (6)'s batches, only once
    the injection buffer behind it is full. Evidence (Accel-Sim SM7_QV100, whose 512
    MSHRs never fill and whose only L1 reservation fails are a full miss queue,
    docs/measurement-log.md): the 11 baselines predicted with #MSHRs = 512 vs 16 (the miss queue):
    ``mdm-pipelined`` 18 % vs 72 % mean |IPC error|, and with the same L1 made streaming
    (allocate on fill) the miss-queue reading predicted 3-15x the simulated cycles (vecadd
    -93 %, gather -88 %), while this reading gives the allocate-on-miss errors.
    """
    entries = gpu.l1.mshr_entries
    if gpu.l1.allocate_on == "fill":
        return min(entries, gpu.noc.sm_queue_requests)
    return entries


def md_and_m(
    read: np.ndarray, write: np.ndarray, warps: int, mshrs: int | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(md, M)`` per interval: eq. (2) ``M^Read x W > #MSHRs`` and eq. (3) ``M =
    min(M^Read W, #MSHRs) + M^Write W``."""
    return read * warps > mshrs, np.minimum(read * warps, mshrs) + write * warps


def memory_inputs(inp: KernelInput, warps: int, sms: int) -> MemoryInputs:
    """Evaluate eqs. (2)-(4), (7), (8) of paper 001 for ``warps`` warps per SM on ``sms`` SMs.

    Open choices: ``L^MinLLC = l1.hit_latency_cycles + l2_hit_latency_cycles`` (the
    config's L2 figure is the round trip after the L1 pipeline); ``L^MinDRAM =
    dram_latency_cycles``. BlockSize is one L1 request (line, or sector for a
    sectored L1). B^NoC and B^DRAM are the *total* bandwidths of the config, i.e.
    ``n`` channels times one channel's bandwidth, so the paper's "divide the
    service latency by n to model an n-channel system" is already done: the NoC's
    "n" is the number of its L2-side ports, which the total bandwidth accounts for.
    B^NoC is what the ``sms`` active SMs can draw: ``min(total, sms x per-SM
    ejection port)`` (:func:`mdm.models.roofline.noc_bytes_per_cycle`). Mechanism:
    every reply to an SM crosses that SM's port (one flit per cycle in the
    reference simulator), so 14 SMs reach 552 GB/s of the 1075 (reference README).
    Effect on the 83 reference runs: MDM 32.2% -> 31.7% mean |error| (n_sm = 14:
    kmeans +141% -> +50%), GPUMech 48.9% -> 45.4% (via the roofline); no baseline
    run changes (all SMs active).

    Eq. (8)'s ``LLCMissRatio x BlockSize`` (open choice, decided here): the DRAM bytes
    the cache simulation saw the interval's requests move (``profile.dram_bytes``:
    fetches, plus write-backs of the dirty lines they evict), per request; the paper's
    product when the profile has none. Mechanism: a store that misses the write-back,
    write-allocate L2 allocates without a DRAM transfer, and its data reach DRAM only when
    the line is evicted (GPGPU-Sim), while the miss ratio charged it a full transfer.
    Reference: Accel-Sim moves 0 DRAM write bytes in all SM7_QV100 baselines (the cache
    simulation also 0) and 6008 atoms in mdm_pascal vecadd (ours 6796). Effect on
    ``mdm-pipelined`` (83 runs): MD+NMD 16.9 -> 15.6 %, mdm_pascal baselines 15.7 ->
    13.2 %, SM7_QV100 baselines 21.0 -> 22.0 % (vecadd -18 -> -1 %, gather -20 -> -15 %,
    but stencil2d +44 -> +63 % and gemm_tiled +59 -> +73 %, whose store intervals' DRAM
    charge had hidden part of their missing request-side stall, docs/measurement-log.md). Eq. (4)
    keeps the miss ratio (the latency of a read that misses).
    """
    gpu = inp.gpu
    prof = inp.profile
    parts = profile_cycle_parts(gpu, prof, warps)
    c, view = parts.c, parts.view
    units, rate = issue_columns(gpu, prof, view)
    mshrs = l1_blocking_entries(gpu)  # #MSHRs of eqs. (2), (3), (6); footnote 2
    read = prof.read_misses
    write = prof.write_reqs
    miss = prof.l2_miss_rate
    md, m = md_and_m(read, write, warps, mshrs)  # eqs. (2), (3)
    l_min_llc = gpu.l1.hit_latency_cycles + gpu.l2_hit_latency_cycles
    l_min_dram = gpu.dram_latency_cycles
    l0 = l_min_llc + miss * l_min_dram  # eq. (4)
    block = request_bytes(gpu)
    l_noc = block / noc_bytes_per_cycle(gpu, sms)  # eq. (7): f x BlockSize / B^NoC
    l_dram = block / gpu.dram_bytes_per_cycle  # eq. (8) without LLCMissRatio
    dram_ratio = miss
    if prof.dram_bytes is not None:  # measured: DRAM blocks per request (docstring)
        req = (read + write) * block
        dram_ratio = np.divide(prof.dram_bytes, req, out=np.zeros_like(req), where=req > 0)
    return MemoryInputs(
        view=view,
        c=c,
        c_ldst=parts.ldst,
        c_units=parts.units,
        stall=prof.stall,
        single=units / rate + prof.stall,
        warps=warps,
        sms=sms,
        mshrs=mshrs,
        read=read,
        write=write,
        llc_miss=miss,
        dram_ratio=dram_ratio,
        md=md,
        m=m,
        l_min_llc=float(l_min_llc),
        l_min_dram=float(l_min_dram),
        l_nocontention=l0,
        l_noc_service=float(l_noc),
        l_dram_line=float(l_dram),
    )


@dataclass
class WaveTerms:
    """Per-interval CPI-stack terms of one wave, summing to eq. (1)'s denominator."""

    base: np.ndarray
    dependency: np.ndarray
    ldst: np.ndarray
    units: np.ndarray
    mshr: np.ndarray
    noc: np.ndarray
    dram: np.ndarray
    md: np.ndarray
    details: dict[str, float] = field(default_factory=dict)

    def totals(self) -> dict[str, float]:
        return {k: float(getattr(self, k).sum()) for k in COMPONENTS}

    @property
    def time(self) -> float:
        return sum(self.totals().values())


def stack_terms(
    mi: MemoryInputs,
    s_noc: np.ndarray,
    s_dram: np.ndarray,
    batches: np.ndarray,
    queue_in_mshr: bool,
    details: dict[str, float],
) -> WaveTerms:
    """Assemble the CPI-stack terms from the queue stalls and the extra-batch factor.

    ``S^MSHR = batches x L`` with ``L = L^NoContention + S^NoC + S^DRAM`` when
    ``queue_in_mshr`` (MDM eq. 5-6, GPUMech+) or ``L = L^NoContention`` (GPUMech).
    """
    q = batches if queue_in_mshr else np.zeros_like(batches)
    return WaveTerms(
        base=mi.base(),
        dependency=mi.stall.copy(),
        ldst=mi.c_ldst,
        units=mi.c_units,
        mshr=batches * mi.l_nocontention,
        noc=(1.0 + q) * s_noc,
        dram=(1.0 + q) * s_dram,
        md=mi.md,
        details=details,
    )


def check_input(inp: KernelInput) -> None:
    """Reject inputs no model can use, naming the kernel and the field."""
    p = inp.profile
    problems = []
    if p.n_intervals == 0 or p.total_insts <= 0:
        problems.append("the representative warp's profile has no instructions")
    if inp.total_warp_insts <= 0:
        problems.append(f"total_warp_insts={inp.total_warp_insts} must be > 0")
    for name in ("warps_per_sm", "blocks_per_sm", "active_sms", "n_blocks", "warps_per_block"):
        if getattr(inp, name) < 1:
            problems.append(f"{name}={getattr(inp, name)} must be >= 1")
    for name in ("n_insts", "stall", "read_misses", "write_reqs", "l2_miss_rate"):
        col = getattr(p, name)
        if not np.all(np.isfinite(col)) or np.any(col < 0):
            problems.append(f"profile.{name} must be finite and >= 0")
    if np.any(p.l2_miss_rate > 1):
        problems.append("profile.l2_miss_rate must be <= 1")
    if problems:
        raise ValueError(f"kernel {inp.name!r}: " + "; ".join(problems))


WaveFn = Callable[[KernelInput, int, int], WaveTerms]


def partial_wave(blocks: int, sms: int, warps_per_block: int) -> tuple[int, int]:
    """``(W, #SMs)`` of a wave of ``blocks`` blocks over ``sms`` SMs with room for all:
    ``W`` the warps of the busiest SM, ``ceil(blocks / sms)`` blocks, whose time the wave
    takes, and ``#SMs = ceil(blocks / (W / warps_per_block))``, so that ``#SMs x W``
    counts the wave's warps (rounded up to whole SMs) rather than every SM at the
    busiest one's load: eqs. (9)-(10) charge each of ``#SMs`` SMs ``W`` warps' requests.
    E.g. 128 blocks on 112 SMs: W = 2 blocks' warps on 64 SMs, not 112 (224 blocks)."""
    per_sm = math.ceil(blocks / sms)
    return per_sm * warps_per_block, math.ceil(blocks / per_sm)


def first_wave(inp: KernelInput) -> tuple[int, int]:
    """``(W, #SMs)`` of the kernel's first (full) wave: ``(warps_per_sm, active_sms)``,
    or :func:`partial_wave`'s when the grid does not fill one wave."""
    if inp.waves < 1:
        return partial_wave(inp.n_blocks, inp.active_sms, inp.warps_per_block)
    return inp.warps_per_sm, inp.active_sms


def tail_wave(inp: KernelInput) -> tuple[int, int] | None:
    """``(W, #SMs)`` (:func:`partial_wave`) of the partial last wave when the blocks fill
    more than one wave and leave a remainder, else None."""
    if inp.waves > 1:
        full = math.floor(inp.waves)
        tail_blocks = inp.n_blocks - full * inp.blocks_per_sm * inp.active_sms
        if tail_blocks > 0:
            return partial_wave(tail_blocks, inp.active_sms, inp.warps_per_block)
    return None


def final_wave(inp: KernelInput) -> tuple[int, int]:
    """``(W, #SMs)`` of the kernel's last wave: :func:`tail_wave`'s, else the first's."""
    return tail_wave(inp) or first_wave(inp)


def predict_interval_model(
    model: str,
    inp: KernelInput,
    wave: WaveFn,
    kernel_terms: dict[str, float] | None = None,
    final_terms: Callable[[WaveTerms], dict[str, float]] | None = None,
) -> KernelPrediction:
    """Kernel prediction from a per-wave model (waves, tail, scaling, roofline floor: module doc).

    ``kernel_terms``: whole-kernel cycles added to the named components after the waves
    are summed and scaled (before the roofline floor); ``final_terms``: more of them,
    taken from the terms of the kernel's last wave (:func:`final_wave`: the tail when
    there is one, else the full wave).
    """
    check_input(inp)
    waves = inp.waves
    main = wave(inp, *first_wave(inp))
    last = main
    totals = main.totals()
    details = dict(main.details)
    if waves > 1:
        full = math.floor(waves)
        totals = {k: v * full for k, v in totals.items()}
        tail = tail_wave(inp)
        if tail is not None:
            w_tail, sms_tail = tail
            last = wave(inp, w_tail, sms_tail)
            for k, v in last.totals().items():
                totals[k] += v
            details["tail_warps_per_sm"] = float(w_tail)
            details["tail_sms"] = float(sms_tail)
        details["full_waves"] = float(full)
    scale = inp.total_warp_insts / (inp.n_warps * inp.profile.total_insts)
    details.update(
        waves=float(waves),
        rep_warp_scale=float(scale),
        wave_cycles=main.time,
        ipc_sm_eq1=inp.warps_per_sm * inp.profile.total_insts / main.time,
    )
    totals = {k: v * scale for k, v in totals.items()}
    for k, v in (kernel_terms or {}).items():
        totals[k] += v
    for k, v in (final_terms(last) if final_terms else {}).items():
        totals[k] += v
    return finish_prediction(model, inp, totals, details, float(np.mean(main.md)))


def finish_prediction(
    model: str,
    inp: KernelInput,
    totals: dict[str, float],
    details: dict[str, float],
    md_fraction: float | None = None,
) -> KernelPrediction:
    """Kernel prediction from whole-kernel component cycles, floored at the roofline.

    The excess of the roofline over ``sum(totals)`` goes to the binding component
    (``base``, ``noc``, ``dram`` or ``dependency``); ``details`` gets ``cycles_eq1`` (the
    model's own cycles), ``roofline_cycles``, ``roofline_bound`` and
    ``longest_warp_cycles`` (the latency bound, :mod:`mdm.models.roofline`).
    """
    totals = dict(totals)
    cycles_eq = sum(totals.values())
    bound = roofline_bound(inp)
    cycles = cycles_eq
    if bound.cycles > cycles_eq:
        totals[bound.binding] = totals.get(bound.binding, 0.0) + bound.cycles - cycles_eq
        cycles = bound.cycles
    n = inp.total_warp_insts
    details = dict(details)
    details.update(
        cycles_eq1=float(cycles_eq),
        roofline_cycles=bound.cycles,
        roofline_bound=float(bound.cycles > cycles_eq),
        longest_warp_cycles=bound.latency,
    )
    return KernelPrediction(
        model=model,
        kernel=inp.name,
        cycles=float(cycles),
        warp_insts=n,
        cpi_stack={k: v / n for k, v in totals.items()},
        md_fraction=md_fraction,
        details=details,
    )


def common_details(mi: MemoryInputs) -> dict[str, float]:
    """Debugging values shared by the interval models."""
    return {
        "W": float(mi.warps),
        "W_sc": float(mi.view.warps),
        "IR": mi.view.issue_rate,
        "sms": float(mi.sms),
        "mshrs": float(mi.mshrs),
        "M_mean": float(mi.m.mean()),
        "L_MinLLC": mi.l_min_llc,
        "L_MinDRAM": mi.l_min_dram,
        "L_NoContention_mean": float(mi.l_nocontention.mean()),
        "L_NoCService": mi.l_noc_service,
        "L_DRAMService_mean": float(mi.l_dram_service.mean()),
        "C_total": float(mi.c.sum()),
    }
