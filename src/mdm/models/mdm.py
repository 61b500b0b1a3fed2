"""MDM, the Memory Divergence Model (paper 001 Section III-C), and its Table V hybrids.

Per interval of the representative warp (``W`` warps per SM, ``#SMs`` active SMs):

* eq. (2) MD-interval: ``M^Read x W > #MSHRs``;
* eq. (3) ``M = min(M^Read W, #MSHRs) + M^Write W``;
* eq. (4) ``L^NoContention = L^MinLLC + LLCMissRate x L^MinDRAM``;
* eq. (7) ``L^NoCService = f BlockSize / B^NoC``; eq. (8) ``L^DRAMService = f
  LLCMissRatio BlockSize / B^DRAM`` (total bandwidths: see
  :func:`mdm.models.interval.memory_inputs`);
* eq. (10) NoC saturated: ``L^NoCService x M x #SMs > L^MinLLC + L^MinDRAM``;
* eq. (9) ``S^NoC = #SMs M L^NoCService`` if MD and saturated, else half of it;
  ``S^DRAM`` is the same expression with ``L^DRAMService`` ("we can use the same
  model for both NoC and DRAM stalls"). Open choice: the case split of ``S^DRAM``
  uses the same condition (MD and eq. (10) NoC saturation): eq. (10) is the test
  that TLP latency hiding broke down in the interval, which exposes every queue;
  the authors' script (wanglu1991/MDM-instrumentation ``contention_NoC_modeling``)
  likewise applies one MD condition to the combined NoC+DRAM service time;
* eq. (5) ``S^Mem = L^NoContention + S^NoC + S^DRAM``;
* eq. (6) ``S^MSHR = (ceil(M^Read W / #MSHRs) - 1) S^Mem`` for MD intervals, else 0;
* eq. (1) ``IPC^SM = W sum(n) / sum(C_i + S^MSHR + S^NoC + S^DRAM)``.

Footnote 2: for a streaming L1 (``l1.allocate_on == 'fill'``) the SM's NoC queue,
``noc.sm_queue_requests`` (the SM's injection buffer into the interconnect), replaces
``#MSHRs`` in eqs. (2), (3) and (6) when it is the smaller
(:func:`mdm.models.interval.l1_blocking_entries`, which says why not the L1's miss queue).

MDM-Queue = MDM's queue model (eqs. 7-10) + GPUMech+'s MSHR model; MDM-MSHR =
GPUMech+'s NoC/DRAM queues + MDM's batching model (eqs. 5-6) (Table V).

MDM-Pipelined (``mdm-pipelined``, our variant, not in the paper): MDM with each
extra batch of eq. (6) lasting ``max(L^NoContention, S^NoC, S^DRAM)`` instead of
eq. (5)'s sum. Mechanism: in the reference simulator an MSHR is freed as soon as
its own fill returns and the blocked L1 then takes the next miss, so the batches
overlap: the in-flight requests of all SMs drain through the NoC and the DRAM
*concurrently* (both pipelined), and a batch lasts as long as its slowest stage;
the uncontended latency is paid once per batch only when no queue is longer.
Evidence: mdm_pascal bw_dram (each line once, 8 batches per interval) measures
an average L1-miss latency (``avg_mem_fetch_latency``) of 1411 cycles, close to
S^DRAM = 1337 of one batch, while eq. (5) gives 334 + 597 + 1337 = 2268. The final
batch keeps eq. (9)'s ``S^NoC + S^DRAM`` and eqs. (2), (3), (6)-(10) are unchanged.
Effect on the 83 reference runs (mean |IPC error|, MD+NMD): 32.8% for ``mdm`` ->
19.3% (MD 30.8% -> 14.2%; mdm_pascal baselines 32.9% -> 18.6%, SM7_QV100 33.3% ->
24.7%; gather mdm_pascal -50% -> -6%, bw_dram -40% -> -8%).

Fractional batches (second step of the same variant, :func:`pipelined_extra_batches`):
the number of extra batches is ``M^Read W / #MSHRs - 1`` for MD intervals (eq. 2
still decides which intervals are MD) instead of eq. (6)'s ``ceil(...) - 1``.
Mechanism: with MSHRs released one by one, the pool is a throughput limit (Little's
law: at most ``#MSHRs`` misses in flight, each for one batch time), so ``R = M^Read
W`` misses take ``R / #MSHRs`` batch times, not a whole extra batch for the last
few. It matters at the eq. (2) threshold: mdm_pascal gemm_tiled reads 2.11 lines
per warp x 64 warps = 135 against 128 MSHRs, so ``ceil`` adds a whole 597-cycle
batch for 7 misses while 135/128 - 1 = 0.055 batch. Effect on the 83 runs (mean
|IPC error| of ``mdm-pipelined``, MD+NMD): 19.3% -> 17.8% (MD 14.2% -> 13.7%, NMD
33.2% -> 28.8%; gemm_tiled mdm_pascal -36% -> -24%, stencil2d -43% -> -37%,
spmv_csr -16% -> -8%; SM7_QV100 stride32 -5% -> +15%; calibration kernels 6.7% ->
7.7%: bw_l2 SM7_QV100 +9% -> +21%). ``mdm`` and the other models are unchanged.

L2 merge-limit blocking (third step, :func:`l2_merge_block_stall`): the kernel's
``mshr`` term gains the cache simulation's ``l2_blocked_cycles / l2.banks``, the mean
time an L2 bank's input was blocked by a read whose L2 MSHR entry had no merge slot
left (the bank serves nothing until that line's fill returns). Mechanism: when many
SMs read the same line at once (gemm_tiled's shared tiles), Accel-Sim's L2 fails the
extra reads (``MSHR_MERGE_ENRTY_FAIL``: 57,727 retry cycles on SM7_QV100, max merge
4; 11,186 on mdm_pascal) and every request behind them at that bank waits. Whole
kernel, added once after the waves (the cache simulation covers all of them). Choice:
the mean over banks (requests spread evenly over the banks by the address mapping).
Effect on the 83 reference runs (``mdm-pipelined``): SM7_QV100 baselines 21.45% ->
21.0% (gemm_tiled +65% -> +59%, spmv_csr +0.3% -> -2.9%), mdm_pascal baselines
15.6% -> 15.7% (gemm_tiled -23% -> -24%), MD+NMD 16.9% unchanged. The simulated
blocking was far below Accel-Sim's (per bank: gemm_tiled 146 vs 902 cycles on
SM7_QV100, 123 vs 466 on mdm_pascal; spmv_csr 331 vs 405 on SM7_QV100) until the
cache simulation stopped delaying the L2's view of a request by its reply's NoC slot
(2026-11-25): gemm_tiled 624 and 344, spmv_csr 1,145 (SM7_QV100) and 1 (mdm_pascal,
Accel-Sim 165); gemm_tiled on SM7_QV100 +66% -> +44%, spmv_csr -3% -> -12%.

Kernel end (fourth step, :func:`kernel_end_drain`): the kernel's ``noc`` and ``dram``
terms gain, once, the part of its last wave's *last* interval's queue that eq. (9)
leaves unexposed (half the drain, unless the interval is MD and saturated).
Mechanism: eq. (9)'s half drain is the mean wait of an interval's requests, all
queued together (the model's saturation assumption), but a kernel ends with its last
request (a load, or the last store's acknowledgement, which the warp waits for:
:mod:`mdm.profile.interval`), and that one waits for the whole drain. Evidence:
Accel-Sim's scheduler cycles with no warp left (``W0_Idle``, per scheduler: the
kernel's tail) against this term, baselines: SM7_QV100 vecadd 247 vs 185 cycles,
stencil2d 525 vs 370 (two kernels), gemm_tiled 357 vs 185, spmv_csr 422 vs 185,
kmeans 430 vs 185, gather 500 vs 185; mdm_pascal vecadd 198 vs 173, stencil2d 348 vs
340, gemm_tiled 397 vs 633, spmv_csr 486 vs 159, kmeans 182 vs 149, gather 641 vs
159 (stride1 and stride32: 100-366 vs 0, their last interval has no queue left
hidden). The idle cycles also hold the SMs that run fewer blocks, so they bound the
tail from above; the term stays below them in 15 of 16 runs. Effect on the 83
reference runs (``mdm-pipelined``): SM7_QV100 baselines 20.2% -> 17.8% (stencil2d
+47% -> +29%, gemm_tiled +70% -> +62%, vecadd -4% -> -7%), mdm_pascal baselines
13.4% -> 14.5% (stencil2d -32% -> -34%, gemm_tiled -24% -> -28%: both were too slow
already, see docs/measurement-log.md), MD+NMD 15.7% -> 16.1% (MD 13.2% -> 13.4%, NMD 22.4% ->
23.6%). It applies to every scheduler: limiting it to loose round robin (whose
lockstep warps queue their last requests together) would leave mdm_pascal unchanged,
but the idle tails above are as long under greedy-then-oldest.

Graded exposure (fifth step, :func:`queue_exposure`): an MD interval that saturates
the NoC exposes ``1 - 0.5 #MSHRs / (M^Read W)`` of eq. (9)'s queues instead of all of
them (the kernel-end drain takes the rest). Mechanism: eq. (9) exposes the whole
queue of an MD interval because "the SM is not able to use TLP to hide memory
latency due to a lack of MSHRs", but only the reads beyond the first ``#MSHRs`` wait
for an MSHR; the first ``#MSHRs`` issue at once, as in an NMD interval, for which
eq. (9) takes half the queue as hidden. Weighting the two shares gives 1/2 at eq.
(2)'s threshold and tends to 1 as the reads outgrow the MSHRs (stride32 on
mdm_pascal: 2,048 reads per 128 MSHRs, 0.97), so the prediction no longer jumps when
eq. (2) turns true: with eq. (9)'s step, 5 % more L1 misses tripled the ``mdm``
cycles of the built-in stride kernel on a titan_v whose representative warp sat at
``M^Read W`` = 512 = ``#MSHRs`` (docs/measurement-log.md). No constant is fitted. Effect on
the 83 reference runs (``mdm-pipelined``): MD+NMD 14.7% -> 13.1% (MD 11.8% -> 12.0%,
NMD 22.6% -> 16.0%, calibration kernels 6.9% -> 4.1%), baselines mdm_pascal 14.0% ->
11.1%, SM7_QV100 18.4% -> 16.0% (mdm_pascal stencil2d -33% -> -20%, gemm_tiled -29%
-> -21%, spmv_csr -9% -> +8%, stride32 +13% -> +16%; SM7_QV100 stride32 -10% -> +7%,
gather -17% -> -6%), mean Spearman 0.86 -> 0.88.

L1 merge limit (sixth step, :func:`merge_blocked`): under a greedy-then-oldest
scheduler, an interval whose representative warp reads one L1 MSHR entry more than
``l1.mshr_max_merge`` times (``profile.entry_reads``: counted over the entries whose
first read in the interval misses, :mod:`mdm.profile.interval`) takes ``min(#MSHRs,
schedulers x M^Read)`` for eqs. (2), (3) and (6)'s ``#MSHRs``. Mechanism: the read
that finds its entry's merge slots full blocks the L1 until that entry's fill
returns (GPGPU-Sim ``MSHR_MERGE_ENRTY_FAIL``), and GTO keeps each scheduler on its
greedy warp until that warp stalls, so when the L1 blocks the misses in flight are
those of at most one warp per scheduler: the SM's misses go out in rounds of
``schedulers x M^Read``, not of ``#MSHRs``. Under loose round robin every warp issues
its first load before any issues the blocking one, so the MSHRs bound as in eq. (2).
Evidence: mdm_pascal kmeans (16 loads per warp read the same 16 lines; 8 merges per
entry) blocks on merge slots only in Accel-Sim (318,484 retry cycles, no MSHR-entry
fail): its cycles are flat from 64 to 256 MSHRs (46,787 to 46,624), where eq. (2)
with 128 MSHRs predicted 56,688 (-18 %) and 46,183 only at 64 (= 4 schedulers x 16).
SM7_QV100 kmeans (loose round robin; 8 reads per 32 B sector entry, within its 8
merges) and every other reference kernel (at most 3 reads per entry) are unchanged.
Effect on the 83 reference runs (``mdm-pipelined``): MD+NMD 10.1% -> 9.1% (MD 8.7%
-> 7.4%), mdm_pascal baselines 10.1% -> 8.0% (kmeans -18% -> +1%; DRAM x0.5 -28% ->
-2%, 1.0 GHz -22% -> -9%, but 2.0 GHz -10% -> +16%), mean Spearman 0.88 -> 0.94; the
largest rise of predicted cycles with more L1 MSHRs (mdm_pascal reference traces, 16
to 512 entries in steps of 16) 23% (kmeans, 64 -> 80) -> 17% (stencil2d, 64 -> 80).

Bandwidth floor (seventh step, :func:`bandwidth_floor`): an interval lasts at least
``#SMs (M^Read + M^Write) W max(L^NoCService, L^DRAMService)``, the time the NoC (eq. 7)
or the DRAM (eq. 8) needs to move all its requests, the reads beyond the MSHRs
included; a shorter interval is lengthened to it, the shortfall charged to the binding
resource. Mechanism: the model already takes every SM through the same interval at once
(eq. 9's ``#SMs M``), and then no interval can end before its requests have crossed the
busier of the two; eq. (9) exposes half an NMD interval's queue, and batches overlap
(first step), so a bandwidth-bound interval could come out shorter than its own
transfer time. The whole-kernel roofline bounds only the sum: an interval that reads
much from the L2 next to one that computes or reads from DRAM still fit under it. The
kernel-end drain (fourth step) drops what such a lengthened last interval already
waited for. Effect on the 83 reference runs (``mdm-pipelined``): MD+NMD 9.1% -> 8.9%
(MD 7.4% -> 6.9%, NMD 14.0% -> 14.2%, calibration kernels 4.1% -> 3.3%), mean Spearman
0.94 unchanged; bw_l2 NoC x2 +13.2% -> +5.8%, spmv_csr NoC x2 +25.9% -> +15.9%, gather
64 MSHRs +9.8% -> +4.0%; baselines mdm_pascal 8.0% -> 8.1% (vecadd -2.7% -> -3.5%),
SM7_QV100 13.1% -> 13.4% (spmv_csr -11.6% -> -14.0%: its intervals alternate between L2
and DRAM reads, which warps at different phases overlap in the simulator).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from mdm.models.base import KernelInput, KernelPrediction, Model, register
from mdm.models.gpumech import gpumech_mshr_factor, gpumech_queue_stalls
from mdm.models.interval import (
    MemoryInputs,
    WaveTerms,
    common_details,
    final_wave,
    md_and_m,
    memory_inputs,
    predict_interval_model,
    stack_terms,
)


def merge_blocked(inp: KernelInput, mi: MemoryInputs) -> tuple[MemoryInputs, np.ndarray]:
    """MDM-Pipelined's L1 merge limit (sixth step of the module docstring): ``(inputs,
    blocked)``, with eqs. (2), (3) and (6)'s ``#MSHRs`` lowered to ``min(#MSHRs,
    schedulers x M^Read)`` in the ``blocked`` intervals: under a greedy-then-oldest
    scheduler, those whose representative warp reads one L1 entry more than
    ``l1.mshr_max_merge`` times (``profile.entry_reads``). ``mi`` itself when none is."""
    reads = inp.profile.entry_reads
    gpu = inp.gpu
    none = np.zeros(mi.read.shape, bool)
    if reads is None or gpu.sm.scheduler_policy != "gto":
        return mi, none
    blocked = (reads > gpu.l1.mshr_max_merge) & (mi.read > 0)
    if not blocked.any():
        return mi, none
    entries = np.where(blocked, np.minimum(mi.mshrs, gpu.sm.schedulers * mi.read), mi.mshrs)
    md, m = md_and_m(mi.read, mi.write, mi.warps, entries)  # eqs. (2), (3)
    return replace(mi, mshrs=entries, md=md, m=m), blocked


def noc_saturated(mi: MemoryInputs) -> np.ndarray:
    """Eq. (10): ``L^NoCService x M x #SMs > L^MinLLC + L^MinDRAM``."""
    return mi.l_noc_service * mi.m * mi.sms > mi.l_min_llc + mi.l_min_dram


