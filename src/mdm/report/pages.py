"""Report pages: sweep, validation (tables + figures + HTML)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mdm._json import dumps
from mdm.report import figures
from mdm.report.html import Section, write_page


def cpi_columns(df: pd.DataFrame) -> list[str]:
    """The CPI stack columns of a prediction table (``cpi_*`` except the total)."""
    return [c for c in df.columns if c.startswith("cpi_") and c not in ("cpi_total", "cpi")]


def sweep_report(
    table: pd.DataFrame, out: str | Path, swept: Sequence[str], title: str, note: str = ""
) -> Path:
    """Figures (IPC vs each swept field per workload and model; heatmap over the first
    two numeric fields) and ``report.html`` in ``out``; ``note`` heads the table section
    (e.g. :meth:`mdm.explore.spec.SweepSpec.cache_timing_note`)."""
    out = Path(out)
    figs = out / "figures"
    sections = []
    numeric = [f for f in swept if f in table and pd.api.types.is_numeric_dtype(table[f])]
    predicted = table[table["ipc"].notna()] if "ipc" in table else table  # not the skipped
    for wl, g in predicted.groupby("workload", sort=False):
        paths: list[Path] = []
        for f in numeric:
            mean = g.groupby([f, "model"], as_index=False)["ipc"].mean()
            paths += figures.lines(
                mean,
                f,
                "ipc",
                "model",
                figs / f"{_safe(wl)}_ipc_vs_{_safe(f)}",
                title=f"{wl}: IPC vs {f} (mean over other fields)",
            )
        if len(numeric) >= 2:
            # a cell averages the points that differ in another field or delta
            averaged = len(numeric) > 2 or ("delta" in g and g["delta"].nunique() > 1)
            for m, gm in g.groupby("model", sort=False):
                paths += figures.heatmap(
                    gm,
                    numeric[0],
                    numeric[1],
                    "ipc",
                    figs / f"{_safe(wl)}_{_safe(str(m))}_heatmap",
                    title=f"{wl} / {m}: IPC" + (" (mean over other fields)" if averaged else ""),
                )
        sections.append(Section(str(wl), figures=paths))
    skipped = ""
    if "skipped" in table and table["skipped"].notna().any():
        s = table[table["skipped"].notna()]
        skipped = (
            f" {len(s)} rows of {s[['workload', 'point']].drop_duplicates().shape[0]} "
            f"(workload, point) pairs have no prediction (column skipped), e.g. "
            f"{s['skipped'].iloc[0]}."
        )
    sections.append(
        Section(
            "Table",
            tables=[table.head(200)],
            text=f"{note + ' ' if note else ''}{len(table)} rows; first 200 shown.{skipped}",
        )
    )
    return write_page(out / "report.html", title, sections)


def validation_report(res: Any, out: str | Path) -> Path:
    """Write runs/kernels/summary tables, the Fig. 5-style chart and ``report.html``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    res.runs.to_csv(out / "runs.csv", index=False)
    res.kernels.to_csv(out / "kernels.csv", index=False)
    res.spearman.to_csv(out / "spearman.csv", index=False)
    (out / "summary.json").write_text(dumps(res.summary, indent=2))
    figs = out / "figures"
    runs = res.runs
    sections = []
    for arch, g in runs.groupby("arch"):
        base = g[g["sweep_param"] == "baseline"].copy()
        base["workload"] = base["workload"] + " (" + base["class"] + ")"
        paths = []
        if len(base):  # runs chosen without a baseline have no Fig. 5 chart
            paths += figures.grouped_bars(
                base,
                "workload",
                "model",
                "abs_error",
                figs / f"fig5_{_safe(str(arch))}",
                title=f"{arch}: |IPC error| at baseline (paper 001 eq. 11, Fig. 5 style)",
                ylabel="|IPC error|",
                percent=True,
            )
        sweeps = g[(g["sweep_param"] != "baseline") & (g["class"] != "calib")]
        if len(sweeps):
            sw = sweeps.copy()
            sw["point"] = sw["sweep_param"] + "=" + sw["sweep_value"].astype(str)
            paths += figures.grouped_bars(
                sw,
                "point",
                "model",
                "abs_error",
                figs / f"sweeps_{_safe(str(arch))}",
                title=f"{arch}: mean |IPC error| of MD/NMD workloads per sweep point",
                ylabel="|IPC error|",
                percent=True,
            )
        points = g[g["class"] != "calib"]
        if "speedup_sim" in points and points["speedup_sim"].notna().any():
            paths += figures.predicted_vs_measured(
                points,
                "speedup_sim",
                "speedup_model",
                "model",
                figs / f"speedups_{_safe(str(arch))}",
                title=f"{arch}: sweep points' speedup over the baseline",
                label="speedup",
            )
        sections.append(Section(f"Architecture {arch}", figures=paths))
    summ = pd.DataFrame(
        [
            {"model": m, **{k: v for k, v in d.items() if not isinstance(v, dict)}}
            for m, d in res.summary["models"].items()
        ]
    )
    sections.append(Section("Summary per model", tables=[summ]))
    sections.append(Section("Per class", tables=[res.by_class]))
    sections.append(Section("Per sweep parameter", tables=[res.by_sweep]))
    sections.append(
        Section(
            "Spearman rank correlation of sweep trends",
            tables=[res.spearman],
            text="model against reference IPC over each sweep's points and its baseline; "
            "mean_spearman counts the MD and NMD sweeps (calib ones: mean_spearman_calib); "
            "blank (not counted) with fewer than 3 points, or where the "
            "reference's or the model's IPC is the same at every point (nothing to rank)",
        )
    )
    want = ["run_id", "class", "model", "ipc_sim", "ipc_model", "error", "speedup_error"]
    cols = [c for c in want if c in runs]
    sections.append(Section("Per run", tables=[runs[cols]]))
    from mdm.explore.validate import CACHESIM_COLUMNS

    cache = res.summary.get("cache_simulation")
    ccols = [c for pair in CACHESIM_COLUMNS.items() for c in pair if c in runs]
    if cache and ccols:
        per_run = runs.drop_duplicates("run_id")[["run_id", *ccols]]
        sections.append(
            Section(
                "Cache simulation against the reference",
                tables=[pd.DataFrame([cache]), per_run],
                text="the model inputs' miss rates (cachesim_*) beside the reference's, per run",
            )
        )
    k = res.kernels
    multi = k[k.groupby("run_id")["kernel"].transform("nunique") > 1] if len(k) else k
    if len(multi):
        sections.append(
            Section(
                "Per kernel (runs of several kernels)",
                tables=[multi.dropna(axis=1, how="all")],
                text="each kernel's cycles and, where its log has them, its own miss rates "
                "(differences of the cumulative counters) beside the cache simulation's",
            )
        )
    return write_page(out / "report.html", "mdm validation", sections)


def _safe(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)
