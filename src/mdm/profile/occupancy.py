"""Thread-block occupancy of a kernel on a GPU, following GPGPU-Sim's ``max_cta``.

Blocks per SM = min over the resources (GPGPU-Sim ``shader_core_config::max_cta``, the
reference simulator, extended with the warp-slot limit of real GPUs):

* threads: ``sm.max_threads // padded`` with the block padded to whole warps;
* warps: ``sm.max_warps // warps_per_block``;
* blocks: ``sm.max_blocks``;
* registers: ``sm.registers // (warps_per_block * regs_per_warp)`` with
  ``regs_per_warp = ceil(32 * nregs / g) * g``, ``g = sm.register_alloc_granularity``.
  ``g = 128`` is exactly GPGPU-Sim's rounding of registers per thread up to a multiple
  of 4; ``g = 256`` is the CUDA occupancy calculator's per-warp unit. ``nregs = 0``
  means "unknown": no register limit (as in GPGPU-Sim);
* shared memory: ``sm.shared_mem_bytes // block_shared_bytes`` (:func:`block_shared_bytes`:
  ``ceil(shmem / g_s) * g_s`` plus the driver's reservation per block,
  ``sm.shared_mem_reserved_per_block_bytes``, 1 KB on Ampere and Hopper) when that is
  above 0.

``nregs`` above the architectural maximum of 255 registers per thread occurs in real
traces (the corpus trace declares ``-nregs = 21955``). Policy, chosen by the caller:
``"error"`` (default) raises :class:`MdmError`, ``"clamp"`` uses 255, ``"ignore"`` treats
the count as unknown (no register limit). A kernel that fits no block on an SM raises
:class:`MdmError` naming the limiting resource.

Waves: ``active_sms = min(n_sm, n_blocks)``, ``waves = ceil(n_blocks / (blocks_per_sm *
n_sm))`` and ``fractional_waves = n_blocks / (blocks_per_sm * n_sm)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from mdm.config.gpu import GPUConfig
from mdm.errors import MdmError

if TYPE_CHECKING:
    from mdm.traces.model import KernelTrace

__all__ = ["MAX_REGS_PER_THREAD", "Occupancy", "occupancy"]

MAX_REGS_PER_THREAD = 255
_ORDER = ("threads", "warps", "blocks", "registers", "shared_memory")


@dataclass(frozen=True)
class Occupancy:
    """Resident blocks and warps of one kernel per SM, and its waves over the GPU."""

    blocks_per_sm: int
    warps_per_block: int
    warps_per_sm: int
    limiting: str
    limited_by: tuple[str, ...]
    active_sms: int
    waves: int
    fractional_waves: float
    nregs_used: int


def block_shared_bytes(gpu: GPUConfig, shmem_bytes: int) -> int:
    """Shared memory one resident block takes: ``shmem_bytes`` rounded up to
    ``sm.shared_mem_alloc_granularity``, plus ``sm.shared_mem_reserved_per_block_bytes``
    (CUDA reserves 1 KB per block from compute capability 8.0, whether or not the kernel
    uses shared memory; the CUDA occupancy calculator does the same)."""
    gs = gpu.sm.shared_mem_alloc_granularity
    return -(-int(shmem_bytes) // gs) * gs + gpu.sm.shared_mem_reserved_per_block_bytes


class DoesNotFit(MdmError):
    """A kernel's block does not fit on the configuration's SM (threads, warps,
    registers or shared memory): no prediction exists for that kernel there. A sweep
    records its points as skipped with this reason rather than stopping."""


def occupancy(
    gpu: GPUConfig,
    threads_per_block: int,
    nregs: int,
    shmem_bytes: int,
    n_blocks: int,
    *,
    nregs_policy: Literal["error", "clamp", "ignore"] = "error",
) -> Occupancy:
    """Occupancy of a kernel of ``n_blocks`` blocks of ``threads_per_block`` threads."""
    if threads_per_block < 1:
        raise MdmError(f"threads_per_block={threads_per_block}: expected at least 1")
    if threads_per_block > gpu.sm.max_threads:
        raise DoesNotFit(
            f"threads_per_block={threads_per_block}: expected 1..{gpu.sm.max_threads} "
            f"(sm.max_threads of {gpu.name})"
        )
    if n_blocks < 1:
        raise MdmError(f"n_blocks={n_blocks}: expected at least one block")
    if shmem_bytes < 0 or nregs < 0:
        raise MdmError(f"nregs={nregs}, shmem_bytes={shmem_bytes}: expected non-negative values")
    if nregs > MAX_REGS_PER_THREAD:
        if nregs_policy == "error":
            raise MdmError(
                f"nregs={nregs} exceeds the architectural maximum of {MAX_REGS_PER_THREAD} "
                "registers per thread (garbage in the trace header?); pass "
                "nregs_policy='clamp' or 'ignore'"
            )
        nregs = MAX_REGS_PER_THREAD if nregs_policy == "clamp" else 0
    sm = gpu.sm
    warp = gpu.warp_size
    warps_per_block = -(-threads_per_block // warp)
    unlimited = 1 << 62
    limits = {
        "threads": sm.max_threads // (warps_per_block * warp),
        "warps": sm.max_warps // warps_per_block,
        "blocks": sm.max_blocks,
        "registers": unlimited,
        "shared_memory": unlimited,
    }
    if nregs > 0:
        g = sm.register_alloc_granularity
        regs_per_warp = -(-(warp * nregs) // g) * g
        limits["registers"] = sm.registers // (warps_per_block * regs_per_warp)
    per_block = block_shared_bytes(gpu, shmem_bytes)
    if per_block > 0:
        limits["shared_memory"] = sm.shared_mem_bytes // per_block
    bps = min(limits.values())
    limited_by = tuple(k for k in _ORDER if limits[k] == bps)
    if bps < 1:
        raise DoesNotFit(
            f"a block of {threads_per_block} threads, {nregs} registers/thread and "
            f"{shmem_bytes} B shared memory does not fit on an SM of {gpu.name} "
            f"(limited by {', '.join(limited_by)})"
        )
    per_wave = bps * gpu.n_sm
    return Occupancy(
        blocks_per_sm=bps,
        warps_per_block=warps_per_block,
        warps_per_sm=bps * warps_per_block,
        limiting=limited_by[0],
        limited_by=limited_by,
        active_sms=min(gpu.n_sm, n_blocks),
        waves=math.ceil(n_blocks / per_wave),
        fractional_waves=n_blocks / per_wave,
        nregs_used=nregs,
    )


def kernel_occupancy(
    gpu: GPUConfig,
    kernel: KernelTrace,
    nregs_policy: Literal["error", "clamp", "ignore"] = "error",
) -> Occupancy:
    """:func:`occupancy` of a traced kernel launch (its block size, registers, shared
    memory and grid); an error names the kernel (ID and name) before its reason."""
    try:
        return occupancy(
            gpu,
            kernel.threads_per_block,
            kernel.nregs,
            kernel.shmem_bytes,
            max(kernel.n_blocks, 1),
            nregs_policy=nregs_policy,
        )
    except MdmError as exc:
        raise type(exc)(f"kernel {kernel.kernel_id} ({kernel.name}): {exc}") from None