def queue_exposure(mi: MemoryInputs, graded: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(exposed, saturated)`` per interval: the share of eq. (9)'s queue the SM stalls for.

    Eq. (9): 1 if the interval is MD (eq. 2) and the NoC saturated (eq. 10), else 1/2.
    ``graded`` (MDM-Pipelined, fifth step of the module docstring): an MD saturated
    interval exposes ``1 - 0.5 #MSHRs / (M^Read W)``, the first ``#MSHRs`` of its read
    misses half hidden as in an NMD interval and the rest fully exposed.
    """
    sat = noc_saturated(mi)  # eq. (10)
    full: np.ndarray | float = 1.0
    if graded:
        demand = np.asarray(mi.read * mi.warps, dtype=float)
        served = np.ones_like(demand)  # share of the reads the MSHRs take at once
        np.divide(mi.mshrs, demand, out=served, where=demand > mi.mshrs)
        full = 1.0 - 0.5 * served
    return np.where(mi.md & sat, full, 0.5), sat


def mdm_queue_stalls(
    mi: MemoryInputs, graded: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S^NoC, S^DRAM, saturated)`` per interval: eq. (9) with eqs. (7), (8), (10)
    (``graded``: :func:`queue_exposure`'s MDM-Pipelined exposure)."""
    exposed, sat = queue_exposure(mi, graded)
    s_noc = exposed * mi.sms * mi.m * mi.l_noc_service  # eq. (9) with eq. (7)
    s_dram = exposed * mi.sms * mi.m * mi.l_dram_service  # eq. (9) with eq. (8)
    return s_noc, s_dram, sat


def mdm_extra_batches(mi: MemoryInputs) -> np.ndarray:
    """Eq. (6)'s factor: ``ceil(M^Read W / #MSHRs) - 1`` for MD intervals (eq. 2), else 0."""
    return np.where(mi.md, np.ceil(mi.read * mi.warps / mi.mshrs) - 1.0, 0.0)


def pipelined_extra_batches(mi: MemoryInputs) -> np.ndarray:
    """MDM-Pipelined's extra batches: ``M^Read W / #MSHRs - 1`` for MD intervals (eq. 2), else 0.

    Eq. (6) without the ceiling: the MSHR pool as a throughput limit (module docstring).
    """
    return np.where(mi.md, np.maximum(mi.read * mi.warps / mi.mshrs - 1.0, 0.0), 0.0)


def l2_merge_block_stall(inp: KernelInput) -> float:
    """MDM-Pipelined's L2 merge-limit stall: the mean cycles an L2 bank was blocked.

    ``inp.cache.l2_blocked_cycles / l2.banks`` (module docstring, third step). Whole
    kernel, in the ``mshr`` component; 0 when no L2 read found its entry full.
    """
    return inp.cache.l2_blocked_cycles / inp.gpu.l2.banks


def kernel_end_drain(inp: KernelInput) -> tuple[float, float]:
    """MDM-Pipelined's kernel-end ``(noc, dram)`` cycles (module docstring, fourth step).

    The last interval's eq. (9) queue not already exposed, in the kernel's last wave
    (:func:`~mdm.models.interval.final_wave`): ``(1 - e) #SMs M L^Service`` with ``e``
    MDM-Pipelined's exposure (:func:`queue_exposure`, graded), less the cycles that
    interval was lengthened to its :func:`bandwidth_floor` (scaled down together);
    ``(0, 0)`` for a profile without intervals. The same figures as the final wave's
    :func:`pipelined_stack_terms` (``details["end_noc"]``, ``["end_dram"]``), which
    :class:`MDMPipelined` takes without evaluating that wave again.
    """
    if inp.profile.n_intervals == 0:
        return 0.0, 0.0
    last = _wave("mdm", "mdm", pipelined=True)(inp, *final_wave(inp))
    return last.details["end_noc"], last.details["end_dram"]


def _last_interval_drain(
    mi: MemoryInputs, s_noc: np.ndarray, s_dram: np.ndarray, short: np.ndarray
) -> tuple[float, float]:
    """The last interval's eq. (9) queue that its ``s_noc`` / ``s_dram`` do not expose
    (``#SMs M L^Service - S``, i.e. ``(1 - e) #SMs M L^Service``), scaled down so that
    the cycles the interval was lengthened to its floor (``short``) are not paid twice:
    a last interval lengthened to its bandwidth floor has moved its requests already."""
    if mi.c.size == 0:
        return 0.0, 0.0
    queue = float(mi.sms * mi.m[-1])
    noc = queue * float(mi.l_noc_service) - float(s_noc[-1])
    dram = queue * float(mi.l_dram_service[-1]) - float(s_dram[-1])
    if noc + dram <= 0:
        return 0.0, 0.0
    keep = max(noc + dram - float(short[-1]), 0.0) / (noc + dram)
    return noc * keep, dram * keep


def bandwidth_floor(mi: MemoryInputs) -> tuple[np.ndarray, np.ndarray]:
    """MDM-Pipelined's per-interval bandwidth floor (seventh step of the module docstring).

    ``(#SMs (M^Read + M^Write) W L^NoCService, #SMs (M^Read + M^Write) W L^DRAMService)``
    per interval: the cycles the NoC (eq. 7) and the DRAM (eq. 8) need to move all the
    interval's requests of every SM, the reads beyond the MSHRs included (eq. 3 caps
    ``M`` at ``#MSHRs``; the floor does not). An interval lasts at least the larger.
    """
    demand = mi.sms * (mi.read + mi.write) * mi.warps
    return demand * mi.l_noc_service, demand * mi.l_dram_service


def floor_shortfall(mi: MemoryInputs, time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(shortfall, noc_binds)``: per interval, the cycles ``time`` falls short of its
    :func:`bandwidth_floor`, and whether the NoC's floor is the larger (ties: NoC)."""
    floor_noc, floor_dram = bandwidth_floor(mi)
    return np.maximum(np.maximum(floor_noc, floor_dram) - time, 0.0), floor_noc >= floor_dram


def pipelined_queues(
    mi: MemoryInputs, s_noc: np.ndarray, s_dram: np.ndarray, batches: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MDM-Pipelined's ``(mshr, noc, dram)`` per interval before the bandwidth floor:
    ``batches`` extra batches of ``max(L, S^NoC, S^DRAM)`` (``mshr`` takes ``batches x
    L``, the longer queue the excess; NoC on ties) after the final one's eq. (9) queues."""
    l0 = mi.l_nocontention
    excess = batches * np.maximum(np.maximum(s_noc, s_dram) - l0, 0.0)
    noc_binds = s_noc >= s_dram
    noc = s_noc + np.where(noc_binds, excess, 0.0)
    dram = s_dram + np.where(noc_binds, 0.0, excess)
    return batches * l0, noc, dram


def pipelined_stack_terms(
    mi: MemoryInputs,
    s_noc: np.ndarray,
    s_dram: np.ndarray,
    batches: np.ndarray,
    details: dict[str, float],
) -> WaveTerms:
    """CPI-stack terms of MDM-Pipelined: each extra batch lasts ``max(L, S^NoC, S^DRAM)``.

    ``L = L^NoContention``. Stack: ``mshr`` gets ``batches x L``, the excess of the
    longer queue over ``L`` per batch goes to ``noc`` or ``dram`` (the longer one,
    NoC on ties), on top of the final batch's ``S^NoC`` and ``S^DRAM``. An interval
    shorter than its :func:`bandwidth_floor` is lengthened to it, the shortfall going to
    the resource of the larger floor (NoC on ties). ``details`` gets the last
    interval's kernel-end drain (:func:`kernel_end_drain`) as ``end_noc``, ``end_dram``.
    """
    mshr, noc, dram = pipelined_queues(mi, s_noc, s_dram, batches)
    short, floor_noc_binds = floor_shortfall(mi, mi.c + mshr + noc + dram)
    details["bandwidth_floor_fraction"] = float((short > 0).mean()) if short.size else 0.0
    details["end_noc"], details["end_dram"] = _last_interval_drain(mi, s_noc, s_dram, short)
    return WaveTerms(
        base=mi.base(),
        dependency=mi.stall.copy(),
        ldst=mi.c_ldst,
        units=mi.c_units,
        mshr=mshr,
        noc=noc + np.where(floor_noc_binds, short, 0.0),
        dram=dram + np.where(floor_noc_binds, 0.0, short),
        md=mi.md,
        details=details,
    )


def _wave(queue: str, mshr: str, pipelined: bool = False):
    def wave(inp: KernelInput, warps: int, sms: int) -> WaveTerms:
        mi = memory_inputs(inp, warps, sms)
        details = common_details(mi)
        if pipelined:
            mi, blocked = merge_blocked(inp, mi)
            details["merge_blocked_fraction"] = float(blocked.mean()) if blocked.size else 0.0
        if queue == "mdm":
            s_noc, s_dram, sat = mdm_queue_stalls(mi, graded=pipelined)
            details["noc_saturated_fraction"] = float(sat.mean())
        else:
            s_noc, s_dram = gpumech_queue_stalls(mi, with_noc=True)
        if mshr == "mdm" and pipelined:
            batches = pipelined_extra_batches(mi)  # eq. (6) without the ceiling
        elif mshr == "mdm":
            batches = mdm_extra_batches(mi)  # eq. (6); S^Mem of eq. (5) in stack_terms
        else:
            batches = gpumech_mshr_factor(mi.read * mi.warps, mi.mshrs)
        details["extra_batches_mean"] = float(batches.mean())
        details["S_NoC_total"] = float(s_noc.sum())
        details["S_DRAM_total"] = float(s_dram.sum())
        if pipelined:
            s_mem = np.maximum(mi.l_nocontention, np.maximum(s_noc, s_dram))
            details["S_MSHR_total"] = float((batches * s_mem).sum())
            return pipelined_stack_terms(mi, s_noc, s_dram, batches, details)
        details["S_MSHR_total"] = float(
            (batches * (mi.l_nocontention + s_noc + s_dram)).sum()  # eqs. (5)-(6)
        )
        return stack_terms(mi, s_noc, s_dram, batches, queue_in_mshr=True, details=details)

    return wave


@register
class MDM(Model):
    """MDM: batching model (eqs. 5-6) + saturating NoC/DRAM queue model (eqs. 7-10)."""

    name = "mdm"
    description = "Memory Divergence Model (Wang et al., MICRO 2020), eqs. 1-10"

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        return predict_interval_model(self.name, inp, _wave("mdm", "mdm"))


@register
class MDMQueue(Model):
    """MDM-Queue: MDM's NoC/DRAM queue model + GPUMech+'s MSHR model (Table V)."""

    name = "mdm-queue"
    description = "MDM queue model (Sec. III-C2) + GPUMech MSHR model with queue delays"

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        return predict_interval_model(self.name, inp, _wave("mdm", "gpumech"))


@register
class MDMMSHR(Model):
    """MDM-MSHR: GPUMech+'s NoC/DRAM queues + MDM's batching model (Table V)."""

    name = "mdm-mshr"
    description = "GPUMech+ NoC/DRAM queues + MDM batching model (Sec. III-C1)"

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        return predict_interval_model(self.name, inp, _wave("gpumech", "mdm"))


@register
class MDMPipelined(Model):
    """MDM with pipelined batches: ``max(L, S^NoC, S^DRAM)`` per extra batch (module doc)."""

    name = "mdm-pipelined"
    description = (
        "MDM with overlapping MSHR batches (eq. 5 max instead of sum), eq. 9's exposure "
        "graded by the reads beyond the MSHRs, the L1 and L2 merge limits, a bandwidth floor "
        "per interval and the kernel-end drain (our variant)"
    )

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        s_l2 = l2_merge_block_stall(inp)
        end: dict[str, float] = {}

        def drain(last: WaveTerms) -> dict[str, float]:
            """:func:`kernel_end_drain`, from the final wave already evaluated."""
            end.update(noc=last.details["end_noc"], dram=last.details["end_dram"])
            return end

        pred = predict_interval_model(
            self.name,
            inp,
            _wave("mdm", "mdm", pipelined=True),
            kernel_terms={"mshr": s_l2},
            final_terms=drain,
        )
        for k in ("end_noc", "end_dram"):  # the main wave's, not the kernel's
            pred.details.pop(k, None)
        pred.details["S_L2MSHR"] = s_l2
        pred.details["S_KernelEnd"] = end["noc"] + end["dram"]
        return pred
