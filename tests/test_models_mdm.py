"""MDM (paper 001 eqs. 1-10) and GPUMech's MSHR/queue formulas, worked by hand.

Configuration (1 GHz, so ns = cycles): 2 SMs, one scheduler issuing 1 warp
instruction per cycle, 4 L1 MSHRs, L1 hit 20 cycles, L2 hit round trip 30 ns ->
L^MinLLC = 50, L^MinDRAM = 50, 128 B lines, NoC 8 GB/s -> L^NoCService = 128/8 =
16 cycles, DRAM 32 GB/s -> 4 cycles per line.

Representative warp, W = 2 warps per SM on 2 SMs (one wave, 4 warps):
  interval 0: n = 10, S = 300, M^Read = 1, M^Write = 0, LLC miss 0.5
  interval 1: n = 5,  S = 100, M^Read = 6, M^Write = 1, LLC miss 0.25
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.config.gpu import GPUConfig
from mdm.models.base import get_model
from mdm.models.gpumech import gpumech_mshr_factor, gpumech_queue_delay
from mdm.models.interval import final_wave, memory_inputs
from mdm.models.mdm import (
    bandwidth_floor,
    kernel_end_drain,
    mdm_extra_batches,
    mdm_queue_stalls,
    merge_blocked,
    noc_saturated,
    pipelined_extra_batches,
    pipelined_stack_terms,
)
from mdm.models.multiwarp import multiwarp_cycles
from mdm.models.synthetic import kernel_input_from_profile
from mdm.profile.intervals import IntervalProfile

CFG = {
    "name": "hand",
    "compute_capability": 61,
    "core_clock_mhz": 1000,
    "n_sm": 2,
    "sm": {
        "max_threads": 2048,
        "max_warps": 64,
        "max_blocks": 32,
        "registers": 65536,
        "shared_mem_bytes": 49152,
        "schedulers": 1,
    },
    "l1": {"size_bytes": 16384, "ways": 4, "mshr_entries": 4, "hit_latency_cycles": 20},
    "l2": {"size_bytes": 262144, "banks": 2, "ways": 8, "hit_latency_ns": 30},
    "noc": {"bandwidth_gbps": 8},
    "dram": {"bandwidth_gbps": 32, "channels": 2, "latency_ns": 50},
}
GPU = GPUConfig.model_validate(CFG)
PROFILE = IntervalProfile.from_lists(
    n_insts=[10, 5],
    stall=[300, 100],
    read_misses=[1, 6],
    write_reqs=[0, 1],
    l2_miss_rate=[0.5, 0.25],
)


def _inp(gpu: GPUConfig = GPU):
    return kernel_input_from_profile(gpu, PROFILE, warps_per_sm=2, active_sms=2)


def test_multiwarp_cycles_gto_by_hand() -> None:
    # P = 15 / (15 + 400); p_i = min(1, P S_i) = 1 for both; avg_n = 7.5;
    # extra_i = max(0, 1 x (2-1) x 7.5 - S_i) = 0 -> C = n + S = [310, 105].
    assert multiwarp_cycles(PROFILE.n_insts, PROFILE.stall, 2, 1.0).tolist() == [310, 105]
    # 64 warps: extra_0 = max(0, 63 x 7.5 - 300) = 172.5; extra_1 = 472.5 - 100 = 372.5;
    # issue cap 64 x n: [640, 320] > [482.5, 477.5]?  C_0 = max(482.5, 640) = 640, C_1 = 477.5.
    c = multiwarp_cycles(PROFILE.n_insts, PROFILE.stall, 64, 1.0)
    assert c.tolist() == pytest.approx([640, 477.5])
    # LRR: C_i = max(n_i + S_i, W n_i) = max([310, 105], [640, 320]).
    assert multiwarp_cycles(PROFILE.n_insts, PROFILE.stall, 64, 1.0, "lrr").tolist() == [640, 320]


def test_equations_one_by_one() -> None:
    mi = memory_inputs(_inp(), warps=2, sms=2)
    assert mi.md.tolist() == [False, True]  # eq. (2): 1 x 2 = 2 <= 4; 6 x 2 = 12 > 4
    assert mi.m.tolist() == [2, 6]  # eq. (3): min(2, 4) + 0; min(12, 4) + 1 x 2
    assert mi.l_min_llc == 50 and mi.l_min_dram == 50
    assert mi.l_nocontention.tolist() == [75, 62.5]  # eq. (4): 50 + 0.5 x 50; 50 + 0.25 x 50
    assert mi.l_noc_service == 16  # eq. (7): 1 GHz x 128 B / 8 GB/s
    assert mi.l_dram_service.tolist() == [2, 1]  # eq. (8): 0.5 x 4; 0.25 x 4
    # eq. (10): 16 x 2 x 2 = 64 <= 100 (not saturated); 16 x 6 x 2 = 192 > 100 (saturated)
    assert noc_saturated(mi).tolist() == [False, True]
    s_noc, s_dram, _ = mdm_queue_stalls(mi)
    assert s_noc.tolist() == [32, 192]  # eq. (9): 0.5 x 2 x 2 x 16 (NMD); 2 x 6 x 16 (MD, sat.)
    assert s_dram.tolist() == [4, 12]  # eq. (9) with eq. (8): 0.5 x 2 x 2 x 2; 2 x 6 x 1
    # eq. (5): S^Mem_1 = 62.5 + 192 + 12 = 266.5; eq. (6): ceil(12/4) - 1 = 2 extra batches
    assert mdm_extra_batches(mi).tolist() == [0, 2]


def test_eq8_uses_the_simulated_dram_traffic() -> None:
    """Eq. (8) with the cache simulation's DRAM bytes per request in place of
    LLCMissRatio x BlockSize: a write that allocates in the write-back L2 moves nothing."""
    import dataclasses

    # interval 0: 1 read miss (128 B) fetching one line; interval 1: 6 reads + 1 write,
    # 1.5 lines fetched and one dirty line written back = 2.5 x 128 B over 7 requests
    def inputs(prof: IntervalProfile):
        inp = kernel_input_from_profile(GPU, prof, warps_per_sm=2, active_sms=2)
        return memory_inputs(inp, warps=2, sms=2)

    mi = inputs(dataclasses.replace(PROFILE, dram_bytes=np.array([128.0, 2.5 * 128])))
    assert mi.dram_ratio.tolist() == pytest.approx([1.0, 2.5 / 7])
    assert mi.l_dram_service.tolist() == pytest.approx([4.0, 4 * 2.5 / 7])  # x 128 B / 32 B/cyc
    # eq. (4) keeps the LLC miss ratio (the latency of a read that misses)
    assert mi.l_nocontention.tolist() == [75, 62.5]
    # a store-only interval whose writes stay in the L2: no DRAM stall (eq. 9)
    w = IntervalProfile.from_lists([4], [50], [0], [3], [1.0])
    assert mdm_queue_stalls(inputs(dataclasses.replace(w, dram_bytes=np.zeros(1))))[1] == [0]
    # without measured bytes, eq. (8) as written: 1.0 x 4; eq. (9), NMD: 0.5 x 2 x 6 x 4
    assert mdm_queue_stalls(inputs(w))[1].tolist() == [24.0]


def test_mdm_kernel_prediction_by_hand() -> None:
    p = get_model("mdm").predict_kernel(_inp())
    # interval 0: 310 + 0 + 32 + 4 = 346; interval 1: 105 + 2 x 266.5 + 192 + 12 = 842
    assert p.details["S_MSHR_total"] == 533
    assert p.cycles == 346 + 842  # 4 warps x 15 insts over 2 SMs: eq. (1) IPC = 60 / 1188
    assert p.ipc == pytest.approx(2 * (2 * 15 / 1188))  # IPC = #SMs x IPC^SM
    assert p.md_fraction == 0.5
    assert p.details["roofline_bound"] == 0.0  # NoC bound 32 x 128 / 8 = 512 < 1188
    stack = {k: v * p.warp_insts for k, v in p.cpi_stack.items()}
    # base = C - S = 10 + 5; dependency = 400; mshr = 2 x 62.5; noc = 32 + 3 x 192; dram = 4 + 3 x 12
    assert stack == pytest.approx(
        {"base": 15, "dependency": 400, "ldst": 0, "units": 0, "mshr": 125, "noc": 608, "dram": 40}
    )


def test_streaming_l1_uses_the_noc_queue_size() -> None:
    """Footnote 2: with allocate-on-fill, the SM's NoC queue (noc.sm_queue_requests = 4)
    replaces the 256 MSHRs; the L1's miss queue plays no part; MSHRs fewer than the
    queue still bind; an allocate-on-miss L1 ignores the queue."""
    hand = get_model("mdm").predict_kernel(_inp()).cycles  # 4 MSHRs
    l1_fill = {**CFG["l1"], "mshr_entries": 256, "allocate_on": "fill"}

    def cycles(l1: dict, queue: int) -> float:
        cfg = {**CFG, "l1": l1, "noc": {**CFG["noc"], "sm_queue_requests": queue}}
        return get_model("mdm").predict_kernel(_inp(GPUConfig.model_validate(cfg))).cycles

    assert cycles(l1_fill, 4) == hand
    assert cycles({**l1_fill, "miss_queue_entries": 1}, 4) == hand  # not the miss queue
    assert cycles({**l1_fill, "mshr_entries": 4}, 512) == hand  # the smaller one binds
    assert cycles({**CFG["l1"], "allocate_on": "miss"}, 1) == hand  # 4 MSHRs, no queue
    many = {**CFG, "l1": {**CFG["l1"], "mshr_entries": 256}}
    assert get_model("mdm").predict_kernel(_inp(GPUConfig.model_validate(many))).md_fraction == 0
    assert cycles(l1_fill, 512) < hand  # a queue that never fills: no batches


def test_figure4_three_mshrs_three_warps() -> None:
    """Paper 001 Fig. 4 / Sec. III-B: 3 MSHRs, 3 warps.

    MD (GS = 32): W1's 6 requests over 3 MSHRs are serviced in 2 batches, so one
    extra batch for W1 alone; all 3 warps (18 requests) need 6 batches. NMD (GS = 1):
    one request per warp, 3 x 1 <= 3 MSHRs: no MSHR stall and M = 3 requests in flight.
    """
    gpu = GPU.with_updates({"l1.mshr_entries": 3})
    md = IntervalProfile.from_lists([2], [200], read_misses=[6])
    mi = memory_inputs(kernel_input_from_profile(gpu, md, warps_per_sm=1, active_sms=1), 1, 1)
    assert mi.md.tolist() == [True] and mdm_extra_batches(mi).tolist() == [1]  # 2 batches
    assert mi.m.tolist() == [3]  # only 3 requests in flight
    mi = memory_inputs(kernel_input_from_profile(gpu, md, warps_per_sm=3, active_sms=1), 3, 1)
    assert mdm_extra_batches(mi).tolist() == [5]  # ceil(18 / 3) = 6 batches
    nmd = IntervalProfile.from_lists([2], [200], read_misses=[1])
    mi = memory_inputs(kernel_input_from_profile(gpu, nmd, warps_per_sm=3, active_sms=1), 3, 1)
    assert mi.md.tolist() == [False] and mdm_extra_batches(mi).tolist() == [0]
    assert mi.m.tolist() == [3]


def test_gpumech_mshr_formula_by_hand() -> None:
    # R = 6 requests, 4 MSHRs: waits ceil(j/4) for j = 1..6 = 1,1,1,1,2,2 -> sum 8;
    # D / L = 8/6 - 1 = 1/3.  R = 12, 4 MSHRs: 4 x (1+2+3) = 24 -> 24/12 - 1 = 1.
    f = gpumech_mshr_factor(np.array([6.0, 12.0, 4.0, 2.0]), 4)
    assert f.tolist() == pytest.approx([1 / 3, 1.0, 0.0, 0.0])
    # R = 6.5 (an average): the sum runs over j = 1..floor(R) = 6 (sum 8, as above) and is
    # divided by R itself: 8 / 6.5 - 1 = 3/13
    assert gpumech_mshr_factor(np.array([6.5]), 4).tolist() == pytest.approx([3 / 13])
    # Slow reference: the literal sum.
    for r in range(1, 40):
        for k in (1, 3, 4, 7):
            ref = sum(math.ceil(j / k) for j in range(1, r + 1)) / r - 1 if r > k else 0.0
            assert gpumech_mshr_factor(np.array([float(r)]), k)[0] == pytest.approx(ref)


def test_gpumech_queue_by_hand() -> None:
    # A = 10 requests, s = 2 cycles, T = 100: rho = 0.2, M/D/1 wait = 0.2 x 2 / (2 x 0.8) = 0.25.
    # T = 15: rho = 4/3 >= 1 -> s A / 2 = 10. T = 21: rho = 0.952, M/D/1 = 20 > cap s A / 2 = 10.
    d = gpumech_queue_delay(
        np.array([10.0, 10.0, 10.0, 0.0]), 2.0, np.array([100.0, 15.0, 21.0, 5.0])
    )
    assert d.tolist() == pytest.approx([0.25, 10.0, 10.0, 0.0])


def test_gpumech_prediction_uses_uncontended_latency() -> None:
    mi = memory_inputs(_inp(), 2, 2)
    p = get_model("gpumech").predict_kernel(_inp())
    # R = 12 > 4 MSHRs: factor 1 (above); MSHR stall = 1 x L^NoContention_1 = 62.5; no NoC queue.
    stack = {k: v * p.warp_insts for k, v in p.cpi_stack.items()}
    assert stack["mshr"] == pytest.approx(62.5)
    # Without a NoC model GPUMech predicts fewer cycles than the NoC roofline
    # (32 requests x 128 B / 8 B per cycle = 512): the floor binds and the excess is NoC stall.
    assert p.details["roofline_bound"] == 1.0 and p.cycles == 512
    assert stack["noc"] == pytest.approx(512 - p.details["cycles_eq1"])
    a_dram = mi.llc_miss * mi.m * 2  # [2, 3] DRAM requests of both SMs, s = 4 cycles
    t = PROFILE.n_insts + PROFILE.stall  # [310, 105]: rho = [8/310, 12/105]
    rho = a_dram * 4 / t
    expected = np.minimum(rho * 4 / (2 * (1 - rho)), 4 * a_dram / 2).sum()
    assert stack["dram"] == pytest.approx(expected)
    assert p.details["cycles_eq1"] == pytest.approx(15 + 400 + 62.5 + expected)


def test_tail_wave_by_hand() -> None:
    """3 blocks of 2 warps on 2 SMs (1 block per SM): one full wave and a 1-block tail.

    The tail runs W = 2 warps on #SMs = 1: eq. (10) 16 x 6 x 1 = 96 <= 100, not
    saturated, so both intervals take half the queueing latency (eq. 9):
    S^NoC = [0.5 x 2 x 16, 0.5 x 6 x 16] = [16, 48], S^DRAM = [0.5 x 2 x 2, 0.5 x 6 x 1] =
    [2, 3]; S^Mem_1 = 62.5 + 48 + 3 = 113.5, S^MSHR_1 = 2 x 113.5 = 227.
    Tail = 310 + 16 + 2 + 105 + 227 + 48 + 3 = 711; full wave = 1188 (above).
    """
    inp = kernel_input_from_profile(
        GPU, PROFILE, warps_per_sm=2, active_sms=2, warps_per_block=2, n_blocks=3
    )
    p = get_model("mdm").predict_kernel(inp)
    assert inp.waves == 1.5 and p.details["tail_sms"] == 1 and p.details["tail_warps_per_sm"] == 2
    assert p.cycles == 1188 + 711
    assert p.warp_insts == 6 * 15


def test_combined_kernels_are_total_insts_over_total_cycles() -> None:
    from mdm.models.base import combine_predictions

    a = get_model("mdm").predict_kernel(_inp())
    b = get_model("mdm").predict_kernel(
        kernel_input_from_profile(
            GPU, PROFILE, warps_per_sm=2, active_sms=2, warps_per_block=2, n_blocks=3
        )
    )
    tot = combine_predictions([a, b])
    assert tot.cycles == a.cycles + b.cycles and tot.warp_insts == a.warp_insts + b.warp_insts
    assert tot.ipc == pytest.approx((60 + 90) / (1188 + 1899))
    assert sum(tot.cpi_stack.values()) == pytest.approx(tot.cycles / tot.warp_insts)
    with pytest.raises(ValueError, match="different models"):
        combine_predictions([a, get_model("gpumech").predict_kernel(_inp())])


def test_noc_bandwidth_limited_by_the_active_sms_ports() -> None:
    from mdm.models.roofline import noc_bytes_per_cycle, roofline_bound

    # per-SM ejection port 2 GB/s = 2 B/cycle: 2 SMs draw 4 of the NoC's 8 B/cycle
    noc = {"bandwidth_gbps": 8, "sm_port_gbps": 2}
    gpu = GPUConfig.model_validate({**CFG, "noc": noc, "l2": {**CFG["l2"], "banks": 8}})
    assert noc_bytes_per_cycle(gpu, 2) == pytest.approx(4.0)
    assert noc_bytes_per_cycle(gpu, 8) == pytest.approx(8.0)  # memory side binds
    # the L2 banks' ports serve at the same rate: 2 banks give 4 B/cycle to any SMs
    two_banks = GPUConfig.model_validate({**CFG, "noc": noc})
    assert two_banks.l2.banks == 2 and noc_bytes_per_cycle(two_banks, 8) == pytest.approx(4.0)
    assert noc_bytes_per_cycle(GPU, 2) == pytest.approx(8.0)  # no port given
    mi = memory_inputs(_inp(gpu), 2, 2)
    assert mi.l_noc_service == pytest.approx(128 / 4)  # eq. (7) with B^NoC = 4 B/cycle
    assert memory_inputs(_inp(gpu), 2, 1).l_noc_service == pytest.approx(128 / 2)
    base = roofline_bound(_inp(GPU)).noc
    assert base > 0
    assert roofline_bound(_inp(gpu)).noc == pytest.approx(2 * base)


def test_roofline_noc_bytes_with_a_sectored_l2_behind_a_line_l1() -> None:
    """A non-sectored L1's line miss is one access per sector of a sectored L2 in the
    cache statistics (4 here), so the NoC bound counts a sector per L2 access: loads only,
    both L2 layouts give (L1 read misses x 128 B) / bandwidth. Counting a line per L2
    access gave 4x that (found on Accel-Sim's SM2_GTX480 configuration)."""
    from mdm.config.load import load_gpu
    from mdm.memory import simulate_app
    from mdm.models.roofline import noc_bytes_per_cycle, roofline_bound
    from mdm.pipeline import predict_app
    from mdm.profile.handmade import kernel_from_warps
    from mdm.traces.model import AppTrace
    from mdm.traces.model import InstrClass as C

    lines = [0x10000 + 128 * i for i in range(32)]
    warp = [(C.LD_GLOBAL, [1], [0], lines), (C.FP32, [2], [1])]
    app = AppTrace(commands=[kernel_from_warps([warp] * 64, warps_per_block=4)], name="ld")
    base = load_gpu("mdm_pascal")
    assert not base.l1.sectored and not base.l2.sectored
    for gpu in (base, base.with_updates({"l2.sectored": True})):
        cache = simulate_app(app, gpu)
        k = cache.kernels[0]
        assert k.l2_accesses == k.l1_read_misses * (4 if gpu.l2.sectored else 1)
        inp = predict_app(app, gpu, ["roofline"], cache=cache).inputs[0]
        want = k.l1_read_misses * 128 / noc_bytes_per_cycle(gpu, inp.active_sms)
        assert roofline_bound(inp).noc == pytest.approx(want)


def test_mdm_pipelined_by_hand() -> None:
    p = get_model("mdm-pipelined").predict_kernel(_inp())
    # interval 1: R = M^Read W = 12 > 4 MSHRs (MD), eq. (10) saturated; graded exposure
    # 1 - 0.5 x 4 / 12 = 5/6 of eq. (9)'s full queues 2 x 6 x 16 = 192 and 2 x 6 x 1 = 12:
    # S^NoC = 160, S^DRAM = 10; 12 / 4 - 1 = 2 extra batches of max(L = 62.5, 160, 10)
    # = 160 each (eq. 5 would sum them); interval 0 (NMD) as in MDM: 346
    assert p.details["S_MSHR_total"] == pytest.approx(2 * 160)
    # kernel end: the last interval's unexposed 1/6 of 192 and of 12: 32 + 2
    assert kernel_end_drain(_inp()) == pytest.approx((32.0, 2.0))
    assert p.details["S_KernelEnd"] == pytest.approx(34.0)
    assert p.cycles == pytest.approx(346 + 105 + 2 * 160 + 160 + 10 + 34)
    stack = {k: v * p.warp_insts for k, v in p.cpi_stack.items()}
    # mshr = 2 x 62.5; the excess 2 x (160 - 62.5) = 195 goes to the NoC (the longer queue)
    assert stack == pytest.approx(
        {
            "base": 15,
            "dependency": 400,
            "ldst": 0,
            "units": 0,
            "mshr": 125,
            "noc": 32 + 160 + 195 + 32,
            "dram": 4 + 10 + 2,
        }
    )
    # never slower than faithful MDM here
    assert p.cycles <= get_model("mdm").predict_kernel(_inp()).cycles


def test_mdm_pipelined_exposure_is_continuous_at_the_md_threshold() -> None:
    """Eq. (9)'s exposure jumps from 1/2 to 1 when eq. (2) turns true; MDM-Pipelined's
    ``1 - 0.5 #MSHRs / (M^Read W)`` starts at 1/2 there and tends to 1, so a read miss
    more or less near the threshold moves its prediction a little, not by a batch."""
    from mdm.models.mdm import queue_exposure

    def cycles(model: str, reads: float) -> float:
        prof = IntervalProfile.from_lists([10], [300], [reads], [0], 0.5)
        inp = kernel_input_from_profile(GPU, prof, warps_per_sm=2, active_sms=2)
        return get_model(model).predict_kernel(inp).cycles

    below, above = cycles("mdm-pipelined", 2.0), cycles("mdm-pipelined", 2.001)
    assert above == pytest.approx(below, rel=1e-3)
    assert cycles("mdm", 2.001) > 1.3 * cycles("mdm", 2.0)  # the paper's model jumps
    prof = IntervalProfile.from_lists([10, 10, 10], [300] * 3, [1, 2.002, 40], [0] * 3, 0.5)
    inp = kernel_input_from_profile(GPU, prof, warps_per_sm=2, active_sms=2)
    mi = memory_inputs(inp, warps=2, sms=2)
    graded, _ = queue_exposure(mi, graded=True)
    paper, _ = queue_exposure(mi)
    assert paper.tolist() == [0.5, 1.0, 1.0]
    assert graded.tolist() == pytest.approx([0.5, 1 - 0.5 * 4 / 4.004, 1 - 0.5 * 4 / 80])


def test_mdm_pipelined_kernel_end_by_hand() -> None:
    """NMD-only profile: no extra batches, so MDM-Pipelined is MDM plus the kernel-end
    term, the other half of the last interval's eq. (9) queue: M = min(1 x 2, 4) = 2,
    S^NoC = 1/2 x 2 SMs x 2 x 16 = 32, S^DRAM = 1/2 x 2 x 2 x (0.5 x 128 / 32) = 4."""
    nmd_prof = IntervalProfile.from_lists([10], [300], [1], [0], 0.5)
    nmd = kernel_input_from_profile(GPU, nmd_prof, warps_per_sm=2, active_sms=2)
    assert kernel_end_drain(nmd) == pytest.approx((32.0, 4.0))
    p = get_model("mdm-pipelined").predict_kernel(nmd)
    assert p.details["S_KernelEnd"] == pytest.approx(36.0)
    assert p.cycles == pytest.approx(get_model("mdm").predict_kernel(nmd).cycles + 36.0)
    stack = {k: v * p.warp_insts for k, v in p.cpi_stack.items()}
    assert stack["noc"] == pytest.approx(32.0 + 32.0) and stack["dram"] == pytest.approx(8.0)
    # 5 blocks of 2 warps on 2 SMs, 1 block per SM: 2 full waves and a tail of 1 block,
    # whose 2 warps on 1 SM queue 1/2 x 1 x 2 x 16 = 16 and 1/2 x 1 x 2 x 2 = 2
    tail = kernel_input_from_profile(
        GPU, nmd_prof, warps_per_sm=2, active_sms=2, n_blocks=5, warps_per_block=2
    )
    assert final_wave(tail) == (2, 1)
    assert kernel_end_drain(tail) == pytest.approx((16.0, 2.0))
    assert final_wave(nmd) == (2, 2)


def test_mdm_pipelined_fractional_batches_by_hand() -> None:
    # M^Read = [1, 5], W = 2, 4 MSHRs: interval 1 has R = 10 > 4 (eq. 2, MD).
    # Eq. (6): ceil(10 / 4) - 1 = 2 batches; MDM-Pipelined: 10 / 4 - 1 = 1.5.
    prof = IntervalProfile.from_lists([10, 5], [300, 100], [1, 5], [0, 1], [0.5, 0.25])
    inp = kernel_input_from_profile(GPU, prof, warps_per_sm=2, active_sms=2)
    mi = memory_inputs(inp, warps=2, sms=2)
    assert mdm_extra_batches(mi).tolist() == [0, 2]
    assert pipelined_extra_batches(mi).tolist() == [0, 1.5]
    # M = min(10, 4) + 2 = 6 as in the profile above, exposure 1 - 0.5 x 4 / 10 = 0.8 of
    # 192 and 12: S^NoC = 153.6, S^DRAM = 9.6, so each extra batch lasts
    # max(62.5, 153.6, 9.6) = 153.6 and 1.5 of them 230.4; kernel end 0.2 x (192 + 12)
    p = get_model("mdm-pipelined").predict_kernel(inp)
    assert p.details["S_MSHR_total"] == pytest.approx(1.5 * 153.6)
    assert p.cycles == pytest.approx(346 + 105 + 1.5 * 153.6 + 153.6 + 9.6 + 0.2 * 204)
    # faithful MDM keeps the ceiling: 2 batches of eq. (5)'s 62.5 + 192 + 12
    assert get_model("mdm").predict_kernel(inp).details["S_MSHR_total"] == pytest.approx(
        2 * (62.5 + 192 + 12)
    )
    # exactly at the threshold (R = #MSHRs) the interval is NMD: no batch either way
    at = IntervalProfile.from_lists([10], [300], [2], [0], 0.5)
    inp_at = kernel_input_from_profile(GPU, at, warps_per_sm=2, active_sms=2)
    mi_at = memory_inputs(inp_at, warps=2, sms=2)
    assert pipelined_extra_batches(mi_at).tolist() == [0]


def test_mdm_pipelined_adds_the_mean_l2_bank_blocking() -> None:
    """The cache simulation's L2 merge-limit blocking (bank-cycles) divided by the banks
    is added once per kernel to MDM-Pipelined's ``mshr``; the paper's MDM ignores it."""
    import dataclasses

    base = _inp()
    blocked = dataclasses.replace(
        base, cache=dataclasses.replace(base.cache, l2_merge_stalls=3, l2_blocked_cycles=960)
    )
    per_bank = 960 / GPU.l2.banks
    p0 = get_model("mdm-pipelined").predict_kernel(base)
    p1 = get_model("mdm-pipelined").predict_kernel(blocked)
    assert p0.details["S_L2MSHR"] == 0 and p1.details["S_L2MSHR"] == pytest.approx(per_bank)
    assert p1.cycles == pytest.approx(p0.cycles + per_bank)
    n = p1.warp_insts
    assert (p1.cpi_stack["mshr"] - p0.cpi_stack["mshr"]) * n == pytest.approx(per_bank)
    assert get_model("mdm").predict_kernel(blocked).cycles == pytest.approx(
        get_model("mdm").predict_kernel(base).cycles
    )


def test_mdm_pipelined_merge_limit_by_hand() -> None:
    """Under GTO, an interval whose warp reads one L1 entry more than ``mshr_max_merge``
    times blocks the L1 with ``schedulers x M^Read`` misses in flight: eqs. (2), (3), (6)
    take that for ``#MSHRs``. Here 1 scheduler, M^Read = [1, 3], W = 2, 4 MSHRs."""
    import dataclasses

    def inp(gpu: GPUConfig, entry_reads: list[float] | None):
        prof = IntervalProfile.from_lists([10, 5], [300, 100], [1, 3], [0, 1], [0.5, 0.25])
        if entry_reads is not None:
            prof = dataclasses.replace(prof, entry_reads=np.array(entry_reads, float))
        return kernel_input_from_profile(gpu, prof, warps_per_sm=2, active_sms=2)

    def cycles(model: str, gpu: GPUConfig, entry_reads: list[float] | None) -> float:
        return get_model(model).predict_kernel(inp(gpu, entry_reads)).cycles

    over = [0.0, 9.0]  # interval 1 reads an entry 9 times; GPU.l1.mshr_max_merge = 8
    assert GPU.l1.mshr_max_merge == 8 and GPU.sm.scheduler_policy == "gto"
    mi, blocked = merge_blocked(inp(GPU, over), memory_inputs(inp(GPU, over), 2, 2))
    assert blocked.tolist() == [False, True]
    assert np.asarray(mi.mshrs).tolist() == [4, 3]  # min(4, 1 x 3) in interval 1
    assert mi.md.tolist() == [False, True]  # R = 6 > 3 (it was > 4 already)
    assert mi.m.tolist() == [2, 3 + 2]  # eq. (3): min(6, 3) + 1 x 2
    assert pipelined_extra_batches(mi).tolist() == [0, 1.0]  # 6 / 3 - 1 (6 / 4 - 1 = 0.5)
    # the same prediction as a GPU with 3 MSHRs (interval 0: R = 2 is NMD with either)
    three = GPUConfig.model_validate({**CFG, "l1": {**CFG["l1"], "mshr_entries": 3}})
    with_limit = cycles("mdm-pipelined", GPU, over)
    assert with_limit == pytest.approx(cycles("mdm-pipelined", three, None))
    assert with_limit > cycles("mdm-pipelined", GPU, None)
    # unchanged: at the limit, under loose round robin, and for the paper's MDM
    assert cycles("mdm-pipelined", GPU, [0.0, 8.0]) == cycles("mdm-pipelined", GPU, None)
    lrr = GPU.with_updates({"sm.scheduler_policy": "lrr"})
    assert cycles("mdm-pipelined", lrr, over) == cycles("mdm-pipelined", lrr, None)
    assert cycles("mdm", GPU, over) == cycles("mdm", GPU, None)


def test_roofline_and_mwp_cwp_issue_at_the_execution_units_rate() -> None:
    """The compute bound (and MWP-CWP's ``Issue_cycles``) is ``1 / schedulers`` cycles
    per warp instruction per SM, or the busiest execution unit's rate when slower,
    worked by hand: a warp whose SP unit is busy 2 cycles per instruction doubles both.
    The whole warp's busiest unit counts, not each interval's summed: two intervals
    bound by two different units (each 2 cycles per instruction on one unit, 0 on the
    other) give 1 cycle per instruction, as each unit is busy half the time."""
    from dataclasses import replace

    from mdm.models.mwp_cwp import mwp_cwp_parameters
    from mdm.models.roofline import roofline_bound, sm_cycles_per_inst

    inp = _inp()
    sched = inp.gpu.sm.schedulers
    n = inp.profile.total_insts
    assert inp.gpu.sm.issue_width == 1
    assert sm_cycles_per_inst(inp) == pytest.approx(1 / sched)

    def with_totals(totals: list[float]):  # noqa: ANN202
        return replace(inp, profile=replace(inp.profile, unit_totals=np.array(totals)))

    slow = with_totals([2 * n, 0.0])
    assert sm_cycles_per_inst(slow) == pytest.approx(2 / sched)
    assert roofline_bound(slow).compute == pytest.approx(2 * roofline_bound(inp).compute)
    assert roofline_bound(inp).compute == pytest.approx(
        inp.total_warp_insts / (inp.active_sms * sched)
    )
    assert mwp_cwp_parameters(slow)["issue_cycles"] == pytest.approx(2 / sched)
    assert sm_cycles_per_inst(with_totals([n, n])) == pytest.approx(1 / sched)  # split
    assert sm_cycles_per_inst(with_totals([0.5 * n, 0.2 * n])) == pytest.approx(1 / sched)


def test_mdm_pipelined_bandwidth_floor_by_hand() -> None:
    """An interval lasts at least the time the NoC or the DRAM needs for all its
    requests. NoC 2 GB/s: L^NoCService = 128 B / 2 B per cycle = 64 cycles per line."""
    slow = GPU.with_updates({"noc.bandwidth_gbps": 2})
    # interval 0 loads 2 lines per warp (R W = 4 = #MSHRs: NMD), interval 1 computes.
    # GTO, S = 0: C = max(n + 1 x 55, W n) = [65, 200]. Eq. (9), NMD: S^NoC = 1/2 x 2 SMs
    # x 4 x 64 = 256, S^DRAM = 1/2 x 2 x 4 x (0.5 x 4) = 8: 65 + 264 = 329 cycles, but
    # the NoC needs 2 SMs x 2 x 2 warps x 64 = 512 for the interval's 8 lines.
    prof = IntervalProfile.from_lists([10, 100], [0, 0], [2, 0], [0, 0], 0.5)
    inp = kernel_input_from_profile(slow, prof, warps_per_sm=2, active_sms=2)
    mi = memory_inputs(inp, warps=2, sms=2)
    floor_noc, floor_dram = bandwidth_floor(mi)
    assert floor_noc.tolist() == [512, 0] and floor_dram.tolist() == [16, 0]
    p = get_model("mdm-pipelined").predict_kernel(inp)
    assert p.details["bandwidth_floor_fraction"] == 0.5
    assert p.cycles == pytest.approx(512 + 200)  # no kernel-end drain: interval 1 has no queue
    stack = {k: v * p.warp_insts for k, v in p.cpi_stack.items()}
    assert stack["noc"] == pytest.approx(256 + (512 - 329)) and stack["dram"] == pytest.approx(8)
    assert get_model("mdm").predict_kernel(inp).cycles == pytest.approx(329 + 200)  # eq. (1)
    # the whole-kernel roofline is lower than the interval's floor: max(220, 8 x 64 = 512)
    assert get_model("roofline").predict_kernel(inp).cycles == pytest.approx(512)
    # lengthening the last interval does not also add its drain: the kernel's last request
    # waits for the whole eq. (9) queue either way, C + 2 x (256 + 8) after interval 0
    last = IntervalProfile.from_lists([100, 10], [0, 0], [0, 2], [0, 0], 0.5)
    inp = kernel_input_from_profile(slow, last, warps_per_sm=2, active_sms=2)
    assert multiwarp_cycles([100, 10], [0, 0], 2, 1.0).tolist() == [200, 65]
    assert get_model("mdm-pipelined").predict_kernel(inp).cycles == pytest.approx(
        200 + 65 + 2 * (256 + 8)
    )
    assert kernel_end_drain(inp) == pytest.approx(
        (256 * (264 - 183) / 264, 8 * (264 - 183) / 264)  # 183 = 512 - 329 already waited
    )


@settings(max_examples=80, deadline=None)
@given(
    reads=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 6.0, 30.0]), min_size=1, max_size=5),
    data=st.data(),
)
def test_mdm_pipelined_intervals_never_beat_their_bandwidth_floor(reads, data) -> None:
    k = len(reads)
    n = data.draw(st.lists(st.integers(1, 60), min_size=k, max_size=k))
    stall = data.draw(st.lists(st.integers(0, 400), min_size=k, max_size=k))
    writes = data.draw(st.lists(st.sampled_from([0.0, 1.0, 4.0]), min_size=k, max_size=k))
    miss = data.draw(st.lists(st.floats(0, 1), min_size=k, max_size=k))
    gpu = GPU.with_updates(
        {
            "noc.bandwidth_gbps": data.draw(st.sampled_from([1.0, 8.0, 100.0])),
            "dram.bandwidth_gbps": data.draw(st.sampled_from([2.0, 32.0, 400.0])),
        }
    )
    warps, sms = data.draw(st.integers(1, 16)), data.draw(st.integers(1, 4))
    prof = IntervalProfile.from_lists(n, stall, reads, writes, miss)
    mi = memory_inputs(
        kernel_input_from_profile(gpu, prof, warps_per_sm=warps, active_sms=sms), warps, sms
    )
    s_noc, s_dram, _ = mdm_queue_stalls(mi, graded=True)
    terms = pipelined_stack_terms(mi, s_noc, s_dram, pipelined_extra_batches(mi), {})
    time = sum(getattr(terms, c) for c in ("base", "dependency", "ldst", "units", "mshr"))
    time = time + terms.noc + terms.dram
    floor = np.maximum(*bandwidth_floor(mi))
    assert np.all(time >= floor * (1 - 1e-12))
    # an interval above its floor keeps MDM-Pipelined's terms exactly
    above = time > floor * (1 + 1e-12)
    bare = (
        mi.c
        + pipelined_extra_batches(mi) * np.maximum(mi.l_nocontention, np.maximum(s_noc, s_dram))
        + s_noc
        + s_dram
    )
    assert np.allclose(time[above], bare[above])


