"""Cache simulator core: hand-counted access streams that pin the counters, the
per-PC / per-warp statistics, the rates and the block assignment (the cases a mutation
pass over ``mdm.memory._core``, ``cachesim`` and ``stats`` found unchecked)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_memory_cachesim import LD, ST, gpu, make_kernel

from mdm.config.gpu import GPUConfig
from mdm.memory import _core, simulate_app, simulate_kernel
from mdm.memory.cachesim import _L2State
from mdm.memory.stats import KernelCacheStats, pc_rows
from mdm.traces.model import AppTrace, InstrClass, KernelTrace

FP = int(InstrClass.FP32)


def _dependent(insts: list[tuple[int, list[int], int]]) -> KernelTrace:
    """One warp running ``insts``, each load followed by an instruction that reads the
    loaded register (R1): the warp waits for every load's data before going on."""
    full = []
    for ins in insts:
        full.append(ins)
        if ins[0] == LD:
            full.append((FP, [], 0))
    k = make_kernel(full)
    ld = np.flatnonzero(k.iclass == LD)
    k.dst[ld, 0] = 1
    k.src[ld + 1, 0] = 1
    return k


def _line(x: int) -> tuple[int, list[int], int]:
    """A load of line ``x`` by all 32 lanes (one request)."""
    return (LD, [128 * x] * 32, 4)


def _store(x: int) -> tuple[int, list[int], int]:
    """A store of the whole line ``x`` (32 lanes x 4 B: every byte written)."""
    return (ST, [128 * x + 4 * i for i in range(32)], 4)


def test_a_store_hit_makes_its_l1_line_most_recently_used() -> None:
    """4-way L1 of 8 sets (linear index): lines 0, 8, 16, 24, 32 share set 0. The warp
    loads 0, 8, 16, 24 (4 misses, each waiting for its data), stores line 0 (a
    write-through hit: it becomes the most recently used, as GPGPU-Sim's tag access on
    a write hit), loads 32 (a miss that evicts the least recently used line, 8, not 0)
    and loads 0 again: a hit. Reads: 6, misses 5, hits 1; writes 1."""
    g = gpu()
    assert (g.l1.sets, g.l1.ways, g.l1.set_index) == (8, 4, "linear")
    k = _dependent([_line(0), _line(8), _line(16), _line(24), _store(0), _line(32), _line(0)])
    s = simulate_kernel(k, g, blocks_per_sm=1)
    assert (s.l1_read_accesses, s.l1_read_misses, s.l1_read_hits) == (6, 5, 1)
    assert (s.l1_read_pending_hits, s.l1_write_accesses) == (0, 1)


def test_l2_read_miss_rate_counts_reads_only() -> None:
    """One warp: a store of the whole line 1 (an L2 write miss that allocates without a
    fetch), a load of line 2 (L1 and L2 miss) and a load of line 1 (an L1 miss, the
    write-through L1 did not allocate it; an L2 hit). L2: 3 accesses, 2 misses, of
    them 2 reads and 1 read miss: miss rate 2/3, read miss rate 1/2. DRAM: line 2
    read, nothing written."""
    k = _dependent([_store(1), _line(2), _line(1)])
    s = simulate_kernel(k, gpu(), blocks_per_sm=1)
    assert (s.l2_accesses, s.l2_misses) == (3, 2)
    assert (s.l2_read_accesses, s.l2_read_misses) == (2, 1)
    assert s.l2_miss_rate == pytest.approx(2 / 3)
    assert s.l2_read_miss_rate == pytest.approx(1 / 2)
    assert (s.dram_read_bytes, s.dram_write_bytes) == (128, 0)


def test_per_pc_and_per_warp_counts_of_a_miss_and_its_pending_hit() -> None:
    """One SM, L2 hit 100 cycles: two warps (one block each, both resident) load line 5
    at the same PC. Warp 0 (the oldest) misses; warp 1's load, a cycle later, merges
    into the fill in flight (a pending hit). PC 0: 2 accesses, 1 miss, 1 pending hit, no
    hit; L1 miss rate 1/2 (pending hits are not misses, and count in the accesses), in
    the kernel's counters, its per-PC row and each warp's trace (warp 0: the miss,
    warp 1: the pending hit)."""
    g = gpu().with_updates({"n_sm": 1, "l2.hit_latency_ns": 100.0})
    k = make_kernel([_line(5)], warps=2)
    s = simulate_kernel(k, g, track_warps=[0, 1], blocks_per_sm=2)
    assert (s.l1_read_accesses, s.l1_read_misses, s.l1_read_pending_hits) == (2, 1, 1)
    assert s.l1_miss_rate == pytest.approx(0.5)
    p = s.per_pc
    assert p is not None
    assert (p.l1_accesses[0], p.l1_misses[0], p.l1_pending_hits[0], p.l1_hits[0]) == (2, 1, 1, 0)
    (row,) = pc_rows(s, k)
    assert (row["l1_accesses"], row["l1_misses"], row["l1_miss_rate"]) == (2, 1, 0.5)
    assert (list(s.warps[0].l1_misses), list(s.warps[0].l1_pending_hits)) == ([1], [0])
    assert (list(s.warps[1].l1_misses), list(s.warps[1].l1_pending_hits)) == ([0], [1])


