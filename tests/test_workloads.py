"""Built-in synthetic workloads: determinism, structure, lane masks, reference parity."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdm.errors import MdmError
from mdm.traces.accelsim import read_app, write_app
from mdm.traces.model import (
    MEMORY_CLASSES,
    WARP_SIZE,
    AppTrace,
    InstrClass,
    KernelTrace,
    Memcpy,
)
from mdm.traces.opcodes import classify
from mdm.traces.workloads import WORKLOADS, _emit, generate, md_class_of
from mdm.traces.workloads.irregular import random_csr

#: Small instances of every workload (fast to generate and to write/read).
SMALL: dict[str, dict[str, int | float]] = {
    "vecadd": {"ctas": 3, "threads": 96, "iters": 2, "tail": 37},
    "stride": {"ctas": 3, "threads": 64, "n": 2, "gs": 32},
    "spmv_csr": {"ctas": 2, "threads": 128, "band": 16, "tail": 5},
    "bfs": {"ctas": 2, "threads": 128, "tail": 9},
    "kmeans": {"ctas": 2, "threads": 64, "nf": 4, "k": 2, "tail": 3},
    "stencil2d": {"W": 40, "H": 12, "sweeps": 2},
    "gemm_tiled": {"M": 32, "N": 16, "K": 32},
    "gather": {"ctas": 2, "threads": 64, "iters": 2, "xsize": 1000, "tail": 10},
    "transpose": {"W": 64, "H": 32, "pad": 0},
}
RANDOM = ("spmv_csr", "bfs", "gather")
SM61 = Path("../shared/reference/traces/sm61")


def _kernels(name: str, seed: int = 0, **over: int | float) -> list[KernelTrace]:
    return generate(name, seed, **{**SMALL[name], **over}).kernels


def _lines(addrs: np.ndarray) -> int:
    return int(np.unique(addrs // 128).size)


def _of_pc(kt: KernelTrace, pc: int) -> np.ndarray:
    return np.flatnonzero(kt.pc == pc)


# ------------------------------------------------------------------ registry / API
def test_registry_lists_every_workload_with_class_and_defaults() -> None:
    assert set(WORKLOADS) == set(SMALL)
    for name, spec in WORKLOADS.items():
        assert spec.name == name and spec.description
        assert spec.md_class in ("MD", "NMD")
        assert set(SMALL[name]) <= set(spec.params)
        assert all(isinstance(v, int | float) for v in spec.params.values())
    assert md_class_of("stride", gs=1) == "NMD" and md_class_of("stride", gs=32) == "MD"
    assert WORKLOADS["vecadd"].md_class == "NMD" and WORKLOADS["gather"].md_class == "MD"


def test_unknown_workload_and_parameter_are_clear_errors() -> None:
    with pytest.raises(MdmError, match="expected one of: .*vecadd"):
        generate("nope")
    with pytest.raises(MdmError, match="no parameter 'bogus'.*ctas="):
        generate("vecadd", bogus=1)
    with pytest.raises(ValueError, match="ctas=0"):
        generate("vecadd", ctas=0)
    with pytest.raises(MdmError, match="multiple of the tile"):
        generate("gemm_tiled", M=24)
    with pytest.raises(MdmError, match="integer"):
        generate("stride", n=2.5)
    # text (builtin:stride?gs=abc, --param gs=abc) and booleans are not sizes: before,
    # int("abc") escaped as a bare ValueError and True was read as 1
    with pytest.raises(MdmError, match="parameter gs must be a number, got 'abc'"):
        generate("stride", gs="abc")
    with pytest.raises(MdmError, match="parameter ctas must be a number, got True"):
        generate("stride", ctas=True)
    # a size numpy cannot allocate (here 5.8 TiB) was a MemoryError traceback
    with pytest.raises(MdmError, match="ctas=99999999999 is too large to generate"):
        generate("stride", ctas=99_999_999_999)


def test_build_callable_matches_generate() -> None:
    spec = WORKLOADS["stride"]
    a = spec.build(0, **{**spec.params, **SMALL["stride"]}).kernels[0]
    assert a.equals(_kernels("stride")[0])


# ------------------------------------------------------------------ determinism
@pytest.mark.parametrize("name", sorted(SMALL))
def test_deterministic_for_a_seed(name: str) -> None:
    a, b = generate(name, 7, **SMALL[name]), generate(name, 7, **SMALL[name])
    assert len(a.commands) == len(b.commands)
    for x, y in zip(a.commands, b.commands, strict=True):
        assert x.equals(y) if isinstance(x, KernelTrace) else x == y


@pytest.mark.parametrize("name", RANDOM)
def test_different_seeds_differ(name: str) -> None:
    a, b = _kernels(name, 1)[0], _kernels(name, 2)[0]
    assert not a.equals(b)


# ------------------------------------------------------------------ structure
def _check_structure(app: AppTrace) -> None:
    assert app.kernels and app.memcpys
    for kt in app.kernels:
        kt.validate()
        assert kt.binary_version == 61
        assert kt.n_warps == kt.n_blocks * kt.warps_per_block
        w = np.arange(kt.n_warps)
        assert np.array_equal(kt.warp_block, w // kt.warps_per_block)
        assert np.array_equal(kt.warp_id, w % kt.warps_per_block)
        assert np.all(kt.warp_lengths > 0) and np.all(kt.mask != 0)
        # iclass is exactly what the opcode table says for these opcode strings
        assert np.array_equal(kt.iclass, classify(kt.opcodes, 61)[kt.opcode])
        # one address per active lane for memory instructions, none otherwise
        is_mem = np.isin(kt.iclass, [int(c) for c in MEMORY_CLASSES])
        n_addr = np.diff(kt.addr_ptr)
        assert np.array_equal(n_addr, np.where(is_mem, kt.active_lanes, 0))
        assert np.all((kt.mem_width > 0) == is_mem)
        assert set(np.unique(kt.mem_width[is_mem]).tolist()) <= {1, 4, 8, 16}
        # registers used fit the kernel's register count
        assert int(max(kt.dst.max(), kt.src.max())) < kt.nregs
        # last instruction of every warp is an EXIT of its remaining lanes
        last = kt.warp_ptr[1:] - 1
        assert {kt.opcodes[i] for i in kt.opcode[last]} == {"EXIT"}
        # every global access falls in a 0x7f4... array; shared ones in the block window
        cls = np.repeat(kt.iclass, n_addr)
        glob = kt.addrs[np.isin(cls, [InstrClass.LD_GLOBAL, InstrClass.ST_GLOBAL])]
        assert glob.size == 0 or int(glob.min()) >= 0x7F4000000000
        shared = kt.addrs[np.isin(cls, [InstrClass.LD_SHARED, InstrClass.ST_SHARED])]
        assert shared.size == 0 or int(shared.max()) < kt.shmem_bytes


@pytest.mark.parametrize("name", sorted(SMALL))
def test_structure_and_opcode_classes(name: str) -> None:
    _check_structure(generate(name, 3, **SMALL[name]))


def _lane_exec_counts(kt: KernelTrace, idx: np.ndarray) -> np.ndarray:
    """How many of the instructions ``idx`` each (warp, lane) executed: int[warps, 32]."""
    bits = (kt.mask[idx, None] >> np.arange(WARP_SIZE, dtype=np.uint32)) & 1
    out = np.zeros((kt.n_warps, WARP_SIZE), dtype=np.int64)
    np.add.at(out, kt.inst_warp[idx], bits.astype(np.int64))
    return out


def test_loads_feed_their_consumers() -> None:
    """Register dependencies: every load's destination is read later in its warp."""
    for name in SMALL:
        for kt in _kernels(name):
            for w in range(min(kt.n_warps, 4)):
                lo, hi = kt.warp_ptr[w], kt.warp_ptr[w + 1]
                for i in range(lo, hi):
                    if kt.iclass[i] in (InstrClass.LD_GLOBAL, InstrClass.LD_SHARED):
                        later = kt.src[i + 1 : hi]
                        assert np.any(later == kt.dst[i, 0]), (name, hex(int(kt.pc[i])))


