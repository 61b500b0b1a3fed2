"""Sweep throughput and speed-up over the cycle-level simulator.

1. Wall time of the 1,000-point sweep of ``examples/sweep_reference_traces.toml``
   (10 SM counts x 10 DRAM bandwidths x 10 MSHR counts, MDM) over two reference traces
   (sm61 stride32 and spmv_csr), local process pool of ``--workers`` processes.
2. One prediction per (trace, configuration) of the reference runs of those traces on
   mdm_pascal, timed against the simulator's ``sim_wall_s`` in results.csv, as a ratio,
   including and excluding the cache simulation (the architecture-independent
   ``prepare`` is timed apart: it runs once per trace, as is a warm-up that loads
   numba's compiled code and scikit-learn once per process). As in a sweep, the cache
   simulations after a trace's first configuration reuse its coalesced requests, L2
   mapping and issue segments (``mdm.memory.cachesim``'s per-kernel input cache).

Both run as a sweep with the spec's default ``cache_timing = "base"`` does: the sweep
simulates each (SM count, MSHR count) once with the base's bandwidths, and the
per-configuration runs simulate with the baseline run's timing, reusing a simulation
already made for the same cache configuration (the timing sweeps' points then cost the
models only, as every point after the first of such a sweep does). ``--cache-timing
point`` simulates every point and every run at its own timing (each pays a simulation).

Run: ``python benchmarks/bench_sweep.py [--workers 2] [--models mdm] [--cache-timing
base|point]``. Prints figures. ``--compare-timing`` instead runs the sweep with both
``cache_timing`` values and prints how far ``base``'s cycles are from ``point``'s.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
TRACES = ("stride32", "spmv_csr")


def bench_sweep(workers: int, cache_timing: str) -> None:
    from mdm.explore.runner import run_sweep
    from mdm.explore.spec import expand_points, load_spec

    spec = load_spec(REPO / "examples" / "sweep_reference_traces.toml")
    spec = spec.model_copy(update={"cache_timing": cache_timing})
    n_points = len(expand_points(spec))
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = run_sweep(spec, tmp, executor="local", workers=workers)
        wall = time.perf_counter() - t0
    print(
        f"sweep: {n_points} points x {len(spec.workloads)} traces x {len(spec.models)} model(s) "
        f"= {len(res.table)} rows, {res.items_total} cache simulations "
        f"(cache_timing = {cache_timing}), {workers} workers: "
        f"{wall:.1f} s wall ({wall / n_points * 1e3:.1f} ms per point, both traces)"
    )


def compare_timing(workers: int, models: list[str]) -> None:
    """The 1,000-point sweep with ``cache_timing`` ``point`` and ``base``: per trace and
    model, the |relative difference| of ``base``'s cycles from ``point``'s (mean, 99th
    percentile, max) and both wall times."""
    import pandas as pd

    from mdm.explore.runner import run_sweep
    from mdm.explore.spec import load_spec

    spec = load_spec(REPO / "examples" / "sweep_reference_traces.toml")
    spec = spec.model_copy(update={"models": models})
    tables = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("point", "base"):
            t0 = time.perf_counter()
            res = run_sweep(
                spec.model_copy(update={"cache_timing": mode}),
                Path(tmp) / mode,
                executor="local",
                workers=workers,
            )
            print(f"cache_timing = {mode}: {time.perf_counter() - t0:.1f} s")
            tables[mode] = res.table.set_index(["workload", "point_id", "model"])["cycles"]
    rel = (tables["base"] / tables["point"] - 1).abs().rename("rel").reset_index()
    summary = rel.groupby(["workload", "model"])["rel"].agg(
        mean="mean", p99=lambda x: x.quantile(0.99), max="max"
    )
    pd.set_option("display.width", 160)
    print("|base cycles / point cycles - 1| per point:")
    print((100 * summary).round(2).astype(str).add(" %").to_string())


def bench_per_config(models: list[str], cache_timing: str) -> None:
    import pandas as pd

    from mdm.config.accelsim import import_accelsim
    from mdm.memory import cache_key, simulate_app, with_timing_of
    from mdm.pipeline import predict_app, prepare
    from mdm.traces import open_trace
    from mdm.traces.workloads import generate

    table = pd.read_csv(REFERENCE / "results.csv", dtype={"extra_options": str})
    table["extra_options"] = table["extra_options"].fillna("")
    sel = table[(table["arch"] == "mdm_pascal") & table["workload"].isin(TRACES)]
    with_cache: list[float] = []
    without: list[float] = []
    total = [0.0, 0.0]  # Accel-Sim wall time, ours including the cache simulations
    config = REFERENCE / "configs" / "mdm_pascal" / "gpgpusim.config"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        baseline = import_accelsim(config, "")
    # numba loads (or compiles) the cache simulator's and the models' compiled code on
    # first use in a process: paid once per process, not per configuration, so it is
    # timed apart on a small built-in workload (otherwise each trace's first row showed
    # 0.5-0.7 s of it in some processes and 10-25 ms in others); likewise scikit-learn,
    # which the representative-warp selection imports on a kernel's first clustering
    # (the small workload's warps are identical: nothing to cluster), 0.8-0.9 s that
    # spmv_csr's "prepare" showed before
    t0 = time.perf_counter()
    small = generate("stride", ctas=28)
    predict_app(prepare(small), baseline, models, cache=simulate_app(small, baseline))
    import sklearn.cluster  # noqa: F401

    print(
        f"warm-up (numba code and scikit-learn loaded once per process): "
        f"{time.perf_counter() - t0:.2f} s"
    )
    for wl, g in sel.groupby("workload"):
        app = open_trace(REFERENCE / "traces" / "sm61" / wl)
        t0 = time.perf_counter()
        prepared = prepare(app)
        t_prep = time.perf_counter() - t0
        print(f"{wl}: prepare (once per trace) {t_prep * 1e3:.1f} ms")
        shared: dict[tuple, object] = {}  # cache_timing = base: one per cache configuration
        for rec in g.itertuples(index=False):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gpu = import_accelsim(config, rec.extra_options)
            t0 = time.perf_counter()
            if cache_timing == "base":
                sim = with_timing_of(gpu, baseline)
                key = cache_key(sim)
                if key not in shared:
                    shared[key] = simulate_app(app, sim)
                cache = shared[key]
            else:
                cache = simulate_app(app, gpu)
            t1 = time.perf_counter()
            predict_app(prepared, gpu, models, cache=cache)
            t2 = time.perf_counter()
            r_in = rec.sim_wall_s / (t2 - t0)
            r_ex = rec.sim_wall_s / (t2 - t1)
            with_cache.append(r_in)
            without.append(r_ex)
            total[0] += rec.sim_wall_s
            total[1] += t2 - t0
            print(
                f"  {rec.run_id:<40} sim {rec.sim_wall_s:7.1f} s | cache sim {t1 - t0:7.3f} s, "
                f"models {(t2 - t1) * 1e3:7.2f} ms | speed-up x{r_in:,.0f} incl. cache, "
                f"x{r_ex:,.0f} excl."
            )
    print(
        f"per configuration speed-up over Accel-Sim (cache_timing = {cache_timing}, median of "
        f"{len(with_cache)} runs): "
        f"x{statistics.median(with_cache):,.0f} including the cache simulation, "
        f"x{statistics.median(without):,.0f} excluding it; all {len(with_cache)} runs "
        f"together x{total[0] / total[1]:,.0f} ({total[0]:,.0f} s against {total[1]:.2f} s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--models", nargs="+", default=["mdm"])
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--skip-per-config", action="store_true")
    ap.add_argument("--cache-timing", choices=["point", "base"], default="base")
    ap.add_argument(
        "--compare-timing",
        action="store_true",
        help="only run the sweep both ways and compare the cycles (compare_timing)",
    )
    args = ap.parse_args()
    if args.compare_timing:
        compare_timing(args.workers, args.models)
        return
    if not args.skip_per_config:
        bench_per_config(args.models, args.cache_timing)
    if not args.skip_sweep:
        bench_sweep(args.workers, args.cache_timing)


if __name__ == "__main__":
    main()
