"""Validation against reference simulator results (Accel-Sim logs + results table).

For each run of ``DIR/results.csv`` the models predict the run's trace
(``DIR/traces/<isa>/<workload>``) on ``import_accelsim(DIR/configs/<arch>/gpgpusim.config,
extra_options)``. Per run we report the IPC error of paper 001 eq. 11, kept signed
(``(IPC_model - IPC_sim) / IPC_sim``) and absolute. Both IPCs are warp instructions
per core cycle: ``IPC_sim = warp_insts / gpu_tot_sim_cycle`` of the reference and
``IPC_model = warp_insts / cycles`` of the model row; the error is the same with
thread IPC for the same instructions (reference README, results.csv).

Runs the pipeline cannot model (an :class:`MdmError`, e.g. a cache organisation the
simulator lacks) are skipped and listed with the reason in ``summary['skipped']``.

When ``DIR/logs/<run_id>.log.xz`` exists, the log's ``gpu_tot_sim_cycle`` is checked
against the table (a mismatch is an error naming both files), its per-kernel
``gpu_sim_cycle`` gives per-kernel errors, and its option dump gives the kernel and
block launch latencies the run used (:data:`LOGGED_OPTIONS`: set on the reference's
command line, not in the table).

Summaries: mean |error| per model over all runs but the calibration microbenchmarks
(``mean_abs_error``: the MD and NMD runs of the reference; ``calib`` reported apart as
``mean_abs_error_calib``), MD / NMD split, per
architecture, per sweep parameter, the Spearman rank correlation between model
and reference IPC over each sweep (the sweep's runs plus the baseline of the same
workload and architecture), and the error of each sweep point's speedup over its
baseline (:func:`with_speedups`; ``mean_abs_speedup_error``, also per sweep parameter).

:func:`score` computes the errors and summaries of one table of runs; the hardware
path (:mod:`mdm.explore.measured`) feeds it too.

Work is grouped per (isa, workload): the trace is read and prepared once, and the
cache simulation runs once per distinct ``cache_key`` among that workload's runs. A
trace with more kernel data on disk than ``mdm.explore.runner.STREAM_TRACE_BYTES`` is
not held: each group of runs sharing a cache key is one pass over it, one kernel at a
time (:func:`mdm.pipeline.predict_app_configs`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from mdm.errors import ConfigError, MdmError, MdmWarning
from mdm.explore.accelsim_log import log_options, parse_log
from mdm.explore.accelsim_runs import kernel_miss_rates
from mdm.explore.runner import check_models, shared_cache_sim

REQUIRED_COLUMNS = (
    "workload",
    "class",
    "arch",
    "isa",
    "sweep_param",
    "sweep_value",
    "warp_insts",
    "gpu_tot_sim_cycle",
    "extra_options",
    "run_id",
)


def load_results(path: str | Path) -> pd.DataFrame:
    """Read a results table; ``extra_options`` and ``sweep_value`` kept as strings."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "results table not found (a reference folder holds results.csv)")
    try:
        df = pd.read_csv(
            path, dtype={"sweep_value": str, "extra_options": str, "kernel_cycles": str}
        )
    except pd.errors.EmptyDataError:
        raise ConfigError(path, "results table is empty: expected a header and runs") from None
    except (pd.errors.ParserError, ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(path, f"cannot read the results table: {exc}") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in df.columns]
    if missing:
        raise ConfigError(path, f"results table lacks column(s) {missing}")
    if not len(df):
        raise ConfigError(path, "results table has no data rows")
    df["extra_options"] = df["extra_options"].fillna("")
    df["sweep_value"] = df["sweep_value"].fillna("")
    bad = df.index[(df["gpu_tot_sim_cycle"] <= 0) | (df["warp_insts"] <= 0)]
    if len(bad):
        raise ConfigError(path, f"line {int(bad[0]) + 2}: cycles and warp_insts must be > 0")
    return df


@dataclass(frozen=True)
class RunTask:
    """All runs of one (isa, workload): one trace, shared preparation and cache sims."""

    reference: str
    isa: str
    workload: str
    runs: tuple[tuple[str, str, str], ...]  # (run_id, arch, extra_options)
    models: tuple[str, ...]


