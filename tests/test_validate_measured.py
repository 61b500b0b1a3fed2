"""mdm validate --measured (hardware / any measured times) and the Nsight Compute import."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import mdm.pipeline
from mdm.cli.main import app as cli
from mdm.config import load_gpu
from mdm.errors import ConfigError
from mdm.explore.accelsim_log import log_options
from mdm.explore.measured import load_measured, validate_measured
from mdm.explore.ncu import measurement, ncu_to_measured, read_ncu
from mdm.explore.validate import LOGGED_OPTIONS, load_results, validate
from mdm.pipeline import predict_app
from mdm.traces.model import LazyApp
from mdm.traces.workloads import generate

DATA = Path(__file__).parent / "data"
STENCIL = "builtin:stencil2d?W=64&H=32&sweeps=2"
STENCIL_ARGS: dict[str, Any] = {"W": 64, "H": 32, "sweeps": 2}
STRIDE = "builtin:stride?ctas=4&gs=32"
# reference runs of the consistency test: MD, NMD (2 kernels) and calib, both architectures
CONSISTENCY = [
    ("stride32", "mdm_pascal"),
    ("stencil2d", "mdm_pascal"),
    ("pchase", "SM7_QV100"),
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


# ---------------------------------------------------------------- (a) consistency
def _as_run(reference_dir: Path, arch: str, run_id: str, tmp_path: Path) -> Path:
    """A copy of ``arch``'s config folder (same folder name, so the same gpu label) with
    the launch latencies the run's log shows, as ``mdm validate --reference`` imports it
    (:func:`mdm.explore.validate.run_options`)."""
    folder = tmp_path / "configs" / arch
    if not folder.is_dir():
        shutil.copytree(reference_dir / "configs" / arch, folder)
    cfg = folder / "gpgpusim.config"
    text = cfg.read_text()
    for name, value in log_options(
        reference_dir / "logs" / f"{run_id}.log.xz", LOGGED_OPTIONS
    ).items():
        text = re.sub(rf"^{re.escape(name)}\s.*$", "", text, flags=re.M)
        text += f"\n{name} {value}\n"
    cfg.write_text(text)
    return cfg


def test_measured_equals_reference_path(reference_dir: Path, tmp_path: Path) -> None:
    """Reference baselines fed as measured cycles give exactly the --reference errors."""
    table = load_results(reference_dir / "results.csv")
    base = table[table["sweep_param"] == "baseline"].set_index(["workload", "arch"])
    rows, kernel_rows, run_ids = [], [], []
    for wl, arch in CONSISTENCY:
        rec = base.loc[(wl, arch)]
        trace = os.path.relpath(reference_dir / "traces" / rec["isa"] / wl, tmp_path)
        gpu = os.path.relpath(_as_run(reference_dir, arch, rec["run_id"], tmp_path), tmp_path)
        run_ids.append(rec["run_id"])
        rows.append(
            {
                "run_id": rec["run_id"],
                "trace": trace,
                "gpu": gpu,
                "cycles": rec["gpu_tot_sim_cycle"],
                "class": rec["class"],
            }
        )
        if wl == "stencil2d":  # per-kernel rows from the reference's kernel_cycles
            for k, c in enumerate(str(rec["kernel_cycles"]).split(";")):
                kernel_rows.append(
                    {
                        "run_id": f"{rec['run_id']}__k{k}",
                        "trace": trace,
                        "gpu": gpu,
                        "kernel": k,
                        "cycles": float(c),
                        # kept out of the MD/NMD means, so those equal the reference's
                        "class": "calib",
                    }
                )
    path = _write(tmp_path / "measured.csv", rows + kernel_rows)
    models = ["mdm", "gpumech"]
    ref = validate(reference_dir, models, run_ids, workers=1)
    mes = validate_measured(path, models, workers=1)

    r = ref.runs.set_index(["run_id", "model"]).sort_index()
    m = mes.runs.set_index(["run_id", "model"]).loc[r.index]
    assert list(m["error"]) == list(r["error"])  # bitwise: same eq. 11 code, same numbers
    assert list(m["cycles"]) == list(r["cycles"])
    assert list(m["arch"]) == list(r["arch"])  # gpu label of a gpgpusim.config = its folder
    for model in models:
        a, b = ref.summary["models"][model], mes.summary["models"][model]
        for key in ("mean_abs_error", "mean_abs_error_md", "mean_abs_error_nmd"):
            assert b[key] == pytest.approx(a[key], rel=1e-12)
    # per-kernel rows agree with the reference's per-kernel errors (from the logs)
    rk = ref.kernels.set_index(["run_id", "model", "kernel"])
    for row in mes.kernels.itertuples():
        rid = row.run_id.rsplit("__k", 1)[0]
        want = rk.loc[(rid, row.model, row.kernel)]
        assert row.cycles_sim == want["cycles_sim"]
        assert row.kernel_name == want["kernel_name"]
        assert row.error == pytest.approx(want["error"], rel=1e-12, abs=1e-15)
    assert len(mes.kernels) == 2 * len(models)


# ---------------------------------------------------------------- (b) conversions
def test_time_clock_conversion_and_kernel_rows(tmp_path: Path) -> None:
    gpu = load_gpu("mdm_pascal")
    app = generate("stencil2d", 0, **STENCIL_ARGS)
    name = app.kernels[0].name
    rows = [
        {"run_id": "app", "trace": STENCIL, "gpu": "mdm_pascal", "cycles": 5000, "class": "NMD"},
        {"run_id": "k0", "trace": STENCIL, "gpu": "mdm_pascal", "kernel": "0", "cycles": 2500},
        # 2 us at 1500 MHz = 3000 cycles; predicted at 1500 MHz
        {
            "run_id": "k1_clock",
            "trace": STENCIL,
            "gpu": "mdm_pascal",
            "kernel": "1",
            "time_us": 2,
            "sm_clock_mhz": 1500,
        },
        # 3 us without a clock: the configuration's clock
        {"run_id": "app_t", "trace": STENCIL, "gpu": "mdm_pascal", "time_us": 3},
        # by name (function name of the trace's full signature): one match needed
        {
            "trace": STRIDE,
            "gpu": "mdm_pascal",
            "kernel": "strided_square_kernel_GS32",
            "cycles": 900,
        },
        {"trace": STRIDE, "gpu": "mdm_pascal", "kernel": "0", "cycles": 900},
    ]
    path = _write(tmp_path / "m.csv", rows)
    res = validate_measured(path, ["mdm"], workers=1)
    runs = res.runs.set_index("run_id")

    base = predict_app(app, gpu, ["mdm"])
    fast = predict_app(app, gpu.with_updates({"core_clock_mhz": 1500.0}), ["mdm"])
    k_base = [p.cycles for p in base.kernels["mdm"]]
    assert runs.loc["app", "cycles"] == pytest.approx(base.cycles("mdm"))
    assert runs.loc["app", "cycles"] == pytest.approx(sum(k_base))  # app = sum of kernels
    assert runs.loc["app", "error"] == pytest.approx(5000 / base.cycles("mdm") - 1)
    assert runs.loc["k0", "cycles"] == pytest.approx(k_base[0])
    assert runs.loc["k0", "error"] == pytest.approx(2500 / k_base[0] - 1)
    assert runs.loc["k0", "warp_insts"] == app.kernels[0].n_instructions
    assert runs.loc["k0", "kernel_name"] == name
    assert runs.loc["k1_clock", "cycles_measured"] == pytest.approx(3000.0)
    assert runs.loc["k1_clock", "clock_source"] == "measured"
    assert runs.loc["k1_clock", "cycles"] == pytest.approx(fast.kernels["mdm"][1].cycles)
    assert runs.loc["k1_clock", "error"] == pytest.approx(
        3000.0 / fast.kernels["mdm"][1].cycles - 1
    )
    assert runs.loc["app_t", "cycles_measured"] == pytest.approx(3 * gpu.core_clock_mhz)
    assert res.summary["clock_from_config"] == ["app_t"]
    by_name = f"{STRIDE}__mdm_pascal__strided_square_kernel_GS32"
    assert runs.loc[by_name, "error"] == runs.loc[f"{STRIDE}__mdm_pascal__k0", "error"]
    assert runs.loc[by_name, "workload"] == f"{STRIDE}[0]"
    s = res.summary["models"]["mdm"]
    assert s["mean_abs_error"] == pytest.approx(runs["abs_error"].mean())
    assert s["mean_abs_error_by_class"]["NMD"] == pytest.approx(runs.loc["app", "abs_error"])
    assert set(s["mean_abs_error_by_gpu"]) == {"mdm_pascal"}
    assert set(res.kernels["run_id"]) == {"k0", "k1_clock", by_name, f"{STRIDE}__mdm_pascal__k0"}

    # the same table as Parquet gives the same errors
    pq = tmp_path / "m.parquet"
    df = pd.read_csv(path, dtype={"kernel": str})
    df.to_parquet(pq)
    res2 = validate_measured(pq, ["mdm"], workers=1)
    assert res2.runs.set_index("run_id")["error"].to_dict() == runs["error"].to_dict()


def test_one_cache_simulation_per_cache_key(tmp_path: Path, cache_sim_calls: list[tuple]) -> None:
    rows = [
        {"trace": STRIDE, "gpu": "mdm_pascal", "cycles": 1000},
        {"trace": STRIDE, "gpu": "mdm_pascal", "kernel": 0, "cycles": 1000},
        {"trace": STRIDE, "gpu": "mdm_pascal", "cycles": 1000, "sm_clock_mhz": 1000},
        {"trace": STRIDE, "gpu": "gtx1080", "cycles": 1000},
    ]
    res = validate_measured(_write(tmp_path / "m.csv", rows), ["mdm"], workers=1)
    assert len(res.runs) == 4
    assert (
        len(cache_sim_calls) == len(set(cache_sim_calls)) == 3
    )  # the clock is part of the cache key


def test_cli_measured_json_and_report(tmp_path: Path) -> None:
    rows = [{"trace": STRIDE, "gpu": "mdm_pascal", "time_us": 1.5, "class": "MD"}]
    path = _write(tmp_path / "m.csv", rows)
    args = ["validate", "--measured", str(path), "--models", "mdm", "--workers", "1"]
    r = CliRunner().invoke(cli, [*args, "--json", "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert set(out["models"]["mdm"]) >= {"mean_abs_error", "mean_abs_error_by_gpu"}
    assert out["clock_from_config"] == [f"{STRIDE}__mdm_pascal"]
    assert (tmp_path / "out" / "report.html").exists()
    assert (tmp_path / "out" / "figures" / "fig5_mdm_pascal.svg").exists()
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and "per gpu: mdm_pascal" in r.output and "note: 1 run" in r.output
    r = CliRunner().invoke(cli, ["validate", "--models", "mdm"])
    assert r.exit_code == 1 and "exactly one of --reference" in r.output


def test_measured_dvfs_sweep_gets_speedup_errors(tmp_path: Path) -> None:
    """A hardware DVFS sweep (same GPU, the SM clock lowered): each point's predicted
    speedup over the baseline row against the measured one, in the CLI line too."""
    rows = [
        {"run_id": "b", "trace": STRIDE, "gpu": "mdm_pascal", "cycles": 1200, "class": "MD"},
        {
            "run_id": "p",
            "trace": STRIDE,
            "gpu": "mdm_pascal",
            "time_us": 1.0,
            "sm_clock_mhz": 1000,  # 1,000 cycles
            "class": "MD",
            "sweep_param": "sm_clock_mhz",
            "sweep_value": "1000",
        },
    ]
    path = _write(tmp_path / "dvfs.csv", rows)
    res = validate_measured(path, ["mdm"], workers=1)
    runs = res.runs.set_index("run_id")
    cyc = runs["cycles"]  # the model's cycles at each clock
    assert cyc["p"] != cyc["b"]
    assert math.isnan(runs.loc["b", "speedup_error"])
    assert runs.loc["p", "speedup_sim"] == pytest.approx(1200 / 1000)  # same instructions
    assert runs.loc["p", "speedup_model"] == pytest.approx(cyc["b"] / cyc["p"])
    want = (cyc["b"] / cyc["p"]) / (1200 / 1000) - 1
    assert runs.loc["p", "speedup_error"] == pytest.approx(want)
    assert res.summary["models"]["mdm"]["mean_abs_speedup_error"] == pytest.approx(abs(want))
    args = ["validate", "--measured", str(path), "--models", "mdm", "--workers", "1"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0 and f"mean |speedup err| {abs(want):.1%}" in r.output


# ---------------------------------------------------------------- (c) bad rows
GOOD = {"trace": STRIDE, "gpu": "mdm_pascal", "cycles": "100"}


@pytest.mark.parametrize(
    ("bad", "row", "expect"),
    [
        ({"gpu": "no_such_gpu"}, 2, "gpu 'no_such_gpu'"),
        ({"kernel": "1"}, 2, "kernel index 1 out of range"),
        ({"kernel": "-1"}, 2, "kernel index -1 must be >= 0"),
        ({"kernel": "nope_kernel"}, 2, "'nope_kernel' is not in the trace"),
        ({"time_us": "3"}, 2, "exactly one of cycles and time_us, got both"),
        ({"cycles": ""}, 2, "exactly one of cycles and time_us, got neither"),
        ({"cycles": "0"}, 2, "cycles must be a positive number"),
        ({"cycles": "", "time_us": "-2"}, 2, "time_us must be a positive number"),
        ({"sm_clock_mhz": "abc"}, 2, "sm_clock_mhz 'abc' is not a number"),
        ({"trace": "no/such/trace"}, 2, "no such file"),
        ({"trace": ""}, 2, "empty trace"),
        ({"run_id": "x"}, 2, "run_id 'x' already used by row 1"),
        ({"l2_miss_rate": "1.5"}, 2, "l2_miss_rate must be a rate in [0, 1]"),
        ({"l1d_rd_miss_rate": "n/a"}, 2, "l1d_rd_miss_rate 'n/a' is not a number"),
    ],
)
def test_bad_row_names_file_and_row(
    tmp_path: Path, bad: dict[str, str], row: int, expect: str
) -> None:
    first = {**GOOD, "kernel": "", "time_us": "", "sm_clock_mhz": "", "run_id": "x"}
    second = {**first, "run_id": "y", **bad}
    path = _write(tmp_path / "m.csv", [first, second])
    with pytest.raises(ConfigError) as ei:
        validate_measured(path, ["mdm"], workers=1)
    msg = str(ei.value)
    assert msg.startswith(str(path)) and f"row {row}:" in msg and expect in msg, msg
    r = CliRunner().invoke(cli, ["validate", "--measured", str(path), "--workers", "1"])
    assert r.exit_code == 1 and r.output.startswith(f"error: {path}: row {row}:"), r.output


def test_missing_columns_and_empty_table(tmp_path: Path) -> None:
    p = _write(tmp_path / "m.csv", [{"trace": STRIDE, "cycles": 1}])
    with pytest.raises(ConfigError, match=r"m\.csv: measured table lacks column\(s\) \['gpu'\]"):
        load_measured(p)
    p = _write(tmp_path / "m.csv", [{"trace": STRIDE, "gpu": "mdm_pascal"}])
    with pytest.raises(ConfigError, match=r"lacks column\(s\) \['cycles\|time_us'\]"):
        load_measured(p)
    p.write_text("trace,gpu,cycles\n")
    with pytest.raises(ConfigError, match="no data rows"):
        load_measured(p)
    for name in ("gone.csv", "gone.parquet"):
        with pytest.raises(ConfigError, match=rf"{name}: measured table not found"):
            load_measured(tmp_path / name)


def test_class_names_are_read_in_any_case(tmp_path: Path) -> None:
    """``md`` counts as MD (the summaries split by the exact names MD, NMD, calib);
    other names are kept as given, an empty one is 'unknown'."""
    given = ["md", "Nmd", "CALIB", "mine", ""]
    rows = [{"trace": STRIDE, "gpu": "mdm_pascal", "cycles": 1, "class": c} for c in given]
    t = load_measured(_write(tmp_path / "m.csv", rows))
    assert list(t["class"]) == ["MD", "NMD", "calib", "mine", "unknown"]


def test_ambiguous_kernel_name(tmp_path: Path) -> None:
    rows = [{"trace": STENCIL, "gpu": "mdm_pascal", "kernel": "jacobi5pt_kernel", "cycles": 9}]
    with pytest.raises(ConfigError, match=r"row 1: kernel 'jacobi5pt_kernel' matches kernels"):
        validate_measured(_write(tmp_path / "m.csv", rows), ["mdm"], workers=1)


def test_paths_relative_to_the_table(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "my_gpu.toml").write_text('base = "mdm_pascal"\nn_sm = 14\n')
    t = load_measured(_write(sub / "m.csv", [{**GOOD, "gpu": "my_gpu.toml"}]))
    assert t.loc[0, "gpu"] == str(sub / "my_gpu.toml") and t.loc[0, "gpu_label"] == "my_gpu"
    assert t.loc[0, "trace"] == STRIDE and t.loc[0, "class"] == "unknown"
    assert t.loc[0, "run_id"] == f"{STRIDE}__my_gpu"


# ---------------------------------------------------------------- (d) Nsight Compute
def test_read_ncu_details_page() -> None:
    path = DATA / "ncu_details.csv"
    launches = read_ncu(path)
    assert [lu.id for lu in launches] == ["0", "1"]
    assert [lu.kernel_name for lu in launches] == ["jacobi5pt_kernel"] * 2
    assert launches[0].line == 7  # after 5 ==PROF==/program lines and the header
    m0, m1 = measurement(path, launches[0]), measurement(path, launches[1])
    # Elapsed Cycles "1,234" cycle; SM Frequency 1.50 cycle/nsecond = 1500 MHz
    assert m0 == {"cycles": 1234.0, "sm_clock_mhz": 1500.0}
    # "2,048" cycles; SM Frequency "1,410.00" Mhz
    assert m1 == {"cycles": 2048.0, "sm_clock_mhz": 1410.0}


def test_read_ncu_raw_page() -> None:
    path = DATA / "ncu_raw.csv"
    launches = read_ncu(path)
    assert len(launches) == 2
    # gpu__time_duration.sum "1,250" nsecond = 1.25 us; 1,400.00 cycle/usecond = 1400 MHz
    assert measurement(path, launches[0]) == {"time_us": 1.25, "sm_clock_mhz": 1400.0}
    assert measurement(path, launches[1]) == {"time_us": 2.0, "sm_clock_mhz": 1600.0}


def test_from_ncu_then_validate(tmp_path: Path) -> None:
    out = tmp_path / "meas" / "measured.csv"
    r = CliRunner().invoke(
        cli,
        [
            "measure",
            "from-ncu",
            str(DATA / "ncu_raw.csv"),
            "--trace",
            STENCIL,
            "--gpu",
            "mdm_pascal",
            "--out",
            str(out),
            "--class",
            "NMD",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "2 launch(es), time_us, SM clock from ncu" in r.output
    df = pd.read_csv(out)
    assert list(df["kernel"]) == [0, 1] and list(df["class"]) == ["NMD", "NMD"]
    assert list(df["time_us"]) == [1.25, 2.0] and "cycles" not in df
    res = validate_measured(out, ["mdm"], workers=1)
    runs = res.runs.set_index("kernel_index")
    assert runs.loc[0, "cycles_measured"] == pytest.approx(1.25 * 1400)
    assert runs.loc[1, "cycles_measured"] == pytest.approx(2.0 * 1600)
    assert list(runs["clock_source"]) == ["measured", "measured"]


def test_from_ncu_relative_paths(reference_dir: Path, tmp_path: Path) -> None:
    trace = str(reference_dir / "traces" / "sm61" / "stencil2d")
    gpu = str(reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config")
    out = tmp_path / "x" / "m.csv"
    df = ncu_to_measured(DATA / "ncu_details.csv", trace, gpu, out)
    # relative to the table, from the resolved paths (../shared may be a symlink)
    assert df.loc[0, "trace"] == os.path.relpath(Path(trace).resolve(), out.parent.resolve())
    t = load_measured(out)
    assert Path(t.loc[0, "trace"]).resolve() == Path(trace).resolve()
    assert t.loc[0, "gpu_label"] == "mdm_pascal" and list(t["cycles"]) == [1234.0, 2048.0]
    # the second launch without its cycle count: its duration is used, and the status
    # line says which launches have which (it said 'time_us' for all)
    lines = (DATA / "ncu_details.csv").read_text().splitlines(keepends=True)
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("".join(x for x in lines if not x.startswith('"1"') or "Elapsed" not in x))
    args = ["measure", "from-ncu", str(mixed), "--trace", trace, "--gpu", gpu]
    r = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "mixed_out.csv")])
    assert r.exit_code == 0, r.output
    assert "2 launch(es), cycles for 1, time_us for 1, SM clock from ncu" in r.output


def test_from_ncu_mismatches(tmp_path: Path) -> None:
    text = (DATA / "ncu_details.csv").read_text()
    lines = text.splitlines(keepends=True)
    # the second launch renamed: its first line is the error's line
    renamed = "".join(lines[:11]) + "".join(
        ln.replace('"jacobi5pt_kernel"', '"vecadd_kernel"') for ln in lines[11:]
    )
    p = tmp_path / "ncu.csv"
    p.write_text(renamed)
    with pytest.raises(ConfigError) as ei:
        ncu_to_measured(p, STENCIL, "mdm_pascal")
    msg = str(ei.value)
    assert msg.startswith(f"{p}: line 12: launch 1") and "'vecadd_kernel'" in msg, msg
    assert "'jacobi5pt_kernel'" in msg
    with pytest.raises(ConfigError, match="2 profiled launch.*has 1 kernel"):
        ncu_to_measured(DATA / "ncu_details.csv", STRIDE, "mdm_pascal")
    r = CliRunner().invoke(
        cli,
        [
            "measure",
            "from-ncu",
            str(p),
            "--trace",
            STENCIL,
            "--gpu",
            "mdm_pascal",
            "--out",
            str(tmp_path / "m.csv"),
        ],
    )
    assert r.exit_code == 1 and r.output.startswith(f"error: {p}: line 12:"), r.output


def test_ncu_bad_values(tmp_path: Path) -> None:
    p = tmp_path / "ncu.csv"
    src = (DATA / "ncu_details.csv").read_text()
    p.write_text(
        src.replace('"cycle","1,234"', '"cycle","n/a"').replace(
            '"usecond","0.82"', '"furlong","0.82"'
        )
    )
    with pytest.raises(ConfigError, match=r"line 11: Duration: unknown unit 'furlong'"):
        measurement(p, read_ncu(p)[0])
    p.write_text("==PROF== nothing profiled\n")
    with pytest.raises(ConfigError, match="no CSV records"):
        read_ncu(p)
    shutil.copy(DATA / "ncu_raw.csv", p)
    p.write_text(p.read_text().replace('"1,250"', '"-5"'))
    with pytest.raises(ConfigError, match=r"line 7: gpu__time_duration.sum must be positive"):
        measurement(p, read_ncu(p)[0])
    assert math.isfinite(measurement(p, read_ncu(p)[1])["time_us"])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 10**9), st.integers(1, 3000))
def test_ncu_values_with_thousands_separators(tmp_path_factory: Any, cyc: int, mhz: int) -> None:
    p = tmp_path_factory.mktemp("ncu") / "ncu.csv"
    head = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
    p.write_text(
        f"==PROF== Disconnected\n{head}"
        f'"0","k","Elapsed Cycles","cycle","{cyc:,}"\n'
        f'"0","k","SM Frequency","Mhz","{mhz:,}.00"\n'
    )
    assert measurement(p, read_ncu(p)[0]) == {"cycles": float(cyc), "sm_clock_mhz": float(mhz)}


def test_ncu_trailing_commas(tmp_path: Path) -> None:
    """Some ncu versions end every CSV line with a comma: same launches and values."""
    for name in ("ncu_details.csv", "ncu_raw.csv"):
        lines = (DATA / name).read_text().splitlines()
        p = tmp_path / name
        p.write_text("\n".join(ln + "," if ln.startswith('"') else ln for ln in lines) + "\n")
        got = [measurement(p, lu) for lu in read_ncu(p)]
        want = [measurement(DATA / name, lu) for lu in read_ncu(DATA / name)]
        assert got == want


# ---------------------------------------------------------------- (e) large traces
def test_streamed_trace_gives_the_cached_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_sim_calls: list[tuple]
) -> None:
    """Above STREAM_TRACE_BYTES a trace is read one kernel at a time, one pass per cache
    key (no simulate_app call, no whole trace held), with the cached path's runs; kernels
    are selected by index or name from the names the pass read."""
    from mdm.explore import runner
    from mdm.traces.accelsim import write_app

    trace = write_app(generate("stencil2d", 0, **STENCIL_ARGS), tmp_path / "stencil").parent
    second = trace / "kernel-2.traceg"  # a name of its own, to be selected by
    second.write_text(second.read_text().replace("jacobi5pt_kernel(", "jacobi5pt_odd(", 1))
    common = {"trace": "stencil", "gpu": "mdm_pascal"}
    rows = [
        {**common, "run_id": "app", "cycles": 5000, "class": "NMD"},
        {**common, "run_id": "k1", "kernel": "1", "cycles": 2500},
        {**common, "run_id": "byname", "kernel": "jacobi5pt_odd", "cycles": 2400},
        {**common, "run_id": "clock", "kernel": "0", "time_us": 2, "sm_clock_mhz": 1500},
        {**common, "run_id": "clock_app", "time_us": 4, "sm_clock_mhz": 1500},
        {**common, "run_id": "other", "gpu": "gtx1080", "cycles": 5000},
    ]
    path = _write(tmp_path / "m.csv", rows)
    cached = validate_measured(path, ["mdm", "gpumech"], workers=1)
    n_sims = len(cache_sim_calls)
    assert n_sims == 3  # mdm_pascal, mdm_pascal at 1500 MHz, gtx1080

    monkeypatch.setattr(runner, "STREAM_TRACE_BYTES", 0)
    passes: list[int] = []
    real = mdm.pipeline.predict_app_configs

    def spy(app, gpus, *a, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
        assert isinstance(app, LazyApp)
        passes.append(len(gpus))
        return real(app, gpus, *a, **kw)

    monkeypatch.setattr(mdm.pipeline, "predict_app_configs", spy)
    streamed = validate_measured(path, ["mdm", "gpumech"], workers=1)
    assert len(cache_sim_calls) == n_sims  # no eager simulation
    assert sorted(passes) == [1, 1, 1]  # one lazy pass per cache key
    pd.testing.assert_frame_equal(streamed.runs, cached.runs)
    pd.testing.assert_frame_equal(streamed.kernels, cached.kernels)
    runs = streamed.runs.set_index("run_id")
    assert set(runs.loc["byname", "kernel_index"]) == {1}  # one row per model
    assert set(runs.loc["byname", "kernel_name"]) == {
        "jacobi5pt_odd(float const*, float*, int, int)"
    }

    # a bad kernel is the same error in both paths, found after the pass
    bad = _write(tmp_path / "bad.csv", [*rows, {**common, "kernel": "7", "cycles": 1}])
    with pytest.raises(ConfigError, match=r"row 7: kernel index 7 out of range; the trace has 2"):
        validate_measured(bad, ["mdm"], workers=1)

    # a malformed kernel body, met during the pass, names the file and the table's row
    second.write_text(second.read_text().replace("\n0000 ", "\n0000 zz", 1))
    with pytest.raises(ConfigError, match=r"m\.csv: row 1: trace .*kernel-2\.traceg:\d+"):
        validate_measured(path, ["mdm"], workers=1)


def test_accelsim_logs_as_measured_runs(reference_dir: Path, tmp_path: Path) -> None:
    """`mdm measure from-accelsim`: each log gives its run's trace (the dump's -trace),
    configuration (the log itself as --gpu) and cycles; validating that table gives the
    --reference path's errors, run for run, and per kernel the logs' kernel cycles."""
    from mdm.explore.accelsim_runs import logs_to_measured

    table = load_results(reference_dir / "results.csv")
    runs = ["stride32__mdm_pascal__baseline", "gather__mdm_pascal__l1_mshr_64"]
    runs += [table[table["arch"] == "SM7_QV100"]["run_id"].iloc[0]]
    logs = [reference_dir / "logs" / f"{r}.log.xz" for r in runs]
    out = tmp_path / "m" / "accelsim.csv"
    res = CliRunner().invoke(
        cli,
        ["measure", "from-accelsim", *map(str, logs), "--out", str(out),
         "--traces-root", str(reference_dir)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    df = pd.read_csv(out)
    assert list(df["run_id"]) == runs
    assert list(df["cycles"]) == list(table.set_index("run_id").loc[runs, "gpu_tot_sim_cycle"])
    models = ["mdm", "gpumech"]
    ref = validate(reference_dir, models, runs, workers=1)
    mes = validate_measured(out, models, workers=1)
    r = ref.runs.set_index(["run_id", "model"]).sort_index()
    m = mes.runs.set_index(["run_id", "model"]).loc[r.index]
    assert list(m["error"]) == list(r["error"])
    # the logs' miss rates (the table's, unrounded) against the cache simulation's
    want, got = ref.summary["cache_simulation"], mes.summary["cache_simulation"]
    assert got.keys() == want.keys() and got["runs"] == want["runs"] == len(runs)
    assert all(got[k] == pytest.approx(want[k], abs=1e-4) for k in want)
    assert list(df["l2_miss_rate"]) == list(table.set_index("run_id").loc[runs, "l2_miss_rate"])
    # per kernel: the logs' gpu_sim_cycle, one row per kernel of the trace
    per = logs_to_measured(logs[:1], tmp_path / "k.csv", traces_root=reference_dir, per_kernel=True)
    kc = [float(c) for c in str(table.set_index("run_id").loc[runs[0], "kernel_cycles"]).split(";")]
    assert list(per["cycles"]) == kc and list(per["kernel"]) == list(range(len(kc)))
    # without --traces-root: the log's folder, then those above it (reference/logs/..)
    assert logs_to_measured(logs[:1])["trace"].iloc[0] == os.path.relpath(
        (reference_dir / "traces" / "sm61" / "stride32" / "kernelslist.g").resolve()
    )
    # a trace found nowhere names the log and the -trace line
    with pytest.raises(ConfigError, match=r"line \d+: trace traces/.* not found under"):
        logs_to_measured(logs[:1], traces_root=tmp_path)
    # a killed run's log stops after its last finished kernel: refused, not scored whole
    import lzma

    with lzma.open(reference_dir / "logs" / "pchase__mdm_pascal__baseline.log.xz", "rt") as f:
        text = f.read()
    killed = tmp_path / "killed.log"
    killed.write_text(text[: text.rindex("kernel_name")])  # stops before the last kernel
    for per_kernel in (False, True):
        with pytest.raises(ConfigError, match=r"3 kernel statistics blocks .* 4 kernels"):
            logs_to_measured([killed], traces_root=reference_dir, per_kernel=per_kernel)


def test_accelsim_logs_per_kernel_miss_rates(reference_dir: Path, tmp_path: Path) -> None:
    """`--per-kernel` rows carry each kernel's own miss rates (differences of the log's
    cumulative counters): they combine, weighted by the kernels' reads and L2 accesses,
    into the run's rates; and the cache simulation's per kernel agrees with them,
    including the second stencil2d kernel's L2 hits on the lines the first left there."""
    from mdm.explore.accelsim_log import parse_log
    from mdm.explore.accelsim_runs import kernel_miss_rates, logs_to_measured, miss_rates

    log = reference_dir / "logs" / "stencil2d__mdm_pascal__baseline.log.xz"
    parsed = parse_log(log)
    per = kernel_miss_rates(parsed)
    assert len(per) == len(parsed.kernels) == 2
    # the first kernel's rates are its block's; the counters are cumulative
    first = parsed.kernels[0].stats
    assert per[0]["l1d_rd_miss_rate"] == miss_rates(first)["l1d_rd_miss_rate"]
    assert per[0]["l2_miss_rate"] == (
        first["L2_total_cache_misses"] / first["L2_total_cache_accesses"]
    )
    keys = [f"TC_GLOBAL_ACC_R_{x}" for x in ("HIT", "HIT_RESERVED", "MISS", "SECTOR_MISS")]
    reads = [sum(k.stats[x] for x in keys) for k in parsed.kernels]
    reads = [reads[0], reads[1] - reads[0]]
    acc = [k.stats["L2_total_cache_accesses"] for k in parsed.kernels]
    acc = [acc[0], acc[1] - acc[0]]
    run = miss_rates(parsed.kernels[-1].stats)
    l1 = sum(p["l1d_rd_miss_rate"] * n for p, n in zip(per, reads, strict=True)) / sum(reads)
    l2 = sum(p["l2_miss_rate"] * n for p, n in zip(per, acc, strict=True)) / sum(acc)
    assert l1 == pytest.approx(run["l1d_rd_miss_rate"], rel=1e-12)
    assert l2 == pytest.approx(run["l2_miss_rate"], abs=1e-4)  # the log prints 4 decimals
    # the second kernel reads the lines the first fetched: the L2 keeps them
    assert per[1]["l2_miss_rate"] < 0.1 * per[0]["l2_miss_rate"]

    out = tmp_path / "k.csv"
    df = logs_to_measured([log], out, traces_root=reference_dir, per_kernel=True)
    assert list(df["l1d_rd_miss_rate"]) == [p["l1d_rd_miss_rate"] for p in per]
    assert list(df["l2_miss_rate"]) == [p["l2_miss_rate"] for p in per]
    res = validate_measured(out, ["mdm"], workers=1)
    runs = res.runs.set_index("run_id").loc[df["run_id"]]
    # each kernel row is compared with that kernel's simulation, not the application's
    assert runs["cachesim_l2_miss_rate"].iloc[1] < 0.1 * runs["cachesim_l2_miss_rate"].iloc[0]
    assert (runs["cachesim_l2_miss_rate"] - runs["l2_miss_rate"]).abs().max() < 0.02
    assert res.summary["cache_simulation"]["runs"] == 2
    # a block without the counters gives NaN, not an error
    del parsed.kernels[1].stats["L2_total_cache_misses"]
    assert math.isnan(kernel_miss_rates(parsed)[1]["l2_miss_rate"])