# ------------------------------------------------------------------ per-kernel formulas
@given(
    ctas=st.integers(1, 4),
    threads=st.integers(1, 160),
    n=st.integers(1, 5),
    gs=st.sampled_from([1, 2, 3, 32]),
)
@settings(max_examples=25, deadline=None)
def test_stride_counts_and_lines(ctas: int, threads: int, n: int, gs: int) -> None:
    kt = generate("stride", ctas=ctas, threads=threads, n=n, gs=gs).kernels[0]
    wpb = -(-threads // WARP_SIZE)
    assert kt.n_warps == ctas * wpb and kt.shmem_bytes == threads * n * 4
    assert np.all(kt.warp_lengths == 11 + 12 * n)  # prologue + n iterations
    loads = np.flatnonzero(kt.iclass == InstrClass.LD_GLOBAL)
    assert loads.size == kt.n_warps * n
    # the last warp of a block holds only the existing threads
    tail = threads - (wpb - 1) * WARP_SIZE
    assert np.all(kt.mask[kt.warp_ptr[:-1][wpb - 1 :: wpb]] == np.uint32((1 << tail) - 1))
    for j in loads[:: max(1, loads.size // 16)]:
        a = kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]]
        assert np.all(np.diff(a.astype(np.int64)) == 4 * gs)  # Listing 1: input[GS*ix + i]
        if gs == 32:
            assert _lines(a) == a.size  # every lane its own 128 B line


def test_stride_gs1_one_line_gs32_32_lines() -> None:
    for gs, expect in ((1, 1), (32, 32)):
        kt = generate("stride", ctas=2, threads=64, n=1, gs=gs).kernels[0]
        for j in np.flatnonzero(kt.iclass == InstrClass.LD_GLOBAL):
            assert _lines(kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]]) == expect


def _grid_stride_trips(ctas: int, threads: int, n: int) -> np.ndarray:
    ix = np.arange(ctas * threads)
    total = ctas * threads
    return np.where(ix < n, (n - ix + total - 1) // total, 0)


@given(
    ctas=st.integers(1, 3),
    threads=st.sampled_from([32, 48, 64, 96]),
    iters=st.integers(1, 3),
    tail=st.integers(0, 150),
)
@settings(max_examples=25, deadline=None)
def test_vecadd_and_gather_thread_counts_and_bounds(
    ctas: int, threads: int, iters: int, tail: int
) -> None:
    n = ctas * threads * iters - tail
    if n < 1:
        return
    trips = _grid_stride_trips(ctas, threads, n)
    # per thread: prologue (10) + 15 per trip incl. BRA/EXIT; out-of-range: 7 + EXIT
    per_thread = {"vecadd": (10, 15), "gather": (10, 16)}
    for name, (pro, body) in per_thread.items():
        kt = generate(name, ctas=ctas, threads=threads, iters=iters, tail=tail).kernels[0]
        expect = np.where(trips > 0, pro + body * trips, 8).sum()
        assert kt.thread_instructions == expect
        ld = np.flatnonzero(kt.iclass == InstrClass.LD_GLOBAL)
        first = kt.addrs[kt.addr_ptr[ld[0]] : kt.addr_ptr[ld[0] + 1]]
        base = int(first[0])
        # lanes beyond n never load: the streaming load addresses are exactly a[0..n)
        stream = ld[::2]
        got = np.concatenate([kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]] for j in stream])
        assert np.array_equal(np.sort(got), base + 4 * np.arange(n, dtype=np.uint64))


