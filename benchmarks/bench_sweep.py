"""Sweep throughput and speed-up over the cycle-level simulator.

1. Wall time of the 1,000-point sweep of ``examples/sweep_reference_traces.toml``
   (10 SM counts x 10 DRAM bandwidths x 10 MSHR counts, MDM) over two reference traces
   (sm61 stride32 and spmv_csr), local process pool of ``--workers`` processes.
2. One prediction per (trace, configuration) of the reference runs of those traces on
   mdm_pascal, timed against the simulator's ``sim_wall_s`` in results.csv, as a ratio,
   including and excluding the cache simulation (the architecture-independent
   ``prepare`` is timed apart: it runs once per trace). As in a sweep, the cache
   simulations after a trace's first configuration reuse its coalesced requests, L2
   mapping and issue segments (``mdm.memory.cachesim``'s per-kernel input cache).

Run: ``python benchmarks/bench_sweep.py [--workers 2] [--models mdm]``. Prints figures.
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


def bench_sweep(workers: int) -> None:
    from mdm.explore.runner import run_sweep
    from mdm.explore.spec import expand_points, load_spec

    spec = load_spec(REPO / "examples" / "sweep_reference_traces.toml")
    n_points = len(expand_points(spec))
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        res = run_sweep(spec, tmp, executor="local", workers=workers)
        wall = time.perf_counter() - t0
    print(
        f"sweep: {n_points} points x {len(spec.workloads)} traces x {len(spec.models)} model(s) "
        f"= {len(res.table)} rows, {res.items_total} cache simulations, {workers} workers: "
        f"{wall:.1f} s wall ({wall / n_points * 1e3:.1f} ms per point, both traces)"
    )


def bench_per_config(models: list[str]) -> None:
    import pandas as pd

    from mdm.config.accelsim import import_accelsim
    from mdm.memory import simulate_app
    from mdm.pipeline import predict_app, prepare
    from mdm.traces import open_trace

    table = pd.read_csv(REFERENCE / "results.csv", dtype={"extra_options": str})
    table["extra_options"] = table["extra_options"].fillna("")
    sel = table[(table["arch"] == "mdm_pascal") & table["workload"].isin(TRACES)]
    with_cache: list[float] = []
    without: list[float] = []
    for wl, g in sel.groupby("workload"):
        app = open_trace(REFERENCE / "traces" / "sm61" / wl)
        t0 = time.perf_counter()
        prepared = prepare(app)
        t_prep = time.perf_counter() - t0
        print(f"{wl}: prepare (once per trace) {t_prep * 1e3:.1f} ms")
        for rec in g.itertuples(index=False):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                gpu = import_accelsim(
                    REFERENCE / "configs" / "mdm_pascal" / "gpgpusim.config", rec.extra_options
                )
            t0 = time.perf_counter()
            cache = simulate_app(app, gpu)
            t1 = time.perf_counter()
            predict_app(prepared, gpu, models, cache=cache)
            t2 = time.perf_counter()
            r_in = rec.sim_wall_s / (t2 - t0)
            r_ex = rec.sim_wall_s / (t2 - t1)
            with_cache.append(r_in)
            without.append(r_ex)
            print(
                f"  {rec.run_id:<40} sim {rec.sim_wall_s:7.1f} s | cache sim {t1 - t0:7.3f} s, "
                f"models {(t2 - t1) * 1e3:7.2f} ms | speed-up x{r_in:,.0f} incl. cache, "
                f"x{r_ex:,.0f} excl."
            )
    print(
        f"per configuration speed-up over Accel-Sim (median of {len(with_cache)} runs): "
        f"x{statistics.median(with_cache):,.0f} including the cache simulation, "
        f"x{statistics.median(without):,.0f} excluding it"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--models", nargs="+", default=["mdm"])
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--skip-per-config", action="store_true")
    args = ap.parse_args()
    if not args.skip_per_config:
        bench_per_config(args.models)
    if not args.skip_sweep:
        bench_sweep(args.workers)


if __name__ == "__main__":
    main()
