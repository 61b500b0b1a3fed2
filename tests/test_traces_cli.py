"""``mdm trace info/convert/gen`` through Typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from mdm.cli.main import app
from mdm.traces import AppTrace, open_trace, read_app, write_app
from mdm.traces.stats import divergent_loads

runner = CliRunner()


def _ok(args: list[str]) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.stdout


def _fails(args: list[str], *needles: str) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == 1, res.output
    out = res.output
    assert "Traceback" not in out and res.exception is None or isinstance(res.exception, SystemExit)
    assert out.startswith("error: ") and len(out.strip().splitlines()) == 1, out
    for n in needles:
        assert n in out, out
    return out


def test_info_json_pytorch_pow(pytorch_pow_dir: Path) -> None:
    st = json.loads(_ok(["trace", "info", str(pytorch_pow_dir), "--json"]))
    assert st["kernels"] == 1
    assert st["thread_blocks"] == 55
    assert st["warps"] == 220
    assert st["warp_instructions"] == 220 * 33
    k = read_app(pytorch_pow_dir).kernels[0]
    mem = int(np.isin(k.iclass, [5, 6, 7, 8, 9, 10, 11]).sum())
    assert st["memory_instructions"] == mem
    assert sum(st["mix"].values()) == st["warp_instructions"]
    assert st["dpki"] == 0.0  # 16 B vector loads of consecutive lanes: not divergent
    assert len(st["per_kernel"]) == 1


def test_info_text(pytorch_pow_dir: Path) -> None:
    out = _ok(["trace", "info", str(pytorch_pow_dir)])
    assert "thread blocks        55" in out and "warps                220" in out
    assert "DPKI" in out
    # one row per kernel: id, demangled name, grid and block
    row = next(line for line in out.splitlines() if "vectorized_elementwise_kernel<…>" in line)
    assert "593" in row and "55x1x1" in row and "128x1x1" in row and "7260" in row
    assert "_ZN" not in out
    assert "per kernel" not in _ok(["trace", "info", str(pytorch_pow_dir), "--kernels", "0"])


def test_info_text_lists_the_first_kernels(tmp_path: Path) -> None:
    out = tmp_path / "app"
    _ok(["trace", "gen", "stencil2d", "--out", str(out)])  # two launches
    assert json.loads(_ok(["trace", "info", str(out), "--json"]))["kernels"] == 2
    assert "(first 1 of 2; --json for all)" in _ok(["trace", "info", str(out), "--kernels", "1"])
    both = _ok(["trace", "info", str(out)])
    assert "per kernel" in both and "--json for all" not in both


def test_dpki_matches_reference_classes(reference_dir: Path) -> None:
    """GS=32 (MD) loads are all divergent; GS=1 (NMD) none, per the paper's Listing 1."""
    s32 = json.loads(_ok(["trace", "info", "--json", str(reference_dir / "traces/sm61/stride32")]))
    s1 = json.loads(_ok(["trace", "info", "--json", str(reference_dir / "traces/sm61/stride1")]))
    assert s32["divergent_loads"] == s32["global_loads"] > 0
    assert s32["dpki"] == 1000 * s32["divergent_loads"] / s32["warp_instructions"]
    assert s1["divergent_loads"] == 0 and s1["dpki"] == 0.0


def test_divergence_definition_hand_cases() -> None:
    """Hand-worked: packed (aligned or not) loads are not divergent; gaps over lines are."""
    from mdm.traces.model import KernelTrace

    cases = [  # (width, addresses of 32 lanes, divergent?)
        (4, [0x1000 + 4 * k for k in range(32)], False),  # 1 line needed, 1 touched
        (4, [0x1004 + 4 * k for k in range(32)], False),  # unaligned: 2 needed, 2 touched
        (16, [0x1000 + 16 * k for k in range(32)], False),  # 4 lines, 4 touched
        (4, [0x1000 + 128 * k for k in range(32)], True),  # GS=32: 32 lines for 1
        (4, [0x1000 + 8 * k for k in range(32)], True),  # stride 8 B: 2 lines for 1
        (4, [0x1000] * 32, False),  # broadcast
    ]
    n = len(cases)
    kt = KernelTrace(
        name="k", kernel_id=1, grid=(1, 1, 1), block=(32, 1, 1), nregs=8, shmem_bytes=0,
        binary_version=70, warp_ptr=np.array([0, n]), warp_block=np.zeros(1, np.int32),
        warp_id=np.zeros(1, np.int32), pc=np.zeros(n, np.uint32), opcode=np.zeros(n, np.uint16),
        iclass=np.full(n, 5, np.uint8), mask=np.full(n, 0xFFFFFFFF, np.uint32),
        dst=np.full((n, 4), -1, np.int16), src=np.full((n, 8), -1, np.int16),
        mem_width=np.array([c[0] for c in cases], np.uint8), line=np.full(n, -1, np.int32),
        addr_ptr=np.arange(n + 1, dtype=np.int64) * 32,
        addrs=np.array([a for c in cases for a in c[1]], np.uint64), opcodes=("LDG.E",),
    )  # fmt: skip
    assert divergent_loads(kt).tolist() == [c[2] for c in cases]


def test_convert_round_trip(tmp_path: Path, pytorch_pow_dir: Path) -> None:
    store = tmp_path / "pow.mdmtrace"
    _ok(["trace", "convert", str(pytorch_pow_dir), str(store)])
    back = tmp_path / "back"
    _ok(["trace", "convert", str(store), str(back), "--compress", "xz"])
    assert list(back.glob("*.traceg.xz"))
    a, b, c = read_app(pytorch_pow_dir), open_trace(store), read_app(back)
    assert a.kernels[0].equals(b.kernels[0]) and a.kernels[0].equals(c.kernels[0])
    st = json.loads(_ok(["trace", "info", "--json", str(store)]))
    assert st["warp_instructions"] == 220 * 33


