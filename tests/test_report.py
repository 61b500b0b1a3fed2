"""Report pages and figures from synthetic tables."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

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


def _keep_figures(monkeypatch) -> list:  # noqa: ANN001
    """Keep the figures ``save`` would close, to read what was drawn."""
    from mdm.report import figures

    kept: list = []
    monkeypatch.setattr(figures.plt, "close", kept.append)
    return kept


def test_grouped_bars_are_group_means_in_percent(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Group a, hue m has 0.2 and 0.4: one bar of their mean 0.3, drawn as 30 (%); a/n
    0.1 -> 10; b/m 0.5 -> 50; b/n has no row: no bar height (NaN)."""
    from mdm.report import figures

    kept = _keep_figures(monkeypatch)
    df = pd.DataFrame(
        {"g": ["a", "a", "a", "b"], "h": ["m", "m", "n", "m"], "v": [0.2, 0.4, 0.1, 0.5]}
    )
    figures.grouped_bars(df, "g", "h", "v", tmp_path / "bars", percent=True)
    ax = kept[0].axes[0]
    groups = [t.get_text() for t in ax.get_xticklabels()]
    got = {
        (g, c.get_label()): p.get_height()
        for c in ax.containers
        for g, p in zip(groups, c.patches, strict=True)
    }
    assert got[("a", "m")] == pytest.approx(30.0) and got[("a", "n")] == pytest.approx(10.0)
    assert got[("b", "m")] == pytest.approx(50.0)
    assert np.isnan(got[("b", "n")])


