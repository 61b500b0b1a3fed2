"""Volta-and-later paths of the cache simulator: IPOLY L2 hashing, adaptive L1/shared
carve-out, warp_sector coalescing, streaming (allocate-on-fill) L1, and agreement with
Accel-Sim's SM7_QV100 reference runs."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_memory_cachesim import BASE, LD, make_kernel

from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError
from mdm.memory import _core, simulate_kernel, streaming
from mdm.memory.carveout import (
    adaptive_l1_ways,
    carveout_blocks,
    kernel_allocates_on_fill,
    kernel_l1_ways,
    l1_may_allocate_on_fill,
)
from mdm.memory.coalesce import coalesce
from mdm.memory.hashing import (
    _IPOLY_BITS,
    _MASK_TABLE,
    check_l2_mapping,
    ipoly_hash,
    l2_bank_and_set,
)

SM7 = "sm7_qv100"


def _sm7() -> GPUConfig:
    from mdm.config.load import load_gpu

    return load_gpu(SM7)


# ------------------------------------------------------------------ IPOLY
def _ipoly_slow(higher: int, index: int, n: int) -> int:
    """hashing.cc ipoly_hash_function with bitsets, as written there."""
    out = 0
    for i, bits in enumerate(_IPOLY_BITS[n]):
        b = (index >> i) & 1
        for p in bits:
            b ^= (higher >> p) & 1
        out |= b << i
    return out


@pytest.mark.parametrize(
    ("higher", "index", "n", "want"),
    [
        (0, 5, 64, 5),  # no high bits: the index itself
        (1, 0, 64, 0b000011),  # a[0] feeds new_index[0] and [1] (IPOLY(67))
        (1 << 18, 0, 64, 0b010001),  # a[18] feeds [0] and [4]
        (1 << 12, 0, 64, 0b001111),  # a[12] feeds [0..3]
        (1 << 14, 0, 32, 0b00110),  # a[14] feeds [1] and [2] (IPOLY(37))
        (1 << 12, 3, 16, 0b0001),  # a[12] feeds [1] of IPOLY(5): 3 ^ 2
    ],
)
def test_ipoly_golden(higher: int, index: int, n: int, want: int) -> None:
    assert ipoly_hash(higher, index, n, _MASK_TABLE) == want


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**40), st.integers(0, 63), st.sampled_from([16, 32, 64]))
def test_ipoly_matches_bitset_formula_and_is_gf2_linear(higher: int, index: int, n: int) -> None:
    index %= n
    h = ipoly_hash(higher, index, n, _MASK_TABLE)
    assert h == _ipoly_slow(higher, index, n)
    # XOR-linear: hash(a, i) ^ hash(b, 0) == hash(a ^ b, i)
    assert h ^ ipoly_hash(12345, 0, n, _MASK_TABLE) == ipoly_hash(
        higher ^ 12345, index, n, _MASK_TABLE
    )


def _gf2_mod(e: int, poly: int, k: int) -> int:
    """``x**e mod poly(x)`` over GF(2), ``poly`` of degree ``k`` as its bit pattern."""
    v = 1 << e
    for b in range(e, k - 1, -1):
        if v >> b & 1:
            v ^= poly << (b - k)
    return v


@pytest.mark.parametrize(
    ("n", "poly", "top"),
    [
        (16, 0b10011, 12),  # x^4 + x + 1, inputs a[0..12]
        (32, 0b100101, 14),  # IPOLY(37) = x^5 + x^2 + 1, inputs a[0..14]
        (64, 0b1000011, 18),  # IPOLY(67) = x^6 + x + 1, inputs a[0..18]
    ],
)
def test_ipoly_columns_are_powers_of_x_mod_the_polynomial(n: int, poly: int, top: int) -> None:
    """Independent of the bit table: Rau's IPOLY maps the address ``higher * n + index``
    to its remainder mod ``poly`` in GF(2), so input bit ``a[p]`` (address bit ``p + k``)
    feeds the output bits of ``x**(p + k) mod poly``, e.g. for n = 32, ``x**5 = x**2 + 1``:
    a[0] feeds bits 0 and 2; hashing.cc uses the bits up to ``a[top]`` only."""
    k = n.bit_length() - 1
    for p in range(top + 1):
        assert ipoly_hash(1 << p, 0, n, _MASK_TABLE) == _gf2_mod(p + k, poly, k), p
    for p in range(top + 1, 62):  # higher bits are not hashed
        assert ipoly_hash(1 << p, 0, n, _MASK_TABLE) == 0, p
    for i in range(n):  # no high bits: the index itself
        assert ipoly_hash(0, i, n, _MASK_TABLE) == i


@pytest.mark.parametrize(
    ("addr", "bank", "l2set"),
    [
        # hand-worked for SM7_QV100: 32 channels x 2 sub-partitions, dramid@8, 32 sets
        (0x80, 0, 1),  # line 1 of chunk 0: set 1
        (0x100, 2, 0),  # chip = addr bit 8 -> 1, sub-partition id = chip * 2 + bit 13
        (0x2000, 1, 0),  # bit 13: sub-partition 1 of channel 0
        (0x4000, 3, 2),  # high bits a = addr >> 14 = 1 -> bank 0b11; local addr 0x100 -> set 2
        (
            1 << 26,
            15,
            28,
        ),  # a[12] -> bank 0b1111; local 1 << 20 -> set ipoly32(1 << 8, 0) = 0b11100
    ],
)
def test_sm7_l2_mapping_golden(addr: int, bank: int, l2set: int) -> None:
    b, s = l2_bank_and_set(np.array([addr >> 7]), _sm7())
    assert (int(b[0]), int(s[0])) == (bank, l2set)


def test_sm7_ipoly_spreads_power_of_two_strides_over_all_banks() -> None:
    g = _sm7()
    for shift in range(20):  # 256 B chunks at stride 2**shift: 64 distinct banks
        lines = (np.arange(64, dtype=np.int64) << shift) * 2
        banks, sets = l2_bank_and_set(lines, g)
        assert len(set(banks.tolist())) == 64, shift
        assert sets.max() < g.l2.sets_per_bank


def test_consecutive_mapping_is_unchanged_by_the_refactor() -> None:
    g = GPUConfig.model_validate(BASE)  # 2 banks, 256 B interleave, linear sets
    lines = np.arange(1000, dtype=np.int64) * 7
    b, s = l2_bank_and_set(lines, g)
    addr = lines * 128
    chunk = addr // 256
    assert np.array_equal(b, chunk % 2)
    local = (chunk // 2) * 256 + addr % 256
    assert np.array_equal(s, (local // 128) % g.l2.sets_per_bank)


def test_ipoly_needs_supported_bank_counts() -> None:
    g = _sm7()  # 40 channels x 2: IPOLY over nextpow2(40) x 2 = 128 values does not exist
    bad = g.with_updates({"l2.banks": 80, "l2.size_bytes": 80 * 32 * 24 * 128, "dram.channels": 40})
    with pytest.raises(ConfigError, match="ipoly"):
        l2_bank_and_set(np.array([1]), bad)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 2**34), min_size=1, max_size=50))
def test_xor_set_and_bank_index_follow_bitwise_hash_function(lines: list[int]) -> None:
    """GPGPU-Sim ``bitwise_hash_function(higher, index, n) = index ^ (higher & (n - 1))``:
    L2 set index ``X`` on the partition address, partition indexing 1 on the channel."""
    g = _sm7()  # 32 channels x 2 sub-partitions, 256 B chunks, 32 sets per bank
    arr = np.array(lines, np.int64)
    linear = g.with_updates({"l2.bank_index": "consecutive", "l2.set_index": "linear"})
    xor = g.with_updates({"l2.bank_index": "bitwise_xor", "l2.set_index": "xor"})
    _, s_lin = l2_bank_and_set(arr, g.with_updates({"l2.set_index": "linear"}))
    b_xor, s_xor = l2_bank_and_set(arr, xor)
    for line, sl, bx, sx in zip(lines, s_lin, b_xor, s_xor, strict=True):
        addr = line * 128
        higher_bank = addr >> (8 + 5 + 1)  # above the 5 channel and 1 sub-partition bits
        chip = ((addr >> 8) % 32) ^ (higher_bank & 31)
        assert bx == chip * 2 + ((addr >> 13) & 1)
        local = (higher_bank << 8) | (addr & 255)  # partition address
        assert sl == (local >> 7) % 32
        assert sx == sl ^ ((local >> (7 + 5)) & 31)
    assert l2_bank_and_set(arr, linear)[1].tolist() == s_lin.tolist()


def _addrdec_slow(
    addr: int, s: int, channels: int, subs: int, sub_bits: tuple[int, ...], fn: str
) -> tuple[int, int]:
    """GPGPU-Sim ``addrdec_tlx`` + ``partition_address`` as written there, for a
    ``dramid@s`` mapping whose DRAM-bank bits (in the rest address) start at
    ``sub_bits``: (sub-partition, partition address). ``fn``: consecutive, ipoly, xor."""
    log2c = (channels - 1).bit_length()
    gap = channels & (channels - 1) != 0
    log2p = subs.bit_length() - 1
    chunk = addr >> s
    if gap:  # split at ADDR_CHIP_S, modulus and quotient
        chip, q = chunk % channels, chunk // channels
        higher = q
    else:
        chip, q = chunk & (channels - 1), chunk >> log2c
        higher = addr >> (s + log2c + log2p)
    rest = (q << s) | (addr & ((1 << s) - 1))
    bk = sum(((rest >> b) & 1) << j for j, b in enumerate(sub_bits))
    part = rest
    for b in sorted(sub_bits, reverse=True):  # addrdec_packbits(~sub_partition_id_mask)
        part = ((part >> (b + 1)) << b) | (part & ((1 << b) - 1))
    if fn == "xor":
        chip ^= higher & (channels - 1)
    sp = chip * subs + bk
    if fn == "ipoly":
        sp = _ipoly_slow(higher, sp, (1 << log2c) * subs)
        if gap:
            sp %= channels * subs
    return sp, part


@pytest.mark.parametrize(
    ("channels", "subs", "bits", "fn"),
    [
        (24, 2, (8,), "ipoly"),  # SM7_TITANV: IPOLY(67) over 64 values, then mod 48
        (12, 2, (7,), "consecutive"),  # ...RBBBCCCC.BCCSSSSS: bit 7 picks the sub-partition
        (24, 2, (7,), "ipoly"),
        (32, 2, (7,), "ipoly"),
        (16, 2, (7,), "xor"),
        (8, 4, (7, 12), "consecutive"),
        (6, 4, (8, 9), "ipoly"),  # nextpow2(6) x 4 = 32 values, mod 24
    ],
)
@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.integers(0, 2**33), min_size=1, max_size=40))
def test_general_partition_mapping_follows_addrdec(
    channels: int, subs: int, bits: tuple[int, ...], fn: str, lines: list[int]
) -> None:
    g = _sm7().with_updates(
        {
            "dram.channels": channels,
            "l2.banks": channels * subs,
            "l2.size_bytes": channels * subs * 32 * 24 * 128,
            "l2.bank_index": {"xor": "bitwise_xor"}.get(fn, fn),
            "l2.set_index": "linear",
            "l2.sub_partition_bits": bits,
        }
    )
    b, s = l2_bank_and_set(np.array(lines, np.int64), g)
    for line, bank, l2set in zip(lines, b, s, strict=True):
        sp, part = _addrdec_slow(line * 128, 8, channels, subs, bits, fn)
        assert (int(bank), int(l2set)) == (sp, (part >> 7) % 32)
        assert 0 <= bank < channels * subs


def test_sub_partition_bits_must_be_increasing_positions() -> None:
    """Lowest first: the general map removes them from the highest down."""
    for bad in ((12, 7), (7, 7), (63,)):
        with pytest.raises(ConfigError, match="increasing bit positions"):
            _sm7().with_updates({"l2.sub_partition_bits": bad})


@pytest.mark.parametrize(
    ("channels", "subs", "bits"),
    [(16, 4, (8,)), (32, 2, (8, 9)), (16, 4, (8, 9, 10))],
)
def test_sub_partition_bits_must_number_log2_of_the_sub_partitions(
    channels: int, subs: int, bits: tuple[int, ...]
) -> None:
    """One bit per factor of two of the sub-partitions per channel, neither fewer (4 x 1
    bit would leave sub-partitions 2 and 3 empty) nor more."""
    g = _sm7().with_updates(
        {
            "dram.channels": channels,
            "l2.banks": channels * subs,
            "l2.size_bytes": channels * subs * 32 * 24 * 128,
            "l2.sub_partition_bits": bits,
        }
    )
    assert any("sub_partition_bits" in p for p in check_l2_mapping(g))
    with pytest.raises(ConfigError, match="sub_partition_bits"):
        l2_bank_and_set(np.array([1]), g)


def test_interleave_must_hold_a_byte_per_sub_partition() -> None:
    """64 sub-partitions of one channel over 32 B chunks: the random granule 2**s / P
    would be under a byte, so the mapping is refused (not silently taken as chunk mod
    banks)."""
    g = _sm7().with_updates(
        {
            "dram.channels": 1,
            "l2.banks": 64,
            "l2.size_bytes": 64 * 32 * 24 * 128,
            "l2.bank_interleave_bytes": 32,
            "l2.sub_partition_bits": None,
        }
    )
    assert check_l2_mapping(g) == [
        "l2.bank_interleave_bytes is below the sub-partitions per channel"
    ]
    with pytest.raises(ConfigError, match="below the sub-partitions"):
        l2_bank_and_set(np.array([1]), g)


def test_sub_partition_bits_at_the_default_place_change_nothing() -> None:
    g = _sm7()  # sub_partition_bits = [8]: the bit just above the interleave
    lines = np.arange(0, 3_000_000, 17, dtype=np.int64)
    want = l2_bank_and_set(lines, g.with_updates({"l2.sub_partition_bits": None}))
    got = l2_bank_and_set(lines, g)
    assert all(np.array_equal(x, y) for x, y in zip(got, want, strict=True))


def test_consecutive_banks_are_numbered_chip_times_subpartitions() -> None:
    """gtx1080: 8 channels x 2; GPGPU-Sim numbers sub-partition ``chip * 2 + sub``, so the
    DRAM channel of a bank (``bank * channels // banks``) is the chunk's channel."""
    from mdm.config.load import load_gpu

    g = load_gpu("gtx1080")
    lines = np.arange(0, 100_000, 3, dtype=np.int64)
    b, _ = l2_bank_and_set(lines, g)
    chunk = lines * 128 // 256
    assert np.array_equal(b, (chunk % 8) * 2 + (chunk // 8) % 2)
    assert np.array_equal(b * 8 // 16, chunk % 8)


def _random_24() -> GPUConfig:
    """SM7_QV100 with 12 channels x 2 sub-partitions and the random bank index."""
    return _sm7().with_updates(
        {
            "dram.channels": 12,
            "l2.banks": 24,
            "l2.size_bytes": 24 * 32 * 24 * 128,
            "l2.bank_index": "random",
            "l2.sub_partition_bits": (7,),
        }
    )


def test_random_partition_index_is_uniform_per_granule() -> None:
    """Indexing 4 (random): every 2**s / P-byte granule (128 B for 12 x 2 sub-partitions
    at dramid@8) has one sub-partition, drawn uniformly; the set index ignores it."""
    g = _random_24()
    lines = np.arange(200_000, dtype=np.int64)  # one 128 B granule per line
    b, s = l2_bank_and_set(lines, g)
    again, _ = l2_bank_and_set(lines[::-1].copy(), g)
    assert np.array_equal(again[::-1], b)  # a fixed draw, whatever the order
    counts = np.bincount(b, minlength=24)
    expected = lines.size / 24
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 60  # 23 degrees of freedom: p < 1e-5 of exceeding by chance
    assert len({tuple(b[i : i + 8]) for i in range(0, 800, 8)}) > 90  # no short period
    consecutive = g.with_updates({"l2.bank_index": "consecutive"})
    assert np.array_equal(s, l2_bank_and_set(lines, consecutive)[1])


def test_random_partition_index_draws_per_granule_not_per_chunk() -> None:
    """The granule is 2**s / P = 256 / 2 = 128 B, a line: the two lines of one 256 B
    chunk draw their sub-partitions independently (equal in about 1 of 24 chunks, not
    in all), and a line's bank does not depend on the other lines mapped with it."""
    g = _random_24()
    lines = np.arange(48_000, dtype=np.int64)
    b, _ = l2_bank_and_set(lines, g)
    same = float(np.mean(b[0::2] == b[1::2]))
    assert 0.02 < same < 0.07  # 1 / 24 = 0.042; 24,000 pairs
    odd, _ = l2_bank_and_set(lines[1::2].copy(), g)
    assert np.array_equal(odd, b[1::2])


def test_xor_sets_on_a_non_power_of_two_bank_count() -> None:
    """The "gap" path (chunk mod 24 banks) with X sets: the XOR of the linear set index
    and the partition address bits above it."""
    from mdm.config.load import load_gpu

    g = load_gpu("mdm_pascal").with_updates({"l2.set_index": "xor"})  # 24 banks, 128 sets
    lines = np.arange(0, 200_000, 37, dtype=np.int64)
    b, s = l2_bank_and_set(lines, g)
    addr = lines * 128
    chunk = addr // 256
    local = (chunk // 24) * 256 + addr % 256
    assert np.array_equal(b, chunk % 24)
    assert np.array_equal(s, ((local >> 7) % 128) ^ ((local >> 14) % 128))


# ------------------------------------------------------------ carve-out
def test_adaptive_carveout_rule() -> None:
    g = _sm7()  # 128 KB unified, 4 sets x 128 B, options 0/8/16/32/64/96 KB
    assert adaptive_l1_ways(0, g) == 256
    assert adaptive_l1_ways(1, g) == 240  # 8 KB carve-out: 120 KB of L1
    assert adaptive_l1_ways(8192, g) == 240
    assert adaptive_l1_ways(8193, g) == 224
    assert adaptive_l1_ways(18432, g) == 192  # 32 KB
    assert adaptive_l1_ways(98304, g) == 64
    with pytest.raises(ConfigError, match="carve-out"):
        adaptive_l1_ways(98305, g)
    fixed = g.with_updates({"l1.unified_bytes": None})
    assert adaptive_l1_ways(50000, fixed) == fixed.l1.ways


def test_kernel_carveout_uses_max_cta_with_grid_clamp() -> None:
    g = _sm7()
    k = make_kernel([(LD, [4 * i for i in range(32)], 4)], warps=1)
    k = dataclasses.replace(k, block=(256, 1, 1), grid=(448, 1, 1), shmem_bytes=3072)
    # 8 blocks of 256 threads fit an SM, but 448 blocks on 80 SMs give ceil(448 / 80) = 6
    assert carveout_blocks(k, g, blocks_per_sm=8) == 6
    assert kernel_l1_ways(k, g, blocks_per_sm=8) == 192  # 6 * 3 KB = 18 KB -> 32 KB carve-out
    assert kernel_l1_ways(dataclasses.replace(k, shmem_bytes=0), g, 8) == 256


def test_reserved_shared_memory_per_block_counts_in_the_carveout() -> None:
    """CUDA's 1 KB per block (``sm.shared_mem_reserved_per_block_bytes``): 6 blocks of
    3 KB take 6 x 4 KB = 24 KB -> the 32 KB carve-out, as without it; blocks without
    shared memory take 6 KB -> the 8 KB carve-out (240 ways) instead of none."""
    g = _sm7().with_updates({"sm.shared_mem_reserved_per_block_bytes": 1024})
    k = make_kernel([(LD, [4 * i for i in range(32)], 4)], warps=1)
    k = dataclasses.replace(k, block=(256, 1, 1), grid=(448, 1, 1), shmem_bytes=3072)
    assert kernel_l1_ways(k, g, blocks_per_sm=8) == 192
    assert kernel_l1_ways(dataclasses.replace(k, shmem_bytes=0), g, 8) == 240
    # 6 blocks of 15 KB: 90 KB of shared memory, 96 KB with the reservation (the largest
    # option, 96 KB: 64 ways); 16 KB blocks no longer fit any carve-out
    assert kernel_l1_ways(dataclasses.replace(k, shmem_bytes=15 * 1024), g, 8) == 64
    with pytest.raises(ConfigError, match="carve-out"):
        kernel_l1_ways(dataclasses.replace(k, shmem_bytes=16 * 1024), g, 8)


def test_adaptive_streaming_l1_allocates_on_miss_without_shared_memory() -> None:
    g = _sm7().with_updates({"l1.allocate_on": "fill"})
    k = make_kernel([(LD, [4 * i for i in range(32)], 4)])
    assert not kernel_allocates_on_fill(k, g, 1)  # whole unified array: ON_MISS
    assert kernel_allocates_on_fill(dataclasses.replace(k, shmem_bytes=4), g, 1)
    fixed = g.with_updates({"l1.unified_bytes": None})
    assert kernel_allocates_on_fill(k, fixed, 1)
    assert not kernel_allocates_on_fill(k, _sm7(), 1)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["miss", "fill"]),
    st.sampled_from(["fill", "miss"]),
    st.booleans(),
    st.integers(0, 8192),
)
def test_fill_policy_per_gpu_covers_every_kernel(
    allocate_on: str, tags: str, unified: bool, shmem: int
) -> None:
    """The issue loop is chosen per configuration (``l1_may_allocate_on_fill``): no
    kernel may allocate on fill where the configuration says none does, and every
    kernel does so on a fixed (not adaptive) streaming L1 with its tags at the fill."""
    g = _sm7().with_updates({"l1.allocate_on": allocate_on, "l1.streaming_tags": tags})
    if not unified:
        g = g.with_updates({"l1.unified_bytes": None})
    k = dataclasses.replace(make_kernel([(LD, [4 * i for i in range(32)], 4)]), shmem_bytes=shmem)
    may = l1_may_allocate_on_fill(g)
    assert may == (allocate_on == "fill" and tags == "fill")
    if kernel_allocates_on_fill(k, g, 1):
        assert may
    if may and not unified:
        assert kernel_allocates_on_fill(k, g, 1)


def test_presets_fill_policy() -> None:
    """Which presets' issue loops hold the streaming L1's code: the Volta-class ones
    with their tags at the fill; not the allocate-on-miss L1s, nor ``h100``'s tags at
    the miss."""
    from mdm.config.load import load_gpu

    may = {
        n: l1_may_allocate_on_fill(load_gpu(n))
        for n in ("mdm_pascal", "sm7_qv100", "v100", "a100", "titan_v", "h100", "h200", "gtx1080")
    }
    assert may == {
        "mdm_pascal": False,
        "sm7_qv100": False,
        "v100": True,
        "a100": True,
        "titan_v": True,
        "h100": False,
        "h200": False,
        "gtx1080": False,
    }


def test_loop_without_fill_code_refuses_a_pending_fill_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kernel that allocates on fill never runs on the loop compiled without the
    streaming L1's code: ``run_timed`` refuses it instead of counting it as an
    allocate-on-miss L1."""
    from mdm.memory import cachesim

    g = _sm7().with_updates({"l1.allocate_on": "fill", "l1.unified_bytes": None})
    k = make_kernel([(LD, [4 * i for i in range(32)], 4)])
    assert kernel_allocates_on_fill(k, g, 1)
    monkeypatch.setattr(cachesim, "l1_may_allocate_on_fill", lambda gpu: False)
    with pytest.raises(ValueError, match="may_fill"):
        simulate_kernel(k, g, blocks_per_sm=1)


def test_unified_config_validation() -> None:
    g = _sm7()
    with pytest.raises(ConfigError, match="shared_carveouts_bytes"):
        g.with_updates({"l1.shared_carveouts_bytes": (65536, 8192)})
    with pytest.raises(ConfigError, match="shared_carveouts_bytes"):
        g.with_updates({"l1.shared_carveouts_bytes": ()})


def test_carveout_reduces_l1_capacity_in_the_simulator() -> None:
    # 2 sets x 4 ways fixed L1 of 1 KB; unified 2 KB (8 ways) with options 0 / 1 KB
    base = {**BASE, "n_sm": 1, "l1": {**BASE["l1"], "size_bytes": 2048, "ways": 8}}
    base["l1"] |= {"unified_bytes": 2048, "shared_carveouts_bytes": (0, 1024)}
    g = GPUConfig.model_validate(base)
    lines = list(range(0, 16, 2)) * 2  # 8 lines of set 0, twice: fit 8 ways, not 4
    k = make_kernel([(LD, [128 * x] * 32, 4) for x in lines])
    full = simulate_kernel(k, g, blocks_per_sm=1)
    carved = simulate_kernel(dataclasses.replace(k, shmem_bytes=512), g, blocks_per_sm=1)
    assert full.l1_read_misses == 8
    assert carved.l1_read_misses == 16  # LRU with 4 ways: every reuse evicted


# ---------------------------------------------------------- coalescer
def test_warp_sector_coalescer_merges_across_the_whole_warp() -> None:
    # lanes 0-7 and 8-15 read the same sector: quarter_warp gives 2 accesses, warp_sector 1
    k = make_kernel([(LD, [4096 + 4 * (i % 8) for i in range(16)], 4)])
    q = coalesce(k, 128, 32, "quarter_warp")
    w = coalesce(k, 128, 32, "warp_sector")
    assert q.n_requests.tolist() == [2] and w.n_requests.tolist() == [1]
    assert w.req_mask.tolist() == [1]
    # a fully coalesced 128 B access: one request with all 4 sectors
    k2 = make_kernel([(LD, [4096 + 4 * i for i in range(32)], 4)])
    assert coalesce(k2, 128, 32, "warp_sector").req_mask.tolist() == [0b1111]


# ------------------------------------------------------ streaming L1
def _one_l1(sets: int, ways: int) -> tuple[np.ndarray, ...]:
    """Empty state of one streaming L1: tags, lru, valid (sector bits), stamp."""
    return (
        np.full((1, sets, ways), -1, np.int64),
        np.zeros((1, sets, ways), np.int64),
        np.zeros((1, sets, ways), np.uint32),
        np.zeros(1, np.int64),
    )


def _stream_fast(
    acc: list[tuple[float, int, int]], sets: int, ways: int, lat: float, merge: int, cap: int
):
    """Drive the numba helpers of the streaming L1 as ``_core._run_kernel``'s ``run_kernel`` does."""
    tags, lru, valid, stamp = _one_l1(sets, ways)
    pend, pend_t, pend_n = streaming.new_table(1, cap)
    ix = _core.new_way_index(1, sets, ways)
    out = []
    for t, line, k in acc:
        s = line % sets
        streaming.drain(pend, pend_t, pend_n, 0, t, tags, lru, valid, ix, stamp)
        stamp[0] += 1
        w = _core.way_of(tags, ix, 0, s, line)
        if w >= 0 and valid[0, s, w] >> k & 1:
            _core.use_way(lru, ix, 0, s, w, stamp[0])
            out.append("hit")
            continue
        i = streaming.find(pend, pend_n, 0, line, k)
        if i >= 0:
            if pend[0, i, 3] < merge:
                pend[0, i, 3] += 1
                out.append("pending")
            else:
                out.append("hit")
            continue
        out.append("miss")
        streaming.add(pend, pend_t, pend_n, 0, line, s, k, t + lat, tags, lru, valid, ix, stamp)
    streaming.drain(pend, pend_t, pend_n, 0, np.inf, tags, lru, valid, ix, stamp)
    final = {(s, int(x)) for s in range(sets) for x in tags[0, s] if x >= 0}
    return out, final


def _stream_slow(
    acc: list[tuple[float, int, int]], sets: int, ways: int, lat: float, merge: int, cap: int
):
    """Plain-Python allocate-on-fill sectored LRU cache with an MSHR per sector."""
    cache = [OrderedDict() for _ in range(sets)]  # line -> set of valid sectors, LRU first
    pending: dict[tuple[int, int], list] = {}  # (line, sector) -> [fill time, merges, seq]
    seq = 0

    def apply_until(t: float, limit: int = 1 << 30) -> None:
        order = sorted(pending.items(), key=lambda kv: (kv[1][0], kv[1][2]))
        for key, (tf, _, _) in order[:limit]:
            if tf > t and limit == 1 << 30:
                break
            line, k = key
            c = cache[line % sets]
            if line not in c:
                if len(c) == ways:
                    c.popitem(last=False)
                c[line] = set()
            c.move_to_end(line)
            c[line].add(k)
            del pending[key]

    out = []
    for t, line, k in acc:
        apply_until(t)
        c = cache[line % sets]
        if line in c and k in c[line]:
            c.move_to_end(line)
            out.append("hit")
        elif (line, k) in pending:
            e = pending[(line, k)]
            if e[1] < merge:
                e[1] += 1
                out.append("pending")
            else:
                out.append("hit")
        else:
            out.append("miss")
            if len(pending) == cap:  # table full: the earliest fill completes first
                apply_until(np.inf, limit=1)
            pending[(line, k)] = [t + lat, 1, seq]  # the entry holds the miss itself
            seq += 1
    apply_until(np.inf)
    return out, {(s, x) for s in range(sets) for x in cache[s]}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(0, 3)), max_size=400))