def test_per_pc_hits_and_store_misses() -> None:
    """One warp: load line 5 (a miss), wait for it, load it again (a hit), then store
    the whole line 9: a write-through L1 write, which the per-PC and per-warp counters
    count as a miss (``WarpMemTrace.l1_misses``: new MSHRs or write-through writes).
    Per PC (0, 32, 64): hits 0, 1, 0; misses 1, 0, 1; pending hits none."""
    k = _dependent([_line(5), _line(5), _store(9)])
    s = simulate_kernel(k, gpu(), track_warps=[0], blocks_per_sm=1)
    p = s.per_pc
    assert p is not None and list(p.pc) == [0, 32, 64]
    assert list(p.l1_hits) == [0, 1, 0]
    assert list(p.l1_misses) == [1, 0, 1]
    assert list(p.l1_pending_hits) == [0, 0, 0]
    assert [r["l1_miss_rate"] for r in pc_rows(s, k)] == [1.0, 0.0, 1.0]
    w = s.warps[0]
    assert [int(w.l1_misses[i]) for i in (0, 2, 4)] == [1, 0, 1]


def test_app_total_sums_every_counter_of_its_kernels() -> None:
    """``CacheSimResult.total`` is the field-by-field sum of its kernels' integer
    counters (a round trip over every field of ``KernelCacheStats``): two kernels
    loading lines 1 and 2, each an L2 miss that takes an L2 MSHR entry."""
    k1, k2 = (_dependent([_line(x)]) for x in (1, 2))
    r = simulate_app(AppTrace([k1, k2]), gpu())
    tot = r.total()
    assert tot.l2_mshr_allocations == 2
    counters = [
        f.name
        for f in dataclasses.fields(KernelCacheStats)
        if f.type in (int, "int") and f.name != "kernel_id"
    ]
    assert len(counters) > 20
    for f in counters:
        assert getattr(tot, f) == sum(getattr(k, f) for k in r.kernels), f


def test_first_blocks_go_to_the_sms_round_robin() -> None:
    """2 SMs with 2 block slots each, 4 blocks of one warp (each loads its own line): the
    first blocks fill the slots round robin, block ``r`` on SM ``r mod 2`` (GPGPU-Sim
    ``issue_block2core``), not SM 0's slots first."""
    k = make_kernel([_line(1)], warps=4)
    k.addrs[:] = np.repeat(128 * np.arange(1, 5), 32)
    g = gpu()
    state = _L2State(g)
    simulate_kernel(k, g, l2=state, blocks_per_sm=2)
    sm_of = dict(zip(state.last_order.tolist(), state.last_sm.tolist(), strict=True))
    assert [sm_of[i] for i in range(4)] == [0, 1, 0, 1]


def test_l2_banks_share_the_dram_channels_in_contiguous_groups() -> None:
    """4 L2 banks on 2 DRAM channels (2 sub-partitions per channel, 256 B chunks): a
    chunk's bank is ``chip * 2 + sub`` with ``chip = chunk mod 2``, ``sub = chunk div 2
    mod 2``, and bank ``b`` is on channel ``b * 2 // 4`` (banks 0, 1 on channel 0; 2, 3 on
    1), the chunk's chip. Line 2 (address 256, chunk 1): chip 1, sub 0, bank 2, channel
    1: its fetch occupies channel 1; channel 0 stays idle."""
    from mdm.memory.hashing import l2_bank_and_set

    g = gpu().with_updates({"l2.banks": 4})
    assert (g.dram.channels, g.l2.bank_interleave_bytes) == (2, 256)
    assert int(l2_bank_and_set(np.array([2], np.int64), g)[0][0]) == 2
    state = _L2State(g)
    simulate_kernel(_dependent([_line(2)]), g, l2=state, blocks_per_sm=1)
    assert state.dram_free[1] > 0
    assert state.dram_free[0] == 0


