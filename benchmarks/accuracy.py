"""Mean |IPC error| (paper 001 eq. 11) of each model against the Accel-Sim reference.

Serial, one process: per baseline run of ``../shared/reference/results.csv`` (or the
runs matching ``--runs``), import the run's configuration with its extra options,
simulate the caches once per (trace, configuration), predict with every model and
compare the warp IPC with the simulator's. Prints a per-run table and per-model means
by architecture and class (MD / NMD / calib). Usage:

    python benchmarks/accuracy.py [--reference ../shared/reference] [--runs REGEX]
        [--models mdm gpumech ...] [--merge-threshold 10] [--streaming-l1]
        [--cache-timing point|base]

``--streaming-l1`` runs every configuration with its L1 made streaming (allocate on
fill, paper 004 III-C) and nothing else changed: on SM7_QV100, whose 512 MSHRs never
fill in the simulator, the prediction should barely move (paper 001 footnote 2).

``--cache-timing base`` simulates each run's caches with the timing of its
architecture's baseline (no extra options; :func:`mdm.memory.with_timing_of`), as a sweep
with ``cache_timing = "base"`` (the default) does, and predicts on the run's own
configuration: compare it with the default ``point`` on the DRAM, NoC and clock sweeps
(``--runs "mdm_pascal__(baseline|dram|noc|core)"``: the sweeps' Spearman rho is taken
over each sweep's points and its baseline, as ``mdm validate`` does).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import pandas as pd

from mdm.config.accelsim import import_accelsim
from mdm.config.gpu import GPUConfig
from mdm.errors import MdmError
from mdm.explore.validate import _spearman, run_options
from mdm.memory import simulate_app, with_timing_of
from mdm.pipeline import predict_app, prepare
from mdm.traces import open_trace


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", default=str(Path(__file__).parents[1] / "../shared/reference"))
    ap.add_argument("--runs", default="__baseline$", help="regex on run_id")
    ap.add_argument("--models", nargs="+", default=["mdm", "gpumech", "gpumech+", "mwp-cwp"])
    ap.add_argument("--merge-threshold", type=float, default=10.0)
    ap.add_argument("--streaming-l1", action="store_true", help="L1 allocate on fill")
    ap.add_argument("--cache-timing", choices=["point", "base"], default="point")
    a = ap.parse_args()
    ref = Path(a.reference)
    res = pd.read_csv(ref / "results.csv", keep_default_na=False)
    res["run_id"] = res["run_id"].str.strip()
    res = res[res["run_id"].str.contains(a.runs, regex=True)]
    prepared: dict[tuple[str, str], object] = {}
    baselines: dict[str, GPUConfig] = {}  # --cache-timing base: each arch's config, read once
    rows = []
    for _, r in res.iterrows():
        key = (r["isa"], r["workload"])
        if key not in prepared:
            prepared[key] = prepare(open_trace(ref / "traces" / r["isa"] / r["workload"]))
        p = prepared[key]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gpu = import_accelsim(  # with the launch latencies the run's log shows
                ref / "configs" / r["arch"] / "gpgpusim.config",
                run_options(ref, r["run_id"], r["extra_options"]),
            )
        if a.streaming_l1:
            gpu = gpu.model_copy(update={"l1": gpu.l1.model_copy(update={"allocate_on": "fill"})})
        sim = gpu
        if a.cache_timing == "base":
            if r["arch"] not in baselines:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    baselines[r["arch"]] = import_accelsim(
                        ref / "configs" / r["arch"] / "gpgpusim.config",
                        run_options(ref, r["run_id"], ""),
                    )
            sim = with_timing_of(gpu, baselines[r["arch"]])
        try:
            cache = simulate_app(p.app, sim)
        except MdmError as exc:
            print(f"{r['run_id']}: not predicted: {exc}")
            continue
        pred = predict_app(p, gpu, a.models, cache=cache, merge_threshold=a.merge_threshold)
        sim_ipc = float(r["warp_ipc"])
        for m in a.models:
            t = pred.total(m)
            rows.append(
                {
                    "run_id": r["run_id"],
                    "arch": r["arch"],
                    "workload": r["workload"],
                    "sweep_param": r["sweep_param"],
                    "class": r["class"],
                    "model": m,
                    "ipc_sim": sim_ipc,
                    "ipc_model": t.ipc,
                    "err": (t.ipc - sim_ipc) / sim_ipc,
                    "md": t.md_fraction,
                    **{f"cpi_{k}": v for k, v in t.cpi_stack.items()},
                }
            )
    df = pd.DataFrame(rows)
    df["abs_err"] = df["err"].abs()
    pd.set_option("display.width", 200)
    pd.set_option("display.max_rows", 500)
    wide = df.pivot_table(index=["run_id", "class"], columns="model", values="err")
    print("signed IPC error (model - sim) / sim per run:")
    print(wide.round(3).to_string())
    print("\nmean |IPC error| (eq. 11) by arch and class:")
    print(
        df.pivot_table(index=["arch", "class"], columns="model", values="abs_err", aggfunc="mean")
        .round(3)
        .to_string()
    )
    print("\nmean |IPC error| by arch (MD + NMD, no calib):")
    core = df[df["class"] != "calib"]
    print(
        core.pivot_table(index="arch", columns="model", values="abs_err", aggfunc="mean")
        .round(3)
        .to_string()
    )
    print("\nmean |IPC error| by arch (all runs):")
    print(
        df.pivot_table(index="arch", columns="model", values="abs_err", aggfunc="mean")
        .round(3)
        .to_string()
    )
    spear = _spearman(df)
    spear = spear.merge(df[["workload", "class"]].drop_duplicates(), on="workload")
    spear = spear[spear["class"] != "calib"]
    if len(spear):
        print("\nSpearman rho per sweep (with its baseline; MD + NMD), and the mean:")
        wide = spear.pivot_table(
            index=["arch", "workload", "sweep_param"], columns="model", values="spearman"
        )
        print(wide.round(2).to_string())
        print(spear.groupby("model")["spearman"].mean().round(3).to_string())


if __name__ == "__main__":
    main()