def test_streaming_table_hash_finds_exactly_the_live_entries(
    ops: list[tuple[bool, int, int]],
) -> None:
    """Adds and fills in any mix on a 4-entry table (8 buckets): after every step each
    live ``(line, sector)`` is found at its slot, no other key is, and live entries plus
    tombstones leave a quarter of the buckets empty (so every probe ends)."""
    sets, ways, cap = 2, 4, 4
    tags, lru, valid, stamp = _one_l1(sets, ways)
    ix = _core.new_way_index(1, sets, ways)
    pend, pend_t, pend_n = streaming.new_table(1, cap)
    live: dict[tuple[int, int], float] = {}
    t = 0.0
    for do_fill, line, k in ops:
        t += 1.0
        if do_fill and live:  # apply the earliest fill (ties: the first added)
            first = min(live.items(), key=lambda kv: kv[1])[0]
            streaming.drain(pend, pend_t, pend_n, 0, live[first], tags, lru, valid, ix, stamp)
            live = {key: tf for key, tf in live.items() if tf > live[first]}
        elif not do_fill and streaming.find(pend, pend_n, 0, line, k) < 0:
            if len(live) == cap:  # add applies the earliest first
                del live[min(live.items(), key=lambda kv: kv[1])[0]]
            streaming.add(
                pend, pend_t, pend_n, 0, line, line % sets, k, t + 100.0, tags, lru, valid, ix,
                stamp,
            )  # fmt: skip
            live[(line, k)] = t + 100.0
        assert int(pend_n[0, 0]) == len(live)
        for ln in range(41):
            for q in range(4):
                slot = streaming.find(pend, pend_n, 0, ln, q)
                assert (slot >= 0) == ((ln, q) in live)
                if slot >= 0:
                    assert (pend[0, slot, 0], pend[0, slot, 2]) == (ln, q)
        assert 4 * (int(pend_n[0, 0]) + int(pend_n[0, 3])) <= 3 * int(pend_n[0, 1])


