"""Import an Accel-Sim / GPGPU-Sim ``gpgpusim.config`` into a :class:`GPUConfig`.

File syntax (GPGPU-Sim option parser): ``-option value`` pairs, ``#`` starts a comment,
a double-quoted value may span lines (``-gpgpu_dram_timing_opt "nbk=16:...:\\n CL=16..."``;
the whitespace inside it is removed), a repeated option: the last one wins. A
``trace.config`` beside the file is read after it (as ``accel-sim.out -config
gpgpusim.config -config trace.config`` does), then the ``extra_options`` (command-line
overrides, e.g. the ``extra_options`` column of the reference ``results.csv``).

Mapping and derivations (``core``, ``icnt``, ``l2``, ``dram`` are the four
``-gpgpu_clock_domains`` clocks in GHz):

* ``n_sm = gpgpu_n_clusters * gpgpu_n_cores_per_cluster``; ``compute_capability =
  10 * major + minor`` (minor 0 when only the major is given); ``sm.*`` from
  ``-gpgpu_shader_core_pipeline threads:warp`` (``max_warps = threads / 32``),
  ``-gpgpu_shader_cta``, ``-gpgpu_shader_registers``, ``-gpgpu_shmem_size``,
  ``-gpgpu_num_sched_per_core``, ``-gpgpu_scheduler``.
  ``sm.ldst_queue_entries``: the memory instructions GPGPU-Sim holds between issue and
  the LD/ST unit, ``-gpgpu_pipeline_widths``' ID_OC_MEM and OC_EX_MEM (fifth and tenth
  fields) plus the operand collector units a memory instruction may take
  (``-gpgpu_operand_collector_num_units_gen``, or ``_mem`` with
  ``-gpgpu_enable_specialized_operand_collector 1``); 4 + 8 + 4 = 16 in both reference
  configurations. Without ``-gpgpu_pipeline_widths`` it is left to the default.
  Allocation granularities follow GPGPU-Sim's ``shader_core_config::max_cta``
  (registers per thread rounded up to 4, i.e. 128 registers per warp; shared memory
  not rounded, i.e. 1 B). ``-gpgpu_max_insn_issue_per_warp`` -> ``sm.issue_width`` (a
  scheduler issues up to that many consecutive independent instructions of one warp
  per cycle; capped at 4) and ``-gpgpu_dual_issue_diff_exec_units`` ->
  ``sm.dual_issue_diff_units`` (GPGPU-Sim defaults 2 and 1); the profile finds which
  instructions pair (:mod:`mdm.profile.interval`).
* Latencies: ``trace.config``'s ``-trace_opcode_latency_initiation_{int,sp,dp,sfu,tensor}``
  (``latency,initiation``: the latency and ``latency.*_initiation_cycles``) and the
  ``BRA`` specialised unit's ``-trace_opcode_latency_initiation_spec_op_<k>``; a class
  the files leave out takes Accel-Sim's trace-driven default, ``4,1`` (``4,4`` for a
  specialised unit), as the simulator does. ``-ptx_opcode_latency_*`` and
  ``-ptx_opcode_initiation_*`` set PTX-mode latencies only: listed among the options
  without effect (until 2026-11-28 they stood in for absent trace options; the
  reference runs' logs confirm the defaults: ``mdm_pascal``'s ``trace.config`` sets no
  tensor latency and its runs dump ``4,1``). ``latency.shared_mem_cycles =
  -gpgpu_smem_latency``. Execution units per SM: ``-gpgpu_num_{sp,sfu,dp,int}_units``,
  ``-gpgpu_num_tensor_core_units`` and the enabled ``BRA`` specialised unit's count
  (``sm.*_units``; GPGPU-Sim's defaults where absent: 1 SP, 1 SFU, no DP, INT or
  tensor units). Shared-memory banks: ``-gpgpu_shmem_num_banks``,
  ``-gpgpu_shmem_warp_parts``, ``-gpgpu_shmem_limited_broadcast`` (defaults 16, 2, 1).
* L1 from ``-gpgpu_cache:dl1`` (:class:`CacheSpec`): ``l1.enabled = not
  -gpgpu_gmem_skip_L1D``; ``hit_latency_cycles = -gpgpu_l1_latency +``
  :data:`LDST_PIPELINE_CYCLES` (the load-to-use of a hit; see "Memory latencies"). With
  ``-gpgpu_adaptive_cache_config 1`` the L1 is the unified size minus the smallest
  ``-gpgpu_shmem_option`` carve-out (the size GPGPU-Sim picks for a kernel without shared
  memory; kernels with shared memory get less, see below). Write policy ``T``,
  ``E`` (write-evict) and ``L`` (local write-back, global write-through) map to
  ``write_through`` (global data is written through), ``B`` to ``write_back``; any
  write-allocate policy other than ``N`` is ``write_allocate = True``; alloc ``m`` ->
  ``miss``, ``f`` and ``s`` (streaming) -> ``fill``; a streaming cache gets GPGPU-Sim's
  MSHR sizing (one entry per line of the largest carve-out, x4 sectors if sectored;
  merge 64). A cache string without its miss-queue field gets 8 entries (decided here;
  GPGPU-Sim's Fermi configuration's ``A:32:8,8`` has 8).
  ``-gpgpu_coalesce_arch`` < 40 -> ``warp`` coalescer, >= 40 ->
  ``warp_sector`` (GPGPU-Sim's ``memory_coalescing_arch``: every access split into the
  warp's distinct 32 B sectors). The adaptive carve-out is kept per kernel:
  ``l1.unified_bytes`` and ``l1.shared_carveouts_bytes`` (the cache simulator applies
  GPGPU-Sim's ``max_cta`` rule to each kernel). A config without
  ``-gpgpu_unified_l1d_size`` (older than the option) gets GPGPU-Sim's fixed Volta
  rule: 4 x the dl1 size, carved out by 0, 8, 16, 32, 64 or 96 KB (said in the warning).
* L2 from ``-gpgpu_cache:dl2`` per memory sub-partition: ``l2.banks = n_mem *
  n_sub_partition_per_mchannel``, ``size = banks * sets * ways * line``;
  ``bank_interleave_bytes = 2**k`` from ``dramid@k`` of ``-gpgpu_mem_addr_mapping``
  (256 B, GPGPU-Sim's ``dramid@8``, when the mapping or its ``dramid@`` is absent);
  ``l2.bank_index`` from ``-gpgpu_memory_partition_indexing`` (6, IPOLY-modulo for
  non-power-of-two partition counts, is approximated by 0 and said in the warning; the
  cache simulator maps 0, 1, 2 and 4, the last by distribution, see
  :mod:`mdm.memory.hashing`); with more than one sub-partition per channel,
  ``l2.sub_partition_bits`` are the mapping string's lowest ``log2`` (sub-partitions)
  ``B`` bits (GPGPU-Sim's ``sub_partition_id_mask``; ``...RBBBCCCC.BCCSSSSS`` gives bit
  7, ``...RBBBCCCB.CCCSSSSS`` bit 8); ``l2.set_index`` ``L``, ``P`` or ``X`` (bitwise
  XOR); ``l1.banks`` from ``-gpgpu_l1_banks``; ``l2.fill_on_memcpy`` from
  ``-gpgpu_perf_sim_memcpy`` (GPGPU-Sim's default 1: the trace's host-to-device copies
  fill the L2).
* Kernel launch: ``kernel_launch_ns`` from ``-gpgpu_kernel_launch_latency`` (core cycles
  before a launched kernel's first block; default 0, Accel-Sim's SM7_QV100 ships 5000);
  a non-zero ``-gpgpu_TB_launch_latency`` (as many cycles more per block) is said in the
  warning, not modelled.
* NoC: a read reply is ``line + 8`` B of header in ``-icnt_flit_size`` flits, so one flit
  carries ``d = line / ceil((line + 8) / flit)`` B of data (32 B for 128 B lines and 40 B
  flits). Each memory sub-partition injects one flit per icnt cycle and its L2 data port
  moves ``port`` B per L2 cycle: ``noc.bandwidth_gbps = banks * min(d * icnt, port * l2)``
  (reference README: 24 x 32 B x 1.4 GHz = 1075 GB/s); ``noc.sm_port_gbps = d * icnt``
  (one ejected flit per SM per icnt cycle, 44.8 GB/s). ``noc.latency_ns = 0``: the
  traversal is inside ``l2.hit_latency_ns``. ``-network_mode 2`` (Accel-Sim's local
  crossbar, SM7_QV100) moves whole packets, one per input and per output each cycle,
  from FIFO input buffers (``local_interconnect.cc``): ``d`` is one L1 request (a
  32 B sector for a sectored L1, else a line) and ``noc.fifo_crossbar = True``, so the
  models cap the bandwidth at the head-of-line-blocking saturation
  (:func:`mdm.config.gpu.fifo_crossbar_packets_per_cycle`: 41.6 of the 64 L2 ports'
  packets per cycle with 80 SMs, 1505 of 2318 GB/s). ``-network_mode 1`` (intersim2,
  mdm_pascal) is not capped this way. ``noc.sm_queue_requests`` (the SM's injection
  queue, paper 001 footnote 2) is ``-icnt_in_buffer_limit`` for ``-network_mode 2`` and
  the ``input_buffer_size`` of ``-inter_config_file`` (read beside the config; flits,
  one per read request) for ``-network_mode 1``.
* DRAM: atom = ``buswidth * burst_length * n_mem_per_ctrlr`` B per column command;
  one command every ``max(tCCD, burst_length / data_command_freq_ratio)`` DRAM cycles;
  ``dram.bandwidth_gbps = n_mem * atom / max(tCCD, BL / ratio) * dram``
  (README: 24 x 32 B / 2 x 1.25 GHz = 480 GB/s; SM7_QV100: 32 x 32 B x 0.85 = 870 GB/s).
* Memory latencies (schema: ns, L1 pipeline excluded, DRAM additional to L2, paper 001
  eq. 4). GPGPU-Sim counts ``-gpgpu_l2_rop_latency`` and ``-dram_latency`` in core
  cycles (README section 2). ``l2.hit_latency_ns = rop / core + C_net / icnt`` where
  ``C_net`` is the rest of the round trip (crossbar traversal, queues), calibrated with
  the reference pointer chase. Every load pays, besides ``-gpgpu_l1_latency``, the core
  pipeline around the LD/ST unit's latency queue (operand collection before it,
  write-back after): the chase's L1 hits take 23.2 (mdm_pascal) and 23.5 (SM7_QV100)
  cycles load-to-use for a 20-cycle ``-gpgpu_l1_latency``, so ``l1.hit_latency_cycles``
  adds :data:`LDST_PIPELINE_CYCLES` = 3 (the schema's cycles are whole) and the L2's
  share is what remains of the L2-hit load-to-use: 120 - 23 - 74 = 23 icnt cycles for
  ``-network_mode 1`` (intersim2 crossbar of mdm_pascal), 193 - 23 - 160 = 10 for
  ``-network_mode 2`` (local crossbar of SM7_QV100); ``dram.latency_ns = dram_latency /
  core + (tRP + tRCD + CL + BL / ratio) / dram`` (a row miss plus one burst, from
  ``-gpgpu_dram_timing_opt``). This reproduces the measured mdm_pascal L1-hit latency
  within 0.2 cycles, its L2-hit latency exactly, and the measured DRAM latencies of
  both reference configs within 5 % (mdm_pascal -2.7 %, SM7_QV100 +3.7 %). Until
  2026-11-28 the L1 took ``-gpgpu_l1_latency`` alone and the L2 the 3 cycles (26 and
  13): the same load-to-use for a miss, 3 cycles short for a hit (the chase's L1
  kernel +19 % too fast with every model).

Options that are not mapped are listed in one :class:`mdm.errors.MdmWarning`, those
without effect on a trace-driven run's timing (:data:`NO_TIMING_EFFECT`) apart from
the others; options whose one value the simulator assumes (L1 flushed and L2 kept
between kernels, perfect instruction and constant caches) are read and said there when
a configuration differs.
"""

