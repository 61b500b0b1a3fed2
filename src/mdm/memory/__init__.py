"""memory stage of the mdm pipeline: coalescer, block scheduling, L1/L2 cache simulator."""

from mdm.memory.cachesim import AppSimulator, cache_key, simulate_app, simulate_kernel
from mdm.memory.stats import CacheSimResult, KernelCacheStats, PCStats, WarpMemTrace

__all__ = [
    "AppSimulator",
    "CacheSimResult",
    "KernelCacheStats",
    "PCStats",
    "WarpMemTrace",
    "cache_key",
    "simulate_app",
    "simulate_kernel",
]
