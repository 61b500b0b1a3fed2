"""Validation against measured times: hardware (Nsight Compute, timers) or any simulator.

A *measured table* (CSV or Parquet) has one row per measured run or kernel:

* ``trace``: a trace folder / ``kernelslist.g`` / ``.mdmtrace`` or a ``builtin:NAME?k=v``
  spec, as ``mdm predict`` accepts; ``gpu``: a preset name, TOML/YAML/JSON file or
  ``gpgpusim.config``, as ``--gpu`` accepts. Relative paths are relative to the table's
  folder.
* ``kernel`` (optional): the 0-based index in the trace's kernel list, or a kernel name
  (the full name, or its function name: see :func:`mdm.traces.names.function_name`);
  empty or absent: the whole application (cycles of all kernels).
* exactly one of ``cycles`` (SM core cycles) and ``time_us``; ``sm_clock_mhz`` (optional)
  the SM clock the run had.
* ``run_id`` (optional; default ``<trace label>__<gpu label>[__k<index>|__<name>]``, with
  ``__row<N>`` added when two rows would get the same id), ``class`` (optional, default
  ``unknown``; ``calib`` rows are left out of ``mean_abs_error`` as in the reference
  path), ``sweep_param`` / ``sweep_value`` (optional, default ``baseline`` / empty: rows
  of one sweep get a Spearman trend correlation as in the reference path),
  ``l1d_rd_miss_rate`` and ``l2_miss_rate`` (optional, in [0, 1]: the run's, or the
  row's kernel's, L1 global-read and L2 miss rates as Accel-Sim counts them; compared
  with the cache simulation's for the same kernels in ``summary['cache_simulation']``,
  as in the reference path). Other columns are ignored.

Choices (documented, tested):

* ``cycles = time_us * clock_mhz`` with the row's ``sm_clock_mhz``, else the
  configuration's ``core_clock_mhz`` (``clock_source`` = ``config`` in the run table,
  listed in ``summary['clock_from_config']``): boost clocks differ from nominal ones.
* When ``sm_clock_mhz`` is given, the models predict on the configuration with
  ``core_clock_mhz`` set to it (the clock the GPU ran at; memory latencies are in ns in
  our configurations, so this is the DVFS study's change of clock). Without it they
  predict on the configuration as given.
* Error: paper 001 eq. 11 on IPC for the same instructions (the trace's), i.e.
  ``cycles_measured / cycles_model - 1``, computed by :func:`mdm.explore.validate.score`,
  which also gives the summaries (per model, class, gpu, sweep) of the reference path.
  In the run table ``workload`` is the trace label (plus ``[k]`` for a kernel row) and
  ``arch`` the ``gpu`` label, so the reports group per GPU.
* Work is grouped per trace: each trace is read and prepared once, each distinct
  (gpu, clock) predicted once, and the cache simulation runs once per distinct
  :func:`mdm.memory.cache_key` among them (``shared_cache_sim``). A trace with more
  kernel data on disk than ``mdm.explore.runner.STREAM_TRACE_BYTES`` is not held: each
  group of configurations sharing a cache key is one pass over it, one kernel at a time
  (:func:`mdm.pipeline.predict_app_configs`), and rows are matched to kernels (by index
  or name) after the pass, from the names it read.
* A bad row (missing column, unreadable trace or gpu, kernel out of range or not in the
  trace, both or neither of ``cycles``/``time_us``, non-positive value, duplicate
  ``run_id``) raises :class:`ConfigError` naming the table and the 1-based data row. A
  run the pipeline cannot model (an :class:`MdmError` while predicting) is skipped and
  listed with its reason in ``summary['skipped']``, as in the reference path.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from mdm.config.load import is_preset
from mdm.errors import ConfigError, MdmError, TraceFormatError
from mdm.explore.runner import check_models, shared_cache_sim
from mdm.explore.validate import (
    KERNEL_COLUMNS,
    KERNEL_RATE_COLUMNS,
    ValidationResult,
    cachesim_columns,
    map_tasks,
    score,
)
from mdm.traces.model import KernelTrace, LazyApp, Memcpy
from mdm.traces.workloads import BUILTIN

NUMERIC = ("cycles", "time_us", "sm_clock_mhz")
#: Optional measured miss rates, compared with the cache simulation's (the reference
#: path's ``validate.CACHESIM_COLUMNS``) for the row's kernels
RATES = ("l1d_rd_miss_rate", "l2_miss_rate")


def _cell(v: Any) -> str:
    """A table cell as stripped text ('' for missing)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def _number(path: Path, row: int, col: str, text: str) -> float:
    try:
        x = float(text.replace(",", ""))
    except ValueError:
        raise ConfigError(path, f"row {row}: {col} {text!r} is not a number") from None
    if not (math.isfinite(x) and x > 0):
        raise ConfigError(path, f"row {row}: {col} must be a positive number, got {text!r}")
    return x