from __future__ import annotations

import builtins
import gzip
import lzma
import math
import re
import shlex
import warnings
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from mdm.config.gpu import GPUConfig, translate_validation_error
from mdm.errors import ConfigError, MdmWarning, TraceFormatError

__all__ = [
    "CacheSpec",
    "import_accelsim",
    "parse_options",
    "L2_NET_OVERHEAD_ICNT_CYCLES",
    "LDST_PIPELINE_CYCLES",
]

#: Calibrated L2 round-trip cycles (icnt clock) beyond rop and L1 latency, per -network_mode.
L2_NET_OVERHEAD_ICNT_CYCLES: dict[int, float] = {1: 23.0, 2: 10.0}
#: Core cycles a load spends in the core pipeline around the LD/ST unit's
#: ``-gpgpu_l1_latency`` (operand collection, write-back): the reference pointer chase's
#: L1-hit load-to-use (23.2 and 23.5 cycles) minus that latency (20), to whole cycles
LDST_PIPELINE_CYCLES = 3
_MAX_DEFAULT_CACHE_SIZE_MULTIPLIER = 4  # GPGPU-Sim gpu-cache.h, streaming MSHR sizing
_MAX_WARP_PER_SM = 64

#: GPGPU-Sim partition_index_function (0 CONSECUTIVE ... 5 CUSTOM)
_PARTITION_INDEX = {
    0: "consecutive",
    1: "bitwise_xor",
    2: "ipoly",
    3: "pae",
    4: "random",
    5: "custom",
}
#: GPGPU-Sim 4.x IPOLY_MODULO (hashing.cc ipolymodulo_hash_function, not reproduced here)
_IPOLY_MODULO = 6
_REPLACEMENT = {"L": "lru", "F": "fifo"}
_WRITE = {
    "R": "read_only",
    "B": "write_back",
    "T": "write_through",
    "E": "write_evict",
    "L": "local_wb_global_wt",
}
_ALLOC = {"m": "on_miss", "f": "on_fill", "s": "streaming"}
_WRITE_ALLOC = {
    "N": "no_write_allocate",
    "W": "write_allocate",
    "F": "fetch_on_write",
    "L": "lazy_fetch_on_read",
}
_SET_INDEX = {"H": "fermi_hash", "P": "ipoly", "C": "custom", "L": "linear", "X": "xor"}
_MSHR = {"F": "tex_fifo", "T": "sector_tex_fifo", "A": "assoc", "S": "sector_assoc"}


def _sub_partition_bits(mapping: str, subs: int, r: _Reader) -> tuple[int, ...] | None:
    """The lowest ``log2(subs)`` DRAM-bank (``B``) bits of an address-mapping string
    (bit 63 first; ``.``, ``|`` and spaces ignored), GPGPU-Sim's ``sub_partition_id_mask``;
    None (the bits above the interleave) when the string has no bit map."""
    _, _, bitmap = mapping.rpartition(";")
    chars = [c for c in bitmap if c not in ".| "]
    if len(chars) != 64:
        if bitmap.strip() and not bitmap.startswith("dramid@"):
            r.notes.append(
                f"{r.where('-gpgpu_mem_addr_mapping')}: no 64-bit map, sub-partition bits "
                "taken above the interleave"
            )
        return None
    bank_bits = [63 - i for i, c in enumerate(chars) if c in "Bb"][::-1]
    need = subs.bit_length() - 1
    if subs & (subs - 1) or len(bank_bits) < need:
        raise ConfigError(
            None,
            f"{r.where('-gpgpu_mem_addr_mapping')}: expected at least log2({subs}) bank bits "
            f"for {subs} sub-partitions per channel, got {len(bank_bits)}",
        )
    return tuple(bank_bits[:need])


