"""Interval profile: hand-worked golden intervals, merge threshold, slow reference walk."""

from __future__ import annotations

import numpy as np
import pytest
from handgpu import hand_gpu
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.config.gpu import GPUConfig
from mdm.memory.stats import PCStats, WarpMemTrace
from mdm.profile.handmade import kernel_from_warps
from mdm.profile.interval import (
    UNIT_INT,
    UNIT_OF_CLASS,
    UNIT_SFU,
    UNIT_SP,
    Latencies,
    _issue_groups,
    _n_regs,
    default_latencies,
    entry_reads,
    exec_unit_costs,
    gpu_latencies,
    interval_profile,
    warp_cycles,
    warp_summaries,
)
from mdm.traces.model import InstrClass as C

INT_LAT, LD_LAT = 4.0, 100.0


def lat_table() -> Latencies:
    t = np.full(16, INT_LAT)
    t[C.LD_GLOBAL] = LD_LAT
    return Latencies(t, np.zeros(0, np.uint32), np.zeros(0))


# Worked by hand: issues at cycles 0, 1, 5, 100, 104, 108.
GOLDEN_WARP = [
    (C.LD_GLOBAL, [1], [0]),  # issue 0, r1 ready at 100
    (C.INT, [2], [0]),  # issue 1, r2 at 5
    (C.INT, [3], [2]),  # waits r2: issue 5, gap 3, r3 at 9
    (C.INT, [4], [1]),  # waits r1: issue 100, gap 94, r4 at 104
    (C.INT, [5], [4]),  # issue 104, gap 3, r5 at 108
    (C.ST_GLOBAL, [], [5, 1]),  # issue 108, gap 3; acknowledged at 108 + 4 = 112
]


def gpu() -> GPUConfig:
    return hand_gpu(2)


def test_golden_intervals_every_gap() -> None:
    k = kernel_from_warps([GOLDEN_WARP])
    p = interval_profile(k, 0, lat_table(), merge_threshold=0)
    assert p.n_insts.tolist() == [2, 1, 1, 1, 1]
    # the last interval waits from cycle 109 for the store's acknowledgement at 112
    assert p.stall.tolist() == [3, 94, 3, 3, 3]
    # warp alone is done when its store is acknowledged: 112 cycles
    assert p.total_insts + p.total_stall == 112
    assert p.warp == 0


def test_warp_cycles_golden() -> None:
    """A warp's single-warp cycles (the models' latency floor): 6 instructions issued
    and the store acknowledged at 112 (worked above); at issue width 2 the instructions
    count half, the stall (106) is the walk's."""
    k = kernel_from_warps([[(C.INT, [1], [0])], GOLDEN_WARP, []])
    assert warp_cycles(k, 1, lat_table()) == 112.0
    assert warp_cycles(k, 1, lat_table(), issue_width=2) == 3.0 + 106.0
    # one INT of latency 4: issued at 0, its result ready at 4
    assert warp_cycles(k, 0, lat_table()) == 4.0
    assert warp_cycles(k, 2, lat_table()) == 0.0
    with pytest.raises(IndexError, match="no warp 3"):
        warp_cycles(k, 3, lat_table())


def test_golden_intervals_merged() -> None:
    k = kernel_from_warps([GOLDEN_WARP])
    p = interval_profile(k, 0, lat_table(), merge_threshold=10)
    # gap 3 merged into interval 0, gap 94 closes it; the two later gaps of 3 merge,
    # and the store's acknowledgement adds 3 after the last issue
    assert p.n_insts.tolist() == [3, 3]
    assert p.stall.tolist() == [97, 9]


def test_default_threshold_is_authors_ten() -> None:
    k = kernel_from_warps([GOLDEN_WARP])
    assert interval_profile(k, 0, lat_table()).n_insts.tolist() == [3, 3]


def test_last_interval_waits_for_longest_result() -> None:
    k = kernel_from_warps([[(C.LD_GLOBAL, [1], [0]), (C.INT, [2], [0])]])
    p = interval_profile(k, 0, lat_table(), merge_threshold=0)
    # issues 0, 1; r1 ready at 100: stall from cycle 2 to 100
    assert p.n_insts.tolist() == [2]
    assert p.stall.tolist() == [98]


def test_warp_waits_for_its_last_store_acknowledgement() -> None:
    t = lat_table().class_cycles.copy()
    t[C.ST_GLOBAL] = 50.0
    lat = Latencies(t, np.zeros(0, np.uint32), np.zeros(0))
    # load at 0 (r1 at 100), store at 1 (ack at 51), int at 2: the load is the longest
    k = kernel_from_warps([[(C.LD_GLOBAL, [1], [0]), (C.ST_GLOBAL, [], [0]), (C.INT, [2], [0])]])
    assert interval_profile(k, 0, lat, merge_threshold=0).stall.tolist() == [97]
    # load result used at 100, store issued at 101 and acknowledged at 151
    k = kernel_from_warps([[(C.LD_GLOBAL, [1], [0]), (C.ST_GLOBAL, [], [1])]])
    p = interval_profile(k, 0, lat, merge_threshold=0)
    assert p.n_insts.tolist() == [1, 1]
    assert p.stall.tolist() == [99, 49]
    # the representative-warp walk sees the same single-warp time
    n, s = warp_summaries(k, lat)
    assert n.tolist() == [2] and s.tolist() == [148]


