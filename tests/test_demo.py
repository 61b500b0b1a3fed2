"""mdm demo writes its table, figures and page; CLI error handling of my commands."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from mdm.cli.main import app
from mdm.explore.demo import TINY_CTAS, demo_params, run_demo


@dataclass
class W:
    md_class: str
    params: dict[str, Any] = field(default_factory=dict)


def fake_predict(name: str, params: dict, preset: str, models: list[str]) -> list[dict]:
    rows = []
    for m in models:
        rows.append({"model": m, "kernel": 0, "cycles": 100.0, "ipc": 2.0, "cpi_base": 0.3})
        rows.append(
            {
                "model": m,
                "kernel": "total",
                "cycles": 100.0 + params.get("ctas", 0),
                "ipc": 2.0,
                "cpi_base": 0.3,
                "cpi_dram": 0.2,
            }
        )
    return rows


def test_demo_writes_report(tmp_path: Path) -> None:
    wls = {"stride": W("MD", {"ctas": 448, "gs": 32}), "vecadd": W("NMD", {"ctas": 10})}
    t = run_demo(
        tmp_path, tiny=True, workloads=wls, models=["mdm", "gpumech"], predict=fake_predict
    )
    assert len(t) == 2 * 2 * 2
    csv = pd.read_csv(tmp_path / "predictions.csv")
    assert set(csv["workload"]) == {"stride", "vecadd"}
    tot = csv[(csv["kernel"] == "total") & (csv["workload"] == "stride")]
    assert (tot["cycles"] == 100 + TINY_CTAS).all()
    for f in ("ipc", "cpi_stacks"):
        assert (tmp_path / "figures" / f"{f}.png").exists()
        assert (tmp_path / "figures" / f"{f}.svg").exists()
    assert "cpi_stacks.svg" in (tmp_path / "report.html").read_text()


def test_demo_params_caps_only_block_counts() -> None:
    assert demo_params({"ctas": 448, "gs": 32}, tiny=True) == {"ctas": TINY_CTAS, "gs": 32}
    assert demo_params({"ctas": 448}, tiny=False) == {"ctas": 448}


def test_cli_bad_spec_is_one_line_exit_1(tmp_path: Path) -> None:
    p = tmp_path / "s.yaml"
    p.write_text("workloads: []\n")
    r = CliRunner().invoke(app, ["sweep", str(p), "--out", str(tmp_path / "o")])
    assert r.exit_code == 1
    assert "s.yaml" in r.output and "workloads" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["validate", "--reference", str(tmp_path)])
    assert r.exit_code == 1 and "Traceback" not in r.output


@pytest.mark.parametrize("cached", [True, False])
def test_prepared_first_gives_the_rows_of_one_workload_at_a_time(
    cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default path (all workloads prepared, and coalesced while another process
    compiles the cache simulator when numba's cache lacks it, then predicted) predicts
    what workload-by-workload prediction does."""
    from mdm.explore.demo import _predict_all, _predict_default
    from mdm.memory import cachesim

    monkeypatch.setattr(cachesim, "issue_loop_cached", lambda gpu: cached)

    wls = {"stride": W("MD", {"ctas": 448, "gs": 32}), "vecadd": W("NMD", {"ctas": 10})}
    models = ["mdm", "gpumech"]
    got = _predict_all(wls, True, "mdm_pascal", models)
    assert list(got) == list(wls)
    for n, w in wls.items():
        want = _predict_default(n, demo_params(w.params, True), "mdm_pascal", models)
        pd.testing.assert_frame_equal(pd.DataFrame(got[n]), pd.DataFrame(want))
