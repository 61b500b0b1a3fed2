"""Speed of the cache simulator: accesses per second per core and peak RSS.

Generates a large built-in workload (``mdm.traces.workloads.generate``; default the
memory-divergent ``stride`` kernel, GS = 32: one 128 B line per lane), warms numba up on
a small one (compilation excluded), then times on one core (numba is single-threaded
here):

* ``coalesce+sim``: :func:`mdm.memory.simulate_app` as the pipeline calls it;
* ``sim only``: the same minus the coalescer's time (measured separately);
* ``reused inputs``: a second configuration point of a sweep, which reuses the
  coalesced requests, their L2 mapping and the per-PC grouping (``cachesim``'s
  per-kernel input cache) and stores them in the issue order the first simulation
  observed (a one-time gather); the cold figures above clear that cache first;
* ``repeated``: the third and later points with the same SM count and occupancy,
  which is what every further point of a sweep costs.

``--all`` instead times every built-in workload at a size of 2-13 M L1 accesses
(:data:`ALL_SIZES`): a trace's first simulation (coalescing included) and a repeated one,
in L1 accesses and in warp instructions per second. The stride kernel is among the
fastest per access: its loads touch 32 lines each, so the cost of a memory instruction is
spread over 32 accesses, while a coalesced load makes one.

Figures only, no assertions. Usage::

    python benchmarks/bench_cachesim.py [--workload stride] [--ctas 16384] [--gpu mdm_pascal] [--sweep-like]
    python benchmarks/bench_cachesim.py --all [--gpu mdm_pascal]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from mdm.config.gpu import GPUConfig
from mdm.config.load import load_gpu
from mdm.memory import cachesim
from mdm.memory.coalesce import coalesce, global_memory_instructions
from mdm.traces.workloads import generate

#: ``--all``: every built-in workload, sized for 2-13 M L1 accesses on ``mdm_pascal``
#: (the generators' defaults are 100x smaller)
ALL_SIZES: dict[str, dict[str, int]] = {
    "stride": {"ctas": 16384},
    "spmv_csr": {"ctas": 13440},
    "gather": {"ctas": 20000},
    "kmeans": {"ctas": 5376},
    "bfs": {"ctas": 16384},
    "vecadd": {"ctas": 28672},
    "stencil2d": {"W": 4096, "H": 1792},
    "gemm_tiled": {"M": 1792, "N": 2048, "K": 64},
    "transpose": {"W": 8192, "H": 4096},
}


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="stride")
    ap.add_argument("--ctas", type=int, default=16384)
    ap.add_argument("--gpu", default="mdm_pascal")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument(
        "--sweep-like", action="store_true", help="also time repeated reference simulations"
    )
    ap.add_argument("--all", action="store_true", help="every built-in workload (ALL_SIZES)")
    a = ap.parse_args()
    gpu = load_gpu(a.gpu)
    if a.all:
        all_workloads(gpu, a.repeat)
        return
    # warm-up: compile every numba function on a small instance
    small = generate(a.workload, ctas=64)
    for _ in range(3):  # first, second (stores the issue order) and later simulations
        cachesim.simulate_app(small, gpu)
    t0 = time.perf_counter()
    app = generate(a.workload, ctas=a.ctas)
    gen_s = time.perf_counter() - t0
    rss0 = _peak_rss_mb()
    l1 = gpu.l1
    best_coal = best_all = best_warm = best_rep = np.inf
    n_acc = 0
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        for k in app.kernels:
            inst = global_memory_instructions(k)
            coalesce(k, l1.line_bytes, l1.sector_bytes, l1.coalescer, inst)
        best_coal = min(best_coal, time.perf_counter() - t0)
        cachesim.clear_input_cache()
        t0 = time.perf_counter()
        res = cachesim.simulate_app(app, gpu)
        best_all = min(best_all, time.perf_counter() - t0)
        t0 = time.perf_counter()
        cachesim.simulate_app(app, gpu)
        best_warm = min(best_warm, time.perf_counter() - t0)
        t0 = time.perf_counter()
        cachesim.simulate_app(app, gpu)
        best_rep = min(best_rep, time.perf_counter() - t0)
        tot = res.total()
        n_acc = tot.l1_read_accesses + tot.l1_write_accesses
    best_sim = best_all - best_coal
    n_inst = sum(k.n_instructions for k in app.kernels)
    print(
        f"workload {a.workload} ctas={a.ctas} on {gpu.name}: {n_inst:,} warp instructions, "
        f"{n_acc:,} L1 accesses ({tot.l2_accesses:,} L2), generated in {gen_s:.1f} s"
    )
    print(f"  sim only       {best_sim:7.2f} s  {n_acc / best_sim / 1e6:7.2f} M accesses/s/core")
    print(f"  coalesce+sim   {best_all:7.2f} s  {n_acc / best_all / 1e6:7.2f} M accesses/s/core")
    print(f"  reused inputs  {best_warm:7.2f} s  {n_acc / best_warm / 1e6:7.2f} M accesses/s/core")
    print(f"  repeated       {best_rep:7.2f} s  {n_acc / best_rep / 1e6:7.2f} M accesses/s/core")
    print(f"  peak RSS {_peak_rss_mb():.0f} MB (after generating the trace: {rss0:.0f} MB)")
    if a.sweep_like:
        sweep_like()


def all_workloads(gpu: GPUConfig, repeat: int) -> None:
    """Every workload of :data:`ALL_SIZES`: best of ``repeat`` first simulations
    (coalescing included, input cache cleared) and third simulations of the layout."""
    for name, size in ALL_SIZES.items():
        small = {"ctas": size["ctas"] // 64} if "ctas" in size else {}  # else defaults
        for _ in range(3):  # compile, and store the small trace's issue order
            cachesim.simulate_app(generate(name, **small), gpu)
        app = generate(name, **size)
        first = rep = np.inf
        for _ in range(repeat):
            cachesim.clear_input_cache()
            t0 = time.perf_counter()
            res = cachesim.simulate_app(app, gpu)
            first = min(first, time.perf_counter() - t0)
            cachesim.simulate_app(app, gpu)
            t0 = time.perf_counter()
            cachesim.simulate_app(app, gpu)
            rep = min(rep, time.perf_counter() - t0)
        tot = res.total()
        n_acc = tot.l1_read_accesses + tot.l1_write_accesses
        n_inst = sum(k.n_instructions for k in app.kernels)
        print(
            f"{name:10s} {n_acc / 1e6:5.1f} M L1 accesses (miss rate {tot.l1_miss_rate:.2f}), "
            f"{n_inst / 1e6:5.1f} M warp insts | first {n_acc / first / 1e6:5.1f} M acc/s "
            f"{n_inst / first / 1e6:5.1f} M insts/s | repeated {n_acc / rep / 1e6:5.1f} M acc/s "
            f"{n_inst / rep / 1e6:5.1f} M insts/s",
            flush=True,
        )


def sweep_like() -> None:
    """Per-simulation time of spmv_csr (reference trace) as in a sweep: the same layout
    (SM count) simulated again at other DRAM bandwidths, from the third simulation on
    (the first two pay input preparation and the issue-order storage)."""
    import warnings
    from pathlib import Path

    from mdm.config.accelsim import import_accelsim
    from mdm.traces import open_trace

    ref = Path(__file__).resolve().parents[2] / "shared" / "reference"
    if not ref.is_dir():
        print(f"  sweep-like: {ref} not found, skipped")
        return
    app = open_trace(ref / "traces" / "sm61" / "spmv_csr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = import_accelsim(ref / "configs" / "mdm_pascal" / "gpgpusim.config")
    for n_sm in (8, 28, 80):
        gpus = [
            base.with_updates({"n_sm": n_sm, "dram.bandwidth_gbps": 240.0 + 40 * i})
            for i in range(12)
        ]
        cachesim.simulate_app(app, gpus[0])
        cachesim.simulate_app(app, gpus[1])
        t0 = time.perf_counter()
        for g in gpus[2:]:
            cachesim.simulate_app(app, g)
        ms = (time.perf_counter() - t0) / (len(gpus) - 2) * 1e3
        print(f"  sweep-like spmv_csr, {n_sm:2d} SMs: {ms:6.1f} ms per simulation")


if __name__ == "__main__":
    main()
