"""Pipeline: instruction mix (golden), prepare, predict_app with hand-made cache statistics."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from handgpu import hand_gpu
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.config.gpu import GPUConfig
from mdm.memory.stats import CacheSimResult, KernelCacheStats, PCStats
from mdm.models.base import MODELS, get_model
from mdm.pipeline import AppPrediction, _lines_per_inst, instruction_mix, predict_app, prepare
from mdm.profile.handmade import kernel_from_warps
from mdm.traces.model import AppTrace
from mdm.traces.model import InstrClass as C

COAL = [0x1000 + 4 * i for i in range(32)]  # one 128 B line
UNCOAL = [0x10000 + 128 * i for i in range(32)]  # 32 lines
HALF = [0x2000 + 8 * i for i in range(32)]  # 256 B: two lines


def warp(base_reg: int = 0) -> list:
    return [
        (C.LD_GLOBAL, [1], [0], COAL),
        (C.LD_GLOBAL, [2], [0], UNCOAL),
        (C.FP32, [3], [1, 2]),
        (C.ST_GLOBAL, [], [3, 0], HALF),
        (C.LD_SHARED, [4], [0], COAL),
        (C.BARRIER, [], []),
        (C.INT, [5], [4]),
    ]


def test_instruction_mix_golden() -> None:
    k = kernel_from_warps([warp(), warp()], warps_per_block=2)
    mix = instruction_mix(k)
    assert mix.total == 7
    assert mix.global_loads == 2 and mix.global_stores == 1
    assert mix.shared == 1 and mix.barriers == 1
    assert mix.compute == 7 - 3 - 1
    assert mix.coalesced_mem == 1 and mix.uncoalesced_mem == 2
    assert mix.requests_per_uncoalesced == (32 + 2) / 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(0, 2**40), max_size=32).map(sorted)
        | st.lists(st.integers(0, 2**40), max_size=32),
        max_size=12,
    ),
    st.integers(0, 9),
)
def test_lines_per_inst_counts_distinct_lines(insts: list[list[int]], shift: int) -> None:
    """Each instruction's distinct ``addr >> shift`` values, sorted lanes or not, equal
    NumPy's ``unique`` (the insertion sort in place of ``np.sort``)."""
    addr_ptr = np.concatenate([[0], np.cumsum([len(a) for a in insts])]).astype(np.int64)
    addrs = np.array([x for a in insts for x in a], np.uint64)
    idx = np.arange(len(insts), dtype=np.int64)[::-1].copy()  # any order of instructions
    got = _lines_per_inst(idx, addr_ptr, addrs, np.uint64(shift), np.empty(32, np.uint64))
    want = [np.unique(np.array(insts[i], np.uint64) >> np.uint64(shift)).size for i in idx]
    assert got.tolist() == want


def gpu() -> GPUConfig:
    return hand_gpu(4)


def hand_cache(n_warps: int) -> CacheSimResult:
    """Per-PC statistics consistent with the warps above (PCs 0, 16, 48)."""
    ex = np.full(3, n_warps)
    acc = np.array([1, 32, 2]) * n_warps
    misses = np.array([1, 32, 2]) * n_warps
    misses[0] = n_warps // 2
    l2m = misses // 2
    per_pc = PCStats(
        pc=np.array([0, 16, 48], np.uint32),
        executions=ex,
        l1_accesses=acc,
        l1_hits=acc - misses,
        l1_pending_hits=np.zeros(3, np.int64),
        l1_misses=misses,
        l2_accesses=misses,
        l2_misses=l2m,
    )
    reads, writes = int(misses[:2].sum()), int(acc[2])
    ks = KernelCacheStats(
        kernel_id=1,
        name="handmade",
        l1_read_accesses=int(acc[:2].sum()),
        l1_read_hits=int(acc[:2].sum() - misses[:2].sum()),
        l1_read_misses=reads,
        l1_write_accesses=writes,
        l2_accesses=reads + writes,
        l2_misses=int(l2m.sum()),
        l2_read_accesses=reads,
        l2_read_misses=int(l2m[:2].sum()),
        dram_read_bytes=int(l2m[:2].sum()) * 128,
        dram_write_bytes=int(l2m[2]) * 128,
        per_pc=per_pc,
    )
    return CacheSimResult(config_name="hand", kernels=[ks])