def _inv(d: dict[str, str]) -> dict[str, str]:
    return {v: k for k, v in d.items()}


_CACHE_RE = re.compile(
    r"^([A-Za-z]):(\d+):(\d+):(\d+),([A-Za-z]):([A-Za-z]):([A-Za-z]):([A-Za-z]):([A-Za-z]),"
    r"([A-Za-z]):(\d+):(\d+)(?:,(\d+)(?::(\d+))?(?:,(\d+))?)?$"
)


@dataclass(frozen=True)
class CacheSpec:
    """A GPGPU-Sim cache configuration string, parsed (``cache_config::init`` in gpu-cache.h).

    ``<type>:<nsets>:<line>:<assoc>,<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>,
    <mshr>:<entries>:<max_merge>[,<miss_queue>[:<result_fifo>][,<data_port_width>]]``

    * type ``N`` normal / ``S`` sectored (4 x 32 B sectors per 128 B line);
    * rep ``L`` LRU / ``F`` FIFO; wr ``R`` read-only, ``B`` write-back, ``T``
      write-through, ``E`` write-evict, ``L`` local write-back + global write-through;
    * alloc ``m`` on miss, ``f`` on fill, ``s`` streaming (on fill, MSHRs = lines);
    * wr_alloc ``N`` none, ``W`` write-allocate, ``F`` fetch-on-write, ``L`` lazy fetch
      on read; set index ``H`` Fermi hash, ``P`` IPOLY hash, ``C`` custom, ``L`` linear,
      ``X`` bitwise XOR;
    * mshr ``F`` texture FIFO, ``T`` sector texture FIFO, ``A`` associative, ``S`` sector
      associative; entries; max merged requests per entry;
    * miss queue entries, result FIFO entries (texture), data port width in bytes
      (GPGPU-Sim: 0 or absent = the line size). Absent trailing fields are ``None``.
    """

    sectored: bool
    sets: int
    line_bytes: int
    ways: int
    replacement: Literal["lru", "fifo"]
    write_policy: Literal[
        "read_only", "write_back", "write_through", "write_evict", "local_wb_global_wt"
    ]
    alloc_policy: Literal["on_miss", "on_fill", "streaming"]
    write_alloc: Literal[
        "no_write_allocate", "write_allocate", "fetch_on_write", "lazy_fetch_on_read"
    ]
    set_index: Literal["fermi_hash", "ipoly", "custom", "linear", "xor"]
    mshr_type: Literal["tex_fifo", "sector_tex_fifo", "assoc", "sector_assoc"]
    mshr_entries: int
    mshr_max_merge: int
    miss_queue: int | None = None
    result_fifo: int | None = None
    data_port_bytes: int | None = None

    @property
    def size_bytes(self) -> int:
        return self.sets * self.ways * self.line_bytes

    @property
    def port_bytes(self) -> int:
        """Data port width as GPGPU-Sim uses it (0/absent = one line per cycle)."""
        return self.data_port_bytes or self.line_bytes

    @classmethod
    def parse(cls, text: str, where: str = "cache string") -> CacheSpec:
        """Parse ``text``; errors raise :class:`ConfigError` naming ``where`` and the field."""
        s = text.strip()
        m = _CACHE_RE.match(s)
        if not m:
            raise ConfigError(
                None,
                f"{where}: cannot parse cache configuration {s!r}; expected "
                "<N|S>:<sets>:<line>:<ways>,<rep>:<wr>:<alloc>:<wr_alloc>:<set_index>,"
                "<mshr>:<entries>:<merge>[,<miss_queue>[:<fifo>][,<port>]]",
            )
        g = m.groups()
        fields: list[tuple[str, str, dict[str, Any]]] = [
            ("type", g[0], {"N": False, "S": True}),
            ("replacement", g[4], _REPLACEMENT),
            ("write policy", g[5], _WRITE),
            ("allocation policy", g[6], _ALLOC),
            ("write-allocate policy", g[7], _WRITE_ALLOC),
            ("set index function", g[8], _SET_INDEX),
            ("MSHR type", g[9], _MSHR),
        ]
        vals = []
        for name, code, table in fields:
            if code not in table:
                raise ConfigError(
                    None,
                    f"{where}: {name} {code!r} in {s!r} is not one of {sorted(table)}",
                )
            vals.append(table[code])
        sets, line, ways = int(g[1]), int(g[2]), int(g[3])
        for name, v in (("sets", sets), ("line size", line), ("associativity", ways)):
            if v <= 0:
                raise ConfigError(None, f"{where}: {name} must be positive in {s!r}")
        if line & (line - 1):
            raise ConfigError(None, f"{where}: line size {line} in {s!r} is not a power of two")
        opt = [None if x is None else int(x) for x in g[12:15]]
        return cls(
            sectored=vals[0],
            sets=sets,
            line_bytes=line,
            ways=ways,
            replacement=vals[1],
            write_policy=vals[2],
            alloc_policy=vals[3],
            write_alloc=vals[4],
            set_index=vals[5],
            mshr_type=vals[6],
            mshr_entries=int(g[10]),
            mshr_max_merge=int(g[11]),
            miss_queue=opt[0],
            result_fifo=opt[1],
            data_port_bytes=opt[2],
        )

    def format(self) -> str:
        """The GPGPU-Sim string; ``CacheSpec.parse(spec.format()) == spec``."""
        s = (
            f"{'S' if self.sectored else 'N'}:{self.sets}:{self.line_bytes}:{self.ways},"
            f"{_inv(_REPLACEMENT)[self.replacement]}:{_inv(_WRITE)[self.write_policy]}:"
            f"{_inv(_ALLOC)[self.alloc_policy]}:{_inv(_WRITE_ALLOC)[self.write_alloc]}:"
            f"{_inv(_SET_INDEX)[self.set_index]},"
            f"{_inv(_MSHR)[self.mshr_type]}:{self.mshr_entries}:{self.mshr_max_merge}"
        )
        if self.miss_queue is not None:
            s += f",{self.miss_queue}"
            if self.result_fifo is not None:
                s += f":{self.result_fifo}"
            if self.data_port_bytes is not None:
                s += f",{self.data_port_bytes}"
        return s


@dataclass(frozen=True)
class _Opt:
    value: str
    source: str  # "file:line" or "extra_options"


def parse_options(
    text: str, source: str = "<string>", repeats: list[str] | None = None
) -> dict[str, _Opt]:
    """``-option value`` pairs of a GPGPU-Sim config text; the last occurrence wins (as in
    GPGPU-Sim's option parser; ``repeats`` gets one line per option given again with
    another value, for the import's warning).

    Tokenised with :mod:`shlex` (``#`` comments, double quotes); a quoted value may span
    lines, its whitespace is removed. Raises :class:`ConfigError` with ``source:line``.
    """
    out: dict[str, _Opt] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        lineno = i + 1
        chunk = lines[i]
        i += 1
        while chunk.count('"') % 2 and i < len(lines):  # quoted value continues
            chunk += "\n" + lines[i]
            i += 1
        try:
            tokens = shlex.split(chunk, comments=True)
        except ValueError as exc:
            raise ConfigError(source, f"line {lineno}: {exc}") from None
        _pair_tokens(tokens, out, f"{source}:{lineno}", repeats)
    return out