def test_gather_indices_are_random_within_x() -> None:
    kt = generate("gather", 5, ctas=4, threads=128, iters=1, tail=0, xsize=4096).kernels[0]
    g = _of_pc(kt, 0x130)
    x = np.concatenate([kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]] for j in g])
    off = (x - x.min()) // 4
    assert off.max() < 4096 and np.unique(off).size > 0.8 * 4096 * (1 - np.exp(-0.125))
    lines = [_lines(kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]]) for j in g]
    assert np.mean(lines) > 20  # memory-divergent gather


def test_spmv_lane_masks_follow_row_nnz() -> None:
    p = SMALL["spmv_csr"]
    kt = _kernels("spmv_csr", 11)[0]
    rows = int(p["ctas"] * p["threads"] - p["tail"])
    spec = WORKLOADS["spmv_csr"].params
    row_ptr, col = random_csr(
        np.random.default_rng(11), rows, spec["mean_extra"], spec["band_frac"], int(p["band"])
    )
    nnz = np.diff(row_ptr)
    gathers = _of_pc(kt, 0x1C0)
    per_lane = _lane_exec_counts(kt, gathers).ravel()
    assert np.array_equal(per_lane[:rows], nnz) and not per_lane[rows:].any()
    assert len(set(nnz.tolist())) > 1 and any(kt.mask[gathers] != 0xFFFFFFFF)
    # the gathered x addresses are x[col[j]], in row order per lane
    x_base = int(kt.addrs[kt.addr_ptr[gathers[0]]]) - 4 * int(col[0])
    got = np.zeros(rows, dtype=np.int64)
    for j in gathers:
        lanes = np.flatnonzero((int(kt.mask[j]) >> np.arange(32)) & 1)
        r = kt.inst_warp[j] * 32 + lanes
        a = kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]].astype(np.int64)
        assert np.array_equal(a, x_base + 4 * col[row_ptr[r] + got[r]])
        got[r] += 1
    # SYNC masks are the lanes that leave the loop: each row exits exactly once
    assert np.array_equal(_lane_exec_counts(kt, _of_pc(kt, 0x250)).ravel()[:rows], np.ones(rows))


def test_bfs_stores_only_for_unvisited_neighbours_of_frontier() -> None:
    kt = _kernels("bfs", 4)[0]
    per_lane_nb = _lane_exec_counts(kt, _of_pc(kt, 0x1E0))
    per_lane_store = _lane_exec_counts(kt, _of_pc(kt, 0x270))
    frontier = _lane_exec_counts(kt, _of_pc(kt, 0xB0))
    assert np.all(per_lane_store <= per_lane_nb)
    assert np.all((per_lane_nb > 0) == (frontier > 0))
    assert per_lane_store.sum() > 0 and per_lane_store.sum() < per_lane_nb.sum()
    assert len(np.unique(per_lane_nb[frontier > 0])) > 1  # lane-divergent degrees
    for j in _of_pc(kt, 0x270):  # store mask is a subset of the iteration's mask
        k = j - 1
        while kt.pc[k] != 0x220:
            k -= 1
        assert kt.mask[j] & ~kt.mask[k] == 0


@pytest.mark.parametrize("nf", [1, 2, 4, 8, 16, 32])
def test_kmeans_point_major_lines(nf: int) -> None:
    kt = generate("kmeans", ctas=1, threads=64, nf=nf, k=2).kernels[0]
    loads = np.flatnonzero(kt.iclass == InstrClass.LD_GLOBAL)
    assert loads.size == kt.n_warps * nf
    assert np.all(kt.warp_lengths == 22 + nf + 2 * (2 * nf + 3))
    for j in loads:
        a = kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]]
        assert np.all(np.diff(a.astype(np.int64)) == 4 * nf)
        assert _lines(a) == nf  # 32 lanes x nf*4 B apart


def test_stencil_writes_each_interior_point_once() -> None:
    w, h = 40, 12
    app = generate("stencil2d", W=w, H=h, sweeps=3)
    assert [k.kernel_id for k in app.kernels] == [1, 2, 3]
    stores = []
    for kt in app.kernels:
        st_ = np.flatnonzero(kt.iclass == InstrClass.ST_GLOBAL)
        a = np.concatenate([kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]] for j in st_])
        stores.append(a)
        idx = (a - a.min()) // 4 + w + 1
        assert a.size == (w - 2) * (h - 2) == np.unique(idx).size
        ys, xs = np.divmod(idx, w)
        assert xs.min() == 1 and xs.max() == w - 2 and ys.min() == 1 and ys.max() == h - 2
    assert stores[0].min() != stores[1].min() and stores[0].min() == stores[2].min()


