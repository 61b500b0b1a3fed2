"""Time every registered model on a synthetic representative warp.

Usage: python benchmarks/bench_models.py [--intervals N] [--repeat R]
Prints, per model, the best wall time of one ``predict_kernel`` call and the
intervals processed per second. The profile is random (seeded) with MD and NMD
intervals; the kernel has a tail wave so that each interval model runs twice.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mdm.config.gpu import GPUConfig
from mdm.models import _load_builtin  # noqa: F401
from mdm.models.base import MODELS, get_model
from mdm.models.synthetic import kernel_input_from_profile, pascal_like
from mdm.profile.intervals import IntervalProfile

CFG = pascal_like("bench")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--intervals", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    k = args.intervals
    prof = IntervalProfile(
        n_insts=rng.integers(1, 40, k).astype(np.float64),
        stall=rng.integers(0, 600, k).astype(np.float64),
        read_misses=rng.choice([0.0, 1.0, 4.0, 32.0], k),
        write_reqs=rng.choice([0.0, 0.0, 1.0], k),
        l2_miss_rate=rng.random(k),
    )
    gpu = GPUConfig.model_validate(CFG)
    inp = kernel_input_from_profile(
        gpu, prof, warps_per_sm=64, active_sms=28, warps_per_block=4, n_blocks=16 * 28 * 3 + 7
    )
    print(f"{k} intervals, waves={inp.waves:.2f}")
    for name in sorted(MODELS):
        model = get_model(name)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            p = model.predict_kernel(inp)
            best = min(best, time.perf_counter() - t0)
        print(
            f"{name:10s} {best * 1e3:9.2f} ms  {k / best / 1e6:8.2f} M intervals/s  "
            f"cycles={p.cycles:.4g}"
        )


if __name__ == "__main__":
    main()
