"""Summary of the block placement probe (``mdm_hw placement``, run by ``placement_probe.sh``).

Which SM runs which thread block decides which blocks share an L1: the cache simulation
hands the first wave out round robin, block ``r`` to SM ``r mod n_sm`` (GPGPU-Sim's
``issue_block2core``), so blocks ``r`` and ``r + n_sm`` share an SM and ``r`` and ``r + 1``
do not; handing each SM its blocks in turn would put ``r`` and ``r + 1`` together. The
probe's SM numbers (``%smid``) need not follow the dispatch order, so the summary is
invariant to renaming SMs: among the first wave's blocks (those that started before any
block ended), the share of pairs ``(r, r + k)`` on the same SM for every distance ``k``.
Round robin peaks at ``k = n_sm``; SM by SM at ``k = 1``.

Usage: ``python benchmarks/hardware/placement.py DIR/placement.csv [--out summary.csv]``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

COLUMNS = ["tag", "case", "block", "smid", "start_ns", "end_ns"]


def same_sm_share(sm: np.ndarray, k: int) -> float:
    """Share of the pairs of blocks ``k`` apart (``sm``: the SM of each block, in block
    order) that ran on the same SM."""
    if k < 1 or k >= sm.shape[0]:
        return float("nan")
    return float(np.mean(sm[:-k] == sm[k:]))


def summarise(raw: pd.DataFrame, top: int = 3) -> pd.DataFrame:
    """One row per case: blocks, SMs used, the first wave (blocks started before the first
    block ended) and its blocks per SM, the same-SM share at ``k = 1`` and ``k = n_sm``
    (the SMs used by the first wave), and the ``top`` distances with the largest share."""
    rows = []
    for case, g in raw.groupby("case", sort=False):
        g = g.sort_values("block")
        first = g[g["start_ns"] < g["end_ns"].min()]
        sm = first["smid"].to_numpy()
        n_sm = int(np.unique(sm).size)
        ks = np.arange(1, min(2 * n_sm + 1, sm.shape[0]))
        share = np.array([same_sm_share(sm, int(k)) for k in ks])
        best = ks[np.argsort(-share, kind="stable")[:top]]
        rows.append(
            {
                "case": case,
                "blocks": len(g),
                "sms": int(g["smid"].nunique()),
                "first_wave": len(first),
                "first_wave_blocks_per_sm": len(first) / max(n_sm, 1),
                "same_sm_next": same_sm_share(sm, 1),
                "same_sm_at_n_sm": same_sm_share(sm, n_sm),
                "top_distances": " ".join(f"{k}:{share[k - 1]:.2f}" for k in best),
            }
        )
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("raw", type=Path, help="placement.csv written by placement_probe.sh")
    ap.add_argument("--out", type=Path, help="write the summary here (CSV)")
    a = ap.parse_args()
    df = summarise(pd.read_csv(a.raw, header=None, names=COLUMNS))
    if a.out:
        df.to_csv(a.out, index=False, float_format="%.4g")
    print(df.to_string(index=False, float_format=lambda x: f"{x:.2f}"))


if __name__ == "__main__":
    main()
