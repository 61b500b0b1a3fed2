"""Multi-warp cycles C_i of the representative warp (model-notes section 3).

C_i is the number of cycles an SM takes to execute interval ``i`` of the
representative warp while ``W`` warps run concurrently without memory contention
(paper 001 Section III-C: "MDM obtains C_i similarly to GPUMech").

Scheduler organisation (an open choice, decided here): the SM's warps are split
over its schedulers, ``W_sc = ceil(W / schedulers)`` warps competing for one
scheduler that issues ``IR = issue_width`` warp instructions per cycle, and C_i is
computed for one scheduler. For compute capability >= 70 this is the sub-core
split of GCoM (yonsei-hpcp/gcom ``src/interval_model.cc``). We use the same split
before Volta because the reference simulator binds warps to schedulers statically
in every generation (GPGPU-Sim ``shader_core_ctx::create_schedulers``: warp slot
``i`` goes to scheduler ``i % gpgpu_num_sched_per_core``; ``sub_core_model`` only
isolates register banks and units on Volta), and because the single-warp profile
already issues at most one instruction per cycle, which a pooled ``IR =
schedulers x issue_width`` would contradict. The pooled view (``W_sc = W``,
``IR = schedulers x issue_width``; the authors' script
wanglu1991/MDM-instrumentation ``interval_warp_model_E.py`` pools all warps on
one ``max_issue``) remains available with ``split=False``. Both views have the
same peak SM issue rate ``schedulers x issue_width``.

Dual issue (``issue_width > 1``): a scheduler issues a second instruction in a cycle
only from the same warp, consecutive and independent (the reference simulator's
``-gpgpu_max_insn_issue_per_warp``). When the profile has issue slots (groups of such
instructions, :mod:`mdm.profile.interval`), the formulas below run on groups:
``n_i`` -> ``slots_i`` and ``IR`` -> ``IR / issue_width`` (:func:`issue_columns`), so
a warp whose instructions never pair takes its single-issue cycles. Effect on the 83
reference runs (mdm_pascal has ``issue_width = 2``; SM7_QV100 1), mean |IPC error| of
MD+NMD runs: mdm-pipelined 17.3 -> 16.9 %, mdm 32.5 -> 32.3 %, mdm-queue 17.5 ->
17.1 %, gpumech+ 20.1 -> 19.8 %, gpumech 24.9 -> 25.1 % (stride1 +14 -> +19 %).

Formulations (``C = sum(n)/IR + sum(S) + sum(extra)/IR``):

* GTO, as the authors' script ``TotalRegionCycles_GTO``: ``P = sum(n) / (sum(n)/IR
  + sum(S))``; ``avg_n = sum(n) / #intervals``; ``p_i = min(1, P * S_i)`` (1 when
  ``S_i = 0``); ``extra_i = max(0, p_i (W_sc - 1) avg_n - IR S_i)``.
* LRR: the other ``W_sc - 1`` warps issue between two instructions of this warp,
  so ``C_i = max(n_i/IR + S_i, W_sc n_i / IR)``.

Issue cap (both policies): ``C_i >= W_sc n_i / IR``: the ``W_sc`` warps of the
scheduler cannot issue their ``n_i`` instructions faster than the peak issue rate.
The authors' script caps the multi-warp IPC at ``max_issue`` for the same reason;
applying it per interval keeps every model at or above the compute roofline.

LD/ST cap (open choice, decided here): the reference simulator has *one* LD/ST unit
per SM shared by all schedulers (GPGPU-Sim ``shader_core_ctx``: one ``ldst_unit``),
which takes at most one memory warp instruction (global or shared) per cycle and
pushes a global access's L1 requests one per cycle per L1 bank. The SM's ``W``
warps (not ``W_sc``) need at least ``W x ldst_i`` cycles for interval ``i``, with
``ldst_i`` the profile's ``ldst_cycles`` (:mod:`mdm.profile.interval`: 1 per
shared instruction, ``max(1, served L1 requests / banks)`` per global one; the
requests that miss are charged by the memory terms instead): ``C_i >= W ldst_i``.
It binds for shared-memory kernels (SM7_QV100 gemm_tiled: 44 of 113 instructions
are LDS/STS, so 48 warps hold the unit >= 2112 cycles per SM while 4 schedulers
issue all 5424 instructions in 1356) and for loads with many L1 hits or pending
hits (mdm_pascal kmeans). Effect on the 83 reference runs (``mdm validate --models
mdm --models gpumech``), per instruction only: MDM 33.4% -> 32.2% mean |error|
(SM7_QV100 gemm_tiled +175% -> +77%), GPUMech 51.7% -> 48.9%; adding the served
requests: MDM 31.7% -> 32.8% (kmeans mdm_pascal +10% -> -34%: MDM's eq. 6 batches
already over-count there), GPUMech 45.4% -> 26.5% (kmeans mdm_pascal +110% ->
+20%). Profiles without ``ldst_cycles`` (``None``) get no cap.

Execution-unit cap (open choice, decided here): ``C_i >= W_sc x unit_i``, with
``unit_i`` the profile's ``unit_cycles`` (:mod:`mdm.profile.interval`: the cycles
interval i keeps one scheduler's share of its busiest execution unit busy, from the
units' initiation intervals). The ``W_sc`` warps of a scheduler cannot push their
instructions through a unit faster than it takes them: on SM7_QV100 the FP32 and
INT units take a warp instruction every 2 cycles (16 lanes per sub-core), so an
interval that is half integer work needs ``W_sc n_i`` cycles however it is
scheduled. Like the LD/ST cap, a throughput floor under either policy's C_i.
Effect on the 83 reference runs (``mdm validate``; mdm_pascal's units take one
instruction per cycle, so only SM7_QV100 moves), mean |IPC error| of the SM7_QV100
baselines: mdm-pipelined 14.6 -> 13.1 % (stencil2d +29 -> +16 %, gemm_tiled +44 ->
+39 %, kmeans -3 -> -9 %), mdm 30.8 -> 28.1 %, mdm-queue 20.1 -> 17.9 %, mdm-mshr
28.3 -> 25.7 %, gpumech 61.0 -> 57.4 %, gpumech+ 35.9 -> 31.4 %; MD+NMD of all runs
mdm-pipelined 10.3 -> 10.1 %. Profiles without ``unit_cycles`` (``None``) get no cap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mdm.config.gpu import GPUConfig
from mdm.profile.intervals import IntervalProfile


@dataclass(frozen=True)
class SchedulerView:
    """How the SM's warps map onto issue slots."""

    warps: int  # W_sc: warps competing for one scheduler (pooled: all W)
    issue_rate: float  # IR: warp instructions per cycle of that scheduler
    split: bool  # True: warps split over sub-cores


