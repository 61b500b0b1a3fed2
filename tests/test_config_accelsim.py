"""Accel-Sim importer: cache strings, option syntax, both reference configs, sweeps."""

from __future__ import annotations

import csv
import dataclasses
import re
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.config import CacheSpec, import_accelsim, load_gpu
from mdm.config.accelsim import parse_options
from mdm.errors import ConfigError, MdmWarning
from mdm.memory.hashing import check_l2_mapping

#: documented tolerance of import vs preset for derived floats (module docstring: 5 %)
REL_TOL = 0.05


def test_cache_string_golden():
    s = CacheSpec.parse("S:4:128:96,L:L:s:N:L,A:256:8,16:0,32")
    assert (s.sectored, s.sets, s.line_bytes, s.ways) == (True, 4, 128, 96)
    assert (s.replacement, s.write_policy, s.alloc_policy) == (
        "lru",
        "local_wb_global_wt",
        "streaming",
    )
    assert (s.write_alloc, s.set_index, s.mshr_type) == ("no_write_allocate", "linear", "assoc")
    assert (s.mshr_entries, s.mshr_max_merge, s.miss_queue, s.result_fifo) == (256, 8, 16, 0)
    assert s.data_port_bytes == 32 and s.size_bytes == 4 * 96 * 128
    p = CacheSpec.parse("N:64:128:6,L:T:m:N:H,A:128:8,16:0,128")
    assert (p.sectored, p.size_bytes, p.write_policy, p.alloc_policy) == (
        False,
        48 * 1024,
        "write_through",
        "on_miss",
    )
    assert (p.set_index, p.mshr_entries, p.port_bytes) == ("fermi_hash", 128, 128)
    short = CacheSpec.parse("N:128:64:2,L:R:f:N:L,S:2:64")  # trailing fields absent
    assert short.miss_queue is None and short.port_bytes == 64 and short.mshr_type == "sector_assoc"
    assert CacheSpec.parse("N:8:128:4,L:R:f:N:L,S:2:48,4").port_bytes == 128


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("N:64:128:6,L:T:m:N", "cannot parse"),  # set-index field missing
        ("Q:64:128:6,L:T:m:N:H,A:128:8", "type 'Q'"),
        ("N:64:128:6,L:T:x:N:H,A:128:8", "allocation policy 'x'"),
        ("N:64:100:6,L:T:m:N:H,A:128:8", "power of two"),
        ("N:0:128:6,L:T:m:N:H,A:128:8", "sets must be positive"),
    ],
)
def test_cache_string_errors(text, what):
    with pytest.raises(ConfigError, match=what):
        CacheSpec.parse(text, "where")


_specs = st.builds(
    CacheSpec,
    sectored=st.booleans(),
    sets=st.integers(1, 4096),
    line_bytes=st.sampled_from([32, 64, 128, 256]),
    ways=st.integers(1, 512),
    replacement=st.sampled_from(["lru", "fifo"]),
    write_policy=st.sampled_from(
        ["read_only", "write_back", "write_through", "write_evict", "local_wb_global_wt"]
    ),
    alloc_policy=st.sampled_from(["on_miss", "on_fill", "streaming"]),
    write_alloc=st.sampled_from(
        ["no_write_allocate", "write_allocate", "fetch_on_write", "lazy_fetch_on_read"]
    ),
    set_index=st.sampled_from(["fermi_hash", "ipoly", "custom", "linear", "xor"]),
    mshr_type=st.sampled_from(["tex_fifo", "sector_tex_fifo", "assoc", "sector_assoc"]),
    mshr_entries=st.integers(0, 10_000),
    mshr_max_merge=st.integers(0, 64),
    miss_queue=st.none() | st.integers(0, 64),
    result_fifo=st.none() | st.integers(0, 64),
    data_port_bytes=st.none() | st.integers(0, 256),
)


@given(_specs)
def test_cache_string_round_trip(spec):
    if spec.miss_queue is None:  # trailing fields only exist after the miss queue
        spec = CacheSpec(**{**spec.__dict__, "result_fifo": None, "data_port_bytes": None})
    text = spec.format()
    assert CacheSpec.parse(text) == spec
    assert CacheSpec.parse(text).format() == text


def test_option_syntax(tmp_path):
    text = '# comment\n-a 1\n-b   two # trailing comment\n-a 3\n-t "x=1:y=2:\n      z=3"\n-neg -1\n'
    opts = parse_options(text, "f.config")
    assert {k: v.value for k, v in opts.items()} == {
        "-a": "3",
        "-b": "two",
        "-t": "x=1:y=2:z=3",
        "-neg": "-1",
    }
    assert opts["-a"].source == "f.config:4"
    with pytest.raises(ConfigError, match=r"f.config:2.*pairs"):
        parse_options("-a 1\n-b\n", "f.config")
    with pytest.raises(ConfigError, match=r"f.config:1.*option name"):
        parse_options("a 1\n", "f.config")


def _import(path: Path, extra: str | list[str] = "") -> tuple:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        gpu = import_accelsim(path, extra)
    return gpu, [w for w in rec if issubclass(w.category, MdmWarning)]


def _compare(imported, preset, exact_floats: set[str]) -> None:
    a, b = imported.model_dump(), preset.model_dump()
    a.pop("name"), b.pop("name")
    for sec in a:
        items = a[sec].items() if isinstance(a[sec], dict) else [("", a[sec])]
        for key, va in items:
            vb = b[sec][key] if key else b[sec]
            field = f"{sec}.{key}" if key else sec
            if isinstance(va, float) and field not in exact_floats:
                assert va == pytest.approx(vb, rel=REL_TOL), field
            else:
                assert va == pytest.approx(vb) if isinstance(va, float) else va == vb, field


