"""Round trips (writer -> reader, store) and corruption: rejected or exactly equal."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdm.errors import TraceFormatError
from mdm.traces import (
    AppTrace,
    KernelTrace,
    Memcpy,
    load_store,
    open_trace,
    read_app,
    read_kernel,
    save_store,
    write_app,
    write_kernel,
)
from mdm.traces.model import MAX_DST, MAX_SRC
from mdm.traces.opcodes import classify

OPS = [
    "MOV",
    "IADD3",
    "FFMA",
    "LDG.E.SYS",
    "STG.E.128",
    "LDS.U",
    "STS",
    "BRA",
    "EXIT",
    "ATOM.E.ADD",
    "DADD",
]
MEM_OPS = {"LDG.E.SYS", "STG.E.128", "LDS.U", "STS", "ATOM.E.ADD"}
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def kernels(draw: st.DrawFn, kernel_id: int = 1) -> KernelTrace:
    gx = draw(st.integers(1, 3))
    gy = draw(st.integers(1, 2))
    threads = draw(st.integers(1, 70))
    wpb = -(-threads // 32)
    version = draw(st.sampled_from([0, 61, 70, 80, 90]))
    lineinfo = draw(st.booleans())
    n_blocks = gx * gy
    order = draw(st.permutations(list(range(n_blocks))))
    rows: list[dict] = []
    warp_block, warp_id, warp_ptr = [], [], [0]
    for b in order:
        for w in draw(st.permutations(list(range(wpb)))):
            for _ in range(draw(st.integers(0, 4))):
                op = draw(st.sampled_from(OPS))
                mask = draw(
                    st.one_of(
                        st.just(0xFFFFFFFF),
                        st.just(0),
                        st.integers(0, 2**32 - 1),
                        st.integers(1, 32).map(lambda n: (1 << n) - 1),
                    )
                )
                width = draw(st.sampled_from([1, 4, 8, 16])) if op in MEM_OPS else 0
                n_act = bin(mask).count("1")
                if width:
                    kind = draw(st.sampled_from(["stride", "random"]))
                    base = draw(st.integers(0, 2**63))
                    if kind == "stride":
                        stride = draw(st.integers(-256, 256))
                        addrs = [(base + k * stride) % 2**64 for k in range(n_act)]
                    else:
                        addrs = draw(
                            st.lists(st.integers(0, 2**64 - 1), min_size=n_act, max_size=n_act)
                        )
                else:
                    addrs = []
                rows.append(
                    {
                        "pc": draw(st.integers(0, 2**32 - 1)),
                        "op": op,
                        "mask": mask,
                        "dst": draw(st.lists(st.integers(0, 255), max_size=MAX_DST)),
                        "src": draw(st.lists(st.integers(0, 32767), max_size=MAX_SRC)),
                        "width": width,
                        "line": draw(st.integers(0, 10**6)) if lineinfo else -1,
                        "addrs": addrs,
                    }
                )
            warp_block.append(b)
            warp_id.append(w)
            warp_ptr.append(len(rows))
    return make_kernel(
        rows, warp_block, warp_id, warp_ptr, (gx, gy, 1), (threads, 1, 1), version, kernel_id
    )


def make_kernel(
    rows, warp_block, warp_id, warp_ptr, grid, block, version, kernel_id
) -> KernelTrace:  # noqa: ANN001
    n = len(rows)
    names = sorted({r["op"] for r in rows})
    opcode = np.array([names.index(r["op"]) for r in rows], np.uint16)
    dst = np.full((n, MAX_DST), -1, np.int16)
    src = np.full((n, MAX_SRC), -1, np.int16)
    for i, r in enumerate(rows):
        dst[i, : len(r["dst"])] = r["dst"]
        src[i, : len(r["src"])] = r["src"]
    counts = [len(r["addrs"]) for r in rows]
    addr_ptr = np.zeros(n + 1, np.int64)
    addr_ptr[1:] = np.cumsum(counts)
    addrs = np.array([a for r in rows for a in r["addrs"]], np.uint64)
    kt = KernelTrace(
        name=f"k{kernel_id}(float*, int)",
        kernel_id=kernel_id,
        grid=grid,
        block=block,
        nregs=32,
        shmem_bytes=0,
        binary_version=version,
        warp_ptr=np.array(warp_ptr, np.int64),
        warp_block=np.array(warp_block, np.int32),
        warp_id=np.array(warp_id, np.int32),
        pc=np.array([r["pc"] for r in rows], np.uint32),
        opcode=opcode,
        iclass=classify(names, version)[opcode] if n else np.zeros(0, np.uint8),
        mask=np.array([r["mask"] for r in rows], np.uint32),
        dst=dst,
        src=src,
        mem_width=np.array([r["width"] for r in rows], np.uint8),
        line=np.array([r["line"] for r in rows], np.int32),
        addr_ptr=addr_ptr,
        addrs=addrs,
        opcodes=tuple(names),
        header={"accelsim tracer version": "5", "cuda stream id": "0"},
    )
    kt.validate()
    return kt


@st.composite
def apps(draw: st.DrawFn) -> AppTrace:
    cmds: list[KernelTrace | Memcpy] = []
    for i in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            cmds.append(Memcpy(draw(st.integers(0, 2**48)), draw(st.integers(0, 2**30))))
        cmds.append(draw(kernels(kernel_id=i + 1)))
    return AppTrace(commands=cmds, name="app")


def _same_app(a: AppTrace, b: AppTrace) -> bool:
    if len(a.commands) != len(b.commands):
        return False
    for x, y in zip(a.commands, b.commands, strict=True):
        if isinstance(x, Memcpy):
            if x != y:
                return False
        elif not (isinstance(y, KernelTrace) and x.equals(y)):
            return False
    return True


@SETTINGS
@given(
    app=apps(),
    compress=st.sampled_from([None, "xz", "gz"]),
    mode=st.sampled_from(["auto", "list", "delta"]),
    delta_count=st.sampled_from(["n-1", "n"]),
    immediate=st.booleans(),
)
def test_accelsim_round_trip(
    tmp_path_factory: pytest.TempPathFactory,
    app: AppTrace,
    compress: str | None,
    mode: str,
    delta_count: str,
    immediate: bool,
) -> None:
    out = tmp_path_factory.mktemp("rt")
    write_app(
        app, out, compress=compress, address_mode=mode, delta_count=delta_count, immediate=immediate
    )  # type: ignore[arg-type]
    back = read_app(out)
    assert _same_app(app, back)
    for k in back.kernels:
        k.validate()


@SETTINGS
@given(app=apps(), mmap=st.booleans())
def test_store_round_trip(
    tmp_path_factory: pytest.TempPathFactory, app: AppTrace, mmap: bool
) -> None:
    p = save_store(app, tmp_path_factory.mktemp("st") / "a.mdmtrace")
    back = load_store(p, mmap=mmap)
    assert back.name == app.name and _same_app(app, back)
    assert _same_app(app, open_trace(p))
    for ka, kb in zip(app.kernels, back.kernels, strict=True):
        assert ka.header == kb.header and ka.opcodes == kb.opcodes


def test_auto_mode_uses_stride_for_contiguous_lanes(tmp_path: Path) -> None:
    rows = [
        {"pc": 0, "op": "LDG.E.SYS", "mask": 0x0000FFF0, "dst": [1], "src": [2], "width": 4,
         "line": -1, "addrs": [0x100 + 4 * k for k in range(12)]},
        {"pc": 16, "op": "LDG.E.SYS", "mask": 0x00000505, "dst": [1], "src": [2], "width": 4,
         "line": -1, "addrs": [0x100, 0x104, 0x108, 0x10C]},
    ]  # fmt: skip
    kt = make_kernel(rows, [0], [0], [0, 2], (1, 1, 1), (32, 1, 1), 70, 1)
    p = write_kernel(kt, tmp_path / "k.traceg")
    body = [ln for ln in p.read_text().splitlines() if "LDG" in ln]
    assert body[0].endswith("4 1 0x100 4")  # contiguous lanes: base + stride
    assert body[1].endswith("4 0 0x100 0x104 0x108 0x10c")  # lanes with gaps: list
    assert read_kernel(p).equals(kt)


def test_line_numbers_survive_when_only_some_instructions_have_one(tmp_path: Path) -> None:
    """One instruction with a source line (42) is enough to write ``-enable lineinfo =
    1``; the other's -1 ("no line") is written and read back as -1 (the reader took a
    body line starting with '-' for a misplaced header line until the sixty-sixth
    session). A '-' line that is not a number is still a misplaced header."""
    rows = [
        {"pc": 0, "op": "MOV", "mask": 1, "dst": [1], "src": [], "width": 0, "line": -1,
         "addrs": []},
        {"pc": 16, "op": "MOV", "mask": 1, "dst": [2], "src": [1], "width": 0, "line": 42,
         "addrs": []},
    ]  # fmt: skip
    kt = make_kernel(rows, [0], [0], [0, 2], (1, 1, 1), (32, 1, 1), 70, 1)
    p = write_kernel(kt, tmp_path / "k.traceg")
    assert "-enable lineinfo = 1" in p.read_text()
    back = read_kernel(p)
    assert back.line.tolist() == [-1, 42]
    assert back.equals(kt)
    text = p.read_text().replace("-1 0000", "-x = 1\n-1 0000", 1)
    p.write_text(text)
    with pytest.raises(TraceFormatError, match="header line"):
        read_kernel(p)


# --------------------------------------------------------------- corruption
def _small_trace_text(tmp: Path, seed: int) -> tuple[KernelTrace, str]:
    rng = np.random.default_rng(seed)
    rows, wb, wi, wp = [], [], [], [0]
    for b in range(2):
        for w in range(2):
            for i in range(3):
                op = ["IADD3", "LDG.E.SYS", "STS"][i]
                mask = int(rng.integers(1, 2**32))
                n = bin(mask).count("1")
                rows.append({"pc": 16 * i, "op": op, "mask": mask, "dst": [i + 1], "src": [2, 3],
                             "width": 0 if i == 0 else 4, "line": -1,
                             "addrs": [] if i == 0 else [int(a) for a in rng.integers(0, 2**40, n)]})  # fmt: skip
            wb.append(b)
            wi.append(w)
            wp.append(len(rows))
    kt = make_kernel(rows, wb, wi, wp, (2, 1, 1), (64, 1, 1), 70, 3)
    p = write_kernel(kt, tmp / "orig.traceg")
    return kt, p.read_text()


def _check_rejected_or_equal(tmp: Path, kt: KernelTrace, text: str, compress: str | None) -> None:
    p = tmp / ("bad.traceg" + (f".{compress}" if compress else ""))
    data = text.encode()
    if compress == "xz":
        data = lzma.compress(data)
    elif compress == "gz":
        data = gzip.compress(data)
    p.write_bytes(data)
    try:
        got = read_kernel(p)
    except TraceFormatError as exc:
        assert str(p) in str(exc)
        return
    assert got.equals(kt), "a corrupted trace was read as a different trace"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 5), data=st.data(), compress=st.sampled_from([None, "xz", "gz"]))
def test_corruption_rejected_or_equal(
    tmp_path_factory: pytest.TempPathFactory, seed: int, data: st.DataObject, compress: str | None
) -> None:
    tmp = tmp_path_factory.mktemp("corrupt")
    kt, text = _small_trace_text(tmp, seed)
    lines = text.splitlines(keepends=True)
    how = data.draw(st.sampled_from(["truncate", "delete", "duplicate", "field"]))
    if how == "truncate":
        cut = data.draw(st.integers(0, len(text) - 1))
        bad = text[:cut]
    elif how == "delete":
        i = data.draw(st.integers(0, len(lines) - 1))
        bad = "".join(lines[:i] + lines[i + 1 :])
    elif how == "duplicate":
        i = data.draw(st.integers(0, len(lines) - 1))
        bad = "".join(lines[: i + 1] + lines[i:])
    else:
        # change a structural field: insts count, a register count, or drop an address
        idx = [i for i, ln in enumerate(lines) if ln[:1].isdigit() or ln.startswith("insts")]
        i = data.draw(st.sampled_from(idx))
        tok = lines[i].split()
        if tok[0] == "insts":
            tok[2] = str(int(tok[2]) + data.draw(st.sampled_from([-1, 1])))
        else:
            which = data.draw(st.sampled_from(["ndst", "nsrc", "drop_last"]))
            if which == "ndst":
                tok[2] = str(int(tok[2]) + 1)
            elif which == "nsrc":
                k = 3 + int(tok[2]) + 1
                tok[k] = str(int(tok[k]) + 1)
            else:
                tok = tok[:-1]
        lines[i] = " ".join(tok) + "\n"
        bad = "".join(lines)
    _check_rejected_or_equal(tmp, kt, bad, compress)


def test_builtin_workloads_round_trip(tmp_path: Path) -> None:
    """Every built-in workload (small sizes) survives Accel-Sim text and the store."""
    from mdm.traces.workloads import WORKLOADS, generate

    small = {"ctas": 4, "M": 32, "N": 64, "K": 16, "W": 64, "H": 32}
    for name, w in WORKLOADS.items():
        params = {k: v for k, v in small.items() if k in w.params}
        app = generate(name, seed=1, **params)
        write_app(app, tmp_path / name, compress="gz")
        assert _same_app(app, read_app(tmp_path / name)), name
        assert _same_app(app, load_store(save_store(app, tmp_path / f"{name}.mdmtrace"))), name


# --------------------------------------------------------------- slow reference writer
def _slow_body(kt: KernelTrace, mode: str, delta_count: str, immediate: bool) -> str:
    """Plain-Python formatter of the trace body (reference for the numba writer)."""

    def signed(d: int) -> int:
        d %= 1 << 64
        return d - (1 << 64) if d >= 1 << 63 else d

    def contiguous(m: int) -> bool:
        m >>= (m & -m).bit_length() - 1
        return m != 0 and (m & (m + 1)) == 0

    lineinfo = bool(kt.n_instructions and np.any(kt.line != -1))
    gx, gy, _ = kt.grid
    out: list[str] = []
    w, nw = 0, kt.n_warps
    while w < nw:
        b = int(kt.warp_block[w])
        out.append(f"\n#BEGIN_TB\n\nthread block = {b % gx},{(b // gx) % gy},{b // (gx * gy)}\n")
        while w < nw and kt.warp_block[w] == b:
            s, e = int(kt.warp_ptr[w]), int(kt.warp_ptr[w + 1])
            out.append(f"\nwarp = {kt.warp_id[w]}\ninsts = {e - s}\n")
            for i in range(s, e):
                m = int(kt.mask[i])
                d = [int(r) for r in kt.dst[i] if r >= 0]
                sr = [int(r) for r in kt.src[i] if r >= 0]
                seg = [str(kt.line[i])] if lineinfo else []
                seg += [f"{kt.pc[i]:04x}", f"{m:08x}", str(len(d)), *(f"R{r}" for r in d)]
                seg += [kt.opcodes[kt.opcode[i]], str(len(sr)), *(f"R{r}" for r in sr)]
                seg.append(str(kt.mem_width[i]))
                a = [int(x) for x in kt.addrs[kt.addr_ptr[i] : kt.addr_ptr[i + 1]]]
                n = len(a)
                if kt.mem_width[i]:
                    diffs = [signed(a[k] - a[k - 1]) for k in range(1, n)]
                    stride = diffs[0] if diffs else 0
                    if mode == "delta":
                        seg += ["2", f"0x{a[0] if n else 0:x}", *map(str, diffs)]
                        seg += ["0"] if delta_count == "n" and n else []
                    elif (
                        mode == "auto"
                        and n >= 1
                        and contiguous(m)
                        and -(2**31) <= stride < 2**31
                        and all(x == stride for x in diffs)
                    ):
                        seg += ["1", f"0x{a[0]:x}", str(stride)]
                    else:
                        seg += ["0", *(f"0x{x:x}" for x in a)]
                if immediate:
                    seg.append("0")
                out.append(" ".join(seg) + "\n")
            w += 1
        out.append("\n#END_TB\n")
    return "".join(out)


@SETTINGS
@given(
    kt=kernels(),
    mode=st.sampled_from(["auto", "list", "delta"]),
    delta_count=st.sampled_from(["n-1", "n"]),
    immediate=st.booleans(),
)
def test_writer_matches_slow_formatter(
    tmp_path_factory: pytest.TempPathFactory,
    kt: KernelTrace,
    mode: str,
    delta_count: str,
    immediate: bool,
) -> None:
    p = write_kernel(
        kt,
        tmp_path_factory.mktemp("w") / "k.traceg",
        address_mode=mode,
        delta_count=delta_count,
        immediate=immediate,
    )  # type: ignore[arg-type]
    text = p.read_text()
    body = text[text.index("#traces format") :].split("\n", 2)[2]
    assert body == _slow_body(kt, mode, delta_count, immediate)


def test_writer_batches_at_block_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mdm.traces.accelsim as acc

    kt, _ = _small_trace_text(tmp_path, 1)
    whole = write_kernel(kt, tmp_path / "a.traceg").read_text()
    monkeypatch.setattr(acc, "WRITE_BATCH_BYTES", 1)  # every block is its own batch
    assert write_kernel(kt, tmp_path / "b.traceg").read_text() == whole


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=40), st.booleans())
def test_popcount32_counts_the_set_bits(values: list[int], table: bool) -> None:
    """Active lanes of a mask: numpy's bitwise_count, or the byte table without it."""
    from mdm.traces import model

    x = np.array(values, dtype=np.uint32)
    saved = model._BITWISE_COUNT
    try:
        if table:
            model._BITWISE_COUNT = None
        got = model.popcount32(x)
    finally:
        model._BITWISE_COUNT = saved
    assert got.dtype == np.int32
    assert got.tolist() == [bin(v).count("1") for v in values]