def test_accelsim_run_rates_are_the_last_blocks(reference_dir: Path, tmp_path: Path) -> None:
    """A run's row (not per kernel) carries the rates of its log's last block, where
    GPGPU-Sim's cumulative counters cover every kernel: for two-kernel stencil2d they
    are the results table's rates of that run. A kernel without L2 accesses of its own
    (its counters unchanged since the block before) has no L2 rate: NaN."""
    from mdm.explore.accelsim_log import parse_log
    from mdm.explore.accelsim_runs import kernel_miss_rates, logs_to_measured

    run = "stencil2d__mdm_pascal__baseline"
    log = reference_dir / "logs" / f"{run}.log.xz"
    df = logs_to_measured([log], tmp_path / "m.csv", traces_root=reference_dir)
    want = load_results(reference_dir / "results.csv").set_index("run_id").loc[run]
    assert len(df) == 1
    assert df["l2_miss_rate"].iloc[0] == pytest.approx(want["l2_miss_rate"], abs=1e-4)
    assert df["l1d_rd_miss_rate"].iloc[0] == pytest.approx(want["l1d_rd_miss_rate"], abs=1e-4)
    parsed = parse_log(log)
    for key in ("L2_total_cache_accesses", "L2_total_cache_misses"):
        parsed.kernels[1].stats[key] = parsed.kernels[0].stats[key]
    rates = kernel_miss_rates(parsed)
    assert math.isnan(rates[1]["l2_miss_rate"]) and not math.isnan(rates[0]["l2_miss_rate"])
