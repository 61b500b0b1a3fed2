"""Sweep runner: work items, executors (serial, process pool, dask), resume, merge.

A *work item* is one workload with all the points whose configurations share one
``mdm.memory.cache_key``: its cache simulation runs once and every point of the item
reuses it. With the spec's ``cache_timing = "base"`` the key is that of the point with
the base's clocks, latencies and bandwidths (``mdm.memory.with_timing_of``), on which
the item's caches are then simulated (``WorkItem.sim_gpu``). Each finished item is
written as one JSON part file (its rows; ``parts/<workload>__<key hash>.json``, temp
file then ``os.replace``; JSON because a sweep writes thousands of tiny parts and
Parquet's per-file cost dominated), so a sweep killed half-way resumes by skipping the
items whose part exists; the merged table is rebuilt from the parts, with no row lost
or duplicated. ``manifest.json`` records the spec (written once every point is validated); resuming
into a folder holding results of a different spec is refused, a folder without results
takes the new spec.

Memory: a worker keeps each workload it has seen (the trace and its prepared kernels)
for the items that follow, which is what makes a sweep over small traces fast. A trace
whose kernel data take more than :data:`STREAM_TRACE_BYTES` on disk is instead read one
kernel at a time by every item (:func:`mdm.pipeline.predict_app_configs`: each kernel
prepared and simulated once per item and predicted on all its points), so a worker
holds one kernel of it, at the cost of reading and preparing it again per item.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mdm._atomic import atomic_file, atomic_write_bytes
from mdm.errors import ConfigError, MdmError, MdmWarning
from mdm.explore.spec import Point, SweepSpec, WorkloadSpec, expand_points

Row = dict[str, Any]
Evaluate = Callable[["WorkItem"], list[Row]]


@dataclass(frozen=True)
class WorkItem:
    """One workload x one group of points sharing a cache key (picklable).

    ``sim_gpu``: the configuration the cache simulation runs on, when it is not the
    points' own (a spec with ``cache_timing = "base"``: the points with the base's
    timing, :func:`mdm.memory.with_timing_of`); None: ``gpus[0]``.
    """

    workload: WorkloadSpec
    key_hash: str
    points: tuple[Point, ...]
    gpus: tuple[Any, ...] = field(hash=False)
    models: tuple[str, ...]
    swept_fields: tuple[str, ...]
    sim_gpu: Any = field(default=None, hash=False)

    @property
    def part_name(self) -> str:
        """The item's file under ``parts/``: the workload's key with characters other
        than letters, digits and ``-_.`` replaced, plus a hash of the key when any was
        (``my kernel`` and ``my_kernel`` must not share a file), and the points' hash."""
        key = self.workload.key
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
        if safe != key:
            safe += "-" + hashlib.sha1(key.encode()).hexdigest()[:8]
        return f"{safe}__{self.key_hash}.json"


# ---------------------------------------------------------------- backend hooks
def _load_base(preset: str) -> Any:
    from mdm.config import load_gpu

    return load_gpu(preset)


def _cache_key(gpu: Any) -> tuple:
    from mdm.memory import cache_key

    return cache_key(gpu)


_APP_CACHE: dict[str, Any] = {}

#: Traces with more kernel data on disk than this are streamed (module docstring).
STREAM_TRACE_BYTES = 512 * 2**20
_STREAMED: dict[str, bool] = {}


def trace_streamed(path: str | Path) -> bool:
    """Whether the trace at ``path`` has more than :data:`STREAM_TRACE_BYTES` of kernel
    data on disk (its listing is read, no kernel)."""
    from mdm.traces import open_trace

    return open_trace(path, lazy=True).data_bytes > STREAM_TRACE_BYTES


def streamed(w: WorkloadSpec) -> bool:
    """Whether the workload is a trace larger than :data:`STREAM_TRACE_BYTES` on disk."""
    if w.trace is None:
        return False
    key = w.model_dump_json()
    if key not in _STREAMED:
        _STREAMED[key] = trace_streamed(w.trace)
    return _STREAMED[key]


def load_app(w: WorkloadSpec) -> Any:
    """The AppTrace of a workload spec (generated or read), cached per process."""
    key = w.model_dump_json()
    if key not in _APP_CACHE:
        if w.trace is not None:
            from mdm.traces import open_trace

            _APP_CACHE[key] = open_trace(w.trace)
        else:
            from mdm.traces.workloads import generate

            _APP_CACHE[key] = generate(str(w.name), w.seed, **w.params)
    return _APP_CACHE[key]