def _app(n_blocks: int = 64) -> AppTrace:
    k = kernel_from_warps([warp()] * (4 * n_blocks), warps_per_block=4)
    return AppTrace(commands=[k, k], name="hand-app")


def test_prepare_is_architecture_independent() -> None:
    app = _app(8)
    p = prepare(app)
    assert [pk.index for pk in p.kernels] == [0, 1]
    assert p.kernels[0].rep_warp == 0  # identical warps
    assert p.kernels[0].total_warp_insts == 7 * 32
    assert p.kernels[0].total_thread_insts == 7 * 32 * 32


def test_prepare_does_not_copy_the_trace_arrays() -> None:
    """``prepare_kernel`` reads the kernel's address and instruction arrays in place: its
    peak of NumPy allocations stays below the addresses' size (copying them, as it once
    did, made preparation the peak of a coalesced kernel's prediction)."""
    import tracemalloc

    from mdm.pipeline import prepare_kernel
    from mdm.traces.workloads import generate

    k = generate("vecadd", ctas=512).kernels[0]
    prepare_kernel(k)  # compile and warm caches outside the measurement
    tracemalloc.start()
    try:
        prepare_kernel(k)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < k.addrs.nbytes / 2, (peak, k.addrs.nbytes)


def test_predict_app_every_model() -> None:
    pytest.importorskip("mdm.profile.occupancy", reason="occupancy not landed")
    from mdm.models import _load_builtin  # noqa: F401

    app = _app()
    n_warps = app.kernels[0].n_warps
    cache = hand_cache(n_warps)
    cache = CacheSimResult("hand", [cache.kernels[0], cache.kernels[0]])
    models = sorted(MODELS)
    pred = predict_app(prepare(app), gpu(), models, cache=cache)
    assert isinstance(pred, AppPrediction)
    for m in models:
        t = pred.total(m)
        assert math.isfinite(t.cycles) and t.cycles > 0
        assert t.cycles == pytest.approx(sum(p.cycles for p in pred.kernels[m]))
        assert t.ipc == pytest.approx(2 * n_warps * 7 / t.cycles)
        assert sum(t.cpi_stack.values()) == pytest.approx(t.cycles / t.warp_insts)
    # identical kernels: identical predictions; the profile sees the per-PC misses
    inp = pred.inputs[0]
    assert inp.profile.read_misses.sum() == pytest.approx(0.5 + 32)
    assert inp.profile.write_reqs.sum() == pytest.approx(2)
    rows = pred.to_rows()
    assert len(rows) == 3 * len(models)
    assert {r["kernel"] for r in rows} == {"handmade", "total"}
    assert all("cpi_base" in r for r in rows if r["model"] == "mdm")
    d = json.loads(pred.to_json())
    for m in models:
        assert set(d["models"][m]) >= {"cycles", "ipc", "cpi_stack", "kernels"}
        assert len(d["models"][m]["kernels"]) == 2
        # eq. (2)'s MD share: only the interval models classify intervals
        md = d["models"][m]["md_fraction"]
        if m in ("mwp-cwp", "roofline"):
            assert md is None and all(k["md_fraction"] is None for k in d["models"][m]["kernels"])
            assert all(math.isnan(r["md_fraction"]) for r in rows if r["model"] == m)
        else:  # two identical kernels: the instruction-weighted mean is the kernels' share
            assert md == pytest.approx(pred.kernels[m][0].md_fraction)
    # predict_app on the bare AppTrace gives the same as on the prepared one
    again = predict_app(app, gpu(), ["mdm"], cache=cache)
    assert again.cycles("mdm") == pytest.approx(pred.cycles("mdm"))
    assert get_model("mdm").predict_kernel(inp).cycles == pytest.approx(
        pred.kernels["mdm"][0].cycles
    )


def test_cache_with_wrong_kernel_count() -> None:
    pytest.importorskip("mdm.profile.occupancy", reason="occupancy not landed")
    app = _app(2)
    with pytest.raises(ValueError, match="2 kernels|1 kernels"):
        predict_app(app, gpu(), ["mdm"], cache=hand_cache(8))


