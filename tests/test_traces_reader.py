"""Accel-Sim reader: real traces, a slow reference parser, golden lines, bad input."""

from __future__ import annotations

import gzip
import json
import lzma
import shutil
from pathlib import Path

import numpy as np
import pytest

from mdm.errors import TraceFormatError
from mdm.traces import open_trace, read_app, read_kernel
from mdm.traces.model import MAX_DST, MAX_SRC, InstrClass

REF_ISAS = ("sm61", "sm70")


# --------------------------------------------------------------- slow reference
def _slow_parse(path: Path) -> dict[str, list]:
    """Line-by-line pure-Python parser following Accel-Sim's trace_parser.cc."""
    opener = lzma.open if path.name.endswith(".xz") else open
    with opener(path, "rt") as f:
        lines = f.read().splitlines()
    lineinfo = any(ln.strip() == "-enable lineinfo = 1" for ln in lines)
    out: dict[str, list] = {
        k: [] for k in ("pc", "mask", "op", "dst", "src", "width", "line", "addrs", "warp")
    }
    block = None
    for ln in lines:
        t = ln.split()
        if not t or t[0].startswith("-") or t[0].startswith("#"):
            continue
        if t[0] == "thread":
            block = ln.split("=")[1].strip()
            continue
        if t[0] == "warp":
            out["warp"].append((block, int(t[2])))
            continue
        if t[0] == "insts":
            continue
        i = 0
        line = -1
        if lineinfo:
            line = int(t[0])
            i = 1
        pc, mask = int(t[i], 16), int(t[i + 1], 16)
        nd = int(t[i + 2])
        dst = [int(r[1:]) for r in t[i + 3 : i + 3 + nd]]
        i += 3 + nd
        op = t[i]
        ns = int(t[i + 1])
        src = [int(r[1:]) for r in t[i + 2 : i + 2 + ns]]
        i += 2 + ns
        width = int(t[i])
        i += 1
        addrs: list[int] = []
        lanes = [lane for lane in range(32) if mask >> lane & 1]
        if width:
            mode = int(t[i])
            i += 1
            if mode == 0:
                addrs = [int(a, 16) for a in t[i : i + len(lanes)]]
            elif mode == 1:
                base, stride = int(t[i], 16), int(t[i + 1])
                addrs = [(base + k * stride) % 2**64 for k in range(len(lanes))]
            else:
                base = int(t[i], 16)
                addrs = [base] if lanes else []
                for k in range(1, len(lanes)):
                    addrs.append((addrs[-1] + int(t[i + k])) % 2**64)
        out["pc"].append(pc)
        out["mask"].append(mask)
        out["op"].append(op)
        out["dst"].append(dst + [-1] * (MAX_DST - nd))
        out["src"].append(src + [-1] * (MAX_SRC - ns))
        out["width"].append(width)
        out["line"].append(line)
        out["addrs"].extend(addrs)
    return out


def _compare_with_slow(path: Path) -> None:
    kt = read_kernel(path)
    ref = _slow_parse(path)
    assert kt.n_instructions == len(ref["pc"])
    assert kt.pc.tolist() == ref["pc"]
    assert kt.mask.tolist() == ref["mask"]
    assert [kt.opcodes[o] for o in kt.opcode] == ref["op"]
    assert kt.dst.tolist() == ref["dst"]
    assert kt.src.tolist() == ref["src"]
    assert kt.mem_width.tolist() == ref["width"]
    assert kt.line.tolist() == ref["line"]
    assert kt.addrs.tolist() == ref["addrs"]
    assert kt.n_warps == len(ref["warp"])
    assert kt.warp_id.tolist() == [w for _, w in ref["warp"]]
    gx, gy = kt.grid[0], kt.grid[1]
    blocks = []
    for b, _ in ref["warp"]:
        x, y, z = (int(v) for v in b.split(","))
        blocks.append(x + y * gx + z * gx * gy)
    assert kt.warp_block.tolist() == blocks
    kt.validate()