def _backend() -> dict[str, Callable[..., Any]]:
    from mdm.config.accelsim import import_accelsim
    from mdm.explore.runner import trace_streamed
    from mdm.memory import cache_key, simulate_app
    from mdm.pipeline import predict_app, predict_app_configs, prepare
    from mdm.traces import open_trace

    return {
        "import_accelsim": import_accelsim,
        "open_trace": open_trace,
        "prepare": prepare,
        "simulate_app": simulate_app,
        "cache_key": cache_key,
        "predict_app": predict_app,
        "predict_app_configs": predict_app_configs,
        "trace_streamed": trace_streamed,
    }


def run_task(task: RunTask, backend: dict[str, Callable[..., Any]] | None = None) -> list[dict]:
    """Predict every run of one workload; rows (run_id, model, kernel, cycles, ...)."""
    be = backend or _backend()
    ref = Path(task.reference)
    path = ref / "traces" / task.isa / task.workload
    try:
        if "trace_streamed" in be and be["trace_streamed"](path):
            return _run_task_streamed(task, be, path)
        app = be["open_trace"](path)
        prepared = be["prepare"](app)
    except MdmError as exc:
        return [{"run_id": r[0], "skip_reason": str(exc)} for r in task.runs]
    caches: dict[tuple, Any] = {}
    rows: list[dict] = []
    for run_id, arch, extra in task.runs:
        try:
            gpu = _import_run(be, ref, arch, extra, run_id)
            key = be["cache_key"](gpu)
            if key not in caches:
                caches[key] = shared_cache_sim(be["simulate_app"], app, prepared, gpu)
            pred = be["predict_app"](prepared, gpu, list(task.models), cache=caches[key])
        except MdmError as exc:  # e.g. a configuration the cache simulator does not model
            rows.append({"run_id": run_id, "skip_reason": str(exc)})
            continue
        rows += prediction_rows(run_id, pred)
    return rows


def prediction_rows(run_id: str, pred: Any) -> list[dict]:
    """The prediction's tidy rows (``to_rows``) for run ``run_id``, each with the cache
    simulation's miss rates (:func:`cachesim_columns`): a kernel row its kernel's, a
    ``total`` row the application's."""
    app = cachesim_columns(pred)
    per = [cachesim_columns(pred, i) for i in range(len(getattr(pred, "inputs", [])))]
    out: list[dict] = []
    pos: dict[str, int] = {}  # next kernel position per model (to_rows: kernels, total)
    for r in pred.to_rows():
        if str(r["kernel"]) == "total":
            cache = app
        else:
            i = pos.get(r["model"], 0)
            pos[r["model"]] = i + 1
            cache = per[i] if i < len(per) else {}
        out.append({"run_id": run_id, **r, **cache})
    return out


#: The cache simulation's totals in every prediction row of a run, and the reference
#: columns (results.csv) they are compared with in the summary's ``cache_simulation``
CACHESIM_COLUMNS = {
    "cachesim_l1_miss_rate": "l1d_rd_miss_rate",
    "cachesim_l2_miss_rate": "l2_miss_rate",
}


def cachesim_columns(pred: Any, kernel: int | None = None) -> dict[str, float]:
    """A run's cache-simulation miss rates over all its kernels (L1 global reads, as
    Accel-Sim's ``l1d_rd_miss_rate``; all L2 accesses, as its ``l2_miss_rate``), or
    over its predicted kernel at position ``kernel`` alone, from the prediction's
    kernel inputs (``{}`` without them)."""
    from mdm.memory.stats import CacheSimResult

    stats = [i.cache for i in getattr(pred, "inputs", [])]
    if kernel is not None:
        stats = stats[kernel : kernel + 1]
    if not stats:
        return {}
    tot = CacheSimResult(config_name="", kernels=stats).total()
    return {
        "cachesim_l1_miss_rate": tot.l1_miss_rate if tot.l1_read_accesses else math.nan,
        "cachesim_l2_miss_rate": tot.l2_miss_rate if tot.l2_accesses else math.nan,
    }


#: Columns of the per-kernel table (``kernels.csv``): the log's cycles and, from the
#: differences of its cumulative counters, the kernel's own miss rates
#: (:func:`mdm.explore.accelsim_runs.kernel_miss_rates`) beside the cache simulation's.
#: ``kernel`` is the launch's position from 0 (as a measured table's ``kernel`` index),
#: ``kernel_name`` the trace's name for it.
KERNEL_RATE_COLUMNS = [*CACHESIM_COLUMNS.values(), *CACHESIM_COLUMNS]
KERNEL_COLUMNS = [
    "run_id",
    "model",
    "kernel",
    "kernel_name",
    "cycles_sim",
    "cycles_model",
    "error",
    *KERNEL_RATE_COLUMNS,
]


