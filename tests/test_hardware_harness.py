"""The hardware-validation harness (benchmarks/hardware): its inputs are the traces'
inputs, and its committed H100 measurements match the traces' kernels."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mdm.explore.ncu import ncu_to_measured, read_ncu
from mdm.traces.workloads import load_trace

HW = Path(__file__).resolve().parents[1] / "benchmarks" / "hardware"


def _load(name: str):
    """A script of benchmarks/hardware as a module (registered under its name)."""
    spec = importlib.util.spec_from_file_location(name, HW / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


hv = _load("h100_validation")
io_ = _load("issue_order")
placement = _load("placement")


def _loads(kernel, pc: int) -> np.ndarray:
    """All lane addresses of the instructions at ``pc``, in trace order."""
    at = np.flatnonzero(kernel.pc == pc)
    return np.concatenate([kernel.addrs[kernel.addr_ptr[i] : kernel.addr_ptr[i + 1]] for i in at])


def test_gather_inputs_are_the_trace_addresses(tmp_path, monkeypatch):
    """The index file the GPU reads gives the x-load addresses the trace holds."""
    monkeypatch.setattr(hv, "CASES", {"g": ("gather", {"ctas": 3, "iters": 2, "xsize": 999})})
    hv.prepare(tmp_path)
    app = load_trace(hv.spec("g"))
    (kernel,) = app.kernels
    px = app.memcpys[0].addr  # Memcpy(x) first, as the generator lists them
    idx = np.fromfile(tmp_path / "g" / "idx.i32", dtype=np.int32)
    x_loads = _loads(kernel, 0x130)
    assert np.array_equal(np.sort(x_loads - px), np.sort(4 * idx.astype(np.uint64)))
    line = (tmp_path / "cases.txt").read_text().split()
    assert line[:2] == ["g", "gather"] and "xsize=999" in line and "data=g" in line


def test_spmv_and_bfs_inputs_are_consistent(tmp_path, monkeypatch):
    """CSR offsets and graph records the GPU reads give the trace's column loads."""
    monkeypatch.setattr(hv, "CASES", {"s": ("spmv_csr", {"ctas": 2}), "b": ("bfs", {"ctas": 2})})
    hv.prepare(tmp_path)
    rp = np.fromfile(tmp_path / "s" / "row_ptr.i32", dtype=np.int32)
    col = np.fromfile(tmp_path / "s" / "col.i32", dtype=np.int32)
    assert rp[0] == 0 and rp[-1] == col.size and np.all(np.diff(rp) >= 1)
    app = load_trace(hv.spec("s"))
    p_col = app.memcpys[1].addr
    (kernel,) = app.kernels
    col_loads = np.concatenate(
        [_loads(kernel, pc) for pc in np.unique(kernel.pc) if pc]  # every load's lanes
    )
    in_col = col_loads[(col_loads >= p_col) & (col_loads < p_col + 4 * col.size)]
    assert np.array_equal(np.sort(in_col), p_col + 4 * np.arange(col.size, dtype=np.uint64))
    p_x = app.memcpys[3].addr  # the gathers x[col[j]]
    rows = rp.size - 1
    in_x = col_loads[(col_loads >= p_x) & (col_loads < p_x + 4 * rows)]
    assert np.array_equal(np.sort(in_x), np.sort(p_x + 4 * col.astype(np.uint64)))

    nodes = np.fromfile(tmp_path / "b" / "nodes.i32", dtype=np.int32).reshape(-1, 2)
    edges = np.fromfile(tmp_path / "b" / "edges.i32", dtype=np.int32)
    mask = np.fromfile(tmp_path / "b" / "mask.u8", dtype=np.uint8).astype(bool)
    assert nodes[0, 0] == 0 and np.array_equal(nodes[1:, 0], np.cumsum(nodes[:-1, 1]))
    assert nodes[-1].sum() == edges.size
    app = load_trace(hv.spec("b"))
    (kernel,) = app.kernels
    p_vis = app.memcpys[3].addr  # node, edge, frontier, visited, cost
    loads = np.concatenate([_loads(kernel, pc) for pc in np.unique(kernel.pc) if pc])
    in_vis = loads[(loads >= p_vis) & (loads < p_vis + mask.size)]
    want = np.concatenate([edges[s : s + d] for s, d in nodes[mask]]).astype(np.uint64)
    assert np.array_equal(np.sort(in_vis), np.sort(p_vis + want))