def test_store_acknowledgement_latency_follows_the_l1_write_policy() -> None:
    g = gpu()
    l1 = g.l1.hit_latency_cycles
    l2 = g.l2_hit_latency_cycles
    assert gpu_latencies(g).class_cycles[C.ST_GLOBAL] == pytest.approx(l1 + l2)
    wb = g.with_updates({"l1.write_policy": "write_back"})
    assert gpu_latencies(wb).class_cycles[C.ST_GLOBAL] == pytest.approx(l1)
    off = g.with_updates({"l1.write_policy": "write_back", "l1.enabled": False})
    assert gpu_latencies(off).class_cycles[C.ST_GLOBAL] == pytest.approx(l1 + l2)


def _stats() -> PCStats:
    # pc 0: load, 10 executions, 40 requests: 10 hits, 10 pending hits, 20 misses, 5 L2 misses
    # pc 80: store (position 5), 10 executions, 30 write requests, all L2 misses
    return PCStats(
        pc=np.array([80, 0], np.uint32),  # unsorted on purpose
        executions=np.array([10, 10]),
        l1_accesses=np.array([30, 40]),
        l1_hits=np.array([0, 10]),
        l1_pending_hits=np.array([0, 10]),
        l1_misses=np.array([30, 20]),
        l2_accesses=np.array([30, 20]),
        l2_misses=np.array([30, 5]),
    )


def test_load_latency_and_memory_columns_from_pc_stats() -> None:
    g = gpu()
    lat = gpu_latencies(g, _stats(), whole_warp=False)
    # p1 = 20 / 40 (pending hits are hits), p2 = 5 / 20: 20 + 0.5 * (100 + 0.25 * 200) = 95
    k = kernel_from_warps([GOLDEN_WARP])
    per = lat.per_instruction(k.pc, k.iclass)
    assert per[0] == pytest.approx(95.0)
    assert per[1] == g.latency.int_alu_cycles
    p = interval_profile(k, 0, lat, stats=_stats(), merge_threshold=0)
    # inst 3 waits until 95: gap 95 - 5 - 1; the store (issue 103) is acknowledged
    # after the L1 and L2 hit latencies, 20 + 100: the warp ends at 223, 119 after 104
    assert p.stall.tolist() == pytest.approx([3, 89, 3, 3, 119])
    assert p.read_misses.tolist() == pytest.approx([2, 0, 0, 0, 0])  # 20 misses / 10 execs
    assert p.write_reqs.tolist() == pytest.approx([0, 0, 0, 0, 3])  # 30 requests / 10 execs
    assert p.l2_miss_rate.tolist() == pytest.approx([0.25, 0, 0, 0, 1.0])


def test_dram_bytes_column_from_pc_stats() -> None:
    import dataclasses

    k = kernel_from_warps([GOLDEN_WARP])
    lat = gpu_latencies(gpu(), _stats(), whole_warp=False)
    assert interval_profile(k, 0, lat, stats=_stats(), merge_threshold=0).dram_bytes is None
    # pc 0 moved 640 B over 10 executions, the store pc 80 nothing (write-back L2)
    st = dataclasses.replace(_stats(), dram_bytes=np.array([0, 640]))
    p = interval_profile(k, 0, lat, stats=st, merge_threshold=0)
    assert p.dram_bytes.tolist() == pytest.approx([64, 0, 0, 0, 0])


def test_memory_columns_from_tracked_warp() -> None:
    k = kernel_from_warps([GOLDEN_WARP])
    wm = WarpMemTrace(
        warp=0,
        requests=np.array([4, 0, 0, 0, 0, 2], np.int32),
        l1_misses=np.array([3, 0, 0, 0, 0, 2], np.int32),
        l1_pending_hits=np.zeros(6, np.int32),
        l2_misses=np.array([1, 0, 0, 0, 0, 2], np.int32),
        dram_bytes=np.array([32, 0, 0, 0, 0, 64], np.int32),
    )
    p = interval_profile(k, 0, lat_table(), warp_mem=wm, merge_threshold=10)
    assert p.dram_bytes.tolist() == [32, 64]
    assert p.read_misses.tolist() == [3, 0]
    assert p.write_reqs.tolist() == [0, 2]
    assert p.l2_miss_rate.tolist() == pytest.approx([1 / 3, 1.0])


def test_no_stats_means_no_memory_columns() -> None:
    k = kernel_from_warps([GOLDEN_WARP])
    p = interval_profile(k, 0, gpu_latencies(gpu()))
    assert p.read_misses.sum() == 0 and p.write_reqs.sum() == 0


def test_bad_warp_index() -> None:
    k = kernel_from_warps([GOLDEN_WARP])
    with pytest.raises(IndexError, match="no warp 3"):
        interval_profile(k, 3)


# ---- slow reference implementation ------------------------------------------------


def slow_profile(
    insts: list[tuple[C, list[int], list[int]]], lat: Latencies, thr: float
) -> tuple[list[int], list[float]]:
    """Straightforward Python version of model-notes section 1."""
    ready: dict[int, float] = {}
    ns: list[int] = []
    ss: list[float] = []
    prev, last_done, cur_n, cur_s = -1.0, 0.0, 0, 0.0
    for k, (cls, d, s) in enumerate(insts):
        t = max([prev + 1.0] + [ready.get(r, 0.0) for r in s])
        gap = t - prev - 1.0
        if k > 0 and gap > 1e-9 and gap >= thr:
            ns.append(cur_n)
            ss.append(cur_s + gap)
            cur_n, cur_s = 0, 0.0
        elif k > 0 and gap > 1e-9:
            cur_s += gap
        cur_n += 1
        for r in d:
            ready[r] = t + lat.class_cycles[int(cls)]
            last_done = max(last_done, ready[r])
        if cls == C.ST_GLOBAL:  # the warp ends when its stores are acknowledged
            last_done = max(last_done, t + lat.class_cycles[int(cls)])
        prev = t
    ns.append(cur_n)
    ss.append(cur_s + max(0.0, last_done - prev - 1.0))
    return ns, ss