def test_eq10_saturation_is_a_strict_inequality() -> None:
    """Eq. (10) is ``L^NoCService x M x #SMs > L^MinLLC + L^MinDRAM``: equality is not
    saturated. DRAM latency 78 ns: L^MinLLC + L^MinDRAM = 50 + 78 = 128 = 16 x 4 x 2."""
    gpu = GPU.with_updates({"dram.latency_ns": 78})
    # both intervals MD (R W = 12 > 4 MSHRs); M = min(12, 4) + [0, 1] x 2 = [4, 6]
    prof = IntervalProfile.from_lists([10, 10], [300, 300], [6, 6], [0, 1], 0.5)
    mi = memory_inputs(kernel_input_from_profile(gpu, prof, warps_per_sm=2, active_sms=2), 2, 2)
    assert mi.md.tolist() == [True, True] and mi.m.tolist() == [4, 6]
    # 16 x 4 x 2 = 128 > 128 is false; 16 x 6 x 2 = 192 > 128
    assert noc_saturated(mi).tolist() == [False, True]
    s_noc, _, _ = mdm_queue_stalls(mi)
    assert s_noc.tolist() == [0.5 * 128, 192]  # eq. (9): half the queue unless saturated


def test_bandwidth_floor_counts_the_writes() -> None:
    """The floor moves every request of the interval, writes included:
    ``#SMs (M^Read + M^Write) W L^Service`` = 2 x (1 + 2) x 2 = 12 requests, x 16 cycles
    on the NoC and x 0.5 x 4 = 2 cycles on the DRAM (eq. 8 with the 0.5 miss ratio)."""
    prof = IntervalProfile.from_lists([10], [300], [1], [2], 0.5)
    mi = memory_inputs(kernel_input_from_profile(GPU, prof, warps_per_sm=2, active_sms=2), 2, 2)
    floor_noc, floor_dram = bandwidth_floor(mi)
    assert floor_noc.tolist() == [12 * 16] and floor_dram.tolist() == [12 * 2]


