"""Cold compilation of the numba hot loops, and where its time goes.

Each round runs, in a fresh subprocess with an empty ``NUMBA_CACHE_DIR``, what a first
run compiles: the cache simulation of a small stride trace on ``--gpu`` (the issue loop
for that preset's L1/L2 sectoring and L1 fill policy, the coalescer, the L2 map) and,
with ``--trace``, the parse of an Accel-Sim trace folder. It prints the wall time of each round and, for the
last one, the compiled functions with the most exclusive time in numba's passes (from
numba's ``numba:run_pass`` events; a function's time excludes the callees it compiles),
and the passes with the most time over all functions.

Usage: ``python benchmarks/bench_compile.py [--gpu PRESET] [--rounds N] [--trace DIR]
[--top N]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

_CHILD = r"""
import json, sys, time
from collections import defaultdict
from numba.core import event as ev

gpu_name, trace = sys.argv[1], sys.argv[2]
t0 = time.perf_counter()
from mdm.config import load_gpu
from mdm.memory import simulate_app
from mdm.traces import open_trace
from mdm.traces.workloads import generate

t_import = time.perf_counter() - t0
with ev.install_recorder("numba:run_pass") as rec:
    t1 = time.perf_counter()
    if trace:
        open_trace(trace)
    t_parse = time.perf_counter() - t1
    simulate_app(generate("stride", 0, ctas=2), load_gpu(gpu_name))
    t_total = time.perf_counter() - t1
stack, per_fn, per_pass = [], defaultdict(float), defaultdict(float)
for ts, e in rec.buffer:
    if e.is_start:
        stack.append([e.data["name"], ts, 0.0])
        continue
    name, start, child = stack.pop()
    d = ts - start
    pass_name, _, fn = name.partition(" [")
    per_fn[fn.rstrip("]")] += d - child
    per_pass[pass_name] += d - child
    if stack:
        stack[-1][2] += d
print(json.dumps({"import": t_import, "parse": t_parse, "total": t_total,
                  "fn": per_fn, "pass": per_pass}))
"""


def _round(gpu: str, trace: str) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        out = subprocess.run(
            [sys.executable, "-c", _CHILD, gpu, trace],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="mdm_pascal", help="preset whose issue loop compiles")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--trace", default="", help="also parse this Accel-Sim trace folder")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    res = {}
    for r in range(args.rounds):
        res = _round(args.gpu, args.trace)
        parse = f", of which parsing {res['parse']:.1f} s" if args.trace else ""
        print(
            f"round {r + 1}: compile and run {res['total']:.1f} s{parse} "
            f"(imports {res['import']:.1f} s; numba passes {sum(res['fn'].values()):.1f} s)"
        )
    print(f"functions by exclusive pass time (last round, top {args.top}):")
    for fn, t in sorted(res["fn"].items(), key=lambda x: -x[1])[: args.top]:
        print(f"  {t:7.2f} s  {fn}")
    print("passes by exclusive time, all functions:")
    for p, t in sorted(res["pass"].items(), key=lambda x: -x[1])[: args.top]:
        print(f"  {t:7.2f} s  {p}")


if __name__ == "__main__":
    main()
