"""Sweep spec, grid expansion, cache reuse, resume and executors (pipeline faked)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError
from mdm.explore import runner
from mdm.explore.runner import WorkItem, run_sweep
from mdm.explore.spec import expand_points, load_spec, parse_spec
from mdm.models.synthetic import pascal_like

BASE: dict[str, Any] = pascal_like("t", 70.0, 150.0)


def fake_base(_preset: str) -> GPUConfig:
    return GPUConfig.model_validate(copy.deepcopy(BASE))


def fake_key(gpu: GPUConfig) -> tuple:
    return (gpu.n_sm, gpu.l1.mshr_entries)


def fake_evaluate(item: WorkItem) -> list[dict[str, Any]]:
    """Deterministic stand-in for the pipeline: cycles from the swept values."""
    rows = []
    for p, gpu in zip(item.points, item.gpus, strict=True):
        for m in item.models:
            cycles = 1e6 / gpu.n_sm + 1e5 / gpu.dram.bandwidth_gbps + len(m)
            r = {"model": m, "cycles": cycles, "ipc": 1e5 / cycles, "cpi_base": 1.0}
            rows.append(runner._label(item, p, gpu, r))
    return rows


SPEC = {
    "name": "t",
    "deltas": {"classic": {}, "small_mshr": {"l1.mshr_entries": 32}},
    "grid": {"n_sm": [14, 28], "dram.bandwidth_gbps": [240.0, 480.0, 960.0]},
    "workloads": [{"name": "stride", "params": {"gs": 32}}, {"name": "vecadd"}],
    "models": ["mdm", "gpumech"],
}


def test_grid_expansion_is_cartesian_with_deltas_and_zip() -> None:
    spec = parse_spec(SPEC)
    pts = expand_points(spec)
    assert len(pts) == 2 * 2 * 3
    assert len({p.point_id for p in pts}) == len(pts)
    assert pts[0].updates == {"n_sm": 14, "dram.bandwidth_gbps": 240.0}
    assert pts[-1].updates == {"l1.mshr_entries": 32, "n_sm": 28, "dram.bandwidth_gbps": 960.0}
    z = parse_spec(
        {
            **SPEC,
            "deltas": {},
            "grid": {},
            "zip": {"n_sm": [14, 56], "core_clock_mhz": [1000, 2000]},
        }
    )
    assert [p.updates for p in expand_points(z)] == [
        {"n_sm": 14, "core_clock_mhz": 1000},
        {"n_sm": 56, "core_clock_mhz": 2000},
    ]


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"workloads": []}, "workloads"),
        ({"zip": {"a": [1, 2], "b": [1]}}, "zip"),
        ({"workloads": [{"name": "x", "trace": "y"}]}, "workloads.0"),
        ({"models": "mdm"}, "models"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_spec_errors_name_file_and_field(tmp_path: Path, patch: dict, field: str) -> None:
    import yaml

    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump({**SPEC, **patch}))
    with pytest.raises(ConfigError) as e:
        load_spec(p)
    assert str(p) in str(e.value) and field in str(e.value)


def test_toml_spec_and_relative_trace(tmp_path: Path) -> None:
    p = tmp_path / "s.toml"
    p.write_text('base = "mdm_pascal"\nmodels = ["mdm"]\n[[workloads]]\ntrace = "tr/app"\n')
    spec = load_spec(p)
    assert spec.workloads[0].trace == str((tmp_path / "tr" / "app").resolve())


def test_unknown_config_field_is_config_error(tmp_path: Path) -> None:
    spec = parse_spec({**SPEC, "grid": {"l1.nonsense": [1]}})
    with pytest.raises(ConfigError, match="l1.nonsense"):
        _serial(spec, tmp_path)


def test_a_point_the_cache_simulator_refuses_fails_before_any_work(tmp_path: Path) -> None:
    """A grid point the simulator cannot run (GPGPU-Sim's Fermi set hash needs 32 or 64
    L1 sets) is named at planning, before any item runs or any file is written (QA: a
    sweep stopped at its first such point after the others had run)."""
    ran: list[Any] = []

    def evaluate(item: WorkItem) -> list[dict[str, Any]]:
        ran.append(item)
        return fake_evaluate(item)

    base = fake_base("")
    spec = parse_spec(
        {
            **SPEC,
            "grid": {"l1.set_index": ["linear", "fermi_hash"], "l1.ways": [base.l1.ways * 4]},
        }
    )
    with pytest.raises(ConfigError, match=r"point 1 .*needs 32 or 64 sets"):
        _serial(spec, tmp_path / "out", evaluate)
    assert not ran and not (tmp_path / "out").exists()


def _run(tmp: Path, **kw: Any) -> runner.SweepResult:
    return run_sweep(
        parse_spec(SPEC), tmp, evaluate=fake_evaluate, load_base=fake_base, cache_key=fake_key, **kw
    )


def _serial(spec: Any, tmp: Path, evaluate: Any = fake_evaluate) -> runner.SweepResult:
    """``spec`` swept serially into ``tmp`` with the fake pipeline."""
    return run_sweep(
        spec, tmp, executor="serial", evaluate=evaluate, load_base=fake_base, cache_key=fake_key
    )


def test_table_one_row_per_workload_point_model(tmp_path: Path) -> None:
    res = _run(tmp_path, executor="serial")
    t = res.table
    assert len(t) == 2 * 12 * 2
    assert not t.duplicated(["workload", "point_id", "model"]).any()
    for col in ("n_sm", "dram.bandwidth_gbps", "l1.mshr_entries", "cycles", "ipc", "cpi_base"):
        assert col in t.columns
    # items group points by cache key: 2 workloads x (2 n_sm x 2 mshr)
    assert res.items_total == 8
    assert pd.read_csv(tmp_path / "results.csv").shape == t.shape
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "results.parquet"), t)
    assert set(t["l1.mshr_entries"]) == {32, 128}


def test_cache_simulation_once_per_key_and_workload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple] = []

    class Pred:
        def __init__(self, gpu: GPUConfig, models: list[str]) -> None:
            self.gpu, self.models = gpu, models

        def to_rows(self) -> list[dict]:
            rows = [{"model": m, "kernel": "total", "cycles": 1.0, "ipc": 1.0} for m in self.models]
            return rows + [
                {"model": m, "kernel": 0, "cycles": 1.0, "ipc": 1.0} for m in self.models
            ]

    def prepare(app: Any) -> Any:
        return app

    def simulate(app: Any, gpu: GPUConfig) -> str:
        calls.append((app, fake_key(gpu)))
        return "cache"

    def predict(
        prep: Any, gpus: list[GPUConfig], models: list[str], cache: Any = None, sim_gpu: Any = None
    ) -> list[Pred]:
        assert cache == "cache"
        return [Pred(g, models) for g in gpus]

    monkeypatch.setattr(runner, "_pipeline", lambda: (prepare, simulate, predict))
    monkeypatch.setattr(runner, "load_app", lambda w: w.key)
    res = run_sweep(
        parse_spec(SPEC), tmp_path, executor="serial", load_base=fake_base, cache_key=fake_key
    )
    assert len(calls) == len(set(calls)) == 2 * 4  # workloads x distinct (n_sm, mshr)
    assert len(res.table) == 2 * 12 * 2  # only 'total' rows kept


class Boom(RuntimeError):
    pass


def test_resume_after_interruption_no_lost_or_duplicated_rows(tmp_path: Path) -> None:
    n = {"calls": 0}

    def flaky(item: WorkItem) -> list[dict]:
        n["calls"] += 1
        if n["calls"] == 4:
            raise Boom("killed")
        return fake_evaluate(item)

    with pytest.raises(Boom):
        _serial(parse_spec(SPEC), tmp_path, flaky)
    assert len(list((tmp_path / "parts").glob("*.json"))) == 3
    assert not list((tmp_path / "parts").glob("*.tmp"))
    n["calls"] = 100
    res = _serial(parse_spec(SPEC), tmp_path, flaky)
    assert res.items_skipped == 3 and res.items_run == 5
    ref = _run(tmp_path / "fresh", executor="serial").table
    pd.testing.assert_frame_equal(res.table, ref)


def test_other_spec_in_same_folder_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, executor="serial")
    with pytest.raises(ConfigError, match="different sweep"):
        run_sweep(
            parse_spec({**SPEC, "models": ["mdm"]}),
            tmp_path,
            executor="serial",
            evaluate=fake_evaluate,
            load_base=fake_base,
            cache_key=fake_key,
        )


def test_process_pool_and_dask_match_serial(tmp_path: Path) -> None:
    from dask.distributed import Client, LocalCluster

    ref = _run(tmp_path / "serial", executor="serial").table
    pool = _run(tmp_path / "pool", executor="local", workers=2, start_method="fork").table
    pd.testing.assert_frame_equal(pool, ref)
    with (
        LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        dk = _run(tmp_path / "dask", executor="dask", scheduler=client).table
    pd.testing.assert_frame_equal(dk, ref)


def test_scheduler_errors_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheduler address nobody answers is a ConfigError naming it (dask raises
    OSError after its connect timeout; faked here), and --scheduler without the dask
    executor is refused rather than ignored."""
    import dask.distributed

    def unreachable(address: str) -> None:
        raise OSError(f"Timed out trying to connect to {address} after 30 s")

    monkeypatch.setattr(dask.distributed, "Client", unreachable)
    with pytest.raises(ConfigError, match=r"--scheduler tcp://127\.0\.0\.1:1: no dask sch"):
        _run(tmp_path / "a", executor="dask", scheduler="tcp://127.0.0.1:1")
    with pytest.raises(ConfigError, match="--scheduler is for --executor dask, not 'local'"):
        _run(tmp_path / "b", executor="local", scheduler="tcp://127.0.0.1:1")


