"""Bad inputs that once crashed or passed silently (a QA pass over crafted files):
each now gives one error naming the file (and line) and what was expected, or a warning."""

from __future__ import annotations

import gzip
import json
import re
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mdm.cli.main import app as cli
from mdm.errors import ConfigError, MdmWarning, TraceFormatError
from mdm.traces.accelsim import read_app, read_kernel, write_app
from mdm.traces.workloads import generate

REF_CFG = Path(__file__).resolve().parents[2] / "shared/reference/configs/mdm_pascal"


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("t")
    write_app(generate("stride", gs=32, ctas=2), d / "t")
    return d / "t"


def _edited(src: Path, dst: Path, old: str, new: str) -> Path:
    text = src.read_text()
    assert old in text
    dst.write_text(text.replace(old, new, 1))
    return dst


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if needle in ln)


def test_damaged_deflate_data_is_a_trace_error(trace_dir: Path, tmp_path: Path) -> None:
    raw = gzip.compress((trace_dir / "kernel-1.traceg").read_bytes())
    bad = bytearray(raw)
    for i in range(20, 28):  # inside the first deflate block: zlib.error, not OSError
        bad[i] ^= 0x5A
    p = tmp_path / "kernel-1.traceg.gz"
    p.write_bytes(bytes(bad))
    with pytest.raises(TraceFormatError, match="cannot decompress"):
        read_kernel(p)


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("(2,1,1)", "(99999999999,99999,1)", r"grid dim' expected at most"),
        ("(256,1,1)", "(256,1,65)", r"block dim' expected at most"),
        ("-nregs = 16", "-nregs = -5", r"'-nregs' expected >= 0"),
        ("-shmem = 3072", "-shmem = -100", r"'-shmem' expected >= 0"),
    ],
)
def test_header_values_beyond_cuda_limits(
    trace_dir: Path, tmp_path: Path, old: str, new: str, match: str
) -> None:
    p = _edited(trace_dir / "kernel-1.traceg", tmp_path / "kernel-1.traceg", old, new)
    with pytest.raises(TraceFormatError, match=match) as ei:
        read_kernel(p)
    assert ei.value.line == _line_of(p, new)  # the header line, before any allocation