_PREP_CACHE: dict[str, Any] = {}


def _pipeline() -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """(prepare, simulate_app, predict_app_configs) of the real pipeline; tests
    monkeypatch this."""
    from mdm.memory import simulate_app
    from mdm.pipeline import predict_app_configs, prepare

    return prepare, simulate_app, predict_app_configs


def shared_cache_sim(simulate_app: Callable[..., Any], app: Any, prepared: Any, gpu: Any) -> Any:
    """One cache simulation to share between configurations with equal cache keys.

    Tracks the representative warps the prepared app asks for (``track_warps``), so
    ``predict_app(..., cache=...)`` gets the per-warp traces it needs.
    """
    track = getattr(prepared, "track_warps", None)
    if callable(track):
        track = track()
    return simulate_app(app, gpu) if track is None else simulate_app(app, gpu, track_warps=track)


def evaluate_item(item: WorkItem) -> list[Row]:
    """Default evaluator: one cache simulation, then every point's prediction (in one
    :func:`mdm.pipeline.predict_app_configs` call, so points with equal latencies share
    their interval profiles).

    Keeps only the application-level rows (``kernel == 'total'``), one per model. When
    a kernel's block does not fit on the points' SM (:class:`~mdm.profile.occupancy.
    DoesNotFit`: the points of an item share their occupancy), the points are kept as
    :func:`skipped_rows` with the reason, so that the rest of the sweep runs.
    """
    from mdm.profile.occupancy import DoesNotFit

    try:
        return _evaluate(item)
    except DoesNotFit as exc:
        return skipped_rows(item, str(exc))


def skipped_rows(item: WorkItem, reason: str) -> list[Row]:
    """One row per point and model without a prediction: ``cycles`` and ``ipc`` empty,
    ``skipped`` the reason."""
    return [
        _label(item, point, gpu, {"model": m, "cycles": None, "ipc": None, "skipped": reason})
        for point, gpu in zip(item.points, item.gpus, strict=True)
        for m in item.models
    ]


def _evaluate(item: WorkItem) -> list[Row]:
    if streamed(item.workload):
        return _evaluate_streamed(item)
    prepare, simulate_app, predict_configs = _pipeline()
    key = item.workload.model_dump_json()
    app = load_app(item.workload)
    if key not in _PREP_CACHE:
        _PREP_CACHE[key] = prepare(app)
    prepared = _PREP_CACHE[key]
    sim = item.gpus[0] if item.sim_gpu is None else item.sim_gpu
    cache = shared_cache_sim(simulate_app, app, prepared, sim)
    preds = predict_configs(
        prepared, list(item.gpus), list(item.models), cache=cache, sim_gpu=item.sim_gpu
    )
    return [
        _label(item, point, gpu, r)
        for point, gpu, pred in zip(item.points, item.gpus, preds, strict=True)
        for r in pred.to_rows()
        if r.get("kernel", "total") == "total"
    ]


def _evaluate_streamed(item: WorkItem) -> list[Row]:
    """:func:`evaluate_item` for a large trace, read one kernel at a time."""
    from mdm.pipeline import predict_app_configs
    from mdm.traces import open_trace

    assert item.workload.trace is not None  # streamed() is False for generated workloads
    app = open_trace(item.workload.trace, lazy=True)
    preds = predict_app_configs(app, list(item.gpus), list(item.models), sim_gpu=item.sim_gpu)
    return [
        _label(item, point, gpu, r)
        for point, gpu, pred in zip(item.points, item.gpus, preds, strict=True)
        for r in pred.to_rows()
        if r.get("kernel", "total") == "total"
    ]


def _label(item: WorkItem, point: Point, gpu: Any, r: Row) -> Row:
    """Prefix a model row with workload, point labels and the swept fields' actual values."""
    from mdm.memory.cachesim import config_field

    out: Row = {
        "workload": item.workload.key,
        "point": point.index,
        "point_id": point.point_id,
        "delta": point.delta,
    }
    for f in item.swept_fields:
        out[f] = config_field(gpu, f)
    out.update({k: v for k, v in r.items() if k != "kernel"})
    return out