inst_st = st.tuples(
    st.sampled_from([C.INT, C.FP32, C.LD_GLOBAL, C.SFU, C.ST_GLOBAL]),
    st.lists(st.integers(0, 7), max_size=2, unique=True),
    st.lists(st.integers(0, 7), max_size=3, unique=True),
).map(lambda x: (x[0], [] if x[0] == C.ST_GLOBAL else x[1], x[2]))


@settings(max_examples=60, deadline=None)
@given(
    warps=st.lists(st.lists(inst_st, min_size=1, max_size=25), min_size=1, max_size=4),
    thr=st.sampled_from([0.0, 3.0, 10.0]),
)
def test_matches_slow_reference(warps: list, thr: float) -> None:
    k = kernel_from_warps(warps)
    lat = default_latencies()
    n_all, s_all = warp_summaries(k, lat)
    for w, insts in enumerate(warps):
        p = interval_profile(k, w, lat, merge_threshold=thr)
        ns, ss = slow_profile(insts, lat, thr)
        assert p.n_insts.tolist() == ns
        assert p.stall.tolist() == pytest.approx(ss)
        # totals do not depend on the threshold; warp_summaries agrees with the walk
        assert n_all[w] == len(insts)
        assert s_all[w] == pytest.approx(sum(ss))
        assert warp_cycles(k, w, lat) == pytest.approx(len(insts) + sum(ss))
        if thr == 0:
            assert np.all(p.stall[:-1] > 0)


@settings(max_examples=60, deadline=None)
@given(
    regs=st.lists(
        st.tuples(
            st.lists(st.integers(-1, 300), max_size=2), st.lists(st.integers(-1, 300), max_size=3)
        ),
        max_size=12,
    )
)
def test_scoreboard_covers_every_register_of_the_slice(regs: list) -> None:
    """``_n_regs`` (the scoreboard's size, from one warp's slice since predictions
    stopped scanning the whole kernel) exceeds every register the slice names."""
    dst = np.full((len(regs), 2), -1, np.int16)
    src = np.full((len(regs), 3), -1, np.int16)
    for i, (d, s) in enumerate(regs):
        dst[i, : len(d)] = d
        src[i, : len(s)] = s
    n = _n_regs(dst, src)
    named = [r for d, s in regs for r in d + s if r >= 0]
    assert n >= 1
    assert n == (max(named) + 1 if named else 1)


def test_whole_warp_load_latency() -> None:
    # pc 0: r = 40 / 10 = 4 requests, p1 = 0.5, p2 = 0.25
    q1 = 1 - 0.5**4
    m = 4 * 0.5 / q1
    q2 = 1 - 0.75**m
    lat = gpu_latencies(gpu(), _stats(), whole_warp=True)
    k = kernel_from_warps([GOLDEN_WARP])
    per = lat.per_instruction(k.pc, k.iclass)
    assert per[0] == pytest.approx(20 + q1 * (100 + q2 * 200))
    # one request per execution: same as the per-request formula
    one = PCStats(
        pc=np.array([0], np.uint32),
        executions=np.array([10]),
        l1_accesses=np.array([10]),
        l1_hits=np.array([5]),
        l1_pending_hits=np.array([0]),
        l1_misses=np.array([5]),
        l2_accesses=np.array([5]),
        l2_misses=np.array([1]),
    )
    a = gpu_latencies(gpu(), one, whole_warp=True).per_instruction(k.pc, k.iclass)[0]
    b = gpu_latencies(gpu(), one, whole_warp=False).per_instruction(k.pc, k.iclass)[0]
    assert a == pytest.approx(b) == pytest.approx(20 + 0.5 * (100 + 0.2 * 200))


def test_per_pc_load_latency_lookup_and_unseen_pcs() -> None:
    """Each load PC gets its own row (the highest PC included); a load PC beyond every
    row keeps the class latency; a PC the cache saw no access of counts as an L1 miss
    that hits the L2 (p1 = 1, p2 = 0), as without statistics. Hand GPU: L1 20, L2 100,
    DRAM 200; per-request formula."""
    stats = PCStats(
        pc=np.array([16, 0, 32], np.uint32),
        executions=np.array([0, 10, 10]),
        l1_accesses=np.array([0, 10, 10]),
        l1_hits=np.array([0, 0, 10]),
        l1_pending_hits=np.array([0, 0, 0]),
        l1_misses=np.array([0, 10, 0]),
        l2_accesses=np.array([0, 10, 0]),
        l2_misses=np.array([0, 10, 0]),
    )
    lat = gpu_latencies(gpu(), stats, whole_warp=False)
    k = kernel_from_warps([[(C.LD_GLOBAL, [1], [0])] * 4])  # pcs 0, 16, 32, 48
    per = lat.per_instruction(k.pc, k.iclass)
    # pc 0: all miss to DRAM 20 + 100 + 200; pc 16: unseen 20 + 100; pc 32 (the last
    # row): all hit 20; pc 48: no row, the class latency L1 + L2 = 120
    assert per.tolist() == pytest.approx([320, 120, 20, 120])


