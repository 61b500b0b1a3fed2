"""Representative warp: majority cluster, determinism, degenerate cases."""

from __future__ import annotations

import numpy as np

from mdm.profile.handmade import kernel_from_warps
from mdm.profile.representative import (
    longest_from_summaries,
    representative_warp,
    select_from_summaries,
)
from mdm.traces.model import InstrClass as C


def chain(n: int) -> list:
    """n dependent integer instructions."""
    return [(C.INT, [1], [1]) for _ in range(n)]


def test_majority_cluster_of_short_warps() -> None:
    # 90 short warps (lengths 10..12) and 10 long ones (100): the rep is a short warp,
    # the one nearest the short cluster's centroid (length 11, the middle).
    rng = np.random.default_rng(0)
    lengths = [10 + int(x) for x in rng.integers(0, 3, 90)] + [100] * 10
    order = rng.permutation(100)
    warps = [chain(lengths[i]) for i in order]
    k = kernel_from_warps(warps)
    rep = representative_warp(k)
    assert len(warps[rep]) == 11
    assert rep == int(np.flatnonzero(np.array([len(w) for w in warps]) == 11)[0])
    assert representative_warp(k) == rep  # deterministic


def test_majority_cluster_of_long_warps() -> None:
    warps = [chain(5)] * 10 + [chain(60)] * 90
    assert representative_warp(kernel_from_warps(warps)) == 10


def test_ipc_dimension_separates_equal_lengths() -> None:
    # same length, 80 warps without stalls, 20 with a long load dependency
    fast = [(C.INT, [1], [0])] * 4
    slow = [(C.LD_GLOBAL, [1], [0]), (C.INT, [2], [1]), (C.INT, [3], [0]), (C.INT, [4], [0])]
    warps = [slow] * 20 + [fast] * 80
    assert representative_warp(kernel_from_warps(warps)) == 20


def test_degenerate_cases() -> None:
    assert representative_warp(kernel_from_warps([chain(3)])) == 0
    assert representative_warp(kernel_from_warps([chain(3)] * 50)) == 0
    assert select_from_summaries(np.array([0.0, 4.0, 4.0]), np.zeros(3)) == 1
    assert select_from_summaries(np.zeros(2), np.zeros(2)) == 0


def test_large_kernel_summaries() -> None:
    # 200k warps: selection runs on deduplicated points
    n = np.concatenate([np.full(150_000, 40.0), np.full(50_000, 400.0)])
    s = np.concatenate([np.full(150_000, 100.0), np.full(50_000, 900.0)])
    n[7] = 41.0
    rep = select_from_summaries(n, s)
    assert n[rep] == 40.0 and rep == 0


def test_scikit_learn_is_imported_only_to_cluster() -> None:
    """Importing the pipeline does not import scikit-learn (1.3-1.9 s); a kernel whose
    warps are identical is predicted without it; one with two kinds of warps imports it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import numpy as np\n"
        "import mdm.pipeline\n"
        "from mdm.profile.representative import select_from_summaries\n"
        "assert 'sklearn' not in sys.modules\n"
        "assert select_from_summaries(np.full(8, 10), np.full(8, 5)) == 0\n"
        "assert 'sklearn' not in sys.modules\n"
        "select_from_summaries(np.r_[np.full(4, 10), np.full(4, 30)], np.full(8, 5))\n"
        "assert 'sklearn' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_longest_warp() -> None:
    """The warp of the largest ``n + S``, ties to the lowest index; not the
    representative when the long warps are few."""
    n = np.array([10.0, 10.0, 5.0, 10.0, 10.0])
    s = np.array([0.0, 90.0, 95.0, 0.0, 0.0])
    assert longest_from_summaries(n, s) == 1
    assert select_from_summaries(n, s) != 1
    assert longest_from_summaries(np.zeros(3), np.zeros(3)) == 0


def test_the_largest_cluster_counts_warps_not_distinct_points() -> None:
    # 60 identical short warps against 40 long ones of 40 different lengths: the short
    # cluster holds more warps (60) though fewer distinct points (1 against 40)
    n = np.concatenate([np.full(60, 10.0), 100.0 + np.arange(40)])
    assert select_from_summaries(n, np.zeros(100)) == 0


def test_centroid_is_weighted_by_the_warps() -> None:
    # short cluster: 5 warps of 12, 5 of 16, then 50 of 10 instructions (and 40 of 100):
    # its warp-weighted centroid (50 x 10 + 5 x 12 + 5 x 16) / 60 = 10.67 is nearest a
    # 10-instruction warp, the first at index 10 (an unweighted one, 12.67, nearest 12)
    n = np.concatenate([np.full(5, 12.0), np.full(5, 16.0), np.full(50, 10.0), np.full(40, 100.0)])
    assert select_from_summaries(n, np.zeros(100)) == 10


def test_both_dimensions_are_normalised_by_their_means() -> None:
    # 40 warps of 90 and 20 of 110 instructions without stalls (IPC 1), 40 of 100 that
    # stall 10,000 cycles (IPC 0.0099). Normalised (IPC / 0.604, n / 98) the IPC gap
    # (1.66 vs 0.016) separates the stalling warps; the cluster of the 60 fast warps has
    # its centroid at n = 96.7, nearest a 90-instruction warp (index 0). Raw, the
    # instruction counts (+-10) would outweigh the IPC (< 1) and pick a stalling warp.
    n = np.concatenate([np.full(40, 90.0), np.full(20, 110.0), np.full(40, 100.0)])
    s = np.concatenate([np.zeros(60), np.full(40, 10_000.0)])
    assert select_from_summaries(n, s) == 0


def test_single_warp_ipc_is_n_over_n_plus_s() -> None:
    """The IPC axis is ``n / (n + S)`` (IR = 1). Warps A (5 of them): n = 10, S = 0;
    B (4): n = 20, S = 20; C (3): n = 20, S = 0. IPC 1, 0.5, 1 (mean 10 / 12), n mean
    190 / 12, so the normalised points are A (1.2, 0.632), B (0.6, 1.263), C (1.2,
    1.263). Weighted k-means costs: {A}{B,C} 0.617 (centroid of B, C at (0.857,
    1.263)), {A,C}{B} 0.747, {A,B}{C} 1.68: the largest cluster is {B, C} (7 warps)
    and B, 0.257 from its centroid against C's 0.343, is the representative (warp 5).
    With ``n / (1 + S)`` A and C's IPCs would be 10 and 20, and warp 0 chosen."""
    n = np.array([10] * 5 + [20] * 4 + [20] * 3, dtype=np.float64)
    s = np.array([0] * 5 + [20] * 4 + [0] * 3, dtype=np.float64)
    assert select_from_summaries(n, s) == 5
