"""``mdm cachesim``: the JSON equals the library's counts, per-PC rows add up to the
kernel's counters, tracked warps give the coalescer's request counts, one-line errors."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from mdm.cli.cachesim import WarpPicker
from mdm.cli.main import app
from mdm.config import load_gpu
from mdm.errors import ConfigError
from mdm.memory import simulate_app
from mdm.memory.coalesce import global_memory_instructions
from mdm.traces.workloads import load_trace

runner = CliRunner()
STRIDE = "builtin:stride?gs={gs}&ctas=8&seed=2"
STENCIL = "builtin:stencil2d?seed=1"  # two kernels, loads and stores


def _json(*args: str) -> dict:
    r = runner.invoke(app, ["cachesim", *args, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_json_is_the_librarys_counts() -> None:
    out = _json(STENCIL, "--gpu", "mdm_pascal")
    gpu = load_gpu("mdm_pascal")
    res = simulate_app(load_trace(STENCIL), gpu)
    assert len(out["kernels"]) == len(res.kernels) == 2
    atom = gpu.dram.atom_bytes
    for row, k in [*zip(out["kernels"], res.kernels, strict=True), (out["total"], res.total())]:
        assert row["l1_miss_rate"] == pytest.approx(k.l1_miss_rate)
        assert row["l2_miss_rate"] == pytest.approx(k.l2_miss_rate)
        assert row["dram_reads"] == k.dram_read_bytes // atom
        assert row["dram_writes"] == k.dram_write_bytes // atom
        keys = ("l1_read_pending_hits", "l2_pending_hits", "l2_blocked_cycles")
        for key in (*keys, "l2_mshr_stalls", "l2_mshr_blocked_cycles", "l2_mshr_allocations"):
            assert row[key] == getattr(k, key)
        waits = ("l1_miss_queue_wait_cycles", "l1_mshr_wait_cycles")
        waits += ("l1_merge_wait_cycles", "l1_alloc_wait_cycles")
        assert [row[w] for w in waits] == [getattr(k, w) for w in waits]
        assert row["l1_blocked_cycles"] == sum(row[w] for w in waits)
        assert "per_pc" not in row and "warps" not in row  # only when asked for


def test_a_rate_of_nothing_is_null_not_zero() -> None:
    """Without L1 accesses (``l1.enabled = false``) the L1 miss rate is null in the JSON
    and "-" in the table: 0.0 would read as every access a hit."""
    args = ("builtin:vecadd?ctas=8", "--gpu", "mdm_pascal", "--set", "l1.enabled=false")
    out = _json(*args)
    assert out["total"]["l1_read_accesses"] == 0 and out["total"]["l1_miss_rate"] is None
    assert 0 < out["total"]["l2_miss_rate"] <= 1
    r = runner.invoke(app, ["cachesim", *args])
    assert r.exit_code == 0, r.output
    assert re.search(r"total\s*│\s*│\s*0\s*│\s*-\s*│", r.stdout), r.stdout


def test_per_pc_rows_add_up_to_the_kernel() -> None:
    out = _json(STENCIL, "--gpu", "mdm_pascal", "--per-pc")
    trace = load_trace(STENCIL)
    for row, kernel in zip(out["kernels"], trace.kernels, strict=True):
        pcs = row["per_pc"]

        def total(key: str, pcs: list = pcs) -> int:
            return sum(p[key] for p in pcs)

        inst = global_memory_instructions(kernel)
        assert [p["pc"] for p in pcs] == sorted(set(kernel.pc[inst].tolist()))
        assert total("executions") == inst.shape[0]
        assert total("l1_accesses") == row["l1_read_accesses"] + row["l1_write_accesses"]
        assert total("l1_pending_hits") == row["l1_read_pending_hits"]
        assert total("l1_hits") == row["l1_read_hits"]
        assert total("l1_misses") == row["l1_read_misses"] + row["l1_write_accesses"]
        assert total("l2_accesses") == row["l2_accesses"]
        assert total("l2_misses") == row["l2_misses"]
        atom = load_gpu("mdm_pascal").dram.atom_bytes
        assert total("dram_bytes") == (row["dram_reads"] + row["dram_writes"]) * atom
        # the PCs' L1 waits are the kernel's, each execution's rounded to a whole cycle
        assert row["l1_blocked_cycles"] > 0
        assert abs(total("l1_wait_cycles") - row["l1_blocked_cycles"]) <= inst.shape[0] / 2 + 2
        for p in pcs:  # the opcode is the trace's at that PC; the rates are the counts'
            i = inst[kernel.pc[inst] == p["pc"]][0]
            assert p["opcode"] == kernel.opcodes[kernel.opcode[i]]
            assert p["l1_miss_rate"] == pytest.approx(p["l1_misses"] / p["l1_accesses"])
        ops = {p["opcode"].split(".")[0] for p in pcs}
        assert ops == {"LDG", "STG"}
        stores = [p for p in pcs if p["opcode"].startswith("STG")]
        assert all(p["l1_misses"] == p["l1_accesses"] for p in stores)  # write-through


@pytest.mark.parametrize(("gs", "requests"), [(1, [1, 2, 2]), (32, [32, 32, 32])])
def test_tracked_warp_requests_are_the_coalescers(gs: int, requests: list[int]) -> None:
    # paper 001 Listing 1 (in[gs * tid + i], i = 0, 1, 2) on a whole-warp coalescer,
    # worked by hand: gs = 1, 32 consecutive floats from a line boundary = one 128 B line
    # for i = 0, two for i > 0 (shifted by 4 i bytes); gs = 32, every lane its own line
    spec = STRIDE.format(gs=gs)
    kernel = load_trace(spec).kernels[0]
    kid = kernel.kernel_id
    out = _json(spec, "--gpu", "mdm_pascal", "--warp", f"{kid}:3", "--warp", f"{kid}:0")
    rows = out["kernels"][0]["warps"]
    assert sorted(rows) == ["0", "3"]
    lo = int(kernel.warp_ptr[3])
    w3 = rows["3"]
    assert [r["requests"] for r in w3] == requests
    assert [r["requests"] for r in rows["0"]] == requests
    for r in w3:
        assert kernel.opcodes[kernel.opcode[lo + r["index"]]].startswith("LDG")
        assert r["pc"] == int(kernel.pc[lo + r["index"]])
        assert r["l1_misses"] + r["l1_pending_hits"] <= r["requests"]
        assert r["l2_misses"] <= r["l1_misses"]
    if gs == 32:  # no other warp touches these lines: the first load misses on all 32,
        # the later ones (4 i bytes further, same lines) never miss
        assert w3[0]["l1_misses"] == 32
        assert w3[1]["l1_misses"] == w3[2]["l1_misses"] == 0


def test_trace_directory_gives_the_builtin_counts(tmp_path) -> None:  # noqa: ANN001
    r = runner.invoke(
        app,
        ["trace", "gen", "stride", "--out", str(tmp_path / "t"), "--seed", "2",
         "--param", "gs=32", "--param", "ctas=8"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    a = _json(str(tmp_path / "t"), "--gpu", "v100", "--per-pc")
    b = _json(STRIDE.format(gs=32), "--gpu", "v100", "--per-pc")
    assert a["total"] == b["total"] and a["total"]["l1_read_accesses"] > 0
    assert a["kernels"][0]["per_pc"] == b["kernels"][0]["per_pc"]


def test_table_output_has_per_pc_and_warp_sections() -> None:
    r = runner.invoke(
        app, ["cachesim", STENCIL, "--gpu", "mdm_pascal", "--per-pc", "--warp", "2:5"]
    )
    assert r.exit_code == 0, r.output
    assert "total" in r.stdout
    assert r.stdout.count("jacobi5pt_kernel") == 4  # a row per kernel and its per-PC title
    assert r.stdout.count("per PC") == 2
    one = runner.invoke(app, ["cachesim", STENCIL, "--gpu", "mdm_pascal", "--kernels", "1"])
    assert "(first 1 of 2 kernels; --json for all)" in one.stdout
    assert one.stdout.count("jacobi5pt_kernel") == 1 and "total" in one.stdout
    assert "kernel 2 warp 5" in r.stdout


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("3", "expected KERNEL:WARP"),
        ("a:1", "expected KERNEL:WARP"),
        ("9:1", "no kernel with ID 9"),
        ("1:-1", "warp -1 out of range"),
        ("1:999999", "warp 999999 out of range"),
    ],
)
def test_bad_warp_is_one_line_error(spec: str, message: str) -> None:
    r = runner.invoke(app, ["cachesim", STENCIL, "--gpu", "mdm_pascal", "--warp", spec])
    assert r.exit_code == 1
    assert message in r.output and len(r.output.strip().splitlines()) == 1


def test_missing_trace_is_one_line_error(tmp_path) -> None:  # noqa: ANN001
    r = runner.invoke(app, ["cachesim", str(tmp_path / "absent"), "--gpu", "mdm_pascal"])
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1


def _pick(specs: list[str], ids: list[int], n_warps: list[int]) -> dict[int, list[int]]:
    """Drive a WarpPicker over an application's kernels as the CLI does."""
    picker = WarpPicker(specs)
    out = {
        i: picker.for_kernel(kid, n) for i, (kid, n) in enumerate(zip(ids, n_warps, strict=True))
    }
    picker.finish()
    return {i: ws for i, ws in out.items() if ws}