def test_a_sectored_l1_sends_a_write_per_sector_written() -> None:
    """Sectored L1 (32 B sectors, coalescer ``warp``): a store of the whole line 1 (4
    sectors) and one of the first 64 B of line 2 (sectors 0 and 1) are 4 + 2 L1 write
    accesses, one per sector written, and no read; the line L2 sees one access per
    request."""
    g = gpu(sectored=True)
    half = (ST, [256 + 4 * i for i in range(16)], 4)
    s = simulate_kernel(make_kernel([_store(1), half]), g, blocks_per_sm=1)
    assert (s.l1_write_accesses, s.l1_read_accesses, s.l1_read_misses) == (6, 0, 0)
    assert s.l2_accesses == 2
    assert s.per_pc is not None and list(s.per_pc.l1_accesses) == [4, 2]


def _hand_gpu() -> GPUConfig:
    """1 GHz (1 ns = 1 cycle), L2 hit 100 cycles, DRAM 200, a 16 GB/s L2 port (a 128 B
    line per 8 cycles): the configuration of the hand-worked L2 cases of
    ``test_memory_cachesim``."""
    return gpu().with_updates(
        {
            "core_clock_mhz": 1000.0,
            "l2.hit_latency_ns": 100.0,
            "dram.latency_ns": 200.0,
            "noc.sm_port_gbps": 16.0,
        }
    )


def test_a_store_to_a_line_in_flight_never_blocks_the_l2_bank() -> None:
    """Two SMs at cycle 0 (one block each): SM 0 loads line 6, an L2 miss whose fill is
    due at 200; SM 1 stores the whole line 6, served by the bank's port at 8. The store
    finds the line's only merge slot taken (``l2.mshr_max_merge = 1``): a pending hit
    that marks the line dirty, but only reads wait for a merge slot, so the bank is not
    blocked (no merge stall, port free again at 8 + 8 = 16)."""
    from mdm.memory.hashing import l2_bank_and_set

    g = _hand_gpu().with_updates({"l2.mshr_max_merge": 1})
    k = make_kernel([(LD, [128 * 6 + 4 * i for i in range(32)], 4)], warps=2)
    k.iclass[1] = ST  # warp 1 stores what warp 0 loads
    state = _L2State(g)
    s = simulate_kernel(k, g, l2=state, blocks_per_sm=1)
    assert (s.l2_accesses, s.l2_misses, s.l2_pending_hits) == (2, 1, 1)
    assert (s.l2_merge_stalls, s.l2_blocked_cycles) == (0, 0)
    bank = int(l2_bank_and_set(np.array([6], np.int64), g)[0][0])
    assert state.bank_free[bank] == pytest.approx(16.0)


@pytest.mark.parametrize(
    ("second", "misses", "read_misses"),
    [
        pytest.param(range(0, 4), 5, 4, id="same-16B"),
        pytest.param(range(0, 8), 4, 3, id="whole-sector"),
        pytest.param(range(4, 8), 5, 4, id="other-16B"),
    ],
)
def test_stores_to_a_partial_l2_sector(second: range, misses: int, read_misses: int) -> None:
    """Sectored L2 (lazy fetch-on-read): a store of the first 16 B of line 3 is a write
    miss that allocates sector 0 without a fetch (partial). A second store of sector 0
    hits (a write needs no readable data); then a load of line 3 (the line L1 fetches all
    4 sectors: 4 L2 reads). L2: 6 accesses; DRAM reads 32 B per read miss, no write.

    * the same 16 B again: sector 0 stays partial, so the load misses it and the 3
      others: 1 + 4 = 5 misses, 4 read misses;
    * all 32 B of sector 0: every byte written makes it readable (GPGPU-Sim ``wr_hit_wb``
      sets the byte mask and ``update_m_readable``), so the load hits it: 1 + 3 = 4
      misses, 3 read misses;
    * the other 16 B: together the two stores write the sector, but each covers half and
      no byte masks are kept (the documented limit), so it stays partial: 5 misses.
    """
    g = gpu().with_updates({"l2.sectored": True})
    first = (ST, [384 + 4 * i for i in range(4)], 4)
    other = (ST, [384 + 4 * i for i in second], 4)
    s = simulate_kernel(_dependent([first, other, _line(3)]), g, blocks_per_sm=1)
    assert (s.l2_accesses, s.l2_misses) == (6, misses)
    assert (s.l2_read_accesses, s.l2_read_misses) == (4, read_misses)
    assert (s.dram_read_bytes, s.dram_write_bytes) == (32 * read_misses, 0)