def _pair_tokens(
    tokens: list[str], out: dict[str, _Opt], where: str, repeats: list[str] | None = None
) -> None:
    if len(tokens) % 2:
        raise ConfigError(
            None, f"{where}: expected '-option value' pairs, got {' '.join(tokens)!r}"
        )
    for name, value in zip(tokens[0::2], tokens[1::2], strict=True):
        if not name.startswith("-") or len(name) < 2:
            raise ConfigError(
                None, f"{where}: expected an option name starting with '-', got {name!r}"
            )
        opt = _Opt(re.sub(r"\s+", "", value), where)
        if repeats is not None and name in out and out[name].value != opt.value:
            repeats.append(
                f"{name} given again with another value ({out[name].source}: "
                f"{out[name].value!r}, {where}: {opt.value!r}; the last is used)"
            )
        out[name] = opt


class _Reader:
    """Typed access to the option table; records which options were used."""

    def __init__(self, opts: dict[str, _Opt]) -> None:
        self.opts = opts
        self.used: set[str] = set()
        self.notes: list[str] = []  # options mapped only approximately (in the warning)

    def has(self, name: str) -> bool:
        return name in self.opts

    def raw(self, name: str, default: str | None = None) -> str:
        self.used.add(name)
        if name in self.opts:
            return self.opts[name].value
        if default is None:
            raise ConfigError(None, f"required option {name} is missing")
        return default

    def where(self, name: str) -> str:
        return self.opts[name].source if name in self.opts else f"default of {name}"

    def num(self, name: str, default: float | None = None) -> float:
        v = self.raw(name, None if default is None else str(default))
        try:
            x = float(v)
        except ValueError:
            x = math.nan
        if not math.isfinite(x):
            raise ConfigError(
                None, f"{self.where(name)}: option {name}: expected a number, got {v!r}"
            )
        return x

    def pos_int(self, name: str, default: int | None = None) -> int:
        """:meth:`int`, which must be positive (a count, width or ratio)."""
        x = self.int(name, default)
        if x < 1:
            raise ConfigError(
                None, f"{self.where(name)}: option {name}: expected a positive integer, got {x}"
            )
        return x

    def int(self, name: str, default: int | None = None) -> int:
        x = self.num(name, default)
        if x != int(x):
            raise ConfigError(
                None, f"{self.where(name)}: option {name}: expected an integer, got {x}"
            )
        return int(x)

    def ints(
        self,
        name: str,
        sep: str,
        n: builtins.int | None = None,  # the builtin: the method int shadows it here
        default: str | None = None,
    ) -> list[float]:
        v = self.raw(name, default)
        parts = [p for p in v.split(sep) if p != ""]
        try:
            out = [float(p) for p in parts]
            if not all(math.isfinite(x) for x in out):
                raise ValueError
        except ValueError:
            raise ConfigError(
                None,
                f"{self.where(name)}: option {name}: expected numbers separated by {sep!r}, got {v!r}",
            ) from None
        if n is not None and len(out) < n:
            raise ConfigError(
                None,
                f"{self.where(name)}: option {name}: expected {n} values separated by {sep!r}, got {v!r}",
            )
        return out

    def cache(self, name: str) -> CacheSpec:
        return CacheSpec.parse(self.raw(name), f"{self.where(name)}: option {name}")


def _flag(r: _Reader, name: str, default: int) -> bool:
    """A GPGPU-Sim boolean option (``OPT_BOOL``: 0 or 1)."""
    x = r.int(name, default)
    if x not in (0, 1):
        raise ConfigError(None, f"{r.where(name)}: option {name}: expected 0 or 1, got {x}")
    return bool(x)


def _launch_ns(r: _Reader, core_mhz: float) -> float:
    """``kernel_launch_ns`` from ``-gpgpu_kernel_launch_latency`` (core cycles, default 0):
    GPGPU-Sim holds a launched kernel's first block back for that many core cycles
    (``m_kernel_TB_latency``, counted in the kernel's ``gpu_sim_cycle``). Its
    ``-gpgpu_TB_launch_latency`` adds as many cycles per block of the kernel, which no
    fixed overhead can hold: a non-zero value is said in the warning."""
    cycles = r.int("-gpgpu_kernel_launch_latency", 0)
    per_block = r.int("-gpgpu_TB_launch_latency", 0)
    if cycles < 0 or per_block < 0:
        name = "-gpgpu_kernel_launch_latency" if cycles < 0 else "-gpgpu_TB_launch_latency"
        raise ConfigError(None, f"{r.where(name)}: option {name}: expected cycles >= 0")
    if per_block:
        r.notes.append(
            f"{r.where('-gpgpu_TB_launch_latency')}: -gpgpu_TB_launch_latency {per_block} "
            "(cycles per block before a kernel's first block) is not modelled"
        )
    return cycles / core_mhz * 1e3


def _timing(r: _Reader) -> dict[str, float]:
    v = r.raw("-gpgpu_dram_timing_opt", "")
    out: dict[str, float] = {}
    for item in v.split(":"):
        if "=" in item:
            k, _, x = item.partition("=")
            try:
                out[k.strip()] = float(x)
            except ValueError:
                raise ConfigError(
                    None,
                    f"{r.where('-gpgpu_dram_timing_opt')}: timing {k}: expected a number, got {x!r}",
                ) from None
    return out


_WRITE_POLICY_MAP = {
    "write_through": "write_through",
    "write_evict": "write_through",
    "local_wb_global_wt": "write_through",
    "write_back": "write_back",
}


def import_accelsim(
    config_path: str | Path,
    extra_options: str | list[str] = "",
    *,
    name: str | None = None,
    trace_config: str | Path | None = None,
) -> GPUConfig:
    """Build a :class:`GPUConfig` from a ``gpgpusim.config`` file (or its folder).

    ``extra_options``: command-line overrides (``"-gpgpu_n_clusters 56"`` or a token list),
    applied last. ``trace_config`` defaults to ``trace.config`` beside the file, if present.
    ``name`` defaults to the folder name. Unmapped options -> one :class:`MdmWarning`.
    """
    path = Path(config_path)
    if path.is_dir():
        path = path / "gpgpusim.config"
    if not path.is_file():
        raise ConfigError(path, "GPGPU-Sim config file not found")
    repeats: list[str] = []
    opts = parse_options(path.read_text(errors="replace"), str(path), repeats)
    tpath = Path(trace_config) if trace_config is not None else path.parent / "trace.config"
    if tpath.is_file():
        opts.update(parse_options(tpath.read_text(errors="replace"), str(tpath), repeats))
    elif trace_config is not None:
        raise ConfigError(tpath, "trace.config file not found")
    return _import_options(
        opts, path, extra_options, name or path.parent.name or path.stem, repeats
    )


#: Name endings of the Accel-Sim / GPGPU-Sim output logs :func:`import_accelsim_log` reads.
LOG_SUFFIXES = (".log", ".log.xz", ".log.gz")
_DUMPED = re.compile(r"^(-[A-Za-z_][\w:]*)\s+([^#]*?)\s*(?:#.*)?$")


@contextmanager
def open_text(path: Path) -> Iterator[Iterator[str]]:
    """The lines of a text file, plain or compressed (``.xz``, ``.gz``), undecodable
    bytes replaced; a truncated or corrupt compressed file raises
    :class:`TraceFormatError` ("cannot decompress") naming it and the last line read."""
    fh: IO[str]
    if path.suffix == ".xz":
        fh = lzma.open(path, "rt", errors="replace")
    elif path.suffix == ".gz":
        fh = gzip.open(path, "rt", errors="replace")
    else:
        fh = open(path, errors="replace")

    def lines() -> Iterator[str]:
        n = 0
        try:
            for n, line in enumerate(fh, 1):  # noqa: B007 (n: the last line read)
                yield line
        except (lzma.LZMAError, zlib.error, EOFError, OSError) as exc:
            raise TraceFormatError(path, n or None, f"cannot decompress: {exc}") from None

    with fh:
        yield lines()


