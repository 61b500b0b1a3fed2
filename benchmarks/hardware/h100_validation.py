"""Validation on a real GPU: the built-in workloads run on the hardware, timed by Nsight
Compute, against the models on the matching preset. Three steps::

    # 1. here: inputs of the random workloads, written by the generators' own functions
    python benchmarks/hardware/h100_validation.py prepare hw_inputs
    # 2. on the GPU machine (nvcc, ncu): build mdm_hw.cu, profile every case
    OUT=results bash benchmarks/hardware/run_device.sh hw_inputs
    # 3. here: ncu output -> measured table (+ cache hit rates beside mdm's)
    python benchmarks/hardware/h100_validation.py collect results --out benchmarks/hardware/h100
    mdm validate --measured benchmarks/hardware/h100/measured.csv --out out/hw --json
    # the tagged experiments (L2 fetch, L1 carve-out, SM count), measured against predicted
    python benchmarks/hardware/h100_validation.py axes
    # after a change to the simulator or the preset: memory.csv's simulated columns again
    python benchmarks/hardware/h100_validation.py memory [--out DIR --gpu CARD]

``CASES`` size each workload for two to four waves of thread blocks on an H100's 132
SMs (the reference's traces are sized for two waves on 28 SMs). ``collect`` splits the
concatenated ncu files at their ``### <case>`` markers, drops the L2-flush launches,
matches the rest to the trace's kernels with :func:`mdm.explore.ncu.ncu_to_measured`
(same kernel count and function names, else an error naming the file and line) and
writes ``measured.csv`` (``trace`` = the ``builtin:`` spec, ``gpu`` = ``h100``, the SM
clock ncu ran at; the base-clock runs are the baselines, the :data:`SWEEP_TAGS` runs
sweep points) and ``memory.csv``: the hardware's L1 and L2 sector hit rates of
global loads and DRAM sectors beside mdm's cache simulation on the same preset. The
trimmed ncu records of every case (also of tagged experiments such as
``fetch32_time.csv``) are kept under ``ncu/``, with ``gpu.txt`` and ``latency.csv``
(``mdm_hw latency``, the pointer-chase probe) and ``probes*.csv`` (``mdm_hw probes``:
empty kernels of 1-16 waves, random-sector and streaming DRAM reads; ``probes_ncu.csv``
the same under ncu) when the results folder has them.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pandas as pd

from mdm.config.gpu import GPUConfig
from mdm.explore.ncu import NcuLaunch
from mdm.traces.workloads import WORKLOADS, md_class_of
from mdm.traces.workloads.irregular import random_csr, random_graph
from mdm.traces.workloads.streaming import gather_indices

GPU = "h100"  #: the preset of the measured card (``collect --gpu``, e.g. ``h200``)
SMS_WAVE = 132 * 8  # blocks of 256 threads per wave on an H100 (2048 threads per SM)

#: case id -> (workload, size parameters); the others at the generator's defaults.
CASES: dict[str, tuple[str, dict[str, int | float]]] = {
    "vecadd": ("vecadd", {"ctas": 4 * SMS_WAVE, "iters": 4}),
    "stride1": ("stride", {"ctas": 4 * SMS_WAVE, "gs": 1}),
    "stride32": ("stride", {"ctas": 4 * SMS_WAVE, "gs": 32}),
    "gather_l2": ("gather", {"ctas": 2 * SMS_WAVE, "iters": 4, "xsize": 1 << 20}),
    "gather_dram": ("gather", {"ctas": 2 * SMS_WAVE, "iters": 2, "xsize": 1 << 25}),
    "kmeans": ("kmeans", {"ctas": 4 * SMS_WAVE}),
    "spmv_csr": ("spmv_csr", {"ctas": 2 * SMS_WAVE}),
    "bfs": ("bfs", {"ctas": 2 * SMS_WAVE}),
    "stencil2d": ("stencil2d", {"W": 1024, "H": 1024}),
    "gemm_tiled": ("gemm_tiled", {"M": 1024, "N": 512, "K": 64}),
    "transpose": ("transpose", {"W": 2048, "H": 2048, "pad": 0}),
    "transpose_padded": ("transpose", {"W": 2048, "H": 2048, "pad": 1}),
}

TIME_METRICS = [
    "sm__cycles_elapsed.avg",
    "gpc__cycles_elapsed.max",
    "gpu__time_duration.sum",
    "sm__cycles_elapsed.avg.per_second",
    "smsp__inst_executed.sum",
]
MEM_METRICS = [
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
]


def full_params(case: str) -> tuple[str, dict[str, int | float]]:
    """The workload and all its size parameters (defaults filled in)."""
    name, params = CASES[case]
    return name, {**WORKLOADS[name].params, **params}


def spec(case: str) -> str:
    """The ``builtin:`` trace spec of a case (only the parameters the case sets)."""
    name, params = CASES[case]
    return f"builtin:{name}?{urlencode(params)}"


def _write(path: Path, a: np.ndarray, dtype: type) -> None:
    if a.size and (a.min() < np.iinfo(dtype).min or a.max() > np.iinfo(dtype).max):
        raise ValueError(f"{path}: values do not fit {np.dtype(dtype).name}")
    a.astype(dtype).tofile(path)


def prepare(out: Path) -> None:
    """Inputs of the random workloads and ``cases.txt`` (one ``id workload k=v ...`` per
    line) for ``run_device.sh``."""
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for case in CASES:
        name, p = full_params(case)
        d = out / case
        d.mkdir(exist_ok=True)
        seed = 0
        if name == "gather":
            n = p["ctas"] * p["threads"] * p["iters"] - p["tail"]
            _write(d / "idx.i32", gather_indices(seed, int(n), int(p["xsize"])), np.int32)
        elif name == "spmv_csr":
            rows = int(p["ctas"] * p["threads"] - p["tail"])
            rp, col = random_csr(
                np.random.default_rng(seed), rows, p["mean_extra"], p["band_frac"], int(p["band"])
            )
            _write(d / "row_ptr.i32", rp, np.int32)
            _write(d / "col.i32", col, np.int32)
        elif name == "bfs":
            n = int(p["ctas"] * p["threads"] - p["tail"])
            deg, start, edges, front, vis = random_graph(
                np.random.default_rng(seed),
                n,
                p["mean_degree"],
                p["frontier_frac"],
                p["visited_frac"],
            )
            _write(d / "nodes.i32", np.stack([start[:-1], deg], axis=1).ravel(), np.int32)
            _write(d / "edges.i32", edges, np.int32)
            _write(d / "mask.u8", front, np.uint8)
            _write(d / "visited.u8", vis, np.uint8)
        args = " ".join(f"{k}={int(v) if float(v).is_integer() else v}" for k, v in p.items())
        lines.append(f"{case} {name} {args} data={d.name}")
    (out / "cases.txt").write_text("\n".join(lines) + "\n")
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"{len(lines)} cases, {size / 2**20:.1f} MiB of inputs in {out}")


KEEP = ["ID", "Kernel Name", "Grid Size", "Block Size"]
#: Tagged time files that are sweep points of the baseline (``run_device.sh`` with TAG):
#: ``boost`` = ncu ``--clock-control none``, the SM at its boost clock instead of base, a
#: DVFS point (the models predict at the clock each kernel ran at).
SWEEP_TAGS = {"boost": ("sm_clock", "boost")}
EXTRA_METRICS = [
    "launch__shared_mem_config_size",
    "launch__occupancy_limit_shared_mem",
    "launch__registers_per_thread",
    "launch__grid_size",
    "dram__sectors_read.sum",
]


def split(path: Path, marker: str | None = None) -> dict[str, list[str]]:
    """The CSV records of a concatenated ``ncu --csv --page raw`` file per ``### case``
    marker: the L2-flush launches and non-CSV lines dropped, and only the columns
    :data:`KEEP` and the metrics kept (ncu's raw page has some 300 launch attributes).
    ``marker``: the part name of the records before any marker (else they are dropped)."""
    parts: dict[str, list[str]] = {marker: []} if marker else {}
    cur, cols = marker, None
    for line in path.read_text(errors="replace").splitlines():
        m = re.match(r"^### (\S+)$", line)
        if m:
            cur, cols = m.group(1), None
            parts[cur] = []
            continue
        if cur is None or not line.startswith('"') or re.search(r'"(l2_flush|smid)_kernel', line):
            continue
        fields = next(csv.reader([line]))
        if cols is None:  # the header of this case's ncu run
            want = KEEP + TIME_METRICS + MEM_METRICS + EXTRA_METRICS
            cols = [i for i, f in enumerate(fields) if f in want]
        buf = io.StringIO()
        csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="").writerow(
            [fields[i] if i < len(fields) else "" for i in cols]
        )
        parts[cur].append(buf.getvalue())
    return parts


def memory_rows(case: str, ncu_file: Path, gpu_name: str = GPU) -> list[dict[str, object]]:
    """``memory.csv``'s rows of one case: ncu's global-load L1 and L2 sectors, hit rates
    and DRAM sectors per kernel (``ncu_file``: the case's ``mem`` profile) beside the cache
    simulation's on preset ``gpu_name``."""
    from mdm.config import load_gpu
    from mdm.explore.ncu import read_ncu
    from mdm.memory import simulate_app
    from mdm.traces.workloads import load_trace

    sim = simulate_app(load_trace(spec(case)), load_gpu(gpu_name))
    rows = []
    for k, (lu, ks) in enumerate(zip(read_ncu(ncu_file), sim.kernels, strict=True)):
        m = {n: float(v[1].replace(",", "")) for n, v in lu.metrics.items() if n in MEM_METRICS}
        l1 = m.get(MEM_METRICS[0], np.nan)
        l2 = m.get(MEM_METRICS[2], np.nan)
        rows.append(
            {
                "case": case,
                "kernel": k,
                "hw_l1_sectors": l1,
                "mdm_l1_accesses": ks.l1_read_accesses,
                "hw_l1_hit": m.get(MEM_METRICS[1], np.nan) / l1 if l1 else np.nan,
                "mdm_l1_hit": ks.l1_read_hits / max(ks.l1_read_accesses, 1),
                "mdm_l1_pending_hit": ks.l1_read_pending_hits / max(ks.l1_read_accesses, 1),
                "hw_l2_rd_sectors": l2,
                "mdm_l2_rd_accesses": ks.l2_read_accesses,
                "hw_l2_hit": m.get(MEM_METRICS[3], np.nan) / l2 if l2 else np.nan,
                "mdm_l2_hit": 1.0 - ks.l2_read_miss_rate,
                "hw_dram_rd_sectors": m.get(MEM_METRICS[4], np.nan),
                "mdm_dram_rd_sectors": ks.dram_read_bytes / 32,
                "hw_dram_wr_sectors": m.get(MEM_METRICS[5], np.nan),
                "mdm_dram_wr_sectors": ks.dram_write_bytes / 32,
            }
        )
    return rows


def memory(out: Path, gpu_name: str = GPU) -> pd.DataFrame:
    """``out/memory.csv`` again from the committed ncu profiles (``out/ncu/<case>.mem.csv``)
    and the current simulator and preset: after a change to either."""
    rows = []
    for case in CASES:
        f = out / "ncu" / f"{case}.mem.csv"
        if f.exists():
            rows += memory_rows(case, f, gpu_name)
    if not rows:
        raise SystemExit(f"no <case>.mem.csv under {out / 'ncu'}")
    df = pd.DataFrame(rows)
    df.to_csv(out / "memory.csv", index=False)
    return df


def collect(results: Path, out: Path, gpu_name: str = GPU) -> None:
    """``measured.csv`` and ``memory.csv`` from ``run_device.sh``'s output folder, for the
    card of preset ``gpu_name``."""
    from mdm.explore.ncu import ncu_to_measured

    out.mkdir(parents=True, exist_ok=True)
    raw = out / "ncu"
    raw.mkdir(exist_ok=True)
    tables, mem_rows = [], []
    for extra in ("gpu.txt", "latency.csv", "probes.csv", "probes_fetch32.csv"):
        if (results / extra).exists():
            (out / extra).write_text((results / extra).read_text())
    if (results / "probes_ncu.csv").exists():  # `ncu ... mdm_hw probes reps=1`, trimmed
        lines = split(results / "probes_ncu.csv", marker="probes")["probes"]
        (out / "probes_ncu.csv").write_text("\n".join(lines) + "\n")
    for src in sorted(results.glob("*.csv")):
        tag, _, kind = src.stem.rpartition("_")
        if kind not in ("time", "mem") or src.stem.startswith("probes"):
            continue
        for case, lines in split(src).items():
            if case not in CASES:
                raise SystemExit(f"{src}: unknown case {case!r}")
            f = raw / f"{case}.{src.stem}.csv"
            f.write_text("\n".join(lines) + "\n")
            if tag and not (tag in SWEEP_TAGS and kind == "time"):
                continue  # an experiment (e.g. fetch32_time.csv): kept, not tabulated
            if kind == "time":
                name, p = CASES[case]
                df = ncu_to_measured(f, spec(case), gpu_name, klass=md_class_of(name, **p))
                suffix = f"__{tag}" if tag else ""
                df.insert(0, "run_id", [f"{case}__{gpu_name}__k{k}{suffix}" for k in df["kernel"]])
                df["sweep_param"], df["sweep_value"] = SWEEP_TAGS.get(tag, ("baseline", ""))
                tables.append(df)
            else:
                mem_rows += memory_rows(case, f, gpu_name)
    if tables:
        measured = pd.concat(tables, ignore_index=True)
        measured.to_csv(out / "measured.csv", index=False)
        print(measured.to_string(index=False))
    if mem_rows:
        pd.DataFrame(mem_rows).to_csv(out / "memory.csv", index=False)


#: Tagged experiments of ``run_device.sh`` (``TAG=...``), each a change of one axis of
#: the configuration, and the fields the predictions change alike. ``carve<P>``:
#: ``EXTRA="carveout=P"`` (the preferred shared-memory carve-out, percent); ``sm<N>``:
#: ``EXTRA="sms=N"`` (a green context of N SMs); ``s2``: the baseline again, later.
EXPERIMENTS: dict[str, dict[str, int]] = {
    "fetch32": {"l2.fetch_bytes": 32},
    "fetch128": {"l2.fetch_bytes": 128},
    **{f"carve{p}": {} for p in (0, 28, 44, 50, 72, 86, 100)},
    **{f"sm{n}": {"n_sm": n} for n in (8, 16, 32, 64, 96)},
    "s2": {},
}


def _carveout(
    path: Path, gpu: GPUConfig, launches: list[NcuLaunch] | None = None
) -> dict[str, object]:
    """The L1 and shared memory the launches of an ncu file ran with: the carve-out the
    driver chose (``launch__shared_mem_config_size``) as the preset's carve-out options
    that are at least that large (the model then takes the smallest that holds the
    resident blocks' shared memory) and as the shared memory per SM (a carve-out below
    what the blocks need limits the blocks per SM, as on the hardware:
    ``launch__occupancy_limit_shared_mem``). ``launches``: the file's, when already read."""
    from mdm.explore.ncu import read_ncu

    sizes = {
        int(float(lu.metrics["launch__shared_mem_config_size"][1].replace(",", "")))
        for lu in (read_ncu(path) if launches is None else launches)
        if "launch__shared_mem_config_size" in lu.metrics
    }
    opts = gpu.l1.shared_carveouts_bytes
    if gpu.l1.unified_bytes is None or len(sizes) != 1:
        return {}
    size = sizes.pop()
    if size not in opts:
        raise SystemExit(f"{path}: carve-out {size} B is none of {gpu.name}'s {opts}")
    out: dict[str, object] = {"l1.shared_carveouts_bytes": [o for o in opts if o >= size]}
    if size:
        out["sm.shared_mem_bytes"] = size
    return out


#: the models of the committed ``axes.csv`` tables (``axes``' default)
AXES_MODELS = ["mdm", "mdm-pipelined", "mdm-queue", "mdm-mshr", "gpumech", "gpumech+", "mwp-cwp"]


def axes(out: Path, models: list[str], gpu_name: str = GPU, base: str = "") -> pd.DataFrame:
    """Every tagged experiment of :data:`EXPERIMENTS` found under ``out/ncu`` against its
    baseline (``<case>.time.csv``, or ``<case>.<base>_time.csv``): the cycles of the
    case's kernels summed, measured and predicted, each prediction at the clock its run
    had and with the carve-out its kernels ran with, and the ratio to the baseline.
    Written to ``out/axes.csv``; prints the per-experiment mean |error| of the ratio."""
    from mdm.config import load_gpu
    from mdm.explore.ncu import measurement, read_ncu
    from mdm.pipeline import predict_app
    from mdm.traces.workloads import load_trace

    preset = load_gpu(gpu_name)
    rows = []
    for case in CASES:
        base_file = out / "ncu" / f"{case}.{base + '_' if base else ''}time.csv"
        runs = {t: out / "ncu" / f"{case}.{t}_time.csv" for t in EXPERIMENTS if t != base}
        runs = {t: f for t, f in runs.items() if f.exists()}
        if not runs or not base_file.exists():
            continue
        app = load_trace(spec(case))
        pred: dict[str, tuple[float, dict[str, float]]] = {}
        for tag, f in {base or "base": base_file, **runs}.items():
            launches = read_ncu(f)
            if len(launches) != len(app.kernels):
                raise SystemExit(f"{f}: {len(launches)} launches, the trace has {len(app.kernels)}")
            ms = [measurement(f, lu) for lu in launches]
            clock = float(np.mean([m["sm_clock_mhz"] for m in ms]))
            updates = {"core_clock_mhz": clock, **EXPERIMENTS.get(tag, {})}
            updates |= _carveout(f, preset, launches)
            p = predict_app(app, preset.with_updates(updates), models)
            pred[tag] = sum(m["cycles"] for m in ms), {m: p.cycles(m) for m in models}
        hw0, md0 = pred.pop(base or "base")
        for tag, (hw, md) in pred.items():
            row = {"case": case, "experiment": tag, "hw_cycles": hw, "hw_ratio": hw / hw0}
            for m in models:
                row[f"{m}_cycles"] = md[m]
                row[f"{m}_ratio"] = md[m] / md0[m]
            rows.append(row)
    df = pd.DataFrame(rows)
    if df.empty:
        raise SystemExit(f"no tagged experiment with its baseline under {out / 'ncu'}")
    df.to_csv(out / "axes.csv", index=False, float_format="%.6g")
    for tag, g in df.groupby("experiment", sort=False):
        print(f"\n{tag} ({len(g)} cases): ratio to the baseline, measured | predicted")
        for _, r in g.iterrows():
            pr = " ".join(f"{m} x{r[f'{m}_ratio']:.3f}" for m in models)
            print(f"  {r['case']:16s} x{r['hw_ratio']:.3f} | {pr}")
        err = {m: 100 * (g[f"{m}_ratio"] / g["hw_ratio"] - 1).abs().mean() for m in models}
        print("  mean |ratio error| %: " + " ".join(f"{m} {e:.1f}" for m, e in err.items()))
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("out", type=Path)
    c = sub.add_parser("collect")
    c.add_argument("results", type=Path)
    c.add_argument("--out", type=Path, default=Path("benchmarks/hardware/h100"))
    c.add_argument("--gpu", default=GPU, help="preset of the measured card")
    f = sub.add_parser("axes", help="tagged experiments (EXPERIMENTS) against the baseline")
    f.add_argument("--out", type=Path, default=Path("benchmarks/hardware/h100"))
    f.add_argument("--gpu", default=GPU, help="preset of the measured card")
    f.add_argument("--base", default="", help="tag of the baseline run ('' = <case>.time.csv)")
    f.add_argument("--models", nargs="+", default=AXES_MODELS)
    m = sub.add_parser("memory", help="memory.csv again from the committed ncu profiles")
    m.add_argument("--out", type=Path, default=Path("benchmarks/hardware/h100"))
    m.add_argument("--gpu", default=GPU, help="preset of the measured card")
    a = ap.parse_args()
    if a.cmd == "prepare":
        prepare(a.out)
    elif a.cmd == "collect":
        collect(a.results, a.out, a.gpu)
    elif a.cmd == "memory":
        memory(a.out, a.gpu)
    else:
        axes(a.out, a.models, a.gpu, a.base)


if __name__ == "__main__":
    main()