def test_streaming_table_hash_grows_with_the_fills_in_flight() -> None:
    """A 1,024-entry table starts with a small hash (``streaming._H0`` buckets) and
    doubles it as the entries in flight grow (up to ``2,048`` buckets: 2P), keeping every
    live entry findable and a quarter of the buckets empty; fills of the earliest
    entries leave tombstones that a rebuild clears."""
    sets, ways, cap = 4, 8, 1024
    tags, lru, valid, stamp = _one_l1(sets, ways)
    ix = _core.new_way_index(1, sets, ways)
    pend, pend_t, pend_n = streaming.new_table(1, cap)
    assert int(pend_n[0, 1]) == streaming._H0
    rng = np.random.default_rng(3)
    keys = [(int(x) // 4, int(x) % 4) for x in rng.permutation(40_000)[:1500]]
    seen = set()
    for t, (line, k) in enumerate(keys[:1000]):  # 1,000 in flight at the end
        streaming.add(
            pend, pend_t, pend_n, 0, line, line % sets, k, 10_000.0 + t, tags, lru, valid,
            ix, stamp,
        )  # fmt: skip
        seen.add(int(pend_n[0, 1]))
        assert 4 * (int(pend_n[0, 0]) + int(pend_n[0, 3])) <= 3 * int(pend_n[0, 1])
    assert seen == {256, 512, 1024, 2048}
    assert all(streaming.find(pend, pend_n, 0, ln, q) >= 0 for ln, q in keys[:1000])
    assert all(streaming.find(pend, pend_n, 0, ln, q) < 0 for ln, q in keys[1000:])
    # the first 600 fill (tombstones), then 500 more are added: 900 in flight
    streaming.drain(pend, pend_t, pend_n, 0, 10_599.0, tags, lru, valid, ix, stamp)
    for t, (line, k) in enumerate(keys[1000:]):
        streaming.add(
            pend, pend_t, pend_n, 0, line, line % sets, k, 20_000.0 + t, tags, lru, valid,
            ix, stamp,
        )  # fmt: skip
        assert 4 * (int(pend_n[0, 0]) + int(pend_n[0, 3])) <= 3 * int(pend_n[0, 1])
    assert int(pend_n[0, 0]) == 900 and int(pend_n[0, 1]) == 2048
    live = keys[600:]
    assert all(
        (pend[0, i, 0], pend[0, i, 2]) == (ln, q)
        for ln, q in live
        if (i := streaming.find(pend, pend_n, 0, ln, q)) >= 0
    )
    assert sum(streaming.find(pend, pend_n, 0, ln, q) >= 0 for ln, q in live) == 900
    assert all(streaming.find(pend, pend_n, 0, ln, q) < 0 for ln, q in keys[:600])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 63), st.integers(0, 3)), max_size=150),
    st.sampled_from([1, 2, 3, _core._SCAN_WAYS + 1, _core._SCAN_WAYS + 4]),  # wide: way index
    st.integers(1, 3),
    st.sampled_from([1, 3, 8, 1024]),
)
def test_streaming_l1_matches_plain_python(
    steps: list[tuple[int, int, int]], ways: int, merge: int, cap: int
) -> None:
    """Same outcomes and final contents; ``cap`` small exercises the full table and the
    hash's collisions, tombstones and rebuilds; ``dt = 0`` gives equal fill times,
    applied in insertion order (the heap's tie rule)."""
    t, acc = 0.0, []
    for dt, line, k in steps:  # non-decreasing times
        t += dt
        acc.append((t, line, k))
    fast = _stream_fast(acc, 2, ways, 7.5, merge, cap)
    slow = _stream_slow(acc, 2, ways, 7.5, merge, cap)
    assert fast[0] == slow[0]
    assert fast[1] == slow[1]