def test_mdm_pipelined_ties_go_to_the_noc() -> None:
    """Equal NoC and DRAM service (both 8 GB/s, LLC miss ratio 1: 128 / 8 = 16 cycles):
    the extra batches' excess and a bandwidth-floor shortfall go to ``noc`` (documented
    tie rule), not ``dram``."""
    from mdm.models.mdm import floor_shortfall

    gpu = GPU.with_updates({"dram.bandwidth_gbps": 8})
    prof = IntervalProfile.from_lists([10], [300], [6], [0], 1.0)
    mi = memory_inputs(kernel_input_from_profile(gpu, prof, warps_per_sm=2, active_sms=2), 2, 2)
    assert mi.l_noc_service == 16 and mi.l_dram_service.tolist() == [16]
    # R W = 12 > 4: MD; M = 4; eq. (10) 16 x 4 x 2 = 128 > 100; graded exposure
    # 1 - 0.5 x 4 / 12 = 5/6: S^NoC = S^DRAM = 5/6 x 2 x 4 x 16 = 320/3
    s_noc, s_dram, _ = mdm_queue_stalls(mi, graded=True)
    assert s_noc.tolist() == pytest.approx([320 / 3]) and s_dram.tolist() == s_noc.tolist()
    # 12 / 4 - 1 = 2 extra batches of max(L = 50 + 50, 320/3): excess 2 x (320/3 - 100)
    terms = pipelined_stack_terms(mi, s_noc, s_dram, pipelined_extra_batches(mi), {})
    assert terms.mshr.tolist() == [200]
    assert terms.noc.tolist() == pytest.approx([320 / 3 + 2 * (320 / 3 - 100)])
    assert terms.dram.tolist() == pytest.approx([320 / 3])
    # floors: 2 SMs x 6 x 2 warps x 16 = 384 each; an interval of 0 cycles falls 384 short
    short, noc_binds = floor_shortfall(mi, np.zeros(1))
    assert short.tolist() == [384] and noc_binds.tolist() == [True]


