"""``mdm study`` on the command line: each study writes its table and report."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from mdm.cli.main import app

TINY = "stride:gs=32,ctas=8"


@pytest.mark.parametrize(
    ("command", "table"),
    [("dvfs", "dvfs.csv"), ("cpi-bandwidth", "cpi_bandwidth.csv")],
)
def test_study_command_writes_table_and_report(tmp_path: Path, command: str, table: str) -> None:
    out = tmp_path / command
    res = CliRunner().invoke(
        app,
        [
            "study",
            command,
            "--out",
            str(out),
            "--workload",
            TINY,
            "--model",
            "mdm",
            "--workers",
            "1",
        ],
    )
    assert res.exit_code == 0, res.output
    assert f"wrote {out / table}" in res.output
    t = pd.read_csv(out / table)
    assert len(t) > 0 and set(t["model"]) == {"mdm"}
    assert (out / "report.html").is_file()


def test_study_bad_workload_is_one_line_error(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["study", "dvfs", "--out", str(tmp_path), "--workload", "stride:gs"]
    )
    assert res.exit_code == 1
    assert "expected NAME:key=value" in res.output
    # a workload or parameter the generators lack: one line, no pydantic traceback
    for bad, why in (
        ("stride:foo=1", "has no parameter 'foo'"),
        ("nosuch", "unknown workload 'nosuch'"),
        ("stride:gs=", "parameter gs must be a number"),
    ):
        res = CliRunner().invoke(app, ["study", "dvfs", "--out", str(tmp_path), "--workload", bad])
        assert res.exit_code == 1, bad
        assert res.output.startswith(f"error: --workload {bad!r}: ") and why in res.output
        assert "Traceback" not in res.output and "pydantic" not in res.output
    res = CliRunner().invoke(app, ["study", "dvfs", "--out", str(tmp_path), "--workers", "0"])
    assert res.exit_code == 2 and "--workers" in res.output


def test_study_cache_timing_base_shares_the_simulation(tmp_path: Path) -> None:
    """``--cache-timing base`` (the default): the DVFS study's two clocks share one cache
    simulation (one part file, i.e. one work item), and still predict different cycles;
    ``point`` simulates each clock."""
    runs = {}
    for timing in ("point", "base", "default"):
        out = tmp_path / timing
        args = ["study", "dvfs", "--out", str(out), "--workload", TINY, "--model", "mdm"]
        opt = [] if timing == "default" else ["--cache-timing", timing]
        res = CliRunner().invoke(app, [*args, "--workers", "1", *opt])
        assert res.exit_code == 0, res.output
        runs[timing] = (
            len(list((out / "sweep" / "parts").iterdir())),
            pd.read_csv(out / "sweep" / "results.csv"),
        )
    assert runs["point"][0] == 2 and runs["base"][0] == 1 and runs["default"][0] == 1
    for timing in ("point", "base", "default"):  # the report says how caches were simulated
        page = (tmp_path / timing / "report.html").read_text()
        assert f"(cache_timing = {'point' if timing == 'point' else 'base'})" in page
    pd.testing.assert_frame_equal(runs["default"][1], runs["base"][1])
    point, base = runs["point"][1], runs["base"][1]
    assert base["cycles"].nunique() == 2
    at_base = base["core_clock_mhz"] == 1400.0  # mdm_pascal's own clock: the same prediction
    assert base.loc[at_base, "cycles"].tolist() == point.loc[at_base, "cycles"].tolist()
    res = CliRunner().invoke(app, ["study", "dvfs", "--out", str(tmp_path), "--cache-timing", "x"])
    assert res.exit_code == 1 and "expected point or base" in res.output


def test_sweep_cache_timing_option_overrides_the_spec_and_resumes_point_folders(
    tmp_path: Path,
) -> None:
    """``mdm sweep --cache-timing point`` simulates each DRAM bandwidth (two work items);
    the folder then resumes only with the same option, and the refusal says how."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: t\nbase: mdm_pascal\ngrid: {dram.bandwidth_gbps: [240.0, 480.0]}\n"
        "workloads: [{name: stride, params: {gs: 32, ctas: 8}}]\nmodels: [mdm]\n"
    )
    out = tmp_path / "o"
    args = ["sweep", str(spec), "--out", str(out), "--workers", "1", "--no-report"]
    res = CliRunner().invoke(app, [*args, "--cache-timing", "point"])
    assert res.exit_code == 0, res.output
    assert "2 work items run" in res.output and "cache_timing = point" in res.output
    res = CliRunner().invoke(app, args)  # the spec's default, base: refused, with the way out
    assert res.exit_code == 1 and "--cache-timing point" in res.output
    res = CliRunner().invoke(app, [*args, "--cache-timing", "point"])
    assert res.exit_code == 0 and "2 resumed" in res.output
    res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert res.exit_code == 0 and "1 work items run" in res.output, res.output
    res = CliRunner().invoke(app, [*args, "--cache-timing", "sometimes"])
    assert res.exit_code == 1 and "expected point or base" in res.output


def test_sweep_error_about_a_point_names_the_spec_file(tmp_path: Path) -> None:
    spec = tmp_path / "g1.yaml"
    spec.write_text("name: g1\ngrid: {l1.mshr_entriez: [32]}\nworkloads: [{name: stride}]\n")
    res = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o")])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert f"error: {spec}: sweep 'g1', point 0" in res.output.replace("\n", "")
    assert "l1.mshr_entriez" in res.output
    spec.write_text("name: g1\nmodels: [mdm, MDMX]\nworkloads: [{name: stride}]\n")
    res = CliRunner().invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "o")])
    out = res.output.replace("\n", "")
    assert res.exit_code == 1 and f"error: {spec}: field models: unknown model(s) 'MDMX' (" in out
    assert "(did you mean 'mdm'?)" in out  # case and a near miss


def test_traces_of_one_folder_name_get_distinct_labels(tmp_path: Path) -> None:
    """``--trace sm61/vecadd --trace sm70/vecadd`` was refused ('workload labels must be
    unique ... add label') with no option to add one: such traces are labelled by the
    shortest path tails that differ; a unique folder name stays the label."""
    from mdm.cli.study import _labels

    a, b = tmp_path / "x" / "sm61" / "app", tmp_path / "y" / "sm61" / "app"
    c, d = tmp_path / "sm70" / "app", tmp_path / "other"
    got = dict((str(t), lab) for t, lab in _labels([a, b, c, d / "kernelslist.g"]))
    assert got == {
        str(a): "x/sm61/app",
        str(b): "y/sm61/app",
        str(c): "sm70/app",
        str(d / "kernelslist.g"): None,
    }
