"""Consistent :class:`KernelInput` objects built from a hand-written profile.

For examples, what-if studies and tests: every warp of the kernel is assumed to
behave like the given representative warp, and the cache statistics and the
instruction mix are derived from its interval columns:

* L1 read misses = ``n_warps x sum(M^Read)`` (no L1 read hits unless
  ``l1_read_hits`` is given), L1 writes = ``n_warps x sum(M^Write)``, L2 accesses
  = their sum, L2 misses and DRAM bytes from the per-interval LLC miss ratio;
* the mix counts one global load per interval with ``M^Read > 0`` and one store
  per interval with ``M^Write > 0``; a load with more than one request is
  uncoalesced, ``requests_per_uncoalesced`` is the mean of those requests.
"""

from __future__ import annotations

from mdm.config.gpu import GPUConfig
from mdm.memory.stats import KernelCacheStats
from mdm.models.base import InstructionMix, KernelInput
from mdm.models.roofline import l2_access_bytes, request_bytes
from mdm.profile.intervals import IntervalProfile


def pascal_like(
    name: str = "pascal-like",
    l2_hit_latency_ns: float = 100 / 1.4,
    dram_latency_ns: float = 220 / 1.4,
) -> dict:
    """A small Pascal-like :class:`GPUConfig` mapping (paper 001 Table III sizes) for
    examples, tests and benchmarks; validate it with ``GPUConfig.model_validate``."""
    return {
        "name": name,
        "compute_capability": 61,
        "core_clock_mhz": 1400,
        "n_sm": 28,
        "sm": {
            "max_threads": 2048,
            "max_warps": 64,
            "max_blocks": 32,
            "registers": 65536,
            "shared_mem_bytes": 98304,
            "schedulers": 4,
        },
        "l1": {"size_bytes": 49152, "ways": 6, "mshr_entries": 128, "hit_latency_cycles": 20},
        "l2": {
            "size_bytes": 3 * 1024 * 1024,
            "banks": 24,
            "ways": 8,
            "hit_latency_ns": l2_hit_latency_ns,
        },
        "noc": {"bandwidth_gbps": 1050},
        "dram": {"bandwidth_gbps": 480, "channels": 24, "latency_ns": dram_latency_ns},
    }


def mix_from_profile(profile: IntervalProfile) -> InstructionMix:
    """Approximate per-warp instruction mix of ``profile`` (module docstring)."""
    loads = profile.read_misses > 0
    stores = profile.write_reqs > 0
    n_loads = float(loads.sum())
    n_stores = float(stores.sum())
    uncoal = loads & (profile.read_misses > 1)
    n_uncoal = float(uncoal.sum())
    return InstructionMix(
        total=profile.total_insts,
        compute=max(0.0, profile.total_insts - n_loads - n_stores),
        global_loads=n_loads,
        global_stores=n_stores,
        shared=0.0,
        barriers=0.0,
        coalesced_mem=n_loads + n_stores - n_uncoal,
        uncoalesced_mem=n_uncoal,
        requests_per_uncoalesced=float(profile.read_misses[uncoal].mean()) if n_uncoal else 1.0,
    )


def kernel_input_from_profile(
    gpu: GPUConfig,
    profile: IntervalProfile,
    *,
    warps_per_sm: int,
    active_sms: int,
    warps_per_block: int = 1,
    n_blocks: int | None = None,
    l1_read_hits: int = 0,
    name: str = "synthetic",
    mix: InstructionMix | None = None,
) -> KernelInput:
    """A :class:`KernelInput` whose every warp is ``profile`` (one full wave by default)."""
    if warps_per_sm % warps_per_block:
        raise ValueError(
            f"warps_per_sm={warps_per_sm} is not a multiple of warps_per_block={warps_per_block}"
        )
    blocks_per_sm = warps_per_sm // warps_per_block
    if n_blocks is None:
        n_blocks = blocks_per_sm * active_sms
    n_warps = n_blocks * warps_per_block
    reads = float(profile.read_misses.sum())
    writes = float(profile.write_reqs.sum())
    dram_reads = float((profile.read_misses * profile.l2_miss_rate).sum())
    dram_writes = float((profile.write_reqs * profile.l2_miss_rate).sum())
    rb = request_bytes(gpu)
    r_miss = round(n_warps * reads)
    w_acc = round(n_warps * writes)
    cache = KernelCacheStats(
        kernel_id=0,
        name=name,
        l1_read_accesses=r_miss + l1_read_hits,
        l1_read_hits=l1_read_hits,
        l1_read_misses=r_miss,
        l1_write_accesses=w_acc,
        l2_accesses=(r_miss + w_acc) * max(rb // l2_access_bytes(gpu), 1),  # per L2 sector
        l2_misses=round(n_warps * (dram_reads + dram_writes)),
        l2_read_accesses=r_miss,
        l2_read_misses=round(n_warps * dram_reads),
        dram_read_bytes=round(n_warps * dram_reads * rb),
        l2_mshr_allocations=round(n_warps * dram_reads),  # a fetch per request, none shared
        dram_write_bytes=round(n_warps * dram_writes * rb),
    )
    total = round(n_warps * profile.total_insts)
    return KernelInput(
        name=name,
        gpu=gpu,
        profile=profile,
        warps_per_sm=warps_per_sm,
        blocks_per_sm=blocks_per_sm,
        active_sms=active_sms,
        n_blocks=n_blocks,
        warps_per_block=warps_per_block,
        total_warp_insts=total,
        total_thread_insts=total * gpu.warp_size,
        mix=mix if mix is not None else mix_from_profile(profile),
        cache=cache,
    )


__all__ = ["kernel_input_from_profile", "mix_from_profile"]
