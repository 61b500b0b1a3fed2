"""Test helper: a CacheSimResult as plain, comparable Python values."""

from __future__ import annotations

import numpy as np

from mdm.memory.stats import CacheSimResult


def flat(res: CacheSimResult) -> list:
    """Per kernel: scalar counters, per-PC arrays and tracked warps, as lists."""
    out = []
    for k in res.kernels:
        d = {f: getattr(k, f) for f in k.__dataclass_fields__ if f not in ("per_pc", "warps")}
        pp = {f: np.asarray(getattr(k.per_pc, f)).tolist() for f in k.per_pc.__dataclass_fields__}
        ww = {
            w: {f: np.asarray(getattr(t, f)).tolist() for f in t.__dataclass_fields__}
            for w, t in k.warps.items()
        }
        out.append((d, pp, ww))
    return out
