"""Applications read one kernel at a time (:class:`mdm.traces.LazyApp`): the same
results as the whole trace in memory, one kernel alive at a time in every stage that
takes one, errors in the listing before any kernel is read, and no partial output when
a kernel is malformed half-way through a conversion."""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import weakref
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mdm.cli.main import app as cli
from mdm.config import load_gpu
from mdm.errors import TraceFormatError
from mdm.memory import simulate_app
from mdm.pipeline import predict_app, predict_app_configs
from mdm.traces import (
    AppTrace,
    KernelTrace,
    LazyApp,
    Memcpy,
    open_trace,
    save_store,
    write_app,
)
from mdm.traces.model import ARRAY_FIELDS
from mdm.traces.stats import app_stats
from mdm.traces.workloads import generate

runner = CliRunner()
MODELS = ["mdm", "gpumech", "mwp-cwp"]


@pytest.fixture(scope="module")
def three_kernels() -> AppTrace:
    """stencil2d's two kernels and a stride kernel behind them, with memcpys between."""
    st = generate("stencil2d", seed=1, W=128, H=64)
    sd = generate("stride", seed=2, gs=32, ctas=16)
    k3 = dataclasses.replace(sd.kernels[0], kernel_id=3)
    return AppTrace(commands=[*st.commands, Memcpy(addr=0x1000, nbytes=64), k3], name="three")