# --------------------------------------------------------------- the real trace
def test_pytorch_pow_counts(pytorch_pow_dir: Path) -> None:
    app = read_app(pytorch_pow_dir)
    assert len(app.kernels) == 1 and len(app.commands) == 1
    k = app.kernels[0]
    assert k.n_blocks == 55 and np.unique(k.warp_block).shape[0] == 55
    assert k.n_warps == 220
    assert np.all(k.warp_lengths == 33)
    assert k.n_instructions == 220 * 33
    assert (k.nregs, k.binary_version, k.kernel_id) == (21955, 0, 593)
    assert k.header["nvbit version"] == "1.7.6"
    assert k.name.startswith("_ZN2at6native29vectorized_elementwise_kernel")


def test_pytorch_pow_matches_slow_parser(pytorch_pow_dir: Path) -> None:
    (trace,) = pytorch_pow_dir.glob("*.traceg")
    _compare_with_slow(trace)


def test_open_trace_variants_agree(pytorch_pow_dir: Path) -> None:
    (trace,) = pytorch_pow_dir.glob("*.traceg")
    a = open_trace(pytorch_pow_dir).kernels[0]
    b = open_trace(pytorch_pow_dir / "kernelslist.g").kernels[0]
    c = open_trace(trace).kernels[0]
    assert a.equals(b) and a.equals(c)


@pytest.mark.parametrize("chunk", [64, 1000, 4096])
def test_chunk_boundaries_do_not_matter(pytorch_pow_dir: Path, chunk: int) -> None:
    (trace,) = pytorch_pow_dir.glob("*.traceg")
    assert read_kernel(trace, chunk_bytes=chunk).equals(read_kernel(trace))


# --------------------------------------------------------------- reference traces
@pytest.mark.parametrize("isa", REF_ISAS)
def test_reference_traces_match_summary(reference_dir: Path, isa: str) -> None:
    root = reference_dir / "traces" / isa
    dirs = sorted(d for d in root.iterdir() if (d / "kernelslist.g").is_file())
    assert dirs
    for d in dirs:
        summary = json.loads((d / "summary.json").read_text())
        app = read_app(d)
        ks = app.kernels
        assert sum(k.n_instructions for k in ks) == summary["warp_insts"], d
        assert sum(k.thread_instructions for k in ks) == summary["thread_insts"], d
        assert len(ks) == len(summary["kernels"])
        for k, s in zip(ks, summary["kernels"], strict=True):
            assert k.kernel_id == s["id"] and k.name == s["name"]
            assert list(k.grid) == s["grid"] and list(k.block) == s["block"]
            assert (k.nregs, k.shmem_bytes) == (s["nregs"], s["shmem"])
            assert k.n_instructions == s["warp_insts"]
            assert k.n_blocks == s["ctas"]
            assert not np.any(k.iclass == InstrClass.UNKNOWN)


@pytest.mark.parametrize("isa", REF_ISAS)
def test_reference_pchase_matches_slow_parser(reference_dir: Path, isa: str) -> None:
    for trace in sorted((reference_dir / "traces" / isa / "pchase").glob("*.traceg.xz")):
        _compare_with_slow(trace)


# --------------------------------------------------------------- golden text
HEADER = """-kernel name = golden(int*)
-kernel id = 7
-grid dim = (2,1,1)
-block dim = (40,1,1)
-shmem = 256
-nregs = 12
-binary version = 70
-cuda stream id = 0
-accelsim tracer version = {tv}
-enable lineinfo = {li}

#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] mem_width [adrrescompress?] [mem_addresses] immediate

"""


def _tb(x: int, warps: list[list[str]]) -> str:
    s = f"#BEGIN_TB\n\nthread block = {x},0,0\n"
    for w, lines in enumerate(warps):
        s += f"\nwarp = {w}\ninsts = {len(lines)}\n" + "".join(ln + "\n" for ln in lines)
    return s + "\n#END_TB\n\n"


