"""Time every registered model on a synthetic representative warp.

Usage: python benchmarks/bench_models.py [--intervals N] [--repeat R] [--kernel-ctas C]
Prints, per model, the best wall time of one ``predict_kernel`` call and the
intervals processed per second. The profile is random (seeded) with MD and NMD
intervals; the kernel has a tail wave so that each interval model runs twice.

``--kernel-ctas C`` (> 0) also times what a sweep pays per configuration once a
kernel is prepared and its caches simulated: :func:`mdm.pipeline.predict_app` with
every model on the built-in stride kernel of ``C`` blocks (16,384: 6.2 M warp
instructions) on ``mdm_pascal`` (the interval profile of the representative warp, the
occupancy, the models). It should not grow with the kernel: until 2026-11-27 the
profile scanned the whole kernel's registers at every call (22 ms on this kernel).
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
    ap.add_argument("--kernel-ctas", type=int, default=0)
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
    if args.kernel_ctas > 0:
        per_configuration(args.kernel_ctas, args.repeat)


def per_configuration(ctas: int, repeat: int) -> None:
    """Best time of :func:`mdm.pipeline.predict_app` (every model) on a prepared,
    cache-simulated built-in stride kernel of ``ctas`` blocks."""
    from mdm.config.load import load_gpu
    from mdm.memory import simulate_app
    from mdm.pipeline import predict_app, prepare
    from mdm.traces.workloads import generate

    app = generate("stride", ctas=ctas)
    gpu = load_gpu("mdm_pascal")
    prepared = prepare(app)
    cache = simulate_app(app, gpu)
    names = sorted(MODELS)
    predict_app(prepared, gpu, names, cache=cache)  # imports, numba's cache
    best = float("inf")
    for _ in range(max(repeat, 3)):
        t0 = time.perf_counter()
        predict_app(prepared, gpu, names, cache=cache)
        best = min(best, time.perf_counter() - t0)
    n = sum(k.total_warp_insts for k in prepared.kernels)
    print(
        f"per configuration, stride with {ctas} CTAs ({n / 1e6:.1f} M warp instructions), "
        f"{len(names)} models: {best * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