def _rate(path: Path, row: int, col: str, text: str) -> float:
    """A miss rate cell: NaN when empty, else a number in [0, 1]."""
    if not text:
        return math.nan
    try:
        x = float(text)
    except ValueError:
        raise ConfigError(path, f"row {row}: {col} {text!r} is not a number") from None
    if not 0.0 <= x <= 1.0:
        raise ConfigError(path, f"row {row}: {col} must be a rate in [0, 1], got {text!r}")
    return x


def trace_label(spec: str) -> str:
    """Short name of a trace spec: the builtin spec itself, else the folder or file stem."""
    if spec.startswith(BUILTIN):
        return spec
    p = Path(spec)
    if p.name == "kernelslist.g":
        p = p.parent
    return p.name.removesuffix(".mdmtrace") or spec


def gpu_label(spec: str) -> str:
    """Short name of a gpu spec: a preset name, a config's folder (``gpgpusim.config``) or stem."""
    p = Path(spec)
    if p.name.endswith("gpgpusim.config"):
        return p.parent.name or p.name
    return p.stem if p.suffix else spec


def _resolve(base: Path, spec: str, builtin_ok: bool) -> str:
    """``spec`` with a relative path taken from ``base`` (the table's folder).

    Traces: a ``builtin:`` spec is kept, anything else is a path. GPUs: a preset's name
    is kept as is (as :func:`mdm.config.load_gpu` reads it, even beside a folder of that
    name), and so is a name without a suffix or slash that is no file in ``base``.
    """
    if builtin_ok and spec.startswith(BUILTIN):
        return spec
    if not builtin_ok and is_preset(spec):  # a preset's name, as load_gpu reads it
        return spec
    p = Path(spec)
    if p.is_absolute():
        return spec
    cand = base / p
    if builtin_ok or cand.exists() or p.suffix or "/" in spec:
        return str(cand)
    return spec


#: the classes the summaries split by, in the spelling they use (any case accepted)
CLASSES = ("MD", "NMD", "calib")


def _klass(text: str) -> str:
    """A row's class: ``md``, ``Md`` ... read as ``MD`` (and ``NMD``, ``calib``), so that
    the MD / NMD / calib means count it; other names kept as given; empty: unknown."""
    text = text.strip()
    return next((c for c in CLASSES if c.lower() == text.lower()), text or "unknown")


