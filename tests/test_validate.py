"""mdm validate on a subset of the reference runs, with a fake pipeline backend."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.errors import ConfigError
from mdm.explore.validate import ipc_error, load_results, run_options, validate, with_speedups

RUNS = [
    "stencil2d__mdm_pascal__baseline",
    "gather__mdm_pascal__baseline",
    "gather__mdm_pascal__l1_mshr_32",
    "gather__mdm_pascal__l1_mshr_64",
]


class FakePred:
    def __init__(self, cycles: float, n_kernels: int, models: list[str]) -> None:
        self.cycles, self.n, self.models = cycles, n_kernels, models

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for j, m in enumerate(self.models):
            c = self.cycles * (1 + j)
            rows += [
                {"model": m, "kernel": k, "cycles": c / self.n, "warp_insts": 500 / self.n}
                for k in range(self.n)
            ]
            rows.append({"model": m, "kernel": "total", "cycles": c, "warp_insts": 500.0})
        return rows


def fake_backend(sims: list[Any]) -> dict[str, Any]:
    def open_trace(p: Path) -> str:
        assert p.is_dir(), p
        return p.name

    def simulate(app: str, gpu: tuple) -> str:
        sims.append((app, gpu[0]))
        return "cache"

    def predict(prep: str, gpu: tuple, models: list[str], cache: Any) -> FakePred:
        assert cache == "cache"
        return FakePred(1000.0 + len(gpu[1]), 2 if prep == "stencil2d" else 1, models)

    return {
        "open_trace": open_trace,
        "prepare": lambda app: app,
        "import_accelsim": lambda cfg, extra: (str(cfg), extra),
        "cache_key": lambda gpu: gpu[0],  # one cache simulation per workload and arch
        "simulate_app": simulate,
        "predict_app": predict,
    }


def test_validate_subset_errors_and_summary(reference_dir: Path) -> None:
    sims: list[Any] = []
    res = validate(reference_dir, ["mdm", "gpumech"], RUNS, backend=fake_backend(sims))
    assert sorted(sims) == [
        ("gather", str(reference_dir / "configs/mdm_pascal/gpgpusim.config")),
        ("stencil2d", str(reference_dir / "configs/mdm_pascal/gpgpusim.config")),
    ]
    table = load_results(reference_dir / "results.csv").set_index("run_id")
    assert len(res.runs) == len(RUNS) * 2
    for r in res.runs.itertuples():
        ref = table.loc[r.run_id]
        # the fake's cycles: 1000 + the length of the options the run was imported with
        extra = run_options(reference_dir, r.run_id, ref["extra_options"])
        cyc = (1000.0 + len(extra)) * (1 if r.model == "mdm" else 2)
        want = (500.0 / cyc - ref["warp_insts"] / ref["gpu_tot_sim_cycle"]) / (
            ref["warp_insts"] / ref["gpu_tot_sim_cycle"]
        )
        assert r.error == pytest.approx(want)
        assert r.abs_error == pytest.approx(abs(want))
    s = res.summary["models"]
    for m in ("mdm", "gpumech"):
        for k in ("mean_abs_error", "mean_abs_error_md", "mean_abs_error_nmd"):
            assert math.isfinite(s[m][k])
    md = res.runs[(res.runs["model"] == "mdm") & (res.runs["class"] == "MD")]
    assert s["mdm"]["mean_abs_error_md"] == pytest.approx(md["abs_error"].mean())
    # the gather MSHR sweep (32, 64, baseline 128) has a Spearman rho
    sp = res.spearman[(res.spearman["workload"] == "gather") & (res.spearman["model"] == "mdm")]
    assert len(sp) == 1 and sp["points"].iloc[0] == 3 and math.isfinite(sp["spearman"].iloc[0])
    # per-kernel errors from the logs: stencil2d has 2 kernels
    k = res.kernels[(res.kernels["run_id"] == RUNS[0]) & (res.kernels["model"] == "mdm")]
    assert list(k["kernel"]) == [0, 1]
    assert list(k["kernel_name"]) == [0, 1]  # the fake predictions name kernels 0, 1


def test_speedup_error_per_sweep_point(reference_dir: Path) -> None:
    """Each sweep point's IPC speedup over its baseline, simulated and predicted, and the
    error of the predicted one; a model off by the same factor everywhere has none."""
    res = validate(reference_dir, ["mdm", "gpumech"], RUNS, backend=fake_backend([]))
    table = load_results(reference_dir / "results.csv").set_index("run_id")
    ref0 = table.loc["gather__mdm_pascal__baseline"]
    points = 0
    for r in res.runs.itertuples():
        if r.run_id.startswith("gather") and r.run_id != "gather__mdm_pascal__baseline":
            ref = table.loc[r.run_id]
            sim = (ref["warp_insts"] / ref["gpu_tot_sim_cycle"]) / (
                ref0["warp_insts"] / ref0["gpu_tot_sim_cycle"]
            )
            # the fake's cycles: (1000 + len(options)) x (1 for mdm, 2 for gpumech)
            n0 = len(
                run_options(reference_dir, "gather__mdm_pascal__baseline", ref0["extra_options"])
            )
            n = len(run_options(reference_dir, r.run_id, ref["extra_options"]))
            model = (1000.0 + n0) / (1000.0 + n)
            assert r.speedup_sim == pytest.approx(sim)
            assert r.speedup_model == pytest.approx(model)
            assert r.speedup_error == pytest.approx(model / sim - 1.0)
            points += 1
        else:  # baselines
            assert math.isnan(r.speedup_error) and math.isnan(r.speedup_sim)
    assert points == 4  # two MSHR points x two models
    s = res.summary["models"]
    assert s["gpumech"]["mean_abs_error"] != pytest.approx(s["mdm"]["mean_abs_error"])
    assert s["gpumech"]["mean_abs_speedup_error"] == pytest.approx(
        s["mdm"]["mean_abs_speedup_error"]
    )
    pts = res.runs[(res.runs["model"] == "mdm") & res.runs["speedup_error"].notna()]
    assert s["mdm"]["mean_abs_speedup_error"] == pytest.approx(pts["speedup_error"].abs().mean())
    assert s["mdm"]["mean_abs_speedup_error_by_sweep"] == {
        "l1_mshr": pytest.approx(pts["speedup_error"].abs().mean())
    }
    row = res.by_sweep[
        (res.by_sweep["model"] == "mdm") & (res.by_sweep["sweep_param"] == "l1_mshr")
    ]
    assert row["mean_abs_speedup_error"].iloc[0] == pytest.approx(pts["speedup_error"].abs().mean())


@settings(max_examples=60, deadline=None)
@given(
    sim=st.lists(st.floats(0.1, 100.0), min_size=2, max_size=6),
    bias=st.floats(0.2, 5.0),
    noise=st.lists(st.floats(0.5, 2.0), min_size=6, max_size=6),
)
def test_speedups_ignore_a_constant_bias(sim: list[float], bias: float, noise: list[float]) -> None:
    """A model whose IPCs are the reference's times one factor has no speedup error;
    scaling a model's IPCs by a factor never changes its speedups."""
    n = len(sim)
    runs = pd.DataFrame(
        {
            "model": ["m"] * n,
            "arch": ["a"] * n,
            "workload": ["w"] * n,
            "sweep_param": ["baseline"] + ["x"] * (n - 1),
            "ipc_sim": sim,
            "ipc_model": [bias * v for v in sim],
        }
    )
    out = with_speedups(runs)
    assert out["speedup_error"].isna().tolist() == [True] + [False] * (n - 1)
    assert out["speedup_error"].iloc[1:].abs().max() < 1e-9
    noisy = runs.assign(ipc_model=[v * k for v, k in zip(sim, noise, strict=False)])
    scaled = noisy.assign(ipc_model=noisy["ipc_model"] * bias)
    a, b = with_speedups(noisy)["speedup_error"], with_speedups(scaled)["speedup_error"]
    assert np.allclose(a.iloc[1:], b.iloc[1:], rtol=1e-9)