def test_shared_load_latency_is_the_shared_memory_latency() -> None:
    """A shared load's consumer waits ``shared_mem_cycles`` (30 here, the constant cache
    24): load at 0, result at 30, consumer issued at 30 after a gap of 29."""
    g = gpu().with_updates({"latency.shared_mem_cycles": 30, "latency.const_tex_cycles": 24})
    k = kernel_from_warps([[(C.LD_SHARED, [1], [0]), (C.INT, [2], [1])]])
    p = interval_profile(k, 0, gpu_latencies(g), merge_threshold=0)
    assert p.n_insts.tolist() == [1, 1]
    assert p.stall[0] == 29


def test_whole_warp_is_the_default() -> None:
    # the pipeline relies on the default: a split load waits for its slowest request
    k = kernel_from_warps([GOLDEN_WARP])
    a = gpu_latencies(gpu(), _stats()).per_instruction(k.pc, k.iclass)
    b = gpu_latencies(gpu(), _stats(), whole_warp=True).per_instruction(k.pc, k.iclass)
    c = gpu_latencies(gpu(), _stats(), whole_warp=False).per_instruction(k.pc, k.iclass)
    assert a.tolist() == b.tolist()
    assert a[0] > c[0]


def test_ldst_cycles_count_memory_instructions_per_interval() -> None:
    warp = [
        (C.LD_SHARED, [1], [0]),
        (C.LD_GLOBAL, [2], [0]),
        (C.INT, [3], [1, 2]),  # waits for the global load: new interval
        (C.ST_SHARED, [], [0]),
        (C.ST_GLOBAL, [], [0]),
        (C.INT, [4], [0]),
    ]
    p = interval_profile(kernel_from_warps([warp]), 0, lat_table(), merge_threshold=0)
    assert p.n_insts.tolist() == [2, 4]
    assert p.ldst_cycles is not None
    assert p.ldst_cycles.tolist() == [2, 2]


def test_ldst_cycles_charge_served_l1_requests_per_bank() -> None:
    # _stats(): pc 0 (the load) 10 executions, 10 hits + 10 pending hits -> 2 served
    # requests per execution; pc 80 (the store) 0 served -> 1 cycle
    k = kernel_from_warps([GOLDEN_WARP])
    p = interval_profile(k, 0, lat_table(), stats=_stats(), merge_threshold=1000)
    assert p.n_insts.tolist() == [6]
    assert p.ldst_cycles is not None
    assert p.ldst_cycles.tolist() == pytest.approx([2 + 1])
    p4 = interval_profile(k, 0, lat_table(), stats=_stats(), merge_threshold=1000, l1_banks=4)
    assert p4.ldst_cycles.tolist() == pytest.approx([1 + 1])  # max(1, 2 / 4) + 1
    with pytest.raises(ValueError, match="l1_banks"):
        interval_profile(k, 0, lat_table(), l1_banks=0)


def test_dual_issue_slots_golden() -> None:
    """Hand-worked groups of GOLDEN_WARP at issue width 2: the INT at index 1 is ready
    at cycle 0, independent of the load before it and on another unit (SP vs LD/ST),
    so it issues with it; every later instruction waits for a result."""
    k = kernel_from_warps([GOLDEN_WARP])
    p = interval_profile(k, 0, lat_table(), merge_threshold=0, issue_width=2)
    assert p.n_insts.tolist() == [2, 1, 1, 1, 1]  # intervals from the single-issue walk
    assert p.issue_slots.tolist() == [1, 1, 1, 1, 1]
    assert p.stall.tolist() == [3, 94, 3, 3, 3]
    assert interval_profile(k, 0, lat_table(), merge_threshold=0).issue_slots is None


@pytest.mark.parametrize(
    ("warp", "width", "diff_units", "slots"),
    [
        ([(C.INT, [1], [0]), (C.INT, [2], [0])], 2, True, 2),  # same unit (SP)
        ([(C.INT, [1], [0]), (C.INT, [2], [0])], 2, False, 1),  # any units may pair
        ([(C.INT, [1], [0]), (C.LD_SHARED, [2], [1])], 2, True, 2),  # RAW on r1
        ([(C.INT, [1], [0]), (C.LD_SHARED, [1], [0])], 2, True, 2),  # WAW on r1
        ([(C.INT, [1], [0]), (C.LD_SHARED, [2], [0]), (C.SFU, [3], [0])], 2, True, 2),
        ([(C.INT, [1], [0]), (C.LD_SHARED, [2], [0]), (C.SFU, [3], [0])], 3, True, 1),
        ([(C.FP32, [1], [0]), (C.INT, [2], [0]), (C.FP64, [3], [0])], 3, True, 2),
    ],
)
def test_dual_issue_pairing_rules(warp: list, width: int, diff_units: bool, slots: int) -> None:
    k = kernel_from_warps([warp])
    p = interval_profile(
        k, 0, lat_table(), merge_threshold=0, issue_width=width, dual_issue_diff_units=diff_units
    )
    assert p.issue_slots.sum() == slots


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([C.INT, C.FP32, C.SFU, C.LD_SHARED, C.LD_GLOBAL]),
            st.integers(0, 5),
            st.integers(0, 5),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_issue_slots_bounds(ops: list) -> None:
    """Groups never exceed the width, and a wider issue never delays an instruction
    (issue slots themselves need not shrink: see test_wider_issue_can_need_more_slots)."""
    warp = [(c, [d + 1], [s]) for c, d, s in ops]
    k = kernel_from_warps([warp])
    for width in (2, 3, 4):
        p = interval_profile(k, 0, lat_table(), merge_threshold=0, issue_width=width)
        assert np.all(p.issue_slots <= p.n_insts)
        assert np.all(p.issue_slots * width >= p.n_insts)
    times = [_group_times(k, width) for width in (1, 2, 3, 4)]
    for narrow, wide in zip(times, times[1:], strict=False):
        assert np.all(wide <= narrow)