def _write(tmp: Path, text: str, name: str = "kernel-7.traceg") -> Path:
    p = tmp / name
    if name.endswith(".xz"):
        with lzma.open(p, "wt") as f:
            f.write(text)
    elif name.endswith(".gz"):
        with gzip.open(p, "wt") as f:
            f.write(text)
    else:
        p.write_text(text)
    return p


GOLDEN_W0 = [
    "0000 ffffffff 1 R1 MOV 0 0",
    "0010 0000000f 1 R4 LDG.E.64 1 R2 8 1 0x1000 8",
    "0020 00000005 0 STG.E 2 R2 R4 4 0 0x2000 0x2010",
    "0030 0000000d 1 R5 LDG.E 1 R2 4 2 0x3000 -16 32",
    "0040 00000000 0 BRA 0 0",
]
GOLDEN_W1 = ["0000 000000ff 0 EXIT 0 0"]


def _golden_text(tv: int = 5, imm: bool = False, lineinfo: bool = False) -> str:
    def fix(lines: list[str]) -> list[str]:
        out = []
        for i, ln in enumerate(lines):
            ln = (f"{10 + i} " if lineinfo else "") + ln
            out.append(ln + (" 77" if imm else ""))
        return out

    body = _tb(0, [fix(GOLDEN_W0), fix(GOLDEN_W1)]) + _tb(1, [fix(GOLDEN_W1), fix(GOLDEN_W1)])
    return HEADER.format(tv=tv, li=int(lineinfo)) + body


@pytest.mark.parametrize("tv", [3, 4, 5])
@pytest.mark.parametrize("imm", [False, True])
@pytest.mark.parametrize("lineinfo", [False, True])
@pytest.mark.parametrize("suffix", ["", ".xz", ".gz"])
def test_golden_trace(tmp_path: Path, tv: int, imm: bool, lineinfo: bool, suffix: str) -> None:
    p = _write(tmp_path, _golden_text(tv, imm, lineinfo), "kernel-7.traceg" + suffix)
    k = read_kernel(p)
    assert (k.name, k.kernel_id, k.grid, k.block) == ("golden(int*)", 7, (2, 1, 1), (40, 1, 1))
    assert (k.shmem_bytes, k.nregs, k.binary_version) == (256, 12, 70)
    assert k.warp_ptr.tolist() == [0, 5, 6, 7, 8]
    assert k.warp_block.tolist() == [0, 0, 1, 1] and k.warp_id.tolist() == [0, 1, 0, 1]
    assert k.pc.tolist()[:5] == [0, 0x10, 0x20, 0x30, 0x40]
    assert k.mask.tolist()[:5] == [0xFFFFFFFF, 0xF, 0x5, 0xD, 0]
    assert k.mem_width.tolist()[:5] == [0, 8, 4, 4, 0]
    # mode 1: base 0x1000 stride 8 over 4 lanes; mode 0 list; mode 2: 0x3000, -16, +32
    assert k.addrs.tolist() == [
        0x1000,
        0x1008,
        0x1010,
        0x1018,
        0x2000,
        0x2010,
        0x3000,
        0x2FF0,
        0x3010,
    ]
    assert k.addr_ptr.tolist() == [0, 0, 4, 6, 9, 9, 9, 9, 9]
    assert k.dst[:3].tolist() == [[1, -1, -1, -1], [4, -1, -1, -1], [-1, -1, -1, -1]]
    assert k.src[2].tolist() == [2, 4, -1, -1, -1, -1, -1, -1]
    expect_line = [10, 11, 12, 13, 14, 10, 10, 10] if lineinfo else [-1] * 8
    assert k.line.tolist() == expect_line
    assert [k.opcodes[o] for o in k.opcode[:3]] == ["MOV", "LDG.E.64", "STG.E"]
    C = InstrClass
    assert (
        k.iclass.tolist()
        == [C.INT, C.LD_GLOBAL, C.ST_GLOBAL, C.LD_GLOBAL, C.BRANCH] + [C.BRANCH] * 3
    )
    assert k.header["cuda stream id"] == "0"