def test_merge_limit_is_schedulers_times_reads_capped_at_the_mshrs() -> None:
    """Merge-limit ``#MSHRs`` = ``min(#MSHRs, schedulers x M^Read)`` with 2 schedulers and
    4 MSHRs: M^Read = 1 -> min(4, 2) = 2, M^Read = 3 -> min(4, 6) = 4; an interval without
    read misses is never blocked (no miss of its own holds an entry)."""
    import dataclasses

    gpu = GPU.with_updates({"sm.schedulers": 2})
    prof = IntervalProfile.from_lists([10, 10, 10], [300] * 3, [1, 3, 0], [0, 0, 1], 0.5)
    prof = dataclasses.replace(prof, entry_reads=np.array([9.0, 9.0, 9.0]))
    inp = kernel_input_from_profile(gpu, prof, warps_per_sm=2, active_sms=2)
    mi, blocked = merge_blocked(inp, memory_inputs(inp, 2, 2))
    assert blocked.tolist() == [True, True, False]
    assert np.asarray(mi.mshrs).tolist() == [2, 4, 4]
    # eq. (2) with them: R W = [2, 6, 0] > [2, 4, 4]
    assert mi.md.tolist() == [False, True, False]


def test_table_v_hybrids_by_hand() -> None:
    """MDM-Queue (eq. 9 queues + GPUMech+'s MSHR model), MDM-MSHR (GPUMech+'s queues +
    eqs. 5-6) and GPUMech+ on one profile: interval 0 computes (no memory), interval 1
    has M^Read = 6, M^Write = 1, LLC miss 0.25; W = 2 on 2 SMs, 4 MSHRs.

    C = [310, 105] (GTO, as above). Interval 1: R = 12, M = min(12, 4) + 2 = 6, L = 62.5.
    GPUMech MSHR factor (R = 12, 4 MSHRs) = 1; eq. (6): ceil(12 / 4) - 1 = 2 batches.
    Eq. (9) (MD, saturated 16 x 6 x 2 > 100): S^NoC = 2 x 6 x 16 = 192, S^DRAM = 2 x 6 x 1 = 12.
    GPUMech queues, T = n + S = 105: NoC A = 12, s = 16, rho = 192/105 >= 1: D = 16 x 12 / 2
    = 96; DRAM A = 0.25 x 12 = 3, s = 4, rho = 12/105 = 4/35: D = rho s / (2 (1 - rho))
    = (16/35) / (62/35) = 8/31 (below the cap s A / 2 = 6).
    """
    prof = IntervalProfile.from_lists([10, 5], [300, 100], [0, 6], [0, 1], [0.0, 0.25])
    inp = kernel_input_from_profile(GPU, prof, warps_per_sm=2, active_sms=2)

    def cycles(model: str) -> float:
        p = get_model(model).predict_kernel(inp)
        assert p.details["roofline_bound"] == 0.0  # NoC roofline 28 x 128 / 8 = 448
        return p.cycles

    d = 96 + 8 / 31
    # MDM-Queue: S^MSHR = 1 x (62.5 + 192 + 12), plus eq. (9)'s queues
    assert cycles("mdm-queue") == pytest.approx(415 + 1 * (62.5 + 204) + 204)
    # MDM-MSHR: 2 batches of 62.5 + D^NoC + D^DRAM, plus the queues
    assert cycles("mdm-mshr") == pytest.approx(415 + 2 * (62.5 + d) + d)
    # GPUMech+: factor 1 with the queue delays in the MSHR latency
    assert cycles("gpumech+") == pytest.approx(415 + 1 * (62.5 + d) + d)
    # GPUMech: uncontended latency in the MSHR model, no NoC queue
    assert cycles("gpumech") == pytest.approx(415 + 62.5 + 8 / 31)


