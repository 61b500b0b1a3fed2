"""Hong and Kim's MWP-CWP model (ISCA 2009, paper 003, equations 1-27).

:func:`mwp_cwp` is the paper's model as a pure function of its named parameters
(Table 1) returning every intermediate value (:class:`MWPCWPResult`); paper 003
Table 2 works it through to 50738 cycles (``tests/test_models_mwp_cwp.py``).
Cases of ``Exec_cycles_app``, in the paper's order: eq. (22) if ``MWP == N`` and
``CWP == N``; else eq. (23) if ``CWP >= MWP`` or ``Comp_cycles > Mem_cycles``;
else eq. (24). A kernel without memory instructions has ``Mem_L = Mem_cycles = 0``,
``MWP = N``, ``CWP = 1`` and ``Comp_p = 0`` (the divisions of eqs. 13-16 and 22-23
by ``#Mem_insts`` are otherwise undefined), and takes eq. (24): ``Comp_cycles x N``.

:class:`MWPCWP` maps a :class:`KernelInput` to those parameters (open choices):

* ``#Comp_insts``, ``#Coal_Mem_insts``, ``#Uncoal_Mem_insts``, ``#Synch_insts``:
  per-warp averages from :class:`InstructionMix` (``compute = total - coalesced -
  uncoalesced``, so shared-memory instructions count as computation, as in the
  paper's example); ``#Uncoal_per_mw = mix.requests_per_uncoalesced``.
* ``Issue_cycles``: cycles per warp instruction of one SM (4 on the paper's 8-lane
  G80 SMs, i.e. 32 threads over 8 lanes), :func:`mdm.models.roofline.sm_cycles_per_inst`:
  ``1 / (schedulers x issue_width)`` times the representative warp's
  :func:`mdm.models.roofline.issue_factor` when dual issue needs pairable
  instructions, or the execution units' rate when their initiation intervals (the
  same lanes-per-unit limit as the paper's 4) make it slower. Effect on the 83
  reference runs: SM7_QV100 baselines 64.7 -> 64.5 % (stride1 +168.0 -> +166.7 %;
  its errors are in the memory terms), mdm_pascal unchanged.
* ``Mem_LD``: the expected round trip of one transaction through the caches the
  paper's GPUs lacked: ``l1.hit_latency + L1MissRate x (L2 hit round trip +
  L2MissRate x DRAM latency)`` from the kernel's cache statistics.
* ``Departure_del_coal = Departure_del_uncoal``: the time one SM needs to inject
  one request, ``request_bytes / per-SM NoC bandwidth`` (``noc.sm_port_gbps`` if
  set, else the total NoC bandwidth divided by ``n_sm``).
* ``Load_bytes_per_warp``: bytes a memory warp moves past the L1, ``(Weight_coal +
  Weight_uncoal x #Uncoal_per_mw) x request_bytes x L1MissRate`` (Table 1's "4 B x
  32" is the coalesced, uncached special case); ``Mem_Bandwidth = min(B^NoC,
  B^DRAM / L2MissRate)``, the bandwidth L1 misses see through NoC then DRAM.
* ``Freq`` = core clock in GHz (so GB/s / GHz = bytes per cycle).
* Kernel cycles: ``Exec_cycles_with_synch`` (eq. 27), scaled by
  ``total_warp_insts / (n_warps x mix.total)`` when the mix is not the mean warp,
  and floored at the roofline like every model.

``cpi`` (a detail, eq. 25) divides the kernel's final cycles, ``Exec_cycles_with_synch``
(eq. 27), where eq. (25) as printed has ``Exec_cycles_app``: the paper defines CPI
"using total execution cycles" in Section 3.4.4, before synchronisation is added in
3.4.6, so for a kernel with barriers the total is eq. (27)'s (decided here; tested).

CPI stack: ``base`` (computation terms), ``memory`` (memory terms) and ``sync``
(eq. 26); when ``MWP < 1`` the paper's negative ``(MWP - 1)`` terms are folded into
``memory``. MWP-CWP is not monotone in bandwidth in theory (eq. 23's ``Comp_p (MWP
- 1)`` grows with MWP), so ``queue_monotone`` is False.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from mdm.models.base import KernelInput, KernelPrediction, Model, register
from mdm.models.interval import finish_prediction
from mdm.models.roofline import request_bytes, sm_cycles_per_inst


@dataclass(frozen=True)
class MWPCWPResult:
    """Every intermediate value of paper 003's model (equation numbers in comments)."""

    mem_l_uncoal: float  # (10)
    mem_l_coal: float  # (11)
    weight_uncoal: float  # (13)
    weight_coal: float  # (14)
    mem_l: float  # (12)
    departure_delay: float  # (15)
    mwp_without_bw_full: float  # (16)
    mwp_without_bw: float  # (17)
    bw_per_warp: float  # (7), GB/s
    mwp_peak_bw: float  # (6)
    mwp: float  # (5)
    mem_insts: float
    total_insts: float
    comp_cycles: float  # (19)
    mem_cycles: float  # (18)
    comp_p: float  # (2)
    cwp_full: float  # (8)
    cwp: float  # (9)
    n: float  # (20)
    rep: float  # (21)
    case: int  # 22, 23 or 24: the equation used for exec_cycles_app
    exec_cycles_app: float  # (22)/(23)/(24)
    synch_cost: float  # (26)
    exec_cycles_with_synch: float  # (27)
    cpi: float  # (25)
    comp_part: float  # computation terms of exec_cycles_app
    mem_part: float  # memory terms of exec_cycles_app


