"""Accel-Sim trace reader and writer (``kernelslist.g`` + ``.traceg[.xz|.gz]``).

Reading streams the (decompressed) text in chunks of :data:`CHUNK_BYTES` cut at line
boundaries and parses them with the numba kernel of :mod:`mdm.traces._parse`, so
peak memory follows the columnar result, not the text. Every malformed, truncated
or inconsistent input raises :class:`~mdm.errors.TraceFormatError` naming the file,
the line and what was expected; a half-read trace is never returned.

Strictness beyond Accel-Sim's own parser (documented choices):

* required header fields: kernel name, kernel id, grid dim, block dim, shmem, nregs,
  binary version and accelsim tracer version (3, 4 or 5); values are kept as the
  file says (e.g. ``-nregs = 21955``), other ``-key = value`` lines go verbatim to
  :attr:`KernelTrace.header`;
* every thread block of the grid appears exactly once, each with exactly
  ``ceil(threads/32)`` distinct warps, and each warp with exactly ``insts = N``
  instruction lines;
* ``mem_width`` is kept as written in the trace (Accel-Sim re-derives it from the
  opcode at simulation time); the trailing immediate is checked but not stored;
* tracer versions below 3 (thread-block ids on every line) and the Hopper TMA/bulk
  copy address format (``UTMA*``/``UBLK*`` with a memory width) are rejected with an
  error rather than misread.
"""

from __future__ import annotations

import gzip
import lzma
import re
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal, cast

import numpy as np

from mdm._memory import too_large
from mdm.errors import MdmError, TraceFormatError
from mdm.traces import _format as F
from mdm.traces import _parse as P
from mdm.traces.model import (
    MAX_DST,
    MAX_SRC,
    WARP_SIZE,
    AnyApp,
    AppTrace,
    InstrClass,
    KernelTrace,
    LazyApp,
    Memcpy,
    popcount32,
)
from mdm.traces.opcodes import classify_one, family

#: Bytes of text parsed per numba call.
CHUNK_BYTES = 16 << 20
TRACE_SUFFIXES = (".traceg", ".traceg.xz", ".traceg.gz")
TRACER_VERSIONS = (3, 4, 5)
#: Hopper bulk-copy opcodes whose address section has its own format (not supported).
TMA_OPCODES = frozenset({"UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UBLKCP", "UBLKPF", "UBLKRED"})
_FORMAT_LINE = (
    "#traces format = [line_num] PC mask dest_num [reg_dests] opcode src_num [reg_srcs] "
    "mem_width [adrrescompress?] [mem_addresses] immediate"
)
_CORE_KEYS = (
    "kernel name",
    "kernel id",
    "grid dim",
    "block dim",
    "shmem",
    "nregs",
    "binary version",
)
_HEADER_RE = re.compile(r"^-\s*([^=]*?)\s*=\s?(.*)$")
_DIM_RE = re.compile(r"^\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*$")


# --------------------------------------------------------------------- opening
@contextmanager
def _open_binary(path: Path) -> Iterator[tuple[IO[bytes], Callable[[], int]]]:
    """The file's text as bytes (decompressed), and how many of the file's own bytes
    have been read so far (compressed ones for ``.xz`` and ``.gz``)."""
    with open(path, "rb") as raw:
        f: IO[bytes] = raw
        if path.name.endswith(".xz"):
            f = cast(IO[bytes], lzma.LZMAFile(raw))
        elif path.name.endswith(".gz"):
            f = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
        try:
            yield f, raw.tell
        finally:
            if f is not raw:
                f.close()


#: Bytes read from a kernel's file before its size is projected (a smaller start, the
#: header and the first blocks, says too little about the rest)
_PROJECT_AFTER_BYTES = 1 << 20


def _check_memory(path: Path, name: str, used: int, read: int, size: int) -> None:
    """MdmError when the kernel's arrays, ``used`` bytes after ``read`` of the file's
    ``size`` bytes, would outgrow the memory available once read and predicted (about
    twice the arrays; :func:`mdm._memory.too_large`)."""
    if read < min(_PROJECT_AFTER_BYTES, size) or read <= 0:
        return
    basis = f"projected from the first {100 * read / size:.2g} % of the file"
    message = too_large(f"{path}: kernel {name!r}", used, used * size / read, basis)
    if message is not None:
        raise MdmError(message)