@pytest.mark.parametrize("path", sorted((Path(__file__).parents[1] / "examples").glob("*.*ml")))
def test_example_specs_are_valid(path: Path) -> None:
    spec = load_spec(path)
    assert expand_points(spec)


def test_unknown_model_is_config_error(tmp_path: Path) -> None:
    spec = parse_spec({**SPEC, "models": ["mdm", "nosuchmodel"]})
    with pytest.raises(ConfigError, match="nosuchmodel"):
        _serial(spec, tmp_path)


def test_resume_after_killed_subprocess(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    out = tmp_path / "out"
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_explore_sweep import SPEC, fake_base, fake_evaluate, fake_key
        from mdm.explore.runner import run_sweep
        from mdm.explore.spec import parse_spec

        def slow(item):
            time.sleep(0.3)
            return fake_evaluate(item)

        run_sweep(parse_spec(SPEC), {str(out)!r}, executor="serial", evaluate=slow,
                  load_base=fake_base, cache_key=fake_key)
        """)
    )
    proc = subprocess.Popen([sys.executable, str(script)])
    try:
        deadline = time.monotonic() + 60
        while len(list((out / "parts").glob("*.json"))) < 2:
            assert proc.poll() is None, "sweep finished or died before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    done = len(list((out / "parts").glob("*.json")))
    assert 2 <= done < 8
    res = _run(out, executor="serial")
    assert res.items_skipped == done and res.items_run == 8 - done
    pd.testing.assert_frame_equal(res.table, _run(tmp_path / "fresh", executor="serial").table)


def bad_evaluate(item: WorkItem) -> list[dict[str, Any]]:
    raise ConfigError("cfg.toml", "unsupported thing")


def test_worker_errors_reach_the_user_as_mdm_errors(tmp_path: Path) -> None:
    from mdm.errors import MdmError

    with pytest.raises(MdmError, match="unsupported thing"):
        run_sweep(
            parse_spec(SPEC),
            tmp_path,
            executor="local",
            workers=1,
            start_method="fork",
            evaluate=bad_evaluate,
            load_base=fake_base,
            cache_key=fake_key,
        )


def test_numpy_scalars_in_rows_round_trip(tmp_path: Path) -> None:
    import numpy as np

    from mdm.explore.runner import _scalar

    rows = [{"i": np.int64(3), "f": np.float32(0.5), "s": "x"}]
    back = json.loads(json.dumps(rows, default=_scalar))
    assert back == [{"i": 3, "f": 0.5, "s": "x"}]
    with pytest.raises(TypeError, match="not JSON"):
        json.dumps([{"o": object()}], default=_scalar)


# ---------------------------------------------------------------- cache_timing = base
TIMED = {
    "name": "timed",
    "base": "mdm_pascal",
    "grid": {"dram.bandwidth_gbps": [240.0, 480.0], "l1.mshr_entries": [64, 128]},
    "zip": {"core_clock_mhz": [1000.0, 1400.0], "noc.bandwidth_gbps": [525.0, 1050.0]},
    "workloads": [{"name": "stride", "params": {"gs": 32, "ctas": 16}, "label": "s32"}],
    "models": ["mdm", "mdm-pipelined"],
}


def test_base_cache_timing_simulates_each_cache_configuration_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache_sim_calls: list[tuple]
) -> None:
    """With ``cache_timing: base`` points that differ only in clock, latency or bandwidth
    share one simulation, run with the base's timing; each point is then predicted on its
    own configuration. The streamed path gives the same rows. Points at the base's timing
    are predicted exactly as with ``cache_timing: point``."""
    from mdm.config import load_gpu
    from mdm.memory import simulate_app, with_timing_of
    from mdm.pipeline import predict_app
    from mdm.traces.accelsim import write_app
    from mdm.traces.workloads import generate

    point = run_sweep(
        parse_spec({**TIMED, "cache_timing": "point"}), tmp_path / "point", executor="serial"
    )
    assert point.items_total == 8  # every point its own simulation
    n_point = len(cache_sim_calls)
    spec = parse_spec({**TIMED, "cache_timing": "base"})
    base = run_sweep(spec, tmp_path / "base", executor="serial")
    assert base.items_total == 2  # one per L1 MSHR count
    assert len(cache_sim_calls) - n_point == 2
    assert len(set(cache_sim_calls[n_point:])) == 2
    base_gpu = load_gpu("mdm_pascal")
    for key in cache_sim_calls[n_point:]:  # simulated with the base's timing
        assert key[1] == base_gpu.core_clock_mhz
        assert base_gpu.dram.bandwidth_gbps in key and base_gpu.noc.bandwidth_gbps in key

    app = generate("stride", gs=32, ctas=16)
    t = base.table.set_index(["point_id", "model"]).sort_index()
    for p in expand_points(spec):
        gpu = base_gpu.with_updates(p.updates)
        cache = simulate_app(app, with_timing_of(gpu, base_gpu))
        pred = predict_app(app, gpu, ["mdm", "mdm-pipelined"], cache=cache)
        for m in ("mdm", "mdm-pipelined"):
            assert t.loc[(p.point_id, m), "cycles"] == pytest.approx(pred.cycles(m), rel=1e-12)
    # a point with the base's timing is predicted as without the option
    at_base = point.table[
        (point.table["core_clock_mhz"] == 1400.0) & (point.table["dram.bandwidth_gbps"] == 480.0)
    ].set_index(["point_id", "model"])
    assert len(at_base) == 4
    for idx, row in at_base.iterrows():
        assert t.loc[idx, "cycles"] == pytest.approx(row["cycles"], rel=1e-12)
    # the timing still matters to the models: a slower clock and DRAM predict other cycles
    assert t["cycles"].nunique() > 4

    # streamed (one kernel at a time, predict_app_configs with sim_gpu): same rows
    trace = write_app(app, tmp_path / "s32").parent
    on_disk = {
        **TIMED,
        "cache_timing": "base",
        "workloads": [{"trace": str(trace), "label": "s32"}],
    }
    monkeypatch.setattr(runner, "STREAM_TRACE_BYTES", 0)
    runner._STREAMED.clear()
    streamed = run_sweep(parse_spec(on_disk), tmp_path / "streamed", executor="serial")
    pd.testing.assert_frame_equal(streamed.table, base.table)


def test_cache_timing_default_and_resuming_older_point_sweeps(tmp_path: Path) -> None:
    """The default is ``base``. A ``point`` sweep leaves the field out of its manifest, so
    folders written before it existed (all ``point``) resume with ``cache_timing =
    "point"``; resuming one with the default is refused with a message naming the field."""
    assert parse_spec(SPEC).cache_timing == "base"
    kw = {"executor": "serial", "evaluate": fake_evaluate, "load_base": fake_base,
          "cache_key": fake_key}  # fmt: skip
    point = parse_spec({**SPEC, "cache_timing": "point"})
    first = run_sweep(point, tmp_path, **kw)
    man = json.loads((tmp_path / "manifest.json").read_text())
    assert "cache_timing" not in man["spec"]
    assert run_sweep(point, tmp_path, **kw).items_skipped == first.items_total
    with pytest.raises(ConfigError, match="cache_timing = 'point'.*--cache-timing point"):
        run_sweep(parse_spec(SPEC), tmp_path, **kw)
    with pytest.raises(ConfigError, match="different sweep"):  # another field too
        run_sweep(parse_spec({**SPEC, "models": ["gpumech"]}), tmp_path, **kw)
    base_dir = tmp_path / "base"
    run_sweep(parse_spec(SPEC), base_dir, **kw)
    assert json.loads((base_dir / "manifest.json").read_text())["spec"]["cache_timing"] == "base"
    with pytest.raises(ConfigError, match="cache_timing = 'base'"):
        run_sweep(point, base_dir, **kw)
    with pytest.raises(ConfigError, match="cache_timing"):
        parse_spec({**SPEC, "cache_timing": "sometimes"})


def test_pool_gets_each_uncached_issue_loop_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the real pipeline, the issue loops the items' cache simulations need and
    numba's cache lacks go to the pool first, one per loop (here an L1 allocating on
    miss and on fill: two); fakes get none, nor do loops numba's cache holds."""
    from mdm.memory import cachesim

    spec = parse_spec(
        {
            **SPEC,
            "deltas": {"classic": {}, "streaming": {"l1.allocate_on": "fill"}},
            "grid": {"n_sm": [14, 28]},
        }
    )
    items = runner.plan(spec, fake_base, runner._cache_key)
    sims = [it.gpus[0] if it.sim_gpu is None else it.sim_gpu for it in items]
    want = sorted({cachesim.issue_loop_key(g) for g in sims})
    assert len(want) == 2

    class Pool:
        def __init__(self) -> None:
            self.calls: list[tuple] = []

        def submit(self, fn: Any, *args: Any) -> tuple:
            self.calls.append((fn, *args))
            return (fn, *args)

    monkeypatch.setattr(cachesim, "issue_loop_cached", lambda gpu: False)
    pool = Pool()
    runner._compile_first(pool, items, runner.evaluate_item)
    assert all(c[0] is cachesim.compile_issue_loop for c in pool.calls)
    assert sorted(cachesim.issue_loop_key(c[1]) for c in pool.calls) == want
    assert runner._compile_first(Pool(), items, fake_evaluate) == []
    monkeypatch.setattr(cachesim, "issue_loop_cached", lambda gpu: True)
    assert runner._compile_first(Pool(), items, runner.evaluate_item) == []


def test_labels_that_differ_in_odd_characters_keep_their_own_parts(tmp_path: Path) -> None:
    """``my kernel`` and ``my_kernel`` (or ``a/b`` and ``a_b``) become the same file
    name once odd characters are replaced: each gets a hash of its label, so neither
    item's rows replace the other's; a plain label keeps the name it always had."""
    labels = ["my kernel", "my_kernel", "a/b", "a_b"]
    spec = parse_spec(
        {
            **SPEC,
            "workloads": [{"name": "vecadd", "label": lab} for lab in labels],
            "grid": {"n_sm": [14]},
            "deltas": {},
        }
    )
    res = _serial(spec, tmp_path)
    names = sorted(p.name for p in (tmp_path / "parts").glob("*.json"))
    assert len(names) == len(labels)
    assert sorted(res.table["workload"].unique()) == sorted(labels)
    assert len(res.table) == len(labels) * len(SPEC["models"])
    plain = [n for n in names if n.startswith("my_kernel__")]
    assert len(plain) == 1  # the label without odd characters: no hash added


def test_output_folder_is_new_empty_or_a_sweeps_own(tmp_path: Path) -> None:
    """``--out`` as a file, or a folder of other files, is refused before anything is
    written; a folder left with an empty ``parts/`` by a refused spec is taken."""
    spec = parse_spec({**SPEC, "grid": {"n_sm": [14]}})
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        _serial(spec, afile)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "results.csv").write_text("precious\n")
    with pytest.raises(ConfigError, match=r"holds files but no sweep .*results\.csv"):
        _serial(spec, mine)
    assert (mine / "results.csv").read_text() == "precious\n"
    assert sorted(p.name for p in mine.iterdir()) == ["results.csv"]
    left = tmp_path / "left"
    (left / "parts").mkdir(parents=True)
    assert len(_serial(spec, left).table) > 0