def test_gpumech_queue_interval_is_the_warp_alone() -> None:
    """GPUMech's queue takes ``T = n_i / IR + S_i`` (the interval of the warp alone), not
    the multi-warp C_i. Dual issue (IR = 2): n = 40, S = 10, T = 40 / 2 + 10 = 30, while
    2 warps under GTO take C = 30 + max(0, 1 x 40 - 2 x 10) / 2 = 40 = W n / IR.
    DRAM: A = 1.0 x M x #SMs = 2 x 2 x 1 = 4 requests, s = 128 / 32 = 4: rho = 16/30 = 8/15,
    D = rho s / (2 (1 - rho)) = (32/15) / (14/15) = 16/7 (cap s A / 2 = 8).
    NoC: s = 16, rho = 64/30 >= 1: D = 16 x 4 / 2 = 32."""
    from mdm.models.gpumech import gpumech_queue_stalls

    gpu = GPU.with_updates({"sm.issue_width": 2})
    prof = IntervalProfile.from_lists([40], [10], [2], [0], 1.0)
    mi = memory_inputs(kernel_input_from_profile(gpu, prof, warps_per_sm=2, active_sms=1), 2, 1)
    assert mi.single.tolist() == [30] and mi.c.tolist() == [40]
    d_noc, d_dram = gpumech_queue_stalls(mi, with_noc=True)
    assert d_noc.tolist() == [32] and d_dram.tolist() == pytest.approx([16 / 7])