def test_split_drops_flush_launches_and_keeps_metric_columns(tmp_path):
    f = tmp_path / "time.csv"
    f.write_text(
        "### a\n==PROF== Connected\n"
        '"ID","Kernel Name","Context","sm__cycles_elapsed.avg"\n'
        '"","","","cycle"\n'
        '"0","l2_flush_kernel","1","5"\n'
        '"0","smid_kernel(unsigned int *)","1","3"\n'
        '"1","vecAdd(const float *, const float *, float *, int)","1","1,234.5"\n'
        "### b\n"
        '"ID","Kernel Name","sm__cycles_elapsed.avg"\n'
        '"","","cycle"\n'
        '"1","k","7"\n'
    )
    parts = hv.split(f)
    assert list(parts) == ["a", "b"]
    assert len(parts["a"]) == 3 and "Context" not in parts["a"][0]
    assert not any("l2_flush" in line or "smid" in line for line in parts["a"])
    g = tmp_path / "a.csv"
    g.write_text("\n".join(parts["a"]) + "\n")
    (lu,) = read_ncu(g)
    assert lu.metrics["sm__cycles_elapsed.avg"][1] == "1,234.5"


@pytest.mark.parametrize("card", ["h100", "h200"])
@pytest.mark.parametrize("case", sorted(hv.CASES))
@pytest.mark.parametrize("tag", ["", "boost"])
def test_committed_measurements_match_the_traces(card, case, tag):
    """Each card's ncu launches of each case (at base clock, and at boost as the DVFS
    point) are the trace's kernels (count and names), and its measured.csv holds their
    cycles and clocks, under the card's preset."""
    raw = HW / card / "ncu" / f"{case}.{tag + '_' if tag else ''}time.csv"
    if not raw.exists():
        pytest.skip(f"no committed {tag or 'base'} measurement for {case} on {card}")
    rows = ncu_to_measured(raw, hv.spec(case), card)
    table = pd.read_csv(HW / card / "measured.csv", keep_default_na=False)
    param, _ = hv.SWEEP_TAGS.get(tag, ("baseline", ""))
    mine = table[table["run_id"].str.startswith(f"{case}__") & (table["sweep_param"] == param)]
    mine = mine.reset_index(drop=True)
    assert len(mine) == len(rows) == load_trace(hv.spec(case)).n_kernels
    assert np.allclose(mine["cycles"], rows["cycles"])
    assert np.allclose(mine["sm_clock_mhz"], rows["sm_clock_mhz"])
    assert (mine["trace"] == hv.spec(case)).all() and (mine["gpu"] == card).all()


def _ncu_with_carveout(path: Path, *sizes: str) -> Path:
    rows = "".join(f'"{i}","k","{v}"\n' for i, v in enumerate(sizes))
    path.write_text('"ID","Kernel Name","launch__shared_mem_config_size"\n"","","byte"\n' + rows)
    return path


def test_carveout_of_a_run_is_the_drivers(tmp_path):
    """The carve-out the driver chose becomes the preset's options from that size up and
    the SM's shared memory (8 KB caps stride's 3 KB blocks at two per SM, as on the
    GPU); a size the preset does not offer is an error naming the file."""
    from mdm.config import load_gpu
    from mdm.profile.occupancy import occupancy

    h100 = load_gpu("h100")
    up = hv._carveout(_ncu_with_carveout(tmp_path / "a.csv", "8,192"), h100)
    assert up["l1.shared_carveouts_bytes"] == list(h100.l1.shared_carveouts_bytes[1:])
    assert up["sm.shared_mem_bytes"] == 8192
    assert occupancy(h100.with_updates(up), 256, 16, 3072, 4224).blocks_per_sm == 2
    assert hv._carveout(_ncu_with_carveout(tmp_path / "b.csv", "8,192", "32,768"), h100) == {}
    with pytest.raises(SystemExit, match="c.csv"):
        hv._carveout(_ncu_with_carveout(tmp_path / "c.csv", "12,000"), h100)