def scheduler_view(gpu: GPUConfig, warps_per_sm: int, split: bool | None = None) -> SchedulerView:
    """``W_sc`` and ``IR`` for ``warps_per_sm`` resident warps (see module docstring).

    ``split=None`` (default) splits over the schedulers on every architecture.
    """
    if warps_per_sm < 1:
        raise ValueError(f"warps_per_sm must be >= 1, got {warps_per_sm}")
    if split is None:
        split = True
    if split:
        w_sc = math.ceil(warps_per_sm / gpu.sm.schedulers)
        return SchedulerView(w_sc, float(gpu.sm.issue_width), True)
    return SchedulerView(warps_per_sm, float(gpu.sm.schedulers * gpu.sm.issue_width), False)


def multiwarp_cycles(
    n_insts: np.ndarray, stall: np.ndarray, warps: int, issue_rate: float, policy: str = "gto"
) -> np.ndarray:
    """Per-interval C_i (float64 array) for ``warps`` warps sharing one scheduler of rate ``issue_rate``.

    ``n_insts`` and ``stall`` are the representative warp's interval columns.
    """
    n = np.asarray(n_insts, dtype=np.float64)
    s = np.asarray(stall, dtype=np.float64)
    if n.shape != s.shape:
        raise ValueError(f"n_insts shape {n.shape} != stall shape {s.shape}")
    if warps < 1 or issue_rate <= 0:
        raise ValueError(f"need warps >= 1 and issue_rate > 0, got {warps}, {issue_rate}")
    if n.size == 0:
        return np.zeros(0)
    if np.any(n < 0) or np.any(s < 0):
        raise ValueError("interval instruction counts and stalls must be non-negative")
    single = n / issue_rate + s
    if policy == "gto":
        total_n = float(n.sum())
        denom = total_n / issue_rate + float(s.sum())
        p_alone = total_n / denom if denom > 0 else 0.0
        avg_n = total_n / n.size
        p = np.where(s == 0, 1.0, np.minimum(1.0, p_alone * s))
        extra = np.maximum(0.0, p * (warps - 1) * avg_n - issue_rate * s)
        c = single + extra / issue_rate
    elif policy == "lrr":
        c = np.maximum(single, warps * n / issue_rate)
    else:
        raise ValueError(f"unknown scheduler policy {policy!r}; expected 'gto' or 'lrr'")
    return np.maximum(c, warps * n / issue_rate)