# ---------------------------------------------------------------- planning
def check_models(models: Sequence[str], where: str = "models") -> None:
    """Raise :class:`ConfigError` naming unknown model names (registry: ``MODELS``);
    ``where``: the option or spec field that gave them (the file is the caller's to add)."""
    from mdm.models.base import unknown_models

    message = unknown_models(models, where)
    if message is not None:
        raise ConfigError(None, message)


def plan(
    spec: SweepSpec,
    load_base: Callable[[str], Any] = _load_base,
    cache_key: Callable[[Any], tuple] = _cache_key,
) -> list[WorkItem]:
    """Build every point's validated GPUConfig (one the cache simulator refuses is an
    error here, before any work) and group the points by cache key: of the
    point's configuration, or with ``spec.cache_timing == "base"`` of the configuration
    its caches are simulated on (:func:`mdm.memory.with_timing_of` the base)."""
    from mdm.memory import with_timing_of
    from mdm.memory.cachesim import check_supported

    for w in spec.workloads:  # before any item runs
        if w.trace is not None and not Path(w.trace).exists():
            raise ConfigError(w.trace, f"sweep {spec.name!r}: workload trace not found")
    base = load_base(spec.base)
    groups: dict[str, list[tuple[Point, Any]]] = {}
    sims: dict[str, Any] = {}
    for p in expand_points(spec):
        try:
            gpu = base.with_updates(dict(p.updates))
            check_supported(gpu)  # before any item runs, as the simulator would refuse it
        except (KeyError, ValueError, MdmError) as exc:
            raise ConfigError(
                None, f"sweep {spec.name!r}, point {p.index} ({p.delta}, {p.updates}): {exc}"
            ) from None
        sim = None
        if spec.cache_timing == "base":
            try:
                sim = with_timing_of(gpu, base)
            except MdmError as exc:
                raise ConfigError(
                    None,
                    f"sweep {spec.name!r}, point {p.index} ({p.delta}): the base's timing "
                    f"does not apply: {exc}",
                ) from None
        kh = hashlib.sha1(repr(cache_key(gpu if sim is None else sim)).encode()).hexdigest()[:12]
        groups.setdefault(kh, []).append((p, gpu))
        sims.setdefault(kh, sim)
    items = []
    for w in spec.workloads:
        for kh, members in groups.items():
            items.append(
                WorkItem(
                    workload=w,
                    key_hash=kh,
                    points=tuple(m[0] for m in members),
                    gpus=tuple(m[1] for m in members),
                    models=tuple(spec.models),
                    swept_fields=tuple(spec.swept_fields),
                    sim_gpu=sims[kh],
                )
            )
    return items


# ---------------------------------------------------------------- I/O helpers
def atomic_write_table(df: pd.DataFrame, path: Path) -> None:
    """Write a DataFrame as Parquet or CSV (by suffix) atomically."""
    with atomic_file(path) as tmp:
        if path.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False)


# ---------------------------------------------------------------- executors
class WorkerError(MdmError):
    """An :class:`MdmError` raised in a worker process, re-raised picklably."""


def _safe_eval(evaluate: Evaluate, item: WorkItem) -> list[Row]:
    """Run ``evaluate`` (in a worker, or serially); MdmError subclasses with custom
    constructors do not unpickle, so they travel as :class:`WorkerError` with the same
    message, after the workload and the points (a kernel that does not fit on one point's
    SM names that point)."""
    try:
        return evaluate(item)
    except MdmError as exc:
        raise WorkerError(f"{item.workload.key} at {_points_text(item.points)}: {exc}") from None


def _points_text(points: Sequence[Point], most: int = 3) -> str:
    """``point 3 (n_sm=14, l1.mshr_entries=32)`` or ``points 3, 7 (...; ...)``."""
    shown = [
        ", ".join(f"{k}={v}" for k, v in p.updates.items()) or "the base" for p in points[:most]
    ]
    more = f"; and {len(points) - most} more" if len(points) > most else ""
    ids = ", ".join(str(p.index) for p in points[:most]) + (", ..." if more else "")
    return f"point{'s' if len(points) > 1 else ''} {ids} ({'; '.join(shown)}{more})"


def _run_serial(
    items: Sequence[WorkItem], evaluate: Evaluate
) -> Iterable[tuple[WorkItem, list[Row]]]:
    for it in items:
        yield it, _safe_eval(evaluate, it)