def test_damaged_parts_run_again_and_a_changed_spec_names_what_differs(
    tmp_path: Path,
) -> None:
    """A part file that does not read as rows (truncated, or not a list) is reported
    and its item run again, with the same rows as before; an unreadable manifest is an
    error naming it; a different spec is refused with the fields in which it differs."""
    from mdm.errors import MdmWarning

    spec = parse_spec(SPEC)
    first = _serial(spec, tmp_path)
    parts = sorted((tmp_path / "parts").glob("*.json"))
    parts[0].write_bytes(parts[0].read_bytes()[:20])
    parts[1].write_text('{"rows": []}')
    with pytest.warns(MdmWarning, match="unreadable part") as caught:
        again = _serial(spec, tmp_path)
    assert len(caught) == 2 and again.items_run == 2
    pd.testing.assert_frame_equal(again.table, first.table)
    edited = parse_spec({**SPEC, "grid": {**SPEC["grid"], "n_sm": [14, 28, 56]}})
    with pytest.raises(ConfigError, match=r"differs in: grid\)"):
        _serial(edited, tmp_path)
    (tmp_path / "manifest.json").write_text("")
    with pytest.raises(ConfigError, match=r"manifest\.json: cannot read a sweep's manifest"):
        _serial(spec, tmp_path)