def test_an_interval_opened_inside_an_issue_group_counts_its_own_slot() -> None:
    """A group spanning an interval boundary counts in both intervals. Width 2, latencies
    4 (load 100), every gap opens an interval. I0 load r1; I1..I99 alternate SFU, INT
    (no dependencies); P = I100 INT r4; Q = I101 INT <- r1; C = I102 SFU <- r4.
    Single issue: I_k at k up to Q at 101; r4 ready 104, so C issues at 104 after a gap
    of 2 and opens interval 1; C's result at 108: stall 108 - 105 = 3.
    Groups: (I0, I1) at 0, ..., (I98, I99) at 49, P at 50, Q waits for r1 to 100, and C
    (r4 ready at 54, SFU beside Q's INT) joins Q's group at 100.
    Interval 0: 102 instructions in 50 pairs and 2 singles = 52 slots; interval 1: C's
    group, 1 slot."""
    fill = [(C.SFU if i % 2 else C.INT, [2 + i % 2], [0]) for i in range(1, 100)]
    warp = [(C.LD_GLOBAL, [1], [0]), *fill, (C.INT, [4], [0]), (C.INT, [5], [1])]
    warp.append((C.SFU, [6], [4]))
    k = kernel_from_warps([warp])
    p = interval_profile(k, 0, lat_table(), merge_threshold=0, issue_width=2)
    assert p.n_insts.tolist() == [102, 1]
    assert p.stall.tolist() == [2, 3]
    assert p.issue_slots.tolist() == [52, 1]


def _group_times(k, width: int) -> np.ndarray:  # noqa: ANN001
    """Issue cycle of every instruction of warp 0 in the group walk of ``width``."""
    t = np.empty(k.n_instructions, np.float64)
    _issue_groups(
        np.ascontiguousarray(k.dst),
        np.ascontiguousarray(k.src),
        UNIT_OF_CLASS[k.iclass.astype(np.intp)],
        lat_table().per_instruction(k.pc, k.iclass).astype(np.float64),
        width,
        True,
        np.zeros(_n_regs(k.dst, k.src), np.float64),
        t,
    )
    return t


def test_wider_issue_can_need_more_slots() -> None:
    """Greedy in-order grouping (documented in ``_issue_groups``), worked by hand with
    lat_table's 4-cycle latencies. Width 2: {0,1} at 0, {2,3} at 1, then the INT at 4
    (reads r2, ready 1 + 4) and the load at 5 (reads r1, written by the SFU at 3, ready
    1 + 4) pair at 5: 3 groups. Width 3: {0,1,2} at 0, so r2 is ready at 4 and the INT at
    4 issues alone at 4, a cycle before the load can: 4 groups, none of them later.
    (Found by hypothesis in test_issue_slots_bounds, which asserted fewer slots.)"""
    warp = [
        (C.SFU, [3], [2]),
        (C.LD_GLOBAL, [1], [1]),
        (C.INT, [2], [0]),
        (C.SFU, [1], [4]),
        (C.INT, [2], [2]),
        (C.LD_GLOBAL, [1], [1]),
    ]
    k = kernel_from_warps([warp])
    assert _group_times(k, 2).tolist() == [0, 0, 1, 1, 5, 5]
    assert _group_times(k, 3).tolist() == [0, 0, 0, 1, 4, 5]
    slots = [
        interval_profile(k, 0, lat_table(), merge_threshold=0, issue_width=w).issue_slots.sum()
        for w in (2, 3)
    ]
    assert slots == [3, 4]


def _units_gpu(**sm: object) -> GPUConfig:
    """The hand GPU with Volta-like initiation intervals and the given ``sm`` fields."""
    g = gpu()
    lat = g.latency.model_copy(
        update={
            "int_alu_initiation_cycles": 2,
            "fp32_initiation_cycles": 2,
            "sfu_initiation_cycles": 8,
            "fp64_initiation_cycles": 4,
        }
    )
    return g.model_copy(update={"sm": g.sm.model_copy(update=sm), "latency": lat})


def test_exec_unit_costs_golden() -> None:
    """Unit and cost per class, worked by hand: cost = initiation x schedulers / units."""
    unit, cost = exec_unit_costs(_units_gpu(int_units=4))  # one INT unit per scheduler
    assert (unit[C.INT], cost[C.INT]) == (UNIT_INT, 2.0)
    assert (unit[C.FP32], cost[C.FP32]) == (UNIT_SP, 2.0)
    assert (unit[C.BRANCH], cost[C.BRANCH]) == (UNIT_INT, 2.0)  # no branch unit
    assert (unit[C.BARRIER], cost[C.BARRIER]) == (UNIT_INT, 1.0)
    assert unit[C.LD_GLOBAL] == unit[C.LD_SHARED] == -1 and cost[C.LD_GLOBAL] == 0
    unit, cost = exec_unit_costs(_units_gpu(sp_units=2, dp_units=0))  # Pascal-like: no INT
    assert (unit[C.INT], cost[C.INT]) == (UNIT_SP, 4.0)  # 2 cycles x 4 schedulers / 2 units
    assert (unit[C.FP32], cost[C.FP32]) == (UNIT_SP, 4.0)
    assert (unit[C.FP64], cost[C.FP64]) == (UNIT_SFU, 4.0)  # no DP units: on the SFUs
    assert (unit[C.SFU], cost[C.SFU]) == (UNIT_SFU, 8.0)
    # the defaults (initiation 1, one unit of each kind per scheduler) cost 1 per instruction
    _, cost = exec_unit_costs(gpu())
    assert set(cost[cost > 0].tolist()) == {1.0}


