"""Case studies of paper 001 Section VII, each a sweep plus its table and figure.

* :func:`heatmap` - SM count x DRAM bandwidth, performance normalised to the base
  configuration (Fig. 11 / 12), one heatmap per workload and model.
* :func:`dvfs` - predicted execution-time change from 2.0 to 1.4 GHz core clock
  (Fig. 13). Memory latencies are in ns in our configuration, so only the core clock
  changes; time = cycles / f.
* :func:`cpi_bandwidth` - CPI stacks as NoC and DRAM bandwidth are scaled together
  relative to the base (Fig. 14).
* :func:`streaming_l1` - classic L1 vs streaming L1 (``l1.allocate_on = 'fill'`` with
  ``mshr_entries`` MSHRs, 4096 in the paper) (Fig. 15).

Each writes ``<name>.csv`` and ``<name>.parquet``, figures (PNG + SVG) and
``report.html`` into ``out``; the sweep itself (resumable) lives in ``out/sweep``.
Keyword arguments beyond each function's own go to :func:`mdm.explore.runner.run_sweep`,
except ``cache_timing`` (``base``, the default, or ``point``), the sweep spec's field of
that name (:mod:`mdm.explore.spec`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mdm.errors import ConfigError
from mdm.explore import runner
from mdm.explore.spec import WorkloadSpec, parse_spec
from mdm.report import figures
from mdm.report.html import Section, write_page
from mdm.report.pages import cpi_columns

DEFAULT_WORKLOADS = (
    WorkloadSpec(name="stride", params={"gs": 1}, label="stride1 (NMD)"),
    WorkloadSpec(name="stride", params={"gs": 32}, label="stride32 (MD)"),
)


def _sweep(
    name: str,
    out: Path,
    workloads: Sequence[WorkloadSpec],
    models: Sequence[str],
    base: str,
    run_kw: dict[str, Any],
    **spec: Any,
) -> tuple[pd.DataFrame, str]:
    """Run the study's sweep; returns its table and the spec's cache-timing note."""
    run_kw = dict(run_kw)
    if "cache_timing" in run_kw:  # else the spec's default
        spec["cache_timing"] = run_kw.pop("cache_timing")
    s = parse_spec(
        {
            "name": name,
            "base": base,
            "workloads": [w.model_dump(exclude_none=True) for w in workloads],
            "models": list(models),
            **spec,
        },
        f"<study {name}>",
    )
    return runner.run_sweep(s, out / "sweep", **run_kw).table, s.cache_timing_note()


def _write(table: pd.DataFrame, out: Path, name: str) -> None:
    runner.atomic_write_table(table, out / f"{name}.csv")
    runner.atomic_write_table(table, out / f"{name}.parquet")


def heatmap(
    out: str | Path,
    workloads: Sequence[WorkloadSpec] = DEFAULT_WORKLOADS,
    models: Sequence[str] = ("mdm",),
    sms: Sequence[int] | None = None,
    dram_scale: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0),
    base: str = "mdm_pascal",
    load_base: Callable[[str], Any] = runner._load_base,
    sm_scale: Sequence[float] = (0.25, 0.5, 1.0, 2.0, 4.0),
    **run_kw: Any,
) -> pd.DataFrame:
    """SM count x DRAM bandwidth; ``perf`` = base cycles / cycles (Fig. 11/12).

    ``sms``: the SM counts; default the base's scaled by ``sm_scale`` (7-112 for
    ``mdm_pascal``'s 28, as the paper's figures; 20-320 for ``v100``'s 80), so that the
    base point is in the grid. Given SM counts without the base's, ``perf`` is
    normalised to each workload's fastest point instead, and the figures say so."""
    out = Path(out)
    g = load_base(base)
    bws = [g.dram.bandwidth_gbps * s for s in dram_scale]
    if sms is None:
        sms = sorted({max(1, round(g.n_sm * s)) for s in sm_scale})
    t, note = _sweep(
        "heatmap",
        out,
        workloads,
        models,
        base,
        {**run_kw, "load_base": load_base},
        grid={"n_sm": list(sms), "dram.bandwidth_gbps": bws},
    )
    ref = t[(t["n_sm"] == g.n_sm) & (t["dram.bandwidth_gbps"] == g.dram.bandwidth_gbps)]
    ref = ref.set_index(["workload", "model"])["cycles"]
    if len(ref):
        t["perf"] = [
            ref.get((w, m), float("nan")) / c
            for w, m, c in zip(t["workload"], t["model"], t["cycles"], strict=True)
        ]
        versus = "base"
    else:  # base point not in the grid: normalise to the best point
        t["perf"] = t.groupby(["workload", "model"])["cycles"].transform("min") / t["cycles"]
        versus = "the fastest point (the base's SM count is not in the grid)"
        note = f"{note} perf is relative to each workload's fastest point: {g.n_sm} SMs "
        note += "(the base's) is not among the SM counts."
    _write(t, out, "heatmap")
    paths: list[Path] = []
    for (w, m), gm in t.groupby(["workload", "model"], sort=False):
        paths += figures.heatmap(
            gm,
            "dram.bandwidth_gbps",
            "n_sm",
            "perf",
            out / "figures" / f"heatmap_{_safe(w)}_{m}",
            title=f"{w} / {m}: performance vs {versus}",
        )
    write_page(
        out / "report.html",
        "SM count x DRAM bandwidth (paper 001 Fig. 11/12)",
        [Section("Heatmaps", text=note, figures=paths, tables=[t])],
    )
    return t


