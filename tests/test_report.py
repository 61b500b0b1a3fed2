"""Report pages and figures from synthetic tables."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from mdm.explore.validate import ValidationResult, with_speedups
from mdm.report.pages import sweep_report, validation_report


def _sweep_table() -> pd.DataFrame:
    rows = []
    for wl in ("a", "b"):
        for n_sm in (14, 28):
            for bw in (240.0, 480.0):
                for m in ("mdm", "gpumech"):
                    c = 1e5 / n_sm + 1e4 / bw
                    rows.append(
                        {
                            "workload": wl,
                            "n_sm": n_sm,
                            "dram.bandwidth_gbps": bw,
                            "model": m,
                            "cycles": c,
                            "ipc": 1e3 / c,
                            "cpi_base": 1.0,
                        }
                    )
    return pd.DataFrame(rows)


def test_sweep_report_writes_svg_png_and_links(tmp_path: Path) -> None:
    page = sweep_report(_sweep_table(), tmp_path, ["n_sm", "dram.bandwidth_gbps"], "t")
    html = page.read_text()
    svgs = sorted((tmp_path / "figures").glob("*.svg"))
    assert len(svgs) == 2 * 2 + 2 * 2  # lines per field + heatmap per model, per workload
    for s in svgs:
        assert s.with_suffix(".png").stat().st_size > 0
        assert f"figures/{s.name}" in html


def test_sweep_report_states_the_cache_timing(tmp_path: Path) -> None:
    from mdm.explore.spec import parse_spec

    wl = [{"name": "vecadd"}]
    for timing in ("base", "point"):
        note = parse_spec({"workloads": wl, "cache_timing": timing}).cache_timing_note()
        assert f"(cache_timing = {timing})" in note
        page = sweep_report(_sweep_table(), tmp_path / timing, ["n_sm"], "t", note)
        assert html.escape(note) in page.read_text()


def test_validation_report(tmp_path: Path) -> None:
    runs = pd.DataFrame(
        {
            "run_id": ["w__a__baseline", "w__a__n_sm_14", "c__a__baseline"],
            "workload": ["w", "w", "c"],
            "class": ["MD", "MD", "calib"],
            "arch": ["a"] * 3,
            "sweep_param": ["baseline", "n_sm", "baseline"],
            "sweep_value": ["", "14", ""],
            "model": ["mdm"] * 3,
            "ipc_sim": [1.0, 2.0, 3.0],
            "ipc_model": [1.1, 1.5, 3.0],
        }
    )
    runs["error"] = (runs["ipc_model"] - runs["ipc_sim"]) / runs["ipc_sim"]
    runs["abs_error"] = runs["error"].abs()
    runs = with_speedups(runs)
    assert runs["speedup_sim"].tolist()[1] == 2.0 and runs["speedup_model"].tolist()[1] == 1.5 / 1.1
    empty = pd.DataFrame()
    summary = {"runs": 3, "models": {"mdm": {"mean_abs_error": 0.1, "mean_abs_error_nmd": np.nan}}}
    res = ValidationResult(runs, empty, empty, empty, empty, summary)
    validation_report(res, tmp_path)
    assert (tmp_path / "figures" / "fig5_a.svg").exists()
    assert (tmp_path / "figures" / "sweeps_a.png").exists()
    assert (tmp_path / "figures" / "speedups_a.svg").exists()  # the one MD sweep point
    assert "speedups_a.svg" in (tmp_path / "report.html").read_text()
    assert '"mean_abs_error_nmd": null' in (tmp_path / "summary.json").read_text()
    assert "fig5_a.svg" in (tmp_path / "report.html").read_text()
    # a blank rho (this sweep has 2 points) is explained where it is shown
    assert "blank (not counted) with fewer than 3 points" in (tmp_path / "report.html").read_text()
    # runs chosen without a baseline: no empty Fig. 5 chart
    sweep_only = ValidationResult(runs.iloc[[1]], empty, empty, empty, empty, summary)
    validation_report(sweep_only, tmp_path / "s")
    assert not (tmp_path / "s" / "figures" / "fig5_a.svg").exists()
    assert (tmp_path / "s" / "figures" / "sweeps_a.svg").exists()


def test_stacked_and_grouped_bars_keep_the_legend_beside_the_axes(
    tmp_path: Path, monkeypatch
) -> None:  # noqa: ANN001
    """The CPI-stack and Fig. 5-style bar charts put their legend right of the axes (it
    hid the tallest bars inside them) and the saved image includes it."""
    from mdm.report import figures

    kept = []
    monkeypatch.setattr(figures.plt, "close", kept.append)  # keep the figures to inspect
    df = pd.DataFrame(
        {"w": ["a", "b", "c"], "cpi_base": [0.1, 0.8, 0.2], "cpi_dram": [0.5, 0.9, 0.1]}
    )
    figures.cpi_stacks(df, "w", ["cpi_base", "cpi_dram"], tmp_path / "stack")
    long = df.melt(id_vars="w", var_name="model", value_name="err")
    figures.grouped_bars(long, "w", "model", "err", tmp_path / "bars")
    assert len(kept) == 2
    for fig in kept:
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        legend = ax.get_legend().get_window_extent(renderer)
        assert legend.x0 > ax.get_window_extent(renderer).x1
    monkeypatch.undo()
    for fig in kept:
        figures.plt.close(fig)
    for stem in ("stack", "bars"):
        svg = (tmp_path / f"{stem}.svg").read_text()
        assert "dram" in svg  # the legend's text is in the saved image


def test_sweep_heatmap_titles_say_when_cells_average(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A heatmap over the first two swept fields averages the points that differ in a
    third field (or a delta); its title says so then, and only then."""
    from mdm.report import figures

    titles: list[str] = []

    def record(*args: object, title: str = "", **kw: object) -> list[Path]:
        titles.append(title)
        return []

    monkeypatch.setattr(figures, "heatmap", record)
    table = _sweep_table()
    sweep_report(table, tmp_path / "two", ["n_sm", "dram.bandwidth_gbps"], "t")
    assert titles and not any("mean over" in t for t in titles)
    titles.clear()
    three = pd.concat([table.assign(clk=1.0), table.assign(clk=2.0)], ignore_index=True)
    sweep_report(three, tmp_path / "three", ["n_sm", "dram.bandwidth_gbps", "clk"], "t")
    assert titles and all(t.endswith("(mean over other fields)") for t in titles)


def test_cpi_stack_legend_lists_the_components_the_rows_have(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Components no row has (MWP-CWP's ``sync`` beside an MDM stack) stay out of the
    bars and the legend."""
    import matplotlib.axes

    from mdm.report import figures

    labels: list[str] = []
    real = matplotlib.axes.Axes.bar

    def bar(self, *args, label: str = "", **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        labels.append(label)
        return real(self, *args, label=label, **kw)

    monkeypatch.setattr(matplotlib.axes.Axes, "bar", bar)
    df = pd.DataFrame({"w": ["a", "b"], "cpi_base": [1.0, 2.0], "cpi_sync": [np.nan, 0.0]})
    figures.cpi_stacks(df, "w", ["cpi_base", "cpi_sync"], tmp_path / "s")
    assert labels == ["base"]