def _gpu_stream(**l1: object) -> GPUConfig:
    return GPUConfig.model_validate(
        {**BASE, "n_sm": 1, "l1": {**BASE["l1"], "sectored": True, **l1}}
    )


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 400), min_size=1, max_size=80, unique=True))
def test_streaming_equals_allocate_on_miss_without_reuse(lines: list[int]) -> None:
    k = make_kernel([(LD, [128 * x + 4 * i for i in range(32)], 4) for x in lines])
    a = simulate_kernel(k, _gpu_stream(), blocks_per_sm=1)
    b = simulate_kernel(k, _gpu_stream(allocate_on="fill"), blocks_per_sm=1)
    assert a.l1_read_accesses == b.l1_read_accesses == 4 * len(lines)
    assert b.l1_read_misses == a.l1_read_misses == 4 * len(lines)
    assert (b.l2_accesses, b.l2_misses, b.dram_read_bytes) == (
        a.l2_accesses,
        a.l2_misses,
        a.dram_read_bytes,
    )


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 31), min_size=1, max_size=120))
def test_streaming_stream_that_fits_has_only_compulsory_misses(lines: list[int]) -> None:
    k = make_kernel([(LD, [128 * x] * 32, 4) for x in lines])  # 32 lines = the 4 KB L1
    s = simulate_kernel(k, _gpu_stream(allocate_on="fill"), blocks_per_sm=1)
    assert s.l1_read_misses == len(set(lines))
    assert s.l1_read_hits + s.l1_read_pending_hits == len(lines) - len(set(lines))