def load_measured(path: str | Path) -> pd.DataFrame:
    """Read and check a measured table (module docstring); one row per measurement.

    Columns of the result: ``row`` (1-based data row), ``run_id``, ``trace`` and ``gpu``
    (resolved), ``trace_label``, ``gpu_label``, ``kernel`` ('' = whole app), ``class``,
    ``sweep_param``, ``sweep_value``, ``cycles``, ``time_us``, ``sm_clock_mhz`` (NaN when
    absent).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "measured table not found")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            raw = pd.read_parquet(path)
        else:
            raw = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise ConfigError(path, f"cannot read the measured table: {exc}") from None
    raw.columns = [str(c).strip() for c in raw.columns]
    missing = [c for c in ("trace", "gpu") if c not in raw.columns]
    if missing or not ({"cycles", "time_us"} & set(raw.columns)):
        need = missing + ([] if {"cycles", "time_us"} & set(raw.columns) else ["cycles|time_us"])
        raise ConfigError(
            path,
            f"measured table lacks column(s) {need}; expected trace, gpu, cycles or "
            "time_us, and optionally kernel, sm_clock_mhz, run_id, class, sweep_param, "
            "sweep_value",
        )
    if raw.empty:
        raise ConfigError(path, "measured table has no data rows")
    base = path.parent
    recs: list[dict[str, Any]] = []
    for i, r in enumerate(raw.to_dict("records"), start=1):
        cell = {k: _cell(r.get(k)) for k in raw.columns}
        trace, gpu = cell.get("trace", ""), cell.get("gpu", "")
        if not trace:
            raise ConfigError(path, f"row {i}: empty trace; expected a trace path or builtin:")
        if not gpu:
            raise ConfigError(path, f"row {i}: empty gpu; expected a preset or config file")
        have = [c for c in ("cycles", "time_us") if cell.get(c, "")]
        if len(have) != 1:
            raise ConfigError(
                path,
                f"row {i}: expected exactly one of cycles and time_us, got "
                f"{'both' if have else 'neither'}",
            )
        vals = {c: _number(path, i, c, cell[c]) if cell.get(c, "") else math.nan for c in NUMERIC}
        vals.update({c: _rate(path, i, c, cell.get(c, "")) for c in RATES})
        kernel = cell.get("kernel", "")
        if re.fullmatch(r"[+-]?\d+(\.0*)?", kernel):  # an index, also as written "3.0"
            kernel = str(int(float(kernel)))
        if kernel.startswith("-"):
            raise ConfigError(path, f"row {i}: kernel index {kernel} must be >= 0")
        recs.append(
            {
                "row": i,
                "run_id": cell.get("run_id", ""),
                "trace": _resolve(base, trace, True),
                "gpu": _resolve(base, gpu, False),
                "trace_label": trace_label(trace),
                "gpu_label": gpu_label(gpu),
                "kernel": kernel,
                "class": _klass(cell.get("class", "")),
                "sweep_param": cell.get("sweep_param", "") or "baseline",
                "sweep_value": cell.get("sweep_value", ""),
                **vals,
            }
        )
    table = pd.DataFrame(recs)
    _assign_run_ids(path, table)
    return table


def _assign_run_ids(path: Path, table: pd.DataFrame) -> None:
    """Default run ids; a duplicate given run id is an error naming both rows."""
    seen: dict[str, int] = {}
    for _, r in table.iterrows():
        if r["run_id"]:
            if r["run_id"] in seen:
                raise ConfigError(
                    path,
                    f"row {r['row']}: run_id {r['run_id']!r} already used by row "
                    f"{seen[r['run_id']]}; expected unique run ids",
                )
            seen[r["run_id"]] = int(r["row"])
    for idx, r in table.iterrows():
        if r["run_id"]:
            continue
        k = r["kernel"]
        rid = f"{r['trace_label']}__{r['gpu_label']}" + (
            "" if not k else f"__k{k}" if k.isdigit() else f"__{k}"
        )
        if rid in seen:
            rid = f"{rid}__row{r['row']}"
        seen[rid] = int(r["row"])
        table.at[idx, "run_id"] = rid


@dataclass(frozen=True)
class MeasuredTask:
    """All rows of one trace: (run_id, row, gpu spec, kernel, sm_clock_mhz or NaN)."""

    table: str
    trace: str
    rows: tuple[tuple[str, int, str, str, float], ...]
    models: tuple[str, ...]


def _backend() -> dict[str, Callable[..., Any]]:
    from mdm.config import load_gpu
    from mdm.explore.runner import trace_streamed
    from mdm.memory import cache_key, simulate_app
    from mdm.pipeline import predict_app, predict_app_configs, prepare
    from mdm.traces.workloads import load_trace

    return {
        "load_trace": load_trace,
        "load_gpu": load_gpu,
        "prepare": prepare,
        "simulate_app": simulate_app,
        "cache_key": cache_key,
        "predict_app": predict_app,
        "predict_app_configs": predict_app_configs,
        "trace_streamed": trace_streamed,
    }


def select_kernel(names: Sequence[str], kernel: str) -> int:
    """Index of ``kernel`` (an index or a name) in ``names``; ValueError says why not."""
    from mdm.traces.names import function_name

    if kernel.isdigit():
        k = int(kernel)
        if k >= len(names):
            raise ValueError(
                f"kernel index {k} out of range; the trace has {len(names)} kernel(s) (0-based)"
            )
        return k
    hits = [i for i, n in enumerate(names) if n == kernel]
    if not hits:
        fn = function_name(kernel)
        hits = [i for i, n in enumerate(names) if function_name(n) == fn]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        short = sorted({function_name(n) for n in names})
        raise ValueError(f"kernel {kernel!r} is not in the trace; its kernels: {short}")
    raise ValueError(f"kernel {kernel!r} matches kernels {hits}; give the index")


@dataclass(frozen=True)
class _RowConfig:
    """One row's configuration: ``pkey`` = (gpu spec, clock) names one prediction."""

    run_id: str
    row: int
    kernel: str
    pkey: tuple[str, float]
    gpu: Any
    measured_clock: bool