def test_mode2_accepts_active_lane_count_of_deltas(tmp_path: Path) -> None:
    # upstream's reader consumes one delta per active lane: a 4th delta is accepted, unused
    text = _golden_text().replace("0x3000 -16 32", "0x3000 -16 32 5")
    a = read_kernel(_write(tmp_path, text))
    b = read_kernel(_write(tmp_path, _golden_text(), "other.traceg"))
    assert a.equals(b)


def test_mode2_with_all_deltas_and_immediate_decides_the_immediate(tmp_path: Path) -> None:
    """A first mode-2 line with one delta per active lane plus one more field can only
    be ``active`` deltas and an immediate (``active + 1`` fields): it fixes the immediate
    as present, so the later lines' immediates are consistent and the addresses use the
    first ``active - 1`` deltas: 0x3000, 0x3000 - 16 = 0x2FF0, 0x2FF0 + 32 = 0x3010."""
    w0 = ["0030 0000000d 1 R5 LDG.E 1 R2 4 2 0x3000 -16 32 5 77", "0000 ffffffff 1 R1 MOV 0 0 77"]
    w1 = ["0000 000000ff 0 EXIT 0 0 77"]
    text = HEADER.format(tv=5, li=0) + _tb(0, [w0, w1]) + _tb(1, [w1, w1])
    k = read_kernel(_write(tmp_path, text))
    assert k.addrs.tolist() == [0x3000, 0x2FF0, 0x3010]
    assert k.addr_ptr.tolist() == [0, 3, 3, 3, 3, 3]


def test_upper_case_hex_and_wide_memory_widths(tmp_path: Path) -> None:
    """Hex fields may be upper case (0xAB = 171, 0X1F00 = 7936) and the memory width is
    kept as written up to 255 (the field's range), not only the 1..16 B of loads."""
    text = _golden_text().replace(
        "0020 00000005 0 STG.E 2 R2 R4 4 0 0x2000 0x2010",
        "00AB 0000000A 0 STG.E 2 R2 R4 255 0 0X1F00 0xABCDEF",
        1,
    )
    k = read_kernel(_write(tmp_path, text))
    assert k.pc[2] == 0xAB == 171 and k.mask[2] == 0xA == 10
    assert k.mem_width[2] == 255
    assert k.addrs[k.addr_ptr[2] : k.addr_ptr[3]].tolist() == [7936, 11259375]


def test_kernelslist_memcpy_and_compressed_fallback(tmp_path: Path) -> None:
    _write(tmp_path, _golden_text(), "kernel-7.traceg.xz")
    (tmp_path / "kernelslist.g").write_text(
        "MemcpyHtoD,0x00007f4000000000,4096\n\nkernel-7.traceg\nMemcpyDtoH,0x1,2\n"
    )
    app = read_app(tmp_path)
    assert len(app.commands) == 2
    assert app.memcpys[0].addr == 0x7F4000000000 and app.memcpys[0].nbytes == 4096
    assert app.kernels[0].kernel_id == 7


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_a_byte_order_mark_is_dropped(tmp_path: Path, suffix: str) -> None:
    """A UTF-8 byte-order mark (written by some Windows editors) before a kernel trace's
    first header line, or a kernelslist.g's first line, reads as if absent."""
    plain = read_kernel(_write(tmp_path, _golden_text(), "plain.traceg"))
    _write(tmp_path, "\ufeff" + _golden_text(), "kernel-7.traceg" + suffix)
    (tmp_path / "kernelslist.g").write_text("\ufeffkernel-7.traceg" + suffix + "\n")
    app = read_app(tmp_path)
    assert len(app.kernels) == 1 and app.kernels[0].equals(plain)