def test_heatmap_has_the_largest_y_on_top_and_averages_cells(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Cells (x, y): (1, 10) rows 0 and 2 -> mean 1; (2, 10) 2; (1, 20) 3; (2, 20) 4. The
    image's first row is y = 20 (largest on top): [[3, 4], [1, 2]]."""
    from mdm.report import figures

    kept = _keep_figures(monkeypatch)
    df = pd.DataFrame(
        {"x": [1.0, 1.0, 2.0, 1.0, 2.0], "y": [10, 10, 10, 20, 20], "v": [0, 2, 2, 3, 4]}
    )
    figures.heatmap(df, "x", "y", "v", tmp_path / "hm")
    ax = kept[0].axes[0]
    assert ax.images[0].get_array().tolist() == [[3.0, 4.0], [1.0, 2.0]]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["20", "10"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2"]


def test_cpi_stack_bars_sit_on_the_components_below(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Rows a, b with base 1, 2 and dram 0.5, 0.25: the dram bars start at 1 and 2 and
    are 0.5 and 0.25 tall (total CPI 1.5, 2.25)."""
    from mdm.report import figures

    kept = _keep_figures(monkeypatch)
    df = pd.DataFrame({"w": ["a", "b"], "cpi_base": [1.0, 2.0], "cpi_dram": [0.5, 0.25]})
    figures.cpi_stacks(df, "w", ["cpi_base", "cpi_dram"], tmp_path / "s")
    base, dram = kept[0].axes[0].containers
    assert [p.get_y() for p in base.patches] == [0.0, 0.0]
    assert [p.get_y() for p in dram.patches] == [1.0, 2.0]
    assert [p.get_height() for p in dram.patches] == [0.5, 0.25]


def test_lines_are_drawn_in_x_order(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Rows at x = 3, 1, 2 (y = 30, 10, 20) are joined in x order: x 1, 2, 3; y 10, 20, 30."""
    from mdm.report import figures

    kept = _keep_figures(monkeypatch)
    df = pd.DataFrame({"x": [3, 1, 2], "y": [30, 10, 20], "m": ["mdm"] * 3})
    figures.lines(df, "x", "y", "m", tmp_path / "l")
    (line,) = kept[0].axes[0].get_lines()
    assert list(line.get_xdata()) == [1, 2, 3] and list(line.get_ydata()) == [10, 20, 30]


def test_predicted_vs_measured_plots_only_positive_pairs(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Log axes: of (1, 2), (2, 0), (3, -1), (0, 1), (NaN, 1) only (1, 2) is a point."""
    from mdm.report import figures

    kept = _keep_figures(monkeypatch)
    df = pd.DataFrame(
        {"x": [1.0, 2.0, 3.0, 0.0, np.nan], "y": [2.0, 0.0, -1.0, 1.0, 1.0], "m": ["a"] * 5}
    )
    figures.predicted_vs_measured(df, "x", "y", "m", tmp_path / "p")
    ax = kept[0].axes[0]
    assert ax.collections[0].get_offsets().tolist() == [[1.0, 2.0]]


def _runs_of_two_classes() -> pd.DataFrame:
    """MD workload w and calib workload c, each at baseline and at n_sm = 14."""
    runs = pd.DataFrame(
        {
            "run_id": ["w__b", "w__14", "c__b", "c__14"],
            "workload": ["w", "w", "c", "c"],
            "class": ["MD", "MD", "calib", "calib"],
            "arch": ["a"] * 4,
            "sweep_param": ["baseline", "n_sm", "baseline", "n_sm"],
            "sweep_value": ["", "14", "", "14"],
            "model": ["mdm"] * 4,
            "ipc_sim": [1.0, 2.0, 3.0, 6.0],
            "ipc_model": [1.1, 1.5, 3.0, 3.0],
        }
    )
    runs["error"] = (runs["ipc_model"] - runs["ipc_sim"]) / runs["ipc_sim"]
    runs["abs_error"] = runs["error"].abs()
    return with_speedups(runs)


def test_validation_report_charts_pick_their_rows(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Fig. 5 chart: the baseline rows (w (MD), c (calib)) and their |error|; sweep chart:
    the MD sweep point only (n_sm=14 of w, not calib c); speedup scatter: no calib row."""
    from mdm.report import figures

    calls: dict[str, tuple] = {}

    def bars(df, group, hue, value, stem, **kw):  # noqa: ANN001, ANN003, ANN202
        calls[Path(stem).name] = (df.copy(), group, value)
        return []

    def scatter(df, x, y, hue, stem, **kw):  # noqa: ANN001, ANN003, ANN202
        calls[Path(stem).name] = (df.copy(), x, y)
        return []

    monkeypatch.setattr(figures, "grouped_bars", bars)
    monkeypatch.setattr(figures, "predicted_vs_measured", scatter)
    empty = pd.DataFrame()
    summary = {"runs": 4, "models": {"mdm": {"mean_abs_error": 0.1}}}
    runs = _runs_of_two_classes()
    validation_report(ValidationResult(runs, empty, empty, empty, empty, summary), tmp_path)
    fig5, group, value = calls["fig5_a"]
    assert group == "workload" and value == "abs_error"
    assert sorted(fig5["workload"]) == ["c (calib)", "w (MD)"]
    assert sorted(fig5["abs_error"]) == pytest.approx([0.0, 0.1])
    sweeps, group, value = calls["sweeps_a"]
    assert list(sweeps["point"]) == ["n_sm=14"] and list(sweeps["workload"]) == ["w"]
    assert value == "abs_error"
    points, x, y = calls["speedups_a"]
    assert (x, y) == ("speedup_sim", "speedup_model")
    assert set(points["class"]) == {"MD"}


def test_per_kernel_section_lists_runs_of_several_kernels(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Run r2 has kernels 0 and 1, run r1 one kernel: the per-kernel table shows r2's two
    rows (kernel names kA, kB) and not r1's (kC); with single-kernel runs only, no section."""
    from mdm.report import figures

    for name in ("grouped_bars", "predicted_vs_measured"):  # the page only
        monkeypatch.setattr(figures, name, lambda *a, **k: [])
    runs = _runs_of_two_classes()
    kernels = pd.DataFrame(
        {
            "run_id": ["r2", "r2", "r1"],
            "model": ["mdm"] * 3,
            "kernel": [0, 1, 0],
            "kernel_name": ["kA", "kB", "kC"],
            "cycles_sim": [10.0, 20.0, 30.0],
            "cycles_model": [11.0, 19.0, 33.0],
        }
    )
    empty = pd.DataFrame()
    summary = {"runs": 4, "models": {"mdm": {"mean_abs_error": 0.1}}}
    validation_report(ValidationResult(runs, kernels, empty, empty, empty, summary), tmp_path)
    page = (tmp_path / "report.html").read_text()
    assert "Per kernel (runs of several kernels)" in page
    assert "<td>kA</td>" in page and "<td>kB</td>" in page and "<td>kC</td>" not in page
    one = kernels[kernels["run_id"] == "r1"]
    validation_report(ValidationResult(runs, one, empty, empty, empty, summary), tmp_path / "o")
    assert "Per kernel" not in (tmp_path / "o" / "report.html").read_text()


def test_sweep_report_lines_average_and_skip_unpredicted_rows(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """Workload w at n_sm 14 has IPC 1 and 3 (two bandwidths): the IPC-vs-n_sm line has
    their mean 2; workload s is all skipped (3 rows, NaN IPC, at 2 distinct points): no
    figure for it, and the table section says "3 rows of 2 (workload, point) pairs"."""
    from mdm.report import figures

    drawn: dict[str, pd.DataFrame] = {}

    def lines(df, x, y, hue, stem, **kw):  # noqa: ANN001, ANN003, ANN202
        drawn[Path(stem).name] = df.copy()
        return []

    monkeypatch.setattr(figures, "lines", lines)
    table = pd.DataFrame(
        {
            "workload": ["w", "w", "s", "s", "s"],
            "point": [0, 1, 0, 0, 1],
            "n_sm": [14, 14, 14, 14, 28],
            "model": ["mdm"] * 5,
            "ipc": [1.0, 3.0, np.nan, np.nan, np.nan],
            "skipped": [None, None, "no trace", "no trace", "no trace"],
        }
    )
    page = sweep_report(table, tmp_path, ["n_sm"], "t")
    assert list(drawn) == ["w_ipc_vs_n_sm"]
    assert drawn["w_ipc_vs_n_sm"]["ipc"].tolist() == [2.0]
    assert "3 rows of 2 (workload, point) pairs have no prediction" in page.read_text()


def test_cpi_columns_leave_out_the_totals() -> None:
    """cpi_* columns except cpi_total (and a plain cpi): the stack's components."""
    from mdm.report.pages import cpi_columns

    df = pd.DataFrame(columns=["cpi_base", "cpi_total", "cpi", "ipc", "cpi_dram"])
    assert cpi_columns(df) == ["cpi_base", "cpi_dram"]


def test_page_links_figures_relative_and_escapes_text(tmp_path: Path) -> None:
    """write_page shows each SVG by its path relative to the page (figures/f.svg) and
    links its PNG; PNG entries are not shown twice; headings are HTML-escaped."""
    from mdm.report.html import Section, write_page

    figs = [tmp_path / "figures" / "f.png", tmp_path / "figures" / "f.svg"]
    page = write_page(tmp_path / "r.html", "t", [Section("a<b>", figures=figs)]).read_text()
    assert page.count("<img ") == 1
    assert '<a href="figures/f.png"><img src="figures/f.svg"></a>' in page
    assert "<h2>a&lt;b&gt;</h2>" in page