def mwp_cwp(
    *,
    mem_ld: float,
    departure_del_uncoal: float,
    departure_del_coal: float,
    threads_per_block: int,
    blocks: int,
    active_blocks_per_sm: int,
    active_sms: int,
    comp_insts: float,
    uncoal_mem_insts: float,
    coal_mem_insts: float,
    synch_insts: float,
    uncoal_per_mw: float,
    load_bytes_per_warp: float,
    freq_ghz: float,
    mem_bandwidth_gbps: float,
    issue_cycles: float = 4.0,
    threads_per_warp: int = 32,
) -> MWPCWPResult:
    """Paper 003 equations (1)-(27) with the parameters of its Table 1 (instruction counts per thread)."""
    n = active_blocks_per_sm * threads_per_block / threads_per_warp  # (20), Table 1 row 12
    mem_insts = uncoal_mem_insts + coal_mem_insts
    total_insts = comp_insts + mem_insts
    mem_l_uncoal = mem_ld + (uncoal_per_mw - 1) * departure_del_uncoal  # (10)
    mem_l_coal = mem_ld  # (11)
    if mem_insts > 0:
        weight_uncoal = uncoal_mem_insts / (uncoal_mem_insts + coal_mem_insts)  # (13)
        weight_coal = coal_mem_insts / (coal_mem_insts + uncoal_mem_insts)  # (14)
    else:
        weight_uncoal = weight_coal = 0.0
    mem_l = mem_l_uncoal * weight_uncoal + mem_l_coal * weight_coal  # (12)
    departure_delay = (
        departure_del_uncoal * uncoal_per_mw * weight_uncoal + departure_del_coal * weight_coal
    )  # (15)
    mwp_without_bw_full = mem_l / departure_delay if departure_delay > 0 else math.inf  # (16)
    mwp_without_bw = min(mwp_without_bw_full, n)  # (17)
    bw_per_warp = freq_ghz * load_bytes_per_warp / mem_l if mem_l > 0 else 0.0  # (7)
    mwp_peak_bw = (
        mem_bandwidth_gbps / (bw_per_warp * active_sms) if bw_per_warp > 0 else math.inf
    )  # (6)
    mwp = min(mwp_without_bw, mwp_peak_bw, n)  # (5)
    mem_cycles = mem_l_uncoal * uncoal_mem_insts + mem_l_coal * coal_mem_insts  # (18)
    comp_cycles = issue_cycles * total_insts  # (19)
    comp_p = comp_cycles / mem_insts if mem_insts > 0 else 0.0  # (2)
    cwp_full = (mem_cycles + comp_cycles) / comp_cycles  # (8)
    cwp = min(cwp_full, n)  # (9)
    rep = blocks / (active_blocks_per_sm * active_sms)  # (21)
    if mwp == n and cwp == n:  # (22)
        case = 22
        mem_part = mem_cycles * rep
        comp_part = (comp_cycles + comp_p * (mwp - 1)) * rep
    elif mem_insts > 0 and (cwp >= mwp or comp_cycles > mem_cycles):  # (23)
        case = 23
        mem_part = mem_cycles * n / mwp * rep
        comp_part = comp_p * (mwp - 1) * rep
    else:  # (24): MWP > CWP
        case = 24
        mem_part = mem_l * rep
        comp_part = comp_cycles * n * rep
    exec_cycles_app = mem_part + comp_part
    synch_cost = departure_delay * (mwp - 1) * synch_insts * active_blocks_per_sm * rep  # (26)
    exec_cycles_with_synch = exec_cycles_app + synch_cost  # (27)
    cpi = exec_cycles_with_synch / (
        total_insts * threads_per_block / threads_per_warp * blocks / active_sms
    )  # (25)
    return MWPCWPResult(
        mem_l_uncoal=mem_l_uncoal,
        mem_l_coal=mem_l_coal,
        weight_uncoal=weight_uncoal,
        weight_coal=weight_coal,
        mem_l=mem_l,
        departure_delay=departure_delay,
        mwp_without_bw_full=mwp_without_bw_full,
        mwp_without_bw=mwp_without_bw,
        bw_per_warp=bw_per_warp,
        mwp_peak_bw=mwp_peak_bw,
        mwp=mwp,
        mem_insts=mem_insts,
        total_insts=total_insts,
        comp_cycles=comp_cycles,
        mem_cycles=mem_cycles,
        comp_p=comp_p,
        cwp_full=cwp_full,
        cwp=cwp,
        n=n,
        rep=rep,
        case=case,
        exec_cycles_app=exec_cycles_app,
        synch_cost=synch_cost,
        exec_cycles_with_synch=exec_cycles_with_synch,
        cpi=cpi,
        comp_part=comp_part,
        mem_part=mem_part,
    )