#: Options a run's log decides over its configuration file and the table's
#: ``extra_options``: the reference's runs set them on the command line (README:
#: ``-gpgpu_kernel_launch_latency 0``, "kernel cycles only"), which the table does not list.
LOGGED_OPTIONS = ("-gpgpu_kernel_launch_latency", "-gpgpu_TB_launch_latency")


def run_log(ref: Path, run_id: str) -> Path:
    """Where the reference folder ``ref`` keeps run ``run_id``'s Accel-Sim log."""
    return ref / "logs" / f"{run_id}.log.xz"


def run_options(ref: Path, run_id: str, extra: str) -> str:
    """A run's ``extra_options`` followed by the :data:`LOGGED_OPTIONS` values its log's
    option dump shows (:func:`~mdm.explore.accelsim_log.log_options`), when
    ``logs/<run_id>.log.xz`` exists."""
    log = run_log(ref, run_id)
    if not log.is_file():
        return extra
    logged = log_options(log, LOGGED_OPTIONS)
    return " ".join([extra, *(f"{k} {v}" for k, v in logged.items())]).strip()


def _run_gpus(ref: Path, table: pd.DataFrame) -> Iterator[Any]:
    """The configurations of the runs of ``table`` that import (the others are
    reported by their tasks)."""
    be = _backend()
    for run_id, arch, extra in zip(
        table["run_id"], table["arch"], table["extra_options"], strict=True
    ):
        try:
            yield _import_run(be, ref, arch, extra, run_id)
        except MdmError:
            continue


def _import_run(
    be: dict[str, Callable[..., Any]], ref: Path, arch: str, extra: str, run_id: str = ""
) -> Any:
    opts = run_options(ref, run_id, extra) if run_id else extra
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unmapped options: reported by the importer
        return be["import_accelsim"](ref / "configs" / arch / "gpgpusim.config", opts)


def _run_task_streamed(task: RunTask, be: dict[str, Callable[..., Any]], path: Path) -> list[dict]:
    """:func:`run_task` for a trace larger than ``STREAM_TRACE_BYTES``
    (:mod:`mdm.explore.runner`): the runs are grouped by cache key and each group is one
    pass over the trace, one kernel at a time (``predict_app_configs``)."""
    ref = Path(task.reference)
    rows_of: dict[str, list[dict]] = {}
    groups: dict[tuple, list[tuple[str, Any]]] = {}
    for run_id, arch, extra in task.runs:
        try:
            gpu = _import_run(be, ref, arch, extra, run_id)
            groups.setdefault(be["cache_key"](gpu), []).append((run_id, gpu))
        except MdmError as exc:
            rows_of[run_id] = [{"run_id": run_id, "skip_reason": str(exc)}]
    for members in groups.values():
        try:
            app = be["open_trace"](path, lazy=True)
            preds = be["predict_app_configs"](app, [g for _, g in members], list(task.models))
        except MdmError as exc:
            for run_id, _ in members:
                rows_of[run_id] = [{"run_id": run_id, "skip_reason": str(exc)}]
            continue
        for (run_id, _), pred in zip(members, preds, strict=True):
            rows_of[run_id] = prediction_rows(run_id, pred)
    return [r for run_id, _, _ in task.runs for r in rows_of[run_id]]


@dataclass
class ValidationResult:
    """Per-run and per-kernel errors plus summaries (DataFrames) and the JSON summary."""

    runs: pd.DataFrame
    kernels: pd.DataFrame
    by_class: pd.DataFrame
    by_sweep: pd.DataFrame
    spearman: pd.DataFrame
    summary: dict[str, Any]


def ipc_error(ipc_model: Any, ipc_sim: Any) -> Any:
    """Signed relative IPC error; paper 001 eq. 11 is its absolute value."""
    return (np.asarray(ipc_model, dtype=float) - ipc_sim) / ipc_sim


def _mean(x: pd.Series) -> float:
    return float(x.mean()) if len(x) else math.nan