class _Task:
    """Per-trace state of :func:`run_measured_task`: the output lists and the loaded gpus."""

    def __init__(self, task: MeasuredTask, be: dict[str, Callable[..., Any]]) -> None:
        self.task = task
        self.be = be
        self.out: dict[str, list[Any]] = {"runs": [], "pred": [], "skipped": [], "errors": []}
        self._gpus: dict[str, Any] = {}

    def config(
        self, run_id: str, row: int, gspec: str, kernel: str, clock: float
    ) -> _RowConfig | None:
        """The row's configuration (its clock applied), or None with the row's error added."""
        try:
            if gspec not in self._gpus:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # unmapped gpgpusim options
                    self._gpus[gspec] = self.be["load_gpu"](gspec)
            base = self._gpus[gspec]
        except (MdmError, OSError) as exc:
            self.out["errors"].append((row, f"gpu {gspec!r}: {exc}"))
            return None
        measured = not math.isnan(clock)
        clock_mhz = clock if measured else float(base.core_clock_mhz)
        gpu = base.with_updates({"core_clock_mhz": clock}) if measured else base
        return _RowConfig(run_id, row, kernel, (gspec, clock_mhz), gpu, measured)

    def kernel_of(
        self, row: int, kernel: str, names: Sequence[str], predicted: Sequence[int]
    ) -> int | None:
        """The row's kernel index (None: whole app); -1 with the row's error added."""
        try:
            k = None if kernel == "" else select_kernel(names, kernel)
        except ValueError as exc:
            self.out["errors"].append((row, f"{exc} ({self.task.trace})"))
            return -1
        if k is not None and k not in predicted:
            self.out["errors"].append((row, f"kernel {k} of {self.task.trace} has no instructions"))
            return -1
        return k

    def emit(
        self,
        rc: _RowConfig,
        k: int | None,
        names: Sequence[str],
        predicted: Sequence[int],
        pred: Any,
    ) -> None:
        """The row's model rows (the app total, or kernel ``k``'s) and its run record."""
        rows = pred.to_rows()
        if k is None:
            sel = [r for r in rows if str(r["kernel"]) == "total"]
        else:
            pos = predicted.index(k)
            sel = []
            for m in self.task.models:
                mine = [r for r in rows if r["model"] == m and str(r["kernel"]) != "total"]
                sel.append(mine[pos])
        # the app's miss rates, or the kernel's
        cache = cachesim_columns(pred, None if k is None else predicted.index(k))
        for r in sel:
            self.out["pred"].append({"run_id": rc.run_id, **r, **cache})
        self.out["runs"].append(
            {
                "run_id": rc.run_id,
                "kernel_index": -1 if k is None else k,
                "kernel_name": "" if k is None else names[k],
                "clock_mhz": rc.pkey[1],
                "clock_source": "measured" if rc.measured_clock else "config",
            }
        )