def test_spec_with_a_key_given_twice_is_an_error(tmp_path: Path) -> None:
    """PyYAML keeps the last of two equal keys; a spec that gives one twice (two grids
    over n_sm) is refused with both lines, not run over the second alone."""
    spec = tmp_path / "dup.yaml"
    spec.write_text("grid: {n_sm: [14], n_sm: [28]}\nworkloads: [{name: vecadd}]\n")
    with pytest.raises(ConfigError, match=r"(?s)dup\.yaml: cannot parse spec: .*'n_sm' a second"):
        load_spec(spec)
    spec.write_text("grid:\n  n_sm: [14]\nworkloads: [{name: vecadd}]\ngrid:\n  n_sm: [28]\n")
    with pytest.raises(ConfigError, match=r"'grid' a second time \(first on line 1\)"):
        load_spec(spec)


def test_an_items_error_names_the_workload_and_its_points(tmp_path: Path) -> None:
    """A kernel that does not fit at one point stops the sweep with the workload and
    that point's swept values in the message (serially as in a pool), and the items
    finished before it stay on disk for a resume."""
    from mdm.errors import MdmError

    def picky(item: WorkItem) -> list[dict[str, Any]]:
        if item.gpus[0].n_sm == 28:
            raise MdmError("a block of 1 threads does not fit on an SM")
        return fake_evaluate(item)

    spec = parse_spec({**SPEC, "deltas": {}, "grid": {"n_sm": [14, 28]}})
    with pytest.raises(MdmError, match=r"stride\(gs=32\) at point 1 \(n_sm=28\): a block of"):
        _serial(spec, tmp_path, picky)
    assert len(list((tmp_path / "parts").glob("*.json"))) == 1
    many = runner._points_text(expand_points(parse_spec(SPEC)))
    assert many.startswith("points 0, 1, 2, ... (") and many.endswith("; and 9 more)")


