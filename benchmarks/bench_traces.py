"""Trace I/O benchmark: parse throughput, peak RSS, compact-store load time.

Generates (with the Accel-Sim writer) a synthetic kernel of >= 1 million warp
instructions with realistic memory instructions (coalesced LDG/STG in address mode 1,
random gathers in mode 0, shared-memory LDS/STS), then parses it in a fresh
subprocess (single thread) and prints a table.

Usage: ``python benchmarks/bench_traces.py [--warps N] [--insts N] [--dir DIR]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mdm.traces import AppTrace, KernelTrace, save_store, write_app
from mdm.traces.model import ARRAY_FIELDS, MAX_DST, MAX_SRC, popcount32
from mdm.traces.opcodes import classify

# loop body: (opcode, kind) with kind in {alu, ldg, gather, stg, lds, sts}
BODY = [
    ("IMAD.WIDE", "alu"),
    ("LDG.E.SYS", "ldg"),
    ("IADD3", "alu"),
    ("LDG.E.SYS", "gather"),
    ("FFMA", "alu"),
    ("FMUL", "alu"),
    ("STS", "sts"),
    ("BAR.SYNC", "alu"),
    ("LDS.U.32", "lds"),
    ("FADD", "alu"),
    ("ISETP.GE.AND", "alu"),
    ("STG.E.SYS", "stg"),
    ("IADD3", "alu"),
    ("SHF.L.U32", "alu"),
    ("LOP3.LUT", "alu"),
    ("BRA", "alu"),
]


def make_kernel(n_warps: int, insts_per_warp: int, seed: int = 0) -> KernelTrace:
    """A kernel of ``n_warps * insts_per_warp`` instructions (4 warps per block)."""
    rng = np.random.default_rng(seed)
    names = sorted({op for op, _ in BODY})
    op_ids = np.array([names.index(op) for op, _ in BODY], np.uint16)
    kinds = np.array([k for _, k in BODY])
    n = n_warps * insts_per_warp
    pos = np.tile(np.arange(insts_per_warp), n_warps)
    body_idx = pos % len(BODY)
    kind = kinds[body_idx]
    opcode = op_ids[body_idx]
    mask = np.full(n, 0xFFFFFFFF, np.uint32)
    tail = kind == "gather"
    mask[tail] = rng.integers(1, 2**32, tail.sum(), dtype=np.uint64).astype(np.uint32)
    mem = kind != "alu"
    width = np.where(mem, 4, 0).astype(np.uint8)
    lanes = np.where(mem, popcount32(mask), 0)
    addr_ptr = np.zeros(n + 1, np.int64)
    np.cumsum(lanes, out=addr_ptr[1:])
    warp = np.repeat(np.arange(n_warps), insts_per_warp)
    base = 0x7F0000000000 + (warp.astype(np.uint64) * 128 + pos.astype(np.uint64) * 4096 * 8)
    lane_k = np.arange(addr_ptr[-1]) - np.repeat(addr_ptr[:-1], lanes)
    inst_of = np.repeat(np.arange(n), lanes)
    addrs = base[inst_of] + lane_k.astype(np.uint64) * 4
    g = kind[inst_of] == "gather"
    addrs[g] = 0x7F8000000000 + rng.integers(0, 1 << 26, g.sum()).astype(np.uint64) * 4
    sh = np.isin(kind[inst_of], ["lds", "sts"])
    addrs[sh] = lane_k[sh].astype(np.uint64) * 4
    dst = np.full((n, MAX_DST), -1, np.int16)
    src = np.full((n, MAX_SRC), -1, np.int16)
    dst[:, 0] = np.where(np.isin(kind, ["stg", "sts"]), -1, pos % 32)
    src[:, 0] = (pos + 1) % 32
    src[:, 1] = (pos + 3) % 32
    n_blocks = n_warps // 4
    kt = KernelTrace(
        name="bench_kernel",
        kernel_id=1,
        grid=(n_blocks, 1, 1),
        block=(128, 1, 1),
        nregs=32,
        shmem_bytes=4096,
        binary_version=70,
        warp_ptr=np.arange(n_warps + 1, dtype=np.int64) * insts_per_warp,
        warp_block=(np.arange(n_warps) // 4).astype(np.int32),
        warp_id=(np.arange(n_warps) % 4).astype(np.int32),
        pc=(pos * 16).astype(np.uint32),
        opcode=opcode,
        iclass=classify(names, 70)[opcode],
        mask=mask,
        dst=dst,
        src=src,
        mem_width=width,
        line=np.full(n, -1, np.int32),
        addr_ptr=addr_ptr,
        addrs=addrs,
        opcodes=tuple(names),
        header={"accelsim tracer version": "5"},
    )
    kt.validate()
    return kt


_CHILD = r"""
import json, sys, time
from mdm.traces import read_app, load_store