def test_unit_cycles_golden() -> None:
    """Per interval, the busiest unit's cycles: 3 FP32 + 2 INT (+ a load, on no unit)
    in one interval cost max(3 x 2, 2 x 2) = 6 with separate INT units, 10 when the
    INT work shares the SP units."""
    warp = [
        (C.FP32, [1], [0]),
        (C.FP32, [2], [0]),
        (C.INT, [3], [0]),
        (C.FP32, [4], [0]),
        (C.INT, [5], [0]),
        (C.LD_GLOBAL, [6], [0]),
    ]
    k = kernel_from_warps([warp])
    prof = interval_profile(k, 0, lat_table(), unit_costs=exec_unit_costs(_units_gpu(int_units=4)))
    assert prof.n_insts.tolist() == [6] and prof.unit_cycles.tolist() == [6.0]
    shared = interval_profile(k, 0, lat_table(), unit_costs=exec_unit_costs(_units_gpu()))
    assert shared.unit_cycles.tolist() == [10.0]
    assert interval_profile(k, 0, lat_table()).unit_cycles is None
    # two intervals: the 94-cycle gap of GOLDEN_WARP splits them, each counted apart
    g = interval_profile(
        kernel_from_warps([GOLDEN_WARP]), 0, lat_table(), unit_costs=exec_unit_costs(gpu())
    )
    assert g.n_insts.tolist() == [3, 3] and g.unit_cycles.tolist() == [2.0, 2.0]


def test_dual_issue_pairs_integer_and_fp32_on_separate_units() -> None:
    """With the configuration's units, independent INT + FP32 pairs issue together when
    the SM has INT units (Volta and later) and not when integer work shares the SP units
    (Pascal, and :data:`UNIT_OF_CLASS` without a configuration); two loads never pair
    (one LD/ST unit)."""
    warp = [(C.INT, [1], [0]), (C.FP32, [2], [0]), (C.INT, [3], [0]), (C.FP32, [4], [0])]
    loads = [(C.LD_GLOBAL, [1], [0]), (C.LD_GLOBAL, [2], [0])]

    def slots(w: list, g: GPUConfig | None) -> list[float]:
        costs = None if g is None else exec_unit_costs(g)
        k = kernel_from_warps([w])
        p = interval_profile(k, 0, lat_table(), merge_threshold=0, issue_width=2, unit_costs=costs)
        return p.issue_slots.tolist()

    assert slots(warp, _units_gpu(int_units=4)) == [2.0]  # {INT, FP32} twice
    assert slots(warp, _units_gpu()) == [4.0]  # INT and FP32 both on the SP units
    assert slots(warp, None) == [4.0]
    assert slots(loads, _units_gpu(int_units=4)) == [2.0]


def _shared_ldst(addrs: list[int], shared_banks: tuple[int, int, bool] | None) -> float:
    k = kernel_from_warps([[(C.LD_SHARED, [1], [0], addrs)]])
    p = interval_profile(k, 0, lat_table(), shared_banks=shared_banks)
    return float(p.ldst_cycles.sum())


@pytest.mark.parametrize(
    ("addrs", "banks", "want"),
    [
        ([4 * i for i in range(32)], (32, 1, False), 1),  # consecutive words
        ([8 * i for i in range(32)], (32, 1, False), 2),  # stride 2: 2-way conflict
        ([128 * i for i in range(32)], (32, 1, False), 32),  # a column of a 32 x 32 tile
        ([132 * i for i in range(32)], (32, 1, False), 1),  # the padded tile's column
        ([64] * 32, (32, 1, False), 1),  # one word: broadcast
        ([64] * 32, (32, 1, True), 1),
        ([0] * 16 + [128] * 16, (32, 1, False), 2),  # two words of bank 0
        ([0] * 16 + [128] * 16, (32, 1, True), 17),  # one broadcast: 32 - 15 accesses
        ([4 * i for i in range(32)], (32, 2, False), 2),  # one pass per half warp
        ([4 * i for i in range(32)], (16, 1, False), 2),  # 32 words over 16 banks
        ([4 * i for i in range(8)], (32, 1, False), 1),  # 8 active lanes
    ],
)
def test_shared_bank_conflicts_golden(addrs: list[int], banks: tuple, want: int) -> None:
    """LD/ST cycles of one shared load, worked by hand (GPGPU-Sim's bank passes)."""
    assert _shared_ldst(addrs, banks) == want
    assert _shared_ldst(addrs, None) == 1  # without the banks: one cycle, as before