def _chunks(f: IO[bytes], first: bytes, size: int, path: Path) -> Iterator[bytes | memoryview]:
    """Yield pieces of text that each end with a newline (the last one gets one added
    when the file's last line has none: an added empty line would shift the line named
    by the end-of-file errors)."""
    tail = first
    while True:
        try:
            block = f.read(size)
        except (lzma.LZMAError, zlib.error, EOFError, OSError) as exc:
            raise TraceFormatError(path, None, f"cannot decompress: {exc}") from exc
        if not block:
            break
        data = tail + block
        cut = data.rfind(b"\n")
        if cut < 0:
            tail = data
            continue
        yield memoryview(data)[: cut + 1]
        tail = data[cut + 1 :]
    if tail:
        yield tail if tail.endswith(b"\n") else tail + b"\n"


# --------------------------------------------------------------------- header
#: CUDA's largest grid and block dimensions (x, y, z)
_GRID_MAX = (2**31 - 1, 65535, 65535)
_BLOCK_MAX = (1024, 1024, 64)


def _int_field(path: Path, lineno: int, key: str, value: str) -> int:
    """A header integer: decimal (leading zeros allowed) or ``0x`` hexadecimal (the
    tracer's base addresses)."""
    v = value.strip()
    try:
        return int(v, 16) if v[:2].lower() == "0x" else int(v, 10)
    except ValueError:
        raise TraceFormatError(
            path, lineno, f"header '-{key} = ...' expected an integer, got {v!r}"
        ) from None


def _dim_field(path: Path, lineno: int, key: str, value: str) -> tuple[int, int, int]:
    m = _DIM_RE.match(value.strip())
    if not m:
        raise TraceFormatError(
            path, lineno, f"header '-{key} = ...' expected '(x,y,z)', got {value.strip()!r}"
        )
    dims = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if min(dims) < 1:
        raise TraceFormatError(path, lineno, f"header '-{key}' expected positive dims")
    limit = _GRID_MAX if key == "grid dim" else _BLOCK_MAX
    if any(d > lim for d, lim in zip(dims, limit, strict=True)):
        raise TraceFormatError(
            path, lineno, f"header '-{key}' expected at most {limit} (CUDA's limits), got {dims}"
        )
    return dims


def _split_header(path: Path, text: bytes) -> tuple[dict[str, tuple[int, str]], int, int]:
    """Parse the ``-key = value`` lines; returns (fields, body byte offset, body line)."""
    fields: dict[str, tuple[int, str]] = {}
    pos = 0
    lineno = 1
    n = len(text)
    while pos < n:
        end = text.find(b"\n", pos)
        if end < 0:
            end = n
        raw = text[pos:end]
        s = raw.strip()
        if s.startswith(b"-"):
            try:
                line = raw.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError:
                raise TraceFormatError(path, lineno, "header line is not UTF-8 text") from None
            m = _HEADER_RE.match(line.strip())
            if not m:
                raise TraceFormatError(path, lineno, "expected a header line '-key = value'")
            key = " ".join(m.group(1).split())
            if key in fields:
                raise TraceFormatError(path, lineno, f"header field '-{key}' given twice")
            fields[key] = (lineno, m.group(2))
        elif s:
            return fields, pos, lineno
        pos = end + 1
        lineno += 1
    return fields, n, lineno


@dataclass(frozen=True)
class _Header:
    """The parsed ``-key = value`` header of one kernel trace."""

    name: str
    kernel_id: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shmem_bytes: int
    nregs: int
    binary_version: int
    tracer_version: int
    lineinfo: int
    block_line: int
    extra: dict[str, str]


