"""Columnar in-memory trace model (pipeline step 1, paper 001 Fig. 1).

A kernel trace is a set of flat NumPy arrays, one entry per *warp instruction*,
grouped by warp in CSR form; there is no Python object per instruction.

Layout of a :class:`KernelTrace` with ``n`` warp instructions and ``w`` warps:

* ``warp_ptr[w + 1]``: instructions of warp ``k`` are ``warp_ptr[k]:warp_ptr[k+1]``.
  Warps are ordered as in the trace file (block by block, then warp id).
* ``warp_block[w]``: linear thread-block index (``x + y*gx + z*gx*gy``) of each warp;
  ``warp_id[w]``: warp index inside its block.
* per instruction: ``pc``, ``opcode`` (index into ``opcodes``), ``iclass``
  (:class:`InstrClass`), ``mask`` (active lanes, bit ``l`` = lane ``l``), ``dst`` and
  ``src`` (register numbers, ``-1`` padded to :data:`MAX_DST` / :data:`MAX_SRC`),
  ``mem_width`` (bytes per lane, 0 for non-memory instructions), ``line``
  (source line, ``-1`` when the trace has no line info).
* ``addr_ptr[n + 1]`` and ``addrs``: the per-lane addresses of instruction ``i`` are
  ``addrs[addr_ptr[i]:addr_ptr[i+1]]``, one per *active* lane in increasing lane
  order; empty for instructions that carry no addresses.

An :class:`AppTrace` is the ordered list of commands of a ``kernelslist.g``:
kernels and ``MemcpyHtoD`` copies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

MAX_DST = 4
MAX_SRC = 8
WARP_SIZE = 32


class InstrClass(IntEnum):
    """Instruction classes used by the profile and the cache simulator."""

    INT = 0
    FP32 = 1
    FP64 = 2
    SFU = 3
    TENSOR = 4
    LD_GLOBAL = 5
    ST_GLOBAL = 6
    LD_SHARED = 7
    ST_SHARED = 8
    LOCAL = 9
    ATOMIC = 10
    TEX_CONST = 11
    BRANCH = 12
    BARRIER = 13
    OTHER = 14
    UNKNOWN = 15


#: Classes whose instructions carry per-lane addresses in Accel-Sim traces.
MEMORY_CLASSES = frozenset(
    {
        InstrClass.LD_GLOBAL,
        InstrClass.ST_GLOBAL,
        InstrClass.LD_SHARED,
        InstrClass.ST_SHARED,
        InstrClass.LOCAL,
        InstrClass.ATOMIC,
        InstrClass.TEX_CONST,
    }
)
#: Classes that go through the L1 data cache / L2 (global memory traffic).
GLOBAL_MEMORY_CLASSES = frozenset(
    {InstrClass.LD_GLOBAL, InstrClass.ST_GLOBAL, InstrClass.LOCAL, InstrClass.ATOMIC}
)


@dataclass(eq=False)
class KernelTrace:
    """One kernel launch: header fields plus columnar per-instruction arrays."""

    name: str
    kernel_id: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    nregs: int
    shmem_bytes: int
    binary_version: int
    # per warp
    warp_ptr: np.ndarray  # int64[w+1]
    warp_block: np.ndarray  # int32[w]
    warp_id: np.ndarray  # int32[w]
    # per instruction
    pc: np.ndarray  # uint32[n]
    opcode: np.ndarray  # uint16[n], index into ``opcodes``
    iclass: np.ndarray  # uint8[n], InstrClass
    mask: np.ndarray  # uint32[n]
    dst: np.ndarray  # int16[n, MAX_DST], -1 padded
    src: np.ndarray  # int16[n, MAX_SRC], -1 padded
    mem_width: np.ndarray  # uint8[n]
    line: np.ndarray  # int32[n], -1 when absent
    addr_ptr: np.ndarray  # int64[n+1]
    addrs: np.ndarray  # uint64[addr_ptr[-1]]
    opcodes: tuple[str, ...] = ()
    #: Header fields kept verbatim for round trips (e.g. "cuda stream id").
    header: dict[str, str] = field(default_factory=dict)

    # ---- derived sizes -------------------------------------------------
    @property
    def n_warps(self) -> int:
        return int(self.warp_ptr.shape[0] - 1)

    @property
    def n_instructions(self) -> int:
        return int(self.pc.shape[0])

    @property
    def n_blocks(self) -> int:
        return int(self.grid[0] * self.grid[1] * self.grid[2])

    @property
    def threads_per_block(self) -> int:
        return int(self.block[0] * self.block[1] * self.block[2])

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // WARP_SIZE)

    @property
    def warp_lengths(self) -> np.ndarray:
        return np.diff(self.warp_ptr)

    @property
    def inst_warp(self) -> np.ndarray:
        """Warp index (0..w-1) of every instruction."""
        return np.repeat(np.arange(self.n_warps, dtype=np.int32), self.warp_lengths)

    @property
    def inst_block(self) -> np.ndarray:
        """Linear thread-block index of every instruction."""
        return np.repeat(self.warp_block, self.warp_lengths)

    @property
    def active_lanes(self) -> np.ndarray:
        """Number of active lanes of every instruction."""
        return popcount32(self.mask)

    @property
    def thread_instructions(self) -> int:
        return int(self.active_lanes.sum(dtype=np.int64))

    def validate(self) -> None:
        """Check the internal consistency of the arrays; raise ``ValueError``."""
        n, w = self.n_instructions, self.n_warps
        for name in ("opcode", "iclass", "mask", "mem_width", "line"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, expected ({n},)")
        if self.dst.shape != (n, MAX_DST) or self.src.shape != (n, MAX_SRC):
            raise ValueError("dst/src register arrays have the wrong shape")
        if self.warp_ptr[0] != 0 or self.warp_ptr[-1] != n or np.any(np.diff(self.warp_ptr) < 0):
            raise ValueError("warp_ptr is not a valid CSR index over the instructions")
        if self.warp_block.shape != (w,) or self.warp_id.shape != (w,):
            raise ValueError("warp_block/warp_id must have one entry per warp")
        self._validate_warp_ids()
        if self.addr_ptr.shape != (n + 1,) or self.addr_ptr[0] != 0:
            raise ValueError("addr_ptr must have n+1 entries starting at 0")
        if self.addr_ptr[-1] != self.addrs.shape[0] or np.any(np.diff(self.addr_ptr) < 0):
            raise ValueError("addr_ptr is not a valid CSR index over addrs")
        if n and int(self.opcode.max()) >= len(self.opcodes):
            raise ValueError("opcode ids exceed the opcode table")

    def _validate_warp_ids(self) -> None:
        """Every block of the grid holds every warp its block dim requires, once (the
        Accel-Sim reader's rule, so that the grid, the occupancy and the block-to-SM
        schedule all describe the same warps)."""
        nb, wpb, w = self.n_blocks, self.warps_per_block, self.n_warps
        if w != nb * wpb:
            raise ValueError(
                f"{w} warps, expected {nb * wpb} (grid {tuple(self.grid)} x "
                f"{wpb} warps per block of {tuple(self.block)})"
            )
        if w == 0:
            return
        blk = self.warp_block.astype(np.int64)
        wid = self.warp_id.astype(np.int64)
        for name, v, hi, what in (
            ("warp_block", blk, nb, f"the grid's {nb} blocks"),
            ("warp_id", wid, wpb, f"the block's {wpb} warps"),
        ):
            bad = np.flatnonzero((v < 0) | (v >= hi))
            if bad.size:
                i = int(bad[0])
                raise ValueError(f"{name}[{i}] = {int(v[i])} is outside {what} (0..{hi - 1})")
        seen = np.bincount(blk * wpb + wid, minlength=nb * wpb)
        dup = np.flatnonzero(seen > 1)
        if dup.size:
            b, k = divmod(int(dup[0]), wpb)
            raise ValueError(f"warp {k} of block {b} appears {int(seen[dup[0]])} times")

    def equals(self, other: KernelTrace) -> bool:
        """Exact equality of header fields and every array (used by round-trip tests)."""
        if (
            self.name,
            self.kernel_id,
            tuple(self.grid),
            tuple(self.block),
            self.nregs,
            self.shmem_bytes,
            self.binary_version,
        ) != (
            other.name,
            other.kernel_id,
            tuple(other.grid),
            tuple(other.block),
            other.nregs,
            other.shmem_bytes,
            other.binary_version,
        ):
            return False
        # Opcode ids may differ between two tables holding the same strings: compare names.
        mine = np.asarray(self.opcodes, dtype=object)[self.opcode] if self.n_instructions else []
        theirs = (
            np.asarray(other.opcodes, dtype=object)[other.opcode] if other.n_instructions else []
        )
        if list(mine) != list(theirs):
            return False
        for name in ARRAY_FIELDS:
            if name == "opcode":
                continue
            if not np.array_equal(getattr(self, name), getattr(other, name)):
                return False
        return True


#: The array fields of :class:`KernelTrace` and their dtypes (as the readers build them)
ARRAY_DTYPES: dict[str, np.dtype] = {
    "warp_ptr": np.dtype(np.int64),
    "warp_block": np.dtype(np.int32),
    "warp_id": np.dtype(np.int32),
    "pc": np.dtype(np.uint32),
    "opcode": np.dtype(np.uint16),
    "iclass": np.dtype(np.uint8),
    "mask": np.dtype(np.uint32),
    "dst": np.dtype(np.int16),
    "src": np.dtype(np.int16),
    "mem_width": np.dtype(np.uint8),
    "line": np.dtype(np.int32),
    "addr_ptr": np.dtype(np.int64),
    "addrs": np.dtype(np.uint64),
}
ARRAY_FIELDS = tuple(ARRAY_DTYPES)


@dataclass(frozen=True)
class Memcpy:
    """A ``MemcpyHtoD,addr,bytes`` line of ``kernelslist.g``: ``nbytes`` from ``addr``,
    within the 64-bit address space (else :class:`ValueError`)."""

    addr: int
    nbytes: int

    def __post_init__(self) -> None:
        if self.addr < 0 or self.nbytes < 0 or self.addr + self.nbytes > 1 << 64:
            raise ValueError(
                f"copy of {self.nbytes} bytes at {self.addr:#x}: expected a non-negative "
                "size and address within the 64-bit address space"
            )


@dataclass(eq=False)
class AppTrace:
    """A whole application: the ordered commands of a ``kernelslist.g``."""

    commands: list[KernelTrace | Memcpy]
    name: str = ""

    @property
    def kernels(self) -> list[KernelTrace]:
        return [c for c in self.commands if isinstance(c, KernelTrace)]

    @property
    def memcpys(self) -> list[Memcpy]:
        return [c for c in self.commands if isinstance(c, Memcpy)]

    @property
    def n_kernels(self) -> int:
        return sum(isinstance(c, KernelTrace) for c in self.commands)

    def iter_commands(self) -> Iterator[KernelTrace | Memcpy]:
        """The commands in order (the :class:`LazyApp` interface)."""
        return iter(self.commands)

    def iter_kernels(self) -> Iterator[KernelTrace]:
        """The kernels in order (the :class:`LazyApp` interface)."""
        return iter(self.kernels)


@dataclass(eq=False)
class LazyApp:
    """An application read one command at a time, for traces larger than memory.

    Every call of :meth:`iter_commands` starts a new pass over the trace and reads each
    kernel only when the pass reaches it; the pass keeps no reference to a kernel it has
    handed out, so a consumer that drops each kernel before asking for the next holds
    one kernel in memory, not the application (:func:`mdm.pipeline.predict_app`,
    :func:`mdm.memory.simulate_app`, ``mdm predict``, ``mdm cachesim``, ``mdm trace``).
    The listing (``kernelslist.g``, a store's ``meta.json``) is read when the object is
    made, so a malformed listing or a missing kernel file fails at once; a malformed
    kernel body fails when a pass reaches it.
    """

    name: str
    n_kernels: int
    commands_factory: Callable[[], Iterator[KernelTrace | Memcpy]] = field(repr=False)
    #: bytes on disk of the kernel data a pass reads (a kernel file counted as often as
    #: it is listed; compressed files at their compressed size); 0 when unknown
    data_bytes: int = 0

    def iter_commands(self) -> Iterator[KernelTrace | Memcpy]:
        return self.commands_factory()

    def iter_kernels(self) -> Iterator[KernelTrace]:
        return _only_kernels(self.commands_factory())

    def load(self) -> AppTrace:
        """Read every command into an :class:`AppTrace` (the whole trace in memory)."""
        return AppTrace(commands=list(self.iter_commands()), name=self.name)


def _only_kernels(commands: Iterator[KernelTrace | Memcpy]) -> Iterator[KernelTrace]:
    # Written out (no generator expression): the loop variable is cleared after each
    # yield, so reading the next kernel does not keep the previous one alive.
    for c in commands:
        if isinstance(c, KernelTrace):
            yield c
        del c


#: Anything the pipeline stages accept as an application.
AnyApp = AppTrace | LazyApp


_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
_BITWISE_COUNT = getattr(np, "bitwise_count", None)  # numpy >= 2.0


def popcount32(x: np.ndarray) -> np.ndarray:
    """Vectorised population count of a uint32 array, as int32: numpy's ``bitwise_count``
    (numpy >= 2.0; 10x faster than the byte table on 6.2 M masks), else a byte table."""
    x = np.asarray(x, dtype=np.uint32)
    if _BITWISE_COUNT is not None:
        return _BITWISE_COUNT(x).astype(np.int32)
    return (
        _POP8[x & 0xFF].astype(np.int32)
        + _POP8[(x >> 8) & 0xFF]
        + _POP8[(x >> 16) & 0xFF]
        + _POP8[(x >> 24) & 0xFF]
    )