def mwp_cwp_parameters(inp: KernelInput) -> dict[str, Any]:
    """Map ``inp`` to :func:`mwp_cwp`'s keyword arguments (choices in the module docstring)."""
    gpu = inp.gpu
    mix = inp.mix
    cache = inp.cache
    coal = mix.coalesced_mem
    uncoal = mix.uncoalesced_mem
    mem = coal + uncoal
    w_unc = uncoal / mem if mem > 0 else 0.0
    w_coal = coal / mem if mem > 0 else 0.0
    uncoal_per_mw = max(1.0, mix.requests_per_uncoalesced)
    l1_miss = cache.l1_miss_rate if gpu.l1.enabled else 1.0
    l2_miss = cache.l2_miss_rate
    mem_ld = gpu.l1.hit_latency_cycles + l1_miss * (
        gpu.l2_hit_latency_cycles + l2_miss * gpu.dram_latency_cycles
    )
    port_gbps = gpu.noc.sm_port_gbps or gpu.noc.bandwidth_gbps / gpu.n_sm
    departure = request_bytes(gpu) / (port_gbps / gpu.core_clock_ghz)
    load_bytes = (w_coal + w_unc * uncoal_per_mw) * request_bytes(gpu) * l1_miss
    mem_bw = gpu.noc.bandwidth_gbps
    if l2_miss > 0:
        mem_bw = min(mem_bw, gpu.dram.bandwidth_gbps / l2_miss)
    return {
        "mem_ld": float(mem_ld),
        "departure_del_uncoal": float(departure),
        "departure_del_coal": float(departure),
        "threads_per_block": inp.warps_per_block * gpu.warp_size,
        "blocks": inp.n_blocks,
        "active_blocks_per_sm": inp.blocks_per_sm,
        "active_sms": inp.active_sms,
        "comp_insts": float(max(0.0, mix.total - mem)),
        "uncoal_mem_insts": float(uncoal),
        "coal_mem_insts": float(coal),
        "synch_insts": float(mix.barriers),
        "uncoal_per_mw": float(uncoal_per_mw),
        "load_bytes_per_warp": float(load_bytes),
        "freq_ghz": gpu.core_clock_ghz,
        "mem_bandwidth_gbps": float(mem_bw),
        "issue_cycles": sm_cycles_per_inst(inp),
        "threads_per_warp": gpu.warp_size,
    }


@register
class MWPCWP(Model):
    """Hong and Kim's MWP-CWP analytical model on a :class:`KernelInput`."""

    name = "mwp-cwp"
    description = "MWP-CWP (Hong & Kim, ISCA 2009), equations 1-27"
    queue_monotone = False

    def predict_kernel(self, inp: KernelInput) -> KernelPrediction:
        if inp.total_warp_insts <= 0 or inp.mix.total <= 0:
            raise ValueError(f"kernel {inp.name!r}: no instructions to model")
        for name in ("warps_per_block", "blocks_per_sm", "active_sms", "n_blocks"):
            if getattr(inp, name) < 1:
                raise ValueError(f"kernel {inp.name!r}: {name}={getattr(inp, name)} must be >= 1")
        params = mwp_cwp_parameters(inp)
        r = mwp_cwp(**params)
        scale = inp.total_warp_insts / (inp.n_warps * inp.mix.total)
        # MWP < 1 (less than one memory warp per Mem_L, eq. 6) makes eq. (23)'s and
        # eq. (26)'s (MWP - 1) terms negative; the total is kept as the paper gives it
        # and the negative parts are folded into ``memory`` so the stack stays >= 0.
        base = max(r.comp_part, 0.0)
        sync = max(r.synch_cost, 0.0)
        totals = {
            "base": base * scale,
            "memory": (r.exec_cycles_with_synch - base - sync) * scale,
            "sync": sync * scale,
        }
        details = {k: float(v) for k, v in asdict(r).items()}
        details.update({f"param_{k}": float(v) for k, v in params.items()})
        return finish_prediction(self.name, inp, totals, details)
