"""Case studies write their tables, figures and pages (pipeline faked, serial)."""

from __future__ import annotations

import copy
import html
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


def test_heatmap_default_sm_counts_scale_the_base_and_a_grid_without_it_says_so(
    tmp_path: Path,
) -> None:
    """By default the SM counts are the base's x 1/4 .. 4 (7-112 for 28 SMs; on an
    80-SM preset the base point was missing and perf silently relative to the fastest
    point); SM counts given without the base's normalise to the fastest point, and the
    figures and report say so."""
    t = studies.heatmap(tmp_path / "d", dram_scale=(1.0,), **KW)
    assert sorted(set(t["n_sm"])) == [7, 14, 28, 56, 112]
    assert (t[t["n_sm"] == 28]["perf"] == 1.0).all()

    def eighty(_preset: str) -> GPUConfig:
        return fake_base(_preset).with_updates({"n_sm": 80})

    t = studies.heatmap(tmp_path / "v", dram_scale=(1.0,), **{**KW, "load_base": eighty})
    assert sorted(set(t["n_sm"])) == [20, 40, 80, 160, 320]
    assert (t[t["n_sm"] == 80]["perf"] == 1.0).all()
    t = studies.heatmap(
        tmp_path / "o", sms=(14, 28), dram_scale=(1.0,), **{**KW, "load_base": eighty}
    )
    assert t["perf"].max() == 1.0
    page = html.unescape((tmp_path / "o" / "report.html").read_text())
    assert "relative to each workload's fastest point: 80 SMs" in page


def test_streaming_study_needs_a_classic_base(tmp_path: Path) -> None:
    """On a preset whose L1 already streams, 'classic' and 'streaming' would be the same
    L1 under two labels: refused, naming the presets that fit."""
    from mdm.errors import ConfigError

    def streaming(_preset: str) -> GPUConfig:
        return fake_base(_preset).with_updates({"l1.allocate_on": "fill"})

    with pytest.raises(ConfigError, match="already has a streaming L1 .*mdm_pascal"):
        studies.streaming_l1(tmp_path, **{**KW, "load_base": streaming})
    assert not tmp_path.joinpath("streaming_l1.csv").exists()


def _record_figures(monkeypatch) -> dict[str, tuple]:  # noqa: ANN001
    """Replace the studies' figure functions by recorders: stem name -> (df, args)."""
    calls: dict[str, tuple] = {}

    def rec(df, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls[Path(args[-1]).name] = (df.copy(), args[:-1])
        return []

    for name in ("heatmap", "grouped_bars", "cpi_stacks"):
        monkeypatch.setattr(studies.figures, name, rec)
    return calls


def test_cpi_bandwidth_scales_noc_and_dram_together(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Base NoC 1050 GB/s, DRAM 480 GB/s: at bw_scale 0.5 / 1 / 2 the point has NoC 525 /
    1050 / 2100 and DRAM 240 / 480 / 960. The CPI-stack figure's bars run model by
    model, each by rising scale (labels 'gpumech x0.5' .. 'mdm x2')."""
    calls = _record_figures(monkeypatch)
    t = studies.cpi_bandwidth(tmp_path, **KW)
    got = sorted(zip(t["bw_scale"], t["noc.bandwidth_gbps"], t["dram.bandwidth_gbps"], strict=True))
    assert sorted(set(got)) == [(0.5, 525.0, 240.0), (1.0, 1050.0, 480.0), (2.0, 2100.0, 960.0)]
    ((df, args),) = calls.values()
    assert args[0] == "label" and list(args[1]) == ["cpi_base", "cpi_dram"]
    assert list(df["label"]) == [f"{m} x{s}" for m in ("gpumech", "mdm") for s in ("0.5", "1", "2")]


def test_study_figures_plot_the_documented_columns(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Heatmap: perf over DRAM bandwidth (x) and SM count (y); streaming L1: predicted
    IPC per workload / delta, one bar per model; DVFS: time change in percent."""
    calls = _record_figures(monkeypatch)
    studies.heatmap(tmp_path / "h", sms=(14, 28), dram_scale=(0.5, 1.0), **KW)
    df, args = calls["heatmap_stride1__NMD__mdm"]
    assert args == ("dram.bandwidth_gbps", "n_sm", "perf")
    assert set(df["n_sm"]) == {14, 28} and set(df["dram.bandwidth_gbps"]) == {240.0, 480.0}
    studies.streaming_l1(tmp_path / "s", **KW)
    df, args = calls["streaming_l1"]
    assert args == ("config", "model", "ipc")
    assert set(df["config"]) == {
        f"{w} / {d}" for w in ("stride1 (NMD)", "stride32 (MD)") for d in ("classic", "streaming")
    }
    studies.dvfs(tmp_path / "d", **KW)
    df, args = calls["dvfs"]
    assert args == ("workload", "model", "time_change")