def map_tasks(
    fn: Callable[..., Any],
    tasks: Sequence[Any],
    workers: int,
    backend: dict[str, Callable[..., Any]] | None,
    gpus: Callable[[], Iterable[Any]] | None = None,
) -> list[Any]:
    """``fn(task)`` for each task: in ``workers`` spawned processes, or serially (with
    ``backend``) when one worker, one task or a test backend is given.

    ``gpus`` (in processes only): the tasks' configurations. The cache simulator's issue
    loops they need and numba's cache lacks are compiled first, one per worker
    (:func:`~mdm.memory.cachesim.compile_first_in`): otherwise every worker compiled
    every loop at its first simulation with it (about 26 s each; a cold ``mdm validate``
    of the reference's two architectures 70-73 -> 59-60 s, docs/measurement-log.md). A
    failed compilation is left to the tasks."""
    if workers > 1 and backend is None and len(tasks) > 1:
        import multiprocessing

        from mdm.memory.cachesim import compile_first_in

        # spawn: forking after numba code has run can deadlock the children
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            first = compile_first_in(pool, gpus()) if gpus is not None else []
            out = list(pool.map(fn, tasks))
            for f in first:
                f.exception()  # joined; a failure only means the tasks compiled the loop
            return out
    return [fn(t, backend) for t in tasks]


def validate(
    reference: str | Path,
    models: Sequence[str] = ("mdm", "gpumech"),
    run_ids: Sequence[str] | None = None,
    workers: int = 1,
    backend: dict[str, Callable[..., Any]] | None = None,
    use_logs: bool = True,
) -> ValidationResult:
    """Run the models on the reference runs and compute errors and summaries."""
    check_models(models, "--models")
    ref = Path(reference)
    table = load_results(ref / "results.csv")
    if run_ids is not None:
        unknown = sorted(set(run_ids) - set(table["run_id"]))
        if unknown:
            raise ConfigError(ref / "results.csv", f"unknown run id(s) {unknown}")
        table = table[table["run_id"].isin(run_ids)].reset_index(drop=True)
    no_log = [r for r in table["run_id"] if not run_log(ref, r).is_file()]
    if no_log:
        warnings.warn(
            MdmWarning(
                f"{ref / 'logs'}: no log for {len(no_log)} of {len(table)} runs (e.g. "
                f"{no_log[0]}.log.xz): their {', '.join(LOGGED_OPTIONS)} come from the "
                "configuration files, and they get no per-kernel errors"
            ),
            stacklevel=2,
        )
    tasks = [
        RunTask(
            str(ref),
            isa,
            wl,
            tuple(zip(g["run_id"], g["arch"], g["extra_options"], strict=True)),
            tuple(models),
        )
        for (isa, wl), g in table.groupby(["isa", "workload"], sort=True)
    ]
    chunks = map_tasks(run_task, tasks, workers, backend, lambda: _run_gpus(ref, table))
    pred = pd.DataFrame([r for c in chunks for r in c])
    if "skip_reason" not in pred.columns:
        pred["skip_reason"] = None
    skipped_rows = pred[pred["skip_reason"].notna()]
    skipped = dict(zip(skipped_rows["run_id"], skipped_rows["skip_reason"], strict=True))
    pred = pred[pred["skip_reason"].isna()].drop(columns="skip_reason")
    if pred.empty:
        raise ConfigError(ref, f"no run could be predicted; e.g. {next(iter(skipped.values()))}")

    tot = pred[pred["kernel"].astype(str) == "total"]
    kernels = _kernel_errors(ref, table, pred, use_logs)
    return score(table, tot, "gpu_tot_sim_cycle", kernels, skipped)