def test_waves_with_two_blocks_per_sm_by_hand() -> None:
    """5 blocks of 1 warp, 2 blocks per SM on 2 SMs: waves = 5 / (2 x 2) = 1.25, one full
    wave (W = 2, 2 SMs) and a tail of 5 - 1 x 2 x 2 = 1 block (W = 1 on 1 SM). M^Read =
    [1, 3]: the full wave's interval 1 is MD (3 x 2 = 6 > 4), the tail's is not (3 <= 4);
    ``md_fraction`` is the full wave's (the kernel's occupancy), 1/2."""
    from mdm.models.interval import tail_wave

    prof = IntervalProfile.from_lists([10, 5], [300, 100], [1, 3], [0, 1], [0.5, 0.25])
    inp = kernel_input_from_profile(
        GPU, prof, warps_per_sm=2, active_sms=2, warps_per_block=1, n_blocks=5
    )
    assert inp.waves == 1.25 and tail_wave(inp) == (1, 1)
    p = get_model("mdm").predict_kernel(inp)
    assert (p.details["tail_warps_per_sm"], p.details["tail_sms"]) == (1, 1)
    assert p.md_fraction == 0.5


def test_a_representative_warp_shorter_than_the_mean_scales_the_waves() -> None:
    """The wave cycles are scaled by ``total_warp_insts / (n_warps x sum(n))``: a kernel
    whose warps average twice the representative's 15 instructions takes twice the
    hand-worked 1188 cycles; the whole-kernel terms (MDM-Pipelined's L2 blocking, 960 /
    2 banks, and its kernel-end drain of 34) are added after the scaling, once."""
    import dataclasses

    base = _inp()
    double = dataclasses.replace(base, total_warp_insts=2 * base.total_warp_insts)
    p = get_model("mdm").predict_kernel(double)
    assert p.details["rep_warp_scale"] == 2 and p.cycles == 2 * 1188
    blocked = dataclasses.replace(
        double, cache=dataclasses.replace(base.cache, l2_merge_stalls=3, l2_blocked_cycles=960)
    )
    # MDM-Pipelined's waves (above): 975 - 34 = 941 cycles before the kernel-end drain
    p = get_model("mdm-pipelined").predict_kernel(blocked)
    assert p.cycles == pytest.approx(2 * 941 + 34 + 960 / 2)


