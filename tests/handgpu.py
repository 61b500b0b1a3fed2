"""Test helper: a small hand-written Pascal-like configuration."""

from __future__ import annotations

from mdm.config.gpu import DRAMConfig, GPUConfig, L1Config, L2Config, NoCConfig, SMConfig


def hand_gpu(n_sm: int) -> GPUConfig:
    """``n_sm`` SMs of 64 warps and 4 schedulers, a 16 KiB L1, a 64 KiB L2 of 2 banks,
    100 GB/s NoC and 50 GB/s DRAM at 1 GHz (figures chosen for hand-worked tests)."""
    return GPUConfig(
        name="hand",
        compute_capability=61,
        core_clock_mhz=1000.0,
        n_sm=n_sm,
        sm=SMConfig(
            max_threads=2048,
            max_warps=64,
            max_blocks=32,
            registers=65536,
            shared_mem_bytes=98304,
            schedulers=4,
        ),
        l1=L1Config(size_bytes=16384, ways=4, mshr_entries=32, hit_latency_cycles=20),
        l2=L2Config(size_bytes=65536, banks=2, ways=8, hit_latency_ns=100.0),
        noc=NoCConfig(bandwidth_gbps=100.0),
        dram=DRAMConfig(bandwidth_gbps=50.0, channels=2, latency_ns=200.0),
    )
