"""mdm validate on a subset of the reference runs, with a fake pipeline backend."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mdm.errors import ConfigError
from mdm.explore.validate import ipc_error, load_results, validate

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
        cyc = (1000.0 + len(ref["extra_options"])) * (1 if r.model == "mdm" else 2)
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