def dvfs(
    out: str | Path,
    workloads: Sequence[WorkloadSpec] = DEFAULT_WORKLOADS,
    models: Sequence[str] = ("mdm", "gpumech"),
    f_high_mhz: float = 2000.0,
    f_low_mhz: float = 1400.0,
    base: str = "mdm_pascal",
    **run_kw: Any,
) -> pd.DataFrame:
    """Predicted time change from ``f_high`` to ``f_low``: ``t_low / t_high - 1`` (Fig. 13)."""
    out = Path(out)
    t, note = _sweep(
        "dvfs",
        out,
        workloads,
        models,
        base,
        run_kw,
        grid={"core_clock_mhz": [f_high_mhz, f_low_mhz]},
    )
    t["time_us"] = t["cycles"] / t["core_clock_mhz"]
    piv = t.pivot_table(index=["workload", "model"], columns="core_clock_mhz", values="time_us")
    res = piv.reset_index().rename(columns={f_high_mhz: "time_us_high", f_low_mhz: "time_us_low"})
    res.columns.name = None
    res["time_change"] = res["time_us_low"] / res["time_us_high"] - 1.0
    _write(res, out, "dvfs")
    paths = figures.grouped_bars(
        res,
        "workload",
        "model",
        "time_change",
        out / "figures" / "dvfs",
        title=f"Predicted execution-time change {f_high_mhz:g} -> {f_low_mhz:g} MHz",
        ylabel="time change",
        percent=True,
    )
    write_page(
        out / "report.html",
        "DVFS (paper 001 Fig. 13)",
        [Section("DVFS", text=note, figures=paths, tables=[res])],
    )
    return res


def cpi_bandwidth(
    out: str | Path,
    workloads: Sequence[WorkloadSpec] = (DEFAULT_WORKLOADS[1],),
    models: Sequence[str] = ("mdm", "gpumech"),
    scales: Sequence[float] = (0.5, 1.0, 2.0),
    base: str = "mdm_pascal",
    load_base: Callable[[str], Any] = runner._load_base,
    **run_kw: Any,
) -> pd.DataFrame:
    """CPI stacks with NoC and DRAM bandwidth scaled together by ``scales`` (Fig. 14)."""
    out = Path(out)
    g = load_base(base)
    t, note = _sweep(
        "cpi_bandwidth",
        out,
        workloads,
        models,
        base,
        {**run_kw, "load_base": load_base},
        zip={
            "noc.bandwidth_gbps": [g.noc.bandwidth_gbps * s for s in scales],
            "dram.bandwidth_gbps": [g.dram.bandwidth_gbps * s for s in scales],
        },
    )
    t["bw_scale"] = t["dram.bandwidth_gbps"] / g.dram.bandwidth_gbps
    _write(t, out, "cpi_bandwidth")
    paths: list[Path] = []
    comps = cpi_columns(t)
    for w, gw in t.groupby("workload", sort=False):
        gw = gw.sort_values(["model", "bw_scale"]).copy()
        gw["label"] = gw["model"] + " x" + gw["bw_scale"].map(lambda v: f"{v:g}")
        paths += figures.cpi_stacks(
            gw,
            "label",
            comps,
            out / "figures" / f"cpi_{_safe(w)}",
            title=f"{w}: CPI stack vs NoC+DRAM bandwidth",
        )
    write_page(
        out / "report.html",
        "CPI stack vs bandwidth (paper 001 Fig. 14)",
        [Section("CPI stacks", text=note, figures=paths, tables=[t])],
    )
    return t


def streaming_l1(
    out: str | Path,
    workloads: Sequence[WorkloadSpec] = DEFAULT_WORKLOADS,
    models: Sequence[str] = ("mdm", "gpumech"),
    mshr_entries: int = 4096,
    base: str = "mdm_pascal",
    **run_kw: Any,
) -> pd.DataFrame:
    """Classic L1 (base) vs streaming L1 (allocate on fill, many MSHRs) (Fig. 15). The
    base must have a classic L1 (allocating on miss: ``mdm_pascal``, ``gtx1080``,
    ``sm7_qv100``); on a streaming preset both sides would be the same L1."""
    out = Path(out)
    load = run_kw.get("load_base", runner._load_base)
    if load(base).l1.allocate_on == "fill":
        raise ConfigError(
            None,
            f"{base} already has a streaming L1 (l1.allocate_on = 'fill'), so 'classic' and "
            "'streaming' would be the same L1: give a preset with a classic L1 (allocating "
            "on miss: mdm_pascal, gtx1080, sm7_qv100)",
        )
    t, note = _sweep(
        "streaming_l1",
        out,
        workloads,
        models,
        base,
        run_kw,
        deltas={
            "classic": {},
            "streaming": {"l1.allocate_on": "fill", "l1.mshr_entries": mshr_entries},
        },
    )
    _write(t, out, "streaming_l1")
    t2 = t.copy()
    t2["config"] = t2["workload"] + " / " + t2["delta"]
    paths = figures.grouped_bars(
        t2,
        "config",
        "model",
        "ipc",
        out / "figures" / "streaming_l1",
        title="Classic vs streaming L1: predicted IPC",
        ylabel="IPC",
    )
    write_page(
        out / "report.html",
        "Streaming L1 (paper 001 Fig. 15)",
        [Section("Streaming L1", text=note, figures=paths, tables=[t])],
    )
    return t


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)