def run_measured_task(
    task: MeasuredTask, backend: dict[str, Callable[..., Any]] | None = None
) -> dict[str, list[Any]]:
    """Predict every row of one trace. Returns ``runs`` (per run: measured cycles, clock,
    kernel), ``pred`` (one model row per run and model), ``skipped`` ((run_id, reason))
    and ``errors`` ((row, message) for bad rows; raised by the caller, not picklable
    exceptions across processes).

    A trace on disk with more kernel data than
    :data:`mdm.explore.runner.STREAM_TRACE_BYTES` is not held: :func:`_run_streamed`."""
    be = backend or _backend()
    st = _Task(task, be)
    first = task.rows[0][1]
    try:
        if (
            "trace_streamed" in be
            and not task.trace.startswith(BUILTIN)
            and be["trace_streamed"](task.trace)
        ):
            return _run_streamed(st)
        app = be["load_trace"](task.trace)
        prepared = be["prepare"](app)
    except (MdmError, OSError) as exc:
        st.out["errors"].append((first, f"trace {task.trace!r}: {exc}"))
        return st.out
    names = [k.name for k in app.kernels]
    # kernels with no instructions are left out of the prediction (mdm.pipeline)
    predicted = [pk.index for pk in prepared.kernels if pk.total_warp_insts > 0]
    caches: dict[tuple, Any] = {}
    preds: dict[tuple[str, float], Any] = {}
    for run_id, row, gspec, kernel, clock in task.rows:
        k = st.kernel_of(row, kernel, names, predicted)
        if k == -1:
            continue
        rc = st.config(run_id, row, gspec, kernel, clock)
        if rc is None:
            continue
        try:
            if rc.pkey not in preds:
                ckey = be["cache_key"](rc.gpu)
                if ckey not in caches:
                    caches[ckey] = shared_cache_sim(be["simulate_app"], app, prepared, rc.gpu)
                preds[rc.pkey] = be["predict_app"](
                    prepared, rc.gpu, list(task.models), cache=caches[ckey]
                )
        except MdmError as exc:
            st.out["skipped"].append((run_id, str(exc)))
            continue
        st.emit(rc, k, names, predicted, preds[rc.pkey])
    return st.out


def _run_streamed(st: _Task) -> dict[str, list[Any]]:
    """:func:`run_measured_task` one kernel at a time: the rows' configurations are grouped
    by :func:`mdm.memory.cache_key`, each group is one lazy pass over the trace
    (``predict_app_configs``), and the kernels' names (for rows that select a kernel) are
    recorded as the first complete pass reads them. A malformed kernel found during a pass
    is an error of the table's first row of this trace, as in the cached path."""
    task, be = st.task, st.be
    rcs = [rc for r in task.rows if (rc := st.config(*r)) is not None]
    groups: dict[tuple, dict[tuple[str, float], Any]] = {}
    for rc in rcs:
        groups.setdefault(be["cache_key"](rc.gpu), {}).setdefault(rc.pkey, rc.gpu)
    preds: dict[tuple[str, float], Any] = {}
    failed: dict[tuple[str, float], str] = {}
    kernels: list[tuple[str, int]] | None = None
    for members in groups.values():
        seen: list[tuple[str, int]] = []
        try:
            app = _observed(be["load_trace"](task.trace, lazy=True), seen)
            done = be["predict_app_configs"](app, list(members.values()), list(task.models))
        except TraceFormatError as exc:
            st.out["errors"].append((task.rows[0][1], f"trace {task.trace!r}: {exc}"))
            return st.out
        except (MdmError, OSError) as exc:
            failed.update(dict.fromkeys(members, str(exc)))
            continue
        preds.update(zip(members, done, strict=True))
        kernels = kernels or seen
    names = [n for n, _ in kernels or []]
    predicted = [i for i, (_, n) in enumerate(kernels or []) if n > 0]
    for rc in rcs:
        if rc.pkey in failed:
            st.out["skipped"].append((rc.run_id, failed[rc.pkey]))
            continue
        k = st.kernel_of(rc.row, rc.kernel, names, predicted)
        if k != -1:
            st.emit(rc, k, names, predicted, preds[rc.pkey])
    return st.out