@given(
    ids=st.lists(st.integers(0, 50), min_size=1, max_size=5, unique=True),
    picks=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9)), max_size=8),
)
def test_warp_picker_maps_ids_to_indices(ids: list[int], picks: list[tuple[int, int]]) -> None:
    n_warps = [10] * len(ids)
    specs = [f"{ids[i % len(ids)]}:{w}" for i, w in picks]
    out = _pick(specs, ids, n_warps)
    want: dict[int, list[int]] = {}
    for i, w in picks:  # first-seen order, no duplicates
        if w not in want.setdefault(i % len(ids), []):
            want[i % len(ids)].append(w)
    assert out == {i: ws for i, ws in want.items() if ws}
    with pytest.raises(ConfigError, match="out of range"):
        _pick([*specs, f"{ids[0]}:10"], ids, n_warps)
    absent = max(ids) + 1
    with pytest.raises(ConfigError, match=re.escape(f"no kernel with ID {absent}; IDs: {ids}")):
        _pick([*specs, f"{absent}:0"], ids, n_warps)
    with pytest.raises(ConfigError, match=f"2 kernels with ID {ids[0]}"):
        _pick([f"{ids[0]}:0"], [*ids, ids[0]], [*n_warps, 10])


def test_set_simulates_the_changed_configuration() -> None:
    """``--set`` changes the simulated configuration: a direct-mapped 1 KB L1 misses
    more than the preset's 48 KB, and the JSON names the changed configuration."""
    spec = STRIDE.format(gs=32)
    small = ["l1.size_bytes=1024", "l1.ways=1", "l1.set_index=linear"]
    out = _json(spec, "--gpu", "mdm_pascal", *(a for s in small for a in ("--set", s)))
    gpu = load_gpu("mdm_pascal").with_updates(
        {"l1.size_bytes": 1024, "l1.ways": 1, "l1.set_index": "linear"}
    )
    res = simulate_app(load_trace(spec), gpu)
    assert out["config"].startswith("mdm_pascal [l1.size_bytes=1024, l1.ways=1")
    assert out["total"]["l1_miss_rate"] == pytest.approx(res.total().l1_miss_rate)
    assert (
        out["total"]["l1_miss_rate"] > _json(spec, "--gpu", "mdm_pascal")["total"]["l1_miss_rate"]
    )
