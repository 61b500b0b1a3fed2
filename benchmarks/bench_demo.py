"""Cold and warm ``mdm demo``, the README's main job (issue 5: under a minute on 2 cores).

Each round runs ``mdm demo`` in a fresh subprocess, first cold, with an empty
``NUMBA_CACHE_DIR``, so numba compiles everything: the cache simulator's issue loop in a
second process (``mdm.memory.cachesim.compile_in_background``) while the demo prepares
and coalesces the workloads. It then runs warm, with the cache the cold run filled. It
prints the wall times and the md5 of ``predictions.csv``, which is the same across rounds
and across code versions that change no prediction. At the end it prints the peak RSS of
the largest process over all runs (``getrusage`` of the children). Timings vary with the
machine's load: compare code versions in interleaved rounds.

Usage: ``python benchmarks/bench_demo.py [--rounds N] [--preset NAME] [--tiny]``
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CLI = "from mdm.cli.main import app; app()"


def _demo(args: list[str], cache: str, out: Path) -> tuple[float, str]:
    """Wall time of one ``mdm demo`` run and the md5 of its ``predictions.csv``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", _CLI, "demo", "--out", str(out), *args],
        env=env,
        check=True,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    return wall, hashlib.md5((out / "predictions.csv").read_bytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--preset", default="mdm_pascal")
    ap.add_argument("--tiny", action="store_true", help="the demo's --tiny workloads")
    a = ap.parse_args()
    extra = ["--preset", a.preset] + (["--tiny"] if a.tiny else [])
    for r in range(a.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            cache = str(Path(tmp) / "numba")
            cold, md5_cold = _demo(extra, cache, Path(tmp) / "cold")
            warm, md5_warm = _demo(extra, cache, Path(tmp) / "warm")
        same = "" if md5_cold == md5_warm else f" (warm run: {md5_warm[:8]}, differs!)"
        print(
            f"round {r + 1}: cold {cold:5.1f} s, warm {warm:4.1f} s, "
            f"predictions.csv md5 {md5_cold[:8]}{same}",
            flush=True,
        )
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of the largest process: {rss:.0f} MB")


if __name__ == "__main__":
    main()