def test_roofline_bounds_by_hand() -> None:
    """DRAM bound: reads and writes, ``(dram_read_bytes + dram_write_bytes) / B``: per warp
    1 x 0.5 + 6 x 0.25 = 2 lines fetched and 1 x 0.25 written, 4 warps: (1024 + 128) B /
    32 B per cycle = 36. Compute bound per SM instruction: ``issue_factor / (schedulers x
    issue_width)``, or the busiest unit's ``max(unit_totals) / (schedulers x sum(n))``."""
    from dataclasses import replace

    from mdm.models.roofline import RooflineBound, roofline_bound, sm_cycles_per_inst

    inp = _inp()
    assert (inp.cache.dram_read_bytes, inp.cache.dram_write_bytes) == (1024, 128)
    assert roofline_bound(inp).dram == 36
    # dual issue, 1 scheduler: 1/2 cycle per instruction; unpaired issue slots (one per
    # instruction): issue_factor = 2 x 15 / 15 = 2, so 2 / 2 = 1 (single issue)
    dual = _inp(GPU.with_updates({"sm.issue_width": 2}))
    assert sm_cycles_per_inst(dual) == 0.5
    unpaired = replace(dual, profile=replace(PROFILE, issue_slots=PROFILE.n_insts.copy()))
    assert sm_cycles_per_inst(unpaired) == 1.0
    # 4 schedulers: 1/4, or a unit busy 2 cycles per instruction: 2 x 15 / (4 x 15) = 1/2
    four = _inp(GPU.with_updates({"sm.schedulers": 4}))
    assert sm_cycles_per_inst(four) == 0.25
    slow = replace(four, profile=replace(PROFILE, unit_totals=np.array([30.0, 3.0])))
    assert sm_cycles_per_inst(slow) == 0.5
    # the binding bound, ties to the first of compute, NoC, DRAM, latency
    assert RooflineBound(1.0, 5.0, 5.0, 0.0).binding == "noc"
    assert RooflineBound(0.0, 0.0, 5.0, 5.0).binding == "dram"
    assert RooflineBound(5.0, 5.0, 5.0, 5.0).binding == "base"