def read_log_options(path: str | Path) -> dict[str, tuple[str, int]]:
    """``{name: (value, line)}`` of the option dump GPGPU-Sim prints at the head of its
    log (the ``-name value # description`` lines after ``GPGPU-Sim: Configuration
    options:``, up to the first other line): every option's effective value, defaults
    and command-line overrides included; ``{}`` without a dump before the first kernel."""
    out: dict[str, tuple[str, int]] = {}
    started = False
    with open_text(Path(path)) as fh:
        for lineno, line in enumerate(fh, 1):
            if not started:
                started = line.startswith("GPGPU-Sim: Configuration options:")
                if line.startswith(("launching kernel", "kernel_name")):
                    break
                continue
            m = _DUMPED.match(line)
            if m:
                out[m.group(1)] = (m.group(2), lineno)
            elif line.strip():  # the dump ends at its first other line
                break
    return out


def import_accelsim_log(
    log_path: str | Path,
    extra_options: str | list[str] = "",
    *,
    name: str | None = None,
    config_dir: str | Path | None = None,
) -> GPUConfig:
    """The configuration an Accel-Sim run used, from the option dump at the head of its
    output log (plain, ``.xz`` or ``.gz``): the config files and the command line's
    overrides together, so a run is reproduced without them (:func:`import_accelsim`'s
    mapping; ``extra_options`` applied last). Options the dump gives as ``none`` (unset
    strings) are left out. Where a config file would leave an option to the schema's
    default, the dump gives GPGPU-Sim's. Errors name the log and the dump's line.
    ``-inter_config_file`` is looked for in ``config_dir`` (default: beside the log);
    when it is not there the warning says so. ``name`` defaults to the log's name
    without its suffixes."""
    path = Path(log_path)
    if not path.is_file():
        raise ConfigError(path, "Accel-Sim log not found")
    dumped = read_log_options(path)
    if not dumped:
        raise ConfigError(
            path,
            "expected GPGPU-Sim's option dump ('-name value # ...' lines) before the first kernel",
        )
    opts = {
        k: _Opt(re.sub(r"\s+", "", v), f"{path}:{line}")
        for k, (v, line) in dumped.items()
        if v and v != "none"
    }
    base_dir = Path(config_dir) if config_dir is not None else path.parent
    return _import_options(opts, path, extra_options, name or log_stem(path), [], base_dir)


def log_stem(path: Path) -> str:
    """A log's name without its :data:`LOG_SUFFIXES` suffix."""
    for suffix in LOG_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def _import_options(
    opts: dict[str, _Opt],
    path: Path,
    extra_options: str | list[str],
    name: str,
    repeats: list[str],
    base_dir: Path | None = None,
) -> GPUConfig:
    """:func:`import_accelsim`'s mapping of an option table read from ``path``
    (``base_dir``: where files the options name are looked for; default its folder)."""
    tokens = shlex.split(extra_options) if isinstance(extra_options, str) else list(extra_options)
    _pair_tokens(tokens, opts, "extra_options")
    try:
        data, r = _build(opts, name, base_dir if base_dir is not None else path.parent)
    except ConfigError as exc:
        if exc.path is None:
            raise ConfigError(path, exc.message) from None
        raise
    left = set(opts) - r.used
    unmapped = sorted(left - NO_TIMING_EFFECT)
    inert = sorted(left & NO_TIMING_EFFECT)
    typos = _misspelt(unmapped, r.used - set(opts))
    if unmapped or inert or r.notes or repeats:
        parts = [
            f"{given} is no option mdm reads: misspelt {meant}? ({meant} is absent, so its "
            "default is used)"
            for given, meant in typos.items()
        ]
        if unmapped:
            parts.append(f"{len(unmapped)} options not mapped: {' '.join(unmapped)}")
        if inert:
            parts.append(
                f"{len(inert)} options without effect on a trace-driven run's timing "
                f"(PTX, statistics, debugging, runtime limits, power): {' '.join(inert)}"
            )
        notes = [*parts, *r.notes, *repeats]
        warnings.warn(MdmWarning(f"{path}: " + "; ".join(notes)), stacklevel=2)
    try:
        return GPUConfig.model_validate(data)
    except Exception as exc:  # pydantic.ValidationError
        raise translate_validation_error(exc, path) from None


def _misspelt(unmapped: list[str], absent: set[str]) -> dict[str, str]:
    """Unmapped options that look like a misspelling of an option the importer looked
    for and did not find (``-gpgpu_l1_latncy`` for an absent ``-gpgpu_l1_latency``):
    GPGPU-Sim would refuse them, and the importer would use the default silently."""
    import difflib

    out = {}
    for name in unmapped:
        close = difflib.get_close_matches(name, sorted(absent), n=1, cutoff=0.85)
        if close:
            out[name] = close[0]
    return out


def _sm_queue_requests(r: _Reader, net: int, base_dir: Path | None) -> int | None:
    """``noc.sm_queue_requests``: ``-icnt_in_buffer_limit`` (packets, GPGPU-Sim default
    64) for the local crossbar; for intersim2, ``input_buffer_size`` (flits; a read
    request is one flit) of ``-inter_config_file`` beside the config, or None (schema
    default, the option then listed as not mapped) when that file cannot be read."""
    if net == 2:
        return r.int("-icnt_in_buffer_limit", 64)
    if base_dir is None or not r.has("-inter_config_file"):
        return None
    icnt = base_dir / r.opts["-inter_config_file"].value
    if not icnt.is_file():
        r.notes.append(
            f"{r.where('-inter_config_file')}: -inter_config_file {icnt} not found: "
            "noc.sm_queue_requests keeps its default"
        )
        return None
    m = re.search(r"^\s*input_buffer_size\s*=\s*(\d+)\s*;", icnt.read_text(errors="replace"), re.M)
    if m is None:
        r.notes.append(
            f"{icnt}: no 'input_buffer_size = N;': noc.sm_queue_requests keeps its default"
        )
        return None
    r.used.add("-inter_config_file")
    return int(m.group(1))


