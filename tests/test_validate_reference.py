"""mdm validate end to end on a few reference runs with the real pipeline."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import mdm.memory
import mdm.traces
from mdm.cli.main import app
from mdm.explore.validate import load_results, validate

RUNS = [
    "stride32__mdm_pascal__baseline",
    "stride32__mdm_pascal__dram_bw_x_0.5",
    "stride32__mdm_pascal__l1_mshr_32",
    "stride1__mdm_pascal__baseline",
]


def test_validate_real_pipeline_shares_cache_sims(
    reference_dir: Path, cache_sim_calls: list[tuple]
) -> None:
    from mdm.config.accelsim import import_accelsim

    res = validate(reference_dir, ["mdm", "gpumech"], RUNS, workers=1)
    table = load_results(reference_dir / "results.csv").set_index("run_id").loc[RUNS]
    keys = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rid, rec in table.iterrows():
            gpu = import_accelsim(
                reference_dir / "configs" / rec["arch"] / "gpgpusim.config", rec["extra_options"]
            )
            keys.add((rid.split("__")[0], mdm.memory.cache_key(gpu)))
    assert len(cache_sim_calls) == len(keys)  # one cache simulation per workload and cache key
    assert len(res.runs) == len(RUNS) * 2
    assert res.runs["error"].map(math.isfinite).all()
    for m in ("mdm", "gpumech"):
        s = res.summary["models"][m]
        assert math.isfinite(s["mean_abs_error_md"]) and math.isfinite(s["mean_abs_error_nmd"])
    # the model sees the same instructions as the simulator
    assert (res.runs["warp_insts_model"] == res.runs["warp_insts"]).all()
    # every row carries its run's cache-simulation miss rates; the summary compares them
    # with the reference's (as benchmarks/compare_cachesim_reference.py does)
    diffs = {"l1": [], "l2": []}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rid, rec in table.iterrows():
            gpu = import_accelsim(
                reference_dir / "configs" / rec["arch"] / "gpgpusim.config", rec["extra_options"]
            )
            trace = mdm.traces.open_trace(reference_dir / "traces" / rec["isa"] / rec["workload"])
            tot = mdm.memory.simulate_app(trace, gpu).total()
            rows = res.runs[res.runs["run_id"] == rid]
            assert (rows["cachesim_l1_miss_rate"] == tot.l1_miss_rate).all()
            assert (rows["cachesim_l2_miss_rate"] == tot.l2_miss_rate).all()
            diffs["l1"].append(abs(tot.l1_miss_rate - rec["l1d_rd_miss_rate"]))
            diffs["l2"].append(abs(tot.l2_miss_rate - rec["l2_miss_rate"]))
    cache = res.summary["cache_simulation"]
    assert cache["runs"] == len(RUNS)
    assert cache["mean_abs_l1_miss_rate_difference"] == pytest.approx(np.mean(diffs["l1"]))
    assert cache["max_abs_l2_miss_rate_difference"] == pytest.approx(max(diffs["l2"]))


def test_validate_cli_json_and_report(reference_dir: Path, tmp_path: Path) -> None:
    args = [
        "validate",
        "--reference",
        str(reference_dir),
        "--json",
        "--models",
        "mdm",
        "--out",
        str(tmp_path),
        "--workers",
        "1",
    ]
    for r in RUNS[:1] + RUNS[3:]:
        args += ["--run", r]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert set(out["models"]["mdm"]) >= {
        "mean_abs_error",
        "mean_abs_error_md",
        "mean_abs_error_nmd",
    }
    assert (tmp_path / "report.html").exists()
    assert (tmp_path / "figures" / "fig5_mdm_pascal.svg").exists()
    assert out["cache_simulation"]["runs"] == 2
    assert "Cache simulation against the reference" in (tmp_path / "report.html").read_text()


def test_validate_streams_a_large_trace_with_the_same_errors(
    reference_dir: Path, monkeypatch, cache_sim_calls: list[tuple]
) -> None:
    """Above STREAM_TRACE_BYTES a workload's runs are grouped by cache key, one lazy pass
    each (no whole trace held): the same per-run errors as the cached path."""
    import pandas as pd

    from mdm.explore import runner

    runs = RUNS[:3]
    cached = validate(reference_dir, ["mdm", "mwp-cwp"], runs, workers=1).runs
    n_sims = len(cache_sim_calls)
    assert n_sims > 0
    monkeypatch.setattr(runner, "STREAM_TRACE_BYTES", 0)
    streamed = validate(reference_dir, ["mdm", "mwp-cwp"], runs, workers=1).runs
    assert len(cache_sim_calls) == n_sims  # predict_app_configs simulates without simulate_app
    pd.testing.assert_frame_equal(streamed, cached)


def test_validate_in_processes_compiles_each_loop_first(
    reference_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two workers, the issue loops of the runs' configurations are handed to the
    pool first, one per loop (here as if numba's cache held none), and the per-run rows
    equal the serial run's."""
    import pandas as pd

    from mdm.explore.validate import _run_gpus
    from mdm.memory import cachesim

    runs = ["stride1__mdm_pascal__baseline", "stride1__SM7_QV100__baseline"]
    serial = validate(reference_dir, ["mdm"], runs, workers=1).runs
    table = load_results(reference_dir / "results.csv")
    keys = [cachesim.issue_loop_key(g) for g in _run_gpus(reference_dir, table)]
    assert len(keys) == len(table) and len(set(keys)) == 2  # Pascal and Volta loops
    handed: list = []
    real = cachesim.uncached_issue_loops

    def spy(gpus: object) -> list:
        handed.extend(real(gpus))  # type: ignore[arg-type]
        return handed

    monkeypatch.setattr(cachesim, "issue_loop_cached", lambda gpu: False)
    monkeypatch.setattr(cachesim, "uncached_issue_loops", spy)
    pooled = validate(reference_dir, ["mdm"], runs, workers=2).runs
    assert sorted(cachesim.issue_loop_key(g) for g in handed) == sorted(set(keys))
    pd.testing.assert_frame_equal(pooled, serial)