def test_kernel_list_without_kernels_or_with_negative_copy(tmp_path: Path) -> None:
    (tmp_path / "kernelslist.g").write_text("MemcpyHtoD,0x00007f4000000000,64\n")
    with pytest.raises(TraceFormatError, match="at least one kernel"):
        read_app(tmp_path)
    (tmp_path / "kernelslist.g").write_text("MemcpyHtoD,0x00007f4000000000,-5\n")
    with pytest.raises(TraceFormatError, match=r"kernelslist.g:1: .*bytes >= 0"):
        read_app(tmp_path)
    res = CliRunner().invoke(cli, ["predict", str(tmp_path), "--gpu", "mdm_pascal"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    # a copy past the 64-bit address space (it would wrap around when it fills the L2)
    (tmp_path / "kernelslist.g").write_text("MemcpyHtoD,0xffffffffffffff00,4096\n")
    with pytest.raises(TraceFormatError, match=r"kernelslist.g:1: .*64-bit address space"):
        read_app(tmp_path)


@pytest.mark.skipif(not REF_CFG.is_dir(), reason="../shared/reference not available")
@pytest.mark.parametrize(
    ("option", "value", "match"),
    [
        ("-gpgpu_clock_domains", "1400.0:1400.0:1400.0:0", "expected four positive clocks"),
        ("-dram_data_command_freq_ratio", "0", "expected a positive integer"),
        ("-gpgpu_n_mem", "inf", "expected a number"),
    ],
)
def test_gpgpusim_config_zero_and_infinite_values(
    tmp_path: Path, option: str, value: str, match: str
) -> None:
    from mdm.config.accelsim import import_accelsim

    src = (REF_CFG / "gpgpusim.config").read_text()
    p = tmp_path / "gpgpusim.config"
    text, n = re.subn(rf"(?m)^{option} .*$", f"{option} {value}", src, count=1)
    assert n == 1
    p.write_text(text)
    line = _line_of(p, f"{option} {value}")
    with pytest.raises(ConfigError, match=rf"gpgpusim.config:{line}: .*{match}"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import_accelsim(p)


@pytest.mark.skipif(not REF_CFG.is_dir(), reason="../shared/reference not available")
def test_gpgpusim_config_repeated_option_and_missing_icnt_are_warned(tmp_path: Path) -> None:
    from mdm.config.accelsim import import_accelsim

    src = (REF_CFG / "gpgpusim.config").read_text()
    p = tmp_path / "gpgpusim.config"  # no .icnt file beside it
    p.write_text(src + "\n-gpgpu_n_clusters 14\n")
    with pytest.warns(MdmWarning) as rec:
        gpu = import_accelsim(p)
    text = " ".join(str(w.message) for w in rec)
    assert gpu.n_sm == 14  # the last value, as GPGPU-Sim takes it
    assert re.search(r"-gpgpu_n_clusters given again .*'28'.*'14'", text)
    if "-inter_config_file" in src:
        assert "-inter_config_file" in text and "not found" in text


def test_config_file_numbers_must_be_finite_and_not_booleans(tmp_path: Path) -> None:
    from mdm.config.load import load_gpu

    res = CliRunner().invoke(
        cli, ["config", "show", "mdm_pascal", "--out", str(tmp_path / "g.toml")]
    )
    assert res.exit_code == 0
    good = (tmp_path / "g.toml").read_text()
    for line, match in (
        ("core_clock_mhz = inf", "finite"),
        ("n_sm = true", "n_sm: expected a number"),
    ):
        key = line.split(" =")[0]
        p = tmp_path / f"{key}.toml"
        p.write_text(re.sub(rf"(?m)^{key} = .*$", line, good, count=1))
        with pytest.raises(ConfigError, match=match):
            load_gpu(p)


@pytest.mark.parametrize("suffix", [".toml", ".yaml"])
def test_binary_config_and_spec_files(tmp_path: Path, suffix: str) -> None:
    from mdm.config.load import load_gpu
    from mdm.explore.spec import load_spec

    p = tmp_path / f"bin{suffix}"
    p.write_bytes(b"\x00\x01\x02\xff\xfe")
    with pytest.raises(ConfigError, match="expected UTF-8 text"):
        load_gpu(p)
    with pytest.raises(ConfigError, match="expected UTF-8 text"):
        load_spec(p)


def test_sweep_folder_takes_a_corrected_spec_and_missing_traces_fail_first(
    tmp_path: Path,
) -> None:
    from mdm.explore.runner import run_sweep
    from mdm.explore.spec import parse_spec

    out = tmp_path / "o"
    wl = [{"name": "stride", "params": {"gs": 32, "ctas": 8}}]
    bad = parse_spec({"grid": {"l1.mshr_entriez": [32]}, "workloads": wl})
    with pytest.raises(ConfigError, match="l1.mshr_entriez"):
        run_sweep(bad, out, executor="serial")
    assert not out.exists()  # nothing written for an invalid spec, not even the folder
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"spec": {"name": "other"}}))  # no results
    good = parse_spec({"grid": {"l1.mshr_entries": [32]}, "workloads": wl})
    assert run_sweep(good, out, executor="serial").items_run == 1
    missing = parse_spec({"workloads": [*wl, {"trace": str(tmp_path / "nope")}]})
    calls: list[object] = []
    with pytest.raises(ConfigError, match="nope.*workload trace not found"):
        run_sweep(missing, tmp_path / "m", executor="serial", evaluate=calls.append)
    assert calls == []  # found before any work item ran


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"name": "nosuch"}, r"workloads\.0: .*unknown workload 'nosuch'"),
        ({"name": "stride", "params": {"gz": 32}}, r"workloads\.0: .*no parameter 'gz'"),
        ({"name": "stride", "params": {"gs": "abc"}}, r"workloads\.0: .*gs must be a number"),
        ({"name": "stride", "params": {"ctas": 2.5}}, r"workloads\.0: .*ctas must be an integer"),
    ],
)
def test_sweep_spec_names_a_bad_builtin_workload_when_loaded(workload: dict, message: str) -> None:
    """A built-in workload's name and parameters are checked with the spec, naming the
    spec and the workload's entry, not later by a worker once the sweep has started."""
    from mdm.explore.spec import parse_spec

    with pytest.raises(ConfigError, match=message) as err:
        parse_spec({"workloads": [workload]}, "s.yaml")
    assert str(err.value).startswith("s.yaml")


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "two words", "x" * 101])
def test_sweep_name_is_a_folder_name(name: str) -> None:
    """The default output folder is sweep-NAME, so a name cannot hold a path."""
    from mdm.explore.spec import parse_spec

    with pytest.raises(ConfigError, match="field name"):
        parse_spec({"name": name, "workloads": [{"name": "stride"}]})
    assert parse_spec({"name": "mshr_vs-bw.2", "workloads": [{"name": "stride"}]})


