"""Issue order of the cache simulator: block slots refilled as blocks exit, and the
per-instruction arrays stored in (estimated, then observed) issue order, a pure
memory-layout change that must never change a result."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simresult import flat as _flat

from mdm.config.load import load_gpu
from mdm.memory import _core, cachesim, simulate_app
from mdm.traces.model import GLOBAL_MEMORY_CLASSES, MAX_DST, MAX_SRC, InstrClass, KernelTrace
from mdm.traces.workloads import generate


def test_layout_changes_back_and_forth_give_cold_results() -> None:
    """Alternating SM counts re-permutes the stored inputs (static order, observed
    order, order of another layout); every result equals a cold simulation's."""
    app = generate("stride", ctas=96)
    base = load_gpu("mdm_pascal")
    gpus = [base.with_updates({"n_sm": n}) for n in (8, 28, 5)]
    tw = {ki: [0, k.n_warps // 2, k.n_warps - 1] for ki, k in enumerate(app.kernels)}
    cold = []
    for g in gpus:
        cachesim.clear_input_cache()
        cold.append(_flat(simulate_app(app, g, track_warps=tw)))
    cachesim.clear_input_cache()
    for g, want in [
        *zip(gpus, cold, strict=True),
        *zip(gpus, cold, strict=True),
        (gpus[0], cold[0]),
    ]:
        assert _flat(simulate_app(app, g, track_warps=tw)) == want


def test_stored_order_is_a_permutation_and_last_order_is_kernel_order() -> None:
    """After a second simulation of a layout the stored order is the one observed in the
    first: a permutation of the memory instructions whose request arrays hold the same
    requests, equal to ``last_order`` (kernel instruction indices)."""
    app = generate("stride", ctas=64)
    gpu = load_gpu("mdm_pascal")
    kernel = app.kernels[0]
    cachesim.clear_input_cache()
    ref = cachesim._kernel_inputs(kernel, gpu)
    line0, ptr0 = ref.reqs.req_line.copy(), ref.reqs.req_ptr.copy()
    first = cachesim._L2State(gpu)
    cachesim.simulate_kernel(kernel, gpu, first)
    ki = cachesim._kernel_inputs(kernel, gpu)
    assert ki.perm is None and not ki.perm_observed  # kernel order the first time
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(kernel, gpu, l2)
    assert ki.perm_observed
    assert np.array_equal(first.last_order, l2.last_order)
    m = ki.inst.shape[0]
    assert np.array_equal(np.sort(ki.perm), np.arange(m))
    # the observed order is the one the simulation processed
    assert np.array_equal(ki.inst[ki.perm], l2.last_order)
    for pos in (0, m // 3, m - 1):
        j = ki.perm[pos]
        got = ki.reqs.req_line[ki.reqs.req_ptr[pos] : ki.reqs.req_ptr[pos + 1]]
        assert np.array_equal(got, line0[ptr0[j] : ptr0[j + 1]])
    # the LD/ST list gives each global instruction its stored position
    stored = np.full(kernel.n_instructions, -1, np.int64)
    stored[ki.ldst_pos] = ki.ldst_mem
    assert np.array_equal(stored[ki.inst[ki.perm]], np.arange(m))
    shared = np.setdiff1d(ki.ldst_pos, ki.inst)  # the other LD/ST-unit instructions
    assert shared.size > 0 and np.all(stored[shared] == -2)


def _chain_kernel(loads_per_warp: list[int]) -> KernelTrace:
    """One warp per block; warp ``w`` runs ``loads_per_warp[w]`` dependent loads (each
    reads the register the previous one loaded), every lane on its own line."""
    return _barrier_kernel([["L"] * n for n in loads_per_warp], per_block=1)


def test_a_finished_block_frees_its_slot_at_once() -> None:
    """One SM, two block slots: block 0 runs four dependent loads (four DRAM round
    trips), blocks 1, 2 and 3 one load each. GPGPU-Sim gives a slot to the next block as
    soon as a block exits, so blocks 2 and 3 take block 1's slot one after the other,
    each starting when the one before has its data, i.e. with block 0's next load:
    0, 4 | 1, 5 | 2, 6 | 3 (block 0, the oldest, first). Waves run back to back would
    give 0, 4, 1, 2, 3, 5, 6; one slot runs the blocks one after the other."""
    k = _chain_kernel([4, 1, 1, 1])
    gpu = load_gpu("mdm_pascal").with_updates({"n_sm": 1})
    for slots, want in ((2, [0, 4, 1, 5, 2, 6, 3]), (1, list(range(7)))):
        cachesim.clear_input_cache()
        l2 = cachesim._L2State(gpu)
        cachesim.simulate_kernel(k, gpu, l2, blocks_per_sm=slots)
        assert l2.last_order.tolist() == want


def test_the_next_block_goes_to_the_sm_that_frees_a_slot_first() -> None:
    """Two SMs, one slot each: block 0 runs four dependent loads, blocks 1, 2 and 3 one
    load each. Blocks 0 and 1 start on SMs 0 and 1; block 1 ends after one round trip
    while block 0 still has three to go, so GPGPU-Sim gives block 2, and after it block
    3, to SM 1. A fixed round-robin choice (block r -> SM r mod 2) would put block 2 on
    SM 0 behind block 0."""
    k = _chain_kernel([4, 1, 1, 1])
    gpu = load_gpu("mdm_pascal").with_updates({"n_sm": 2})
    cachesim.clear_input_cache()
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(k, gpu, l2, blocks_per_sm=1)
    sm_of = dict(zip(l2.last_order.tolist(), l2.last_sm.tolist(), strict=True))
    assert [sm_of[i] for i in range(7)] == [0, 0, 0, 0, 1, 1, 1]
    assert l2.last_order[:2].tolist() == [0, 4]  # equal clocks: the lower SM first


def test_sms_with_equal_clocks_go_in_index_order() -> None:
    """Three SMs (a tournament of four leaves, one of them no SM), one block each, every
    warp two independent loads: all SMs start at 0 and advance alike, so each round of
    issue is SM 0, 1, 2 (the lowest index first among equal clocks)."""
    k = _barrier_kernel([[(10 * w,), (10 * w + 1,)] for w in range(3)], per_block=1)
    gpu = load_gpu("mdm_pascal").with_updates({"n_sm": 3})
    cachesim.clear_input_cache()
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(k, gpu, l2, blocks_per_sm=1)
    assert l2.last_order.tolist() == [0, 2, 4, 1, 3, 5]
    assert l2.last_sm.tolist() == [0, 1, 2, 0, 1, 2]


@given(
    st.integers(0, 8).flatmap(
        lambda n: st.lists(st.integers(0, max(n - 1, 0)), min_size=n, max_size=n)
    )
)
def test_permutation_check_agrees_with_sorting(values: list[int]) -> None:
    """The stored issue order is kept only when the simulation processed every memory
    instruction once (:func:`cachesim._is_permutation`, a marker array); the indices
    are always below their count."""
    a = np.array(values, np.int64)
    want = np.array_equal(np.sort(a), np.arange(a.shape[0]))
    assert cachesim._is_permutation(a) == want


def _barrier_kernel(warps: list[list], per_block: int = 0) -> KernelTrace:
    """Blocks of ``per_block`` warps (default: one block of all); each warp a list of
    ``"L"`` (a load of 32 new lines that reads the register the previous load wrote: a
    DRAM round trip each), ``"B"`` (a barrier), tuples of line numbers (a load of
    those lines that depends on nothing), ``("S", lines...)`` (a store to them),
    ``("A", lines...)`` (an atomic whose result the next ``"L"`` reads) and ``("R",
    lines...)`` (an atomic without a result)."""
    per_block = per_block or len(warps)
    pcs, iclass, dst, src, addrs, ptr, wptr = [], [], [], [], [], [0], [0]
    line = 0
    for ops in warps:
        reg = -1
        for i, op in enumerate(ops):
            pcs.append(16 * i)
            if op == "B":
                iclass.append(InstrClass.BARRIER)
                dst.append([-1] * MAX_DST)
                src.append([-1] * MAX_SRC)
            elif op == "L":
                iclass.append(InstrClass.LD_GLOBAL)
                dst.append([i + 1] + [-1] * (MAX_DST - 1))
                src.append([reg] + [-1] * (MAX_SRC - 1))
                reg = i + 1
                addrs.extend(128 * (line + lane) for lane in range(32))
                line += 32
            elif op[0] in ("S", "A", "R"):  # store, atomic with a result, reduction
                iclass.append(InstrClass.ST_GLOBAL if op[0] == "S" else InstrClass.ATOMIC)
                if op[0] == "A":  # its result register feeds the next dependent load
                    dst.append([i + 1] + [-1] * (MAX_DST - 1))
                    reg = i + 1
                else:
                    dst.append([-1] * MAX_DST)
                src.append([-1] * MAX_SRC)
                addrs.extend(128 * op[1 + lane % (len(op) - 1)] for lane in range(32))
            else:  # the lanes read the given lines, in turn
                iclass.append(InstrClass.LD_GLOBAL)
                dst.append([i + 1] + [-1] * (MAX_DST - 1))
                src.append([-1] * MAX_SRC)
                addrs.extend(128 * op[lane % len(op)] for lane in range(32))
            ptr.append(len(addrs))
        wptr.append(len(pcs))
    n_i, n_w = len(pcs), len(warps)
    return KernelTrace(
        name="barriers",
        kernel_id=1,
        grid=(-(-n_w // per_block), 1, 1),
        block=(32 * per_block, 1, 1),
        nregs=8,
        shmem_bytes=0,
        binary_version=61,
        warp_ptr=np.array(wptr, np.int64),
        warp_block=np.arange(n_w, dtype=np.int32) // per_block,
        warp_id=np.arange(n_w, dtype=np.int32) % per_block,
        pc=np.array(pcs, np.uint32),
        opcode=np.zeros(n_i, np.uint16),
        iclass=np.array(iclass, np.uint8),
        mask=np.full(n_i, 0xFFFFFFFF, np.uint32),
        dst=np.array(dst, np.int16).reshape(-1, MAX_DST),
        src=np.array(src, np.int16).reshape(-1, MAX_SRC),
        mem_width=np.full(n_i, 4, np.uint8),
        line=np.full(n_i, -1, np.int32),
        addr_ptr=np.array(ptr, np.int64),
        addrs=np.array(addrs, np.uint64),
        opcodes=("LDG",),
    )


@pytest.mark.parametrize("policy", ["gto", "lrr"])
def test_a_barrier_holds_a_blocks_warps_until_the_last_arrives(policy: str) -> None:
    """Warp 0 runs three dependent loads (three DRAM round trips) before the block's
    barrier, warp 1 none; after it each loads once. As in GPGPU-Sim (``bar.sync``),
    warp 1 waits at the barrier, so its load comes after warp 0's chain and no earlier
    than warp 0 reached the barrier. Without the wait it would be the second load
    issued."""
    k = _barrier_kernel([["L", "L", "L", "B", "L"], ["B", "L"]])
    g = load_gpu("mdm_pascal").with_updates({"n_sm": 1})
    gpu = g.model_copy(update={"sm": g.sm.model_copy(update={"scheduler_policy": policy})})
    cachesim.clear_input_cache()
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(k, gpu, l2)
    assert l2.last_order[:3].tolist() == [0, 1, 2]
    assert sorted(l2.last_order[3:].tolist()) == [4, 6]


def test_a_warp_that_exits_releases_the_barrier_of_the_others() -> None:
    """Warp 1 exits without reaching the barrier that warp 0 waits at: the barrier counts
    the warps still running (GPGPU-Sim releases it when every unfinished warp has
    arrived), so warp 0 goes on once warp 1 has finished its three dependent loads, and
    every load is simulated. Without the wait warp 0's second load would come with warp
    1's second."""
    k = _barrier_kernel([["L", "B", "L"], ["L", "L", "L"]])
    gpu = load_gpu("mdm_pascal").with_updates({"n_sm": 1})
    cachesim.clear_input_cache()
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(k, gpu, l2)
    assert l2.last_order.tolist() == [0, 3, 4, 5, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from("LLB"), max_size=7), min_size=1, max_size=9),
    st.integers(1, 4),
    st.integers(1, 3),
    st.sampled_from(["gto", "lrr"]),
    st.sampled_from(["mdm_pascal", "v100"]),
)
def test_no_load_after_a_barrier_is_issued_before_the_block_reaches_it(
    warps: list[list[str]], per_block: int, n_sm: int, policy: str, preset: str
) -> None:
    """Random blocks of warps with loads and barriers (warps may reach different numbers
    of barriers, as when some exit early), on a Pascal and a Volta preset (sectored,
    streaming L1: the other compiled issue loop): every load is simulated once, and
    within a block no load after a warp's k-th barrier is issued before every load the
    block's warps have before their k-th barrier (all of a warp's loads if it has
    fewer)."""
    k = _barrier_kernel(warps, per_block)
    g = load_gpu(preset).with_updates({"n_sm": n_sm})
    gpu = g.model_copy(update={"sm": g.sm.model_copy(update={"scheduler_policy": policy})})
    cachesim.clear_input_cache()
    l2 = cachesim._L2State(gpu)
    cachesim.simulate_kernel(k, gpu, l2, blocks_per_sm=2)
    pos = {int(i): n for n, i in enumerate(l2.last_order)}
    loads = [
        [(int(k.warp_ptr[w]) + j, ops[:j].count("B")) for j, op in enumerate(ops) if op == "L"]
        for w, ops in enumerate(warps)
    ]
    assert sorted(pos) == sorted(i for w in loads for i, _ in w)
    for b0 in range(0, len(warps), per_block):
        block = [x for w in loads[b0 : b0 + per_block] for x in w]
        for bar in range(1, max(ops.count("B") for ops in warps[b0 : b0 + per_block]) + 1):
            before = [pos[i] for i, n in block if n < bar]
            after = [pos[i] for i, n in block if n >= bar]
            if before and after:
                assert max(before) < min(after)


def test_the_l2_sees_a_request_before_its_reply_queues() -> None:
    """SM 0 reads 96 lines (three independent loads), then line X; SM 1 reads line X at
    once, so X is in flight from the L2 for a DRAM latency (220 + 100 cycles). SM 0's
    request for X leaves its miss queue about 97 cycles in (one request per cycle) and
    reaches the L2 while X is still in flight: an L2 pending hit. The replies of SM 0's
    96 lines hold its share of the NoC for 96 x 4 cycles, which delays the data
    of X, not the L2's view of the request (charging that share before the L2, the
    request arrived after X's fill and hit)."""
    x = 2_000_000
    loads = [tuple(range(1_000_000 + 32 * n, 1_000_032 + 32 * n)) for n in range(3)]
    k = _barrier_kernel([[*loads, (x,)], [(x,)]], per_block=1)
    gpu = load_gpu("mdm_pascal").with_updates({"n_sm": 2})
    cachesim.clear_input_cache()
    res = cachesim.simulate_kernel(k, gpu, cachesim._L2State(gpu), blocks_per_sm=1)
    assert res.l2_read_accesses == 98
    assert res.l2_read_misses == 97
    assert res.l2_pending_hits == 1


def test_a_load_past_a_disabled_l1_pays_the_reply_bandwidth() -> None:
    """One SM reads 32 lines in one load over a NoC so narrow (5 GB/s) that the SM's
    replies take 36 cycles each: with the L1 on or off the kernel lasts as long, at least
    the 32 reply slots; an L1-off load that skipped the bank port and the reply share
    ended with its DRAM fetches (379 cycles instead of 1,231)."""
    k = _barrier_kernel([[tuple(range(1000, 1032))]], per_block=1)
    ends = []
    for on in (True, False):
        gpu = load_gpu("mdm_pascal").with_updates(
            {"n_sm": 1, "noc.bandwidth_gbps": 5.0, "noc.sm_port_gbps": 5.0, "l1.enabled": on}
        )
        cachesim.clear_input_cache()
        l2 = cachesim._L2State(gpu)
        cachesim.simulate_kernel(k, gpu, l2, blocks_per_sm=1)
        ends.append(l2.time - gpu.l2_hit_latency_cycles - gpu.dram_latency_cycles)
    step = gpu.l1.line_bytes / cachesim._sm_reply_bytes_per_cycle(gpu, 1)
    assert ends[1] == pytest.approx(ends[0])
    assert ends[1] >= 31 * step


def test_a_store_takes_its_l2_banks_port() -> None:
    """A load of 32 lines issued right after a store of 32 other lines ends later than
    the load alone by at least two slots of a bank port (36 cycles each at 5 GB/s): the
    store's requests reach the same L2 banks first and each takes a port slot (the
    bank's input serves writes as it serves reads). Stores without a port slot delayed
    the load by their 32 miss-queue cycles only."""
    load = tuple(range(1000, 1032))
    store = ("S", *range(3000, 3032))
    gpu = load_gpu("mdm_pascal").with_updates(
        {"n_sm": 1, "noc.bandwidth_gbps": 5.0, "noc.sm_port_gbps": 5.0}
    )
    ends = []
    for ops in ([load], [store, load]):
        cachesim.clear_input_cache()
        l2 = cachesim._L2State(gpu)
        cachesim.simulate_kernel(_barrier_kernel([ops], per_block=1), gpu, l2, blocks_per_sm=1)
        ends.append(l2.time)
    assert ends[1] >= ends[0] + 2 * cachesim._l2_port_cycles(gpu, 1)


def test_a_warp_waits_for_an_atomics_result_not_for_a_reduction() -> None:
    """An atomic that returns a value, then a load that reads it: the load issues only
    once the atomic's data are back, so the kernel lasts about two round trips to the
    L2 and DRAM. The same pair with a reduction (no result) lasts one: the load does
    not wait. Before, no warp waited for an atomic."""
    gpu = load_gpu("mdm_pascal").with_updates({"n_sm": 1})
    ends = {}
    for kind in ("A", "R"):
        k = _barrier_kernel([[(kind, 5000), "L"]], per_block=1)
        cachesim.clear_input_cache()
        l2 = cachesim._L2State(gpu)
        cachesim.simulate_kernel(k, gpu, l2, blocks_per_sm=1)
        ends[kind] = l2.time - gpu.l2_hit_latency_cycles - gpu.dram_latency_cycles
    trip = gpu.l2_hit_latency_cycles + gpu.dram_latency_cycles
    assert ends["R"] < 1.5 * trip
    assert ends["A"] >= ends["R"] + trip


@settings(max_examples=200, deadline=None)
@given(
    # mostly not ready: several blocks of eight scanned before the first ready warp
    st.lists(
        st.sampled_from([0.5, 2.0, 5.0, 7.5, 9.0, 12.0, np.inf, 1e300]), min_size=8, max_size=40
    ),
    st.integers(0, 9),
    st.integers(0, 40),
    st.sampled_from([0.0, 1.0, 4.0]),
    st.sampled_from([np.inf, 3.0, 10.0]),
)
def test_first_ready_warp_equals_the_plain_scan(
    ready: list[float], p: int, pe: int, t: float, soonest: float
) -> None:
    """The issue loop's eight-at-a-time scan for the first ready warp (LRR, one
    scheduler) gives the warp a one-by-one scan gives, and the same soonest ready time
    of the warps before it (finished: inf, at a barrier: 1e300)."""
    arr = np.array(ready, np.float64)
    pe = min(pe, arr.shape[0])
    want_pick, want_soon = -1, soonest
    for q in range(p, pe):
        if arr[q] <= t:
            want_pick = q
            break
        want_soon = min(want_soon, arr[q])
    assert _core._first_ready(arr, p, pe, t, soonest) == (want_pick, want_soon)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([int(c) for c in InstrClass]), max_size=300))
def test_ldst_lists_match_their_numpy_definition(classes: list[int]) -> None:
    """The compiled LD/ST-unit lists: ``inst`` the global memory instructions, ``both``
    every LD/ST-unit instruction (global, shared, constant/texture) in kernel order with
    its index in ``inst`` or -2."""
    iclass = np.array(classes, np.uint8)
    inst, both = cachesim._ldst_lists(iclass)
    want = np.flatnonzero(np.isin(iclass, [int(c) for c in GLOBAL_MEMORY_CLASSES]))
    assert inst.tolist() == want.tolist()
    others = [int(InstrClass.LD_SHARED), int(InstrClass.ST_SHARED), int(InstrClass.TEX_CONST)]
    pos = np.union1d(want, np.flatnonzero(np.isin(iclass, others)))
    assert both[:, 0].tolist() == pos.tolist()
    mem = np.full(pos.shape[0], -2)
    mem[np.searchsorted(pos, want)] = np.arange(want.shape[0])
    assert both[:, 1].tolist() == mem.tolist()


def _segments_by_definition(
    warp_ptr: np.ndarray, iclass: np.ndarray, src: np.ndarray, dst: np.ndarray
) -> tuple[list[int], list[int]]:
    """Issue segments as :func:`mdm.memory.schedule._segments` defines them, one warp and
    one instruction at a time: a new segment at a warp's start, after a barrier, and at
    an instruction reading a register that a global/local load or atomic of the current
    segment wrote."""
    loads = (int(InstrClass.LD_GLOBAL), int(InstrClass.LOCAL), int(InstrClass.ATOMIC))
    firsts: list[int] = []
    wseg: list[int] = []
    for w in range(warp_ptr.shape[0] - 1):
        wseg.append(len(firsts))
        written: set[int] = set()
        for i in range(int(warp_ptr[w]), int(warp_ptr[w + 1])):
            reads = {int(r) for r in src[i] if r >= 0}
            if i == warp_ptr[w] or iclass[i - 1] == int(InstrClass.BARRIER) or reads & written:
                firsts.append(i)
                written = set()
            if iclass[i] in loads:
                written |= {int(d) for d in dst[i] if d >= 0}
    wseg.append(len(firsts))
    return wseg, [*firsts, iclass.shape[0]]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from([int(c) for c in InstrClass]),
                st.lists(st.integers(-1, 5), min_size=MAX_SRC, max_size=MAX_SRC),
                st.lists(st.integers(-1, 5), min_size=MAX_DST, max_size=MAX_DST),
            ),
            max_size=12,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_issue_segments_match_their_definition(
    warps: list[list[tuple[int, list[int], list[int]]]],
) -> None:
    """The compiled issue segments (which skip the source lookups until a load of the
    segment has written a register) equal the plain definition, on random warps with
    sources and destinations anywhere among the slots (-1: unused), empty warps and
    barriers included."""
    from mdm.memory.schedule import _segments

    rows = [row for warp in warps for row in warp]
    warp_ptr = np.cumsum([0, *(len(w) for w in warps)]).astype(np.int64)
    iclass = np.array([r[0] for r in rows], np.uint8)
    src = np.array([r[1] for r in rows], np.int16).reshape(-1, MAX_SRC)
    dst = np.array([r[2] for r in rows], np.int16).reshape(-1, MAX_DST)
    seg_first = np.empty(len(rows) + 1, np.int64)
    wseg_ptr = _segments(warp_ptr, iclass, src, dst, seg_first)
    want_wseg, want_first = _segments_by_definition(warp_ptr, iclass, src, dst)
    assert wseg_ptr.tolist() == want_wseg
    assert seg_first[: int(wseg_ptr[-1]) + 1].tolist() == want_first