# --------------------------------------------------------------- bad input
def _err(tmp_path: Path, text: str) -> TraceFormatError:
    p = _write(tmp_path, text, "bad.traceg")
    with pytest.raises(TraceFormatError) as ei:
        read_kernel(p)
    assert "bad.traceg" in str(ei.value)
    return ei.value


def _lineno(text: str, needle: str, nth: int = 0) -> int:
    hits = [i + 1 for i, ln in enumerate(text.splitlines()) if needle in ln]
    return hits[nth]


@pytest.mark.parametrize(
    "key", ["kernel name", "grid dim", "block dim", "shmem", "nregs", "binary version",
            "accelsim tracer version", "kernel id"],
)  # fmt: skip
def test_missing_header_field(tmp_path: Path, key: str) -> None:
    text = "\n".join(ln for ln in _golden_text().splitlines() if not ln.startswith(f"-{key} ="))
    e = _err(tmp_path, text)
    assert key in e.message and e.line is not None


@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        ("-grid dim = (2,1,1)", "-grid dim = (2,1)", "grid dim"),
        ("-nregs = 12", "-nregs = many", "nregs"),
        ("-accelsim tracer version = 5", "-accelsim tracer version = 2", "tracer version"),
        ("-enable lineinfo = 0", "-enable lineinfo = 3", "lineinfo"),
    ],
)
def test_bad_header_value(tmp_path: Path, old: str, new: str, what: str) -> None:
    text = _golden_text().replace(old, new)
    e = _err(tmp_path, text)
    assert what in e.message and e.line == _lineno(text, new)


def test_truncated_file(tmp_path: Path) -> None:
    text = _golden_text()
    cut = text[: text.rindex("#END_TB")]
    e = _err(tmp_path, cut)
    assert "#END_TB" in e.message
    # the file's last line, with or without its newline (until the sixty-sixth session a
    # file that fits in the first chunk was reported one line past its end)
    assert e.line == len(cut.splitlines())
    bare = cut.rstrip("\n")  # ends with an instruction line, no newline after it
    e = _err(tmp_path, bare)
    assert e.line == len(bare.splitlines()) == len(cut.splitlines()) - 1


def test_missing_thread_blocks_names_the_last_line(tmp_path: Path) -> None:
    text = _golden_text()
    cut = text[: text.rindex("#BEGIN_TB")]
    e = _err(tmp_path, cut)
    assert "2 thread blocks" in e.message
    assert e.line == len(cut.splitlines())  # as above


def test_missing_thread_blocks(tmp_path: Path) -> None:
    text = _golden_text()
    e = _err(tmp_path, text[: text.rindex("#BEGIN_TB")])
    assert "2 thread blocks" in e.message


def test_fewer_lines_than_insts(tmp_path: Path) -> None:
    text = _golden_text().replace(GOLDEN_W0[2] + "\n", "", 1)
    e = _err(tmp_path, text)
    assert "fewer instruction lines" in e.message and "5 declared, 4 found" in e.message
    assert e.line == _lineno(text, "warp = 1")