def test_gemm_barriers_and_shared_tiles() -> None:
    m, n, k = 32, 48, 48
    kt = generate("gemm_tiled", M=m, N=n, K=k).kernels[0]
    assert kt.grid == (n // 16, m // 16, 1) and kt.block == (16, 16, 1)
    per_warp = lambda cls: np.bincount(kt.inst_warp[kt.iclass == cls], minlength=kt.n_warps)  # noqa: E731
    tiles = k // 16
    assert np.all(per_warp(InstrClass.BARRIER) == 2 * tiles)
    assert np.all(per_warp(InstrClass.ST_SHARED) == 2 * tiles)
    assert np.all(per_warp(InstrClass.LD_SHARED) == 20 * tiles)
    assert np.all(per_warp(InstrClass.LD_GLOBAL) == 2 * tiles)
    ffma = np.array([op == "FFMA" for op in kt.opcodes])[kt.opcode]
    assert np.all(np.bincount(kt.inst_warp[ffma], minlength=kt.n_warps) == 16 * tiles)
    wide = kt.mem_width[kt.iclass == InstrClass.LD_SHARED]
    assert set(np.unique(wide).tolist()) == {4, 16}


@pytest.mark.parametrize("pad", [0, 1])
def test_transpose_moves_every_element_to_its_transposed_place(pad: int) -> None:
    """Following each value lane by lane (LDG -> STS into the block's tile, then LDS ->
    STG), in[y][x] lands in out[x][y] for every element, each written once; the tile's
    column reads hit one bank per warp without padding and 32 banks with it."""
    w, h = 96, 64
    kt = generate("transpose", W=w, H=h, pad=pad).kernels[0]
    assert kt.grid == (w // 32, h // 32, 1) and kt.block == (32, 8, 1)

    def rows(cls: InstrClass) -> np.ndarray:  # (warps, per warp, 32 lanes) of addresses
        idx = np.flatnonzero(kt.iclass == cls)
        assert np.all(kt.mask[idx] == 0xFFFFFFFF)
        a = np.stack([kt.addrs[kt.addr_ptr[i] : kt.addr_ptr[i + 1]] for i in idx])
        return a.reshape(kt.n_warps, -1, 32).astype(np.int64)

    ldg, sts, lds, stg = (rows(c) for c in (C_LDG, C_STS, C_LDS, C_STG))
    ldg, stg = (ldg - ldg.min()) // 4, (stg - stg.min()) // 4
    block = np.repeat(np.arange(kt.n_warps) // 8, 4 * 32)
    tile = {}  # (block, shared address) -> input element
    for b_, s_, e_ in zip(block, sts.ravel(), ldg.ravel(), strict=True):
        tile[(b_, s_)] = e_
    got = np.array([tile[(b_, s_)] for b_, s_ in zip(block, lds.ravel(), strict=True)])
    out = stg.ravel()
    assert sorted(out.tolist()) == list(range(w * h))
    y, x = got // w, got % w
    assert np.array_equal(out, x * h + y)
    banks = {len(set(((a // 4) % 32).tolist())) for a in lds.reshape(-1, 32)}
    assert banks == ({1} if pad == 0 else {32})


C_LDG, C_STS, C_LDS, C_STG = (
    InstrClass.LD_GLOBAL,
    InstrClass.ST_SHARED,
    InstrClass.LD_SHARED,
    InstrClass.ST_GLOBAL,
)


# ------------------------------------------------------------------ hypothesis
@given(
    name=st.sampled_from(sorted(SMALL)),
    seed=st.integers(0, 2**31),
    shrink=st.integers(1, 3),
)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_small_random_instances_are_well_formed(name: str, seed: int, shrink: int) -> None:
    p = dict(SMALL[name])
    for key in ("ctas", "sweeps"):
        if key in p:
            p[key] = max(1, int(p[key]) - shrink + 1)
    if "threads" in p:
        p["threads"] = max(1, int(p["threads"]) // shrink)
    if "tail" in p:
        p["tail"] = min(int(p["tail"]), int(p.get("threads", 1)) - 1)
    _check_structure(generate(name, seed, **p))


# ------------------------------------------------------------------ Accel-Sim round trip
@pytest.mark.parametrize("name", sorted(SMALL))
def test_accelsim_round_trip(name: str, tmp_path: Path) -> None:
    app = generate(name, 2, **SMALL[name])
    back = read_app(write_app(app, tmp_path / name, compress="gz" if name == "bfs" else None))
    assert len(back.commands) == len(app.commands)
    for x, y in zip(app.commands, back.commands, strict=True):
        if isinstance(x, Memcpy):
            assert x == y
        else:
            assert isinstance(y, KernelTrace) and x.equals(y)


# ------------------------------------------------------------------ reference traces
#: reference workload folder -> (our workload, fixed parameters not in summary.json)
REFERENCE = {
    "stride1": ("stride", {"gs": 1}),
    "stride32": ("stride", {"gs": 32}),
    "vecadd": ("vecadd", {}),
    "gather": ("gather", {}),
    "kmeans": ("kmeans", {}),
    "stencil2d": ("stencil2d", {}),
    "gemm_tiled": ("gemm_tiled", {}),
}
IDENTICAL = ("stride1", "stride32", "vecadd", "kmeans", "stencil2d", "gemm_tiled")


def _reference_params(summary: dict, name: str, fixed: dict) -> dict:
    params = {
        ("n" if k == "N" and name == "stride" else k): v for k, v in summary["params"].items()
    }
    return {**params, **fixed}


def _summary(reference_dir: Path, ref: str) -> dict:
    return json.loads((reference_dir / "traces" / "sm61" / ref / "summary.json").read_text())


@pytest.mark.parametrize("ref", sorted(REFERENCE))
def test_reference_summary_counts(reference_dir: Path, ref: str) -> None:
    name, fixed = REFERENCE[ref]
    summary = _summary(reference_dir, ref)
    assert WORKLOADS[name].md_class == summary["class"] or name == "stride"
    assert md_class_of(name, **fixed) == summary["class"]
    app = generate(name, **_reference_params(summary, name, fixed))
    assert len(app.kernels) == len(summary["kernels"])
    for kt, ks in zip(app.kernels, summary["kernels"], strict=True):
        assert kt.name == ks["name"] and kt.kernel_id == ks["id"]
        assert list(kt.grid) == ks["grid"] and list(kt.block) == ks["block"]
        assert kt.nregs == ks["nregs"] and kt.shmem_bytes == ks["shmem"]
        assert kt.n_instructions == ks["warp_insts"]
        assert kt.thread_instructions == ks["thread_insts"]
        glob = np.isin(kt.iclass, [InstrClass.LD_GLOBAL, InstrClass.ST_GLOBAL])
        assert int(glob.sum()) == ks["global_mem_insts"]
    assert sum(k.n_instructions for k in app.kernels) == summary["warp_insts"]


def test_spmv_reference_scale(reference_dir: Path) -> None:
    """Random matrix: same geometry, warp instruction count within 2% of the reference."""
    summary = _summary(reference_dir, "spmv_csr")
    kt = generate("spmv_csr", **summary["params"]).kernels[0]
    ks = summary["kernels"][0]
    assert list(kt.grid) == ks["grid"] and list(kt.block) == ks["block"]
    assert kt.nregs == ks["nregs"] and kt.name == ks["name"]
    assert abs(kt.n_instructions / ks["warp_insts"] - 1) < 0.02


@pytest.mark.parametrize("ref", IDENTICAL)
def test_deterministic_workloads_equal_reference_traces(reference_dir: Path, ref: str) -> None:
    name, fixed = REFERENCE[ref]
    folder = reference_dir / "traces" / "sm61" / ref
    app = generate(name, **_reference_params(_summary(reference_dir, ref), name, fixed))
    for ours, theirs in zip(app.kernels, read_app(folder).kernels, strict=True):
        assert ours.equals(theirs)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_chunked_emission_equals_one_chunk(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Emitting a few thread blocks at a time gives exactly the one-chunk kernel."""
    whole = generate(name, 5, **SMALL[name]).kernels
    monkeypatch.setattr(_emit, "CHUNK_WARPS", 1)
    for a, b in zip(whole, generate(name, 5, **SMALL[name]).kernels, strict=True):
        assert a.equals(b) and a.opcodes == b.opcodes


def test_a_launch_too_large_for_memory_fails_after_its_first_chunk(monkeypatch) -> None:  # noqa: ANN001
    """The kernel's size is projected from its first chunk of blocks: more than half the
    available memory (building and predicting it holds about twice its arrays) is a
    clear error within seconds, not a process killed by the kernel's OOM killer."""
    from mdm import _memory
    from mdm.traces.workloads import _emit
    from mdm.traces.workloads._emit import Geometry

    # a launch's whole geometry allocates nothing until a coordinate is read
    g = Geometry((10**12, 1, 1), (256, 1, 1))
    assert g.n_warps == 8 * 10**12 and "tid" not in vars(g)
    small = generate("vecadd", ctas=1024)
    need = sum(
        getattr(small.kernels[0], k).nbytes
        for k in ("pc", "opcode", "mask", "dst", "src", "addr_ptr", "addrs", "warp_ptr")
    )
    monkeypatch.setattr(_emit, "CHUNK_WARPS", 8 * 64)  # 64 blocks per chunk
    monkeypatch.setattr(_memory, "available_memory_bytes", lambda: int(1.5 * need))
    with pytest.raises(MdmError, match=r"projected from its first 64 of 1,024 blocks"):
        generate("vecadd", ctas=1024)
    monkeypatch.setattr(_memory, "available_memory_bytes", lambda: int(2.5 * need))
    assert generate("vecadd", ctas=1024).kernels[0].equals(small.kernels[0])
    monkeypatch.setattr(_memory, "available_memory_bytes", lambda: None)  # not Linux
    assert generate("vecadd", ctas=1024).kernels[0].equals(small.kernels[0])


# ------------------------------------------------------------------ mutation-pass tests
GIB = 1 << 30


def _lane_addrs(kt: KernelTrace, pc: int) -> dict[tuple[int, int], list[int]]:
    """(warp, lane) -> the addresses that lane accessed at ``pc``, in program order."""
    out: dict[tuple[int, int], list[int]] = {}
    for j in _of_pc(kt, pc):
        lanes = np.flatnonzero((int(kt.mask[j]) >> np.arange(WARP_SIZE)) & 1)
        a = kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]]
        for lane, x in zip(lanes, a, strict=True):
            out.setdefault((int(kt.inst_warp[j]), int(lane)), []).append(int(x))
    return out


def test_stride_memcpy_covers_exactly_the_input_read() -> None:
    """Listing 1 reads ``input[GS*ix + i]`` for ``ix < ctas*threads`` and ``i < n``: the
    largest index is GS*(total-1) + n-1, so the copied input is 4*(GS*(total-1) + n)
    bytes from the first global array (0x7f4000000000); here 4*(5*127 + 3) = 2552."""
    app = generate("stride", ctas=2, threads=64, n=3, gs=5)
    (cp,) = app.memcpys
    assert cp.addr == _emit.GLOBAL_BASE and cp.nbytes == 2552
    kt = app.kernels[0]
    ld = kt.addrs[np.repeat(kt.iclass, np.diff(kt.addr_ptr)) == InstrClass.LD_GLOBAL]
    assert int(ld.min()) == cp.addr and int(ld.max()) + 4 == cp.addr + cp.nbytes


@pytest.mark.parametrize(
    ("gs", "op"), [(1, "MOV"), (4, "SHL"), (32, "SHL"), (3, "XMAD"), (6, "XMAD")]
)
def test_stride_scaling_opcode(gs: int, op: str) -> None:
    """GS*ix at PC 0x60: a move for GS = 1, a shift for a power of two (4, 32), else an
    integer multiply (3, 6: 6 is even but not a power of two)."""
    kt = generate("stride", ctas=1, threads=32, n=1, gs=gs).kernels[0]
    assert {kt.opcodes[o] for o in kt.opcode[_of_pc(kt, 0x60)]} == {op}


def test_stride_shared_memory_limit_is_inclusive() -> None:
    """The output tile takes threads*n*4 B; 256 threads x n = 227 is exactly the
    232,448 B a block may have (allowed), n = 228 is 1 KiB more (rejected)."""
    kt = generate("stride", ctas=1, threads=256, n=227, gs=1).kernels[0]
    assert kt.shmem_bytes == 232_448
    with pytest.raises(MdmError, match="n <= 227"):
        generate("stride", ctas=1, threads=256, n=228, gs=1)


def _writers_before(kt: KernelTrace, i: int, lo: int) -> set[int]:
    """Instructions in ``[lo, i)`` of one warp that ``i`` transitively reads from (the
    latest earlier writer of each source register, recursively)."""
    seen: set[int] = set()
    todo = [i]
    while todo:
        k = todo.pop()
        for r in kt.src[k][kt.src[k] >= 0]:
            w = next((m for m in range(k - 1, lo - 1, -1) if r in kt.dst[m]), None)
            if w is not None and w not in seen:
                seen.add(w)
                todo.append(w)
    return seen


def test_gather_moves_x_at_idx_i_to_y_i() -> None:
    """``y[i] = x[idx[i]]`` with ``idx = gather_indices(seed, n, xsize)``: arrays laid out
    1 GiB apart from 0x7f4000000000 in the order idx, x, y. Every element i < n (n =
    2*64*2 - 10 = 246) is handled once: the idx load (PC 0xE0) reads idx + 4i, the gather
    (0x130) x + 4*idx[i], the store (0x160) y + 4i; the gather's address register comes
    from the idx load (through SHL/IADD), and the copies are x (4*xsize B), idx (4n B)."""
    seed, n, xsize = 9, 246, 1000
    app = generate("gather", seed, **SMALL["gather"])
    kt = app.kernels[0]
    pidx, px, py = (_emit.GLOBAL_BASE + k * GIB for k in range(3))
    assert app.memcpys == [Memcpy(px, 4 * xsize), Memcpy(pidx, 4 * n)]
    idx = np.random.default_rng(seed).integers(0, xsize, size=n, dtype=np.int64)
    a_idx, a_x, a_y = (_lane_addrs(kt, pc) for pc in (0xE0, 0x130, 0x160))
    assert a_idx.keys() == a_x.keys() == a_y.keys()
    seen = []
    for key, addrs in a_idx.items():
        i = (np.array(addrs) - pidx) // 4
        seen += i.tolist()
        assert np.array_equal(a_x[key], px + 4 * idx[i])
        assert np.array_equal(a_y[key], py + 4 * i)
    assert sorted(seen) == list(range(n))
    for pc in (0xE0, 0x130, 0x160):  # 4-byte int / float elements
        assert np.all(kt.mem_width[_of_pc(kt, pc)] == 4)
    first_gather = int(_of_pc(kt, 0x130)[0])
    deps = _writers_before(kt, first_gather, int(kt.warp_ptr[kt.inst_warp[first_gather]]))
    assert 0xE0 in {int(kt.pc[m]) for m in deps}


def test_kmeans_tail_points_only() -> None:
    """npoints = ctas*threads - tail = 2*64 - 3 = 125: feature f of point p is read at
    f + 4*(p*nf + f) (features 1 GiB before the membership array m), and the assignment
    is stored at m + 4p, for exactly the points p < 125 (the last 3 lanes exit)."""
    kt = _kernels("kmeans")[0]
    nf, npts = 4, 125
    pf, pm = _emit.GLOBAL_BASE, _emit.GLOBAL_BASE + GIB
    p = np.arange(npts)
    for f in range(nf):
        got = sorted(x for a in _lane_addrs(kt, 0xE0 + 0x10 * f).values() for x in a)
        assert got == (pf + 4 * (p * nf + f)).tolist()
    st_ = np.flatnonzero(kt.iclass == InstrClass.ST_GLOBAL)
    got = np.sort(np.concatenate([kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]] for j in st_]))
    assert got.tolist() == (pm + 4 * p).tolist()


def test_transpose_padded_tile_size() -> None:
    """The tile is 32 rows of 32 + pad words: 4*32*32 = 4096 B, padded 4*32*33 = 4224 B,
    and the padded column reads tile[tx][ty + j] reach word 31*33 + 31 = 1054 < 1056."""
    for pad, size in ((0, 4096), (1, 4224)):
        kt = generate("transpose", W=32, H=32, pad=pad).kernels[0]
        assert kt.shmem_bytes == size
        lds = np.concatenate(
            [kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]] for j in _of_pc(kt, 0x2A0)]
        )
        assert int(lds.max()) == 4 * (31 * (32 + pad) + 31)


def test_spmv_addresses_follow_the_csr_arrays() -> None:
    """rows = 2*128 - 5 = 251; arrays 1 GiB apart from 0x7f4000000000 in the order
    row_ptr, col, val, x, y. Row r loads row_ptr[r], row_ptr[r+1] (PCs 0xB0, 0xC0), then
    per non-zero j in [row_ptr[r], row_ptr[r+1]) col[j] and val[j] (same offset 4j in
    their arrays), gathers x[col[j]] inside x (a column is a row index < rows; sorted in the row), and
    stores y[r], the sum accumulated by the FFMA; the BRA back-edge (0x240) is taken
    after every non-zero but the last; every row has 1 + Poisson >= 1 non-zeros. Inputs copied: row_ptr
    (4*(rows+1) B), col and val (4*nnz B each), x (4*rows B)."""
    rows = 251
    app = generate("spmv_csr", 11, **SMALL["spmv_csr"])
    kt = app.kernels[0]
    p_rp, p_col, p_val, p_x, p_y = (_emit.GLOBAL_BASE + k * GIB for k in range(5))
    rp0, rp1, col, val, xg, y = (
        _lane_addrs(kt, pc) for pc in (0xB0, 0xC0, 0x160, 0x170, 0x1C0, 0x280)
    )
    assert len(rp0) == rows
    bra = _lane_exec_counts(kt, _of_pc(kt, 0x240))
    nnz = 0
    for (w, lane), a in rp0.items():
        r = w * WARP_SIZE + lane
        assert a == [p_rp + 4 * r] and rp1[(w, lane)] == [p_rp + 4 * r + 4]
        assert y[(w, lane)] == [p_y + 4 * r]
        j = (np.array(col[(w, lane)]) - p_col) // 4
        assert j.size >= 1 and np.array_equal(j, j[0] + np.arange(j.size))
        assert bra[w, lane] == j.size - 1  # the loop goes on after all but the last
        assert val[(w, lane)] == (p_val + 4 * j).tolist()
        x = np.array(xg[(w, lane)])
        assert np.all((x >= p_x) & (x < p_x + 4 * rows))
        assert np.all(np.diff(x) >= 0)  # columns sorted within the row
        nnz += j.size
    assert app.memcpys == [
        Memcpy(p_rp, 4 * (rows + 1)),
        Memcpy(p_col, 4 * nnz),
        Memcpy(p_val, 4 * nnz),
        Memcpy(p_x, 4 * rows),
    ]
    # y[r] is the accumulated sum: the stored register was last written by the FFMA
    for j in _of_pc(kt, 0x280)[:4]:
        lo = int(kt.warp_ptr[kt.inst_warp[j]])
        r = kt.src[j, 1]
        last = next(m for m in range(j - 1, lo - 1, -1) if r in kt.dst[m])
        assert kt.opcodes[kt.opcode[last]] == "FFMA"


def test_spmv_band_zero_is_the_diagonal() -> None:
    """band = 0 is allowed (>= 0); with band_frac = 1 every column is within 0 of the
    diagonal, so row r gathers only x[r] (x is the 4th array, 3 GiB after row_ptr)."""
    kt = generate("spmv_csr", 3, ctas=1, threads=64, band=0, band_frac=1.0).kernels[0]
    p_x = _emit.GLOBAL_BASE + 3 * GIB
    for (w, lane), a in _lane_addrs(kt, 0x1C0).items():
        assert set(a) == {p_x + 4 * (w * WARP_SIZE + lane)}


def test_bfs_level_follows_the_graph() -> None:
    """nodes = 2*128 - 9 = 247 and the graph is ``random_graph(default_rng(seed), ...)``
    with the defaults (mean degree 4, frontier 0.25, visited 0.5). Arrays are 1 GiB apart
    from 0x7f4000000000 in the order nodes (8 B records), edges, frontier, updating,
    visited, cost. Exactly the frontier nodes v clear frontier[v] (PC 0xB0) and load
    their 8-byte record nodes + 8v; per neighbour j they load edges[start+j] and
    visited[id]; only unvisited ids store cost[id] (0x270) and updating[id] (0x2A0);
    the back-edge BRA (0x2D0) follows all but the last neighbour, and each frontier lane
    leaves the loop at SYNC (0x2E0) once.
    A frontier node is itself visited, so no node of the frontier is stored to."""
    from mdm.traces.workloads.irregular import random_graph

    seed, n = 4, 247
    kt = _kernels("bfs", seed)[0]
    p_node, p_edge, p_front, p_upd, p_vis, p_cost = (_emit.GLOBAL_BASE + k * GIB for k in range(6))
    deg, start_of, edges, frontier, visited = random_graph(
        np.random.default_rng(seed), n, 4.0, 0.25, 0.5
    )
    clear, rec, e_ld, v_ld, c_st, u_st = (
        _lane_addrs(kt, pc) for pc in (0xB0, 0x150, 0x1E0, 0x210, 0x270, 0x2A0)
    )
    assert sorted(w * WARP_SIZE + ln for w, ln in clear) == np.flatnonzero(frontier).tolist()
    recs = _of_pc(kt, 0x150)
    assert np.all(kt.mem_width[recs] == 8)
    bra, sync = (_lane_exec_counts(kt, _of_pc(kt, pc)).ravel()[:n] for pc in (0x2D0, 0x2E0))
    assert np.array_equal(bra, np.where(frontier, deg - 1, 0))
    assert np.array_equal(sync, frontier.astype(np.int64))
    for pc in (0x90, 0xB0, 0x210, 0x2A0):  # the bool* flags are 1 byte
        assert np.all(kt.mem_width[_of_pc(kt, pc)] == 1)
    for (w, lane), a in clear.items():
        v = w * WARP_SIZE + lane
        assert a == [p_front + v] and rec[(w, lane)] == [p_node + 8 * v]
        ids = edges[start_of[v] : start_of[v] + deg[v]]
        assert e_ld[(w, lane)] == (p_edge + 4 * (start_of[v] + np.arange(deg[v]))).tolist()
        assert v_ld[(w, lane)] == (p_vis + ids).tolist()
        new = ids[~visited[ids]]
        assert c_st.get((w, lane), []) == (p_cost + 4 * new).tolist()
        assert u_st.get((w, lane), []) == (p_upd + new).tolist()
    assert set(c_st) <= set(clear) and set(e_ld) == set(clear)
    stored = {(x - p_cost) // 4 for a in c_st.values() for x in a}
    assert stored and not stored & set(np.flatnonzero(frontier).tolist())


def test_parse_builtin_keeps_a_blank_value() -> None:
    """Values are kept as strings when not a number or true/false, so an empty value is
    the string '' (which generate then rejects as not a number), not dropped."""
    from mdm.traces.workloads import parse_builtin

    assert parse_builtin("builtin:stride?gs=") == ("stride", 0, {"gs": ""})
    with pytest.raises(MdmError, match="parameter gs must be a number, got ''"):
        generate("stride", gs="")


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("True", True), ("FALSE", False), ("7", 7), ("0x10", "0x10")]
    + [("2.5", 2.5), ("yes", "yes")],
)
def test_parse_param_value_rules(text: str, value: object) -> None:
    """Docstring: true/false in any case, then int (decimal only: '0x10' stays a
    string), then float, else the string itself."""
    from mdm.traces.workloads import parse_param_value

    got = parse_param_value(text)
    assert got == value and type(got) is type(value)


def test_array_bases_round_the_spacing_up_to_whole_gib() -> None:
    """Arrays start at 0x7f4000000000, 1 GiB apart, or the next GiB multiple holding the
    largest array: one byte over 1 GiB makes the spacing 2 GiB."""
    g = _emit.GLOBAL_BASE
    assert _emit.array_bases([4, 8]) == [g, g + GIB]
    assert _emit.array_bases([GIB, 4]) == [g, g + GIB]
    assert _emit.array_bases([GIB + 1, 4]) == [g, g + 2 * GIB]


def test_transpose_pad_is_zero_or_one() -> None:
    """The docstring's tile rows are 32 (pad = 0) or 33 (pad = 1) words; pad = 2 is
    out of range."""
    with pytest.raises(MdmError, match=r"pad=2 must be in \[0, 1\]"):
        generate("transpose", W=32, H=32, pad=2)


def test_vecadd_copies_both_inputs() -> None:
    """a, b, c are 1 GiB apart from 0x7f4000000000; the inputs a and b are copied, 4n B
    each with n = 3*96*2 - 37 = 539 (the output c is not)."""
    app = generate("vecadd", **SMALL["vecadd"])
    g = _emit.GLOBAL_BASE
    assert app.memcpys == [Memcpy(g, 4 * 539), Memcpy(g + GIB, 4 * 539)]


def test_stride_default_is_the_divergent_gs32_listing() -> None:
    """The reference stride32 folder's summary gives no GS, so the default is GS = 32
    (the kernel named ..._GS32, and 32 lines per warp load)."""
    kt = generate("stride", ctas=1, threads=32, n=1).kernels[0]
    assert kt.name == "strided_square_kernel_GS32(float const*, int)"
    (j,) = np.flatnonzero(kt.iclass == InstrClass.LD_GLOBAL)
    assert _lines(kt.addrs[kt.addr_ptr[j] : kt.addr_ptr[j + 1]]) == 32


def test_bfs_degree_one_all_frontier() -> None:
    """mean_degree = 1: every degree is 1 + Poisson(0) = 1, so start_of[v] = v; with
    frontier_frac = 1 every node is in the frontier (hence visited): each node loads one
    edge, edges + 4v (PC 0x1E0), never takes the back-edge BRA (0x2D0), leaves at SYNC
    (0x2E0) once, and stores nothing (every neighbour is visited)."""
    kt = generate("bfs", 1, ctas=1, threads=64, mean_degree=1.0, frontier_frac=1.0).kernels[0]
    p_edge = _emit.GLOBAL_BASE + GIB
    e_ld = _lane_addrs(kt, 0x1E0)
    assert e_ld == {
        (w, ln): [p_edge + 4 * (w * WARP_SIZE + ln)] for w in (0, 1) for ln in range(32)
    }
    assert _of_pc(kt, 0x2D0).size == 0 and _of_pc(kt, 0x270).size == 0
    assert np.all(_lane_exec_counts(kt, _of_pc(kt, 0x2E0)) == 1)


def test_gather_lanes_without_work_exit_at_the_final_exit() -> None:
    """iters = 1, tail = 10: n = 118 of 128 threads, so lanes 118..127 fail ``ix < n``
    and run the kernel's final EXIT (PC 0x1A0, after the BRA at 0x190) right after the
    ISETP; every EXIT of the kernel is at 0x1A0 and each thread runs one."""
    kt = generate("gather", ctas=1, threads=128, iters=1, tail=10).kernels[0]
    ex = np.flatnonzero(np.array([o == "EXIT" for o in kt.opcodes])[kt.opcode])
    assert set(kt.pc[ex].tolist()) == {0x1A0}
    assert np.all(_lane_exec_counts(kt, ex) == 1)
    (k,) = ex[kt.mask[ex] == np.uint32(0x3FF << 22)]
    assert kt.inst_warp[k] == 3 and kt.pc[k - 1] == 0x60


def test_transpose_every_warp_syncs_between_tile_write_and_read() -> None:
    """__syncthreads() between the 4 STS into the tile and the 4 LDS out of it: each of
    the 8 warps of a block runs one full-mask BAR.SYNC, after its 4th STS and before
    its 1st LDS."""
    kt = generate("transpose", W=32, H=32).kernels[0]
    bar = np.flatnonzero(kt.iclass == InstrClass.BARRIER)
    assert kt.inst_warp[bar].tolist() == list(range(8))
    assert np.all(kt.mask[bar] == 0xFFFFFFFF)
    for w, b in enumerate(bar):
        cls = kt.iclass[kt.warp_ptr[w] : kt.warp_ptr[w + 1]]
        k = b - kt.warp_ptr[w]
        assert np.sum(cls[:k] == C_STS) == 4 and np.sum(cls[:k] == C_LDS) == 0
        assert np.sum(cls[k:] == C_LDS) == 4