@pytest.mark.parametrize(
    ("card", "experiments"),
    [
        ("h100", {"sm8", "sm96", "carve0", "carve100", "fetch32", "s2"}),
        ("h200", {"carve28", "carve86", "fetch32"}),
    ],
)
def test_committed_axes_table_matches_its_ncu_runs(card, experiments):
    """Every row of <card>/axes.csv: the measured cycles are the sum over the run's ncu
    launches (one per trace kernel) and the ratio is to the baseline run's; its models
    are those ``axes`` predicts by default, so the documented command rewrites it whole."""
    from mdm.explore.ncu import measurement

    table = pd.read_csv(HW / card / "axes.csv")
    assert experiments <= set(table["experiment"])
    models = [c.removesuffix("_ratio") for c in table.columns if c.endswith("_ratio")]
    assert models == ["hw", *hv.AXES_MODELS]

    def cycles(path: Path) -> float:
        return sum(measurement(path, lu)["cycles"] for lu in read_ncu(path))

    n_kernels = {c: load_trace(hv.spec(c)).n_kernels for c in set(table["case"])}
    for r in table.itertuples():
        run = HW / card / "ncu" / f"{r.case}.{r.experiment}_time.csv"
        assert len(read_ncu(run)) == n_kernels[r.case]
        assert np.isclose(r.hw_cycles, cycles(run), rtol=1e-5)
        base = cycles(HW / card / "ncu" / f"{r.case}.time.csv")
        assert np.isclose(r.hw_ratio, r.hw_cycles / base, rtol=1e-5)


def _probe_rows(mode: str, finishes: list[int], sms: int = 2) -> list[list[object]]:
    """Probe lines of one run: on each SM, scheduler 0's warps (warp ids 0, 4, 8, ...)
    start together at t0 = 10 and reach t1 at ``finishes``."""
    rows = []
    for sm in range(sms):
        for k, t1 in enumerate(finishes):
            rows.append(["issue1", mode, 128, 2, len(rows), sm, 4 * k, 10, 10 + t1, 20 + t1])
    return rows


def test_issue_order_tells_greedy_from_round_robin():
    """Four warps of 64 instructions on one scheduler: finishing a warp's issue time
    apart (greedy) gives index 1 and windows of 64-256 cycles; finishing together
    (round robin) gives index ~0 and windows of ~256; each window overlaps the 3 others
    (all start at once)."""
    raw = pd.DataFrame(
        _probe_rows("gto", [64, 128, 192, 256]) + _probe_rows("lrr", [253, 254, 255, 256]),
        columns=io_.COLUMNS,
    )
    s = io_.summarise(raw).set_index("mode")
    assert s.loc["gto", "greedy_index"] == pytest.approx(1.0)
    assert s.loc["lrr", "greedy_index"] == pytest.approx(3 / 256 * 4 / 3)
    assert s.loc["gto", "window_cycles"] == pytest.approx(160.0)
    assert s.loc["lrr", "window_cycles"] == pytest.approx(254.5)
    assert (s["overlapping_warps"] == 3).all() and (s["warps_per_scheduler"] == 4).all()
    assert (s["span_cycles"] == 256).all()


def test_h100_preset_policy_is_the_probes():
    """The h100 preset's greedy scheduler is what the committed issue-order probe shows:
    with the warps of a block ready at once (a barrier before t0), the warps of a
    scheduler finish one after another (greedy index well above round robin's ~0)."""
    from mdm.config import load_gpu

    s = pd.read_csv(HW / "h200" / "issue_order.csv")
    alu = s[s["mode"] == "alu_sync"]
    assert len(alu) >= 2 and (alu["greedy_index"] > 0.6).all()
    assert load_gpu("h100").sm.scheduler_policy == load_gpu("h200").sm.scheduler_policy == "gto"


def test_h100_l2_merges_the_tile_reads_that_gemm_tiled_shares():
    """The h100 preset's L2 merge limit (32, a lower bound): gemm_tiled, whose SMs read the
    same tile lines at once, scales nearly linearly with the SM count on the H100 (the
    committed axis), so its L2 does not stall on merge slots; with Accel-Sim's 4 (the
    value v100 copies) the simulated L2 blocks its banks on those reads."""
    from mdm.config import load_gpu
    from mdm.memory import simulate_app
    from mdm.traces.workloads import generate

    axes = pd.read_csv(HW / "h100" / "axes.csv")
    sm8 = axes[(axes["case"] == "gemm_tiled") & (axes["experiment"] == "sm8")]
    assert sm8["hw_ratio"].iloc[0] > 11  # 8 of 132 SMs: x12.0 measured
    gpu = load_gpu("h100")
    app = generate("gemm_tiled", M=256, N=256, K=64)
    assert gpu.l2.mshr_max_merge >= 32
    assert simulate_app(app, gpu).kernels[0].l2_blocked_cycles == 0
    four = gpu.with_updates({"l2.mshr_max_merge": 4})
    assert simulate_app(app, four).kernels[0].l2_blocked_cycles > 0