def test_more_lines_than_insts(tmp_path: Path) -> None:
    text = _golden_text().replace("insts = 5", "insts = 4", 1)
    e = _err(tmp_path, text)
    assert "more instruction lines" in e.message
    assert e.line == _lineno(text, GOLDEN_W0[4])


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("0x2000 0x2010", "0x2000", "one hex address per active lane"),
        ("0x2000 0x2010", "0x2000 0x2010 0x2020 0x2030", "at most one immediate"),
        ("0x1000 8", "0x1000", "base address and a decimal stride"),
        ("0x3000 -16 32", "0x3000", "deltas"),
        ("1 R2 8 1 0x1000", "1 X2 8 1 0x1000", "register operand"),
        ("0010 0000000f 1 R4", "0010 0000000g 1 R4", "active mask"),
        ("0010 0000000f 1 R4", "0010 0000000f 9 R4", "destination registers"),
        ("R2 8 1 0x1000", "R2 8 7 0x1000", "address mode"),
        ("0030 0000000d 1 R5 LDG.E 1 R2 4", "0030 0000000d 1 R5 LDG.E 1 R2 x4", "memory width"),
        ("R2 8 1 0x1000", "R2 256 1 0x1000", "memory width"),  # 0..255, not wrapped to 0
        ("0010 0000000f 1 R4", "100000010 0000000f 1 R4", "hex PC"),  # 33 bits
        # 3 active lanes: at most 3 deltas and an immediate, not 5 fields
        ("0x3000 -16 32", "0x3000 -16 32 5 6 7", "deltas"),
    ],
)
def test_bad_instruction_line(tmp_path: Path, old: str, new: str, expected: str) -> None:
    text = _golden_text().replace(old, new, 1)
    e = _err(tmp_path, text)
    assert expected in e.message
    assert e.line == _lineno(text, new)


def test_inconsistent_immediate(tmp_path: Path) -> None:
    text = _golden_text().replace("0000 ffffffff 1 R1 MOV 0 0", "0000 ffffffff 1 R1 MOV 0 0 5", 1)
    e = _err(tmp_path, text)
    assert "immediate" in e.message


def test_unknown_opcode_names_it_and_line(tmp_path: Path) -> None:
    text = _golden_text().replace("BRA 0 0", "FROB.X 0 0", 1)
    e = _err(tmp_path, text)
    assert "FROB.X" in e.message and e.line == _lineno(text, "FROB.X")
    k = read_kernel(tmp_path / "bad.traceg", allow_unknown=True)
    assert int((k.iclass == InstrClass.UNKNOWN).sum()) == 1


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("thread block = 1,0,0", "thread block = 0,0,0", "twice"),
        ("thread block = 1,0,0", "thread block = 2,0,0", "inside the grid"),
        ("warp = 1\n", "warp = 0\n", "twice"),
        ("warp = 1\n", "warp = 2\n", "warps per block"),
        ("#END_TB\n\n#BEGIN_TB", "\n#BEGIN_TB", "#BEGIN_TB before the #END_TB"),
    ],
)
def test_bad_block_structure(tmp_path: Path, old: str, new: str, expected: str) -> None:
    e = _err(tmp_path, _golden_text().replace(old, new, 1))
    assert expected in e.message and e.line is not None


def test_missing_warp_in_block(tmp_path: Path) -> None:
    text = _golden_text()
    i = text.index("warp = 1")
    j = text.index("#END_TB")
    e = _err(tmp_path, text[:i] + text[j:])
    assert "warps its block dim requires" in e.message


def test_kernelslist_errors(tmp_path: Path) -> None:
    (tmp_path / "kernelslist.g").write_text("kernel-9.traceg\n")
    with pytest.raises(TraceFormatError, match=r"kernelslist.g:1: .*kernel-9.traceg.*not found"):
        read_app(tmp_path)
    (tmp_path / "kernelslist.g").write_text("MemcpyHtoD,zz,1\n")
    with pytest.raises(TraceFormatError, match=r"kernelslist.g:1: expected 'MemcpyHtoD"):
        read_app(tmp_path)
    (tmp_path / "kernelslist.g").write_text("\nhello\n")
    with pytest.raises(TraceFormatError, match=r"kernelslist.g:2: expected a kernel"):
        read_app(tmp_path)
    shutil.rmtree(tmp_path)
    with pytest.raises(TraceFormatError, match="no such file"):
        open_trace(tmp_path)


def test_corrupt_xz_is_rejected(tmp_path: Path) -> None:
    p = _write(tmp_path, _golden_text(), "kernel-7.traceg.xz")
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="kernel-7.traceg.xz"):
        read_kernel(p)