def test_ipc_error_is_eq11_signed() -> None:
    assert ipc_error(1.5, 1.0) == pytest.approx(0.5)
    assert ipc_error(0.5, 1.0) == pytest.approx(-0.5)


def test_unknown_run_and_bad_table(reference_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope"):
        validate(reference_dir, ["mdm"], ["nope"], backend=fake_backend([]))
    p = tmp_path / "results.csv"
    pd.DataFrame({"workload": ["x"]}).to_csv(p, index=False)
    with pytest.raises(ConfigError, match="results.csv.*lacks"):
        load_results(p)
    # empty, header-only and absent tables: errors naming the file, not pandas' own
    header = (reference_dir / "results.csv").read_text().splitlines()[0]
    for text, why in (("", "is empty"), (header + "\n", "has no data rows")):
        p.write_text(text)
        with pytest.raises(ConfigError, match=f"results.csv: results table {why}"):
            load_results(p)
    with pytest.raises(ConfigError, match="missing.csv: results table not found"):
        load_results(tmp_path / "missing.csv")


def test_unmodelled_run_is_skipped_with_reason(reference_dir: Path) -> None:
    from mdm.errors import MdmError

    be = fake_backend([])
    predict = be["predict_app"]

    def picky(prep: str, gpu: tuple, models: list[str], cache: Any) -> FakePred:
        if "A:32:8" in gpu[1]:
            raise MdmError("not modelled")
        return predict(prep, gpu, models, cache)

    be["predict_app"] = picky
    res = validate(reference_dir, ["mdm"], RUNS, backend=be)
    assert res.summary["skipped"] == {"gather__mdm_pascal__l1_mshr_32": "not modelled"}
    assert set(res.runs["run_id"]) == set(RUNS) - {"gather__mdm_pascal__l1_mshr_32"}


def test_runs_without_logs_are_reported(reference_dir: Path, tmp_path: Path) -> None:
    """A reference folder without logs/ still validates, but says that those runs'
    launch latencies come from the configuration files (the reference's came from the
    command line) and get no per-kernel errors; with the logs nothing is said."""
    import warnings

    from mdm.errors import MdmWarning

    for name in ("results.csv", "configs", "traces"):
        (tmp_path / name).symlink_to(reference_dir / name)
    with pytest.warns(MdmWarning, match=rf"logs: no log for {len(RUNS)} of {len(RUNS)} runs"):
        validate(tmp_path, ["mdm"], RUNS, backend=fake_backend([]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", MdmWarning)
        validate(reference_dir, ["mdm"], RUNS, backend=fake_backend([]))


def test_run_options_add_the_logged_launch_latencies(tmp_path: Path) -> None:
    """A run's log decides the launch latencies (set on the reference's command line, not
    in the table): its option dump's values follow the table's extra options."""
    import lzma

    (tmp_path / "logs").mkdir()
    dump = (
        "GPGPU-Sim: Configuration options:\n\n"
        "-gpgpu_kernel_launch_latency                    7 # Kernel launch latency in cycles\n"
        "-gpgpu_TB_launch_latency                    0 # thread block launch latency\n"
        "-gpgpu_n_clusters                     28 # number of processing clusters\n"
        "launching kernel name: k uid: 1\n"
        "-gpgpu_kernel_launch_latency 9 # after the launch: not the dump\n"
    )
    with lzma.open(tmp_path / "logs" / "r.log.xz", "wt") as fh:
        fh.write(dump)
    got = run_options(tmp_path, "r", "-gpgpu_n_clusters 56")
    assert got == "-gpgpu_n_clusters 56 -gpgpu_kernel_launch_latency 7 -gpgpu_TB_launch_latency 0"
    assert run_options(tmp_path, "no_log", "-x 1") == "-x 1"


def test_kernel_table_carries_per_kernel_miss_rates(reference_dir: Path, tmp_path: Path) -> None:
    """``kernels.csv`` of the reference path: each kernel's own miss rates from its log
    beside its cache simulation's. stencil2d's second kernel reads what the first left in
    the L2: both sides show its L2 miss rate far below the first kernel's, and they agree
    kernel for kernel; the run rows keep the application's rates; the report lists the
    kernels of such a run."""
    from mdm.report.pages import validation_report

    res = validate(reference_dir, ["mdm"], ["stencil2d__mdm_pascal__baseline"], workers=1)
    k = res.kernels.sort_values("kernel")
    assert list(k["kernel"]) == [0, 1]
    for col in ("l2_miss_rate", "cachesim_l2_miss_rate"):
        assert k[col].iloc[1] < 0.1 * k[col].iloc[0], col
    for ours, ref in (("cachesim_l1_miss_rate", "l1d_rd_miss_rate"),
                      ("cachesim_l2_miss_rate", "l2_miss_rate")):  # fmt: skip
        assert (k[ours] - k[ref]).abs().max() < 0.02
    run = res.runs.iloc[0]
    assert run["cachesim_l2_miss_rate"] == pytest.approx(run["l2_miss_rate"], abs=0.02)
    assert (
        k["cachesim_l2_miss_rate"].min()
        < run["cachesim_l2_miss_rate"]
        < k["cachesim_l2_miss_rate"].max()
    )
    validation_report(res, tmp_path)
    html = (tmp_path / "report.html").read_text()
    assert "Per kernel (runs of several kernels)" in html and "cachesim_l2_miss_rate" in html
    assert list(pd.read_csv(tmp_path / "kernels.csv").columns)[-4:] == [
        "l1d_rd_miss_rate", "l2_miss_rate", "cachesim_l1_miss_rate", "cachesim_l2_miss_rate"
    ]  # fmt: skip


def test_console_summary_leaves_out_classes_without_runs(reference_dir: Path) -> None:
    """The one-line summary per model gives each class that has runs and no 'nan%':
    with only a calibration run the MD/NMD mean is 'n/a'."""
    from typer.testing import CliRunner

    from mdm.cli.main import app

    base = ["validate", "--reference", str(reference_dir), "--models", "mdm", "--workers", "1"]
    calib = CliRunner().invoke(app, [*base, "--run", "pchase__mdm_pascal__baseline"])
    assert calib.exit_code == 0, calib.output
    line = next(x for x in calib.output.splitlines() if x.strip().startswith("mdm:"))
    assert "nan" not in line and "n/a (no MD or NMD run) (calib " in line
    assert "(MD " not in line and "NMD 0" not in line and "Spearman" not in line


def _score_case() -> Any:
    """:func:`score` on ten hand-made runs of model ``m`` (and a perfect model ``z``):
    every run has 1000 warp instructions on both sides, so IPC = 1000 / cycles.

    ===========  =====  ====  ===  ========  ==========  ============  =====================
    run          class  arch  wl   sweep     ref cycles  model cycles  IPC sim, model; error
    ===========  =====  ====  ===  ========  ==========  ============  =====================
    a_base       MD     A     w    baseline  1000        800           1, 1.25; +0.25
    a_x1         MD     A     w    x         500         500           2, 2;     0
    a_x2         MD     A     w    x         250         200           4, 5;    +0.25
    n_base       NMD    A     w2   baseline  1000        2000          1, 0.5;  -0.5
    c_base       calib  A     wc   baseline  1000        250           1, 4;    +3
    c_x1         calib  A     wc   x         500         125           2, 8;    +3
    c_x2         calib  A     wc   x         250         62.5          4, 16;   +3
    b_base       MD     B     w    baseline  1000        1000          1, 1;     0
    b_x1         MD     B     w    x         500         250           2, 4;    +1
    b_x2         MD     B     w    x         250         500           4, 2;    -0.5
    ===========  =====  ====  ===  ========  ==========  ============  =====================
    """
    from mdm.explore.validate import score

    rows = [
        ("a_base", "MD", "A", "w", "baseline", 1000, 800),
        ("a_x1", "MD", "A", "w", "x", 500, 500),
        ("a_x2", "MD", "A", "w", "x", 250, 200),
        ("n_base", "NMD", "A", "w2", "baseline", 1000, 2000),
        ("c_base", "calib", "A", "wc", "baseline", 1000, 250),
        ("c_x1", "calib", "A", "wc", "x", 500, 125),
        ("c_x2", "calib", "A", "wc", "x", 250, 62.5),
        ("b_base", "MD", "B", "w", "baseline", 1000, 1000),
        ("b_x1", "MD", "B", "w", "x", 500, 250),
        ("b_x2", "MD", "B", "w", "x", 250, 500),
    ]
    table = pd.DataFrame(
        {
            "run_id": [r[0] for r in rows],
            "class": [r[1] for r in rows],
            "arch": [r[2] for r in rows],
            "workload": [r[3] for r in rows],
            "sweep_param": [r[4] for r in rows],
            "sweep_value": ["" if r[4] == "baseline" else "1" for r in rows],
            "warp_insts": 1000.0,
            "ref_cycles": [float(r[5]) for r in rows],
        }
    )
    per_run = pd.DataFrame(
        [{"run_id": r[0], "model": "m", "cycles": float(r[6]), "warp_insts": 1000.0} for r in rows]
        + [
            {"run_id": r[0], "model": "z", "cycles": float(r[5]), "warp_insts": 1000.0}
            for r in rows
        ]
    )
    return score(table, per_run, "ref_cycles", pd.DataFrame(), {}, extra_summary=True)


def test_score_summaries_by_hand() -> None:
    """Each summary of :func:`score` against hand arithmetic on :func:`_score_case`'s
    table: calibration runs stay out of ``mean_abs_error`` and its per-arch and
    per-sweep splits, MD and NMD are their own classes, and means are means."""
    res = _score_case()
    s = res.summary["models"]["m"]
    assert res.summary["runs"] == 10  # runs, not rows (two models)
    # MD + NMD |errors|: .25, 0, .25, .5, 0, 1, .5 -> 2.5 / 7 (the median would be .25)
    assert s["mean_abs_error"] == pytest.approx(2.5 / 7)
    assert s["mean_abs_error_md"] == pytest.approx((0.25 + 0 + 0.25 + 0 + 1 + 0.5) / 6)
    assert s["mean_abs_error_nmd"] == pytest.approx(0.5)
    assert s["mean_abs_error_calib"] == pytest.approx(3.0)
    assert s["max_abs_error"] == pytest.approx(1.0)  # b_x1; calib's 3 left out
    assert s["mean_abs_error_by_arch"] == {
        "A": pytest.approx((0.25 + 0 + 0.25 + 0.5) / 4),
        "B": pytest.approx((0 + 1 + 0.5) / 3),
    }
    assert s["mean_abs_error_by_sweep"] == {
        "baseline": pytest.approx((0.25 + 0.5 + 0) / 3),
        "x": pytest.approx((0 + 0.25 + 1 + 0.5) / 4),
    }
    assert s["mean_abs_error_by_class"] == {
        "MD": pytest.approx(1 / 3),
        "NMD": pytest.approx(0.5),
        "calib": pytest.approx(3.0),
    }
    assert s["runs"] == 10
    md = res.by_class[(res.by_class["model"] == "m") & (res.by_class["class"] == "MD")].iloc[0]
    assert (md["mean"], md["max"], md["count"]) == (pytest.approx(1 / 3), 1.0, 6)
    z = res.summary["models"]["z"]  # the reference's own cycles: no error anywhere
    assert z["mean_abs_error"] == 0 and z["max_abs_error"] == 0 and z["mean_spearman"] == 1


def test_score_speedups_and_spearman_by_hand() -> None:
    """Speedups are over the baseline of the same model, arch and workload; the
    Spearman rho of a sweep ranks its points and that baseline, model vs reference IPC."""
    res = _score_case()
    runs = res.runs[res.runs["model"] == "m"].set_index("run_id")
    # speedup_error = (IPC_model / IPC_model(base)) / (IPC_sim / IPC_sim(base)) - 1
    want = {
        "a_x1": (2 / 1.25) / (2 / 1) - 1,  # -0.2
        "a_x2": (5 / 1.25) / (4 / 1) - 1,  # 0
        "b_x1": (4 / 1) / (2 / 1) - 1,  # +1 (over b_base, not a_base of the other arch)
        "b_x2": (2 / 1) / (4 / 1) - 1,  # -0.5
        "c_x1": (8 / 4) / (2 / 1) - 1,  # 0
    }
    for rid, err in want.items():
        assert runs.loc[rid, "speedup_error"] == pytest.approx(err), rid
    assert runs.loc["b_x1", "speedup_sim"] == pytest.approx(2.0)
    assert runs.loc["b_x1", "speedup_model"] == pytest.approx(4.0)
    for rid in ("a_base", "n_base", "b_base", "c_base"):
        assert math.isnan(runs.loc[rid, "speedup_error"]), rid
    s = res.summary["models"]["m"]
    # MD/NMD sweep points only: |-0.2|, 0, 1, |-0.5|
    assert s["mean_abs_speedup_error"] == pytest.approx(1.7 / 4)
    assert s["mean_abs_speedup_error_by_sweep"] == {"x": pytest.approx(1.7 / 4)}
    row = res.by_sweep[(res.by_sweep["model"] == "m") & (res.by_sweep["arch"] == "B")]
    assert row.set_index("sweep_param").loc["x", "mean_abs_speedup_error"] == pytest.approx(
        (1 + 0.5) / 2
    )
    sp = res.spearman[res.spearman["model"] == "m"].set_index(["arch", "workload"])
    assert len(sp) == 3 and set(sp["points"]) == {3}  # two points + their baseline
    # A/w: reference IPCs 1, 2, 4 and model 1.25, 2, 5 rank alike
    assert sp.loc[("A", "w"), "spearman"] == pytest.approx(1.0)
    # B/w: reference ranks (base, x1, x2) 1, 2, 3, model 1, 3, 2: 1 - 6 * 2 / (3 * 8)
    assert sp.loc[("B", "w"), "spearman"] == pytest.approx(0.5)
    # A/wc (calib): reference 1, 2, 4, model 4, 8, 16: 1, in its own mean only
    assert sp.loc[("A", "wc"), ["class", "spearman"]].tolist() == ["calib", 1.0]
    assert s["mean_spearman"] == pytest.approx((1.0 + 0.5) / 2)  # median: also 0.75
    assert s["mean_spearman_calib"] == pytest.approx(1.0)
    assert res.summary["models"]["z"]["mean_spearman"] == pytest.approx(1.0)
    # a third MD sweep of rho 0.3: the mean (1 + 0.5 + 0.3) / 3 = 0.6, not the median 0.5
    from mdm.explore.validate import _summary

    third = res.spearman.iloc[[0]].assign(workload="w3", spearman=0.3, **{"class": "MD"})
    more = _summary(res.runs, pd.concat([res.spearman, third]))["models"][third["model"].iloc[0]]
    assert more["mean_spearman"] == pytest.approx(0.6)


def test_kernel_errors_are_each_kernels_own_cycles(reference_dir: Path) -> None:
    """Per-kernel rows compare the log's ``gpu_sim_cycle`` of that kernel (not the
    cumulative ``gpu_tot_sim_cycle``) with the model's kernel cycles, error signed as
    eq. 11: IPC_model / IPC_sim - 1 = cycles_sim / cycles_model - 1 for the same
    instructions. The kernels' cycles add up to the run's table cycles."""
    from mdm.explore.accelsim_log import parse_log

    run = RUNS[0]  # stencil2d: two kernels
    res = validate(reference_dir, ["mdm"], [run], backend=fake_backend([]))
    k = res.kernels.sort_values("kernel")
    log = parse_log(reference_dir / "logs" / f"{run}.log.xz")
    assert list(k["cycles_sim"]) == [kb.stats["gpu_sim_cycle"] for kb in log.kernels]
    table = load_results(reference_dir / "results.csv").set_index("run_id")
    assert k["cycles_sim"].sum() == pytest.approx(table.loc[run, "gpu_tot_sim_cycle"])
    # the fake model: total cycles 1000 + len(options), split evenly over 2 kernels
    cyc = (1000.0 + len(run_options(reference_dir, run, table.loc[run, "extra_options"]))) / 2
    assert list(k["cycles_model"]) == [pytest.approx(cyc)] * 2
    for sim, err in zip(k["cycles_sim"], k["error"], strict=True):
        assert err == pytest.approx(sim / cyc - 1)  # > 0 when the model is faster
    assert (k["error"] > 0).all()  # the fake's ~1,000 cycles are far below the log's


def _copy_reference(reference_dir: Path, dst: Path, edit: Any) -> Path:
    """A reference folder in ``dst`` sharing configs, traces and logs, with its results
    table passed through ``edit`` (a function of the DataFrame)."""
    for name in ("configs", "traces", "logs"):
        (dst / name).symlink_to(reference_dir / name)
    table = pd.read_csv(reference_dir / "results.csv", dtype=str, keep_default_na=False)
    edit(table).to_csv(dst / "results.csv", index=False)
    return dst


def test_a_log_disagreeing_with_the_table_is_an_error(reference_dir: Path, tmp_path: Path) -> None:
    """The log's gpu_tot_sim_cycle must be the table's: one cycle more in the table is an
    error naming the log and the table."""
    run = RUNS[1]

    def one_more(t: pd.DataFrame) -> pd.DataFrame:
        row = t["run_id"] == run
        t.loc[row, "gpu_tot_sim_cycle"] = str(int(t.loc[row, "gpu_tot_sim_cycle"].iloc[0]) + 1)
        return t

    ref = _copy_reference(reference_dir, tmp_path, one_more)
    with pytest.raises(ConfigError, match=rf"{run}.log.xz: gpu_tot_sim_cycle .* differs from"):
        validate(ref, ["mdm"], [run], backend=fake_backend([]))
    validate(ref, ["mdm"], [run], backend=fake_backend([]), use_logs=False)  # no check


@pytest.mark.parametrize("column", ["gpu_tot_sim_cycle", "warp_insts"])
def test_zero_cycles_or_instructions_name_the_line(
    reference_dir: Path, tmp_path: Path, column: str
) -> None:
    """A run with 0 cycles or 0 instructions has no IPC: refused, naming its line of
    the file (the header is line 1, the first run line 2)."""

    def zero_second(t: pd.DataFrame) -> pd.DataFrame:
        t.loc[1, column] = "0"
        return t

    ref = _copy_reference(reference_dir, tmp_path, zero_second)
    with pytest.raises(ConfigError, match="line 3: cycles and warp_insts must be > 0"):
        load_results(ref / "results.csv")


def test_cachesim_columns_without_accesses_are_nan() -> None:
    """A kernel without L1 global reads (or without L2 accesses) has no miss rate: NaN,
    not the 0 of an empty count, so the comparison with the reference skips it; the
    run's rates add the kernels' counts (misses over accesses of all of them)."""
    from types import SimpleNamespace

    from mdm.explore.validate import cachesim_columns
    from mdm.memory.stats import KernelCacheStats

    none = KernelCacheStats(0, "compute")  # no memory access at all
    reads = KernelCacheStats(
        1, "reads", l1_read_accesses=40, l1_read_misses=10, l2_accesses=10, l2_misses=5
    )
    pred = SimpleNamespace(inputs=[SimpleNamespace(cache=none), SimpleNamespace(cache=reads)])
    k0 = cachesim_columns(pred, 0)
    assert math.isnan(k0["cachesim_l1_miss_rate"]) and math.isnan(k0["cachesim_l2_miss_rate"])
    assert cachesim_columns(pred, 1) == {
        "cachesim_l1_miss_rate": 10 / 40,
        "cachesim_l2_miss_rate": 5 / 10,
    }
    assert cachesim_columns(pred) == cachesim_columns(pred, 1)  # the empty kernel adds 0 / 0
    assert cachesim_columns(SimpleNamespace(inputs=[])) == {}