def test_waves_count_the_active_sms() -> None:
    """``waves = n_blocks / (blocks_per_sm x active_sms)``: 3 blocks of 2 warps, one per SM,
    on 1 active SM of the 2 are 3 waves (not 3 / (1 x 2) = 1.5)."""
    inp = kernel_input_from_profile(
        GPU, PROFILE, warps_per_sm=2, active_sms=1, warps_per_block=2, n_blocks=3
    )
    assert GPU.n_sm == 2 and inp.waves == 3


def test_combined_md_fraction_is_instruction_weighted() -> None:
    """``md_fraction`` of several kernels: the instruction-weighted mean. The hand kernel
    (60 instructions, half its intervals MD) with an NMD kernel of 3 x 10 = 30: 30 / 90."""
    from mdm.models.base import combine_predictions

    nmd = IntervalProfile.from_lists([10], [300], [1], [0], 0.5)
    b = get_model("mdm").predict_kernel(
        kernel_input_from_profile(GPU, nmd, warps_per_sm=1, active_sms=2, n_blocks=3)
    )
    a = get_model("mdm").predict_kernel(_inp())
    assert (a.md_fraction, a.warp_insts, b.md_fraction, b.warp_insts) == (0.5, 60, 0.0, 30)
    assert combine_predictions([a, b]).md_fraction == pytest.approx(30 / 90)
