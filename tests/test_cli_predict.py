"""``mdm predict``: built-in workload spec parsing, JSON output, one-line errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mdm.cli.main import app
from mdm.cli.predict import parse_builtin
from mdm.errors import ConfigError, MdmWarning

runner = CliRunner()


def test_parse_builtin() -> None:
    assert parse_builtin("builtin:stride?gs=32&seed=3&f=0.5&on=true&k=abc") == (
        "stride",
        3,
        {"gs": 32, "f": 0.5, "on": True, "k": "abc"},
    )
    assert parse_builtin("builtin:stride") == ("stride", 0, {})
    with pytest.raises(ConfigError, match="seed"):
        parse_builtin("builtin:stride?seed=x")
    with pytest.raises(ConfigError, match="NAME"):
        parse_builtin("builtin:?gs=1")
    with pytest.raises(ConfigError, match="parameter 'gs' given twice"):
        parse_builtin("builtin:stride?gs=1&ctas=4&gs=2")


def test_unknown_model_is_one_line_error() -> None:
    r = runner.invoke(app, ["predict", "builtin:stride", "--gpu", "mdm_pascal", "--model", "nope"])
    assert r.exit_code == 1
    assert "unknown model" in r.output and "Traceback" not in r.output


def test_missing_trace_is_one_line_error(tmp_path) -> None:  # noqa: ANN001
    r = runner.invoke(app, ["predict", str(tmp_path / "absent"), "--gpu", "mdm_pascal"])
    assert r.exit_code == 1
    assert "Traceback" not in r.output


def test_json_end_to_end() -> None:
    pytest.importorskip("mdm.traces.workloads", reason="synthetic workloads not landed")
    pytest.importorskip("mdm.profile.occupancy", reason="occupancy not landed")
    from mdm.models import _load_builtin  # noqa: F401
    from mdm.models.base import MODELS

    r = runner.invoke(app, ["predict", "builtin:stride?gs=32", "--gpu", "mdm_pascal", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert set(d["models"]) == set(MODELS)
    for m in d["models"].values():
        assert m["cycles"] > 0 and m["ipc"] > 0
        assert sum(m["cpi_stack"].values()) == pytest.approx(m["cycles"] / m["warp_insts"])
        assert m["kernels"]
    r = runner.invoke(app, ["predict", "builtin:stride?gs=32", "--gpu", "mdm_pascal"])
    assert r.exit_code == 0, r.output
    assert "total" in r.output


def test_json_on_reference_trace(reference_dir) -> None:  # noqa: ANN001
    trace = reference_dir / "traces" / "sm61" / "stride1"
    cfg = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    # the Accel-Sim options the import cannot map are reported, not dropped silently
    with pytest.warns(MdmWarning, match="options not mapped"):
        r = runner.invoke(
            app,
            [
                "predict",
                str(trace),
                "--gpu",
                str(cfg),
                "--model",
                "mdm",
                "--model",
                "gpumech",
                "--json",
            ],
        )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert set(d["models"]) == {"mdm", "gpumech"}
    for m in d["models"].values():
        assert m["cycles"] > 0 and m["ipc"] == pytest.approx(m["warp_insts"] / m["cycles"])
        assert set(m["cpi_stack"]) >= {"base", "dependency", "mshr", "noc", "dram"}
        assert len(m["kernels"]) == 1


def _strict_json(text: str) -> object:
    def no_constant(name: str) -> object:
        raise AssertionError(f"{name} is not JSON")

    return json.loads(text, parse_constant=no_constant)


def test_json_is_standard_for_a_store_only_kernel(capsys: pytest.CaptureFixture[str]) -> None:
    """MWP-CWP's eq. (6) MWP_peak_BW is infinite without loads: the JSON of a prediction
    (``AppPrediction.to_json``, and ``echo_json`` behind every ``--json``) writes it as
    ``null``; ``Infinity`` is not JSON (JavaScript's parser rejects it)."""
    from mdm.cli.common import echo_json
    from mdm.config.load import load_gpu
    from mdm.pipeline import predict_app
    from mdm.profile.handmade import kernel_from_warps
    from mdm.traces.model import AppTrace
    from mdm.traces.model import InstrClass as C

    warp = [(C.INT, [1], [0]), (C.ST_GLOBAL, [], [1, 0], [0x1000 + 4 * i for i in range(32)])]
    k = kernel_from_warps([warp] * 8, warps_per_block=4)
    pred = predict_app(AppTrace(commands=[k], name="store_only"), load_gpu("v100"), ["mwp-cwp"])
    assert pred.kernels["mwp-cwp"][0].details["mwp_peak_bw"] == float("inf")
    out = _strict_json(pred.to_json())
    assert out["models"]["mwp-cwp"]["kernels"][0]["details"]["mwp_peak_bw"] is None  # type: ignore[index]
    echo_json({"x": float("inf"), "y": [float("nan"), 1.5], "z": np.float32(2.0)})
    assert _strict_json(capsys.readouterr().out) == {"x": None, "y": [None, 1.5], "z": 2.0}


def test_occupancy_reported_with_its_limiter() -> None:
    """Per kernel, the JSON and the table give resident warps and blocks and what limits
    them, worked by hand: transpose's 256-thread blocks fill mdm_pascal's 2,048 thread
    slots with 8 blocks (64 warps); a grid of 8 blocks on 28 SMs runs 1 block per SM,
    limited by the grid."""
    r = runner.invoke(
        app, ["predict", "builtin:transpose", "--gpu", "mdm_pascal", "--model", "mdm", "--json"]
    )
    assert r.exit_code == 0, r.output
    kernel = json.loads(r.stdout)["models"]["mdm"]["kernels"][0]
    # the tile's four column reads (LDS), each a 32-way bank conflict; its stores none
    assert list(kernel["shared_bank_conflicts"].values()) == [32.0] * 4
    occ = kernel["occupancy"]
    assert occ["warps_per_sm"] == 64 and occ["blocks_per_sm"] == 8
    assert occ["limited_by"] in ("threads", "warps")  # both are full at 8 blocks
    assert occ["active_sms"] == 28 and occ["waves"] == pytest.approx(1024 / (8 * 28))
    r = runner.invoke(
        app,
        ["predict", "builtin:transpose?W=128&H=64", "--gpu", "mdm_pascal", "--model", "mdm"],
    )
    assert r.exit_code == 0, r.output
    assert "8 warps/SM (1 block), limited by grid, 1 wave" in r.output
    assert "PC 0x1e0: 32 passes" in r.output
    r = runner.invoke(
        app,
        ["predict", "builtin:transpose?pad=1", "--gpu", "mdm_pascal", "--model", "mdm", "--json"],
    )
    assert json.loads(r.stdout)["models"]["mdm"]["kernels"][0]["shared_bank_conflicts"] == {}


def _predict_stride(updates: dict[str, object], table: bool = False) -> tuple[dict, str, Any, Any]:
    """``mdm predict`` of the stride kernel (56 CTAs, model ``mdm``) on ``mdm_pascal`` with
    ``updates``, through a config file: the JSON's first kernel, the table's text (with
    ``table``, else ""), the cache simulation's stats of that kernel and the
    configuration."""
    from mdm.config.export import dumps_gpu
    from mdm.config.load import load_gpu
    from mdm.memory import simulate_app
    from mdm.traces.workloads import load_trace

    spec = "builtin:stride?ctas=56"
    gpu = load_gpu("mdm_pascal").with_updates(updates)
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "g.toml"
        cfg.write_text(dumps_gpu(gpu))
        r = runner.invoke(app, ["predict", spec, "--gpu", str(cfg), "--model", "mdm", "--json"])
        assert r.exit_code == 0, r.output
        kernel = json.loads(r.stdout)["models"]["mdm"]["kernels"][0]
        text = ""
        if table:
            text = runner.invoke(app, ["predict", spec, "--gpu", str(cfg), "--model", "mdm"]).output
    stats = simulate_app(load_trace(spec), gpu).kernels[0]
    return kernel, text, stats, gpu


def test_l1_blocking_reported_per_cause() -> None:
    """Per kernel, the JSON gives the cache simulation's L1 waits by cause per active SM
    (``mdm.pipeline.l1_blocking``), the table names the causes that occurred: with one
    MSHR entry every miss of the stride kernel after the first waits for an entry, with
    4,096 (more than its misses in flight) none does."""
    out = {}
    for entries in (1, 4096):
        kernel, table, stats, _ = _predict_stride({"l1.mshr_entries": entries}, table=True)
        sms = kernel["occupancy"]["active_sms"]
        assert kernel["l1_blocking"] == pytest.approx(
            {
                "miss_queue": stats.l1_miss_queue_wait_cycles / sms,
                "mshr_entry": stats.l1_mshr_wait_cycles / sms,
                "merge_slots": stats.l1_merge_wait_cycles / sms,
                "line_allocation": stats.l1_alloc_wait_cycles / sms,
            }
        )
        assert kernel["cache_timeline_cycles"] == stats.timeline_cycles
        out[entries] = kernel["l1_blocking"]["mshr_entry"], table, stats.timeline_cycles
    assert out[1][0] > 0 and "mshr entry" in out[1][1]
    assert out[4096][0] == 0 and "mshr entry" not in out[4096][1]
    # the table gives each cause's share of the simulation's time line
    share = f"mshr entry {out[1][0]:,.0f} ({100 * out[1][0] / out[1][2]:.0f} %)"
    assert share in " ".join(out[1][1].split())


def test_l2_blocking_reported_per_cause() -> None:
    """Per kernel, the JSON gives the cache simulation's L2 bank blocking by cause per
    bank (``mdm.pipeline.l2_blocking``): with one L2 MSHR entry per bank the stride
    kernel's misses wait for entries, with 4,096 none does; no read overflows a merge
    entry (each line is read by one warp). The input copy does not fill the L2
    (``l2.fill_on_memcpy``: its 56 CTAs' input fits and would never miss)."""
    for entries in (1, 4096):
        upd = {"l2.mshr_per_bank": entries, "l2.fill_on_memcpy": False}
        kernel, _, stats, gpu = _predict_stride(upd)
        banks = gpu.l2.banks
        assert kernel["l2_blocking"] == pytest.approx(
            {
                "merge_slots": stats.l2_blocked_cycles / banks,
                "mshr_entry": stats.l2_mshr_blocked_cycles / banks,
            }
        )
        assert kernel["l2_blocking"]["merge_slots"] == 0
        assert (kernel["l2_blocking"]["mshr_entry"] > 0) == (entries == 1)


def test_table_gives_the_cpi_stack_as_shares_of_cycles() -> None:
    """The table's CPI stack is each component's share of the cycles, largest first,
    shares under 0.5 % left out; --json keeps the components in cycles per instruction."""
    from mdm.cli.predict import STACK_COLUMN, stack_shares

    row = {"model": "m", "cpi_base": 1.0, "cpi_noc": 3.0, "cpi_dram": 0.001, "cycles": 8.0}
    assert stack_shares(row) == "noc 75% base 25%"  # dram: 0.025 % of the total
    assert stack_shares({"cpi_base": 0.0}) == ""
    r = runner.invoke(
        app, ["predict", "builtin:stride?gs=32", "--gpu", "mdm_pascal", "--model", "mdm"]
    )
    assert r.exit_code == 0, r.output
    assert STACK_COLUMN.split(",")[0] in r.output
    total_line = next(line for line in r.output.splitlines() if " total " in line)
    shares = [int(x) for x in __import__("re").findall(r"(\d+)%", total_line)]
    assert len(shares) >= 2 and abs(sum(shares) - 100) <= len(shares)  # rounded shares
    assert shares == sorted(shares, reverse=True)


@given(
    st.lists(st.floats(1.0, 1e6, allow_nan=False), min_size=1, max_size=30),
    st.integers(0, 35),
)
def test_shown_kernels_are_the_most_cycles_of_the_first_model(
    cycles: list[float], most: int
) -> None:
    from mdm.cli.predict import shown_kernels

    rows = [{"model": "a", "kernel": f"k{i}", "cycles": c} for i, c in enumerate(cycles)]
    rows += [{"model": "a", "kernel": "total", "cycles": sum(cycles)}]
    rows += [{"model": "b", "kernel": f"k{i}", "cycles": 1.0} for i in range(len(cycles))]
    shown = shown_kernels(rows, most)
    assert shown == sorted(set(shown)) and len(shown) == min(len(cycles), most)
    hidden = set(range(len(cycles))) - set(shown)
    assert all(cycles[i] >= cycles[j] for i in shown for j in hidden)


def test_table_lists_the_kernels_with_the_most_cycles() -> None:
    """``--kernels 1`` on the two launches of stencil2d: one kernel row per model, the
    one with more cycles by the first model, its launch position, and the same totals."""
    args = ["predict", "builtin:stencil2d", "--gpu", "mdm_pascal", "--model", "mdm"]
    pred = json.loads(runner.invoke(app, [*args, "--json"]).stdout)["models"]["mdm"]
    cyc = [k["cycles"] for k in pred["kernels"]]
    out = runner.invoke(app, [*args, "--kernels", "1"]).output
    assert "the 1 of 2 kernels with the most cycles by mdm" in out
    rows = [ln for ln in out.splitlines() if "jacobi5pt_kernel" in ln and "│" in ln]
    assert len(rows) == 3  # the main table, the occupancy table and the cache table
    ids = [k["kernel_id"] for k in pred["kernels"]]
    assert ids == [1, 2]  # the trace's kernel IDs (Accel-Sim numbers launches from 1)
    assert rows[0].split("│")[2].strip() == str(ids[int(np.argmax(cyc))])
    assert f"{max(cyc):.0f}" in rows[0] and f"{pred['cycles']:.0f}" in out
    everything = runner.invoke(app, args).output
    assert "kernels with the most cycles" not in everything
    assert sum("jacobi5pt_kernel" in ln for ln in everything.splitlines()) == 6


def test_first_compile_is_announced_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a terminal, a note when the issue loop is not compiled yet; none when numba's
    cache holds it (after a simulation in this process) or off a terminal."""
    import rich.console

    from mdm.cli.common import compile_note
    from mdm.config import load_gpu
    from mdm.memory import cachesim, simulate_app
    from mdm.traces.workloads import generate

    gpu = load_gpu("mdm_pascal")
    simulate_app(generate("stride", 0, ctas=1), gpu)
    assert cachesim.issue_loop_cached(gpu)
    compile_note(gpu)  # off a terminal
    monkeypatch.setattr(rich.console.Console, "is_terminal", property(lambda self: True))
    compile_note(gpu)  # compiled
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(cachesim, "issue_loop_cached", lambda g: False)
    compile_note(gpu)
    assert "compiling the cache simulator once" in capsys.readouterr().err


def test_set_predicts_as_the_edited_file() -> None:
    """``--gpu mdm_pascal --set l1.mshr_entries=1`` predicts what a configuration file
    with that one field changed predicts, and differs from the preset (one MSHR entry
    serialises the stride kernel's misses)."""
    kernel, _, _, _ = _predict_stride({"l1.mshr_entries": 1})
    args = ["predict", "builtin:stride?ctas=56", "--gpu", "mdm_pascal", "--model", "mdm", "--json"]
    r = runner.invoke(app, [*args, "--set", "l1.mshr_entries=1"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["gpu"] == "mdm_pascal [l1.mshr_entries=1]"
    assert d["models"]["mdm"]["kernels"][0]["cycles"] == kernel["cycles"]
    plain = json.loads(runner.invoke(app, args).stdout)["models"]["mdm"]["kernels"][0]
    assert plain["cycles"] < kernel["cycles"]
    table = runner.invoke(app, [*args[:-1], "--set", "l1.mshr_entries=1"], env={"COLUMNS": "200"})
    assert "mdm_pascal [l1.mshr_entries=1]" in table.stdout  # brackets printed, not markup
    r = runner.invoke(app, [*args, "--set", "l1.mshr_entrys=1"])
    assert r.exit_code == 1 and "did you mean 'l1.mshr_entries'" in r.output


def test_predict_reports_the_cache_simulation_it_used() -> None:
    """Per kernel, ``--json`` gives the miss rates and DRAM bytes the models took from the
    cache simulation (the same as simulating the trace alone on that GPU), and the table
    lists them; stride with GS = 32 misses most of its L1 reads on mdm_pascal."""
    from mdm.config import load_gpu
    from mdm.memory import simulate_app
    from mdm.traces.workloads import load_trace

    spec = "builtin:stride?ctas=112"
    r = runner.invoke(app, ["predict", spec, "--gpu", "mdm_pascal", "--model", "mdm", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["models"]["mdm"]["kernels"][0]["cache"]
    sim = simulate_app(load_trace(spec), load_gpu("mdm_pascal")).kernels[0]
    assert got == {
        "l1_miss_rate": sim.l1_miss_rate,
        "l2_miss_rate": sim.l2_miss_rate,
        "dram_read_bytes": sim.dram_read_bytes,
        "dram_write_bytes": sim.dram_write_bytes,
    }
    assert got["l1_miss_rate"] > 0.5 and got["dram_read_bytes"] > 0
    r = runner.invoke(app, ["predict", spec, "--gpu", "mdm_pascal", "--model", "mdm"])
    assert "cache simulation (the models' inputs)" in r.output
    assert f"{100 * sim.l1_miss_rate:.1f} %" in r.output