def _build(opts: dict[str, _Opt], name: str, base_dir: Path | None = None) -> tuple[dict, _Reader]:
    r = _Reader(opts)
    clocks = r.ints("-gpgpu_clock_domains", ":", 4)
    if min(clocks[:4]) <= 0:
        raise ConfigError(
            None,
            f"{r.where('-gpgpu_clock_domains')}: option -gpgpu_clock_domains: expected four "
            f"positive clocks in MHz (core:interconnect:L2:DRAM), got {clocks[:4]}",
        )
    core, icnt, l2clk, dramclk = (c / 1000.0 for c in clocks[:4])  # GHz
    n_sm = r.int("-gpgpu_n_clusters") * r.int("-gpgpu_n_cores_per_cluster", 1)
    threads, warp = r.ints("-gpgpu_shader_core_pipeline", ":", 2)
    if warp != 32:
        raise ConfigError(
            None, f"{r.where('-gpgpu_shader_core_pipeline')}: warp size {warp:g} is not 32"
        )
    if r.has("-gpgpu_compute_capability_major"):
        cc = 10 * r.int("-gpgpu_compute_capability_major") + r.int(
            "-gpgpu_compute_capability_minor", 0
        )
    else:
        cc = r.int("-gpgpu_ptx_force_max_capability")
    policy = r.raw("-gpgpu_scheduler", "gto")
    if policy not in ("gto", "lrr"):
        raise ConfigError(
            None, f"{r.where('-gpgpu_scheduler')}: scheduler {policy!r} cannot be mapped (gto, lrr)"
        )

    latency = _latencies(r)

    # ---- L1 -----------------------------------------------------------------
    l1 = r.cache("-gpgpu_cache:dl1")
    # PrefL1 / PrefShared variants: same cache for trace-driven runs; read so they are "used"
    for v in ("-gpgpu_cache:dl1PrefL1", "-gpgpu_cache:dl1PrefShared"):
        if r.has(v):
            r.cache(v)
    l1_ways, l1_mshr, l1_merge = l1.ways, l1.mshr_entries, l1.mshr_max_merge
    unified_bytes: int | None = None
    carveouts: tuple[int, ...] = ()
    if r.has("-gpgpu_adaptive_cache_config") and r.int("-gpgpu_adaptive_cache_config"):
        if r.has("-gpgpu_unified_l1d_size"):
            unified = r.int("-gpgpu_unified_l1d_size") * 1024
            options = None  # required
        else:
            # configs older than the option (Accel-Sim 1.0, e.g. SM7_TITANV): GPGPU-Sim's
            # fixed Volta table, the dl1 at MAX_DEFAULT_CACHE_SIZE_MULTIPLIER x its size
            # (128 KB for S:1:128:256) minus 0, 8, 16, 32, 64 or 96 KB of shared memory
            unified = l1.sets * l1.ways * l1.line_bytes * _MAX_DEFAULT_CACHE_SIZE_MULTIPLIER
            options = "0,8,16,32,64,96"
            r.notes.append(
                f"{r.where('-gpgpu_adaptive_cache_config')}: no -gpgpu_unified_l1d_size; "
                f"the unified L1/shared array is {unified // 1024} KB (4 x the dl1), carved "
                f"out by {r.raw('-gpgpu_shmem_option', options)} KB of shared memory "
                "(GPGPU-Sim's Volta rule)"
            )
        carveouts = tuple(
            sorted(int(c) * 1024 for c in r.ints("-gpgpu_shmem_option", ",", 1, options))
        )
        carve = carveouts[0]
        l1_ways = round((unified - carve) / (l1.sets * l1.line_bytes))
        unified_bytes = unified
    if l1.alloc_policy == "streaming":
        l1_mshr = l1.sets * l1.ways * _MAX_DEFAULT_CACHE_SIZE_MULTIPLIER * (4 if l1.sectored else 1)
        l1_merge = _MAX_WARP_PER_SM
    if l1.write_policy not in _WRITE_POLICY_MAP:
        raise ConfigError(
            None,
            f"{r.where('-gpgpu_cache:dl1')}: L1 write policy {l1.write_policy} cannot be mapped",
        )
    if l1.set_index not in ("linear", "fermi_hash"):
        raise ConfigError(
            None, f"{r.where('-gpgpu_cache:dl1')}: L1 set index {l1.set_index} cannot be mapped"
        )
    if l1.write_alloc != "no_write_allocate":
        r.notes.append(
            f"{r.where('-gpgpu_cache:dl1')}: L1 write-allocate policy {l1.write_alloc} is "
            "kept as l1.write_allocate = true, but the cache simulator does not install "
            "written sectors in the L1 (no-write-allocate)"
        )
    l1_dict = {
        "enabled": not r.int("-gpgpu_gmem_skip_L1D", 0),
        "size_bytes": l1.sets * l1_ways * l1.line_bytes,
        "ways": l1_ways,
        "line_bytes": l1.line_bytes,
        "sector_bytes": 32,
        "sectored": l1.sectored,
        "mshr_entries": l1_mshr,
        "mshr_max_merge": l1_merge,
        "miss_queue_entries": l1.miss_queue or 8,
        "write_policy": _WRITE_POLICY_MAP[l1.write_policy],
        "write_allocate": l1.write_alloc != "no_write_allocate",
        "allocate_on": "miss" if l1.alloc_policy == "on_miss" else "fill",
        "set_index": l1.set_index,
        "banks": r.int("-gpgpu_l1_banks", 1),
        "hit_latency_cycles": r.int("-gpgpu_l1_latency", 1) + LDST_PIPELINE_CYCLES,
        "coalescer": "warp" if r.int("-gpgpu_coalesce_arch", 13) < 40 else "warp_sector",
        "unified_bytes": unified_bytes,
        "shared_carveouts_bytes": carveouts,
    }

    # ---- L2 -----------------------------------------------------------------
    l2 = r.cache("-gpgpu_cache:dl2")
    n_mem = r.int("-gpgpu_n_mem")
    banks = n_mem * r.int("-gpgpu_n_sub_partition_per_mchannel", 1)
    if l2.write_policy not in ("write_back", "write_through"):
        raise ConfigError(
            None,
            f"{r.where('-gpgpu_cache:dl2')}: L2 write policy {l2.write_policy} cannot be mapped",
        )
    if l2.set_index not in ("linear", "ipoly", "xor"):
        raise ConfigError(
            None, f"{r.where('-gpgpu_cache:dl2')}: L2 set index {l2.set_index} cannot be mapped"
        )
    mapping = r.raw("-gpgpu_mem_addr_mapping", "dramid@8")
    m = re.search(r"dramid@(\d+)", mapping)
    interleave = 2 ** int(m.group(1)) if m else 256
    subs = r.int("-gpgpu_n_sub_partition_per_mchannel", 1)
    sub_bits = _sub_partition_bits(mapping, subs, r) if subs > 1 else None
    part = r.int("-gpgpu_memory_partition_indexing", 0)
    if part == _IPOLY_MODULO:
        r.notes.append(
            f"{r.where('-gpgpu_memory_partition_indexing')}: 6 (IPOLY-modulo) is approximated "
            "by 0 (consecutive: interleave chunk mod banks)"
        )
        part = 0
    if part == 4:
        r.notes.append(
            f"{r.where('-gpgpu_memory_partition_indexing')}: 4 (random) draws each granule's "
            "sub-partition from a fixed hash, not from the simulator's rand() sequence"
        )
    if part not in _PARTITION_INDEX:
        raise ConfigError(
            None,
            f"{r.where('-gpgpu_memory_partition_indexing')}: expected 0..6, got {part}",
        )
    rop = r.num("-gpgpu_l2_rop_latency", 85)
    net = r.int("-network_mode", 1)
    if net not in L2_NET_OVERHEAD_ICNT_CYCLES:
        raise ConfigError(
            None, f"{r.where('-network_mode')}: network_mode {net} has no calibrated latency"
        )
    # schema: L1 miss -> reply round trip without the L1 pipeline (paper 001 L^MinLLC, eq. 4)
    l2_hit_ns = rop / core + L2_NET_OVERHEAD_ICNT_CYCLES[net] / icnt
    l2_dict = {
        "size_bytes": banks * l2.size_bytes,
        "banks": banks,
        "ways": l2.ways,
        "line_bytes": l2.line_bytes,
        "sector_bytes": 32,
        "sectored": l2.sectored,
        "mshr_per_bank": l2.mshr_entries,
        "mshr_max_merge": l2.mshr_max_merge,
        "write_policy": l2.write_policy,
        "write_allocate": l2.write_alloc != "no_write_allocate",
        "set_index": l2.set_index,
        "bank_interleave_bytes": interleave,
        "bank_index": _PARTITION_INDEX[part],
        "sub_partition_bits": sub_bits,
        "hit_latency_ns": l2_hit_ns,
        "fill_on_memcpy": _flag(r, "-gpgpu_perf_sim_memcpy", 1),
    }

    # ---- NoC ----------------------------------------------------------------
    flit = r.int("-icnt_flit_size", 32)
    if net == 2:
        # local crossbar: one packet (one L1 request's reply) per port per cycle
        data_per_flit: float = 32 if l1.sectored else l1.line_bytes
    else:
        data_per_flit = l2.line_bytes / math.ceil((l2.line_bytes + 8) / flit)
    noc_total = banks * min(data_per_flit * icnt, l2.port_bytes * l2clk)
    noc_dict = {
        "bandwidth_gbps": noc_total,
        "sm_port_gbps": data_per_flit * icnt,
        "latency_ns": 0.0,
        "fifo_crossbar": net == 2,
    }
    queue = _sm_queue_requests(r, net, base_dir)
    if queue is not None:
        noc_dict["sm_queue_requests"] = queue

    # ---- DRAM ---------------------------------------------------------------
    bus = r.pos_int("-gpgpu_dram_buswidth", 4)
    bl = r.pos_int("-gpgpu_dram_burst_length", 4)
    ratio = r.pos_int("-dram_data_command_freq_ratio", 2)
    chips = r.pos_int("-gpgpu_n_mem_per_ctrlr", 1)
    t = _timing(r)
    atom = bus * bl * chips
    cmd_cycles = max(t.get("CCD", 1.0), bl / ratio)
    dram_bw = n_mem * atom / cmd_cycles * dramclk
    # additional L2-miss round trip (paper 001 eq. 4, L^MinDRAM): fixed + row miss + burst
    row_miss = t.get("RP", 0.0) + t.get("RCD", 0.0) + t.get("CL", 0.0) + bl / ratio
    dram_ns = r.num("-dram_latency", 30) / core + row_miss / dramclk
    dram_dict = {
        "bandwidth_gbps": dram_bw,
        "channels": n_mem,
        "latency_ns": dram_ns,
        "atom_bytes": atom,
    }

    data = {
        "name": name,
        "compute_capability": cc,
        "core_clock_mhz": clocks[0],
        "n_sm": n_sm,
        "kernel_launch_ns": _launch_ns(r, clocks[0]),
        "sm": {
            "max_threads": int(threads),
            "max_warps": int(threads) // 32,
            "max_blocks": r.int("-gpgpu_shader_cta", 8),
            "registers": r.int("-gpgpu_shader_registers", 8192),
            "shared_mem_bytes": r.int("-gpgpu_shmem_size", 16384),
            "schedulers": r.int("-gpgpu_num_sched_per_core", 1),
            "scheduler_policy": policy,
            "ldst_queue_entries": _ldst_queue(r),
            "issue_width": min(4, max(1, r.int("-gpgpu_max_insn_issue_per_warp", 2))),
            "dual_issue_diff_units": bool(r.int("-gpgpu_dual_issue_diff_exec_units", 1)),
            **_exec_units(r),
            "shared_mem_banks": r.pos_int("-gpgpu_shmem_num_banks", 16),
            "shared_mem_warp_parts": _warp_parts(r),
            "shared_mem_limited_broadcast": bool(r.int("-gpgpu_shmem_limited_broadcast", 1)),
            "register_alloc_granularity": 128,
            "shared_mem_alloc_granularity": 1,
        },
        "latency": latency,
        "l1": l1_dict,
        "l2": l2_dict,
        "noc": noc_dict,
        "dram": dram_dict,
    }
    _check_assumptions(r)
    return data, r