def test_reference_trace_end_to_end(reference_dir) -> None:  # noqa: ANN001
    """Real trace + imported config + cache simulation: totals match results.csv."""
    import warnings

    import pandas as pd

    from mdm.config.accelsim import import_accelsim
    from mdm.models import _load_builtin  # noqa: F401
    from mdm.traces import open_trace

    res = pd.read_csv(reference_dir / "results.csv", keep_default_na=False)
    row = res[(res["workload"] == "stencil2d") & (res["arch"] == "mdm_pascal")]
    row = row[row["sweep_value"] == ""].iloc[0]
    app = open_trace(reference_dir / "traces" / row["isa"] / "stencil2d")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        g = import_accelsim(reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config", "")
    p = prepare(app)
    assert sum(pk.total_warp_insts for pk in p.kernels) == int(row["warp_insts"])
    assert sum(pk.total_thread_insts for pk in p.kernels) == int(row["gpu_tot_sim_insn"])
    pred = predict_app(p, g, sorted(MODELS))
    assert len(pred.kernels["mdm"]) == int(row["kernels"])
    for m in MODELS:
        t = pred.total(m)
        assert math.isfinite(t.cycles) and t.cycles > 0
        assert t.warp_insts == int(row["warp_insts"])
    # the representative warp's profile covers one warp of the kernel
    inp = pred.inputs[0]
    k = p.kernels[0].kernel
    assert inp.profile.total_insts == k.warp_lengths[p.kernels[0].rep_warp]


def test_occupancy_is_actual_for_small_grids() -> None:
    """Fewer blocks than slots: W counts resident warps, not the resource limit."""
    from mdm.pipeline import kernel_input

    g = gpu()  # 4 SMs, 64 warps: 16 blocks of 4 warps fit per SM
    for n_blocks, bps, sms in [(2, 1, 2), (6, 2, 4), (64, 16, 4), (1000, 16, 4)]:
        app = _app(n_blocks)
        pk = prepare(AppTrace([app.kernels[0]])).kernels[0]
        inp = kernel_input(pk, g, hand_cache(pk.kernel.n_warps).kernels[0])
        assert (inp.blocks_per_sm, inp.active_sms, inp.warps_per_sm) == (bps, sms, 4 * bps)


def test_configurations_with_equal_latencies_share_the_interval_profile() -> None:
    """predict_app_configs profiles a kernel once per distinct latency table: points that
    differ only in bandwidth share it (read-only), a latency change gets its own, and every
    prediction equals predict_app on that configuration alone."""
    from mdm.pipeline import predict_app_configs

    app = _app(8)
    cache = hand_cache(app.kernels[0].n_warps)
    cache = CacheSimResult("hand", [cache.kernels[0], cache.kernels[0]])
    base = gpu()
    gpus = [
        base,
        base.with_updates({"dram.bandwidth_gbps": 25.0, "noc.bandwidth_gbps": 400.0}),
        base.with_updates({"l2.hit_latency_ns": 300.0}),
    ]
    p = prepare(app)
    preds = predict_app_configs(p, gpus, ["mdm", "gpumech"], cache=cache, sim_gpu=base)
    prof = [pr.inputs[0].profile for pr in preds]
    assert prof[0] is prof[1] and prof[2] is not prof[0]
    assert not prof[0].stall.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        prof[0].stall[0] = 0.0
    assert prof[2].stall.sum() > prof[0].stall.sum()  # the slower L2 hit
    for g, pr in zip(gpus, preds, strict=True):
        alone = predict_app(p, g, ["mdm", "gpumech"], cache=cache)
        for m in ("mdm", "gpumech"):
            assert pr.cycles(m) == alone.cycles(m)
    assert preds[1].cycles("mdm") != preds[0].cycles("mdm")  # the bandwidths still count


def test_shared_bank_conflicts_slow_the_unpadded_transpose() -> None:
    """The transpose's column reads of an unpadded tile are 32-way bank conflicts: its
    representative warp holds the LD/ST unit 4 x 31 cycles longer than with the padded
    tile, and every interval model predicts it slower (the roofline, which has no LD/ST
    term, the same)."""
    from mdm.config import load_gpu
    from mdm.traces.workloads import generate

    gpu = load_gpu("mdm_pascal")
    models = ["mdm", "mdm-pipelined", "gpumech", "roofline"]
    pred = {
        pad: predict_app(generate("transpose", W=256, H=256, pad=pad), gpu, models)
        for pad in (0, 1)
    }
    ldst = {pad: float(p.inputs[0].profile.ldst_cycles.sum()) for pad, p in pred.items()}
    assert ldst[0] - ldst[1] == pytest.approx(4 * 31)
    for m in ("mdm", "mdm-pipelined", "gpumech"):
        assert pred[0].cycles(m) > 1.5 * pred[1].cycles(m), m
        # the CPI stack names the LD/ST unit as where the time went
        s0, s1 = pred[0].total(m).cpi_stack, pred[1].total(m).cpi_stack
        assert s0["ldst"] == max(s0.values()) and s0["ldst"] > 10 * s1["ldst"], m
        assert s0["base"] == pytest.approx(s1["base"]), m
    assert pred[0].cycles("roofline") == pytest.approx(pred[1].cycles("roofline"))


def test_merge_limit_on_the_reference_kmeans(reference_dir) -> None:  # noqa: ANN001
    """kmeans reads each point's 16 features with 16 loads, so on mdm_pascal (GTO, 128 B
    entries, 8 merges) a warp reads its 16 lines 16 times an interval: MDM-Pipelined's
    merge-limit step applies there and nowhere in gather, and its kmeans predictions at
    the baseline and the L1-MSHR sweep points move closer to Accel-Sim's cycles."""
    import dataclasses
    import warnings

    import pandas as pd

    from mdm.config.accelsim import import_accelsim
    from mdm.memory import simulate_app
    from mdm.models.base import get_model
    from mdm.pipeline import kernel_input
    from mdm.traces import open_trace

    res = pd.read_csv(reference_dir / "results.csv", keep_default_na=False)
    cfg = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    model = get_model("mdm-pipelined")
    moved = 0
    for wl in ("kmeans", "gather"):
        p = prepare(open_trace(reference_dir / "traces" / "sm61" / wl))
        runs = res[(res["workload"] == wl) & (res["arch"] == "mdm_pascal")]
        runs = runs[runs["sweep_param"].isin(["baseline", "l1_mshr"])]
        assert len(runs) == 4
        for row in runs.itertuples():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                g = import_accelsim(cfg, row.extra_options)
            inp = kernel_input(p.kernels[0], g, simulate_app(p.app, g).kernels[0])
            prof = inp.profile
            off = dataclasses.replace(inp, profile=dataclasses.replace(prof, entry_reads=None))
            c_on = model.predict_kernel(inp).cycles
            c_off = model.predict_kernel(off).cycles
            if wl == "gather":
                assert (prof.entry_reads <= g.l1.mshr_max_merge).all() and c_on == c_off
                continue
            assert (prof.entry_reads > g.l1.mshr_max_merge).any()
            sim = float(row.gpu_tot_sim_cycle)
            assert abs(c_on - sim) <= abs(c_off - sim), row.run_id
            moved += c_on != c_off
    assert moved >= 2  # the baseline's 128 and the sweep's 256 MSHRs (32 and 64: equal)


def test_kernel_launch_overhead_adds_the_same_cycles_to_every_model() -> None:
    """``kernel_launch_ns`` adds launch_ns x clock cycles to each kernel of every model,
    as the CPI-stack component ``launch``; 0 leaves every prediction as it was."""
    from mdm.models import _load_builtin  # noqa: F401

    raw = _app()  # two kernels
    one = hand_cache(raw.kernels[0].n_warps).kernels[0]
    cache = CacheSimResult("hand", [one, one])
    app = prepare(raw)
    models = sorted(MODELS)
    base = predict_app(app, gpu(), models, cache=cache)
    launched = gpu().model_copy(update={"kernel_launch_ns": 1500.0})
    assert launched.kernel_launch_cycles == pytest.approx(1500.0 * gpu().core_clock_ghz)
    with_l = predict_app(app, launched, models, cache=cache)
    add = launched.kernel_launch_cycles
    for m in models:
        assert "launch" not in base.total(m).cpi_stack
        for p0, p1 in zip(base.kernels[m], with_l.kernels[m], strict=True):
            assert p1.cycles == pytest.approx(p0.cycles + add)
            assert p1.cpi_stack["launch"] == pytest.approx(add / p1.warp_insts)
            assert sum(p1.cpi_stack.values()) == pytest.approx(p1.cycles / p1.warp_insts)
            rest = {k: v for k, v in p1.cpi_stack.items() if k != "launch"}
            assert rest == pytest.approx(p0.cpi_stack)
        assert with_l.cycles(m) == pytest.approx(base.cycles(m) + 2 * add)


def test_api_arguments_of_the_wrong_kind_are_named() -> None:
    """What a Python user gets wrong first: a model name for the list (it iterated the
    string: "unknown model 'm'"), a preset's name for its configuration, a path for a
    trace; each is a TypeError naming the argument and the call that makes the object."""
    from mdm.config import load_gpu

    app = AppTrace(commands=[kernel_from_warps([[(C.INT, [1], [])]])])
    gpu = load_gpu("mdm_pascal")
    with pytest.raises(TypeError, match="models: expected a list of model names, got the st"):
        predict_app(app, gpu, "mdm")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"gpu: expected a GPUConfig \(mdm.config.load_gpu\("):
        predict_app(app, "mdm_pascal", ["mdm"])  # type: ignore[arg-type]
    for bad in ("../some/trace", None):
        with pytest.raises(TypeError, match=r"app: expected a trace \(mdm.traces.open_trace"):
            predict_app(bad, gpu, ["mdm"])  # type: ignore[arg-type]
    assert predict_app(app, gpu, ["mdm"]).models == ["mdm"]


