"""CLI options and printed values pinned by hand or by round trips with the Python API:
option defaults, ``--set`` repeated, the ``--json`` keys, the table columns' units and
formats (found missing by a mutation pass over ``src/mdm/cli``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from mdm.cli.main import app
from mdm.config import list_presets, load_gpu
from mdm.config.export import config_dict, derived_values, save_gpu
from mdm.config.gpu import GPUConfig

runner = CliRunner()
VECADD = "builtin:vecadd?ctas=4"  # one kernel (ID 1), 4 CTAs x 256 threads = 32 warps


def _cells(line: str) -> list[str]:
    """The cells of one row of a rich table."""
    return [c.strip() for c in line.replace("┃", "│").split("│")[1:-1]]


def _defaults(*path: str) -> dict[str, object]:
    """Option defaults of ``mdm PATH...`` by parameter name (click's view of the app)."""
    cmd = typer.main.get_command(app)
    for p in path:
        cmd = cmd.commands[p]  # type: ignore[attr-defined]
    return {p.name: p.default for p in cmd.params}


def test_stack_shares_keep_components_of_half_a_percent_and_base() -> None:
    """Shares of 97 + 2 + 0.6 + 0.4 = 100 cycles per instruction: 97 %, 2 %, 0.6 % (at
    least 0.5 %, printed rounded as 1 %) in that order; 0.4 % is left out. ``base`` is a
    component like any other."""
    from mdm.cli.predict import stack_shares

    row = {"cpi_dram": 97.0, "cpi_base": 2.0, "cpi_ldst": 0.6, "cpi_sync": 0.4, "cycles": 5.0}
    assert stack_shares(row) == "dram 97% base 2% ldst 1%"


def test_option_defaults() -> None:
    """``--kernels`` lists 20 kernels in ``predict``, ``cachesim`` and ``trace info`` alike;
    a study writes to ``study-COMMAND`` (the command's name, dashes kept) and defaults to
    the preset and MSHR count of :mod:`mdm.explore.studies`' own defaults."""
    import inspect

    from mdm.explore import studies

    assert _defaults("predict")["kernels"] == 20
    assert _defaults("cachesim")["kernels"] == 20
    assert _defaults("trace", "info")["kernels"] == 20
    for command in ("heatmap", "dvfs", "cpi-bandwidth", "streaming-l1"):
        assert Path(_defaults("study", command)["out"]) == Path(f"study-{command}")
    lib = inspect.signature(studies.streaming_l1).parameters
    d = _defaults("study", "streaming-l1")
    assert d["mshr"] == lib["mshr_entries"].default == 4096  # the paper's 4096
    assert d["preset"] == lib["base"].default
    for command, func in (
        ("heatmap", "heatmap"),
        ("dvfs", "dvfs"),
        ("cpi-bandwidth", "cpi_bandwidth"),
    ):
        lib = inspect.signature(getattr(studies, func)).parameters
        assert _defaults("study", command)["preset"] == lib["base"].default


def test_config_show_applies_every_set_and_names_them() -> None:
    """Two ``--set`` items: the JSON is :meth:`GPUConfig.with_updates` of both (None
    fields kept), named ``"mdm_pascal [l1.mshr_entries=7, n_sm=10]"`` (the items in the
    order given), and the printed TOML's header repeats the whole command."""
    sets = ["l1.mshr_entries=7", "n_sm=10"]
    args = ["config", "show", "mdm_pascal", "--set", sets[0], "--set", sets[1]]
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["config"]
    want = load_gpu("mdm_pascal").with_updates(
        {"l1.mshr_entries": 7, "n_sm": 10, "name": "mdm_pascal [l1.mshr_entries=7, n_sm=10]"}
    )
    assert got == config_dict(want, keep_none=True)
    assert any(v is None for v in got.values()) or any(
        v is None for sub in got.values() if isinstance(sub, dict) for v in sub.values()
    )
    assert GPUConfig.model_validate(got) == want
    text = runner.invoke(app, args).stdout
    assert "`mdm config show mdm_pascal --set l1.mshr_entries=7 --set n_sm=10`" in text


def test_config_show_prints_derived_values_to_six_digits() -> None:
    """The ``# derived`` comments are :func:`derived_values` at 6 significant digits
    (within a relative 5e-6); sm7_qv100's NoC bandwidth has more digits than that."""
    gpu = load_gpu("sm7_qv100")
    out = runner.invoke(app, ["config", "show", "sm7_qv100"]).stdout
    lines = out.split("# derived (not read back):")[1].strip().splitlines()
    printed = {k.strip("# ").strip(): float(v) for k, v in (ln.split("=") for ln in lines)}
    want = derived_values(gpu)
    assert set(printed) == set(want)
    for k, v in want.items():
        assert printed[k] == pytest.approx(v, rel=5e-6, abs=1e-12), k


def test_config_list_summary_by_hand() -> None:
    """``config list --json``: per preset the scheduler as ``COUNT x POLICY``, the L1's
    MSHR count, ``streaming`` exactly for an L1 allocating on fill, the NoC bandwidth to
    0.1 GB/s; by hand: mdm_pascal is 4 x gto with 128 MSHRs and a classic L1, v100 4 x lrr
    with 4096 and a streaming one, sm7_qv100's NoC 1505.1 GB/s (1505.1076... rounded)."""
    rows = {
        r["name"]: r for r in json.loads(runner.invoke(app, ["config", "list", "--json"]).stdout)
    }
    assert list(rows) == list_presets()
    for name, row in rows.items():
        g = load_gpu(name)
        assert row["scheduler"] == f"{g.sm.schedulers} x {g.sm.scheduler_policy}"
        assert row["l1_mshr_entries"] == g.l1.mshr_entries
        assert ("streaming" in row["l1"]) == (g.l1.allocate_on == "fill")
        assert row["noc_effective_gbps"] == round(g.noc_effective_gbps, 1)
    assert (rows["mdm_pascal"]["scheduler"], rows["mdm_pascal"]["l1_mshr_entries"]) == (
        "4 x gto",
        128,
    )
    assert "streaming" not in rows["mdm_pascal"]["l1"]
    assert (rows["v100"]["scheduler"], rows["v100"]["l1_mshr_entries"]) == ("4 x lrr", 4096)
    assert "streaming" in rows["v100"]["l1"]
    assert rows["sm7_qv100"]["noc_effective_gbps"] == 1505.1


def test_config_diff_json_and_table_give_the_arguments_and_full_values(tmp_path: Path) -> None:
    """Two files named alike: the JSON's ``a``/``b`` are their names, ``a_given`` and
    ``b_given`` the paths as typed; the table prints a float to 10 digits (123.456789,
    not 123.5)."""
    base = load_gpu("mdm_pascal")
    a = save_gpu(base, tmp_path / "a.toml")
    b = save_gpu(base.with_updates({"l2.hit_latency_ns": 123.456789}), tmp_path / "b.toml")
    d = json.loads(runner.invoke(app, ["config", "diff", str(a), str(b), "--json"]).stdout)
    assert (d["a"], d["b"], d["a_given"], d["b_given"]) == (
        "mdm_pascal",
        "mdm_pascal",
        str(a),
        str(b),
    )
    assert d["differences"] == [
        {"field": "l2.hit_latency_ns", "a": base.l2.hit_latency_ns, "b": 123.456789}
    ]
    out = runner.invoke(app, ["config", "diff", str(a), str(b)], env={"COLUMNS": "200"}).stdout
    assert "123.456789" in out


def test_cachesim_warp_range_ends_before_the_warp_count() -> None:
    """vecadd with 4 CTAs of 256 threads has 32 warps: ``1:31`` is tracked, ``1:32`` is an
    error naming the range 0..31."""
    ok = runner.invoke(app, ["cachesim", VECADD, "--gpu", "mdm_pascal", "--warp", "1:31", "--json"])
    assert ok.exit_code == 0, ok.output
    assert list(json.loads(ok.stdout)["kernels"][0]["warps"]) == ["31"]
    bad = runner.invoke(app, ["cachesim", VECADD, "--gpu", "mdm_pascal", "--warp", "1:32"])
    assert bad.exit_code == 1 and "warp 32 out of range 0..31" in bad.output


def test_cachesim_table_rows_are_the_json() -> None:
    """The table's kernel and total rows print the ``--json`` rows: integers as they are,
    rates to 3 decimals, the total row labelled ``total``; the columns' heads are the
    documented short names."""
    base = ["cachesim", "builtin:stencil2d?seed=1", "--gpu", "mdm_pascal"]
    d = json.loads(runner.invoke(app, [*base, "--json"]).stdout)
    out = runner.invoke(app, base, env={"COLUMNS": "250"}).stdout
    head = next(_cells(ln) for ln in out.splitlines() if ln.startswith("┃"))
    cols = ["kernel_id", "name", "l1_read_accesses", "l1_miss_rate", "l1_read_pending_hits",
            "l1_blocked_cycles", "l2_accesses", "l2_miss_rate", "l2_pending_hits",
            "l2_blocked_cycles", "l2_mshr_blocked_cycles", "dram_reads", "dram_writes"]  # fmt: skip
    assert head[:4] == ["kernel", "name", "L1 reads", "L1 miss"]
    assert head[-2:] == ["DRAM rd", "DRAM wr"]
    rows = [_cells(ln) for ln in out.splitlines() if ln.startswith("│")]
    assert len(rows) == 3
    for cells, row in zip(rows, [*d["kernels"], d["total"]], strict=True):
        for c, cell in zip(cols, cells, strict=True):
            v = row[c]
            if c == "name":
                continue
            if c == "kernel_id" and v == -1:
                assert cell == "total"
            elif isinstance(v, float):
                assert cell == f"{v:.3f}", c
            else:
                assert cell == str(v), c
    assert d["total"]["l2_misses"] == sum(k["l2_misses"] for k in d["kernels"])
    assert d["total"]["l2_misses"] < d["total"]["l2_accesses"]


def test_predict_table_columns_are_the_json_in_their_units() -> None:
    """The table prints ``--json``'s cycles to whole cycles, MD share to 2 decimals ("-"
    for mwp-cwp, which has none: null), L1 and L2 miss rates in percent and DRAM bytes in
    kB of 1000 bytes."""
    base = ["predict", "builtin:stride?ctas=112", "--gpu", "mdm_pascal", "--model", "mdm"]
    base += ["--model", "mwp-cwp"]
    d = json.loads(runner.invoke(app, [*base, "--json"]).stdout)["models"]
    out = runner.invoke(app, base, env={"COLUMNS": "250"}).stdout
    rows = [_cells(ln) for ln in out.splitlines() if ln.startswith("│")]
    for model in ("mdm", "mwp-cwp"):
        k = d[model]["kernels"][0]
        main = [r for r in rows if r[0] == model]
        assert [r[2] for r in main] == ["strided_square_kernel_GS32", "total"]
        assert main[0][3] == f"{k['cycles']:.0f}" and main[1][3] == f"{d[model]['cycles']:.0f}"
        md = k["md_fraction"]
        assert main[0][5] == ("-" if md is None else f"{md:.2f}")
    assert d["mwp-cwp"]["kernels"][0]["md_fraction"] is None
    cache = d["mdm"]["kernels"][0]["cache"]
    crow = next(r for r in rows if len(r) == 6 and r[2].endswith("%"))
    assert crow[2] == f"{100 * cache['l1_miss_rate']:.1f} %"
    assert crow[3] == f"{100 * cache['l2_miss_rate']:.1f} %"
    assert crow[4] == f"{cache['dram_read_bytes'] / 1000:,.1f}"
    assert crow[5] == f"{cache['dram_write_bytes'] / 1000:,.1f}"
    assert f"{cache['dram_read_bytes'] / 1024:,.1f}" != crow[4]  # the unit tells
    assert cache["l1_miss_rate"] != cache["l2_miss_rate"]


def test_study_workload_values_are_typed_by_their_text() -> None:
    """``NAME:key=value``: ``32.0`` is a float, ``-4`` an integer (the sign allowed); the
    key is what precedes the first ``=`` (``gs==3`` gives gs the text ``=3``, rejected)."""
    from mdm.cli.study import _workloads
    from mdm.errors import ConfigError

    (w,) = _workloads(["stride:gs=32.0,ctas=-4"], None)["workloads"]
    assert w.params == {"gs": 32.0, "ctas": -4}
    assert type(w.params["gs"]) is float and type(w.params["ctas"]) is int
    with pytest.raises(ConfigError, match="parameter gs must be a number, got '=3'"):
        _workloads(["stride:gs==3"], None)


def test_an_os_error_is_one_line_naming_the_path(tmp_path: Path) -> None:
    """``--out`` inside a regular file: the folder cannot be made; exit status 1 and one
    line naming that file (the OSError's own text, its path included)."""
    (tmp_path / "f.txt").write_text("")
    out = tmp_path / "f.txt" / "x.toml"
    r = runner.invoke(app, ["config", "show", "mdm_pascal", "--out", str(out)])
    assert r.exit_code == 1
    assert r.output.startswith("error: ") and len(r.output.strip().splitlines()) == 1
    assert str(tmp_path / "f.txt") in r.output


def test_sweep_defaults_to_the_specs_name_and_keeps_a_named_files_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_sweep`` stubbed: without ``--out`` the sweep goes to ``sweep-NAME`` (the
    spec's ``name``, here ``t`` in a file ``s.yaml``); a ConfigError naming its own file
    keeps that file, one without a file is said of the spec."""
    import types

    import pandas as pd

    import mdm.explore.runner as runner_mod
    from mdm.errors import ConfigError

    seen: list[Path] = []

    def fake(spec, out_dir, **kw):  # noqa: ANN001, ANN003, ANN202
        seen.append(Path(out_dir))
        return types.SimpleNamespace(table=pd.DataFrame(), items_run=0, items_skipped=0)

    spec = tmp_path / "s.yaml"
    spec.write_text("name: t\nbase: mdm_pascal\nworkloads: [{name: stride}]\nmodels: [mdm]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner_mod, "run_sweep", fake)
    r = runner.invoke(app, ["sweep", str(spec), "--no-report"])
    assert r.exit_code == 0, r.output
    assert seen == [Path("sweep-t")] and "sweep-t" in r.output

    def fails(path):  # noqa: ANN001, ANN202
        def run(*a, **kw):  # noqa: ANN002, ANN003, ANN202
            raise ConfigError(path, "bad")

        return run

    monkeypatch.setattr(runner_mod, "run_sweep", fails("other.toml"))
    r = runner.invoke(app, ["sweep", str(spec), "--no-report"])
    assert r.exit_code == 1 and r.output == "error: other.toml: bad\n"
    monkeypatch.setattr(runner_mod, "run_sweep", fails(None))
    r = runner.invoke(app, ["sweep", str(spec), "--no-report"])
    assert r.exit_code == 1 and r.output == f"error: {spec}: bad\n"


def test_predict_table_ids_are_the_traces_kernel_ids(tmp_path: Path) -> None:
    """A trace whose only kernel has ID 7 (vecadd written out, its file and header
    renumbered): the table's ``id`` is 7 in all three tables, not the launch position 1."""
    tr = tmp_path / "tr"
    assert runner.invoke(app, ["trace", "convert", VECADD, str(tr)]).exit_code == 0
    text = (tr / "kernel-1.traceg").read_text()
    assert "-kernel id = 1\n" in text
    (tr / "kernel-7.traceg").write_text(text.replace("-kernel id = 1\n", "-kernel id = 7\n"))
    (tr / "kernel-1.traceg").unlink()
    lst = tr / "kernelslist.g"
    lst.write_text(lst.read_text().replace("kernel-1.traceg", "kernel-7.traceg"))
    args = ["predict", str(tr), "--gpu", "mdm_pascal", "--model", "mdm"]
    out = runner.invoke(app, args, env={"COLUMNS": "250"}).stdout
    rows = [_cells(ln) for ln in out.splitlines() if ln.startswith("│") and "vecAdd" in ln]
    assert len(rows) == 3 and [rows[0][1], rows[1][0], rows[2][0]] == ["7", "7", "7"]


def test_cachesim_counts_dram_in_the_configurations_atoms() -> None:
    """``dram_reads``/``dram_writes`` are DRAM bytes over the configuration's atom: with
    ``--set dram.atom_bytes=64`` (presets all have 32) the library's byte counts // 64."""
    from mdm.memory import simulate_app
    from mdm.traces.workloads import load_trace

    args = ["cachesim", "builtin:stencil2d?seed=1", "--gpu", "mdm_pascal", "--json"]
    r = runner.invoke(app, [*args, "--set", "dram.atom_bytes=64"])
    assert r.exit_code == 0, r.output
    total = json.loads(r.stdout)["total"]
    gpu = load_gpu("mdm_pascal").with_updates({"dram.atom_bytes": 64})
    want = simulate_app(load_trace("builtin:stencil2d?seed=1"), gpu).total()
    assert want.dram_read_bytes // 64 != want.dram_read_bytes // 32
    assert (total["dram_reads"], total["dram_writes"]) == (
        want.dram_read_bytes // 64,
        want.dram_write_bytes // 64,
    )
