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

Footnote 2: for a streaming L1 (``l1.allocate_on == 'fill'``) the SM's NoC queue
size ``l1.miss_queue_entries`` replaces ``#MSHRs`` in eqs. (2), (3) and (6).

MDM-Queue = MDM's queue model (eqs. 7-10) + GPUMech+'s MSHR model; MDM-MSHR =
GPUMech+'s NoC/DRAM queues + MDM's batching model (eqs. 5-6) (Table V).
"""

from __future__ import annotations

import numpy as np

from mdm.models.base import KernelInput, KernelPrediction, Model, register
from mdm.models.gpumech import gpumech_mshr_factor, gpumech_queue_stalls
from mdm.models.interval import (
    MemoryInputs,
    WaveTerms,
    common_details,
    memory_inputs,
    predict_interval_model,
    stack_terms,
)


def noc_saturated(mi: MemoryInputs) -> np.ndarray:
    """Eq. (10): ``L^NoCService x M x #SMs > L^MinLLC + L^MinDRAM``."""
    return mi.l_noc_service * mi.m * mi.sms > mi.l_min_llc + mi.l_min_dram


def mdm_queue_stalls(mi: MemoryInputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(S^NoC, S^DRAM, saturated)`` per interval: eq. (9) with eqs. (7), (8), (10)."""
    sat = noc_saturated(mi)  # eq. (10)
    exposed = np.where(mi.md & sat, 1.0, 0.5)  # eq. (9): full latency iff MD and saturated
    s_noc = exposed * mi.sms * mi.m * mi.l_noc_service  # eq. (9) with eq. (7)
    s_dram = exposed * mi.sms * mi.m * mi.l_dram_service  # eq. (9) with eq. (8)
    return s_noc, s_dram, sat


def mdm_extra_batches(mi: MemoryInputs) -> np.ndarray:
    """Eq. (6)'s factor: ``ceil(M^Read W / #MSHRs) - 1`` for MD intervals (eq. 2), else 0."""
    return np.where(mi.md, np.ceil(mi.read * mi.warps / mi.mshrs) - 1.0, 0.0)


def _wave(queue: str, mshr: str):
    def wave(inp: KernelInput, warps: int, sms: int) -> WaveTerms:
        mi = memory_inputs(inp, warps, sms)
        details = common_details(mi)
        if queue == "mdm":
            s_noc, s_dram, sat = mdm_queue_stalls(mi)
            details["noc_saturated_fraction"] = float(sat.mean())
        else:
            s_noc, s_dram = gpumech_queue_stalls(mi, with_noc=True)
        if mshr == "mdm":
            batches = mdm_extra_batches(mi)  # eq. (6); S^Mem of eq. (5) in stack_terms
        else:
            batches = gpumech_mshr_factor(mi.read * mi.warps, mi.mshrs)
        details["extra_batches_mean"] = float(batches.mean())
        details["S_NoC_total"] = float(s_noc.sum())
        details["S_DRAM_total"] = float(s_dram.sum())
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