def test_a_grid_value_twice_or_a_field_in_grid_and_zip_is_refused() -> None:
    """``n_sm: [14, 28, 28.0]`` would run one point twice under two ids (duplicate rows),
    and a field in both grid and zip would run zip's values only (grid's dropped)."""
    with pytest.raises(ConfigError, match=r"grid field 'n_sm' lists 28\.0 twice"):
        parse_spec({**SPEC, "grid": {"n_sm": [14, 28, 28.0]}})
    with pytest.raises(ConfigError, match=r"\['n_sm'\] in both grid and zip"):
        parse_spec({**SPEC, "grid": {"n_sm": [14, 28]}, "zip": {"n_sm": [56, 80]}})


def test_points_where_a_kernel_does_not_fit_are_kept_as_skipped(tmp_path: Path) -> None:
    """With the real pipeline: a grid over shared memory where gemm_tiled's block
    (2 KB) does not fit at 1 KB gives that point's rows without cycles and with the
    reason; the other points and workloads are predicted, the report is written from
    the predicted rows, and a resume runs nothing and gives the same table."""
    from mdm.report.pages import sweep_report

    spec = parse_spec(
        {
            "name": "fit",
            "grid": {"sm.shared_mem_bytes": [98304, 1024]},
            "workloads": [
                {"name": "gemm_tiled", "params": {"M": 64, "N": 64, "K": 32}},
                {"name": "vecadd", "params": {"ctas": 8}},
            ],
            "models": ["mdm", "roofline"],
        }
    )
    res = run_sweep(spec, tmp_path, executor="serial")
    t = res.table
    skipped = t[t["skipped"].notna()]
    assert len(t) == 8 and len(skipped) == 2
    assert set(skipped["workload"]) == {"gemm_tiled(K=32,M=64,N=64)"}
    assert set(skipped["sm.shared_mem_bytes"]) == {1024}
    assert skipped["cycles"].isna().all() and skipped["ipc"].isna().all()
    assert skipped["skipped"].str.contains(r"kernel \d+ \(sgemm.*does not fit on an SM").all()
    assert t.loc[t["skipped"].isna(), "cycles"].gt(0).all()
    page = sweep_report(t, tmp_path, spec.swept_fields, "fit")
    assert "2 rows of 1 (workload, point) pairs have no prediction" in page.read_text()
    again = run_sweep(spec, tmp_path, executor="serial")
    assert again.items_run == 0
    pd.testing.assert_frame_equal(again.table, t)


