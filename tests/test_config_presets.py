"""Presets and the loader: every preset loads, mdm_pascal = paper 001 Table III, errors."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mdm.config import GPUConfig, list_presets, load_gpu
from mdm.errors import ConfigError

PAPERS = Path(__file__).resolve().parents[1].parent / "shared" / "papers"
EXPECTED = {"mdm_pascal", "sm7_qv100", "gtx1080", "titan_v", "v100", "a100", "h100", "h200"}


def test_every_preset_loads_and_is_named():
    assert EXPECTED <= set(list_presets())
    for name in list_presets():
        gpu = load_gpu(name)
        assert isinstance(gpu, GPUConfig)
        assert gpu.name == name
        assert GPUConfig.model_validate(gpu.model_dump()) == gpu  # round trip
        assert gpu.sm.max_warps * gpu.warp_size == gpu.sm.max_threads


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_preset_runs_the_cache_simulation_and_every_model(name):
    """A shipped preset is usable end to end: its L2 mapping is one the cache simulator
    implements, and every model predicts a finite, positive number of cycles with it."""
    from mdm.memory.hashing import check_l2_mapping
    from mdm.models import _load_builtin  # noqa: F401  (registers the built-in models)
    from mdm.models.base import MODELS
    from mdm.pipeline import predict_app, prepare
    from mdm.traces.workloads import generate

    gpu = load_gpu(name)
    assert check_l2_mapping(gpu) == []
    prep = prepare(generate("vecadd", ctas=64))
    res = predict_app(prep, gpu, sorted(MODELS))
    assert res.models == sorted(MODELS)
    for model in res.models:
        assert 0 < res.cycles(model) < float("inf"), (name, model)


def _table_iii() -> str:
    files = sorted(PAPERS.glob("001_*.txt"))
    if not files:
        pytest.skip(f"paper 001 not found in {PAPERS}")
    text = files[0].read_text()
    start = text.index("TABLE III")
    return text[start : text.index("TABLE IV", start)]


def _num(pattern: str, text: str) -> float:
    m = re.search(pattern, text)
    assert m, pattern
    return float(m.group(1))


def test_mdm_pascal_matches_table_iii():
    """Values read from the paper's Table III text (by path), not copied by hand."""
    t = _table_iii()
    g = load_gpu("mdm_pascal")
    assert g.core_clock_ghz == pytest.approx(_num(r"Clock frequency\s+([\d.]+) GHz", t))
    assert g.n_sm == _num(r"Number of SMs\s+(\d+)", t)
    assert g.sm.max_warps == _num(r"warps per SM\s+(\d+)", t)
    assert g.sm.max_threads == _num(r"threads per SM\s+(\d+)", t)
    assert g.warp_size == _num(r"Warp size\s+(\d+)", t)
    assert g.sm.scheduler_policy == "gto" and "GTO" in t
    l1 = re.search(r"L1 cache per SM\s+(\d+) KB, (\d+)-way, LRU, (\d+) MSHRs", t)
    assert l1
    assert g.l1.size_bytes == int(l1.group(1)) * 1024
    assert (g.l1.ways, g.l1.mshr_entries) == (int(l1.group(2)), int(l1.group(3)))
    llc = re.search(r"Shared LLC\s+(\d+) MB total, (\d+)\D(\d+) KB banks", t)
    assert llc
    assert g.l2.size_bytes == int(llc.group(1)) * 1024 * 1024
    assert g.l2.banks == int(llc.group(2))
    assert g.l2.size_bytes // g.l2.banks == int(llc.group(3)) * 1024
    l2 = re.search(r"(\d+)-way, LRU, (\d+) MSHRs, (\d+) cycles", t)
    assert l2
    assert (g.l2.ways, g.l2.mshr_per_bank) == (int(l2.group(1)), int(l2.group(2)))
    # 120 cycles LLC = L2 round trip + L1 pipeline (schema: l2 excludes the L1 pipeline)
    assert g.l2_hit_latency_cycles + g.l1.hit_latency_cycles == pytest.approx(int(l2.group(3)))
    gbps = [float(x) for x in re.findall(r"(\d+) GB/s", t)]
    assert g.noc.bandwidth_gbps == max(gbps) and g.dram.bandwidth_gbps == min(gbps)
    assert g.dram_latency_cycles == pytest.approx(_num(r"GB/s, (\d+) cycles", t))
    assert g.dram.channels == _num(r"(\d+) memory controllers", t)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_base_and_overrides_in_toml_yaml_json(tmp_path):
    t = _write(tmp_path, "more_mshr.toml", 'base = "mdm_pascal"\n[l1]\nmshr_entries = 256\n')
    g = load_gpu(t)
    assert g.name == "more_mshr" and g.l1.mshr_entries == 256
    assert g.l1.ways == load_gpu("mdm_pascal").l1.ways  # untouched fields kept
    y = _write(tmp_path, "fast.yaml", "base: more_mshr.toml\nname: fast\ncore_clock_mhz: 2000\n")
    g = load_gpu(y)
    assert (g.name, g.core_clock_mhz, g.l1.mshr_entries) == ("fast", 2000, 256)
    j = _write(tmp_path, "few.json", json.dumps({"base": "fast.yaml", "n_sm": 14}))
    g = load_gpu(str(j))
    assert (g.n_sm, g.core_clock_mhz) == (14, 2000)


def test_unknown_key_names_file_and_field(tmp_path):
    p = _write(tmp_path, "bad.toml", 'base = "mdm_pascal"\n[l1]\nmshr_entrys = 3\n')
    with pytest.raises(ConfigError) as ei:
        load_gpu(p)
    msg = str(ei.value)
    assert str(p) in msg and "'l1.mshr_entrys'" in msg and "unknown key" in msg


