"""Case studies write their tables, figures and pages (pipeline faked, serial)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mdm.config.gpu import GPUConfig
from mdm.explore import runner, studies
from mdm.explore.runner import WorkItem
from mdm.models.synthetic import pascal_like

BASE: dict[str, Any] = pascal_like("t", 70.0, 150.0)


def fake_base(_preset: str) -> GPUConfig:
    return GPUConfig.model_validate(copy.deepcopy(BASE))


def fake_evaluate(item: WorkItem) -> list[dict[str, Any]]:
    """Cycles: compute part in core cycles + memory part fixed in ns."""
    rows = []
    for p, gpu in zip(item.points, item.gpus, strict=True):
        for m in item.models:
            mem_ns = 2e5 / gpu.dram.bandwidth_gbps + 1e5 / gpu.noc.bandwidth_gbps
            comp = 2e4 / gpu.n_sm
            stall = mem_ns * gpu.core_clock_ghz * (0.5 if gpu.l1.allocate_on == "fill" else 1.0)
            cycles = comp + stall
            r = {
                "model": m,
                "cycles": cycles,
                "ipc": 1e4 / cycles,
                "cpi_base": comp / 1e4,
                "cpi_dram": stall / 1e4,
            }
            rows.append(runner._label(item, p, gpu, r))
    return rows


KW = {
    "executor": "serial",
    "evaluate": fake_evaluate,
    "load_base": fake_base,
    "cache_key": lambda g: (g.n_sm, g.l1.mshr_entries, g.l1.allocate_on),
}


def _files(out: Path, name: str) -> None:
    assert (out / f"{name}.csv").exists() and (out / f"{name}.parquet").exists()
    assert (out / "report.html").exists()
    assert list((out / "figures").glob("*.png")) and list((out / "figures").glob("*.svg"))


def test_heatmap_normalised_to_base(tmp_path: Path) -> None:
    t = studies.heatmap(tmp_path, sms=(14, 28), dram_scale=(0.5, 1.0), **KW)
    _files(tmp_path, "heatmap")
    base = t[(t["n_sm"] == 28) & (t["dram.bandwidth_gbps"] == 480)]
    assert (base["perf"] == 1.0).all()
    assert (t[t["n_sm"] == 14]["perf"] < 1.0).all()


def test_dvfs_time_change(tmp_path: Path) -> None:
    res = studies.dvfs(
        tmp_path, **{k: v for k, v in KW.items() if k != "load_base"}, load_base=fake_base
    )
    _files(tmp_path, "dvfs")
    # hand-worked from the fake: time = comp/f + mem_ns (memory fixed in ns)
    comp, mem = 2e4 / 28, 2e5 / 480 + 1e5 / 1050
    want = (comp / 1.4 + mem) / (comp / 2.0 + mem) - 1
    assert res["time_change"].to_numpy() == pytest.approx(want)


def test_cpi_bandwidth_and_streaming(tmp_path: Path) -> None:
    t = studies.cpi_bandwidth(tmp_path / "c", **KW)
    _files(tmp_path / "c", "cpi_bandwidth")
    assert sorted(set(t["bw_scale"])) == [0.5, 1.0, 2.0]
    s = studies.streaming_l1(tmp_path / "s", **KW)
    _files(tmp_path / "s", "streaming_l1")
    assert set(s["delta"]) == {"classic", "streaming"}
    assert set(s[s["delta"] == "streaming"]["l1.mshr_entries"]) == {4096}
