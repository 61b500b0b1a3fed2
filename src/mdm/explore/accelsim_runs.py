"""Accel-Sim runs (their output logs) -> a measured table for ``mdm validate --measured``.

A log holds everything a comparison needs: the cycles (``gpu_tot_sim_cycle``, and each
kernel's ``gpu_sim_cycle``: :func:`mdm.explore.accelsim_log.parse_log`), the
configuration the run used (its option dump, which ``--gpu LOG`` reads:
:func:`mdm.config.accelsim.import_accelsim_log`) and the trace it ran (the dump's
``-trace`` option, the ``kernelslist.g`` path Accel-Sim was given, relative to the
folder it ran in). Choices:

* the trace path is resolved against ``traces_root`` when given, else against the log's
  folder and then each folder above it, first match; a trace found nowhere is a
  :class:`ConfigError` naming the log, its line and the folders tried;
* one row per run (all kernels), with its L1 and L2 miss rates (:func:`miss_rates`),
  or with ``per_kernel`` one per kernel (its index), as many as the trace has kernels
  (else a :class:`ConfigError`: the log is of another trace, or of a run cut short);
* ``run_id`` is the log's name without its suffixes (``__k<index>`` added per kernel);
  ``gpu`` the log itself; paths are written relative to the table's folder.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mdm._atomic import atomic_write_bytes
from mdm.config.accelsim import log_stem, read_log_options
from mdm.errors import ConfigError
from mdm.explore.accelsim_log import parse_log


def miss_rates(stats: dict[str, float]) -> dict[str, float]:
    """The run's L1 global-read and L2 miss rates from a kernel block's counters, which
    GPGPU-Sim accumulates over the run's kernels (so the last block's are the run's):
    ``(MISS + SECTOR_MISS) / (HIT + HIT_RESERVED + MISS + SECTOR_MISS)`` of
    ``Total_core_cache_stats_breakdown[GLOBAL_ACC_R]``, and ``L2_total_cache_miss_rate``
    (the reference's ``l1d_rd_miss_rate`` and ``l2_miss_rate``; NaN without them)."""
    out = {"l1d_rd_miss_rate": math.nan, "l2_miss_rate": math.nan}
    keys = [f"TC_GLOBAL_ACC_R_{x}" for x in ("HIT", "HIT_RESERVED", "MISS", "SECTOR_MISS")]
    if all(k in stats for k in keys):
        hit, pend, miss, sector = (stats[k] for k in keys)
        if hit + pend + miss + sector > 0:
            out["l1d_rd_miss_rate"] = (miss + sector) / (hit + pend + miss + sector)
    if "L2_total_cache_miss_rate" in stats:
        out["l2_miss_rate"] = stats["L2_total_cache_miss_rate"]
    return out


def run_trace(log: Path, traces_root: Path | None = None) -> Path:
    """The trace a run's log names (``-trace``), resolved (module docstring)."""
    dumped = read_log_options(log)
    if "-trace" not in dumped:
        raise ConfigError(log, "expected a '-trace <kernelslist.g>' line in the option dump")
    spec, line = dumped["-trace"]
    given = Path(spec)
    if given.is_absolute():
        bases: list[Path] = [Path("/")]
    elif traces_root is not None:
        bases = [traces_root]
    else:
        bases = [log.resolve().parent, *log.resolve().parent.parents]
    for base in bases:
        if (base / given).exists():
            return base / given
    tried = ", ".join(str(b) for b in bases[:4]) + (" ..." if len(bases) > 4 else "")
    raise ConfigError(log, f"line {line}: trace {spec} not found under {tried}; give --traces-root")


def logs_to_measured(
    logs: Sequence[str | Path],
    out: str | Path | None = None,
    *,
    traces_root: str | Path | None = None,
    per_kernel: bool = False,
    klass: str = "unknown",
) -> pd.DataFrame:
    """The measured table of Accel-Sim runs given by their logs (module docstring);
    written to ``out`` (CSV, atomically) when given."""
    from mdm.traces import open_trace

    out_dir = (Path(out).parent if out is not None else Path.cwd()).resolve()
    root = Path(traces_root) if traces_root is not None else None
    rows: list[dict[str, Any]] = []
    for item in logs:
        log = Path(item)
        if not log.is_file():
            raise ConfigError(log, "Accel-Sim log not found")
        trace = run_trace(log, root)
        parsed = parse_log(log)
        base = {
            "trace": os.path.relpath(trace.resolve(), out_dir),
            "gpu": os.path.relpath(log.resolve(), out_dir),
            "class": klass,
        }
        stem = log_stem(log)
        if not per_kernel:
            rates = miss_rates(parsed.kernels[-1].stats)
            rows.append({"run_id": stem, **base, "cycles": parsed.tot_sim_cycle, **rates})
            continue
        n = open_trace(trace, lazy=True).n_kernels
        if len(parsed.kernels) != n:
            raise ConfigError(
                log,
                f"{len(parsed.kernels)} kernel statistics blocks but the trace {trace} has "
                f"{n} kernels; expected a complete run of that trace",
            )
        for k, cycles in enumerate(parsed.kernel_cycles):
            rows.append({"run_id": f"{stem}__k{k}", **base, "kernel": k, "cycles": cycles})
    df = pd.DataFrame(rows)
    if out is not None:
        atomic_write_bytes(Path(out), df.to_csv(index=False).encode())
    return df
