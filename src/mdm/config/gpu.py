"""Typed, frozen, validated GPU configuration.

Units are in field names. Conventions (decided here, used by every stage):

* Core-side latencies (``*_cycles``) are in core clock cycles.
* Memory-side latencies are in nanoseconds (``l2.hit_latency_ns``, ``dram.latency_ns``,
  ``noc.latency_ns``) so that a DVFS study that changes ``core_clock_mhz`` keeps them
  constant in time, as the memory system runs on its own clocks. Use the
  ``*_cycles`` properties of :class:`GPUConfig` to get them in core cycles.
* ``l2.hit_latency_ns`` is the uncontended round trip of an L1 miss that hits in the L2
  (L1 miss to reply, excluding ``l1.hit_latency_cycles``): the paper's L^MinLLC minus
  the L1 pipeline. ``dram.latency_ns`` is the *additional* round trip of an L2 miss
  (L^MinDRAM, paper 001 eq. 4).
* Bandwidths are in GB/s (10^9 bytes per second).
"""

from __future__ import annotations

import difflib
import math
import types
import typing
import warnings
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mdm.errors import ConfigError, MdmWarning


class _Strict(BaseModel):
    """Frozen, no unknown keys, no infinite or NaN numbers, no booleans for numbers."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False
    )

    @model_validator(mode="before")
    @classmethod
    def _no_bool_numbers(cls, data: Any) -> Any:
        # pydantic would take ``n_sm = true`` as 1
        if isinstance(data, dict):
            for name, f in cls.model_fields.items():
                v = data.get(name)
                if isinstance(v, bool) and _numeric(f.annotation):
                    raise ValueError(f"{name}: expected a number, got {str(v).lower()}")
        return data


def _numeric(annotation: Any) -> bool:
    """``int``, ``float``, or one of them or ``None`` (``int | None``)."""
    if annotation in (int, float):
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return any(a in (int, float) for a in typing.get_args(annotation))
    return False


class SMConfig(_Strict):
    max_threads: int = Field(ge=32, le=4096)
    max_warps: int = Field(ge=1, le=128)
    max_blocks: int = Field(ge=1, le=128)
    registers: int = Field(ge=1024, description="32-bit registers per SM")
    shared_mem_bytes: int = Field(ge=0)
    schedulers: int = Field(ge=1, le=16, description="warp schedulers (sub-cores) per SM")
    scheduler_policy: Literal["gto", "lrr"] = "gto"
    ldst_queue_entries: int | None = Field(
        default=None,
        ge=1,
        le=2**16,
        description=(
            "memory instructions that may wait at once for the SM's LD/ST unit (issued, not "
            "yet taken by the L1); None: max_warps / schedulers, GPGPU-Sim's pipeline "
            "registers on the reference configurations (cache simulation only)"
        ),
    )
    issue_width: int = Field(
        default=1,
        ge=1,
        le=4,
        description=(
            "instructions a scheduler issues per cycle; beyond the first only from the same "
            "warp, consecutive and independent (Accel-Sim -gpgpu_max_insn_issue_per_warp)"
        ),
    )
    dual_issue_diff_units: bool = Field(
        default=True,
        description="instructions issued together must use different execution units",
    )
    sp_units: int | None = Field(
        default=None,
        ge=1,
        description="FP32 (SP) execution units per SM; None: one per scheduler "
        "(Accel-Sim -gpgpu_num_sp_units)",
    )
    int_units: int = Field(
        default=0,
        ge=0,
        description="integer (INT) units per SM; 0: integer and other ALU instructions run "
        "on the SP units, as before Volta (-gpgpu_num_int_units)",
    )
    dp_units: int | None = Field(
        default=None,
        ge=0,
        description="FP64 units per SM; None: one per scheduler; 0: FP64 runs on the SFU "
        "units, as GPGPU-Sim does for Fermi (-gpgpu_num_dp_units)",
    )
    sfu_units: int | None = Field(
        default=None, ge=1, description="SFU units per SM; None: one per scheduler"
    )
    tensor_units: int | None = Field(
        default=None, ge=1, description="tensor-core units per SM; None: one per scheduler"
    )
    branch_units: int = Field(
        default=0,
        ge=0,
        description="dedicated branch units per SM (Accel-Sim's Volta and later configurations: "
        "specialized unit BRA); 0: branches run on the integer path",
    )
    shared_mem_banks: int = Field(
        default=32, ge=1, description="shared-memory banks of 4 B words (-gpgpu_shmem_num_banks)"
    )
    shared_mem_warp_parts: int = Field(
        default=1,
        ge=1,
        le=32,
        description="parts of a warp whose shared-memory accesses take separate bank passes "
        "(-gpgpu_shmem_warp_parts; must divide 32)",
    )
    shared_mem_limited_broadcast: bool = Field(
        default=False,
        description="a bank broadcasts one word per pass; other repeated words conflict "
        "(-gpgpu_shmem_limited_broadcast)",
    )
    register_alloc_granularity: int = Field(
        default=256, ge=1, description="registers per warp, rounding unit"
    )
    shared_mem_alloc_granularity: int = Field(default=256, ge=1)
    shared_mem_reserved_per_block_bytes: int = Field(
        default=0,
        ge=0,
        description="shared memory the CUDA driver reserves for every resident block, "
        "counted against shared_mem_bytes and the carve-out (1 KB from compute "
        "capability 8.0: CUDA C++ Programming Guide; none in GPGPU-Sim)",
    )

    @model_validator(mode="after")
    def _warp_parts(self) -> SMConfig:
        if 32 % self.shared_mem_warp_parts:
            raise ValueError(
                f"sm.shared_mem_warp_parts={self.shared_mem_warp_parts} must divide the warp (32)"
            )
        return self


class LatencyConfig(_Strict):
    """Result latency per instruction class, and initiation interval of the execution
    units (``*_initiation_cycles``: cycles a unit is busy with one warp instruction, the
    second value of Accel-Sim's ``-trace_opcode_latency_initiation_*``; e.g. 2 where a
    sub-core has 16 lanes of that kind), core cycles."""

    int_alu_cycles: int = Field(default=4, ge=1)
    fp32_cycles: int = Field(default=4, ge=1)
    fp64_cycles: int = Field(default=20, ge=1)
    sfu_cycles: int = Field(default=20, ge=1)
    tensor_cycles: int = Field(default=32, ge=1)
    shared_mem_cycles: int = Field(default=24, ge=1)
    const_tex_cycles: int = Field(default=24, ge=1)
    branch_cycles: int = Field(default=4, ge=1)
    barrier_cycles: int = Field(default=4, ge=1)
    other_cycles: int = Field(default=4, ge=1)
    int_alu_initiation_cycles: int = Field(default=1, ge=1)
    fp32_initiation_cycles: int = Field(default=1, ge=1)
    fp64_initiation_cycles: int = Field(default=1, ge=1)
    sfu_initiation_cycles: int = Field(default=1, ge=1)
    tensor_initiation_cycles: int = Field(default=1, ge=1)
    branch_initiation_cycles: int = Field(default=1, ge=1)


class L1Config(_Strict):
    enabled: bool = Field(default=True, description="global loads cached in L1")
    size_bytes: int = Field(ge=1024)
    ways: int = Field(ge=1)
    line_bytes: int = Field(default=128, ge=32)
    sector_bytes: int = Field(default=32, ge=4)
    sectored: bool = False
    # upper bounds on the counts that size the cache simulator's arrays: far above any GPU
    # (Accel-Sim's streaming L1s: thousands of entries), so that a typo fails here
    mshr_entries: int = Field(ge=1, le=2**20)
    mshr_max_merge: int = Field(default=8, ge=1, le=2**31 - 1)
    miss_queue_entries: int = Field(default=16, ge=1, le=2**16, description="SM-to-NoC queue")
    write_policy: Literal["write_through", "write_back"] = "write_through"
    write_allocate: bool = Field(
        default=False,
        description="kept for the record (GPGPU-Sim's L1 write-allocate policy); the cache "
        "simulator runs the L1 without write allocation: written sectors are not installed",
    )
    allocate_on: Literal["miss", "fill"] = Field(
        default="miss", description="'fill' = streaming L1 (paper 004 III-C)"
    )
    streaming_tags: Literal["fill", "miss"] = Field(
        default="fill",
        description="a streaming L1's tags in the cache simulation: 'fill' allocates a "
        "line at its fill (Accel-Sim); 'miss' reserves the least recently used way "
        "without a fill in flight at the miss, as an allocate-on-miss L1, so lines are "
        "replaced in miss order (measured on an H100); the models still treat the L1 "
        "as streaming (paper 001 footnote 2)",
    )
    set_index: Literal["linear", "fermi_hash"] = "linear"
    banks: int = Field(
        default=1, ge=1, description="tag lookups per cycle (GPGPU-Sim -gpgpu_l1_banks)"
    )
    hit_latency_cycles: int = Field(ge=1)
    coalescer: Literal["warp", "quarter_warp", "warp_sector"] = Field(
        default="warp",
        description="'warp': one request per line touched by the warp (Pascal and earlier); "
        "'quarter_warp': per 8-thread group, 32 B sectors (Volta and later, paper 004 III-A); "
        "'warp_sector': the whole warp's distinct 32 B sectors (GPGPU-Sim/Accel-Sim "
        "-gpgpu_coalesce_arch >= 40)",
    )
    unified_bytes: int | None = Field(
        default=None,
        ge=1024,
        description="adaptive L1/shared carve-out (GPGPU-Sim -gpgpu_adaptive_cache_config): "
        "unified L1 + shared memory per SM; per kernel the L1 gets the unified size minus "
        "the smallest shared_carveouts_bytes option that holds the kernel's shared memory "
        "(size_bytes / (ways x line_bytes) then gives only the number of sets; the ways "
        "follow from the carve-out). None = fixed L1 of size_bytes",
    )
    shared_carveouts_bytes: tuple[int, ...] = Field(
        default=(), description="shared memory carve-out options (-gpgpu_shmem_option)"
    )

    @model_validator(mode="after")
    def _geometry(self) -> L1Config:
        _check_geometry(self.size_bytes, self.ways, self.line_bytes, self.sector_bytes, "l1")
        if self.unified_bytes is not None:
            opts = self.shared_carveouts_bytes
            if not opts or list(opts) != sorted(opts) or opts[-1] >= self.unified_bytes:
                raise ValueError(
                    "l1.shared_carveouts_bytes must be sorted, non-empty and below "
                    f"l1.unified_bytes={self.unified_bytes} when the carve-out is adaptive"
                )
            if self.unified_bytes % (self.sets * self.line_bytes):
                raise ValueError("l1.unified_bytes is not a multiple of sets * line_bytes")
        return self

    @property
    def sets(self) -> int:
        return self.size_bytes // (self.ways * self.line_bytes)

    @property
    def request_bytes(self) -> int:
        """Bytes one L1 request to the L2 moves, and one MSHR entry covers: a sector of a
        sectored L1, else a line."""
        return self.sector_bytes if self.sectored else self.line_bytes


class L2Config(_Strict):
    size_bytes: int = Field(ge=1024, description="total over all banks")
    banks: int = Field(ge=1)
    ways: int = Field(ge=1)
    line_bytes: int = Field(default=128, ge=32)
    sector_bytes: int = Field(default=32, ge=4)
    sectored: bool = False
    mshr_per_bank: int = Field(
        default=128,
        ge=1,
        le=2**20,
        description="MSHR entries per bank, one per line in flight from DRAM; a miss that "
        "finds none free blocks its bank until one fills (GPGPU-Sim -gpgpu_cache:dl2 A:N)",
    )
    mshr_max_merge: int = Field(default=8, ge=1, le=2**31 - 1)
    write_policy: Literal["write_back", "write_through"] = "write_back"
    write_allocate: bool = True
    set_index: Literal["linear", "ipoly", "xor"] = Field(
        default="linear",
        description="set index within a bank: 'linear' (line mod sets), 'ipoly' or 'xor' "
        "(GPGPU-Sim -gpgpu_cache:dl2 set index P / X) on the partition address",
    )
    bank_interleave_bytes: int = Field(default=256, ge=32)
    bank_index: Literal["consecutive", "bitwise_xor", "ipoly", "pae", "random", "custom"] = Field(
        default="consecutive",
        description="memory partition (bank) index function of an address's "
        "bank_interleave_bytes chunk (GPGPU-Sim -gpgpu_memory_partition_indexing 0..5); "
        "'consecutive' = chunk mod banks",
    )
    sub_partition_bits: tuple[int, ...] | None = Field(
        default=None,
        description="address bits, lowest first, that pick the sub-partition (bank) within "
        "a DRAM channel, numbered in the address with the channel bits taken out (GPGPU-Sim: "
        "the lowest log2(banks / dram.channels) DRAM-bank bits of -gpgpu_mem_addr_mapping); "
        "None: the bits just above the bank_interleave_bytes offset",
    )
    hit_latency_ns: float = Field(gt=0)
    fetch_bytes: int | None = Field(
        default=None,
        ge=4,
        description="bytes a read miss of a sectored L2 fetches from DRAM: the aligned "
        "group of sectors around the missed one (CUDA's cudaLimitMaxL2FetchGranularity); "
        "None: one sector (the line when not sectored)",
    )
    fill_on_memcpy: bool = Field(
        default=False,
        description="host-to-device copies (MemcpyHtoD in kernelslist.g) leave the copied "
        "sectors in the L2, valid and clean, most recent last (GPGPU-Sim "
        "-gpgpu_perf_sim_memcpy, default 1); false: the copies do not touch the L2",
    )

    @model_validator(mode="after")
    def _geometry(self) -> L2Config:
        f = self.fetch_bytes
        if f is not None:
            unit = self.sector_bytes if self.sectored else self.line_bytes
            if f % unit or self.line_bytes % f:
                what = "a sector" if self.sectored else "the line, as the L2 is not sectored"
                raise ValueError(
                    f"l2.fetch_bytes={f} must be a whole number of {what} ({unit} B) and "
                    f"divide l2.line_bytes={self.line_bytes}: change l2.fetch_bytes (or none) "
                    "too"
                )
        if self.size_bytes % self.banks:
            raise ValueError(
                f"l2.size_bytes={self.size_bytes} is not a multiple of banks={self.banks}"
            )
        _check_geometry(
            self.size_bytes // self.banks, self.ways, self.line_bytes, self.sector_bytes, "l2 bank"
        )
        bits = self.sub_partition_bits
        if bits is not None and (
            list(bits) != sorted(set(bits)) or any(not 0 <= b < 63 for b in bits)
        ):
            raise ValueError(
                f"l2.sub_partition_bits={bits} must be increasing bit positions in 0..62"
            )
        return self

    @property
    def sets_per_bank(self) -> int:
        return self.size_bytes // (self.banks * self.ways * self.line_bytes)


def fifo_crossbar_packets_per_cycle(n_in: int, n_out: int) -> float:
    """Saturation throughput (packets/cycle) of an ``n_in x n_out`` crossbar with FIFO input queues.

    ``n_in + n_out - sqrt(n_in^2 + n_out^2)``: each input offers only its head-of-line
    packet and each output takes one packet per cycle, so under uniformly spread
    destinations a blocked head also blocks the packets behind it (head-of-line
    blocking). For ``n_in = n_out = N`` this is Karol, Hluchyj and Morgan's (IEEE Trans.
    Commun. 1987) ``(2 - sqrt 2) N = 0.586 N``; the form for ``n_in != n_out`` is its
    large-switch limit, which tends to ``min(n_in, n_out)`` when one side is much
    larger (checked against a Monte Carlo model of the switch in
    tests/test_config_noc.py). It is symmetric, so the request and the reply
    network of a crossbar between SMs and L2 banks saturate at the same rate.
    """
    if n_in < 1 or n_out < 1:
        raise ValueError(f"a crossbar needs >= 1 input and output, got {n_in} x {n_out}")
    return n_in + n_out - math.hypot(n_in, n_out)


class NoCConfig(_Strict):
    bandwidth_gbps: float = Field(gt=0, description="total L2-to-SM data bandwidth")
    sm_port_gbps: float | None = Field(default=None, gt=0, description="per-SM ejection port")
    latency_ns: float = Field(default=0.0, ge=0)
    sm_queue_requests: int = Field(
        default=512,
        ge=1,
        description=(
            "requests an SM's injection queue into the NoC holds (Accel-Sim "
            "-icnt_in_buffer_limit, packets; intersim2 input_buffer_size, flits of one-flit "
            "requests): paper 001 footnote 2's queue, which bounds a streaming L1's "
            "outstanding misses in place of #MSHRs"
        ),
    )
    fifo_crossbar: bool = Field(
        default=False,
        description=(
            "single-stage SM-L2 crossbar with FIFO input queues, one packet per port per "
            "cycle (Accel-Sim -network_mode 2): throughput capped by head-of-line blocking"
        ),
    )

    @model_validator(mode="after")
    def _fifo_needs_port(self) -> NoCConfig:
        if self.fifo_crossbar and self.sm_port_gbps is None:
            raise ValueError("fifo_crossbar needs sm_port_gbps (the bandwidth of one port)")
        return self


class DRAMConfig(_Strict):
    bandwidth_gbps: float = Field(gt=0)
    channels: int = Field(ge=1)
    latency_ns: float = Field(gt=0)
    atom_bytes: int = Field(default=32, ge=1, description="bytes per DRAM column command")
    activate_ns: float = Field(
        default=0.0,
        ge=0,
        description="row model: a transfer that opens a DRAM row occupies its channel at "
        "least this long (one activation at a time per channel, tRRD / tFAW; random "
        "accesses are limited by their number); 0: no row model, every transfer its bytes",
    )
    row_bytes: int = Field(default=1024, ge=32, description="bytes of a DRAM row per channel")
    banks: int = Field(default=16, ge=1, description="banks (open rows) per channel")


class GPUConfig(_Strict):
    name: str
    compute_capability: int = Field(
        ge=20, le=120, description="e.g. 61 for Pascal GP10x, 70 for Volta"
    )
    core_clock_mhz: float = Field(gt=0)
    n_sm: int = Field(ge=1, le=1024)
    warp_size: Literal[32] = 32
    sm: SMConfig
    latency: LatencyConfig = LatencyConfig()
    l1: L1Config
    l2: L2Config
    noc: NoCConfig
    dram: DRAMConfig
    kernel_launch_ns: float = Field(
        default=0.0,
        ge=0,
        le=1e6,
        description="fixed time of a kernel's launch and completion, added to every "
        "kernel's cycles (CPI stack 'launch'): the intercept of empty kernels' duration "
        "over their number of waves on the hardware (block dispatch overlaps running "
        "blocks); 0 as Accel-Sim with -gpgpu_kernel_launch_latency 0",
    )

    # ---- derived quantities in core cycles -------------------------------
    @property
    def core_clock_ghz(self) -> float:
        return self.core_clock_mhz / 1000.0

    @property
    def l2_hit_latency_cycles(self) -> float:
        return self.l2.hit_latency_ns * self.core_clock_ghz

    @property
    def dram_latency_cycles(self) -> float:
        return self.dram.latency_ns * self.core_clock_ghz

    @property
    def l2_fetch_sectors(self) -> int:
        """Sectors a read miss of the (sectored) L2 fetches: ``l2.fetch_bytes`` / sector."""
        if not self.l2.sectored or self.l2.fetch_bytes is None:
            return 1
        return self.l2.fetch_bytes // self.l2.sector_bytes

    @property
    def dram_activate_cycles(self) -> float:
        return self.dram.activate_ns * self.core_clock_ghz

    @property
    def kernel_launch_cycles(self) -> float:
        return self.kernel_launch_ns * self.core_clock_ghz

    @property
    def noc_latency_cycles(self) -> float:
        return self.noc.latency_ns * self.core_clock_ghz

    @property
    def noc_bytes_per_cycle(self) -> float:
        """Total NoC bandwidth in bytes per core cycle."""
        return self.noc.bandwidth_gbps / self.core_clock_ghz

    @property
    def dram_bytes_per_cycle(self) -> float:
        """Total DRAM bandwidth in bytes per core cycle."""
        return self.dram.bandwidth_gbps / self.core_clock_ghz

    @property
    def noc_effective_gbps(self) -> float:
        """L2-to-SM bandwidth usable by all SMs: :meth:`noc_gbps` of ``n_sm``."""
        return self.noc_gbps(self.n_sm)

    def noc_gbps(self, sms: int) -> float:
        """L2-to-SM bandwidth that ``sms`` active SMs can draw, GB/s.

        ``min(noc.bandwidth_gbps, sms x sm_port, l2.banks x sm_port)``: every reply
        crosses its SM's ejection port and leaves through its L2 bank's port, which
        serves one packet per cycle at the same rate (the cache simulation's bank port,
        :func:`mdm.memory.cachesim._l2_port_cycles`). With ``noc.fifo_crossbar`` also at most
        :func:`fifo_crossbar_packets_per_cycle` ``(sms, l2.banks) x sm_port`` (one
        packet per port per cycle, a port moving ``sm_port_gbps``).
        """
        if sms < 1:
            raise ValueError(f"sms must be >= 1, got {sms}")
        port = self.noc.sm_port_gbps
        if port is None:
            return self.noc.bandwidth_gbps
        bw = min(self.noc.bandwidth_gbps, sms * port, self.l2.banks * port)
        if self.noc.fifo_crossbar:
            bw = min(bw, fifo_crossbar_packets_per_cycle(sms, self.l2.banks) * port)
        return bw

    def with_updates(self, updates: dict[str, object]) -> GPUConfig:
        """A new validated config with dotted-path fields replaced, e.g. ``{"l1.mshr_entries": 64}``.

        A table given as a mapping (``{"l1": {"mshr_entries": 64}}``) updates the fields
        it names, as the dotted names do, and keeps the others. An unknown field or an
        invalid value raises :class:`ConfigError` naming the field.
        """
        data = self.model_dump()
        flat: dict[str, object] = {}
        for path, value in updates.items():
            if isinstance(value, dict) and isinstance(data.get(path), dict):
                flat.update(dotted_fields({path: value}))
            else:
                flat[path] = value
        for path, value in flat.items():
            node = data
            parts = path.split(".")
            for p in parts[:-1]:
                if not isinstance(node, dict) or p not in node:
                    raise ConfigError(None, unknown_field_message(path))
                node = node[p]
            if not isinstance(node, dict) or parts[-1] not in node:
                raise ConfigError(None, unknown_field_message(path))
            node[parts[-1]] = value
        try:
            new = GPUConfig.model_validate(data)
        except ValidationError as exc:
            raise translate_validation_error(exc, None) from None
        if (
            "l1.size_bytes" in flat
            and "l1.unified_bytes" not in flat
            and new.l1.unified_bytes is not None
        ):
            warnings.warn(
                MdmWarning(
                    "l1.size_bytes changes only the number of L1 sets where the L1/shared "
                    "carve-out is adaptive (l1.unified_bytes is set): a kernel's L1 holds "
                    "l1.unified_bytes minus its shared-memory carve-out. To change the L1's "
                    "capacity, set l1.unified_bytes (and l1.shared_carveouts_bytes), or "
                    "l1.unified_bytes=none for a fixed L1 of l1.size_bytes"
                ),
                stacklevel=2,
            )
        return new


def dotted_fields(data: dict[str, Any]) -> dict[str, Any]:
    """A nested configuration mapping flattened to ``{"l1.mshr_entries": 128, ...}``."""
    out: dict[str, Any] = {}

    def walk(prefix: str, node: dict[str, Any]) -> None:
        for k, v in node.items():
            if isinstance(v, dict):
                walk(f"{prefix}{k}.", v)
            else:
                out[prefix + k] = v

    walk("", data)
    return out


def schema_fields(model: type[BaseModel] | None = None, prefix: str = "") -> list[str]:
    """The dotted names of every field of :class:`GPUConfig` (or ``model``), in schema
    order: ``["name", ..., "l1.mshr_entries", ...]``."""
    out: list[str] = []
    for name, f in (model or GPUConfig).model_fields.items():
        sub = f.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            out += schema_fields(sub, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def closest_fields_hint(path: str) -> str:
    """``did you mean 'A' or 'B'?`` with the schema's dotted fields closest to ``path``
    (or those with its last name, in another section), or "" when there are none."""
    names = schema_fields()
    close = difflib.get_close_matches(path, names, n=3, cutoff=0.6)
    if not close:  # e.g. the right leaf under the wrong section: "mshr_entries"
        leaf = path.rsplit(".", 1)[-1]
        close = [n for n in names if n.rsplit(".", 1)[-1] == leaf][:3]
    return f"did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def unknown_field_message(path: str) -> str:
    """``unknown configuration field 'PATH'``, with :func:`closest_fields_hint`."""
    hint = closest_fields_hint(path)
    return f"unknown configuration field {path!r}" + (f"; {hint}" if hint else "")


def translate_validation_error(exc: Exception, path: str | Path | None) -> ConfigError:
    """One :class:`ConfigError` naming ``path`` and every bad field as a dotted path.

    ``exc`` is a pydantic :class:`ValidationError` (other exceptions are wrapped as is).
    """
    if not isinstance(exc, ValidationError):
        return ConfigError(path, str(exc))
    parts = []
    for err in exc.errors():
        field = ".".join(str(x) for x in err["loc"]) or "(top level)"
        if err["type"] == "extra_forbidden":
            why = "unknown key"
            hint = closest_fields_hint(field)
            if hint:
                why += f"; {hint}"
        elif err["type"] == "missing":
            why = "required field missing"
        else:
            why = err["msg"].removeprefix("Value error, ")
            if "input" in err and not isinstance(err["input"], dict):
                why += f" (got {err['input']!r})"
        parts.append(f"field {field!r}: {why}")
    if sum(err["type"] == "missing" for err in exc.errors()) > 3:  # a file written from scratch
        parts.append(
            'hint: start from a preset with base = "PRESET" and only the fields that '
            "differ, or export one to edit with `mdm config show PRESET --out FILE`"
        )
    return ConfigError(path, "; ".join(parts))


def _check_geometry(size: int, ways: int, line: int, sector: int, what: str) -> None:
    if size % (ways * line):
        raise ValueError(f"{what}: size {size} B is not a multiple of ways*line = {ways}*{line}")
    if line % sector:
        raise ValueError(f"{what}: line_bytes {line} is not a multiple of sector_bytes {sector}")
    if line & (line - 1):
        raise ValueError(f"{what}: line_bytes {line} must be a power of two")
