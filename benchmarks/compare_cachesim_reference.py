"""Cache simulator vs Accel-Sim: per reference run, our counters next to the reference's.

For every row of ``../shared/reference/results.csv`` whose configuration the simulator
supports, the trace is simulated on the configuration imported from the run's
``gpgpusim.config`` plus the row's ``extra_options``. Prints, per run: L1 read
accesses, hits, pending hits, misses, L1 and L2 miss rates, DRAM reads and writes
(atoms), the L2 merge-limit blocking per bank (our ``l2_blocked_cycles`` against
the log's ``L2_cache_stats_fail_breakdown[GLOBAL_ACC_R][MSHR_MERGE_ENRTY_FAIL]``, retry
cycles of reads whose L2 MSHR entry had no merge slot, from ``logs/<run_id>.json``;
both over the L2 banks) and the L2 MSHR-capacity blocking per bank (our
``l2_mshr_blocked_cycles`` against ``[GLOBAL_ACC_R][MSHR_ENRTY_FAIL]``, retry cycles of
reads that found no free MSHR entry), the L1's blocked cycles by cause (our ``l1_*_wait_cycles``
against the ``l1d_fail_*`` retry cycles: miss queue full, no MSHR entry, merge slots
full, every way reserved; both summed over the SMs), and the simulation's own clock
(``timeline_cycles``, summed over the kernels) against ``gpu_tot_sim_cycle`` (a check
of the simulation's timing: its relative difference is the clock's drift), ours /
reference / relative difference; then the mean absolute differences, and in how many
runs ours and Accel-Sim's agree on each L1 blocking cause and on the main one.
Figures only, no assertions. Usage::

    python benchmarks/compare_cachesim_reference.py [--reference ../shared/reference]
        [--arch mdm_pascal] [--workload stride32 ...] [--baseline-only] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from mdm.config.accelsim import import_accelsim
from mdm.errors import MdmError
from mdm.memory import simulate_app
from mdm.traces import open_trace

COLUMNS = [  # (name, ours attribute or callable, reference column)
    ("l1_acc", "l1_read_accesses", "l1d_rd_accesses"),
    ("l1_hit", "l1_read_hits", "l1d_rd_hits"),
    ("l1_pend", "l1_read_pending_hits", "l1d_rd_pending_hits"),
    ("l1_miss", "l1_read_misses", "l1d_rd_misses"),
    ("l1_mr", "l1_miss_rate", "l1d_rd_miss_rate"),
    ("l2_mr", "l2_miss_rate", "l2_miss_rate"),
    ("dram_rd", "dram_reads", "dram_reads"),
    ("dram_wr", "dram_writes", "dram_writes"),
    ("l2_blk", "l2_blocked_per_bank", "l2_merge_fail_per_bank"),
    ("l2_mshr", "l2_mshr_blocked_per_bank", "l2_mshr_fail_per_bank"),
    # the L1's blocked cycles by cause (summed over the SMs) against Accel-Sim's retry
    # cycles of rejected L1 reads by reservation-fail cause
    ("l1w_mq", "l1_miss_queue_wait_cycles", "l1d_fail_miss_queue"),
    ("l1w_mshr", "l1_mshr_wait_cycles", "l1d_fail_mshr_entry"),
    ("l1w_merge", "l1_merge_wait_cycles", "l1d_fail_mshr_merge"),
    ("l1w_alloc", "l1_alloc_wait_cycles", "l1d_fail_line_alloc"),
    ("clock", "timeline_cycles", "gpu_tot_sim_cycle"),
]

_MERGE_FAIL = "L2F_GLOBAL_ACC_R_MSHR_MERGE_ENRTY_FAIL"
_MSHR_FAIL = "L2F_GLOBAL_ACC_R_MSHR_ENRTY_FAIL"


def merge_fail_cycles(reference: Path, run_id: str, counter: str = _MERGE_FAIL) -> float:
    """Accel-Sim's L2 reservation-fail retry cycles of a run (``counter``: the merge-slot
    fails by default, or ``_MSHR_FAIL``; the log's counter, cumulative over the kernels:
    the last kernel's value); NaN without the run's ``.json`` log twin."""
    path = reference / "logs" / f"{run_id}.json"
    if not path.is_file():
        return float("nan")
    kernels = json.loads(path.read_text())["kernels"]
    return float(kernels[-1].get(counter, 0.0)) if kernels else 0.0


def compare(
    reference: Path, arch: str | None, workloads: list[str], baseline_only: bool
) -> pd.DataFrame:
    """One row per run: ``<col>_ours``, ``<col>_ref``, ``<col>_rel`` for every column."""
    res = pd.read_csv(reference / "results.csv", keep_default_na=False)
    if arch:
        res = res[res.arch == arch]
    if workloads:
        res = res[res.workload.isin(workloads)]
    if baseline_only:
        res = res[res.sweep_param == "baseline"]
    traces: dict[tuple[str, str], object] = {}
    rows = []
    for _, row in res.iterrows():
        cfg_dir = reference / "configs" / row.arch
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gpu = import_accelsim(cfg_dir / "gpgpusim.config", str(row.extra_options or ""))
        key = (row.isa, row.workload)
        if key not in traces:
            traces[key] = open_trace(reference / "traces" / row.isa / row.workload)
        t0 = time.perf_counter()
        try:
            tot = simulate_app(traces[key], gpu).total()
        except MdmError as exc:
            print(f"skip {row.run_id}: {exc}")
            continue
        wall = time.perf_counter() - t0
        atom = gpu.dram.atom_bytes
        ours = {
            "l1_read_accesses": tot.l1_read_accesses,
            "l1_read_hits": tot.l1_read_hits,
            "l1_read_pending_hits": tot.l1_read_pending_hits,
            "l1_read_misses": tot.l1_read_misses,
            "l1_miss_rate": tot.l1_miss_rate,
            "l2_miss_rate": tot.l2_miss_rate,
            "dram_reads": tot.dram_read_bytes / atom,
            "dram_writes": tot.dram_write_bytes / atom,
            "l2_blocked_per_bank": tot.l2_blocked_cycles / gpu.l2.banks,
            "l2_mshr_blocked_per_bank": tot.l2_mshr_blocked_cycles / gpu.l2.banks,
            "l1_miss_queue_wait_cycles": tot.l1_miss_queue_wait_cycles,
            "l1_mshr_wait_cycles": tot.l1_mshr_wait_cycles,
            "l1_merge_wait_cycles": tot.l1_merge_wait_cycles,
            "l1_alloc_wait_cycles": tot.l1_alloc_wait_cycles,
            "timeline_cycles": tot.timeline_cycles,
        }
        row = row.copy()
        banks = gpu.l2.banks
        row["l2_merge_fail_per_bank"] = merge_fail_cycles(reference, row.run_id) / banks
        row["l2_mshr_fail_per_bank"] = merge_fail_cycles(reference, row.run_id, _MSHR_FAIL) / banks
        out: dict[str, object] = {"run": row.run_id, "sim_s": wall}
        for name, attr, ref_col in COLUMNS:
            o, r = float(ours[attr]), float(row[ref_col])
            out[f"{name}_ours"] = o
            out[f"{name}_ref"] = r
            out[f"{name}_rel"] = (o - r) / r if r else (0.0 if o == 0 else np.inf)
        rows.append(out)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--reference",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "reference",
        help="default: ../shared/reference beside the repository (from any directory)",
    )
    ap.add_argument("--arch", default="mdm_pascal", help="'' for all architectures")
    ap.add_argument("--workload", action="append", default=[])
    ap.add_argument("--baseline-only", action="store_true")
    ap.add_argument("--csv", type=Path)
    a = ap.parse_args()
    df = compare(a.reference, a.arch, a.workload, a.baseline_only)
    if df.empty:
        print("no supported runs")
        return
    pd.set_option("display.width", 250)
    pd.set_option("display.max_rows", 500)
    for name, _, _ in COLUMNS:
        fmt = "{:.3f}" if name.endswith("_mr") else "{:.0f}"
        df[name] = [
            f"{fmt.format(o)}/{fmt.format(r)} ({d:+.0%})"
            for o, r, d in zip(
                df[f"{name}_ours"], df[f"{name}_ref"], df[f"{name}_rel"], strict=True
            )
        ]
    print("ours/reference (relative difference) per run")
    print(df[["run"] + [c[0] for c in COLUMNS]].to_string(index=False))
    print("\nmean |ours - reference|:")
    for name, _, _ in COLUMNS:
        d = (df[f"{name}_ours"] - df[f"{name}_ref"]).abs().mean()
        rel = df[f"{name}_rel"].replace(np.inf, np.nan).abs().mean()
        print(f"  {name:9s} absolute {d:14.4f}   relative {rel:7.1%}")
    print("runs where ours and the reference agree on whether the L1 (the L2) blocks for a cause:")
    for name, _, _ in COLUMNS:
        if name.startswith("l1w_") or name in ("l2_blk", "l2_mshr"):
            both = (df[f"{name}_ours"] > 0) == (df[f"{name}_ref"] > 0)
            print(f"  {name:9s} {int(both.sum())} of {len(df)}")
    waits = [c[0] for c in COLUMNS if c[0].startswith("l1w_")]
    main_cause = {}
    for side in ("ours", "ref"):
        m = df[[f"{w}_{side}" for w in waits]].to_numpy()
        main_cause[side] = np.where(m.max(axis=1) > 0, np.array(waits)[m.argmax(axis=1)], "none")
    same = main_cause["ours"] == main_cause["ref"]
    print(
        f"runs where the L1's main blocking cause (or none) is the same: {same.sum()} of {len(df)}"
    )
    print(f"simulation time: {df.sim_s.sum():.1f} s for {len(df)} runs")
    if a.csv:
        df.to_csv(a.csv, index=False)


if __name__ == "__main__":
    main()