def test_mdm_pascal_config_matches_preset(reference_dir):
    gpu, warns = _import(reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config")
    _compare(
        gpu, load_gpu("mdm_pascal"), {"core_clock_mhz", "l2.hit_latency_ns", "dram.bandwidth_gbps"}
    )
    assert gpu.name == "mdm_pascal"
    assert len(warns) == 1
    msg = str(warns[0].message)
    assert "-gpgpu_simd_model" in msg and "-gpgpu_max_insn_issue_per_warp" not in msg
    mapped = (
        "-gpgpu_n_clusters",
        "-gpgpu_l1_banks",
        "-gpgpu_memory_partition_indexing",
        "-gpgpu_num_sp_units",
        "-gpgpu_num_sfu_units",
    )
    assert not any(f"{o} " in msg + " " for o in mapped)
    assert "-gpgpu_cache:dl1 " not in msg + " "
    assert not gpu.l1.write_allocate and "L1 write-allocate" not in msg  # dl1 ``N`` policy
    # PTX-mode latencies: superseded in trace-driven runs by trace.config's
    unmapped, _, inert = msg.partition("options without effect")
    assert "-ptx_opcode_initiation_sfu " in inert + " " and "-ptx_opcode" not in unmapped


def test_sm7_qv100_config_matches_preset(reference_dir):
    # as the reference's runs used it: no launch latency (set on their command line)
    gpu, warns = _import(reference_dir / "configs" / "SM7_QV100", "-gpgpu_kernel_launch_latency 0")
    _compare(
        gpu,
        load_gpu("sm7_qv100"),
        {"l2.hit_latency_ns", "dram.bandwidth_gbps", "noc.bandwidth_gbps"},
    )
    assert len(warns) == 1 and "-dram_dual_bus_interface" in str(warns[0].message)
    # its dl1 ``L:T:m:L:L`` allocates on writes (lazy fetch-on-read): kept, and said to be
    # simulated without write allocation
    assert gpu.l1.write_allocate
    assert "L1 write-allocate policy lazy_fetch_on_read" in str(warns[0].message)
    # the folder (and load_gpu) goes through the importer too, with the file's latency
    text = (reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config").read_text()
    launch = int(re.search(r"^-gpgpu_kernel_launch_latency\s+(\d+)", text, re.M).group(1))
    with pytest.warns(MdmWarning, match="options not mapped"):
        assert load_gpu(reference_dir / "configs" / "SM7_QV100") == gpu.model_copy(
            update={"kernel_launch_ns": launch / gpu.core_clock_mhz * 1e3}
        )


def test_launch_latencies_mapped(reference_dir):
    """``-gpgpu_kernel_launch_latency`` (core cycles) gives ``kernel_launch_ns``; a
    per-block ``-gpgpu_TB_launch_latency`` is said in the warning, not modelled."""
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    gpu, warns = _import(path, "-gpgpu_kernel_launch_latency 2800")
    assert gpu.kernel_launch_cycles == pytest.approx(2800)
    assert not any("-gpgpu_kernel_launch_latency" in str(w.message) for w in warns)
    gpu, warns = _import(path, "-gpgpu_TB_launch_latency 3")
    assert gpu.kernel_launch_cycles == 0
    assert any("-gpgpu_TB_launch_latency 3" in str(w.message) for w in warns)
    with pytest.raises(ConfigError, match="-gpgpu_kernel_launch_latency: expected cycles >= 0"):
        import_accelsim(path, "-gpgpu_kernel_launch_latency -1")


def test_bad_config_names_file_and_line(tmp_path, reference_dir):
    src = (reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config").read_text()
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text(src + "\n-gpgpu_cache:dl1 N:64:128:6,L:T:q:N:H,A:128:8,16:0,128\n")
    n = len((src + "\n").splitlines()) + 1
    with pytest.raises(ConfigError, match=rf"gpgpusim.config:{n}.*allocation policy 'q'"):
        import_accelsim(cfg)
    cfg.write_text(src + "\n-gpgpu_n_clusters many\n")
    with pytest.raises(ConfigError, match="-gpgpu_n_clusters: expected a number"):
        import_accelsim(cfg)


def _sweeps(reference_dir: Path) -> dict[tuple[str, str], str]:
    with open(reference_dir / "results.csv", newline="") as f:
        return {
            (r["sweep_param"], r["sweep_value"]): r["extra_options"]
            for r in csv.DictReader(f)
            if r["arch"] == "mdm_pascal" and r["extra_options"]
        }


def test_every_sweep_extra_options(reference_dir):
    cfg = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    base, _ = _import(cfg)
    sweeps = _sweeps(reference_dir)
    assert {p for p, _ in sweeps} >= {"l1_mshr", "n_sm", "dram_bw_x", "noc_bw_x", "core_clk_ghz"}
    for (param, value), extra in sweeps.items():
        gpu, _ = _import(cfg, extra)
        assert gpu == _import(cfg, extra.split())[0]  # string and token-list forms agree
        v = float(value)
        changed = {
            "l1_mshr": {"l1"},
            "n_sm": {"n_sm"},
            "dram_bw_x": {"dram"},
            "noc_bw_x": {"noc", "l2"},
            "core_clk_ghz": {"core_clock_mhz", "l2", "dram"},
        }[param]
        a, b = gpu.model_dump(), base.model_dump()
        assert {k for k in a if a[k] != b[k]} <= changed, (param, value)
        if param == "l1_mshr":
            assert gpu.l1.mshr_entries == int(v)
        elif param == "n_sm":
            assert gpu.n_sm == int(v)
        elif param == "dram_bw_x":
            assert gpu.dram.bandwidth_gbps == pytest.approx(base.dram.bandwidth_gbps * v)
            assert gpu.dram.atom_bytes == pytest.approx(base.dram.atom_bytes * v)
            assert gpu.dram.latency_ns == base.dram.latency_ns
        elif param == "noc_bw_x":
            assert gpu.noc.bandwidth_gbps == pytest.approx(base.noc.bandwidth_gbps * v)
            assert gpu.noc.sm_port_gbps == pytest.approx(base.noc.sm_port_gbps * v)
            # slower crossbar -> longer traversal, faster -> shorter
            assert (gpu.l2.hit_latency_ns - base.l2.hit_latency_ns) * (1 - v) > 0
        else:  # DVFS: core clock only; memory latencies in ns kept (rop/dram rescaled)
            assert gpu.core_clock_mhz == pytest.approx(1000 * v)
            assert gpu.l2.hit_latency_ns == pytest.approx(base.l2.hit_latency_ns, rel=0.01)
            assert gpu.dram.latency_ns == pytest.approx(base.dram.latency_ns, rel=0.01)
            assert gpu.noc.bandwidth_gbps == base.noc.bandwidth_gbps
            assert gpu.dram.bandwidth_gbps == base.dram.bandwidth_gbps


def test_dual_issue_options_mapped(reference_dir):
    for arch in ("mdm_pascal", "SM7_QV100"):
        path = reference_dir / "configs" / arch / "gpgpusim.config"
        text = path.read_text()
        width = int(re.search(r"^-gpgpu_max_insn_issue_per_warp\s+(\d+)", text, re.M).group(1))
        diff = int(re.search(r"^-gpgpu_dual_issue_diff_exec_units\s+(\d+)", text, re.M).group(1))
        gpu, warns = _import(path)
        assert gpu.sm.issue_width == width and gpu.sm.dual_issue_diff_units == bool(diff)
        assert not any("-gpgpu_max_insn_issue_per_warp" in str(w.message) for w in warns)


def test_sm_queue_from_the_interconnect(reference_dir, tmp_path):
    """noc.sm_queue_requests (paper 001 footnote 2's SM NoC queue): -icnt_in_buffer_limit
    of the local crossbar, input_buffer_size of intersim2's file; the default (and a
    warning naming -inter_config_file) when that file is missing."""
    qv = reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config"
    want = int(re.search(r"^-icnt_in_buffer_limit\s+(\d+)", qv.read_text(), re.M).group(1))
    gpu, warns = _import(qv)
    assert gpu.noc.sm_queue_requests == want
    assert not any("-icnt_in_buffer_limit" in str(w.message) for w in warns)
    src = reference_dir / "configs" / "mdm_pascal"
    text = (src / "gpgpusim.config").read_text()
    icnt = re.search(r"^-inter_config_file\s+(\S+)", text, re.M).group(1)
    size = re.search(r"^input_buffer_size\s*=\s*(\d+);", (src / icnt).read_text(), re.M)
    gpu, warns = _import(src / "gpgpusim.config")
    assert gpu.noc.sm_queue_requests == int(size.group(1))
    assert not any("-inter_config_file" in str(w.message) for w in warns)
    (tmp_path / "gpgpusim.config").write_text(text)
    (tmp_path / "trace.config").write_text((src / "trace.config").read_text())
    gpu, warns = _import(tmp_path / "gpgpusim.config")  # no interconnect file beside it
    default = type(gpu.noc).model_fields["sm_queue_requests"].default
    assert gpu.noc.sm_queue_requests == default
    assert any("-inter_config_file" in str(w.message) for w in warns)
    (tmp_path / icnt).write_text(
        (src / icnt).read_text().replace(size.group(0), "input_buffer_size = 77;")
    )
    assert _import(tmp_path / "gpgpusim.config")[0].noc.sm_queue_requests == 77


@settings(max_examples=60, deadline=None)
@given(
    bank_bits=st.sets(st.integers(0, 63), min_size=1, max_size=6),
    subs=st.sampled_from([2, 4]),
    seps=st.lists(st.sampled_from([".", "|", " "]), max_size=4),
)
def test_sub_partition_bits_are_the_lowest_bank_bits(bank_bits, subs, seps):
    """Mapping strings are read bit 63 first, separators ignored: the sub-partition bits
    are the lowest log2(subs) positions marked B (GPGPU-Sim's sub_partition_id_mask)."""
    from mdm.config.accelsim import _Reader, _sub_partition_bits

    chars = ["B" if 63 - i in bank_bits else "R" for i in range(64)]
    for k, sep in enumerate(seps):  # separators anywhere
        chars.insert((k * 17) % len(chars), sep)
    r = _Reader(parse_options("-gpgpu_n_mem 4"))
    need = subs.bit_length() - 1
    mapping = "dramid@8;" + "".join(chars)
    if len(bank_bits) < need:
        with pytest.raises(ConfigError, match="bank bits"):
            _sub_partition_bits(mapping, subs, r)
    else:
        assert _sub_partition_bits(mapping, subs, r) == tuple(sorted(bank_bits)[:need])


def test_titan_style_gap_partitions_and_sub_partition_bits(reference_dir, tmp_path):
    """SM7_TITANV (24 channels x 2, IPOLY) and SM6_TITANX (random indexing) import and
    map: the sub-partition bit is the mapping string's lowest B bit."""
    src = (reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config").read_text()
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text(src + "\n-gpgpu_n_mem 24\n")
    gpu, _ = _import(cfg)
    assert (gpu.l2.banks, gpu.l2.bank_index, gpu.l2.sub_partition_bits) == (48, "ipoly", (8,))
    assert check_l2_mapping(gpu) == []
    pascal = "00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCC.BCCSSSSS"
    cfg.write_text(
        src + "\n-gpgpu_n_mem 12\n-gpgpu_memory_partition_indexing 4\n"
        f"-gpgpu_mem_addr_mapping dramid@8;{pascal}\n"
    )
    gpu, warns = _import(cfg)
    assert (gpu.l2.bank_index, gpu.l2.sub_partition_bits) == ("random", (7,))
    assert check_l2_mapping(gpu) == []
    assert "4 (random) draws each granule's sub-partition" in str(warns[0].message)
    cfg.write_text(src + "\n-gpgpu_mem_addr_mapping dramid@8;" + pascal.replace("B", "R") + "\n")
    with pytest.raises(ConfigError, match="expected at least log2\\(2\\) bank bits"):
        import_accelsim(cfg)


def test_adaptive_carveout_without_unified_size_uses_volta_rule(reference_dir, tmp_path):
    """Configs older than -gpgpu_unified_l1d_size (Accel-Sim 1.0's SM7_TITANV): the
    unified array is 4 x the dl1 (SM7_QV100: 4 x 32 KB) with Volta's carve-outs, which is
    what SM7_QV100 states explicitly; the rule is said in the warning."""
    src = (reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config").read_text()
    old = "\n".join(
        ln
        for ln in src.splitlines()
        if not ln.startswith(("-gpgpu_unified_l1d_size", "-gpgpu_shmem_option"))
    )
    assert old != src
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "gpgpusim.config").write_text(old)
    gpu, warns = _import(tmp_path / "a" / "gpgpusim.config")
    ref, _ = _import(reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config")
    assert gpu.l1.unified_bytes == 128 * 1024
    assert gpu.l1.shared_carveouts_bytes == tuple(k * 1024 for k in (0, 8, 16, 32, 64, 96))
    assert gpu.l1 == ref.l1
    assert "no -gpgpu_unified_l1d_size; the unified L1/shared array is 128 KB" in str(
        warns[0].message
    )


def test_hopper_style_partition_and_set_index(reference_dir, tmp_path):
    """Accel-Sim's Hopper configs: L2 set index X maps to 'xor'; partition indexing 6
    (IPOLY-modulo, not reproduced) is imported as 0 and said in the warning; 7 is refused."""
    src = (reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config").read_text()
    cfg = tmp_path / "gpgpusim.config"
    dl2 = re.search(r"^-gpgpu_cache:dl2\s+(\S+)", src, re.M).group(1)
    spec = CacheSpec.parse(dl2, "dl2")
    x = dataclasses.replace(spec, set_index="xor").format()
    cfg.write_text(src + f"\n-gpgpu_cache:dl2 {x}\n-gpgpu_memory_partition_indexing 6\n")
    gpu, warns = _import(cfg)
    assert gpu.l2.set_index == "xor" and gpu.l2.bank_index == "consecutive"
    assert len(warns) == 1 and "6 (IPOLY-modulo) is approximated by 0" in str(warns[0].message)
    cfg.write_text(src + "\n-gpgpu_memory_partition_indexing 7\n")
    with pytest.raises(ConfigError, match="expected 0..6, got 7"):
        import_accelsim(cfg)


def test_initiation_intervals_and_units_mapped(reference_dir):
    """trace.config's ``<latency,initiation>`` pairs give ``latency.*_cycles`` and
    ``latency.*_initiation_cycles``; ``-gpgpu_num_*_units`` give ``sm.*_units`` (values
    read from the files here, not copied)."""
    kinds = (("int", "int_alu"), ("sp", "fp32"), ("dp", "fp64"), ("sfu", "sfu"))
    for arch in ("mdm_pascal", "SM7_QV100"):
        folder = reference_dir / "configs" / arch
        trace = (folder / "trace.config").read_text()
        cfg = (folder / "gpgpusim.config").read_text()
        gpu, warns = _import(folder / "gpgpusim.config")
        for kind, stem in kinds:
            m = re.search(rf"^-trace_opcode_latency_initiation_{kind}\s+(\d+),(\d+)", trace, re.M)
            assert getattr(gpu.latency, f"{stem}_cycles") == int(m.group(1)), (arch, kind)
            assert getattr(gpu.latency, f"{stem}_initiation_cycles") == int(m.group(2)), kind
        for kind in ("sp", "sfu", "dp", "int"):
            m = re.search(rf"^-gpgpu_num_{kind}_units\s+(\d+)", cfg, re.M)
            want = int(m.group(1)) if m else {"sp": 1, "sfu": 1}.get(kind, 0)  # GPGPU-Sim's
            assert getattr(gpu.sm, f"{kind}_units") == want, (arch, kind)
        bra = re.search(r"^-specialized_unit_\d+\s+1,(\d+),[^\n]*,BRA\s*$", trace, re.M)
        assert gpu.sm.branch_units == (int(bra.group(1)) if bra else 0), arch
        msg = " ".join(str(w.message) for w in warns) + " "
        assert "-gpgpu_num_sp_units " not in msg and "-gpgpu_num_sfu_units " not in msg


def test_initiation_fallbacks_and_errors(reference_dir, tmp_path):
    """Trace-driven latencies: a trace.config pair with one number has an initiation
    interval of 1; a class the files leave out takes Accel-Sim's trace-mode default 4,1
    whatever ``-ptx_opcode_*`` says (PTX mode only: listed as without effect); a
    malformed pair names the file and line; ``-gpgpu_num_dp_units 0`` keeps FP64 on the
    SFUs (``dp_units = 0``)."""
    src = reference_dir / "configs" / "mdm_pascal"
    text = (src / "gpgpusim.config").read_text()
    (tmp_path / "gpgpusim.config").write_text(
        text + "\n-ptx_opcode_initiation_fp 3,2,1,1,4\n-ptx_opcode_latency_dp 30,19\n"
        "-gpgpu_num_dp_units 2\n"
    )
    trace = re.sub(
        r"^-trace_opcode_latency_initiation_sp\s+\S+",
        "-trace_opcode_latency_initiation_sp 6",
        (src / "trace.config").read_text(),
        flags=re.M,
    )
    trace = re.sub(r"^-trace_opcode_latency_initiation_dp\s+\S+\n", "", trace, flags=re.M)
    (tmp_path / "trace.config").write_text(trace)
    gpu, warns = _import(tmp_path / "gpgpusim.config")
    assert (gpu.latency.fp32_cycles, gpu.latency.fp32_initiation_cycles) == (6, 1)
    assert (gpu.latency.fp64_cycles, gpu.latency.fp64_initiation_cycles) == (4, 1)
    inert = str(warns[0].message).partition("options without effect")[2]
    assert "-ptx_opcode_initiation_fp" in inert and "-ptx_opcode_latency_dp" in inert
    assert gpu.sm.dp_units == 2
    for bad in ("6,x", "6,0"):
        (tmp_path / "trace.config").write_text(
            trace.replace("initiation_sp 6", f"initiation_sp {bad}")
        )
        with pytest.raises(
            ConfigError, match=r"trace\.config:\d+: option -trace_opcode_latency_initiation_sp"
        ):
            _import(tmp_path / "gpgpusim.config")
    (tmp_path / "trace.config").write_text(trace)
    (tmp_path / "gpgpusim.config").write_text(text + "\n-gpgpu_num_dp_units -1\n")
    with pytest.raises(ConfigError, match=r"gpgpusim\.config:\d+: option -gpgpu_num_dp_units"):
        _import(tmp_path / "gpgpusim.config")


def test_shared_memory_banks_mapped(reference_dir):
    """``-gpgpu_shmem_num_banks``, ``_warp_parts`` and ``_limited_broadcast`` give the
    ``sm.shared_mem_*`` fields (values read from the files)."""
    for arch in ("mdm_pascal", "SM7_QV100"):
        path = reference_dir / "configs" / arch / "gpgpusim.config"
        text = path.read_text()

        def opt(name: str, text: str = text) -> int:
            return int(re.search(rf"^-gpgpu_shmem_{name}\s+(\d+)", text, re.M).group(1))

        gpu, warns = _import(path)
        assert gpu.sm.shared_mem_banks == opt("num_banks")
        assert gpu.sm.shared_mem_warp_parts == opt("warp_parts")
        assert gpu.sm.shared_mem_limited_broadcast == bool(opt("limited_broadcast"))
        assert not any("-gpgpu_shmem_num_banks" in str(w.message) for w in warns)
    with pytest.raises(ConfigError, match="shared_mem_warp_parts=3 must divide"):
        load_gpu("mdm_pascal").with_updates({"sm.shared_mem_warp_parts": 3})
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    with pytest.raises(ConfigError, match="option -gpgpu_shmem_warp_parts: expected a divisor"):
        import_accelsim(path, "-gpgpu_shmem_warp_parts 3")


def test_ldst_queue_from_pipeline_widths_and_operand_collectors(reference_dir):
    """``sm.ldst_queue_entries`` = ID_OC_MEM + OC_EX_MEM (fifth and tenth
    ``-gpgpu_pipeline_widths`` fields) + the memory-capable operand collector units: the
    generic ones (8) in both reference files, the ``_mem`` ones with specialised
    collectors; malformed widths name the file and line."""
    for arch in ("mdm_pascal", "SM7_QV100"):
        path = reference_dir / "configs" / arch / "gpgpusim.config"
        text = path.read_text()
        widths = re.search(r"^-gpgpu_pipeline_widths\s+(\S+)", text, re.M).group(1).split(",")
        gen = int(re.search(r"^-gpgpu_operand_collector_num_units_gen\s+(\d+)", text, re.M)[1])
        gpu, _ = _import(path)
        assert gpu.sm.ldst_queue_entries == int(widths[4]) + int(widths[9]) + gen == 16
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    extra = (
        "-gpgpu_pipeline_widths 4,0,0,4,6,4,0,0,4,2,8 "
        "-gpgpu_enable_specialized_operand_collector 1 "
        "-gpgpu_operand_collector_num_units_mem 3"
    )
    with pytest.warns(MdmWarning, match="options not mapped"):
        assert import_accelsim(path, extra).sm.ldst_queue_entries == 6 + 2 + 3
    with pytest.raises(ConfigError, match="option -gpgpu_pipeline_widths: expected at least 10"):
        import_accelsim(path, "-gpgpu_pipeline_widths 4,4,4")


def test_warning_sets_inert_options_apart_and_checks_assumptions(reference_dir):
    """Options without effect on a trace-driven run's timing are listed apart from the
    unmapped ones; the simulator's assumptions (L1 flushed and L2 kept between kernels,
    perfect instruction and constant caches) are read, and said when a file differs."""
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    _, warns = _import(path)
    (msg,) = [str(w.message) for w in warns]
    unmapped, _, inert = msg.partition("options without effect")
    assert "-gpgpu_ptx_sim_mode" in inert and "-gpgpu_ptx_sim_mode" not in unmapped
    assert "-gpgpu_dram_scheduler" in unmapped  # a timing option the models lack
    for assumed in ("-gpgpu_flush_l1_cache", "-gpgpu_perfect_inst_const_cache", "-gpgpu_cache:il1"):
        assert f"{assumed} " not in msg + " "
    cases = {
        "-gpgpu_flush_l1_cache 0": "keeps the L1s' contents",
        "-gpgpu_flush_l2_cache 1": "empties the L2",
        "-gpgpu_perfect_inst_const_cache 0": "constant cache misses are not modelled",
    }
    for extra, said in cases.items():
        _, warns = _import(path, extra)
        assert said in str(warns[0].message), extra
    _, warns = _import(path, "-gpgpu_perfect_inst_const_cache 0")
    assert "-gpgpu_cache:il1" in str(warns[0].message).partition("options without effect")[0]
    with pytest.raises(ConfigError, match="-gpgpu_flush_l1_cache: expected 0 or 1"):
        import_accelsim(path, "-gpgpu_flush_l1_cache 2")


def test_log_option_dump_reproduces_every_reference_run(reference_dir):
    """A run's log alone gives the configuration the run used: its option dump equals the
    config files plus the run's overrides (the table's extra options and the logged
    launch latencies), field for field, on all reference runs, the trace-driven
    latencies the files leave out (mdm_pascal's tensor) included."""
    from mdm.config.accelsim import import_accelsim_log
    from mdm.explore.validate import load_results, run_options

    table = load_results(reference_dir / "results.csv")
    for rec in table.itertuples():
        cfg = reference_dir / "configs" / rec.arch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = import_accelsim_log(
                reference_dir / "logs" / f"{rec.run_id}.log.xz", config_dir=cfg
            )
            want = import_accelsim(cfg, run_options(reference_dir, rec.run_id, rec.extra_options))
        assert got.model_copy(update={"name": want.name}) == want, rec.run_id
        assert got.name == rec.run_id


def test_log_import_errors_and_load_gpu(tmp_path, reference_dir):
    from mdm.config.accelsim import import_accelsim_log

    log = reference_dir / "logs" / "gather__mdm_pascal__l1_mshr_64.log.xz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert load_gpu(log) == import_accelsim_log(log)  # --gpu RUN.log.xz
    (tmp_path / "empty.log").write_text("Accel-Sim [build x]\nkernel_name = k\n")
    with pytest.raises(ConfigError, match=r"empty.log: expected GPGPU-Sim's option dump"):
        import_accelsim_log(tmp_path / "empty.log")
    # a bad value names the log's line
    import lzma

    with lzma.open(log, "rt") as fh:
        head = fh.read().split("launching kernel")[0].splitlines()
    at = next(i for i, x in enumerate(head) if x.startswith("-gpgpu_n_clusters "))
    head[at] = "-gpgpu_n_clusters                    abc # number of processing clusters"
    (tmp_path / "bad.log").write_text("\n".join(head) + "\n")
    with pytest.raises(ConfigError, match=rf"bad\.log:{at + 1}: option -gpgpu_n_clusters"):
        import_accelsim_log(tmp_path / "bad.log")
    with pytest.raises(ConfigError, match="Accel-Sim log not found"):
        import_accelsim_log(tmp_path / "missing.log.xz")
    # a truncated or corrupt compressed log names itself and the last line read
    import gzip

    from mdm.errors import TraceFormatError
    from mdm.explore.accelsim_log import parse_log

    text = "\n".join(head) + "\n"
    cut = {
        "cut.log.xz": lzma.compress(text.encode())[:3000],
        "cut.log.gz": gzip.compress(text.encode())[:3000],
        "noise.log.xz": bytes(range(256)) * 12,
    }
    for name, data in cut.items():
        (tmp_path / name).write_bytes(data)
        for read in (load_gpu, parse_log):
            with pytest.raises(TraceFormatError, match=rf"{name}(:\d+)?: cannot decompress"):
                read(tmp_path / name)


def _chase_latencies(reference_dir: Path) -> dict[str, list[float]]:
    """The reference README's pointer-chase table: row label -> [mdm_pascal, SM7_QV100]
    load-to-use cycles."""
    text = (reference_dir / "README.md").read_text()
    table = text[text.index("Pointer chase, one thread") :]
    rows = {}
    for line in table.splitlines()[1:12]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.fullmatch(r"[\d.]+", cells[1]):
            rows[cells[0]] = [float(cells[1]), float(cells[2])]
    return rows


def test_load_to_use_latencies_match_the_pointer_chase(reference_dir):
    """The imported latencies give the reference pointer chase's load-to-use cycles: an
    L1 hit (``-gpgpu_l1_latency`` plus the LD/ST pipeline) within half a cycle, an L2
    hit (L1 pipeline + L2 round trip) within half a cycle, a DRAM access within 5 %.
    With ``-gpgpu_l1_latency`` alone the L1 hit was 3.2 and 3.5 cycles short."""
    chase = _chase_latencies(reference_dir)
    l1_row = next(k for k in chase if k.startswith("L1 hit"))
    l2_row = next(k for k in chase if k.startswith("L2 hit"))
    dram_row = next(k for k in chase if "row miss" in k)
    for col, (arch, extra) in enumerate(
        [("mdm_pascal", ""), ("SM7_QV100", "-gpgpu_kernel_launch_latency 0")]
    ):
        gpu, _ = _import(reference_dir / "configs" / arch / "gpgpusim.config", extra)
        l1 = gpu.l1.hit_latency_cycles
        assert l1 == pytest.approx(chase[l1_row][col], abs=0.5), arch
        assert l1 + gpu.l2_hit_latency_cycles == pytest.approx(chase[l2_row][col], abs=0.5)
        total = l1 + gpu.l2_hit_latency_cycles + gpu.dram_latency_cycles
        assert total == pytest.approx(chase[dram_row][col], rel=0.05), arch
        # the presets that mirror these configurations carry the same latencies
        preset = load_gpu("mdm_pascal" if col == 0 else "sm7_qv100")
        assert preset.l1.hit_latency_cycles == l1
        assert preset.l2_hit_latency_cycles == pytest.approx(gpu.l2_hit_latency_cycles)


def test_pointer_chase_l1_kernel_cycles(reference_dir):
    """End to end: the pointer chase's L1 kernel (256 dependent L1 hits, one thread) is
    predicted within 8 % of Accel-Sim's kernel cycles on both reference configurations
    (+19 % too fast when an L1 hit cost ``-gpgpu_l1_latency`` alone)."""
    import json

    from mdm.explore.validate import validate

    runs = ["pchase__mdm_pascal__baseline", "pchase__SM7_QV100__baseline"]
    res = validate(reference_dir, ["mdm"], runs, workers=1)
    for run, isa in zip(runs, ["sm61", "sm70"], strict=True):
        meta = json.loads((reference_dir / "traces" / isa / "pchase" / "summary.json").read_text())
        k = [kn["name"] for kn in meta["kernels"]].index("pchase_l1")
        row = res.kernels[(res.kernels["run_id"] == run) & (res.kernels["kernel"] == k)]
        assert len(row) == 1
        assert abs(float(row["error"].iloc[0])) < 0.08, run


def test_a_misspelt_option_is_named_apart(reference_dir, tmp_path):
    """An option name close to one the importer looks for and does not find is named
    first in the warning, with the option it probably meant (GPGPU-Sim would refuse the
    file; the importer would use the default); none in the reference configurations."""
    src = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    good, warns = _import(src)
    assert "misspelt" not in " ".join(str(w.message) for w in warns)
    cfg = tmp_path / "gpgpusim.config"
    text = src.read_text()
    assert "\n-gpgpu_l1_latency " in text
    cfg.write_text(text.replace("\n-gpgpu_l1_latency ", "\n-gpgpu_l1_latncy ", 1))
    bad, warns = _import(cfg)
    (msg,) = [str(w.message) for w in warns]
    assert "-gpgpu_l1_latncy is no option mdm reads: misspelt -gpgpu_l1_latency?" in msg
    assert bad.l1.hit_latency_cycles != good.l1.hit_latency_cycles  # the default was used
    sm7, warns = _import(reference_dir / "configs" / "SM7_QV100")
    assert "misspelt" not in " ".join(str(w.message) for w in warns)


def test_clock_domains_and_memory_timing_by_hand(reference_dir):
    """The module docstring's derivations on round numbers. Clocks 1000:500:2000:500 MHz
    (core 1, icnt 0.5, L2 2, DRAM 0.5 GHz), 24 channels of one sub-partition, 128 B L2
    lines with a 32 B data port, 32 B flits, 4 B x burst 8 DRAM with command ratio 4."""
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    extra = (
        "-gpgpu_clock_domains 1000:500:2000:500 -gpgpu_n_mem 24 "
        "-gpgpu_n_sub_partition_per_mchannel 1 -gpgpu_cache:dl2 N:128:128:8,L:B:m:F:L,A:128:8,16:0,32 "
        "-icnt_flit_size 32 -network_mode 1 -gpgpu_l2_rop_latency 50 -dram_latency 100 "
        "-gpgpu_dram_buswidth 4 -gpgpu_dram_burst_length 8 -dram_data_command_freq_ratio 4 "
        "-gpgpu_n_mem_per_ctrlr 1 -gpgpu_dram_timing_opt nbk=16:CCD=3:RCD=10:RP=20:CL=30 "
        "-gpgpu_kernel_launch_latency 500"
    )
    gpu, _ = _import(path, extra)
    assert gpu.core_clock_mhz == 1000 and gpu.core_clock_ghz == 1.0
    assert gpu.l2.banks == 24 and gpu.l2.size_bytes == 24 * 128 * 128 * 8
    # a reply: 128 B + 8 B header in ceil(136 / 32) = 5 flits -> 25.6 B of data per flit
    assert gpu.noc.sm_port_gbps == pytest.approx(25.6 * 0.5)  # one flit per icnt cycle
    # per bank min(flit data x icnt, port x L2 clock) = min(12.8, 32 x 2) GB/s
    assert gpu.noc.bandwidth_gbps == pytest.approx(24 * 12.8)
    # rop (core cycles) / core + 23 calibrated icnt cycles / icnt
    assert gpu.l2.hit_latency_ns == pytest.approx(50 / 1.0 + 23 / 0.5)
    # atom 4 x 8 = 32 B per command, one every max(CCD 3, BL / ratio 2) = 3 DRAM cycles
    assert gpu.dram.atom_bytes == 32
    assert gpu.dram.bandwidth_gbps == pytest.approx(24 * 32 / 3 * 0.5)
    # dram_latency / core + (RP + RCD + CL + BL / ratio) / DRAM clock
    assert gpu.dram.latency_ns == pytest.approx(100 / 1.0 + (20 + 10 + 30 + 2) / 0.5)
    assert gpu.kernel_launch_ns == pytest.approx(500 / 1.0)  # 500 core cycles at 1 GHz
    # two sub-partitions per channel: twice the banks (and L2), same channels
    two, _ = _import(path, extra + " -gpgpu_n_sub_partition_per_mchannel 2")
    assert (two.l2.banks, two.dram.channels) == (48, 24)
    assert two.l2.size_bytes == 2 * gpu.l2.size_bytes


def test_streaming_l1_mshrs_coalescer_and_issue_width_by_hand(reference_dir):
    """A streaming L1 (alloc ``s``) gets one MSHR per line of 4 x the dl1, 4 per line when
    sectored, merging up to 64; ``-gpgpu_coalesce_arch`` 40 is the first sector
    coalescer; the issue width is capped at 4."""
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    for kind, sectors in (("N", 1), ("S", 4)):
        gpu, _ = _import(path, f"-gpgpu_cache:dl1 {kind}:64:128:6,L:T:s:N:L,A:128:8,16:0,128")
        assert gpu.l1.allocate_on == "fill" and gpu.l1.sectored == (kind == "S")
        assert gpu.l1.mshr_entries == 64 * 6 * 4 * sectors  # 1536 and 6144
        assert gpu.l1.mshr_max_merge == 64
    on_fill, _ = _import(path, "-gpgpu_cache:dl1 N:64:128:6,L:T:f:N:L,A:128:8,16:0,128")
    assert on_fill.l1.allocate_on == "fill" and on_fill.l1.mshr_entries == 128
    for arch, want in ((39, "warp"), (40, "warp_sector")):
        gpu, _ = _import(path, f"-gpgpu_coalesce_arch {arch}")
        assert gpu.l1.coalescer == want, arch
    for width, want in ((1, 1), (3, 3), (4, 4), (8, 4)):
        gpu, _ = _import(path, f"-gpgpu_max_insn_issue_per_warp {width}")
        assert gpu.sm.issue_width == want, width
    skip, _ = _import(path, "-gpgpu_gmem_skip_L1D 1")
    assert not skip.l1.enabled


def test_gpgpusim_defaults_of_absent_options(reference_dir, tmp_path):
    """Options a config leaves out take GPGPU-Sim's defaults (module docstring):
    ``-gpgpu_perf_sim_memcpy`` 1 (copies fill the L2), ``-gpgpu_n_cores_per_cluster`` 1,
    ``-gpgpu_shader_cta`` 8."""
    src = (reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config").read_text()
    drop = ("-gpgpu_perf_sim_memcpy", "-gpgpu_n_cores_per_cluster", "-gpgpu_shader_cta")
    text = "\n".join(ln for ln in src.splitlines() if not ln.startswith(drop))
    (tmp_path / "gpgpusim.config").write_text(text)
    gpu, _ = _import(tmp_path / "gpgpusim.config", "-gpgpu_n_clusters 7")
    assert gpu.l2.fill_on_memcpy is True and gpu.n_sm == 7
    assert gpu.sm.max_blocks == 8  # GPGPU-Sim's -gpgpu_shader_cta default
    gpu, _ = _import(
        tmp_path / "gpgpusim.config", "-gpgpu_n_clusters 7 -gpgpu_n_cores_per_cluster 3"
    )
    assert gpu.n_sm == 21  # clusters x cores per cluster
    gpu, _ = _import(tmp_path / "gpgpusim.config", "-gpgpu_perf_sim_memcpy 0")
    assert gpu.l2.fill_on_memcpy is False


def test_a_count_with_a_fraction_is_refused(reference_dir):
    """Counts are whole: ``-gpgpu_n_clusters 28.5`` is an error naming the option, not 28."""
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    with pytest.raises(ConfigError, match=r"-gpgpu_n_clusters: expected an integer, got 28.5"):
        import_accelsim(path, "-gpgpu_n_clusters 28.5")
    assert _import(path, "-gpgpu_n_clusters 28.0")[0].n_sm == 28  # a whole float is fine


def test_a_mapping_string_short_of_64_bits_is_not_read_as_a_bit_map(reference_dir, tmp_path):
    """A mapping whose bit map has 63 positions is not read shifted by one: the
    sub-partition bits fall back to those above the interleave, said in the warning."""
    src = (reference_dir / "configs" / "SM7_QV100" / "gpgpusim.config").read_text()
    full = "00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCB.CCCSSSSS"
    cfg = tmp_path / "gpgpusim.config"
    cfg.write_text(src + f"\n-gpgpu_mem_addr_mapping dramid@8;{full[1:]}\n")
    gpu, warns = _import(cfg)
    assert gpu.l2.sub_partition_bits is None
    assert "no 64-bit map" in " ".join(str(w.message) for w in warns)
    cfg.write_text(src + f"\n-gpgpu_mem_addr_mapping dramid@8;{full}\n")
    assert _import(cfg)[0].l2.sub_partition_bits == (8,)  # the lowest B bit


def test_defaults_where_the_file_is_silent(reference_dir: Path) -> None:
    """The module's documented defaults: a dl1 string without its miss-queue field gets 8
    entries (the file's own ``,16:0,128`` gives 16); a mapping without ``dramid@``
    interleaves the banks every 256 B, ``dramid@9`` every 2**9 = 512 B."""
    cfg = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"
    bits = "00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCC.BCCSSSSS"
    base, _ = _import(cfg)
    no_mq, _ = _import(cfg, ["-gpgpu_cache:dl1", "N:64:128:6,L:T:m:N:H,A:128:8"])
    assert (base.l1.miss_queue_entries, no_mq.l1.miss_queue_entries) == (16, 8)
    no_dramid, _ = _import(cfg, ["-gpgpu_mem_addr_mapping", bits])
    nine, _ = _import(cfg, ["-gpgpu_mem_addr_mapping", f"dramid@9;{bits}"])
    assert (no_dramid.l2.bank_interleave_bytes, nine.l2.bank_interleave_bytes) == (256, 512)