_ACCELWATTCH_HYBRID = (
    "CC_ACC CYCLES DRAM_RD DRAM_WR L1_RH L1_RM L1_WH L1_WM L2_RH L2_RM L2_WH L2_WM NOC "
    "NUM_SM_IDLE PIPE_DUTY SHARED_ACC VOLTAGE"
).split()

#: Options without effect on the timing of a trace-driven run, listed apart in the
#: warning: the PTX front end (a trace holds SASS, its register counts and addresses),
#: statistics, debugging and visualiser output, checkpoints, the CUDA runtime's limits
#: for device-side launches, and the power model (AccelWattch).
NO_TIMING_EFFECT = frozenset(
    {
        "-enable_ptx_file_line_stats",
        "-gpgpu_ptx_convert_to_ptxplus",
        "-gpgpu_ptx_force_max_capability",
        "-gpgpu_ptx_instruction_classification",
        "-gpgpu_ptx_save_converted_ptxplus",
        "-gpgpu_ptx_sim_mode",
        "-gpgpu_occupancy_sm_number",
        "-save_embedded_ptx",
        "-keep",
        "-visualizer_enabled",
        "-visualizer_outputfile",
        "-visualizer_zlevel",
        "-gpgpu_runtime_stat",
        "-gpgpu_memlatency_stat",
        "-gpgpu_heap_size_limit",
        "-gpgpu_stack_size_limit",
        "-gpgpu_runtime_sync_depth_limit",
        "-gpgpu_runtime_pending_launch_count_limit",
        "-gpgpu_clock_gated_lanes",
        "-gpgpu_clock_gated_reg_file",
        "-n_regfile_gating_group",
        "-power_simulation_enabled",
        "-power_simulation_mode",
        "-power_trace_enabled",
        "-power_trace_zlevel",
        "-power_per_cycle_dump",
        "-aggregate_power_stats",
        "-steady_power_levels_enabled",
        "-steady_state_definition",
        "-dvfs_enabled",
        "-hw_perf_file_name",
        "-accelwattch_xml_file",
        # PTX-mode instruction latencies: trace-driven runs take trace.config's
        "-ptx_opcode_latency_int",
        "-ptx_opcode_initiation_int",
        "-ptx_opcode_latency_fp",
        "-ptx_opcode_initiation_fp",
        "-ptx_opcode_latency_dp",
        "-ptx_opcode_initiation_dp",
        "-ptx_opcode_latency_sfu",
        "-ptx_opcode_initiation_sfu",
        "-ptx_opcode_latency_tesnor",
        "-ptx_opcode_initiation_tensor",
        # a log's option dump lists every option, these among them
        "-trace",
        "-trace_enabled",
        "-trace_sampling_core",
        "-trace_sampling_memory_partition",
        "-gpgpu_ptx_use_cuobjdump",
        "-gpgpu_ptx_inst_debug_to_file",
        "-gpgpu_ptx_inst_debug_file",
        "-gpgpu_ptx_inst_debug_thread_uid",
        "-gpgpu_experimental_lib_support",
        "-gpgpu_local_mem_map",
        "-ptx_line_stats_filename",
        "-gpgpu_cflog_interval",
        "-gpgpu_warpdistro_shader",
        "-gpgpu_warp_issue_shader",
        "-gpgpu_deadlock_detect",
        "-gpgpu_mem_addr_test",
        "-liveness_message_freq",
        "-icnt_verbose",
        "-checkpoint_option",
        "-checkpoint_kernel",
        "-checkpoint_CTA",
        "-checkpoint_CTA_t",
        "-checkpoint_insn_Y",
        "-resume_option",
        "-resume_kernel",
        "-resume_CTA",
    }
    | {f"-accelwattch_hybrid_perfsim_{x}" for x in _ACCELWATTCH_HYBRID}
)