@pytest.fixture(scope="module")
def on_disk(three_kernels: AppTrace, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("lazy") / "three"
    write_app(three_kernels, d)
    return d


def _same_commands(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        x.equals(y) if isinstance(x, KernelTrace) else x == y for x, y in zip(a, b, strict=True)
    )


def test_lazy_passes_read_what_the_eager_reader_reads(on_disk: Path, tmp_path: Path) -> None:
    eager = open_trace(on_disk)
    lazy = open_trace(on_disk, lazy=True)
    assert isinstance(lazy, LazyApp) and lazy.n_kernels == eager.n_kernels == 3
    for _ in range(2):  # every pass reads the trace again
        assert _same_commands(list(lazy.iter_commands()), eager.commands)
    store = save_store(lazy, tmp_path / "three.mdmtrace")
    lazy_store = open_trace(store, lazy=True)
    assert lazy_store.n_kernels == 3
    assert _same_commands(list(lazy_store.iter_commands()), eager.commands)
    assert _same_commands(open_trace(store).commands, eager.commands)


def test_lazy_predictions_and_counts_equal_the_eager_ones(on_disk: Path) -> None:
    gpu = load_gpu("mdm_pascal")
    eager, lazy = open_trace(on_disk), open_trace(on_disk, lazy=True)
    a = predict_app(eager, gpu, MODELS)
    b = predict_app(lazy, gpu, MODELS)
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    assert len(b.kernels["mdm"]) == 3
    ca, cb = simulate_app(eager, gpu), simulate_app(lazy, gpu)
    assert [k.l2_misses for k in ca.kernels] == [k.l2_misses for k in cb.kernels]
    assert ca.total().l1_read_misses == cb.total().l1_read_misses > 0
    assert app_stats(eager) == app_stats(lazy)


def test_a_missing_kernel_file_fails_before_any_kernel_is_read(on_disk: Path) -> None:
    listing = (on_disk / "kernelslist.g").read_text() + "kernel-99.traceg\n"
    bad = on_disk.parent / "bad_listing"
    bad.mkdir()
    for f in on_disk.iterdir():
        (bad / f.name).symlink_to(f)
    (bad / "kernelslist.g").unlink()
    (bad / "kernelslist.g").write_text(listing)
    n = len(listing.splitlines())
    with pytest.raises(TraceFormatError, match=rf"kernelslist.g:{n}: .*'kernel-99.traceg'"):
        open_trace(bad, lazy=True)


class _Watched:
    """A LazyApp over fresh copies of ``app``'s kernels (fresh arrays too) that fails
    when it is asked for a kernel while an earlier one, or any of its arrays, is alive."""

    def __init__(self, app: AppTrace) -> None:
        self.app = app
        self.refs: list[weakref.ref] = []
        self.reads = 0

    def _commands(self) -> Iterator[KernelTrace | Memcpy]:
        for cmd in self.app.commands:
            if isinstance(cmd, Memcpy):
                yield cmd
                continue
            gc.collect()
            alive = [r for r in self.refs if r() is not None]
            assert not alive, f"{len(alive)} object(s) of an earlier kernel still alive"
            kt = dataclasses.replace(cmd, **{f: np.array(getattr(cmd, f)) for f in ARRAY_FIELDS})
            self.refs += [weakref.ref(kt), *(weakref.ref(getattr(kt, f)) for f in ARRAY_FIELDS)]
            self.reads += 1
            yield kt
            del kt

    def lazy(self) -> LazyApp:
        return LazyApp(self.app.name, self.app.n_kernels, self._commands)


@pytest.mark.parametrize(
    "stage",
    ["predict_app", "predict_app_configs", "simulate_app", "app_stats", "write_app", "save_store"],
)
def test_every_stage_holds_one_kernel_at_a_time(
    stage: str, three_kernels: AppTrace, tmp_path: Path
) -> None:
    w = _Watched(three_kernels)
    gpu = load_gpu("mdm_pascal")
    run = {
        "predict_app": lambda a: predict_app(a, gpu, MODELS),
        "predict_app_configs": lambda a: predict_app_configs(
            a, [gpu, gpu.with_updates({"latency.fp32_cycles": 9})], MODELS
        ),
        "simulate_app": lambda a: simulate_app(a, gpu),
        "app_stats": app_stats,
        "write_app": lambda a: write_app(a, tmp_path / "out"),
        "save_store": lambda a: save_store(a, tmp_path / "out.mdmtrace"),
    }[stage]
    result = run(w.lazy())
    assert w.reads == 3
    gc.collect()
    kept = [r for r in w.refs if r() is not None]
    assert not kept, f"the result keeps {len(kept)} object(s) of the kernels alive"
    del result


def test_cli_predict_and_cachesim_stream(on_disk: Path) -> None:
    gpu = load_gpu("mdm_pascal")
    r = runner.invoke(cli, ["predict", str(on_disk), "--gpu", "mdm_pascal", "--json"])
    assert r.exit_code == 0, r.output
    want = predict_app(open_trace(on_disk), gpu, sorted(json.loads(r.stdout)["models"]))
    assert json.loads(r.stdout) == json.loads(want.to_json())
    r = runner.invoke(cli, ["cachesim", str(on_disk), "--gpu", "mdm_pascal", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    res = simulate_app(open_trace(on_disk), gpu)
    assert [k["l2_misses"] for k in got["kernels"]] == [k.l2_misses for k in res.kernels]


def _truncate_last_kernel(src: Path, dst: Path) -> Path:
    """A copy of ``src`` whose last kernel file is cut in the middle of a line."""
    dst.mkdir()
    for f in src.iterdir():
        (dst / f.name).write_bytes(f.read_bytes())
    last = [ln for ln in (dst / "kernelslist.g").read_text().splitlines() if "traceg" in ln][-1]
    data = (dst / last).read_bytes()
    (dst / last).write_bytes(data[: len(data) * 2 // 3].rsplit(b"\n", 1)[0] + b"\n0 0 0x")
    return dst / last


@pytest.mark.parametrize("suffix", ["", ".mdmtrace"])
def test_convert_of_a_bad_kernel_leaves_no_partial_output(
    on_disk: Path, tmp_path: Path, suffix: str
) -> None:
    bad_file = _truncate_last_kernel(on_disk, tmp_path / "bad")
    out = tmp_path / f"out{suffix}"
    r = runner.invoke(cli, ["trace", "convert", str(tmp_path / "bad"), str(out)])
    assert r.exit_code == 1
    assert bad_file.name in r.output and len(r.output.strip().splitlines()) == 1
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp left
    # an earlier good conversion at OUT is kept as it was
    ok = runner.invoke(cli, ["trace", "convert", str(on_disk), str(out)])
    assert ok.exit_code == 0, ok.output
    before = sorted((p.name, p.stat().st_size) for p in out.iterdir())
    r = runner.invoke(cli, ["trace", "convert", str(tmp_path / "bad"), str(out)])
    assert r.exit_code == 1
    assert sorted((p.name, p.stat().st_size) for p in out.iterdir()) == before


def test_convert_replaces_a_trace_but_not_other_files(on_disk: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    for _ in range(2):  # an existing trace at OUT is replaced whole
        r = runner.invoke(cli, ["trace", "convert", str(on_disk), str(out), "--compress", "xz"])
        assert r.exit_code == 0, r.output
    assert _same_commands(open_trace(out).commands, open_trace(on_disk).commands)
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    r = runner.invoke(cli, ["trace", "convert", str(on_disk), str(other)])
    assert r.exit_code == 1 and "holds files but no trace" in r.output
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    # a trace with a file of the user's beside it is not replaced, nor is the input
    (out / "summary.json").write_text("{}")
    before = sorted((p.name, p.stat().st_size) for p in out.iterdir())
    r = runner.invoke(cli, ["trace", "convert", str(on_disk), str(out)])
    assert r.exit_code == 1 and "other files (summary.json)" in r.output
    (out / "summary.json").unlink()
    for src in (out, out / "kernelslist.g"):
        r = runner.invoke(cli, ["trace", "convert", str(src), str(out)])
        assert r.exit_code == 1 and "is the input trace's folder" in r.output
    assert sorted((p.name, p.stat().st_size) for p in out.iterdir()) == before[:-1]
    # what is written gets a plain file's permissions (the umask's), not a temp's 0700
    mask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh"
        assert runner.invoke(cli, ["trace", "convert", str(on_disk), str(fresh)]).exit_code == 0
        assert fresh.stat().st_mode & 0o777 == 0o755
    finally:
        os.umask(mask)


def test_on_kernel_reports_each_kernel_in_order(on_disk: Path) -> None:
    seen: list[str] = []
    pred = predict_app(
        open_trace(on_disk, lazy=True), load_gpu("v100"), ["mdm"], on_kernel=seen.append
    )
    assert (
        seen
        == [k.name for k in open_trace(on_disk).kernels]
        == [p.kernel for p in pred.kernels["mdm"]]
    )


def test_predict_app_configs_is_predict_app_per_configuration(on_disk: Path) -> None:
    """One pass, one cache simulation, the predictions of every configuration sharing it."""
    from mdm.memory import cache_key

    g1 = load_gpu("mdm_pascal")
    g2 = g1.with_updates({"latency.fp32_cycles": 9, "latency.int_alu_cycles": 9})
    assert cache_key(g1) == cache_key(g2)
    both = predict_app_configs(open_trace(on_disk, lazy=True), [g1, g2], MODELS)
    eager = open_trace(on_disk)
    for g, pred in zip([g1, g2], both, strict=True):
        alone = predict_app(eager, g, MODELS)
        assert pred.gpu == g.name
        assert [pred.cycles(m) for m in MODELS] == [alone.cycles(m) for m in MODELS]
    assert both[0].cycles("mdm") != both[1].cycles("mdm")  # the configurations differ
    other = g1.with_updates({"dram.bandwidth_gbps": 100.0})
    with pytest.raises(ValueError, match="different cache simulations"):
        predict_app_configs(eager, [g1, other], MODELS)
    # sim_gpu: one simulation on g1 for configurations that differ from it in timing only
    pair = predict_app_configs(eager, [g1, other], MODELS, sim_gpu=g1)
    assert pair[0].cycles("mdm") == both[0].cycles("mdm")
    own = simulate_app(eager, g1)
    assert pair[1].cycles("mdm") == predict_app(eager, other, MODELS, cache=own).cycles("mdm")
    with pytest.raises(ValueError, match="different cache simulations"):  # structure differs
        predict_app_configs(
            eager, [other.with_updates({"l1.mshr_entries": 64})], MODELS, sim_gpu=g1
        )


def test_data_bytes_counts_each_listed_kernel(on_disk: Path, tmp_path: Path) -> None:
    kfiles = sorted(p for p in on_disk.iterdir() if ".traceg" in p.name)
    twice = tmp_path / "twice"
    twice.mkdir()
    (twice / kfiles[0].name).write_bytes(kfiles[0].read_bytes())
    (twice / "kernelslist.g").write_text(f"{kfiles[0].name}\n" * 2)
    assert open_trace(twice, lazy=True).data_bytes == 2 * kfiles[0].stat().st_size
    store = save_store(open_trace(on_disk, lazy=True), tmp_path / "s.mdmtrace")
    lazy_store = open_trace(store, lazy=True)
    assert lazy_store.data_bytes == sum(f.stat().st_size for f in store.rglob("*") if f.is_file())


def test_a_large_trace_is_streamed_by_the_sweep(
    on_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above STREAM_TRACE_BYTES a work item reads the trace one kernel at a time (no
    whole-app cache), with the rows of the cached path."""
    from mdm.explore import runner as sweep_runner
    from mdm.explore.spec import parse_spec

    spec = parse_spec(
        {
            "name": "big",
            "base": "mdm_pascal",
            "grid": {"latency.fp32_cycles": [4, 9], "dram.bandwidth_gbps": [240.0, 480.0]},
            "workloads": [{"trace": str(on_disk)}],
            "models": MODELS,
            "cache_timing": "point",  # two items: each latency its own simulation
        }
    )
    items = sweep_runner.plan(spec)
    assert len(items) == 2 and all(len(i.points) == 2 for i in items)
    monkeypatch.setattr(sweep_runner, "_STREAMED", {})
    cached = [sweep_runner.evaluate_item(i) for i in items]
    monkeypatch.setattr(sweep_runner, "_STREAMED", {})
    monkeypatch.setattr(sweep_runner, "STREAM_TRACE_BYTES", 0)

    def no_whole_app(w: object) -> None:
        raise AssertionError("a streamed trace must not be loaded whole")

    monkeypatch.setattr(sweep_runner, "load_app", no_whole_app)
    assert sweep_runner.streamed(spec.workloads[0])
    streamed = [sweep_runner.evaluate_item(i) for i in items]
    pd = pytest.importorskip("pandas")
    for a, b in zip(streamed, cached, strict=True):  # equals: NaN (mwp-cwp's MD share) too
        assert pd.DataFrame(a).equals(pd.DataFrame(b))
    assert len(streamed[0]) == 2 * len(MODELS)