def _observed(app: Any, seen: list[tuple[str, int]]) -> Any:
    """``app`` (a LazyApp) whose passes append each kernel's (name, warp instructions) to
    ``seen`` as they read it, keeping no reference to the kernel."""
    if not isinstance(app, LazyApp):
        raise TypeError(f"expected a LazyApp, got {type(app).__name__}")
    factory = app.commands_factory

    def commands() -> Iterator[KernelTrace | Memcpy]:
        for c in factory():
            if isinstance(c, KernelTrace):
                seen.append((c.name, c.n_instructions))
            yield c
            del c

    return replace(app, commands_factory=commands)


def validate_measured(
    path: str | Path,
    models: Sequence[str] = ("mdm", "gpumech"),
    workers: int = 1,
    backend: dict[str, Callable[..., Any]] | None = None,
) -> ValidationResult:
    """Run the models on every row of a measured table; errors and summaries."""
    check_models(models, "--models")
    path = Path(path)
    table = load_measured(path)
    tasks = [
        MeasuredTask(
            str(path),
            trace,
            tuple(
                zip(
                    g["run_id"],
                    g["row"].astype(int),
                    g["gpu"],
                    g["kernel"],
                    g["sm_clock_mhz"],
                    strict=True,
                )
            ),
            tuple(models),
        )
        for trace, g in table.groupby("trace", sort=True)
    ]
    chunks = map_tasks(run_measured_task, tasks, workers, backend)
    errors = sorted(e for c in chunks for e in c["errors"])
    if errors:
        row, msg = errors[0]
        more = f" (and {len(errors) - 1} more bad row(s))" if len(errors) > 1 else ""
        raise ConfigError(path, f"row {row}: {msg}{more}")
    skipped = {rid: why for c in chunks for rid, why in c["skipped"]}
    info = pd.DataFrame([r for c in chunks for r in c["runs"]])
    pred = pd.DataFrame([r for c in chunks for r in c["pred"]])
    if pred.empty:
        raise ConfigError(path, f"no run could be predicted; e.g. {next(iter(skipped.values()))}")
    runs = table.merge(info, on="run_id", how="inner")
    # cycles = time_us * clock (us x MHz = cycles)
    runs["cycles_measured"] = runs["cycles"].where(
        runs["cycles"].notna(), runs["time_us"] * runs["clock_mhz"]
    )
    runs = runs.drop(columns="cycles")
    runs["workload"] = runs["trace_label"] + runs["kernel_index"].map(
        lambda k: "" if k < 0 else f"[{k}]"
    )
    runs["arch"] = runs["gpu_label"]
    res = score(runs, pred, "cycles_measured", pd.DataFrame(), skipped, extra_summary=True)
    kr = res.runs[res.runs["kernel_index"] >= 0]
    rates = {c: kr[c] if c in kr.columns else math.nan for c in KERNEL_RATE_COLUMNS}
    res.kernels = pd.DataFrame(
        {
            "run_id": kr["run_id"],
            "model": kr["model"],
            "kernel": kr["kernel_index"],
            "kernel_name": kr["kernel_name"],
            "cycles_sim": kr["cycles_measured"],
            "cycles_model": kr["cycles"],
            "error": kr["error"],
            **rates,
        },
        columns=KERNEL_COLUMNS,
    ).reset_index(drop=True)
    conv = runs["time_us"].notna() & (runs["clock_source"] == "config")
    from_config = runs.loc[conv, "run_id"]
    res.summary["clock_from_config"] = sorted(from_config)
    res.summary["source"] = str(path)
    return res
