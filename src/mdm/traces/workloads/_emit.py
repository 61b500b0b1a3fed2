"""Vectorised SASS trace builder shared by the synthetic workloads.

A kernel is emitted *one static instruction at a time for all warps at once*: each
:meth:`Emitter.op` call carries a PC, an opcode, registers and a per-warp active mask
(plus, for memory instructions, a ``(warps, 32)`` address matrix). Warps whose mask is
empty for that step do not execute it. :meth:`Emitter.finish` interleaves the steps
into the warp-major CSR layout of :class:`~mdm.traces.model.KernelTrace` with one
stable sort, so the cost is a few NumPy passes per static instruction, never a Python
loop per warp instruction.

Conventions (they imitate the Pascal reference traces under
``../shared/reference/traces/sm61``):

* global arrays live at ``0x7f4000000000 + k * spacing`` (``spacing`` = 1 GiB or the
  next GiB multiple that holds the largest array); shared-memory addresses are offsets
  in the block's shared window starting at ``0x0``;
* lanes that leave a loop early execute ``EXIT`` (kernel end) or ``SYNC`` (reconvergence
  point) with their mask, right after the ``BRA`` of the lanes that continue;
* lanes that fail an ``if (i >= n) return`` bounds check execute the kernel's final
  ``EXIT`` right after the ``ISETP`` of the check (Accel-Sim traces record only the
  executed instructions, so the skipped body simply does not appear for them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TypeVar

import numpy as np

from mdm._memory import too_large
from mdm.traces.model import MAX_DST, MAX_SRC, WARP_SIZE, InstrClass, KernelTrace

BINARY_VERSION = 61
GLOBAL_BASE = 0x7F4000000000
_GIB = 1 << 30
_Num = TypeVar("_Num", int, float)  # check_param returns what it is given
LANE_IDS = np.arange(WARP_SIZE, dtype=np.int64)
_LANE_BITS = np.left_shift(np.uint64(1), np.arange(WARP_SIZE, dtype=np.uint64))

C = InstrClass
#: Classes of the Pascal opcodes the generators use (same choices as
#: ``mdm.traces.opcodes``: special-register reads are OTHER, predicates/selects INT).
_CLASS_OF_BASE: dict[str, InstrClass] = {
    "MOV": C.INT,
    "XMAD": C.INT,
    "SHL": C.INT,
    "SHR": C.INT,
    "IADD": C.INT,
    "ISCADD": C.INT,
    "ISETP": C.INT,
    "SEL": C.INT,
    "LOP": C.INT,
    "S2R": C.OTHER,
    "FADD": C.FP32,
    "FMUL": C.FP32,
    "FFMA": C.FP32,
    "FSETP": C.FP32,
    "FSEL": C.FP32,
    "LDG": C.LD_GLOBAL,
    "STG": C.ST_GLOBAL,
    "LDS": C.LD_SHARED,
    "STS": C.ST_SHARED,
    "BRA": C.BRANCH,
    "EXIT": C.BRANCH,
    "SSY": C.BRANCH,
    "SYNC": C.BRANCH,
    "BAR": C.BARRIER,
}


def opcode_class(opcode: str) -> InstrClass:
    """Instruction class of one generator opcode (base mnemonic before the first dot)."""
    return _CLASS_OF_BASE[opcode.split(".", 1)[0]]


def array_bases(sizes_bytes: Sequence[int]) -> list[int]:
    """Base addresses of consecutive global arrays, 1 GiB apart (or more if needed)."""
    biggest = max([1, *sizes_bytes])
    spacing = -(-biggest // _GIB) * _GIB
    return [GLOBAL_BASE + k * spacing for k in range(len(sizes_bytes))]


class Active:
    """A per-lane activity matrix ``bool[warps, 32]`` and its packed ``uint32`` masks."""

    __slots__ = ("lanes", "mask")

    def __init__(self, lanes: np.ndarray) -> None:
        self.lanes = np.ascontiguousarray(lanes, dtype=bool)
        self.mask = (self.lanes.astype(np.uint64) * _LANE_BITS).sum(axis=1).astype(np.uint32)

    def __and__(self, other: Active | np.ndarray) -> Active:
        lanes = other.lanes if isinstance(other, Active) else other
        return Active(self.lanes & lanes)

    def minus(self, other: Active | np.ndarray) -> Active:
        """Lanes active here but not in ``other``."""
        lanes = other.lanes if isinstance(other, Active) else other
        return Active(self.lanes & ~lanes)

    def any(self) -> bool:
        return bool(self.mask.any())


class Emitter:
    """Collects static-instruction steps for ``n_warps`` warps and builds a KernelTrace."""

    def __init__(self, n_warps: int, opcodes: dict[str, int] | None = None) -> None:
        self.n_warps = n_warps
        #: opcode string -> id; shared between the chunks of one kernel
        self._opcodes: dict[str, int] = {} if opcodes is None else opcodes
        self._static: list[tuple[int, int, int, tuple[int, ...], tuple[int, ...], int]] = []
        self._rows: list[np.ndarray] = []
        self._masks: list[np.ndarray] = []
        self._naddr: list[np.ndarray] = []
        self._addrs: list[np.ndarray] = []

    def op(
        self,
        pc: int,
        opcode: str,
        dst: Sequence[int] = (),
        src: Sequence[int] = (),
        act: Active | None = None,
        addrs: np.ndarray | None = None,
        width: int = 0,
    ) -> None:
        """Emit one static instruction for every warp with an active lane in ``act``.

        ``addrs`` (``uint64``, broadcastable to ``(warps, 32)``) gives each lane's address
        for memory instructions; ``width`` is the per-lane access size in bytes.
        """
        if act is None:
            raise ValueError("op() needs an active-lane set")
        if len(dst) > MAX_DST or len(src) > MAX_SRC:
            raise ValueError(f"{opcode}: too many registers")
        cls = opcode_class(opcode)
        rows = np.flatnonzero(act.mask)
        if rows.size == 0:
            return
        oid = self._opcodes.setdefault(opcode, len(self._opcodes))
        self._static.append((pc, oid, int(cls), tuple(dst), tuple(src), width))
        self._rows.append(rows)
        self._masks.append(act.mask[rows])
        if addrs is not None:
            full = np.broadcast_to(np.asarray(addrs, dtype=np.uint64), (self.n_warps, WARP_SIZE))
            lanes = act.lanes[rows]
            self._addrs.append(full[rows][lanes])
            self._naddr.append(lanes.sum(axis=1))
        else:
            self._naddr.append(np.zeros(rows.size, dtype=np.int64))

    def finish(self, g: Geometry) -> dict[str, np.ndarray]:
        """Interleave the steps warp by warp (program order): the per-warp and
        per-instruction arrays of the warps of ``g`` (a block range of the launch)."""
        n_steps = len(self._static)
        counts = np.array([r.size for r in self._rows], dtype=np.int64)
        step = np.repeat(np.arange(n_steps, dtype=np.int64), counts)
        warp = np.concatenate(self._rows) if n_steps else np.zeros(0, np.int64)
        order = np.argsort(warp, kind="stable")
        step = step[order]

        pcs = np.array([s[0] for s in self._static], dtype=np.uint32)
        oids = np.array([s[1] for s in self._static], dtype=np.uint16)
        cls = np.array([s[2] for s in self._static], dtype=np.uint8)
        widths = np.array([s[5] for s in self._static], dtype=np.uint8)
        dst = np.full((max(n_steps, 1), MAX_DST), -1, dtype=np.int16)
        src = np.full((max(n_steps, 1), MAX_SRC), -1, dtype=np.int16)
        for k, s in enumerate(self._static):
            dst[k, : len(s[3])] = s[3]
            src[k, : len(s[4])] = s[4]

        naddr = np.concatenate(self._naddr).astype(np.int64) if n_steps else np.zeros(0, np.int64)
        flat = np.concatenate(self._addrs) if self._addrs else np.zeros(0, np.uint64)
        old_ptr = np.concatenate([[0], np.cumsum(naddr)])
        new_n = naddr[order]
        addr_ptr = np.concatenate([[0], np.cumsum(new_n)]).astype(np.int64)
        gather = np.repeat(old_ptr[:-1][order] - addr_ptr[:-1], new_n) + np.arange(
            addr_ptr[-1], dtype=np.int64
        )
        per_warp = np.bincount(warp, minlength=self.n_warps)
        warps = np.arange(self.n_warps, dtype=np.int64)
        masks = np.concatenate(self._masks)[order] if n_steps else np.zeros(0, np.uint32)
        return {
            "warp_ptr": np.concatenate([[0], np.cumsum(per_warp)]).astype(np.int64),
            "warp_block": (g.first_block + warps // g.warps_per_block).astype(np.int32),
            "warp_id": (warps % g.warps_per_block).astype(np.int32),
            "pc": pcs[step],
            "opcode": oids[step],
            "iclass": cls[step],
            "mask": masks.astype(np.uint32),
            "dst": dst[step],
            "src": src[step],
            "mem_width": widths[step],
            "line": np.full(step.size, -1, dtype=np.int32),
            "addr_ptr": addr_ptr,
            "addrs": flat[gather],
        }


def _concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Concatenate the CSR arrays of consecutive block ranges."""
    if len(parts) == 1:
        return parts[0]
    out: dict[str, np.ndarray] = {}
    for key in parts[0]:
        if key in ("warp_ptr", "addr_ptr"):
            ends = np.cumsum([0] + [int(p[key][-1]) for p in parts[:-1]])
            out[key] = np.concatenate(
                [parts[0][key][:1]] + [p[key][1:] + e for p, e in zip(parts, ends, strict=True)]
            )
        else:
            out[key] = np.concatenate([p[key] for p in parts])
    return out