def test_a_way_whose_fill_is_due_now_is_free_for_a_victim() -> None:
    """One set of 3 ways used in order 0, 1, 2 (way 0 least recently), with fills in
    flight until 10, 5 and 3. At t = 5 the LRU way 0 is reserved; way 1's fill has
    arrived (due at 5, not after), so the least recently used free way is way 1, taken
    at once (way 2, free since 3, is more recently used)."""
    tags = np.array([[[0, 1, 2]]], np.int64)
    lru = np.array([[[1, 2, 3]]], np.int64)
    fill = np.array([10.0, 5.0, 3.0]).reshape(1, 1, 3, 1)
    w, t = _core.victim(tags, lru, fill, 0, 0, 5.0)
    assert (int(w), float(t)) == (1, 5.0)


def test_a_miss_that_waits_for_a_reserved_l2_way_finds_its_mshr_entry_free() -> None:
    """Hand-worked (1 GHz, L2 port 8 cycles per line, DRAM 200; 4 L2 MSHR entries per
    bank; an L1 of 64 sets so that no L1 set fills up): one load of lines 0, 32, 64,
    96 and 128, all in L2 bank 0, set 0 (4 ways; chunk ``x // 2`` even, local line
    ``x // 4 * 2 + x % 2`` = 0, 16, 32, 48, 64, all 0 mod 16). The first four reach the
    bank at 0, 8, 16, 24, take the 4 ways and the 4 MSHR entries, fills due at 200, 208,
    216, 224. The fifth (at 32) finds every way reserved and waits for the first to
    free, at 200, when the oldest MSHR entry (filled at 200) is free too: it takes it
    without an MSHR stall and holds no bank. 5 misses, 5 entries taken."""
    from mdm.memory.hashing import l2_bank_and_set

    g = _hand_gpu().with_updates({"l2.mshr_per_bank": 4, "l1.size_bytes": 32768})
    lines = [0, 32, 64, 96, 128]
    bank, l2set = l2_bank_and_set(np.array(lines, np.int64), g)
    assert set(bank.tolist()) == {0} and set(l2set.tolist()) == {0} and g.l2.ways == 4
    k = make_kernel([(LD, [128 * x for x in lines for _ in range(6)], 4)])  # 30 lanes
    s = simulate_kernel(k, g, blocks_per_sm=1)
    assert (s.l2_misses, s.l2_mshr_allocations) == (5, 5)
    assert (s.l2_mshr_stalls, s.l2_mshr_blocked_cycles) == (0, 0)


def test_a_no_write_allocate_l2_writes_a_store_miss_through() -> None:
    """``l2.write_allocate = false``: a store of the whole line 1 misses the L2, which
    sends it to DRAM (128 B written) without allocating the line, so the load of line 1
    after it misses again and reads the line from DRAM. L2: 2 accesses, 2 misses."""
    g = gpu().with_updates({"l2.write_allocate": False})
    s = simulate_kernel(_dependent([_store(1), _line(1)]), g, blocks_per_sm=1)
    assert (s.l2_accesses, s.l2_misses, s.l2_read_misses) == (2, 2, 1)
    assert (s.dram_read_bytes, s.dram_write_bytes) == (128, 128)


def test_a_write_through_l2_writes_every_store_to_dram() -> None:
    """``l2.write_policy = write_through`` (write-allocate): the first store of the whole
    line 1 misses and allocates it (no fetch: every byte is written) and writes it to
    DRAM; the second store of it hits and writes it again; the load of line 1 hits.
    L2: 3 accesses, 1 miss; DRAM: 2 x 128 B written, nothing read. Per PC, the DRAM
    bytes each instruction moved: 128, 128, 0."""
    g = gpu().with_updates({"l2.write_policy": "write_through"})
    s = simulate_kernel(_dependent([_store(1), _store(1), _line(1)]), g, blocks_per_sm=1)
    assert (s.l2_accesses, s.l2_misses) == (3, 1)
    assert (s.dram_read_bytes, s.dram_write_bytes) == (0, 256)
    assert s.per_pc is not None and list(s.per_pc.dram_bytes) == [128, 128, 0]


#: Lines 0, 32, 64, 96, 128: one L2 set (bank 0, set 0, 4 ways) of the 2-bank L2 of
#: ``gpu()`` (chunk ``x // 2`` even; local line ``x // 4 * 2 + x % 2`` = 0 mod 16)
_ONE_L2_SET = [0, 32, 64, 96, 128]