def issue_columns(
    gpu: GPUConfig, profile: IntervalProfile, view: SchedulerView
) -> tuple[np.ndarray, float]:
    """What a scheduler issues per interval and how many per cycle: ``(units_i, rate)``.

    ``(n_i, IR)`` when the profile has no issue slots (every instruction may use the
    full issue width); with dual issue (``profile.issue_slots``, groups of consecutive
    independent instructions, :mod:`mdm.profile.interval`) ``(slots_i, IR /
    issue_width)``: one group per cycle per scheduler, so a profile whose instructions
    never pair gives exactly the single-issue cycles.
    """
    if profile.issue_slots is None:
        return profile.n_insts, view.issue_rate
    return profile.issue_slots, view.issue_rate / gpu.sm.issue_width


@dataclass(frozen=True)
class CycleParts:
    """C_i and the cycles its two structural caps add (CPI-stack attribution)."""

    c: np.ndarray  # C_i
    ldst: np.ndarray  # what the LD/ST cap adds to the scheduler's C_i
    units: np.ndarray  # what the execution-unit cap adds on top of that
    view: SchedulerView


def profile_cycle_parts(
    gpu: GPUConfig, profile: IntervalProfile, warps_per_sm: int, split: bool | None = None
) -> CycleParts:
    """:func:`profile_cycles` with the caps' shares: the scheduler's C_i (policy and issue
    cap), then the LD/ST cap's excess over it, then the execution-unit cap's excess over
    both (the order in which the CPI stack charges them: ``ldst``, then ``units``)."""
    view = scheduler_view(gpu, warps_per_sm, split)
    units, rate = issue_columns(gpu, profile, view)
    c = multiwarp_cycles(units, profile.stall, view.warps, rate, gpu.sm.scheduler_policy)
    sched = c
    if profile.ldst_cycles is not None:
        c = np.maximum(c, warps_per_sm * profile.ldst_cycles)  # one LD/ST unit per SM
    with_ldst = c
    if profile.unit_cycles is not None:
        c = np.maximum(c, view.warps * profile.unit_cycles)  # a scheduler's unit share
    return CycleParts(c, with_ldst - sched, c - with_ldst, view)  # fresh arrays (not views)


def profile_cycles(
    gpu: GPUConfig, profile: IntervalProfile, warps_per_sm: int, split: bool | None = None
) -> tuple[np.ndarray, SchedulerView]:
    """C_i of ``profile`` on ``gpu`` with ``warps_per_sm`` resident warps and the config's policy.

    Includes the LD/ST cap ``C_i >= warps_per_sm x ldst_cycles_i`` and the
    execution-unit cap ``C_i >= W_sc x unit_cycles_i`` (module docstring).
    """
    parts = profile_cycle_parts(gpu, profile, warps_per_sm, split)
    return parts.c, parts.view