#: Warps emitted together; bounds the temporaries of a chunk (a few hundred MB at most).
CHUNK_WARPS = 1 << 12


def _check_projected_size(
    name: str, parts: list[dict[str, np.ndarray]], done: int, total: int
) -> None:
    """MemoryError when the kernel's arrays, projected from its first ``done`` of
    ``total`` blocks, would need more than the memory available: joining the chunks
    holds them twice (a prediction also needs about twice the trace). Checked after
    each chunk, so an oversized launch fails in seconds instead of being killed."""
    held = sum(a.nbytes for p in parts for a in p.values())
    basis = f"projected from its first {done:,} of {total:,} blocks"
    message = too_large(f"kernel {name!r}: its trace", held, held * total / done, basis)
    if message is not None:
        raise MemoryError(message)


def build_kernel(
    g: Geometry,
    body: Callable[[Geometry, Emitter], None],
    *,
    name: str,
    kernel_id: int,
    nregs: int,
    shmem_bytes: int,
    chunk_warps: int | None = None,
) -> KernelTrace:
    """Run ``body(sub_geometry, emitter)`` over chunks of whole thread blocks and join them.

    ``body`` must emit the kernel for exactly the warps of the geometry it gets, so
    chunking never changes the result (only the peak memory of the temporaries).
    ``chunk_warps`` defaults to the module's :data:`CHUNK_WARPS`.
    """
    per_chunk = max(1, (chunk_warps or CHUNK_WARPS) // g.warps_per_block)
    opcodes: dict[str, int] = {}
    parts = []
    for lo in range(0, g.n_blocks, per_chunk):
        sub = Geometry(g.grid, g.block, lo, min(g.n_blocks, lo + per_chunk))
        em = Emitter(sub.n_warps, opcodes)
        body(sub, em)
        parts.append(em.finish(sub))
        _check_projected_size(name, parts, min(g.n_blocks, lo + per_chunk), g.n_blocks)
    arrays = _concat(parts)
    # Canonical opcode table: ids in order of first appearance in the trace (as a reader
    # assigns them), so the result does not depend on the chunking.
    names = tuple(opcodes)
    ids, first = np.unique(arrays["opcode"], return_index=True)
    seen = ids[np.argsort(first)]
    remap = np.zeros(max(len(names), 1), dtype=np.uint16)
    remap[seen] = np.arange(seen.size, dtype=np.uint16)
    arrays["opcode"] = remap[arrays["opcode"]]
    kt = KernelTrace(
        name=name,
        kernel_id=kernel_id,
        grid=g.grid,
        block=g.block,
        nregs=nregs,
        shmem_bytes=shmem_bytes,
        binary_version=BINARY_VERSION,
        **arrays,
        opcodes=tuple(names[i] for i in seen),
        header={
            "cuda stream id": "0",
            "shmem base_addr": "0x00007f8000000000",
            "local mem base_addr": "0x00007f9000000000",
        },
    )
    kt.validate()
    return kt


class Geometry:
    """Thread coordinates of a launch, one row per warp (block-major, then warp id)."""

    def __init__(
        self,
        grid: tuple[int, int, int],
        block: tuple[int, int, int],
        first_block: int = 0,
        end_block: int | None = None,
    ) -> None:
        self.grid = grid
        self.block = block
        tpb = block[0] * block[1] * block[2]
        self.threads_per_block = tpb
        self.warps_per_block = -(-tpb // WARP_SIZE)
        #: thread blocks of the whole launch; this object covers [first_block, end_block)
        self.n_blocks = grid[0] * grid[1] * grid[2]
        self.first_block = first_block
        end = self.n_blocks if end_block is None else end_block
        self.n_warps = (end - first_block) * self.warps_per_block

    # The coordinates are computed on first use: a launch's whole geometry is only
    # chunked by build_kernel, so its (warps, 32) arrays (about 2 KB per warp) would be
    # dead weight; e.g. 80 MB for 5,000 blocks of 256 threads.
    @cached_property
    def block_lin(self) -> np.ndarray:
        """Linear block index of each warp."""
        w = np.arange(self.n_warps, dtype=np.int64)
        return self.first_block + w // self.warps_per_block

    @cached_property
    def tid(self) -> np.ndarray:
        """Thread index inside its block (linear), shape (warps, 32)."""
        w = np.arange(self.n_warps, dtype=np.int64)
        return (w % self.warps_per_block)[:, None] * WARP_SIZE + LANE_IDS[None, :]

    @cached_property
    def valid(self) -> np.ndarray:
        return self.tid < self.threads_per_block

    @cached_property
    def tx(self) -> np.ndarray:
        return self.tid % self.block[0]

    @cached_property
    def ty(self) -> np.ndarray:
        return (self.tid // self.block[0]) % self.block[1]

    @cached_property
    def bx(self) -> np.ndarray:
        return self.block_lin[:, None] % self.grid[0]

    @cached_property
    def by(self) -> np.ndarray:
        return (self.block_lin[:, None] // self.grid[0]) % self.grid[1]

    @cached_property
    def ix(self) -> np.ndarray:
        """Global 1-D thread index ``blockIdx.x * blockDim.x + threadIdx.x`` (1-D launches)."""
        return self.bx * self.block[0] + self.tx

    def all(self) -> Active:
        """Every existing thread of every warp."""
        return Active(self.valid)


def emit_exit_lanes(em: Emitter, pc: int, act: Active) -> None:
    """``EXIT`` for the lanes in ``act`` (no-op for warps without such lanes)."""
    em.op(pc, "EXIT", act=act)


#: CUDA's largest shared memory per block, opted in (227 KB, compute capability 9.0): a
#: generated kernel needing more runs on no GPU
MAX_SHMEM_PER_BLOCK = 232_448


def check_param(name: str, value: _Num, low: float = 1, high: float | None = None) -> _Num:
    """``value`` if ``low <= value <= high`` (no upper bound when ``high`` is None), else a
    ValueError naming the size parameter and its allowed range."""
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"parameter {name}={value} must be {rng}")
    return value


def prologue_1d(em: Emitter, act: Active) -> None:
    """``ix = blockIdx.x * blockDim.x + threadIdx.x`` into R0 (PCs 0x00-0x50)."""
    em.op(0x00, "MOV", (1,), (), act)
    em.op(0x10, "S2R", (2,), (), act)
    em.op(0x20, "S2R", (3,), (), act)
    em.op(0x30, "XMAD.MRG", (0,), (2,), act)
    em.op(0x40, "XMAD", (3,), (2, 3), act)
    em.op(0x50, "XMAD.PSL.CBCC", (0,), (2, 0, 3), act)