def test_later_parts_override_and_points_are_identified_by_their_updates() -> None:
    """Zip overrides grid overrides the named delta on the same field (module
    docstring); a point's id depends on its delta and update dict, not on the order the
    fields were given."""
    from mdm.explore.spec import point_id

    spec = parse_spec(
        {
            **SPEC,
            "deltas": {"d": {"n_sm": 7, "l1.mshr_entries": 32}},
            "grid": {"n_sm": [14, 28]},
            "zip": {"l1.mshr_entries": [64, 256]},
        }
    )
    pts = expand_points(spec)
    assert [p.updates for p in pts] == [
        {"n_sm": 14, "l1.mshr_entries": 64},
        {"n_sm": 14, "l1.mshr_entries": 256},
        {"n_sm": 28, "l1.mshr_entries": 64},
        {"n_sm": 28, "l1.mshr_entries": 256},
    ]
    assert spec.swept_fields == ["n_sm", "l1.mshr_entries"]
    assert point_id({"a": 1, "b": 2}) == point_id({"b": 2, "a": 1})
    assert point_id({"a": 1}) != point_id({"a": 2})
    # two deltas with the same updates are two points (their labels differ)
    two = parse_spec({**SPEC, "deltas": {"p": {"n_sm": 14}, "q": {"n_sm": 14}}, "grid": {}})
    assert [p.delta for p in expand_points(two)] == ["p", "q"]
    assert len({p.point_id for p in expand_points(two)}) == 2


