"""Peak memory of a whole-application prediction: one kernel at a time against the
whole trace in memory.

Builds an Accel-Sim application of ``--kernels`` launches of one generated kernel (the
stride workload, GS = 32, ``--ctas`` blocks; the kernel file is written once and listed
``--kernels`` times in ``kernelslist.g``), then predicts it with ``--model`` on
``--gpu`` in fresh subprocesses, reading the trace

* ``lazy``: ``open_trace(path, lazy=True)``, what ``mdm predict`` does: each kernel is
  read, simulated, profiled and predicted, then dropped;
* ``eager``: ``open_trace(path)``, the whole application parsed first.

Prints wall time and peak RSS (``VmHWM``) of each, and checks that both give the same
cycles. With ``--store`` the application is also converted to a ``.mdmtrace`` store
(one kernel at a time) and predicted from it lazily. With ``--sweep`` a two-point
DRAM-bandwidth sweep over the text trace (two work items, serial executor) is run
twice: ``held`` (the whole trace kept for the items, as for a small trace) and
``streamed`` (:data:`mdm.explore.runner.STREAM_TRACE_BYTES` set to 0, so each item reads
it one kernel at a time); both must give the same rows. With ``--measured`` the same
for ``mdm validate --measured`` on a table of three rows (the whole application, its
first kernel by index, the application at another SM clock: two cache keys).

Usage: ``python benchmarks/bench_app_memory.py [--kernels 40] [--ctas 2048]
[--gpu mdm_pascal] [--model mdm] [--store] [--sweep] [--measured] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mdm.traces import write_app
from mdm.traces.workloads import generate

# Peak RSS of the child process, in kB: put before each child script by _child.
_HWM = r"""
def hwm_kB():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1
"""

_CHILD = r"""
import json, sys, time
from mdm.config import load_gpu
from mdm.pipeline import predict_app
from mdm.traces import open_trace

path, mode, gpu, model, warm = sys.argv[1:6]
cfg = load_gpu(gpu)
predict_app(open_trace(warm), cfg, [model])  # warm-up: numba's cache on a tiny trace
rss0 = hwm_kB()
t = time.perf_counter()
pred = predict_app(open_trace(path, lazy=mode != "eager"), cfg, [model])
print(json.dumps({"s": time.perf_counter() - t, "rss0_kB": rss0, "rss_kB": hwm_kB(),
                  "cycles": pred.cycles(model), "kernels": len(pred.kernels[model])}))
"""


_SWEEP_CHILD = r"""
import json, sys, tempfile, time
from mdm.explore import runner
from mdm.explore.spec import parse_spec



def sweep(trace):
    spec = parse_spec({"name": "mem", "base": gpu, "models": [model],
                       "grid": {"dram.bandwidth_gbps": [240.0, 480.0]},
                       "workloads": [{"trace": str(trace), "label": "app"}]})
    with tempfile.TemporaryDirectory() as d:
        return runner.run_sweep(spec, d, executor="serial").table


path, mode, gpu, model, warm = sys.argv[1:6]
sweep(warm)  # warm-up: numba's cache on a tiny trace (held either way)
runner.STREAM_TRACE_BYTES = 0 if mode == "streamed" else 1 << 62
rss0 = hwm_kB()
t = time.perf_counter()
table = sweep(path)
print(json.dumps({"s": time.perf_counter() - t, "rss0_kB": rss0, "rss_kB": hwm_kB(),
                  "cycles": sorted(table["cycles"].tolist()), "kernels": len(table)}))
"""


_MEASURED_CHILD = r"""
import json, sys, time
import pandas as pd
from mdm.explore import runner
from mdm.explore.measured import validate_measured



def measured(trace, name):
    table = f"{trace}/../{name}.csv"
    pd.DataFrame([
        {"run_id": "app", "trace": str(trace), "gpu": gpu, "cycles": 1e6},
        {"run_id": "k0", "trace": str(trace), "gpu": gpu, "kernel": "0", "cycles": 1e5},
        {"run_id": "slow", "trace": str(trace), "gpu": gpu, "time_us": 1e3, "sm_clock_mhz": 1000},
    ]).to_csv(table, index=False)
    return validate_measured(table, [model], workers=1).runs