def test_with_updates_merges_a_table_given_as_a_mapping() -> None:
    """``{"l1": {"mshr_entries": 8}}`` changes that field and keeps the L1's others, as
    ``{"l1.mshr_entries": 8}`` does (it replaced the whole table: 'field required')."""
    from mdm.config import load_gpu

    gpu = load_gpu("mdm_pascal")
    nested = gpu.with_updates({"l1": {"mshr_entries": 8}, "n_sm": 14})
    assert nested == gpu.with_updates({"l1.mshr_entries": 8, "n_sm": 14})
    assert nested.l1.ways == gpu.l1.ways and nested.l1.mshr_entries == 8


def test_a_kernel_of_idle_warps_ends_with_its_busy_ones() -> None:
    """``vecadd`` on 4 blocks adds 72 elements with 32 warps: warps 0-2 load, add and
    store, the 29 others exit at once and form the representative's cluster. No model
    predicts the kernel faster than warp 0 alone, which waits for two loads that miss
    the L1 (before the longest-warp bound, every interval model predicted 19 cycles,
    less than one L2 hit)."""
    from mdm.config import load_gpu
    from mdm.models.base import model_names
    from mdm.profile.interval import gpu_latencies, warp_cycles
    from mdm.traces.workloads import generate

    g = load_gpu("mdm_pascal")
    app = generate("vecadd", ctas=4)
    pk = prepare(app).kernels[0]
    k = pk.kernel
    sizes = np.diff(k.warp_ptr)
    assert pk.long_warp < 3 <= pk.rep_warp and sizes[pk.rep_warp] < sizes[pk.long_warp]
    pred = predict_app(app, g, model_names())
    inp = pred.inputs[0]
    assert inp.longest_warp_cycles > g.l1.hit_latency_cycles + g.l2_hit_latency_cycles
    lat = gpu_latencies(g, inp.cache.per_pc)
    alone = [warp_cycles(k, w, lat, g.sm.issue_width) for w in range(3)]
    assert inp.longest_warp_cycles == pytest.approx(max(alone))
    for m in model_names():
        assert pred.cycles(m) >= inp.longest_warp_cycles * (1 - 1e-12), m
    assert pred.cycles("mdm") == pytest.approx(inp.longest_warp_cycles)
