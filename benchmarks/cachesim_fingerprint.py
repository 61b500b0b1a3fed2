"""Fingerprints of the cache simulator's results, to check that a speed change changes none.

Simulates every reference trace in ``../shared/reference/traces`` on its own Accel-Sim
configuration and on two presets, and every built-in workload (default size) on both
reference configurations and six presets, each with ``lrr`` and with ``gto`` schedulers
(one of them the configuration's own), and hashes every field and array of each result
(:class:`mdm.memory.stats.CacheSimResult`: counters, per-PC and per-instruction arrays,
waits, time line). Writes ``{case: sha256 prefix}`` as JSON; ``--compare OTHER.json``
lists the cases whose fingerprints differ (exit status 1 if any).

Usage, e.g. to compare a change with the commit before it (a separate numba cache for
each source tree)::

    git worktree add /tmp/before HEAD~1
    PYTHONPATH=/tmp/before/src NUMBA_CACHE_DIR=/tmp/nc-before \\
        python benchmarks/cachesim_fingerprint.py --out before.json
    python benchmarks/cachesim_fingerprint.py --out after.json --compare before.json
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from mdm.config.accelsim import import_accelsim
from mdm.config.gpu import GPUConfig
from mdm.config.load import load_gpu
from mdm.memory import cachesim
from mdm.traces import open_trace
from mdm.traces.model import AppTrace
from mdm.traces.workloads import generate

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
PRESETS = ("mdm_pascal", "v100", "h100", "gtx1080", "sm7_qv100", "a100")
#: reference configuration of each trace ISA folder
ARCH = {"sm61": "mdm_pascal", "sm70": "SM7_QV100"}
WORKLOADS = (
    "stride", "spmv_csr", "gather", "kmeans", "bfs", "vecadd", "stencil2d", "gemm_tiled",
    "transpose",
)  # fmt: skip


def _feed(o: Any, h: Any) -> None:
    """Add ``o`` (dataclasses, arrays, containers, scalars) to the hash ``h``."""
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        for f in dataclasses.fields(o):
            h.update(f.name.encode())
            _feed(getattr(o, f.name), h)
    elif isinstance(o, np.ndarray):
        h.update(str(o.dtype).encode() + str(o.shape).encode())
        h.update(np.ascontiguousarray(o).tobytes())
    elif isinstance(o, (list, tuple)):
        for x in o:
            _feed(x, h)
    elif isinstance(o, dict):
        for k in sorted(o, key=str):
            h.update(str(k).encode())
            _feed(o[k], h)
    else:
        h.update(repr(o).encode())


def fingerprint(app: AppTrace, gpu: GPUConfig) -> str:
    h = hashlib.sha256()
    _feed(cachesim.simulate_app(app, gpu), h)
    return h.hexdigest()[:16]


def cases() -> list[tuple[str, AppTrace, GPUConfig]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unmapped Accel-Sim options
        ref = {
            a: import_accelsim(REFERENCE / "configs" / a / "gpgpusim.config") for a in ARCH.values()
        }
    out = []
    for isa, arch in ARCH.items():
        folder = REFERENCE / "traces" / isa
        for d in sorted(folder.iterdir()) if folder.is_dir() else []:
            app = open_trace(d)
            for name, g in (
                (arch, ref[arch]),
                ("h100", load_gpu("h100")),
                ("v100", load_gpu("v100")),
            ):
                out.append((f"{isa}/{d.name}|{name}", app, g))
    gpus = {**ref, **{p: load_gpu(p) for p in PRESETS}}
    for w in WORKLOADS:
        app = generate(w)
        for name, g in gpus.items():
            out.append((f"builtin:{w}|{name}", app, g))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path, help="fingerprints of the code before")
    a = ap.parse_args()
    t0 = time.perf_counter()
    prints = {}
    for case, app, g in cases():
        for policy in ("lrr", "gto"):
            gg = g.with_updates({"sm.scheduler_policy": policy})
            prints[f"{case}|{policy}"] = fingerprint(app, gg)
    a.out.write_text(json.dumps(prints, indent=0, sort_keys=True))
    print(f"{len(prints)} fingerprints in {time.perf_counter() - t0:.0f} s -> {a.out}")
    if a.compare:
        before = json.loads(a.compare.read_text())
        differ = sorted(k for k in prints.keys() | before.keys() if prints.get(k) != before.get(k))
        print(f"{len(differ)} of {len(prints)} differ from {a.compare}")
        for k in differ:
            print(f"  {k}: {before.get(k)} -> {prints.get(k)}")
        sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