path, mode, gpu, model, warm = sys.argv[1:6]
measured(warm, "warm")  # warm-up: numba's cache on a tiny trace (held either way)
runner.STREAM_TRACE_BYTES = 0 if mode == "streamed" else 1 << 62
rss0 = hwm_kB()
t = time.perf_counter()
runs = measured(path, "measured")
print(json.dumps({"s": time.perf_counter() - t, "rss0_kB": rss0, "rss_kB": hwm_kB(),
                  "cycles": sorted(runs["cycles"].tolist()), "kernels": len(runs)}))
"""


def _child(
    path: Path, mode: str, gpu: str, model: str, warm: Path, code: str = _CHILD
) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _HWM + code, str(path), mode, gpu, model, str(warm)],
        check=True,
        capture_output=True,
        text=True,
        env={"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **os.environ},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernels", type=int, default=40)
    ap.add_argument("--ctas", type=int, default=2048)
    ap.add_argument("--gpu", default="mdm_pascal")
    ap.add_argument("--model", default="mdm")
    ap.add_argument("--store", action="store_true", help="also predict from a .mdmtrace store")
    ap.add_argument("--skip-eager", action="store_true", help="only the lazy reader")
    ap.add_argument("--sweep", action="store_true", help="also a sweep, trace held vs streamed")
    ap.add_argument(
        "--measured", action="store_true", help="also validate --measured, held vs streamed"
    )
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    root = args.dir or Path(tmp.name)
    one = generate("stride", seed=1, gs=32, ctas=args.ctas)
    write_app(one, root / "one")
    kfile = next(p.name for p in (root / "one").iterdir() if ".traceg" in p.name)
    app_dir = root / "app"
    app_dir.mkdir(parents=True, exist_ok=True)
    (app_dir / kfile).unlink(missing_ok=True)
    (app_dir / kfile).symlink_to((root / "one" / kfile).resolve())
    (app_dir / "kernelslist.g").write_text(f"{kfile}\n" * args.kernels)
    warm = root / "warm"
    write_app(generate("stride", seed=1, gs=32, ctas=4), warm)
    n_k = one.kernels[0].n_instructions
    print(f"application: {args.kernels} x {n_k:,} warp instructions "
          f"= {args.kernels * n_k / 1e6:.1f} M; text {(root / 'one' / kfile).stat().st_size * args.kernels / 1e9:.2f} GB; "
          f"{args.gpu}, model {args.model}")  # fmt: skip
    runs = [("lazy (mdm predict)", app_dir, "lazy")]
    if not args.skip_eager:
        runs.append(("eager (whole app)", app_dir, "eager"))
    if args.store:
        from mdm.traces import open_trace, save_store

        t = time.perf_counter()
        store = save_store(open_trace(app_dir, lazy=True), root / "app.mdmtrace")
        print(f"converted to a store, one kernel at a time: {time.perf_counter() - t:.1f} s")
        runs.append(("lazy, .mdmtrace store", store, "lazy"))
    cycles = set()
    for label, path, mode in runs:
        r = _child(path, mode, args.gpu, args.model, warm)
        cycles.add(round(r["cycles"], 3))
        print(f"{label:<24} {r['s']:7.1f} s   peak RSS {r['rss_kB'] / 1024:7.0f} MiB "
              f"(after warm-up {r['rss0_kB'] / 1024:.0f} MiB), {r['kernels']} kernels")  # fmt: skip
    print("same cycles in every run" if len(cycles) == 1 else f"CYCLES DIFFER: {cycles}")
    for flag, what, code in (
        (args.sweep, "sweep", _SWEEP_CHILD),
        (args.measured, "validate --measured", _MEASURED_CHILD),
    ):
        if not flag:
            continue
        rows = []
        for mode in ("held", "streamed"):
            r = _child(app_dir, mode, args.gpu, args.model, warm, code)
            rows.append(r["cycles"])
            print(f"{what}, trace {mode:<9} {r['s']:7.1f} s   peak RSS {r['rss_kB'] / 1024:7.0f} "
                  f"MiB (after warm-up {r['rss0_kB'] / 1024:.0f} MiB), {r['kernels']} rows")  # fmt: skip
        print(f"same {what} rows" if rows[0] == rows[1] else f"{what} ROWS DIFFER: {rows}")


if __name__ == "__main__":
    main()