@pytest.mark.parametrize("card", ["h100", "h200"])
def test_committed_memory_table_is_the_current_simulation(card, tmp_path):
    """``memory`` rewrites <card>/memory.csv from the committed ncu profile and the
    current simulator and preset: kmeans' rows (its L1 hits depend on the issue order)
    equal the committed ones, so a change to either must recompute the table."""
    (tmp_path / "ncu").mkdir()
    src = HW / card / "ncu" / "kmeans.mem.csv"
    (tmp_path / "ncu" / "kmeans.mem.csv").write_text(src.read_text())
    new = hv.memory(tmp_path, card)
    old = pd.read_csv(HW / card / "memory.csv")
    old = old[old["case"] == "kmeans"].reset_index(drop=True)
    pd.testing.assert_frame_equal(new, old, check_dtype=False)


def test_placement_summary_tells_round_robin_from_sm_by_sm():
    """12 blocks on 4 SMs, 3 per SM, all in the first wave, plus 4 later blocks (started
    after the first ended). Round robin (block r on SM r mod 4) puts every pair 4 apart on
    one SM and no neighbours; SM by SM (blocks 0-2 on SM 0, ...) puts 2 of 3 neighbours
    together and no pair 4 apart. SM numbers are renamed (x 7 + 3) without effect."""
    rows = []
    for case, sm_of in (("rr", lambda r: r % 4), ("seq", lambda r: r // 3)):
        for r in range(12):
            rows.append(["placement", case, r, 7 * sm_of(r) + 3, r, 1000 + r])
        for r in range(12, 16):
            rows.append(["placement", case, r, 3, 2000, 3000])
    s = placement.summarise(pd.DataFrame(rows, columns=placement.COLUMNS)).set_index("case")
    assert (s["blocks"] == 16).all() and (s["first_wave"] == 12).all()
    assert (s["sms"] == 4).all() and (s["first_wave_blocks_per_sm"] == 3).all()
    assert s.loc["rr", "same_sm_next"] == 0 and s.loc["rr", "same_sm_at_n_sm"] == 1
    assert s.loc["seq", "same_sm_next"] == pytest.approx(8 / 11)
    assert s.loc["seq", "same_sm_at_n_sm"] == 0
    assert s.loc["rr", "top_distances"].split()[0] == "4:1.00"
    assert s.loc["seq", "top_distances"].split()[0] == "1:0.73"


def test_issue_rate_of_the_throughput_probe():
    """Two SMs, 8 warps of 2 x 64 FFMAs each: 1,024 warp instructions in 512 and 1,536
    cycles are 2 and 2/3 per cycle per SM, on average 4/3, i.e. 1/3 per scheduler."""
    raw = pd.DataFrame(
        [["throughput", "ffma", 8, 2, 0, 512], ["throughput", "ffma", 8, 2, 1, 1536]],
        columns=io_.THROUGHPUT_COLUMNS,
    )
    r = io_.issue_rate(raw).iloc[0]
    assert r["cycles"] == 1024
    assert r["insts_per_cycle_sm"] == pytest.approx(4 / 3)
    assert r["insts_per_cycle_scheduler"] == pytest.approx(1 / 3)


def test_adaptive_l1_ways_round_to_nearest_and_need_one_way():
    """carveout step 4 on sm7_qv100's unified 128 KB (4 sets x 128 B: 256 ways) with
    carve-out options 0, 8 KB, 100000 B and 130900 B: 9000 B of shared memory take the
    100000 B option, 256 x (131072 - 100000) / 131072 = 60.69 -> 61 ways (nearest, not
    60); 110000 B take 130900 B, 256 x 172 / 131072 = 0.34 -> 0 ways: an error."""
    from mdm.config import load_gpu
    from mdm.errors import ConfigError
    from mdm.memory.carveout import adaptive_l1_ways

    g = load_gpu("sm7_qv100").with_updates({"l1.shared_carveouts_bytes": [0, 8192, 100000, 130900]})
    assert adaptive_l1_ways(9000, g) == 61
    with pytest.raises(ConfigError, match="leaves no L1 way"):
        adaptive_l1_ways(110000, g)