def _gpgpusim_shared_cycles(
    lanes: list[int], addrs: list[int], banks: int, parts: int, limited: bool
) -> int:
    """Plain-Python transcription of GPGPU-Sim's shared_space access count."""
    total = 0
    size = 32 // parts
    for part in range(parts):
        acc: dict[int, dict[int, int]] = {}
        for lane, addr in zip(lanes, addrs, strict=True):
            if lane // size == part:
                word = addr >> 2
                acc.setdefault(word % banks, {}).setdefault(word, 0)
                acc[word % banks][word] += 1
        if not limited:
            total += max((len(w) for w in acc.values()), default=0)
            continue
        bc = None
        for bank in sorted(acc):
            rep = [w for w in sorted(acc[bank]) if acc[bank][w] > 1]
            if rep:
                bc = (bank, rep[0])
                break
        worst = 0
        for bank, words in acc.items():
            n = sum(words.values())
            if bc is not None and bc[0] == bank:
                n -= words[bc[1]] - 1
            worst = max(worst, n)
        total += worst
    return max(total, 1)


@settings(max_examples=150, deadline=None)
@given(
    mask=st.integers(1, 2**32 - 1),
    words=st.lists(st.integers(0, 95), min_size=32, max_size=32),
    banks=st.sampled_from([8, 16, 32]),
    parts=st.sampled_from([1, 2, 4]),
    limited=st.booleans(),
)
def test_shared_bank_conflicts_match_gpgpusim(
    mask: int, words: list[int], banks: int, parts: int, limited: bool
) -> None:
    """The compiled count equals a plain transcription of GPGPU-Sim's on random
    active masks and addresses (lanes in order, one address per active lane)."""
    from mdm.profile.interval import _shared_cycles

    lanes = [i for i in range(32) if mask >> i & 1]
    addrs = np.array([4 * words[i] for i in lanes], np.uint64)
    got = _shared_cycles(
        np.array([0], np.int64),
        np.array([mask], np.uint32),
        np.array([0, len(lanes)], np.int64),
        addrs,
        banks,
        parts,
        limited,
    )
    assert got[0] == _gpgpusim_shared_cycles(lanes, addrs.tolist(), banks, parts, limited)


def test_unit_totals_are_the_warps_cycles_per_unit() -> None:
    """``unit_totals``: per execution unit, the whole warp's cycles (one scheduler's
    share), worked by hand: 2 FP32 in one interval and 3 INT in another on an SM with
    INT units at initiation interval 2 give SP 4 and INT 6 cycles, while the
    per-interval maxima (``unit_cycles``) are 4 and 6."""
    warp = [
        (C.FP32, [1], [0]),
        (C.FP32, [2], [0]),
        (C.LD_GLOBAL, [3], [0]),
        (C.INT, [4], [3]),  # waits for the load: a new interval
        (C.INT, [5], [0]),
        (C.INT, [6], [0]),
    ]
    k = kernel_from_warps([warp])
    p = interval_profile(
        k, 0, lat_table(), merge_threshold=0, unit_costs=exec_unit_costs(_units_gpu(int_units=4))
    )
    assert p.n_insts.tolist() == [3, 3]
    assert p.unit_cycles.tolist() == [4.0, 6.0]
    assert p.unit_totals[UNIT_SP] == 4.0 and p.unit_totals[UNIT_INT] == 6.0
    assert p.unit_totals.sum() == 10.0


def test_shared_bank_passes_per_pc() -> None:
    """Bank passes per PC of one warp, worked by hand: the column read (32 words 32
    apart: one bank) 32 passes; the row read and write 1; the same PC conflict-free in
    one warp and 2-way (stride 2 words) in another; no shared instruction, no PC."""
    from mdm.profile.interval import shared_bank_passes

    col = [128 * i for i in range(32)]
    row = [4 * i for i in range(32)]
    two_way = [8 * i for i in range(32)]
    warp = [
        (C.LD_SHARED, [1], [0], col),
        (C.LD_SHARED, [2], [0], row),
        (C.ST_SHARED, [], [1], row),
    ]
    k = kernel_from_warps([warp])
    got = shared_bank_passes(k, 0, (32, 1, False))
    assert got == {0: 32.0, 16: 1.0, 32: 1.0}
    k2 = kernel_from_warps([[(C.LD_SHARED, [1], [0], row)], [(C.LD_SHARED, [1], [0], two_way)]])
    assert shared_bank_passes(k2, 0, (32, 1, False)) == {0: 1.0}
    assert shared_bank_passes(k2, 1, (32, 1, False)) == {0: 2.0}
    assert shared_bank_passes(kernel_from_warps([[(C.INT, [1], [0])]]), 0, (32, 1, False)) == {}


# The first load misses lines 0 and 1 (128 B); nine more read line 0 (its sector 2,
# bytes 64-95) before the dependent INT ends the interval; one more load reads line 0
# in the second interval.
ENTRY_WARP = [
    (C.LD_GLOBAL, [1], [], [0, 4, 128]),  # two lanes in line 0: one request
    *[(C.LD_GLOBAL, [2 + i], [], [64]) for i in range(9)],
    (C.INT, [20], [1]),  # waits for r1: interval 1
    (C.LD_GLOBAL, [11], [], [0]),
    (C.INT, [21], [11]),  # interval 2
]


def _entry_warp_mem(first_misses: int) -> WarpMemTrace:
    n = len(ENTRY_WARP)
    req = np.array([2, *[1] * 9, 0, 1, 0], np.int32)
    miss = np.array([first_misses, *[0] * 9, 0, 1, 0], np.int32)
    zeros = np.zeros(n, np.int32)
    return WarpMemTrace(
        warp=0, requests=req, l1_misses=miss, l1_pending_hits=zeros, l2_misses=zeros
    )