def test_zip_of_three_lists_and_workload_keys() -> None:
    """Every zip list must have the same length (three lists too); a built-in
    workload's key lists its parameters sorted, whatever their order in the spec."""
    zips = {"n_sm": [14, 28], "core_clock_mhz": [1000, 2000], "l1.mshr_entries": [32]}
    with pytest.raises(ConfigError, match="zip lists must have equal lengths"):
        parse_spec({**SPEC, "grid": {}, "zip": zips})
    with pytest.raises(ConfigError, match="zip lists must not be empty"):
        parse_spec({**SPEC, "grid": {}, "zip": {"n_sm": []}})
    a = parse_spec({**SPEC, "workloads": [{"name": "stride", "params": {"gs": 32, "ctas": 4}}]})
    b = parse_spec({**SPEC, "workloads": [{"name": "stride", "params": {"ctas": 4, "gs": 32}}]})
    assert a.workloads[0].key == b.workloads[0].key == "stride(ctas=4,gs=32)"
    with pytest.raises(ConfigError, match="workload labels must be unique"):
        parse_spec({**SPEC, "workloads": [{"name": "vecadd"}, {"name": "vecadd"}]})


def test_table_rows_are_sorted_and_carry_each_points_actual_values(tmp_path: Path) -> None:
    """The merged table is ordered by workload, point and model whatever order the items
    finished in, and each row's swept columns hold the point's configuration values
    (a field a delta leaves alone shows the base's value, not an empty cell)."""
    res = _run(tmp_path, executor="serial")
    t = res.table
    keys = list(zip(t["workload"], t["point"], t["model"], strict=True))
    assert keys == sorted(keys)
    base = fake_base("")
    classic = t[t["delta"] == "classic"]
    assert (classic["l1.mshr_entries"] == base.l1.mshr_entries).all()
    assert (t[t["delta"] == "small_mshr"]["l1.mshr_entries"] == 32).all()


def test_a_file_named_parts_is_not_a_sweep_folder(tmp_path: Path) -> None:
    """Only a *folder* ``parts/`` may be there without a manifest (a refused spec's
    leftover): a file of that name is one of the folder's own files, refused."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "parts").write_text("mine\n")
    with pytest.raises(ConfigError, match=r"holds files but no sweep .*parts"):
        _serial(parse_spec({**SPEC, "grid": {"n_sm": [14]}}), out)
    assert (out / "parts").read_text() == "mine\n"