def hwm_kB():  # peak RSS of this process image (VmHWM; ru_maxrss survives exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


read_app(sys.argv[3])  # warm-up: load the numba cache on a tiny trace
rss0 = hwm_kB()
t = time.perf_counter()
app = (read_app(sys.argv[1]) if sys.argv[2] == "text"
       else load_store(sys.argv[1], mmap=sys.argv[2] == "mmap"))
dt = time.perf_counter() - t
print(json.dumps({"s": dt, "rss0_kB": rss0,
                  "rss_kB": hwm_kB(),
                  "n": sum(k.n_instructions for k in app.kernels)}))
"""


def _child(path: Path, kind: str, warm: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), kind, str(warm)],
        check=True,
        capture_output=True,
        text=True,
        env={"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **__import__("os").environ},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--warps", type=int, default=8192)
    ap.add_argument("--insts", type=int, default=128)
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    root = args.dir or Path(tmp.name)
    kt = make_kernel(args.warps, args.insts)
    t = time.perf_counter()
    app = AppTrace(commands=[kt], name="bench")
    listfile = write_app(app, root / "text")
    t_write = time.perf_counter() - t
    store = save_store(app, root / "bench.mdmtrace")
    warm = root / "warm"
    write_app(AppTrace(commands=[make_kernel(4, 16)], name="warm"), warm)
    size = sum(p.stat().st_size for p in (root / "text").iterdir())
    text = [_child(listfile, "text", warm) for _ in range(args.repeat)]
    st = [_child(store, "eager", warm) for _ in range(args.repeat)]
    mm = [_child(store, "mmap", warm) for _ in range(args.repeat)]
    best_t = min(r["s"] for r in text)
    best_s = min(r["s"] for r in st)
    best_m = min(r["s"] for r in mm)
    n = kt.n_instructions
    result_mb = sum(getattr(kt, f).nbytes for f in ARRAY_FIELDS) / 1e6
    rows = [
        ("warp instructions", f"{n:,}"),
        ("addresses", f"{kt.addrs.shape[0]:,}"),
        ("text size", f"{size / 1e6:.1f} MB"),
        ("columnar result size", f"{result_mb:.1f} MB"),
        ("write (Accel-Sim writer)", f"{t_write:.2f} s"),
        (f"parse time (best of {args.repeat})", f"{best_t:.3f} s"),
        ("parse throughput", f"{size / 1e6 / best_t:.1f} MB/s"),
        ("parse rate", f"{n / best_t / 1e6:.2f} M warp insts/s"),
        ("peak RSS before parse (interpreter+numba)", f"{text[0]['rss0_kB'] / 1024:.0f} MiB"),
        ("peak RSS after parse", f"{max(r['rss_kB'] for r in text) / 1024:.0f} MiB"),
        ("store size", f"{sum(p.stat().st_size for p in store.iterdir()) / 1e6:.1f} MB"),
        ("store load, memory-mapped (default)", f"{best_m * 1e3:.1f} ms"),
        ("store speedup vs text (mmap)", f"{best_t / best_m:.0f}x"),
        ("store load, eager (mmap=False)", f"{best_s * 1e3:.1f} ms"),
        ("store speedup vs text (eager)", f"{best_t / best_s:.0f}x"),
    ]
    w = max(len(a) for a, _ in rows)
    for a, b in rows:
        print(f"{a:<{w}}  {b}")


if __name__ == "__main__":
    main()
