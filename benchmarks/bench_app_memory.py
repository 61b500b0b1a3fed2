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
(one kernel at a time) and predicted from it lazily.

Usage: ``python benchmarks/bench_app_memory.py [--kernels 40] [--ctas 2048]
[--gpu mdm_pascal] [--model mdm] [--store] [--dir DIR]``
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

from mdm.traces import write_app
from mdm.traces.workloads import generate

_CHILD = r"""
import json, sys, time
from mdm.config import load_gpu
from mdm.pipeline import predict_app
from mdm.traces import open_trace


def hwm_kB():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


path, mode, gpu, model, warm = sys.argv[1:6]
cfg = load_gpu(gpu)
predict_app(open_trace(warm), cfg, [model])  # warm-up: numba's cache on a tiny trace
rss0 = hwm_kB()
t = time.perf_counter()
pred = predict_app(open_trace(path, lazy=mode != "eager"), cfg, [model])
print(json.dumps({"s": time.perf_counter() - t, "rss0_kB": rss0, "rss_kB": hwm_kB(),
                  "cycles": pred.cycles(model), "kernels": len(pred.kernels[model])}))
"""


def _child(path: Path, mode: str, gpu: str, model: str, warm: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), mode, gpu, model, str(warm)],
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


if __name__ == "__main__":
    main()