def _kernel_header(path: Path, fields: dict[str, tuple[int, str]], body_line: int) -> _Header:
    for key in (*_CORE_KEYS, "accelsim tracer version"):
        if key not in fields:
            raise TraceFormatError(
                path, body_line, f"missing header field '-{key} = ...' before the trace body"
            )

    def num(key: str) -> int:
        return _int_field(path, fields[key][0], key, fields[key][1])

    def nonneg(key: str) -> int:
        v = num(key)
        if v < 0:
            raise TraceFormatError(path, fields[key][0], f"header '-{key}' expected >= 0, got {v}")
        return v

    ln, name = fields["kernel name"]
    if not name.strip():
        raise TraceFormatError(path, ln, "header '-kernel name' expected a name")
    tv = num("accelsim tracer version")
    if tv not in TRACER_VERSIONS:
        raise TraceFormatError(
            path,
            fields["accelsim tracer version"][0],
            f"expected accelsim tracer version 3, 4 or 5, got {tv}",
        )
    lineinfo = num("enable lineinfo") if "enable lineinfo" in fields else 0
    if lineinfo not in (0, 1):
        raise TraceFormatError(
            path, fields["enable lineinfo"][0], "header '-enable lineinfo' expected 0 or 1"
        )
    return _Header(
        name=name.rstrip("\r"),
        kernel_id=num("kernel id"),
        grid=_dim_field(path, fields["grid dim"][0], "grid dim", fields["grid dim"][1]),
        block=_dim_field(path, fields["block dim"][0], "block dim", fields["block dim"][1]),
        shmem_bytes=nonneg("shmem"),
        nregs=nonneg("nregs"),
        binary_version=num("binary version"),
        tracer_version=tv,
        lineinfo=lineinfo,
        block_line=fields["block dim"][0],
        extra={
            k: v.rstrip("\r")
            for k, (_, v) in fields.items()
            if k not in _CORE_KEYS and k != "enable lineinfo"
        },
    )


# --------------------------------------------------------------------- reader
class _Out:
    """Growable output arrays of one kernel."""

    #: arrays with a row per instruction (``addr_ptr`` has one more) and per warp
    INST = ("pc", "opcode", "mask", "dst", "src", "mem_width", "line")
    WARP = ("warp_start", "warp_block", "warp_id")

    def __init__(self, n_inst: int, n_addr: int, n_warp: int) -> None:
        self.pc = np.empty(n_inst, np.uint32)
        self.opcode = np.empty(n_inst, np.uint16)
        self.mask = np.empty(n_inst, np.uint32)
        self.dst = np.empty((n_inst, MAX_DST), np.int16)
        self.src = np.empty((n_inst, MAX_SRC), np.int16)
        self.mem_width = np.empty(n_inst, np.uint8)
        self.line = np.empty(n_inst, np.int32)
        self.addr_ptr = np.zeros(n_inst + 1, np.int64)
        self.addrs = np.empty(n_addr, np.uint64)
        self.warp_start = np.empty(n_warp, np.int64)
        self.warp_block = np.empty(n_warp, np.int32)
        self.warp_id = np.empty(n_warp, np.int32)

    @staticmethod
    def _grow(a: np.ndarray, used: int, extra: int = 0) -> np.ndarray:
        # new pages stay untouched (np.empty) until filled: RSS follows the used part
        new = np.empty((max(2 * a.shape[0], 1024) + extra, *a.shape[1:]), a.dtype)
        new[:used] = a[:used]
        return new

    def used_bytes(self, state: np.ndarray) -> int:
        """Bytes of the arrays' filled parts (parser ``state``'s counts)."""
        per_inst = sum(
            getattr(self, k).itemsize * int(np.prod(getattr(self, k).shape[1:]))
            for k in (*self.INST, "addr_ptr")
        )
        per_warp = sum(getattr(self, k).itemsize for k in self.WARP)
        return (
            int(state[P.S_NINST]) * per_inst
            + int(state[P.S_NADDR]) * self.addrs.itemsize
            + int(state[P.S_NWARP]) * per_warp
        )

    def trim(self, n: int, nw: int, na: int) -> None:
        """Shrink every array to its used length, in place."""
        for name in self.INST:
            a = getattr(self, name)
            a.resize((n, *a.shape[1:]), refcheck=False)
        self.addr_ptr.resize(n + 1, refcheck=False)
        self.addrs.resize(na, refcheck=False)
        for name in self.WARP:
            getattr(self, name).resize(nw, refcheck=False)

    def grow_inst(self, n: int) -> None:
        for name in self.INST:
            setattr(self, name, self._grow(getattr(self, name), n))
        self.addr_ptr = self._grow(self.addr_ptr, n + 1, 1)

    def grow_addr(self, n: int) -> None:
        self.addrs = self._grow(self.addrs, n, 64)

    def grow_warp(self, n: int) -> None:
        for name in self.WARP:
            setattr(self, name, self._grow(getattr(self, name), n))


