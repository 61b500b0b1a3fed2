"""Predicted cycles against the L1's MSHR count: how smooth each model is.

Paper 001's MDM charges an interval's whole queue once eq. (10) finds the NoC
saturated, and half of it otherwise, so predicted cycles can *rise* when MSHRs are
added (docs/status.md, "Known gaps"). This sweeps ``l1.mshr_entries`` over the
reference traces of one architecture (each point's caches simulated at that count) and
prints, per trace and model, the largest rise of predicted cycles between neighbouring
points, where it happens, and the cycles at the sweep's ends; then the largest rise
per model. Where Accel-Sim ran the same trace at some of the counts (the reference's
``l1_mshr`` sweep), its cycles are listed beside ours. Figures only, no assertions::

    python benchmarks/mshr_sweep.py [--reference ../shared/reference] [--arch mdm_pascal]
        [--models mdm-pipelined mdm ...] [--start 16] [--stop 512] [--step 16]
        [--workload stride32 ...]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mdm.config.accelsim import import_accelsim
from mdm.explore.validate import run_options
from mdm.memory import simulate_app
from mdm.pipeline import predict_app, prepare
from mdm.traces import open_trace

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--arch", default="mdm_pascal")
    ap.add_argument("--models", nargs="+", default=["mdm-pipelined", "mdm", "gpumech"])
    ap.add_argument("--start", type=int, default=16)
    ap.add_argument("--stop", type=int, default=512)
    ap.add_argument("--step", type=int, default=16)
    ap.add_argument("--workload", nargs="*", default=None, help="default: every trace")
    a = ap.parse_args()
    res = pd.read_csv(a.reference / "results.csv", keep_default_na=False)
    res = res[res["arch"] == a.arch]
    if res.empty:
        raise SystemExit(f"no reference run on {a.arch!r} in {a.reference / 'results.csv'}")
    isa = res["isa"].iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the launch latencies the reference's runs used (their logs' option dumps)
        logged = run_options(a.reference, str(res["run_id"].iloc[0]).strip(), "")
        base = import_accelsim(a.reference / "configs" / a.arch / "gpgpusim.config", logged)
    counts = list(range(a.start, a.stop + 1, a.step))
    names = a.workload or sorted(res["workload"].unique())
    worst: dict[str, tuple[float, str, int]] = {}
    for wl in names:
        p = prepare(open_trace(a.reference / "traces" / isa / wl))
        cycles = {m: [] for m in a.models}
        for n in counts:
            gpu = base.with_updates({"l1.mshr_entries": n})
            pred = predict_app(p, gpu, a.models, cache=simulate_app(p.app, gpu))
            for m in a.models:
                cycles[m].append(pred.cycles(m))
        runs = res[res["workload"] == wl]
        sim = {
            int(r["sweep_value"]) if r["sweep_param"] == "l1_mshr" else base.l1.mshr_entries: int(
                r["gpu_tot_sim_cycle"]
            )
            for _, r in runs.iterrows()
            if r["sweep_param"] in ("l1_mshr", "baseline")
        }
        ref = ", ".join(f"{k}: {v:,}" for k, v in sorted(sim.items()))
        print(f"{wl}" + (f"  (Accel-Sim cycles at {ref})" if len(sim) > 1 else ""))
        for m in a.models:
            c = np.asarray(cycles[m])
            rise = c[1:] / c[:-1] - 1.0
            i = int(rise.argmax())
            at = {k: c[counts.index(k)] for k in sim if k in counts}
            ours = ", ".join(f"{k}: {v:,.0f}" for k, v in sorted(at.items()))
            print(
                f"  {m:14s} largest rise {100 * rise[i]:5.1f} % ({counts[i]} -> {counts[i + 1]}), "
                f"{c[0]:,.0f} cycles at {counts[0]}, {c[-1]:,.0f} at {counts[-1]}"
                + (f"; at the reference's counts {ours}" if len(at) > 1 else "")
            )
            if m not in worst or rise[i] > worst[m][0]:
                worst[m] = (float(rise[i]), wl, counts[i])
    print("\nlargest rise of predicted cycles with more L1 MSHRs, per model:")
    for m, (r, wl, n) in worst.items():
        print(f"  {m:14s} {100 * r:5.1f} % ({wl}, {n} -> {n + a.step})")


if __name__ == "__main__":
    main()