def test_registry_custom_backend_and_engine(tmp_path: Path, pytorch_pow_dir: Path) -> None:
    from mdm.traces import BACKENDS, AppTrace, TraceBackend, register_backend

    marker = tmp_path / "x.fake"
    marker.write_text("")
    fake = AppTrace(commands=[], name="fake")
    register_backend(TraceBackend("fake", lambda p: p.suffix == ".fake", lambda p, **kw: fake))
    try:
        assert open_trace(marker) is fake
        assert open_trace(pytorch_pow_dir, engine="accelsim").kernels[0].n_warps == 220
        with pytest.raises(TraceFormatError, match="unknown trace engine"):
            open_trace(marker, engine="nope")
        other = tmp_path / "x.other"
        other.write_text("")
        with pytest.raises(TraceFormatError, match="expected an Accel-Sim trace"):
            open_trace(other)
    finally:
        BACKENDS.pop("fake")


def test_tma_address_lists_rejected(tmp_path: Path) -> None:
    text = _golden_text().replace("-binary version = 70", "-binary version = 90")
    text = text.replace("LDG.E.64 1 R2 8 1 0x1000 8", "UTMALDG.2D 1 R2 8 1 0x1000 8", 1)
    e = _err(tmp_path, text)
    assert "TMA" in e.message and e.line == _lineno(text, "UTMALDG")


@pytest.mark.parametrize("suffix", ["", ".xz", ".gz"])
def test_a_kernel_too_large_for_memory_is_refused_while_it_is_read(
    tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel's arrays are projected from the share of its file read so far (the
    compressed share for ``.xz`` and ``.gz``): beyond what the memory can hold with a
    prediction's copy, the reader stops with the file named instead of being killed."""
    from mdm import _memory
    from mdm.errors import MdmError
    from mdm.traces import accelsim
    from mdm.traces.workloads import generate

    kt = generate("vecadd", ctas=64).kernels[0]
    accelsim.write_kernel(kt, tmp_path / "k.traceg")
    src = tmp_path / "k.traceg"
    path = src if not suffix else tmp_path / f"k.traceg{suffix}"
    if suffix == ".xz":
        path.write_bytes(lzma.compress(src.read_bytes()))
    elif suffix == ".gz":
        path.write_bytes(gzip.compress(src.read_bytes()))
    arrays = sum(
        getattr(kt, k).nbytes
        for k in ("pc", "opcode", "mask", "dst", "src", "mem_width", "line", "addr_ptr", "addrs")
    )
    monkeypatch.setattr(accelsim, "_PROJECT_AFTER_BYTES", 0)
    monkeypatch.setattr(_memory, "available_memory_bytes", lambda: arrays // 2)
    with pytest.raises(MdmError, match=r"k\.traceg.*would hold about .* GB in memory"):
        read_kernel(path, chunk_bytes=4096)
    monkeypatch.setattr(_memory, "available_memory_bytes", lambda: 4 * arrays)
    assert read_kernel(path, chunk_bytes=4096).equals(kt)


def test_header_integers_decimal_with_leading_zeros_or_hex(tmp_path: Path) -> None:
    """``-kernel id = 007`` is 7 (decimal, leading zeros allowed; Python's ``int(v, 0)``
    refused it before the sixty-sixth session) and ``-shmem = 0x100`` is 256; a value
    that is neither is an error naming the field."""
    text = _golden_text().replace("-kernel id = 7", "-kernel id = 007")
    text = text.replace("-shmem = 256", "-shmem = 0x100")
    k = read_kernel(_write(tmp_path, text))
    assert (k.kernel_id, k.shmem_bytes) == (7, 256)
    e = _err(tmp_path, _golden_text().replace("-nregs = 12", "-nregs = 0b1100"))
    assert "-nregs" in e.message and "integer" in e.message