class _OpcodeTable:
    """Opcode strings <-> ids, mirrored in the numba hash table."""

    def __init__(self, capacity: int = 4096) -> None:
        self.tab_id = np.full(capacity, -1, np.int32)
        self.tab_hash = np.zeros(capacity, np.uint64)
        self.op_bytes = np.zeros((capacity // 2, P.OPC_MAXLEN), np.uint8)
        self.op_len = np.zeros(capacity // 2, np.int32)
        self.reject = np.zeros(capacity // 2, np.uint8)
        self.names: list[str] = []

    def add(self, buf: np.ndarray, s: int, e: int) -> str:
        if len(self.names) >= self.op_len.shape[0] - 1:
            raise OverflowError("more than 2047 distinct opcodes in one kernel")
        name = bytes(buf[s:e]).decode("ascii", errors="replace")
        self.reject[len(self.names)] = name.split(".", 1)[0] in TMA_OPCODES
        P.table_insert(
            self.tab_id, self.tab_hash, self.op_bytes, self.op_len, buf, s, e, len(self.names)
        )
        self.names.append(name)
        return name


def read_kernel(
    path: str | Path, *, allow_unknown: bool = False, chunk_bytes: int = CHUNK_BYTES
) -> KernelTrace:
    """Read one ``.traceg`` / ``.traceg.xz`` / ``.traceg.gz`` file into a :class:`KernelTrace`.

    An opcode missing from the SASS table of the kernel's binary version raises
    :class:`TraceFormatError` unless ``allow_unknown`` (then it is ``UNKNOWN``).
    """
    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(path, None, "kernel trace file not found")
    size = path.stat().st_size
    with _open_binary(path) as (f, read_so_far):
        try:
            first = f.read(max(chunk_bytes, 1 << 16))
        except (lzma.LZMAError, zlib.error, EOFError, OSError) as exc:
            raise TraceFormatError(path, None, f"cannot decompress: {exc}") from None
        first = first.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark (some editors)
        fields, body_off, body_line = _split_header(path, first)
        hdr = _kernel_header(path, fields, body_line)
        grid, block = hdr.grid, hdr.block
        n_blocks = grid[0] * grid[1] * grid[2]
        threads = block[0] * block[1] * block[2]
        wpb = -(-threads // WARP_SIZE)
        if wpb > 63:
            raise TraceFormatError(path, hdr.block_line, "block dim expected at most 2016 threads")
        binary_version = hdr.binary_version
        fam = family(binary_version)

        state = np.zeros(P.N_STATE, np.int64)
        state[P.S_HAS_IMM] = -1
        block_seen = np.zeros(n_blocks, np.uint8)
        # capacity guess: untouched np.empty pages cost no RSS, so be generous
        text_bytes = path.stat().st_size if not path.name.endswith((".xz", ".gz")) else 0
        est = max(len(first) // 40, text_bytes // 24, 1024)
        out = _Out(est, est * 4, max(est // 16, 64))
        ops = _OpcodeTable()
        op_class: list[int] = []
        body = first[body_off:]
        del first
        buf = chunk = None
        for chunk in _chunks(f, body, chunk_bytes, path):
            buf = np.frombuffer(chunk, dtype=np.uint8)
            start = 0
            while True:
                status, off, a, b = P.parse_chunk(
                    buf, start, state, hdr.lineinfo,
                    grid[0], grid[1], grid[2], wpb, block_seen,
                    ops.tab_id, ops.tab_hash, ops.op_bytes, ops.op_len, ops.reject,
                    out.pc, out.opcode, out.mask, out.dst, out.src, out.mem_width,
                    out.line, out.addr_ptr, out.addrs,
                    out.warp_start, out.warp_block, out.warp_id,
                )  # fmt: skip
                if status == P.OK:
                    _check_memory(path, hdr.name, out.used_bytes(state), read_so_far(), size)
                    break
                start = off
                if status == P.GROW_INST:
                    out.grow_inst(int(state[P.S_NINST]))
                elif status == P.GROW_ADDR:
                    out.grow_addr(int(state[P.S_NADDR]))
                elif status == P.GROW_WARP:
                    out.grow_warp(int(state[P.S_NWARP]))
                elif status == P.NEW_OPCODE:
                    name = ops.add(buf, a, b)
                    cls = classify_one(name, fam)
                    if cls is None:
                        if not allow_unknown:
                            raise TraceFormatError(
                                path,
                                body_line + int(state[P.S_LINES]),
                                f"unknown SASS opcode {name!r} for binary version "
                                f"{binary_version} ({fam} table); expected a documented "
                                "opcode (--allow-unknown, or allow_unknown=True, counts it "
                                "as UNKNOWN)",
                            )
                        cls = InstrClass.UNKNOWN
                    op_class.append(int(cls))
                else:
                    line = body_line + int(state[P.S_LINES])
                    msg = P.ERRORS.get(status, f"parse error {status}")
                    if status == 42:
                        msg += f" ({int(state[P.S_DECL])} declared, {int(state[P.S_DECL] - state[P.S_REMAIN])} found)"
                    raise TraceFormatError(path, line, msg)
        last_line = body_line + int(state[P.S_LINES]) - 1
        if state[P.S_IN_TB]:
            raise TraceFormatError(
                path, last_line, "truncated trace: expected #END_TB before the end of the file"
            )
        if state[P.S_NTB] != n_blocks:
            raise TraceFormatError(
                path,
                last_line,
                f"expected {n_blocks} thread blocks (grid dim {grid}), found {int(state[P.S_NTB])}",
            )
    n = int(state[P.S_NINST])
    nw = int(state[P.S_NWARP])
    na = int(state[P.S_NADDR])
    buf = chunk = None  # release the last text chunk before trimming
    out.trim(n, nw, na)
    warp_ptr = np.empty(nw + 1, np.int64)
    warp_ptr[:nw] = out.warp_start
    warp_ptr[nw] = n
    classes = np.asarray(op_class, dtype=np.uint8)
    kt = KernelTrace(
        name=hdr.name,
        kernel_id=hdr.kernel_id,
        grid=grid,
        block=block,
        nregs=hdr.nregs,
        shmem_bytes=hdr.shmem_bytes,
        binary_version=binary_version,
        warp_ptr=warp_ptr,
        warp_block=out.warp_block,
        warp_id=out.warp_id,
        pc=out.pc,
        opcode=out.opcode,
        iclass=classes[out.opcode] if n else np.empty(0, np.uint8),
        mask=out.mask,
        dst=out.dst,
        src=out.src,
        mem_width=out.mem_width,
        line=out.line,
        addr_ptr=out.addr_ptr,
        addrs=out.addrs,
        opcodes=tuple(ops.names),
        header=dict(hdr.extra),
    )
    return kt


def _resolve_kernel_file(listfile: Path, name: str, lineno: int) -> Path:
    cand = listfile.parent / name
    if cand.is_file():
        return cand
    for suffix in (".xz", ".gz"):
        alt = cand.with_name(cand.name + suffix)
        if alt.is_file():
            return alt
    raise TraceFormatError(
        listfile,
        lineno,
        f"kernel trace {name!r} listed but not found (nor .xz/.gz) in {listfile.parent}",
    )


def kernelslist_path(path: str | Path) -> Path:
    """``kernelslist.g`` of ``path`` (the file itself or a directory holding it)."""
    p = Path(path)
    if p.is_dir():
        p = p / "kernelslist.g"
    if not p.is_file():
        raise TraceFormatError(p, None, "kernelslist.g not found")
    return p


def _read_listing(path: str | Path) -> tuple[Path, list[Memcpy | Path]]:
    """The ``kernelslist.g`` of ``path`` and its commands: memcpys, and kernel trace
    files resolved (a missing file fails here, before any kernel is read)."""
    listfile = kernelslist_path(path)
    entries: list[Memcpy | Path] = []
    try:
        text = listfile.read_text(encoding="utf-8-sig")  # a byte-order mark is dropped
    except UnicodeDecodeError:
        raise TraceFormatError(listfile, None, "kernelslist.g is not UTF-8 text") from None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("MemcpyHtoD"):
            parts = [s.strip() for s in line.split(",")]
            try:
                if len(parts) != 3:
                    raise ValueError
                nbytes = int(parts[2], 10)
                if nbytes < 0:
                    raise ValueError
                entries.append(Memcpy(addr=int(parts[1], 16), nbytes=nbytes))
            except ValueError:
                raise TraceFormatError(
                    listfile,
                    lineno,
                    "expected 'MemcpyHtoD,0x<hex address>,<decimal bytes >= 0>' within the "
                    "64-bit address space",
                ) from None
        elif line.startswith("MemcpyDtoH"):
            continue
        elif line.startswith("kernel") or any(line.endswith(s) for s in TRACE_SUFFIXES):
            entries.append(_resolve_kernel_file(listfile, line, lineno))
        else:
            raise TraceFormatError(
                listfile, lineno, "expected a kernel trace file name or 'MemcpyHtoD,addr,bytes'"
            )
    if not any(isinstance(e, Path) for e in entries):
        raise TraceFormatError(listfile, None, "expected at least one kernel trace file name")
    return listfile, entries


def _read_commands(
    entries: list[Memcpy | Path], allow_unknown: bool
) -> Iterator[KernelTrace | Memcpy]:
    for e in entries:
        # the kernel is yielded without a local name: nothing here keeps it alive
        yield e if isinstance(e, Memcpy) else read_kernel(e, allow_unknown=allow_unknown)


def read_app(path: str | Path, *, allow_unknown: bool = False) -> AppTrace:
    """Read an application: a directory with ``kernelslist.g`` or that file itself.

    Lines of ``kernelslist.g``: kernel trace file names (relative to the list; a
    missing ``x.traceg`` falls back to ``x.traceg.xz`` / ``.gz``), ``MemcpyHtoD,addr,bytes``
    copies, and ``MemcpyDtoH,...`` lines, which are ignored as Accel-Sim does.
    """
    return lazy_app(path, allow_unknown=allow_unknown).load()


def lazy_app(path: str | Path, *, allow_unknown: bool = False) -> LazyApp:
    """:func:`read_app` one kernel at a time (:class:`~mdm.traces.model.LazyApp`): the
    listing is read and its files resolved now, each kernel file when a pass reaches it."""
    listfile, entries = _read_listing(path)
    return LazyApp(
        name=listfile.parent.name,
        n_kernels=sum(not isinstance(e, Memcpy) for e in entries),
        commands_factory=lambda: _read_commands(entries, allow_unknown),
        data_bytes=sum(e.stat().st_size for e in entries if not isinstance(e, Memcpy)),
    )


# --------------------------------------------------------------------- writer
AddressMode = Literal["auto", "list", "delta"]


_MODE_IDS = {"auto": 0, "list": 1, "delta": 2}
#: Text bytes formatted per numba call when writing.
WRITE_BATCH_BYTES = 8 << 20


def _check_writable(kt: KernelTrace) -> None:
    """Validate what the text format needs (the numba formatter assumes it)."""
    kt.validate()
    if kt.n_warps > 1:
        blocks = kt.warp_block
        starts = blocks[np.r_[True, blocks[1:] != blocks[:-1]]]
        if np.unique(starts).shape[0] != starts.shape[0]:
            raise ValueError("warps of one thread block are not consecutive")
    counts = np.diff(kt.addr_ptr)
    need = np.where(kt.mem_width > 0, popcount32(kt.mask), 0)
    bad = np.flatnonzero(counts != need)
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"instruction {i}: {int(counts[i])} addresses, expected {int(need[i])} "
            f"(one per active lane when mem_width > 0, none otherwise)"
        )
    for op in kt.opcodes:
        if not op or len(op) > P.OPC_MAXLEN or not op.isascii() or any(c.isspace() for c in op):
            raise ValueError(f"opcode {op!r} cannot be written (ASCII, no spaces, <= 64 chars)")
    if (kt.dst < -1).any() or (kt.src < -1).any():
        raise ValueError("register numbers must be >= 0 (-1 for padding)")


def _write_body(
    kt: KernelTrace,
    out: IO[bytes],
    address_mode: AddressMode,
    delta_count: Literal["n-1", "n"],
    immediate: bool,
    lineinfo: bool,
) -> None:
    nw = kt.n_warps
    if nw == 0:
        return
    names = [op.encode("ascii") for op in kt.opcodes]
    op_bytes = np.zeros((max(len(names), 1), P.OPC_MAXLEN), np.uint8)
    op_len = np.zeros(max(len(names), 1), np.int32)
    for k, nb in enumerate(names):
        op_bytes[k, : len(nb)] = np.frombuffer(nb, np.uint8)
        op_len[k] = len(nb)
    bound = F.bytes_bound(np.diff(kt.addr_ptr), kt.warp_ptr)
    cum = np.zeros(nw + 1, np.int64)
    np.cumsum(bound, out=cum[1:])
    starts = np.flatnonzero(np.r_[True, kt.warp_block[1:] != kt.warp_block[:-1]])
    starts = np.append(starts, nw)
    w = 0
    while w < nw:
        j = int(np.searchsorted(cum, cum[w] + WRITE_BATCH_BYTES, side="right")) - 1
        k = int(np.searchsorted(starts, j, side="right")) - 1  # last block start <= j
        cut = int(starts[k]) if starts[k] > w else int(starts[np.searchsorted(starts, w, "right")])
        buf = np.empty(int(cum[cut] - cum[w]), np.uint8)
        n = F.format_warps(
            w, cut, kt.grid[0], kt.grid[1], kt.warp_ptr, kt.warp_block, kt.warp_id,
            kt.pc, kt.mask, kt.dst, kt.src, kt.opcode, op_bytes, op_len, kt.mem_width,
            kt.line, kt.addr_ptr, kt.addrs, _MODE_IDS[address_mode], delta_count == "n",
            immediate, lineinfo, buf,
        )  # fmt: skip
        out.write(buf[:n].data)
        w = cut


def write_kernel(
    kt: KernelTrace,
    path: str | Path,
    *,
    address_mode: AddressMode = "auto",
    delta_count: Literal["n-1", "n"] = "n-1",
    immediate: bool = False,
) -> Path:
    """Write one kernel as an Accel-Sim ``.traceg`` (``.xz``/``.gz`` by suffix of ``path``).

    ``address_mode``: ``"auto"`` writes mode 1 (base, stride) for contiguous active
    lanes with a constant stride and mode 0 (list) otherwise; ``"list"`` always mode 0;
    ``"delta"`` always mode 2 with ``delta_count`` deltas. ``immediate`` appends a
    trailing immediate field (0) to every instruction line, as tracer version 5 does.
    Warps of one thread block must be consecutive in ``kt``.
    """
    path = Path(path)
    if address_mode not in _MODE_IDS or delta_count not in ("n-1", "n"):
        raise ValueError(f"bad address_mode {address_mode!r} / delta_count {delta_count!r}")
    _check_writable(kt)
    lineinfo = bool(kt.n_instructions and np.any(kt.line != -1))
    hdr = [
        f"-kernel name = {kt.name}",
        f"-kernel id = {kt.kernel_id}",
        "-grid dim = ({},{},{})".format(*kt.grid),
        "-block dim = ({},{},{})".format(*kt.block),
        f"-shmem = {kt.shmem_bytes}",
        f"-nregs = {kt.nregs}",
        f"-binary version = {kt.binary_version}",
    ]
    extra = dict(kt.header)
    extra.setdefault("accelsim tracer version", "5")
    hdr += [f"-{k} = {v}" for k, v in extra.items()]
    hdr.append(f"-enable lineinfo = {int(lineinfo)}")
    if path.name.endswith(".xz"):
        raw: IO[bytes] = lzma.open(path, "wb", preset=1)
    elif path.name.endswith(".gz"):
        raw = cast(IO[bytes], gzip.open(path, "wb", compresslevel=3))
    else:
        raw = open(path, "wb")
    with raw as out:
        out.write(("\n".join(hdr) + "\n\n" + _FORMAT_LINE + "\n\n").encode("utf-8"))
        _write_body(kt, out, address_mode, delta_count, immediate, lineinfo)
    return path


def write_app(
    app: AnyApp,
    outdir: str | Path,
    compress: Literal["xz", "gz"] | None = None,
    **kwargs: object,
) -> Path:
    """Write ``app`` as ``outdir/kernelslist.g`` plus one ``kernel-<id>.traceg[.xz|.gz]`` each.

    Extra keyword arguments go to :func:`write_kernel`. Returns the list file path. A
    :class:`~mdm.traces.model.LazyApp` is written one kernel at a time.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    suffix = ".traceg" + (f".{compress}" if compress else "")
    if compress not in (None, "xz", "gz"):
        raise ValueError(f"compress must be None, 'xz' or 'gz', not {compress!r}")
    lines: list[str] = []
    used: set[str] = set()
    idx = 0
    for cmd in app.iter_commands():
        if isinstance(cmd, Memcpy):
            lines.append(f"MemcpyHtoD,0x{cmd.addr:016x},{cmd.nbytes}")
        else:
            name = f"kernel-{cmd.kernel_id}{suffix}"
            if name in used:
                name = f"kernel-{cmd.kernel_id}-{idx}{suffix}"
            used.add(name)
            write_kernel(cmd, outdir / name, **kwargs)  # type: ignore[arg-type]
            lines.append(name)
        idx += 1
        del cmd  # not kept alive while the next kernel is read
    listfile = outdir / "kernelslist.g"
    listfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return listfile
