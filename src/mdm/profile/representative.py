"""Representative warp of a kernel (model-notes section 2).

For every warp: single-warp IPC ``n / (n / IR + S)`` (IR = 1 instruction per cycle,
the warp alone) and instruction count ``n``, each divided by its mean over warps.
These 2-D points are clustered with k-means (k = 2, scikit-learn, ``random_state=0``,
``n_init=10``); the representative is the warp nearest the centroid of the largest
cluster (ties: lowest warp index).

Choices: selection uses :func:`~mdm.profile.interval.default_latencies` (no cache
simulation), so it is architecture independent and done once per kernel. Identical
points are clustered once with their multiplicity as ``sample_weight`` (same result,
much faster on 100k+ warps). With fewer than two distinct points (one warp,
identical warps) there is nothing to cluster: the warp nearest the mean is taken
(warp 0 for identical warps). Warps with no instructions are never chosen unless all
are empty.
"""

from __future__ import annotations

import numpy as np

from mdm.profile.interval import Latencies, warp_summaries
from mdm.traces.model import KernelTrace


def select_from_summaries(n_insts: np.ndarray, stall: np.ndarray) -> int:
    """Index of the representative among warps with ``n_insts`` and total ``stall``."""
    n = np.asarray(n_insts, dtype=np.float64)
    s = np.asarray(stall, dtype=np.float64)
    if n.size == 0:
        raise ValueError("a kernel with no warps has no representative warp")
    candidates = np.flatnonzero(n > 0)
    if candidates.size == 0:
        return 0
    ipc = n[candidates] / (n[candidates] + s[candidates])
    pts = np.column_stack([ipc / ipc.mean(), n[candidates] / n[candidates].mean()])
    uniq, inverse, counts = np.unique(pts, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if uniq.shape[0] < 2:
        return int(candidates[0])
    # imported here: scikit-learn takes 1.3-1.9 s to import, which a process whose kernels
    # have identical warps (nothing to cluster) then never pays
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=2, random_state=0, n_init=10)
    labels_u = km.fit_predict(uniq, sample_weight=counts.astype(np.float64))
    weight = np.bincount(labels_u, weights=counts, minlength=2)
    big = int(np.argmax(weight))
    centroid = km.cluster_centers_[big]
    members = np.flatnonzero(labels_u[inverse] == big)
    d = ((pts[members] - centroid) ** 2).sum(axis=1)
    return int(candidates[members[int(np.argmin(d))]])


def longest_from_summaries(n_insts: np.ndarray, stall: np.ndarray) -> int:
    """Index of the warp that takes longest alone, ``argmax(n + S)`` (ties: lowest index).

    The models floor a kernel's cycles at this warp's single-warp cycles on the
    configuration (:attr:`mdm.models.base.KernelInput.longest_warp_cycles`); picked
    with the same default latencies as the representative, once per kernel.
    """
    n = np.asarray(n_insts, dtype=np.float64)
    if n.size == 0:
        raise ValueError("a kernel with no warps has no longest warp")
    return int(np.argmax(n + np.asarray(stall, dtype=np.float64)))


def representative_warp(kernel: KernelTrace, latencies: Latencies | None = None) -> int:
    """Index (in ``kernel``'s warp order) of the representative warp (module docstring)."""
    n, s = warp_summaries(kernel, latencies)
    return select_from_summaries(n, s)