@pytest.mark.parametrize(("ctas", "thrashes"), [(80, False), (640, True)])
def test_allocate_on_fill_keeps_reuse_that_allocate_on_miss_thrashes(
    ctas: int, thrashes: bool
) -> None:
    """Paper 001 Listing 1 (GS = 32, n = 3): each thread reads one sector three times,
    the next read issued only after the previous one's data is back. v100's carve-out
    leaves 768 L1 lines with 8 CTAs per SM, 960 with one. One CTA per SM (8 warps x 32
    lines in flight) fits: both
    policies hit 2 reads of 3. Eight CTAs (2,048 lines): an allocate-on-miss line is
    LRU-stamped when its miss issues, and the other warps' misses evict it before its
    fill; an allocate-on-fill line is stamped at its fill, just before the next read."""
    from mdm.config.load import load_gpu
    from mdm.traces.workloads import generate

    k = generate("stride", 0, gs=32, ctas=ctas).kernels[0]
    fill = simulate_kernel(k, load_gpu("v100"))
    miss = simulate_kernel(k, load_gpu("v100").with_updates({"l1.allocate_on": "miss"}))
    reads = fill.l1_read_hits + fill.l1_read_pending_hits + fill.l1_read_misses
    assert fill.l1_read_misses * 3 == reads  # the first read of each sector only
    if thrashes:
        assert miss.l1_read_misses > 0.95 * reads
    else:
        assert miss.l1_read_misses * 3 == reads