def test_a_store_hit_makes_the_l2_line_dirty_and_its_eviction_writes_it_back() -> None:
    """Write-back L2 of 4 ways: the warp loads line 0 (a clean L2 line), stores the whole
    line 0 (an L2 write hit: the line becomes dirty), then loads lines 32, 64, 96, 128
    of the same set, each waiting for its data: the fourth evicts the least recently
    used line 0, dirty, which is written back (128 B). DRAM reads: 5 lines."""
    insts = [_line(0), _store(0), *(_line(x) for x in _ONE_L2_SET[1:])]
    s = simulate_kernel(_dependent(insts), gpu(), blocks_per_sm=1)
    assert (s.l2_accesses, s.l2_misses) == (6, 5)
    assert (s.dram_read_bytes, s.dram_write_bytes) == (5 * 128, 128)


def test_a_sectored_l2_victim_writes_back_its_dirty_sectors_only() -> None:
    """Sectored write-back L2 (4 ways): a store of all 32 B of sector 0 of line 0
    allocates it (no fetch) with one dirty sector; loads of lines 32, 64, 96, 128 of
    the same set (the line L1 reads the 4 sectors of each: 4 L2 misses per line) evict
    line 0 at the fourth: its one dirty sector is written back, 32 B, not the line."""
    g = gpu().with_updates({"l2.sectored": True})
    sector0 = (ST, [4 * i for i in range(8)], 4)
    s = simulate_kernel(
        _dependent([sector0, *(_line(x) for x in _ONE_L2_SET[1:])]), g, blocks_per_sm=1
    )
    assert (s.l2_accesses, s.l2_misses) == (17, 17)
    assert (s.dram_read_bytes, s.dram_write_bytes) == (4 * 128, 32)


def _streaming_l1(ways: int, sectors: int = 1) -> tuple:
    """One SM's streaming L1 of one set: its pending-fill table (4 entries) and its
    ``(tags, lru, valid, ix, stamp)``, as the simulator allocates them."""
    from mdm.memory import streaming

    shape = (1, 1, ways)
    cache = (
        np.full(shape, -1, np.int64),
        np.zeros(shape, np.int32),
        np.zeros(shape, np.uint8 if sectors <= 8 else np.uint32),
        _core.new_way_index(*shape),
        np.zeros(1 + ways, np.int64),
    )
    return streaming.new_table(1, 4), cache


def test_a_streaming_fill_due_at_the_read_is_applied_before_it() -> None:
    """Streaming L1 (allocate on fill): a fill of line 7 due at 5 is not in the cache at
    4 (still pending), and is at 5: a read at the fill's time finds it valid (a hit),
    and the table no longer holds it."""
    from mdm.memory import streaming

    table, cache = _streaming_l1(2)
    pend, _, pend_n = table
    tags, _, valid, ix, _ = cache
    streaming.add(*table, 0, 7, 0, 0, 5.0, *cache)  # line 7, set 0, sector 0, due at 5
    streaming.drain(*table, 0, 4.0, *cache)
    assert _core.way_of(tags, ix, 0, 0, 7) == -1
    assert streaming.find(pend, pend_n, 0, 7, 0) >= 0
    streaming.drain(*table, 0, 5.0, *cache)
    w = _core.way_of(tags, ix, 0, 0, 7)
    assert w >= 0 and valid[0, 0, w] == 1
    assert streaming.find(pend, pend_n, 0, 7, 0) == -1


def test_the_l1_set_hash_reads_the_address_of_a_64_byte_line() -> None:
    """Fermi set hash on an L1 of 64 B lines (32 sets, direct mapped): the hash XORs
    address bits, so a line's set depends on the line size. Line 1 (address 64) is in
    set 1; line 128 (address 0x2000: bit 13 XORs into set bit 0, line bits 0 mod 32) is
    in set 0 ^ 1 = 1 too: they conflict. Loads of lines 1, 128, 1 (each waiting for its
    data): 3 misses (with 128 B lines line 128 would be address 0x4000, set 2)."""
    g = gpu(size_bytes=32 * 64, ways=1, line_bytes=64, set_index="fermi_hash").with_updates(
        {"l2.line_bytes": 64}
    )
    assert g.l1.sets == 32
    assert (_core.fermi_hash_set(1, 6, 32), _core.fermi_hash_set(128, 6, 32)) == (1, 1)
    k = _dependent([(LD, [64] * 32, 4), (LD, [0x2000] * 32, 4), (LD, [64] * 32, 4)])
    s = simulate_kernel(k, g, blocks_per_sm=1)
    assert (s.l1_read_accesses, s.l1_read_misses, s.l1_read_hits) == (3, 3, 0)