def test_out_of_range_names_field(tmp_path):
    p = _write(tmp_path, "zero.toml", 'base = "mdm_pascal"\nn_sm = 0\n[dram]\nchannels = 0\n')
    with pytest.raises(ConfigError) as ei:
        load_gpu(p)
    msg = str(ei.value)
    assert str(p) in msg and "'n_sm'" in msg and "'dram.channels'" in msg
    p = _write(tmp_path, "geom.toml", 'base = "mdm_pascal"\n[l1]\nsize_bytes = 50000\n')
    with pytest.raises(ConfigError, match="'l1'.*multiple of ways"):
        load_gpu(p)


def test_loader_errors(tmp_path):
    with pytest.raises(ConfigError, match="unknown GPU preset.*mdm_pascal.*Accel-Sim log"):
        load_gpu("no_such_gpu")
    with pytest.raises(ConfigError, match=r"no GPU given \(--gpu ''\)"):
        load_gpu(" ")
    with pytest.raises(ConfigError, match="not found"):
        load_gpu(tmp_path / "missing.toml")
    # a base that does not resolve is named as the field of the file that gives it
    for base, what in (
        ("no_such_gpu", "unknown GPU preset"),
        ("gone.toml", "configuration file .*gone.toml not found"),
    ):
        child = _write(tmp_path, "child.toml", f'base = "{base}"\n')
        with pytest.raises(ConfigError, match=f"field 'base': {what}") as ei:
            load_gpu(child)
        assert str(ei.value).startswith(str(child))
    with pytest.raises(ConfigError, match=r"\.toml, \.yaml, \.yml or \.json$"):
        load_gpu(_write(tmp_path, "child.toml", 'base = "no_such_gpu"\n'))
    a = _write(tmp_path, "a.toml", 'base = "b.toml"\n')
    _write(tmp_path, "b.toml", 'base = "a.toml"\n')
    with pytest.raises(ConfigError, match="circular"):
        load_gpu(a)
    bad = _write(tmp_path, "syntax.toml", "n_sm = = 3\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_gpu(bad)
    lst = _write(tmp_path, "list.yaml", "- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_gpu(lst)


@pytest.mark.parametrize(
    ("preset", "shared_kb", "ways"),
    [
        # CUDA tuning guides: Volta carve-outs 0/8/16/32/64/96 KB of 128 KB, so 40 KB of
        # shared memory takes 64 KB and leaves 64 KB of L1: 256 ways x 64/128 = 128
        ("v100", 40, 128),
        ("titan_v", 0, 256),  # no shared memory: the whole 128 KB
        # A100: 0/8/16/32/64/100/132/164 KB of 192 KB: 40 KB -> 64 KB, 384 x 128/192
        ("a100", 40, 256),
        ("a100", 101, 384 * (192 - 132) // 192),  # 101 KB -> the 132 KB option
        # H100: ... 196/228 KB of 256 KB: 200 KB -> 228 KB, 512 x 28/256 = 56
        ("h100", 200, 56),
    ],
)
def test_volta_and_later_presets_carve_the_l1_out_of_the_unified_array(
    preset: str, shared_kb: int, ways: int
) -> None:
    from mdm.memory.carveout import adaptive_l1_ways

    assert adaptive_l1_ways(shared_kb * 1024, load_gpu(preset)) == ways


def test_h200_is_the_h100_with_the_h200_memory_system():
    """The h200 preset changes only the DRAM: the product brief's HBM3e (6 stacks,
    4.8 TB/s) and the two values measured on an H200 (latency, row activation); SMs,
    caches, L1 and L2 latencies and the launch overhead stay the h100's."""
    from mdm.config.export import flat_fields

    h100, h200 = flat_fields(load_gpu("h100")), flat_fields(load_gpu("h200"))
    changed = {k for k in h100 if h100[k] != h200[k]}
    assert changed == {
        "name",
        "dram.bandwidth_gbps",
        "dram.channels",
        "dram.latency_ns",
        "dram.activate_ns",
    }
    assert h200["dram.bandwidth_gbps"] == 4800.0 and h200["dram.channels"] == 96


def test_a_preset_name_wins_over_a_folder_of_that_name(tmp_path, monkeypatch, reference_dir):
    """``--gpu h100`` run in a folder holding a folder ``h100`` (the repository's
    benchmarks/hardware does) loads the preset; with a gpgpusim.config in that folder a
    warning says so, and ``./NAME`` reads the folder. A measured table's gpu column
    resolves the same way."""
    import shutil
    import warnings

    from mdm.errors import MdmWarning
    from mdm.explore.measured import _resolve

    monkeypatch.chdir(tmp_path)
    (tmp_path / "h100").mkdir()  # results of a hardware run, say
    with warnings.catch_warnings():
        warnings.simplefilter("error", MdmWarning)
        assert load_gpu("h100").name == "h100"
    shutil.copy(reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config", tmp_path / "h100")
    with pytest.warns(MdmWarning, match=r"h100 names a preset and a folder .*\./h100"):
        assert load_gpu("h100").name == "h100"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MdmWarning)
        assert load_gpu("./h100").n_sm == 80  # the folder: SM7_QV100's 80 SMs
    assert _resolve(tmp_path, "h100", builtin_ok=False) == "h100"
    assert _resolve(tmp_path, "h100/gpgpusim.config", builtin_ok=False).endswith(
        "h100/gpgpusim.config"
    )