# ---------------------------------------------------- vs Accel-Sim SM7_QV100
def _sm7_rows(reference_dir: Path):
    pd = pytest.importorskip("pandas")
    res = pd.read_csv(reference_dir / "results.csv")
    return res[(res.arch == "SM7_QV100") & (res.sweep_param == "baseline")]


SM7_WORKLOADS = [
    "vecadd",
    "stride1",
    "stencil2d",
    "gemm_tiled",
    "stride32",
    "spmv_csr",
    "kmeans",
    "gather",
    "pchase",
    "bw_dram",
    "bw_l2",
]


# L1 read miss rate tolerance (absolute) where the miss count depends on how the timing
# model interleaves warps: stride32 re-reads each warp's 32 lines 3 times with 48 warps x
# 32 lines per SM against a 768-line L1 (LRU thrash: whether a re-read survives depends
# on how many other warps' loads come in between); spmv_csr's gathers likewise.
TIMING_SENSITIVE = {"stride32": 0.25, "spmv_csr": 0.04}


@pytest.mark.parametrize("workload", SM7_WORKLOADS)
def test_against_accelsim_sm7_qv100(reference_dir: Path, workload: str) -> None:
    """L1 read and write accesses exactly (warp_sector coalescer); L1 read miss rate within
    0.02 absolute (``TIMING_SENSITIVE``: wider), L2 miss rate within 0.02 absolute, DRAM
    reads within 2 % (25 % for stride32, whose L2 traffic is its L1 misses). The hit /
    pending-hit split depends on the timing model and is not asserted."""
    from mdm.memory import simulate_app
    from mdm.traces.accelsim import read_app

    rows = _sm7_rows(reference_dir)
    row = rows[rows.workload == workload].iloc[0]
    g = _sm7()
    tot = simulate_app(read_app(reference_dir / "traces" / row.isa / workload), g).total()
    assert tot.l1_read_accesses == row.l1d_rd_accesses
    if row.l1d_wr_accesses == row.l1d_wr_accesses:  # NaN when the run has no store
        assert tot.l1_write_accesses == row.l1d_wr_accesses
    tol = TIMING_SENSITIVE.get(workload, 0.02)
    assert tot.l1_read_misses / tot.l1_read_accesses == pytest.approx(
        row.l1d_rd_misses / row.l1d_rd_accesses, abs=tol
    )
    assert tot.l2_miss_rate == pytest.approx(row.l2_misses / row.l2_accesses, abs=0.02)
    rel = 0.25 if workload == "stride32" else 0.02
    assert tot.dram_read_bytes / g.dram.atom_bytes == pytest.approx(row.dram_reads, rel=rel)