def score(
    table: pd.DataFrame,
    per_run: pd.DataFrame,
    ref_cycles: str,
    kernels: pd.DataFrame,
    skipped: dict[str, str],
    extra_summary: bool = False,
) -> ValidationResult:
    """Errors and summaries of one table of runs, whatever its source (simulator or hardware).

    ``table``: one row per run with ``run_id``, ``class``, ``arch``, ``workload``,
    ``sweep_param``, ``sweep_value``, the reference cycles in column ``ref_cycles`` and,
    optionally, the reference ``warp_insts`` (without it the model's instruction count
    is used, i.e. the same instructions). ``per_run``: one model row per (run, model)
    with ``cycles`` and ``warp_insts``. The IPC error is paper 001 eq. 11 kept signed:
    ``IPC_ref = warp_insts / ref_cycles``, ``IPC_model = warp_insts_model / cycles``.
    ``extra_summary`` adds ``mean_abs_error_by_class`` and ``mean_abs_error_by_gpu``
    (same as ``_by_arch``) to each model's summary.
    """
    runs = table.merge(per_run, on="run_id", how="inner", suffixes=("", "_model"))
    if "warp_insts_model" not in runs.columns:
        runs["warp_insts_model"] = runs["warp_insts"]
    runs["ipc_sim"] = runs["warp_insts"] / runs[ref_cycles]
    runs["ipc_model"] = runs["warp_insts_model"] / runs["cycles"]
    runs["error"] = ipc_error(runs["ipc_model"], runs["ipc_sim"])
    runs["abs_error"] = runs["error"].abs()
    runs = with_speedups(runs)

    by_class = (
        runs.groupby(["model", "class"])["abs_error"].agg(["mean", "max", "count"]).reset_index()
    )
    by_sweep = (
        runs.assign(_speedup=runs["speedup_error"].abs())
        .groupby(["model", "arch", "sweep_param"])
        .agg(
            mean=("abs_error", "mean"),
            max=("abs_error", "max"),
            count=("abs_error", "count"),
            mean_abs_speedup_error=("_speedup", "mean"),
        )
        .reset_index()
    )
    spear = _spearman(runs)
    summary = _summary(runs, spear, extra_summary)
    summary["skipped"] = skipped
    return ValidationResult(runs, kernels, by_class, by_sweep, spear, summary)


