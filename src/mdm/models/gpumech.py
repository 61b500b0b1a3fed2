"""GPUMech and GPUMech+ (paper 001 Section IV and Table V; model-notes section 4).

GPUMech's own text is not among our papers; its contention model is restated from
the MDM paper (Section IV) and the MDM authors' script
(wanglu1991/MDM-instrumentation ``interval_warp_model_E.py``:
``contention_modeling_MSHR``, ``contention_DRAM_modeling``):

* MSHR model: ``R = M^Read x W`` read misses of the W warps; if ``R > #MSHRs``
  ``D^MSHR = (1/R) sum_{j=1..R} L ceil(j/#MSHRs) - L`` (request j waits for
  ``ceil(j/#MSHRs)`` rounds of latency L). ``R`` is an average and need not be an
  integer: the sum runs over ``j = 1..floor(R)`` and is divided by ``R``, as in the
  script; the result is clamped at 0.
* Queue model (DRAM; GPUMech+ also the NoC): ``A`` requests of all SMs in the
  interval, deterministic service ``s`` per request, ``T = n_i/IR + S_i`` the
  interval alone, ``rho = A s / T``. Saturated (``rho >= 1``): every request waits
  for half the others, ``D = s A / 2``. Otherwise M/D/1: ``D = lambda s^2 /
  (2 (1 - rho))`` with ``lambda = A / T``. Deviation, documented: the M/D/1 wait
  diverges as ``rho -> 1`` while only ``A`` requests exist, so it is capped at the
  finite-population value ``s A / 2``; without the cap more bandwidth could *add*
  queueing stall just below saturation.
* DRAM: ``A = LLCMissRatio x (min(M^Read W, #MSHRs) + M^Write W) x #SMs`` and
  ``s = f x BlockSize / B^DRAM`` (the script counts the interval's LLC misses).
  NoC (GPUMech+ only): ``A = M x #SMs`` (eq. 3 of paper 001), ``s = L^NoCService``.
* GPUMech uses the uncontended latency ``L = L^NoContention`` in the MSHR model
  and has no NoC queue; GPUMech+ adds the NoC queue and uses ``L =
  L^NoContention + D^NoC + D^DRAM`` ("accounts for the NoC and DRAM queueing
  delays when estimating the MSHR waiting time").
"""

from __future__ import annotations

import numpy as np

from mdm.models.base import KernelInput, KernelPrediction, Model, register
from mdm.models.interval import (
    MemoryInputs,
    WaveTerms,
    common_details,
    memory_inputs,
    predict_interval_model,
    stack_terms,
)


def gpumech_mshr_factor(reads: np.ndarray, mshrs: float | np.ndarray) -> np.ndarray:
    """``D^MSHR / L = (1/R) sum_{j=1..floor R} ceil(j/#MSHRs) - 1`` where ``R > #MSHRs``, else 0.

    Closed form of the sum: with ``r = floor(R) = q #MSHRs + rem``,
    ``sum = #MSHRs q (q+1)/2 + rem (q+1)``. ``mshrs`` is one count or one per interval.
    """
    r_real = np.asarray(reads, dtype=np.float64)
    k = np.asarray(mshrs, dtype=np.float64)
    r = np.floor(r_real)
    q = np.floor(r / k)
    rem = r - q * k
    total = k * q * (q + 1) / 2 + rem * (q + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(r_real > k, total / np.where(r_real > 0, r_real, 1.0) - 1.0, 0.0)
    return np.maximum(factor, 0.0)


def gpumech_queue_delay(
    requests: np.ndarray, service: np.ndarray | float, interval: np.ndarray
) -> np.ndarray:
    """GPUMech's queue delay per interval (saturation ``sA/2`` or capped M/D/1; module doc)."""
    a = np.asarray(requests, dtype=np.float64)
    s = np.broadcast_to(np.asarray(service, dtype=np.float64), a.shape)
    t = np.asarray(interval, dtype=np.float64)
    half = s * a / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(t > 0, a * s / np.where(t > 0, t, 1.0), np.inf)
        md1 = rho * s / (2.0 * (1.0 - rho))
    d = np.where(rho >= 1.0, half, np.minimum(md1, half))
    return np.where(a > 0, d, 0.0)


def gpumech_queue_stalls(mi: MemoryInputs, with_noc: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(D^NoC, D^DRAM)`` per interval; ``D^NoC = 0`` for original GPUMech."""
    a_noc = mi.m * mi.sms
    d_dram = gpumech_queue_delay(mi.dram_ratio * a_noc, mi.l_dram_line, mi.single)
    d_noc = (
        gpumech_queue_delay(a_noc, mi.l_noc_service, mi.single)
        if with_noc
        else np.zeros_like(d_dram)
    )
    return d_noc, d_dram


def _gpumech_wave(plus: bool):
    def wave(inp: KernelInput, warps: int, sms: int) -> WaveTerms:
        mi = memory_inputs(inp, warps, sms)
        d_noc, d_dram = gpumech_queue_stalls(mi, with_noc=plus)
        factor = gpumech_mshr_factor(mi.read * mi.warps, mi.mshrs)
        details = common_details(mi)
        details["mshr_factor_mean"] = float(factor.mean())
        return stack_terms(mi, d_noc, d_dram, factor, queue_in_mshr=plus, details=details)

    return wave


@register
class GPUMech(Model):
    """GPUMech: MSHR model with the uncontended latency, DRAM queue model, no NoC queue."""

    name = "gpumech"
    description = "GPUMech (Huang et al.): GPUMech MSHR model + GPUMech DRAM queue"

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        return predict_interval_model(self.name, inp, _gpumech_wave(plus=False))


@register
class GPUMechPlus(Model):
    """GPUMech+: GPUMech with a NoC queue and queue delays inside the MSHR latency."""

    name = "gpumech+"
    description = "GPUMech+ (paper 001 Sec. IV): NoC + DRAM queues, MSHR model with queue delays"

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        return predict_interval_model(self.name, inp, _gpumech_wave(plus=True))
