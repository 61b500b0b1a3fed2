"""Adaptive L1 / shared-memory carve-out of Volta and later (per kernel).

GPGPU-Sim 4.x ``shader_core_config::max_cta`` with ``-gpgpu_adaptive_cache_config 1``
(the rule Accel-Sim's SM7_QV100 runs use, reference README section 3):

1. ``result`` = resident blocks per SM from the SM's resources
   (:func:`mdm.profile.occupancy.occupancy`), then, when the grid cannot fill every SM
   (``n_blocks < result * n_sm``), ``ceil(n_blocks / n_sm)``;
2. ``total_shmem = (kernel shared memory per block + sm.shared_mem_reserved_per_block_bytes)
   * result`` (the driver's reservation, 1 KB per block on Ampere and Hopper; zero in
   GPGPU-Sim);
3. the carve-out is the first (smallest) ``-gpgpu_shmem_option`` ``>= total_shmem``;
4. L1 ways = ``int(max_ways * (1 - carve / unified) + 0.5)`` (round to nearest), where
   ``max_ways`` = ways of the whole unified array at the configured number of sets
   (``unified / (sets * line)``; GPGPU-Sim's ``get_max_assoc()``, 4x the configured
   associativity, equals it for the shipped configs). The number of sets is unchanged.
"""

from __future__ import annotations

from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError
from mdm.memory.schedule import resident_blocks
from mdm.traces.model import KernelTrace


def carveout_blocks(kernel: KernelTrace, gpu: GPUConfig, blocks_per_sm: int | None = None) -> int:
    """GPGPU-Sim's ``max_cta`` result (step 1): resident blocks, clamped by the grid."""
    bps = blocks_per_sm if blocks_per_sm is not None else resident_blocks(kernel, gpu)
    n_blocks = max(int(kernel.n_blocks), 1)
    if n_blocks < bps * gpu.n_sm:
        bps = -(-n_blocks // gpu.n_sm)
    return bps


def adaptive_l1_ways(shared_bytes_per_sm: int, gpu: GPUConfig) -> int:
    """L1 ways for ``shared_bytes_per_sm`` of shared memory in use (steps 3 and 4)."""
    l1 = gpu.l1
    if l1.unified_bytes is None:
        return l1.ways
    for carve in l1.shared_carveouts_bytes:
        if shared_bytes_per_sm <= carve:
            break
    else:
        raise ConfigError(
            None,
            f"{gpu.name}: {shared_bytes_per_sm} B of shared memory per SM exceed the largest "
            f"carve-out {l1.shared_carveouts_bytes[-1]} B",
        )
    max_ways = l1.unified_bytes // (l1.sets * l1.line_bytes)
    ways = int(max_ways * (1.0 - carve / l1.unified_bytes) + 0.5)
    if ways < 1:
        raise ConfigError(None, f"{gpu.name}: a {carve} B carve-out leaves no L1 way")
    return ways


def kernel_l1_ways(kernel: KernelTrace, gpu: GPUConfig, blocks_per_sm: int | None = None) -> int:
    """L1 ways ``kernel`` runs with on ``gpu`` (``l1.ways`` unless the carve-out is adaptive)."""
    if gpu.l1.unified_bytes is None:
        return gpu.l1.ways
    per_block = int(kernel.shmem_bytes) + gpu.sm.shared_mem_reserved_per_block_bytes
    return adaptive_l1_ways(per_block * carveout_blocks(kernel, gpu, blocks_per_sm), gpu)


def l1_may_allocate_on_fill(gpu: GPUConfig) -> bool:
    """Whether some kernel's L1 allocates on fill on ``gpu``: ``l1.allocate_on ==
    'fill'`` with ``l1.streaming_tags == 'fill'`` (:func:`kernel_allocates_on_fill`
    decides per kernel). The cache simulator's issue loop is compiled with the streaming
    L1's code only where this holds."""
    return gpu.l1.allocate_on == "fill" and gpu.l1.streaming_tags == "fill"


def kernel_allocates_on_fill(
    kernel: KernelTrace, gpu: GPUConfig, blocks_per_sm: int | None = None
) -> bool:
    """Whether the L1 allocates on fill for ``kernel``: ``l1.allocate_on == 'fill'`` with
    ``l1.streaming_tags == 'fill'``, except that with the adaptive carve-out a kernel
    without shared memory allocates on miss (GPGPU-Sim ``max_cta``: a streaming L1 that
    has the whole unified array is switched to ``ON_MISS``, otherwise to ``ON_FILL``)."""
    if not l1_may_allocate_on_fill(gpu):
        return False
    if gpu.l1.unified_bytes is None:
        return True
    return int(kernel.shmem_bytes) * carveout_blocks(kernel, gpu, blocks_per_sm) > 0