def _run_pool(
    items: Sequence[WorkItem], evaluate: Evaluate, workers: int | None, start_method: str
) -> Iterable[tuple[WorkItem, list[Row]]]:
    import multiprocessing

    ctx = multiprocessing.get_context(start_method)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        first = _compile_first(pool, items, evaluate)
        pending = {pool.submit(_safe_eval, evaluate, it): it for it in items}
        try:
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    it = pending.pop(fut)
                    yield it, fut.result()
        finally:
            for fut in [*pending, *first]:
                fut.cancel()


def _compile_first(pool: Any, items: Sequence[WorkItem], evaluate: Evaluate) -> list[Any]:
    """The issue loops that ``items`` need, compiled first in ``pool``
    (:func:`~mdm.memory.cachesim.compile_first_in`: a sweep whose points need two loops,
    e.g. an L1 allocating on miss and on fill, otherwise compiles each in every worker);
    for :func:`evaluate_item` only, not for the tests' fakes."""
    if evaluate is not evaluate_item:
        return []
    from mdm.memory.cachesim import compile_first_in

    return compile_first_in(
        pool, (it.gpus[0] if it.sim_gpu is None else it.sim_gpu for it in items)
    )


def _run_dask(
    items: Sequence[WorkItem], evaluate: Evaluate, scheduler: Any
) -> Iterable[tuple[WorkItem, list[Row]]]:
    from dask.distributed import Client, as_completed

    own = not hasattr(scheduler, "submit")
    try:
        client = Client(scheduler) if own else scheduler
    except OSError as exc:
        raise ConfigError(
            None, f"--scheduler {scheduler}: no dask scheduler there ({exc})"
        ) from None
    try:
        futs = {client.submit(_safe_eval, evaluate, it, pure=False): it for it in items}
        for fut in as_completed(list(futs)):
            yield futs[fut], fut.result()
    finally:
        if own:
            client.close()


# ---------------------------------------------------------------- main entry
@dataclass
class SweepResult:
    """Outcome of :func:`run_sweep`."""

    table: pd.DataFrame
    out_dir: Path
    items_total: int
    items_run: int
    items_skipped: int


def _manifest(spec: SweepSpec) -> dict[str, Any]:
    data = json.loads(spec.model_dump_json())
    if data.get("cache_timing") == "point":  # manifests written before the field existed
        del data["cache_timing"]  # (all point sweeps) stay equal, so their sweeps resume
    return {"spec": data}


def _timing_of(manifest: dict[str, Any]) -> str:
    return str(manifest.get("spec", {}).get("cache_timing", "point"))