def test_gen_stride_and_info(tmp_path: Path) -> None:
    out = tmp_path / "s32"
    _ok(["trace", "gen", "stride", "--out", str(out), "--gs", "32", "--ctas", "4", "--seed", "3"])
    st = json.loads(_ok(["trace", "info", "--json", str(out)]))
    assert st["kernels"] == 1 and st["thread_blocks"] == 4
    assert st["divergent_loads"] == st["global_loads"] > 0
    out1 = tmp_path / "s1.mdmtrace"
    _ok(
        [
            "trace",
            "gen",
            "stride",
            "--out",
            str(out1),
            "-p",
            "gs=1",
            "-p",
            "ctas=4",
            "--format",
            "store",
        ]
    )
    st1 = json.loads(_ok(["trace", "info", "--json", str(out1)]))
    assert st1["thread_blocks"] == 4 and st1["dpki"] == 0.0


def test_gen_params_parse_like_builtin_specs(tmp_path: Path) -> None:
    """``trace gen -p`` and a ``builtin:`` spec read values with one parser (float here)."""
    from mdm.traces.workloads import load_trace

    out = tmp_path / "spmv.mdmtrace"
    _ok(["trace", "gen", "spmv_csr", "--out", str(out), "-p", "band_frac=0.25", "--ctas", "4"])
    a = open_trace(out).kernels[0]
    b = load_trace("builtin:spmv_csr?band_frac=0.25&ctas=4").kernels[0]
    c = load_trace("builtin:spmv_csr?band_frac=0.75&ctas=4").kernels[0]
    assert np.array_equal(a.addrs, b.addrs) and np.array_equal(a.pc, b.pc)
    assert not np.array_equal(a.addrs, c.addrs)


def test_errors_exit_1_one_line(tmp_path: Path) -> None:
    _fails(["trace", "info", str(tmp_path / "missing")], "missing", "no such file")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "kernelslist.g").write_text("kernel-1.traceg\n")
    (bad / "kernel-1.traceg").write_text("-kernel name = x\n-grid dim = (1,1,1)\n#BEGIN_TB\n")
    _fails(["trace", "info", str(bad)], "kernel-1.traceg:3", "missing header field")
    _fails(["trace", "gen", "nosuch", "--out", str(tmp_path / "o")], "unknown workload")
    _fails(["trace", "gen", "stride", "--out", str(tmp_path / "o"), "-p", "zz=1"], "no parameter")
    _fails(["trace", "gen", "stride", "--out", str(tmp_path / "o"), "-p", "gs"], "key=value")
    _fails(["trace", "gen", "stride", "--out", str(tmp_path / "o"), "-p", "gs=abc"], "a number")
    _fails(["trace", "convert", str(bad), str(tmp_path / "x"), "--compress", "zip"], "--compress")
    # conflicting or ignored options: refused, not resolved silently
    gen = ["trace", "gen", "stride", "--out", str(tmp_path / "o")]
    _fails([*gen, "--gs", "4", "-p", "gs=8"], "--gs and --param gs")
    _fails([*gen, "-p", "ctas=16", "-p", "ctas=8"], "--param ctas given twice")
    _fails([*gen, "--format", "store", "--compress", "xz"], "a store is binary")
    _fails(["trace", "convert", "builtin:vecadd?ctas=2", str(tmp_path / "s.mdmtrace"),
            "--compress", "xz"], "a store is binary")  # fmt: skip
    assert not (tmp_path / "o").exists()


def test_unknown_opcode_cli(tmp_path: Path, pytorch_pow_dir: Path) -> None:
    app_trace = read_app(pytorch_pow_dir)
    k = app_trace.kernels[0]
    k.opcodes = tuple("FROB" if o == "FMUL" else o for o in k.opcodes)
    write_app(AppTrace(commands=[k], name="x"), tmp_path / "x")
    _fails(["trace", "info", str(tmp_path / "x")], "FROB", ".traceg:")
    st = json.loads(_ok(["trace", "info", "--json", "--allow-unknown", str(tmp_path / "x")]))
    assert st["mix"]["unknown"] == int((k.opcode == k.opcodes.index("FROB")).sum())
    # the error's advice is an option of the commands that read traces
    for cmd in (["predict", "--model", "roofline"], ["cachesim"]):
        args = [*cmd, str(tmp_path / "x"), "--gpu", "mdm_pascal", "--json"]
        _fails(args, "FROB", "--allow-unknown")
        assert json.loads(_ok([*args, "--allow-unknown"]))


def test_divergent_loads_function(pytorch_pow_dir: Path) -> None:
    k = read_app(pytorch_pow_dir).kernels[0]
    assert not divergent_loads(k).any()


def test_info_and_convert_take_builtin_specs(tmp_path: Path) -> None:
    """``builtin:`` specs, as ``mdm predict`` takes them: info counts the generated
    workload, convert writes it, and a misspelt workload is one error line."""
    from mdm.traces.workloads import generate

    want = generate("gather", ctas=8)
    st = json.loads(_ok(["trace", "info", "builtin:gather?ctas=8", "--json"]))
    assert st["kernels"] == 1 and st["memcpys"] == len(want.memcpys)
    assert st["warp_instructions"] == want.kernels[0].n_instructions
    _ok(["trace", "convert", "builtin:gather?ctas=8", str(tmp_path / "g.mdmtrace")])
    back = open_trace(tmp_path / "g.mdmtrace")
    assert np.array_equal(back.kernels[0].addrs, want.kernels[0].addrs)
    assert back.memcpys == want.memcpys
    _fails(["trace", "info", "builtin:nosuch"], "unknown workload 'nosuch'")
