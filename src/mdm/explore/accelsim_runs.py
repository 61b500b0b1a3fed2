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
  (else a :class:`ConfigError`: the log is of another trace, or of a run cut short),
  each with the kernel's own miss rates (:func:`kernel_miss_rates`);
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
from mdm.explore.accelsim_log import AccelSimLog, parse_log

#: The L1's global-read outcomes in ``Total_core_cache_stats_breakdown[GLOBAL_ACC_R]``
_L1_READS = tuple(f"TC_GLOBAL_ACC_R_{x}" for x in ("HIT", "HIT_RESERVED", "MISS", "SECTOR_MISS"))
#: The L2's access and miss counts (all accesses, as ``L2_total_cache_miss_rate``)
_L2_COUNTS = ("L2_total_cache_accesses", "L2_total_cache_misses")


def _l1_rate(hit: float, pend: float, miss: float, sector: float) -> float:
    """``(MISS + SECTOR_MISS) / (HIT + HIT_RESERVED + MISS + SECTOR_MISS)``; NaN for no read."""
    n = hit + pend + miss + sector
    return (miss + sector) / n if n > 0 else math.nan


def miss_rates(stats: dict[str, float]) -> dict[str, float]:
    """The run's L1 global-read and L2 miss rates from a kernel block's counters, which
    GPGPU-Sim accumulates over the run's kernels (so the last block's are the run's):
    ``(MISS + SECTOR_MISS) / (HIT + HIT_RESERVED + MISS + SECTOR_MISS)`` of
    ``Total_core_cache_stats_breakdown[GLOBAL_ACC_R]``, and ``L2_total_cache_miss_rate``
    (the reference's ``l1d_rd_miss_rate`` and ``l2_miss_rate``; NaN without them)."""
    out = {"l1d_rd_miss_rate": math.nan, "l2_miss_rate": math.nan}
    if all(k in stats for k in _L1_READS):
        out["l1d_rd_miss_rate"] = _l1_rate(*(stats[k] for k in _L1_READS))
    if "L2_total_cache_miss_rate" in stats:
        out["l2_miss_rate"] = stats["L2_total_cache_miss_rate"]
    return out


def kernel_miss_rates(parsed: AccelSimLog) -> list[dict[str, float]]:
    """Each kernel's own L1 global-read and L2 miss rates, as :func:`miss_rates` counts
    them, from the differences of the cumulative counters between its block and the one
    before (the first block's counts are its own; GPGPU-Sim accumulates these counters
    over the run, as every reference log shows). Choice: the L2 rate is the
    difference of ``L2_total_cache_misses`` over that of ``L2_total_cache_accesses``
    (the printed run rate has four decimals, a kernel's must come from the counts). A
    counter missing from either block, or a kernel without L1 reads or L2 accesses,
    gives NaN."""
    out: list[dict[str, float]] = []
    before: dict[str, float] | None = None  # the previous block's counters
    for k in parsed.kernels:
        l1 = _l1_rate(*(_delta(k.stats, before, key) for key in _L1_READS))
        acc, miss = (_delta(k.stats, before, key) for key in _L2_COUNTS)
        out.append({"l1d_rd_miss_rate": l1, "l2_miss_rate": miss / acc if acc > 0 else math.nan})
        before = k.stats
    return out


def _delta(stats: dict[str, float], before: dict[str, float] | None, key: str) -> float:
    """A cumulative counter's growth since ``before`` (the whole count for the first
    block, ``before`` None); NaN when either block lacks it."""
    if key not in stats or (before is not None and key not in before):
        return math.nan
    return stats[key] - (before[key] if before is not None else 0.0)


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
        n = open_trace(trace, lazy=True).n_kernels
        if len(parsed.kernels) != n:  # a killed or unfinished run's log stops short
            raise ConfigError(
                log,
                f"{len(parsed.kernels)} kernel statistics blocks but the trace {trace} has "
                f"{n} kernels; expected a complete run of that trace",
            )
        if not per_kernel:
            rates = miss_rates(parsed.kernels[-1].stats)
            rows.append({"run_id": stem, **base, "cycles": parsed.tot_sim_cycle, **rates})
            continue
        per = kernel_miss_rates(parsed)
        for k, (cycles, rates) in enumerate(zip(parsed.kernel_cycles, per, strict=True)):
            rows.append({"run_id": f"{stem}__k{k}", **base, "kernel": k, "cycles": cycles, **rates})
    df = pd.DataFrame(rows)
    if out is not None:
        atomic_write_bytes(Path(out), df.to_csv(index=False).encode())
    return df
