"""Sweep and demo with the real pipeline (tiny built-in workloads)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from mdm.explore.demo import run_demo
from mdm.explore.runner import run_sweep
from mdm.explore.spec import parse_spec


def _tiny(name: str) -> dict[str, Any]:
    from mdm.explore.demo import demo_params
    from mdm.traces.workloads import WORKLOADS

    return demo_params(dict(WORKLOADS[name].params), tiny=True)


def test_real_sweep_reuses_cache_and_reports_cpi(
    tmp_path: Path, cache_sim_calls: list[tuple]
) -> None:
    spec = parse_spec(
        {
            "workloads": [{"name": "stride", "params": {**_tiny("stride"), "gs": 32}}],
            "grid": {"dram.bandwidth_gbps": [240, 960], "l1.mshr_entries": [32, 128]},
            "models": ["mdm", "gpumech"],
        }
    )
    res = run_sweep(spec, tmp_path, executor="serial")
    t = res.table
    assert len(t) == 4 * 2
    assert len(cache_sim_calls) == len(set(cache_sim_calls)) == res.items_total
    assert any(c.startswith("cpi_") for c in t.columns)
    assert (t["cycles"] > 0).all()
    # more DRAM bandwidth never slows MDM down
    mdm_rows = t[t["model"] == "mdm"].set_index(["l1.mshr_entries", "dram.bandwidth_gbps"])
    for m in (32, 128):
        assert mdm_rows.loc[(m, 960), "cycles"] <= mdm_rows.loc[(m, 240), "cycles"]


def test_real_demo(tmp_path: Path) -> None:
    t = run_demo(tmp_path, tiny=True)
    assert (tmp_path / "report.html").exists()
    assert (tmp_path / "figures" / "ipc.png").exists()
    csv = pd.read_csv(tmp_path / "predictions.csv")
    assert len(csv) == len(t) and csv["cycles"].gt(0).all()