def run_sweep(
    spec: SweepSpec,
    out_dir: str | Path,
    executor: str = "local",
    workers: int | None = None,
    scheduler: Any = None,
    evaluate: Evaluate = evaluate_item,
    load_base: Callable[[str], Any] = _load_base,
    cache_key: Callable[[Any], tuple] = _cache_key,
    progress: bool = False,
    start_method: str = "spawn",
) -> SweepResult:
    """Run (or resume) a sweep into ``out_dir``; returns the merged table.

    ``executor``: ``serial`` (in process), ``local`` (process pool of ``workers``),
    ``dask`` (``scheduler`` = address or a ``dask.distributed.Client``).
    ``start_method`` of the process pool: ``spawn`` by default, because forking a
    process whose numba-compiled code has already run can deadlock the children;
    ``fork`` is fine when the parent has not run numba code (the tests' fakes).
    Writes ``parts/*.json``, then ``results.parquet`` and ``results.csv``.
    """
    if scheduler is not None and executor != "dask":
        raise ConfigError(None, f"--scheduler is for --executor dask, not {executor!r}")
    out = Path(out_dir)
    parts = out / "parts"
    man_path = out / "manifest.json"
    _check_out_dir(out, man_path)
    manifest = _manifest(spec)
    has_results = parts.is_dir() and any(parts.glob("*.json"))
    if man_path.exists() and has_results:  # without results a folder takes the new spec
        old = _read_json(man_path, "a sweep's manifest")
        if old != manifest:
            same = {**old.get("spec", {}), "cache_timing": None} == {
                **manifest["spec"],
                "cache_timing": None,
            }
            if same:  # only cache_timing differs: e.g. a point sweep of an older version
                raise ConfigError(
                    out,
                    f"holds a sweep run with cache_timing = {_timing_of(old)!r}, this spec "
                    f"asks for {_timing_of(manifest)!r} (the default since 2026-11-25 is "
                    f"'base'); set cache_timing = {_timing_of(old)!r} in the spec (or "
                    f"--cache-timing {_timing_of(old)}) to resume it, or use another --out",
                )
            was, now = old.get("spec", {}), manifest["spec"]
            differ = sorted(k for k in {*was, *now} if was.get(k) != now.get(k))
            raise ConfigError(
                out,
                f"holds results of a different sweep spec (it differs in: {', '.join(differ)}); "
                "a folder resumes only the spec that started it: use another --out or "
                "delete the folder",
            )
    check_models(spec.models, "field models")
    items = plan(spec, load_base, cache_key)  # validates every point before anything is written
    parts.mkdir(parents=True, exist_ok=True)
    if not (man_path.exists() and has_results):
        atomic_write_bytes(man_path, json.dumps(manifest, indent=2).encode())
    todo = [it for it in items if not _part_done(parts / it.part_name)]
    skipped = len(items) - len(todo)
    if executor == "serial":
        stream = _run_serial(todo, evaluate)
    elif executor == "local":
        stream = _run_pool(todo, evaluate, workers, start_method)
    elif executor == "dask":
        if scheduler is None:
            raise ConfigError(None, "--executor dask needs --scheduler ADDRESS")
        stream = _run_dask(todo, evaluate, scheduler)
    else:
        raise ConfigError(None, f"unknown executor {executor!r}: expected serial, local or dask")

    def consume(advance: Callable[[], None]) -> None:
        for it, rows in stream:
            atomic_write_bytes(parts / it.part_name, json.dumps(rows, default=_scalar).encode())
            advance()

    if progress and todo:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        ) as bar:
            task = bar.add_task(f"sweep {spec.name}", total=len(todo))
            consume(lambda: bar.advance(task))
    else:
        consume(lambda: None)

    table = merge_parts(out, [it.part_name for it in items])
    return SweepResult(table, out, len(items), len(todo), skipped)


def _check_out_dir(out: Path, manifest: Path) -> None:
    """A sweep writes into a new or empty folder, or resumes one holding its manifest:
    never into a file, nor over a folder of other files."""
    if out.exists() and not out.is_dir():
        raise ConfigError(out, "is a file: a sweep writes into a folder (--out)")
    if out.is_dir() and not manifest.exists():
        others = [p.name for p in out.iterdir() if not (p.name == "parts" and p.is_dir())]
        if others or any((out / "parts").glob("*")):
            shown = ", ".join(sorted(others)[:5]) or "parts/"
            raise ConfigError(
                out,
                f"holds files but no sweep (no manifest.json: {shown}); a sweep writes "
                "results.csv, results.parquet, report.html and figures/ there: use a new "
                "or empty folder",
            )


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise ConfigError(path, f"cannot read {what} ({exc}); delete it to start over") from None


def _part_done(path: Path) -> bool:
    """Whether a finished item's part file is there and reads as rows; a damaged one
    (a partial copy, a full disk) is reported and its item run again."""
    if not path.exists():
        return False
    try:
        rows = json.loads(path.read_bytes())
        if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
            return True
        why = "not a list of rows"
    except (OSError, ValueError) as exc:
        why = str(exc)
    warnings.warn(f"{path}: unreadable part ({why}): its item runs again", MdmWarning, stacklevel=2)
    return False


def _scalar(value: Any) -> Any:
    """JSON fallback for NumPy scalars in a row (``np.int64`` is not an ``int``)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"sweep row value {value!r} of type {type(value).__name__} is not JSON")


def merge_parts(out: Path, names: Sequence[str]) -> pd.DataFrame:
    """Concatenate the part files, sort and write ``results.parquet`` / ``results.csv``."""
    rows: list[Row] = []
    for n in names:
        rows += json.loads((out / "parts" / n).read_bytes())
    table = pd.DataFrame(rows)
    if len(table):
        sort = [c for c in ("workload", "point", "model") if c in table.columns]
        table = table.sort_values(sort, kind="stable").reset_index(drop=True)
    atomic_write_table(table, out / "results.parquet")
    atomic_write_table(table, out / "results.csv")
    return table