def _check_assumptions(r: _Reader) -> None:
    """Options whose one value the cache simulator and the models assume: read (so not
    listed as unmapped) and said in the warning when the configuration differs. The L1s
    are flushed at every kernel and the L2 is not (GPGPU-Sim defaults 0 and 0); with
    perfect instruction and constant caches (``-gpgpu_perfect_inst_const_cache 1``) the
    instruction and constant cache geometries do not matter, else they are left
    unmapped."""
    if r.has("-gpgpu_flush_l1_cache") and not _flag(r, "-gpgpu_flush_l1_cache", 0):
        r.notes.append(
            f"{r.where('-gpgpu_flush_l1_cache')}: -gpgpu_flush_l1_cache 0 keeps the L1s' "
            "contents from kernel to kernel; the cache simulator flushes them"
        )
    if not r.has("-gpgpu_flush_l1_cache"):
        r.notes.append(
            "-gpgpu_flush_l1_cache is not set (GPGPU-Sim default 0: the L1s keep their "
            "contents from kernel to kernel); the cache simulator flushes them"
        )
    if _flag(r, "-gpgpu_flush_l2_cache", 0):
        r.notes.append(
            f"{r.where('-gpgpu_flush_l2_cache')}: -gpgpu_flush_l2_cache 1 empties the L2 "
            "after every kernel; the cache simulator keeps its contents"
        )
    if r.has("-gpgpu_perfect_inst_const_cache"):
        if _flag(r, "-gpgpu_perfect_inst_const_cache", 0):
            r.raw("-gpgpu_cache:il1", "")
            r.raw("-gpgpu_const_cache:l1", "")
        else:
            r.notes.append(
                f"{r.where('-gpgpu_perfect_inst_const_cache')}: instruction and constant "
                "cache misses are not modelled (the models assume perfect caches)"
            )


def _pair(r: _Reader, name: str) -> tuple[int, int | None] | None:
    """``latency,initiation`` of a ``-trace_opcode_latency_initiation_*`` option (the
    initiation interval None when the value has one number)."""
    if not r.has(name):
        return None
    v = r.ints(name, ",", 1)
    for x in v[:2]:
        if x != int(x) or x < 1:
            raise ConfigError(
                None,
                f"{r.where(name)}: option {name}: expected positive integers "
                f"<latency,initiation>, got {r.opts[name].value!r}",
            )
    return int(v[0]), (int(v[1]) if len(v) > 1 else None)


#: Accel-Sim's values of ``-trace_opcode_latency_initiation_{int,sp,dp,sfu,tensor}`` and
#: ``..._spec_op_<k>`` when a configuration sets none (``trace_config::reg_options``)
TRACE_LATENCY_DEFAULT = (4, 1)
TRACE_SPEC_OP_DEFAULT = (4, 4)


def _latencies(r: _Reader) -> dict[str, int]:
    """``latency.*`` from the trace-driven options (module docstring): a class without
    ``-trace_opcode_latency_initiation_<kind>`` takes Accel-Sim's default
    (:data:`TRACE_LATENCY_DEFAULT`), and a value without its initiation interval an
    interval of 1; the ``-ptx_opcode_*`` options are left unread (PTX mode only)."""
    lat: dict[str, int] = {}
    kinds = [
        ("int_alu", "int"),
        ("fp32", "sp"),
        ("fp64", "dp"),
        ("sfu", "sfu"),
        ("tensor", "tensor"),
    ]
    for stem, trace_kind in kinds:
        v, ii = _trace_latency(r, trace_kind, TRACE_LATENCY_DEFAULT)
        lat[f"{stem}_cycles"] = v
        lat[f"{stem}_initiation_cycles"] = ii
    if r.has("-gpgpu_smem_latency"):
        lat["shared_mem_cycles"] = r.int("-gpgpu_smem_latency")
    bra = _branch_unit(r)
    if bra is not None:
        k, _ = bra
        v, ii = _trace_latency(r, f"spec_op_{k}", TRACE_SPEC_OP_DEFAULT)
        r.raw(f"-specialized_unit_{k}")
        lat["branch_cycles"] = v
        lat["branch_initiation_cycles"] = ii
    return lat


def _trace_latency(r: _Reader, kind: str, default: tuple[int, int]) -> tuple[int, int]:
    """``latency, initiation`` of ``-trace_opcode_latency_initiation_<kind>``: ``default``
    (Accel-Sim's) when absent, an initiation interval of 1 when the value has none."""
    pair = _pair(r, f"-trace_opcode_latency_initiation_{kind}")
    v, ii = pair if pair is not None else default
    return v, ii if ii is not None else 1


def _ldst_queue(r: _Reader) -> int | None:
    """``sm.ldst_queue_entries`` (module docstring): ID_OC_MEM + OC_EX_MEM of
    ``-gpgpu_pipeline_widths`` plus the memory-capable operand collector units; None
    without the widths option."""
    name = "-gpgpu_pipeline_widths"
    if not r.has(name):
        return None
    widths = r.ints(name, ",")
    if len(widths) < 10 or any(w != int(w) or w < 0 for w in widths):
        raise ConfigError(
            None,
            f"{r.where(name)}: option {name}: expected at least 10 non-negative integers "
            f"(ID_OC_SP, ..., ID_OC_MEM, ..., OC_EX_MEM, ...), got {r.raw(name)!r}",
        )
    specialized = r.int("-gpgpu_enable_specialized_operand_collector", 1)
    units = r.int(
        "-gpgpu_operand_collector_num_units_mem"
        if specialized
        else "-gpgpu_operand_collector_num_units_gen",
        2 if specialized else 0,
    )
    return max(1, int(widths[4]) + int(widths[9]) + units)


def _warp_parts(r: _Reader) -> int:
    """``-gpgpu_shmem_warp_parts`` (GPGPU-Sim default 2), which must divide the warp."""
    name = "-gpgpu_shmem_warp_parts"
    parts = r.pos_int(name, 2)
    if 32 % parts:
        raise ConfigError(
            None, f"{r.where(name)}: option {name}: expected a divisor of 32, got {parts}"
        )
    return parts


def _branch_unit(r: _Reader) -> tuple[int, list[str]] | None:
    """``(k, fields)`` of the enabled specialised unit named ``BRA`` (Accel-Sim's Volta
    and later branch unit: ``-specialized_unit_k <enabled>,<units>,<max_lat>,<id_oc>,
    <oc_ex>,<NAME>``), or None."""
    for k in range(1, 9):
        unit = f"-specialized_unit_{k}"
        if r.has(unit):
            fields = r.opts[unit].value.split(",")
            if len(fields) >= 6 and fields[5].strip().upper() == "BRA" and fields[0] == "1":
                return k, fields
    return None


def _exec_units(r: _Reader) -> dict[str, int]:
    """Execution units per SM (GPGPU-Sim's defaults where an option is absent: 1 SP,
    1 SFU, no DP, INT or tensor units) and the BRA specialised unit's count."""
    units = {
        "sp_units": r.pos_int("-gpgpu_num_sp_units", 1),
        "sfu_units": r.pos_int("-gpgpu_num_sfu_units", 1),
        "dp_units": r.int("-gpgpu_num_dp_units", 0),
        "int_units": r.int("-gpgpu_num_int_units", 0),
    }
    for name in ("dp_units", "int_units"):
        if units[name] < 0:
            opt = f"-gpgpu_num_{name}"
            raise ConfigError(
                None, f"{r.where(opt)}: option {opt}: expected a count >= 0, got {units[name]}"
            )
    if r.has("-gpgpu_num_tensor_core_units") and r.int("-gpgpu_num_tensor_core_units") > 0:
        units["tensor_units"] = r.int("-gpgpu_num_tensor_core_units")
    bra = _branch_unit(r)
    if bra is not None:
        k, fields = bra
        unit = f"-specialized_unit_{k}"
        r.raw(unit)
        try:
            units["branch_units"] = int(fields[1])
        except ValueError:
            raise ConfigError(
                None,
                f"{r.where(unit)}: option {unit}: expected <enabled>,<units>,... "
                f"got {r.opts[unit].value!r}",
            ) from None
    return units