@pytest.mark.parametrize(
    ("entry_bytes", "first_misses", "want"),
    [
        (128, 2, [10, 1, 0]),  # line 0: the first load, then nine; line 1 once
        (32, 2, [1, 1, 0]),  # sector 0 once; sector 2's first read (inst 1) hits
        (128, 1, [0, 1, 0]),  # the first load's requests miss half the time: not counted
    ],
)
def test_entry_reads_golden(entry_bytes: int, first_misses: int, want: list[int]) -> None:
    """The most reads of one L1 entry per interval, counting only entries whose first
    read in the interval misses (worked by hand; a tracked warp's own miss counts)."""
    k = kernel_from_warps([ENTRY_WARP])
    wm = _entry_warp_mem(first_misses)
    p = interval_profile(
        k, 0, lat_table(), warp_mem=wm, merge_threshold=0, l1_entry_bytes=entry_bytes
    )
    assert p.n_insts.tolist() == [10, 2, 1]
    assert p.entry_reads.tolist() == want
    assert interval_profile(k, 0, lat_table(), warp_mem=wm, merge_threshold=0).entry_reads is None


def test_entry_reads_from_pc_statistics() -> None:
    """Without a tracked warp, an instruction's miss share is its PC's over all warps."""
    k = kernel_from_warps([ENTRY_WARP])
    pcs = 16 * np.arange(len(ENTRY_WARP))  # kernel_from_warps: pc = 16 x position
    loads = [11, *range(9, 0, -1), 0]  # unsorted on purpose
    acc = np.array([2, *[2] * 9, 4])
    miss = np.array([1, *[0] * 9, 3])  # pc 0 misses 3 of 4: counted; pc 176 1 of 2: not
    st = PCStats(
        pc=pcs[loads].astype(np.uint32),
        executions=np.full(len(loads), 2),
        l1_accesses=acc,
        l1_hits=acc - miss,
        l1_pending_hits=np.zeros(len(loads), np.int64),
        l1_misses=miss,
        l2_accesses=miss,
        l2_misses=miss,
    )
    p = interval_profile(k, 0, lat_table(), stats=st, merge_threshold=0, l1_entry_bytes=128)
    assert p.entry_reads.tolist() == [10, 0, 0]


@settings(max_examples=80, deadline=None)
@given(
    insts=st.lists(
        st.tuples(
            st.booleans(),  # a read (else an INT without addresses)
            st.lists(st.integers(0, 1023), min_size=0, max_size=6),  # lane addresses
            st.floats(0.0, 1.0),  # the instruction's L1 miss share
        ),
        min_size=1,
        max_size=24,
    ),
    cuts=st.sets(st.integers(1, 23), max_size=5),
    entry=st.sampled_from([32, 128]),
)
def test_entry_reads_matches_a_plain_count(insts: list, cuts: set, entry: int) -> None:
    """entry_reads against a direct count: per interval and entry, the reads that touch
    it, kept when its first reader's miss share is above 1/2."""
    warp = [
        (C.LD_GLOBAL, [1], [], addrs) if is_read else (C.INT, [2], [])
        for is_read, addrs, _ in insts
    ]
    k = kernel_from_warps([warp])
    n = len(insts)
    starts = np.array([0, *sorted(c for c in cuts if c < n)], np.int64)
    is_read = np.array([r for r, _, _ in insts])
    miss = np.array([f for _, _, f in insts])
    got = entry_reads(k, 0, n, starts, is_read, miss, entry)
    want = []
    for i, s0 in enumerate(starts):
        s1 = starts[i + 1] if i + 1 < len(starts) else n
        readers: dict[int, list[int]] = {}
        for j in range(s0, s1):
            if is_read[j]:
                for e in sorted({a // entry for a in insts[j][1]}):
                    readers.setdefault(e, []).append(j)
        best = [len(js) for js in readers.values() if miss[js[0]] > 0.5]
        want.append(max(best, default=0))
    assert got.tolist() == want


def test_handmade_lanes_are_the_first_len_addrs() -> None:
    """handmade docstring: an instruction with ``addrs`` of n < 32 entries has its first n
    lanes active (mask 0b111 for 3), 32 entries or none: all 32. Thread instructions of
    the warp: 3 + 32 + 32 = 67."""
    k = kernel_from_warps(
        [
            [
                (C.LD_GLOBAL, [1], [0], [0, 4, 8]),
                (C.LD_GLOBAL, [2], [0], [4 * i for i in range(32)]),
                (C.INT, [3], [1]),
            ]
        ]
    )
    assert [int(m) for m in k.mask] == [0b111, 0xFFFFFFFF, 0xFFFFFFFF]
    assert k.thread_instructions == 67


@pytest.mark.parametrize(
    "column",
    ["ldst_cycles", "issue_slots", "dram_bytes", "unit_cycles", "entry_reads"],
)
def test_interval_profile_rejects_an_optional_column_of_another_length(column: str) -> None:
    """IntervalProfile checks every per-interval column against ``n_insts``: 2 intervals
    with a 3-entry optional column is a ValueError naming the column."""
    from mdm.profile.intervals import IntervalProfile

    base = IntervalProfile.from_lists([1.0, 2.0], [0.0, 5.0])
    fields = {f: getattr(base, f) for f in ("n_insts", "stall", "read_misses", "write_reqs")}
    with pytest.raises(ValueError, match=column):
        IntervalProfile(**fields, l2_miss_rate=base.l2_miss_rate, **{column: np.zeros(3)})
    ok = IntervalProfile(**fields, l2_miss_rate=base.l2_miss_rate, **{column: np.zeros(2)})
    assert getattr(ok, column).shape == (2,)
