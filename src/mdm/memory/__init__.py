"""memory stage of the mdm pipeline: coalescer, block scheduling, L1/L2 cache simulator."""

from mdm.memory.cachesim import (
    TIMING_FIELDS,
    AppSimulator,
    cache_key,
    simulate_app,
    simulate_kernel,
    with_timing_of,
)
from mdm.memory.stats import CacheSimResult, KernelCacheStats, PCStats, WarpMemTrace

__all__ = [
    "TIMING_FIELDS",
    "AppSimulator",
    "CacheSimResult",
    "KernelCacheStats",
    "PCStats",
    "WarpMemTrace",
    "cache_key",
    "simulate_app",
    "simulate_kernel",
    "with_timing_of",
]
