"""Summary of the warp issue-order probe (``mdm_hw issue``, run by ``issue_probe.sh``).

Each warp of the probe reads ``clock64`` (t0), issues 64 independent instructions and
reads it again (t1). Per SM and scheduler (``%warpid % 4``), the order in which the
``W_sc`` warps reach t1 tells the policy. A greedy scheduler (GTO) issues one ready
warp's instructions back to back: the warps finish one after another, a warp's issue
time apart, so the spread of their t1 is ``(W_sc - 1) / W_sc`` of the group's span
(first t0 to last t1) and the *greedy index* ``spread / span x W_sc / (W_sc - 1)`` is
about 1. A round-robin one (LRR) interleaves them: they finish within a few cycles of
each other and the index is about 0. The index is clean when the warps are ready at
once (``sync=1``: a barrier before t0); without it, blocks arriving at different times
spread the finishes under either policy.

``--throughput DIR/throughput.csv`` (``mdm_hw throughput``) adds the FP32 issue rate:
per instruction form and warps per SM, the warp instructions an SM issued per cycle
(``warps x iters x 64 / cycles``, mean over SMs) and per scheduler (over 4); a preset's
``latency.fp32_initiation_cycles`` is 1 / that rate when the FP32 unit, not the
scheduler, sets it.

Usage: ``python benchmarks/hardware/issue_order.py DIR/issue.csv [--out summary.csv]
[--throughput DIR/throughput.csv]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = ["rep", "mode", "threads", "bps", "warp", "smid", "warpid", "t0", "t1", "t2"]
SCHEDULERS = 4  # sub-cores per SM (Volta and later); warp slot i on sub-core i % 4


def summarise(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per run (rep, mode, threads, bps): means over the (SM, scheduler) groups
    of the warps per scheduler, the window ``t1 - t0``, the number of other warps of the
    group whose window overlaps a warp's, the group's span (first t0 to last t1) and the
    greedy index (module docstring)."""
    rows = []
    for (rep, mode, threads, bps), g in raw.groupby(["rep", "mode", "threads", "bps"], sort=False):
        warps, window, overlap, span, greedy = [], [], [], [], []
        for _, h in g.groupby([g.smid, g.warpid % SCHEDULERS]):
            t0, t1 = h.t0.to_numpy(), h.t1.to_numpy()
            inter = (t0[:, None] < t1[None, :]) & (t0[None, :] < t1[:, None])
            warps.append(len(h))
            window.append(float((t1 - t0).mean()))
            overlap.append(float((inter.sum(axis=1) - 1).mean()))
            span.append(float(t1.max() - t0.min()))
            if len(h) > 1:
                spread = float(t1.max() - t1.min())
                greedy.append(spread / span[-1] * len(h) / (len(h) - 1))
        rows.append(
            {
                "rep": rep,
                "mode": mode,
                "threads": threads,
                "blocks_per_sm": bps,
                "warps_per_scheduler": np.mean(warps),
                "window_cycles": np.mean(window),
                "overlapping_warps": np.mean(overlap),
                "span_cycles": np.mean(span),
                "greedy_index": np.mean(greedy) if greedy else np.nan,
            }
        )
    return pd.DataFrame(rows)


THROUGHPUT_COLUMNS = ["tag", "op", "warps", "iters", "smid", "cycles"]


def issue_rate(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (op, warps): mean cycles per SM and warp instructions per cycle per SM
    and per scheduler (``mdm_hw throughput``: ``iters x 64`` per warp)."""
    df = raw.assign(per_sm=raw["warps"] * raw["iters"] * 64 / raw["cycles"])
    out = df.groupby(["op", "warps"], sort=False).agg(
        cycles=("cycles", "mean"), insts_per_cycle_sm=("per_sm", "mean")
    )
    out["insts_per_cycle_scheduler"] = out["insts_per_cycle_sm"] / SCHEDULERS
    return out.reset_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw", type=Path, help="issue.csv written by issue_probe.sh")
    ap.add_argument("--out", type=Path, help="write the summary here (CSV)")
    ap.add_argument("--throughput", type=Path, help="throughput.csv of the same run")
    a = ap.parse_args()
    raw = pd.read_csv(a.raw, header=None, names=COLUMNS)
    df = summarise(raw)
    if a.out:
        df.to_csv(a.out, index=False, float_format="%.4g")
    print(df.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    if a.throughput:
        rate = issue_rate(pd.read_csv(a.throughput, header=None, names=THROUGHPUT_COLUMNS))
        print(rate.to_string(index=False, float_format=lambda x: f"{x:.2f}"))


if __name__ == "__main__":
    main()
