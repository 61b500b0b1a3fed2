"""Occupancy: hand-worked cases, reference simulator's ctas_per_sm, brute-force invariant."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.config import load_gpu
from mdm.errors import MdmError
from mdm.profile.occupancy import DoesNotFit, occupancy

PASCAL = load_gpu("mdm_pascal")


def test_hand_worked_limits():
    # 256 threads = 8 warps; 2048/256 = 8 blocks by threads, 64/8 = 8 by warps
    o = occupancy(PASCAL, 256, 16, 0, 448)
    assert (o.blocks_per_sm, o.warps_per_sm, o.limiting) == (8, 64, "threads")
    assert o.limited_by == ("threads", "warps")
    assert (o.active_sms, o.waves, o.fractional_waves) == (28, 2, 2.0)
    # 33 registers -> 36 per thread (GPGPU-Sim rounds to 4): 65536 // (256*36) = 7
    o = occupancy(PASCAL, 256, 33, 0, 100)
    assert (o.blocks_per_sm, o.limiting) == (7, "registers")
    assert o.waves == 1 and o.fractional_waves == pytest.approx(100 / (7 * 28))
    # 40 KB shared memory per block: 96 KB // 40 KB = 2 blocks
    o = occupancy(PASCAL, 64, 8, 40 * 1024, 5)
    assert (o.blocks_per_sm, o.limiting, o.active_sms) == (2, "shared_memory", 5)
    # 1 thread: padded to one warp, 32-block limit
    o = occupancy(PASCAL, 1, 8, 0, 1)
    assert (o.blocks_per_sm, o.limiting, o.warps_per_sm) == (32, "blocks", 32)
    # a 100-thread block occupies 4 warps: 2048 // 128 = 16 blocks
    assert occupancy(PASCAL, 100, 0, 0, 1).blocks_per_sm == 16


def test_reserved_shared_memory_per_block():
    """CUDA reserves 1 KB of shared memory per block from compute capability 8.0: on an
    H100 limited to an 8 KB carve-out (as ncu measured), blocks of 2 KB fit 2, not 4,
    and of 4.1 KB (4,224 B, a multiple of the preset's 128 B granule, + 1 KB = 5,248 B)
    1; without shared memory the reservation
    alone caps 8 KB at 8 blocks of 64 threads (32 by the block limit otherwise)."""
    h100 = load_gpu("h100").with_updates({"sm.shared_mem_bytes": 8192})
    assert h100.sm.shared_mem_reserved_per_block_bytes == 1024
    o = occupancy(h100, 256, 32, 2048, 1000)
    assert (o.blocks_per_sm, o.limiting) == (2, "shared_memory")
    assert occupancy(h100, 256, 32, 4224, 1000).blocks_per_sm == 1
    o = occupancy(h100, 64, 32, 0, 1000)
    assert (o.blocks_per_sm, o.limiting) == (8, "shared_memory")
    none = h100.with_updates({"sm.shared_mem_reserved_per_block_bytes": 0})
    assert occupancy(none, 256, 32, 2048, 1000).blocks_per_sm == 4
    assert occupancy(none, 64, 32, 0, 1000).blocks_per_sm == 32


def test_granularity_256_per_warp():
    gpu = PASCAL.with_updates({"sm.register_alloc_granularity": 256})
    # 33 regs x 32 lanes = 1056 -> 1280 per warp; 65536 // (8 * 1280) = 6
    assert occupancy(gpu, 256, 33, 0, 1).blocks_per_sm == 6


def test_nregs_policy():
    with pytest.raises(MdmError, match="21955"):
        occupancy(PASCAL, 256, 21955, 0, 10)
    clamp = occupancy(PASCAL, 256, 21955, 0, 10, nregs_policy="clamp")
    assert clamp.nregs_used == 255 and clamp.blocks_per_sm == 1  # 65536 // (256*256)
    ignore = occupancy(PASCAL, 256, 21955, 0, 10, nregs_policy="ignore")
    assert ignore.nregs_used == 0 and ignore.blocks_per_sm == 8


def test_does_not_fit_and_bad_input():
    with pytest.raises(MdmError, match="shared_memory"):
        occupancy(PASCAL, 32, 8, 200 * 1024, 1)
    with pytest.raises(MdmError, match="threads_per_block"):
        occupancy(PASCAL, 4096, 8, 0, 1)
    with pytest.raises(MdmError, match="n_blocks"):
        occupancy(PASCAL, 32, 8, 0, 0)


def test_matches_reference_ctas_per_sm(reference_dir):
    """Every kernel's ctas_per_sm / waves in the reference summaries (sm61 on mdm_pascal)."""
    files = sorted((reference_dir / "traces" / "sm61").glob("*/summary.json"))
    assert files
    n = 0
    for f in files:
        for k in json.loads(f.read_text())["kernels"]:
            threads = math.prod(k["block"])
            o = occupancy(PASCAL, threads, k["nregs"], k["shmem"], k["ctas"])
            assert o.blocks_per_sm == k["ctas_per_sm"], (f, k["id"])
            assert o.fractional_waves == pytest.approx(k["waves_28sm"], abs=0.01), (f, k["id"])
            n += 1
    assert n >= 10


def _brute_force(gpu, threads, nregs, shmem):
    """Largest b such that b resident blocks fit every resource (independent formulation)."""
    warps = -(-threads // 32)
    regs_per_warp = -(-(32 * nregs) // 128) * 128
    b = 0
    while (
        b + 1 <= gpu.sm.max_blocks
        and (b + 1) * warps * 32 <= gpu.sm.max_threads
        and (b + 1) * warps <= gpu.sm.max_warps
        and (b + 1) * warps * regs_per_warp <= gpu.sm.registers
        and (b + 1) * shmem <= gpu.sm.shared_mem_bytes
    ):
        b += 1
    return b


@settings(max_examples=300, deadline=None)
@given(
    threads=st.integers(1, 1024),
    nregs=st.integers(0, 255),
    shmem=st.integers(0, 96 * 1024),
    n_blocks=st.integers(1, 100_000),
)
def test_against_brute_force(threads, nregs, shmem, n_blocks):
    expect = _brute_force(PASCAL, threads, nregs, shmem)
    if expect == 0:
        with pytest.raises(MdmError):
            occupancy(PASCAL, threads, nregs, shmem, n_blocks)
        return
    o = occupancy(PASCAL, threads, nregs, shmem, n_blocks)
    assert o.blocks_per_sm == expect
    assert o.warps_per_sm <= PASCAL.sm.max_warps
    assert (o.waves - 1) * expect * PASCAL.n_sm < n_blocks <= o.waves * expect * PASCAL.n_sm


def test_a_kernel_that_does_not_fit_is_named() -> None:
    """Through a trace's kernel, the error names the kernel (ID and name) before the
    resources, so that one kernel of an application, or of a predict run, is found."""
    from dataclasses import replace

    from mdm.pipeline import predict_app
    from mdm.profile.occupancy import kernel_occupancy
    from mdm.traces.workloads import generate

    app = generate("vecadd", ctas=4)
    big = replace(app.kernels[0], shmem_bytes=PASCAL.sm.shared_mem_bytes + 1)
    assert kernel_occupancy(PASCAL, app.kernels[0]).blocks_per_sm >= 1
    wide = replace(app.kernels[0], block=(PASCAL.sm.max_threads + 32, 1, 1))
    with pytest.raises(DoesNotFit, match=rf"kernel {wide.kernel_id} .*sm.max_threads"):
        kernel_occupancy(PASCAL, wide)
    with pytest.raises(MdmError) as ei:
        occupancy(PASCAL, 0, 8, 0, 1)  # no block at all: bad input, not a misfit
    assert not isinstance(ei.value, DoesNotFit)
    want = rf"kernel {big.kernel_id} \({re.escape(big.name)}\): a block of .* does not fit"
    with pytest.raises(DoesNotFit, match=want):
        kernel_occupancy(PASCAL, big)
    with pytest.raises(MdmError, match=want):
        predict_app(replace(app, commands=[big]), PASCAL, ["mdm"])


def test_thread_limit_counts_whole_warps():
    """A 100-thread block takes 4 warps = 128 thread slots: with 1024 threads per SM (and
    64 warps, so the warp limit is 16) 1024 // 128 = 8 blocks, not 1024 // 100 = 10."""
    gpu = PASCAL.with_updates({"sm.max_threads": 1024})
    o = occupancy(gpu, 100, 0, 0, 1000)
    assert (o.blocks_per_sm, o.limiting) == (8, "threads")


def test_shared_memory_rounds_to_the_granularity():
    """On an 8 KB H100 carve-out with 256 B granules (1 KB reserved per block) a 1706 B
    block takes 1792 + 1024 = 2816 B: 8192 // 2816 = 2 blocks, where the unrounded 2730 B
    would fit 3."""
    h100 = load_gpu("h100").with_updates(
        {"sm.shared_mem_bytes": 8192, "sm.shared_mem_alloc_granularity": 256}
    )
    assert h100.sm.shared_mem_reserved_per_block_bytes == 1024
    o = occupancy(h100, 256, 32, 1706, 1000)
    assert (o.blocks_per_sm, o.limiting) == (2, "shared_memory")