def test_damaged_store_meta_is_named(tmp_path: Path) -> None:
    from mdm.traces import open_trace
    from mdm.traces.store import save_store

    d = tmp_path / "s.mdmtrace"
    save_store(generate("stride", gs=32, ctas=2), d)
    meta = d / "meta.json"
    meta.write_text(meta.read_text()[:300])
    with pytest.raises(TraceFormatError, match=r"meta.json: expected JSON: .*line \d+"):
        open_trace(d)


def test_store_array_of_another_dtype_is_named(tmp_path: Path) -> None:
    import numpy as np

    from mdm.traces import open_trace
    from mdm.traces.store import save_store

    d = tmp_path / "s.mdmtrace"
    save_store(generate("stride", gs=32, ctas=2), d)
    pc = np.load(d / "k0.pc.npy")
    np.save(d / "k0.pc.npy", pc.astype(np.float64))
    with pytest.raises(TraceFormatError, match=r"k0.pc.npy: expected dtype uint32, got float64"):
        open_trace(d)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ([1, 1, 1], r"kernel 0: \d+ warps, expected \d+ \(grid \(1, 1, 1\)"),
        ([4, 1, 1], r"kernel 0: \d+ warps, expected \d+ \(grid \(4, 1, 1\)"),
    ],
)
def test_store_grid_that_disagrees_with_its_blocks_is_named(
    tmp_path: Path, grid: list[int], message: str
) -> None:
    from mdm.traces import open_trace
    from mdm.traces.store import save_store

    d = tmp_path / "s.mdmtrace"
    save_store(generate("stride", gs=32, ctas=2), d)
    meta_file = d / "meta.json"
    meta = json.loads(meta_file.read_text())
    kern = next(c for c in meta["commands"] if c["type"] == "kernel")
    kern["grid"] = grid
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(TraceFormatError, match=r"meta.json.*" + message):
        open_trace(d)


def test_store_warp_ids_outside_the_grid_or_twice_are_named(tmp_path: Path) -> None:
    import numpy as np

    from mdm.traces import open_trace
    from mdm.traces.store import save_store

    d = tmp_path / "s.mdmtrace"
    save_store(generate("stride", gs=32, ctas=2), d)
    blk = np.load(d / "k0.warp_block.npy")
    wid = np.load(d / "k0.warp_id.npy")
    bad = blk.copy()
    bad[-1] = 2  # the grid has blocks 0 and 1
    np.save(d / "k0.warp_block.npy", bad)
    with pytest.raises(TraceFormatError, match=r"warp_block\[\d+\] = 2 is outside the grid's 2"):
        open_trace(d)
    np.save(d / "k0.warp_block.npy", blk)
    dup = wid.copy()
    dup[1] = dup[0]
    np.save(d / "k0.warp_id.npy", dup)
    with pytest.raises(TraceFormatError, match=r"warp 0 of block 0 appears 2 times"):
        open_trace(d)


def test_stride_shared_memory_beyond_every_gpu_is_refused(tmp_path: Path) -> None:
    # threads x n x 4 B of __shared__ output: 256 x 227 x 4 = 232,448 B fits an H100 block
    assert generate("stride", ctas=1, n=227).kernels[0].shmem_bytes == 232_448
    with pytest.raises(ValueError, match=r"n=228 with threads=256 needs 233,472 B .* n <= 227"):
        generate("stride", ctas=1, n=228)
    out = tmp_path / "x"
    res = CliRunner().invoke(cli, ["trace", "gen", "stride", "--out", str(out), "--param", "n=300"])
    assert res.exit_code != 0 and "n <= 227" in res.output
    assert not out.exists()


def test_store_with_a_copy_past_the_address_space(tmp_path: Path) -> None:
    from mdm.traces.store import load_store, save_store

    save_store(generate("vecadd"), tmp_path / "s")
    meta_file = tmp_path / "s" / "meta.json"
    meta = json.loads(meta_file.read_text())
    (copy,) = [c for c in meta["commands"] if c["type"] == "memcpy"][:1]
    copy["addr"] = 2**64 - 16
    meta_file.write_text(json.dumps(meta))
    with pytest.raises(TraceFormatError, match=r"meta.json.*memcpy command.*64-bit"):
        load_store(tmp_path / "s")
