"""Time the interval profile of every warp and the representative-warp selection.

Prints figures only (no assertions). Usage:
    python benchmarks/bench_profile.py [--warps 100000] [--insts 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mdm.profile.interval import interval_profile, warp_summaries
from mdm.profile.representative import select_from_summaries
from mdm.traces.model import MAX_DST, MAX_SRC, InstrClass, KernelTrace


def synthetic_kernel(n_warps: int, insts: int, seed: int = 0) -> KernelTrace:
    """Random register dependencies over 32 registers, 10% global loads."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(insts // 2, insts * 3 // 2, n_warps)
    n = int(lengths.sum())
    iclass = np.where(rng.random(n) < 0.1, InstrClass.LD_GLOBAL, InstrClass.FP32).astype(np.uint8)
    dst = np.full((n, MAX_DST), -1, np.int16)
    src = np.full((n, MAX_SRC), -1, np.int16)
    dst[:, 0] = rng.integers(0, 32, n)
    src[:, :2] = rng.integers(0, 32, (n, 2))
    return KernelTrace(
        name="bench",
        kernel_id=1,
        grid=(n_warps, 1, 1),
        block=(32, 1, 1),
        nregs=32,
        shmem_bytes=0,
        binary_version=61,
        warp_ptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        warp_block=np.arange(n_warps, dtype=np.int32),
        warp_id=np.zeros(n_warps, np.int32),
        pc=(np.arange(n) % 1000 * 16).astype(np.uint32),
        opcode=iclass.astype(np.uint16),
        iclass=iclass,
        mask=np.full(n, 0xFFFFFFFF, np.uint32),
        dst=dst,
        src=src,
        mem_width=np.zeros(n, np.uint8),
        line=np.full(n, -1, np.int32),
        addr_ptr=np.zeros(n + 1, np.int64),
        addrs=np.zeros(0, np.uint64),
        opcodes=tuple(c.name for c in InstrClass),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warps", type=int, default=100_000)
    ap.add_argument("--insts", type=int, default=100)
    a = ap.parse_args()
    k = synthetic_kernel(a.warps, a.insts)
    warp_summaries(synthetic_kernel(2, 10))  # JIT warm-up
    interval_profile(synthetic_kernel(2, 10), 0)
    t0 = time.perf_counter()
    n, s = warp_summaries(k)
    t1 = time.perf_counter()
    rep = select_from_summaries(n, s)
    t2 = time.perf_counter()
    p = interval_profile(k, rep)
    t3 = time.perf_counter()
    print(f"warps={k.n_warps} instructions={k.n_instructions}")
    print(
        f"profile every warp: {t1 - t0:.3f} s ({k.n_instructions / (t1 - t0) / 1e6:.1f} M inst/s)"
    )
    print(f"k-means selection:  {t2 - t1:.3f} s (rep warp {rep})")
    print(f"rep warp profile:   {(t3 - t2) * 1e3:.2f} ms ({p.n_intervals} intervals)")


if __name__ == "__main__":
    main()