def with_speedups(runs: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with each sweep point's speedup over its baseline, simulated and predicted.

    For a run that is not a baseline and whose (model, arch, workload) has one:
    ``speedup_sim = IPC_sim / IPC_sim(baseline)``, ``speedup_model`` the same with the
    model's IPCs, and ``speedup_error = speedup_model / speedup_sim - 1`` (NaN for
    baselines and points without one). A design-space question ("how much faster with
    twice the DRAM bandwidth?", paper 001 Figs. 11-15) is answered by the speedup, and
    a model biased by the same factor at the point and its baseline predicts it
    exactly, whatever its eq. (11) error.
    """
    keys = ["model", "arch", "workload"]
    base = runs[runs["sweep_param"] == "baseline"].drop_duplicates(keys)
    base = base[[*keys, "ipc_sim", "ipc_model"]].rename(
        columns={"ipc_sim": "_sim0", "ipc_model": "_model0"}
    )
    out = runs.merge(base, on=keys, how="left")
    point = out["sweep_param"] != "baseline"
    out["speedup_sim"] = (out["ipc_sim"] / out["_sim0"]).where(point)
    out["speedup_model"] = (out["ipc_model"] / out["_model0"]).where(point)
    out["speedup_error"] = out["speedup_model"] / out["speedup_sim"] - 1.0
    return out.drop(columns=["_sim0", "_model0"])


def _kernel_errors(
    ref: Path, table: pd.DataFrame, pred: pd.DataFrame, use_logs: bool
) -> pd.DataFrame:
    """Per-kernel errors against the logs (``gpu_sim_cycle``); checks log totals."""
    rows = []
    kp = pred[pred["kernel"].astype(str) != "total"]
    for rec in table.itertuples(index=False):
        log_path = run_log(ref, rec.run_id)
        if not (use_logs and log_path.exists()):
            continue
        log = parse_log(log_path)
        rates = kernel_miss_rates(log)
        if not math.isclose(log.tot_sim_cycle, float(rec.gpu_tot_sim_cycle), rel_tol=1e-9):
            raise ConfigError(
                log_path,
                f"gpu_tot_sim_cycle {log.tot_sim_cycle:g} differs from "
                f"{ref / 'results.csv'} ({rec.gpu_tot_sim_cycle}) for {rec.run_id}",
            )
        mine = kp[kp["run_id"] == rec.run_id]
        if mine.empty:
            continue
        for model, g in mine.groupby("model"):
            for i, (_, r) in enumerate(g.iterrows()):
                if i >= len(log.kernels):
                    break
                sim = log.kernels[i].stats["gpu_sim_cycle"]
                rows.append(
                    {
                        "run_id": rec.run_id,
                        "model": model,
                        "kernel": i,
                        "kernel_name": r["kernel"],
                        "cycles_sim": sim,
                        "cycles_model": r["cycles"],
                        # same instructions: IPC ratio = inverse cycle ratio (eq. 11)
                        "error": sim / r["cycles"] - 1.0,
                        **rates[i],
                        **{c: r.get(c, math.nan) for c in CACHESIM_COLUMNS},
                    }
                )
    return pd.DataFrame(rows, columns=KERNEL_COLUMNS)


def _spearman(runs: pd.DataFrame) -> pd.DataFrame:
    """Spearman rho of model vs reference IPC over each sweep (+ its baseline), with the
    workload's ``class``."""
    out = []
    base = runs[runs["sweep_param"] == "baseline"]
    for (model, arch, wl, param), g in runs[runs["sweep_param"] != "baseline"].groupby(
        ["model", "arch", "workload", "sweep_param"]
    ):
        b = base[(base["model"] == model) & (base["arch"] == arch) & (base["workload"] == wl)]
        pts = pd.concat([g, b])
        rho = math.nan
        if len(pts) >= 3 and pts["ipc_sim"].nunique() > 1 and pts["ipc_model"].nunique() > 1:
            rho = float(spearmanr(pts["ipc_model"], pts["ipc_sim"]).statistic)
        out.append(
            {
                "model": model,
                "arch": arch,
                "workload": wl,
                "sweep_param": param,
                "class": g["class"].iloc[0],
                "points": len(pts),
                "spearman": rho,
            }
        )
    return pd.DataFrame(
        out, columns=["model", "arch", "workload", "sweep_param", "class", "points", "spearman"]
    )


def _summary(runs: pd.DataFrame, spear: pd.DataFrame, extra: bool = False) -> dict[str, Any]:
    """Per model summary; ``mean_abs_error``, ``mean_spearman``, the speed-up errors and
    the per-arch/sweep means leave out ``calib`` runs and sweeps (``*_calib`` has them)."""
    res: dict[str, Any] = {"runs": int(runs["run_id"].nunique()), "models": {}}
    for model, g in runs.groupby("model"):
        app = g[g["class"] != "calib"]
        sp = spear[spear["model"] == model]
        s = sp[sp["class"] != "calib"]["spearman"].dropna()
        s_calib = sp[sp["class"] == "calib"]["spearman"].dropna()
        change = app["speedup_error"].abs().dropna()
        res["models"][model] = {
            "mean_abs_error": _mean(app["abs_error"]),
            "mean_abs_error_md": _mean(g[g["class"] == "MD"]["abs_error"]),
            "mean_abs_error_nmd": _mean(g[g["class"] == "NMD"]["abs_error"]),
            "mean_abs_error_calib": _mean(g[g["class"] == "calib"]["abs_error"]),
            "max_abs_error": float(app["abs_error"].max()) if len(app) else math.nan,
            "mean_abs_error_by_arch": {a: _mean(x["abs_error"]) for a, x in app.groupby("arch")},
            "mean_abs_error_by_sweep": {
                p: _mean(x["abs_error"]) for p, x in app.groupby("sweep_param")
            },
            "mean_spearman": float(s.mean()) if len(s) else math.nan,
            "mean_spearman_calib": float(s_calib.mean()) if len(s_calib) else math.nan,
            "mean_abs_speedup_error": _mean(change),
            "mean_abs_speedup_error_by_sweep": {
                p: _mean(x["speedup_error"].abs())
                for p, x in app.groupby("sweep_param")
                if p != "baseline"
            },
            "runs": int(len(g)),
        }
        if extra:
            d = res["models"][model]
            d["mean_abs_error_by_class"] = {c: _mean(x["abs_error"]) for c, x in g.groupby("class")}
            d["mean_abs_error_by_gpu"] = dict(d["mean_abs_error_by_arch"])
    cache = _cachesim_summary(runs)
    if cache:
        res["cache_simulation"] = cache
    return res


def _cachesim_summary(runs: pd.DataFrame) -> dict[str, Any]:
    """Mean |cache-simulation miss rate - reference's| over the runs that have both
    (one row per run), to tell a model's error from its inputs' (``{}`` when none)."""
    out: dict[str, Any] = {}
    one = runs.drop_duplicates("run_id")
    for ours, ref in CACHESIM_COLUMNS.items():
        if ours in one.columns and ref in one.columns:
            d = (one[ours] - one[ref]).abs().dropna()
            if len(d):
                key = ours.removeprefix("cachesim_")
                out[f"mean_abs_{key}_difference"] = float(d.mean())
                out[f"max_abs_{key}_difference"] = float(d.max())
                out["runs"] = max(int(out.get("runs", 0)), len(d))
    return out
