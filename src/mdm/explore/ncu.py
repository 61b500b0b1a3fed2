"""Nsight Compute CSV import: profiled launches -> a measured table for ``validate --measured``.

Reads both CSV forms of ``ncu --csv`` (file line numbers kept for errors):

* the default *details* page (``ncu --csv ...``): long form, one line per metric with
  columns ``"ID"``, ``"Kernel Name"``, ..., ``"Metric Name"``, ``"Metric Unit"``,
  ``"Metric Value"`` (section metrics such as ``Duration``, ``Elapsed Cycles``,
  ``SM Frequency``);
* the *raw* page (``ncu --csv --page raw``): wide form, one column per metric
  (``gpu__time_duration.sum``, ``sm__cycles_elapsed.avg``, ...), a units row after the
  header (empty ``ID``), then one line per launch.

Lines that are not CSV records (``==PROF==`` / ``==WARNING==`` lines, the application's
own output) are skipped. Values may carry thousands separators (``"10,542"``: ncu's
English number format; a locale with decimal commas is not supported). Units are
scaled: time ``ns``/``nsecond``, ``us``/``usecond``, ``ms``/``msecond``, ``s``/``second``;
frequency ``hz``/``khz``/``mhz``/``ghz`` (any case) or ``cycle/<time unit>``; cycles
``cycle`` with an optional ``k``/``K``/``M``/``G`` prefix.

Per launch, the measurement is the SM cycle count when present (first of
:data:`CYCLE_METRICS`), else the duration (:data:`TIME_METRICS`) as ``time_us``; the SM
clock (:data:`FREQ_METRICS`) as ``sm_clock_mhz`` when present (ncu locks the clocks to
base by default, ``--clock-control base``, and reports the clock it ran at).

Launches are matched in profiling order to the trace's kernels: the counts must agree
and so must the function names (:func:`function_name` of both: ncu prints the short
function name by default, the demangled signature with ``--print-kernel-base
demangled``, the mangled one with ``mangled``; traces hold demangled or mangled names).
"""

from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mdm.config.load import is_preset
from mdm.errors import ConfigError
from mdm.traces.names import function_name

CYCLE_METRICS = (
    "sm__cycles_elapsed.avg",
    "Elapsed Cycles",
    "sm__cycles_elapsed.max",
    "gpc__cycles_elapsed.max",
)
TIME_METRICS = ("gpu__time_duration.sum", "Duration", "gpu__time_duration.avg")
FREQ_METRICS = (
    "SM Frequency",
    "sm__cycles_elapsed.avg.per_second",
    "gpc__cycles_elapsed.avg.per_second",
)

_TIME_US = {"n": 1e-3, "u": 1.0, "µ": 1.0, "m": 1e3, "": 1e6}
_FREQ_MHZ = {"hz": 1e-6, "khz": 1e-3, "mhz": 1.0, "ghz": 1e3}
_CYCLE = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


@dataclass
class NcuLaunch:
    """One profiled kernel launch: its ``ID``, name, first file line and metrics."""

    id: str
    kernel_name: str
    line: int
    metrics: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # unit, value, line


def _time_scale(unit: str) -> float | None:
    """Microseconds per ``unit`` (``ns``, ``usecond``, ``second``, ...), None if not a time."""
    m = re.fullmatch(r"([nuµm]?)(s|sec|second|seconds)", unit.strip())
    return _TIME_US[m.group(1)] if m else None


def _freq_scale(unit: str) -> float | None:
    """MHz per ``unit`` (``hz``, ``Ghz``, ``cycle/nsecond``, ...), None if not a frequency."""
    u = unit.strip()
    if u.lower() in _FREQ_MHZ:
        return _FREQ_MHZ[u.lower()]
    m = re.fullmatch(r"cycles?/(.+)", u)
    t = _time_scale(m.group(1)) if m else None
    return None if t is None else 1.0 / t


def _cycle_scale(unit: str) -> float | None:
    m = re.fullmatch(r"([kKMG]?)(cycles?)?", unit.strip())
    return _CYCLE[m.group(1)] if m else None


def _value(path: Path, line: int, metric: str, text: str) -> float:
    try:
        x = float(text.strip().replace(",", ""))
    except ValueError:
        raise ConfigError(path, f"line {line}: {metric} value {text!r} is not a number") from None
    if not x > 0:
        raise ConfigError(path, f"line {line}: {metric} must be positive, got {text!r}")
    return x


def _records(path: Path) -> list[tuple[int, list[str]]]:
    """(file line, fields) of the CSV records; other lines skipped."""
    out = []
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        for no, text in enumerate(f, start=1):
            if not text.startswith('"'):
                continue  # ==PROF== lines, application output, blank lines
            fields = next(csv.reader([text]))
            while fields and fields[-1] == "":  # some ncu versions end lines with a comma
                fields.pop()
            out.append((no, fields))
    if not out:
        raise ConfigError(path, "no CSV records; expected the output of ncu --csv")
    return out


def read_ncu(path: str | Path) -> list[NcuLaunch]:
    """The profiled launches of an ``ncu --csv`` file, in profiling order."""
    path = Path(path)
    recs = _records(path)
    hline, header = recs[0]
    col = {name: i for i, name in enumerate(header)}
    for need in ("ID", "Kernel Name"):
        if need not in col:
            raise ConfigError(
                path, f"line {hline}: header lacks column {need!r}; expected ncu --csv output"
            )
    launches: dict[str, NcuLaunch] = {}

    def launch(no: int, f: list[str]) -> NcuLaunch:
        f += [""] * (len(header) - len(f))  # empty trailing fields were dropped
        if len(f) != len(header):
            raise ConfigError(
                path, f"line {no}: {len(f)} fields, expected {len(header)} as in the header"
            )
        lid = f[col["ID"]]
        if lid not in launches:
            launches[lid] = NcuLaunch(lid, f[col["Kernel Name"]], no)
        return launches[lid]

    if {"Metric Name", "Metric Value"} <= set(col):  # details page, long form
        unit_col = col.get("Metric Unit")
        for no, f in recs[1:]:
            lu = launch(no, f)
            name = f[col["Metric Name"]]
            unit = f[unit_col] if unit_col is not None else ""
            lu.metrics.setdefault(name, (unit, f[col["Metric Value"]], no))
    else:  # raw page, wide form: optional units row (empty ID) after the header
        body = recs[1:]
        units = [""] * len(header)
        if body and body[0][1][col["ID"] : col["ID"] + 1] in ([], [""]):
            units = body[0][1]
            body = body[1:]
        for no, f in body:
            lu = launch(no, f)
            for name, i in col.items():
                lu.metrics.setdefault(name, (units[i] if i < len(units) else "", f[i], no))
    if not launches:
        raise ConfigError(path, "no profiled launches in the file")
    return list(launches.values())


def measurement(path: str | Path, lu: NcuLaunch) -> dict[str, float]:
    """``cycles`` or ``time_us``, and ``sm_clock_mhz`` when present, of one launch."""
    path = Path(path)
    out: dict[str, float] = {}
    for names, key, scale in (
        (CYCLE_METRICS, "cycles", _cycle_scale),
        (TIME_METRICS, "time_us", _time_scale),
        (FREQ_METRICS, "sm_clock_mhz", _freq_scale),
    ):
        if key == "time_us" and "cycles" in out:
            continue
        for name in names:
            if name not in lu.metrics or lu.metrics[name][1].strip() in ("", "n/a"):
                continue
            unit, text, no = lu.metrics[name]
            s = scale(unit)
            if s is None:
                raise ConfigError(path, f"line {no}: {name}: unknown unit {unit!r}")
            out[key] = _value(path, no, name, text) * s
            break
    if "cycles" not in out and "time_us" not in out:
        raise ConfigError(
            path,
            f"line {lu.line}: launch {lu.id} ({lu.kernel_name}) has none of "
            f"{list(CYCLE_METRICS + TIME_METRICS)}; profile with the SpeedOfLight section "
            "or --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg",
        )
    return out


def _rel(spec: str, out_dir: Path, is_path: bool) -> str:
    """A path spec relative to ``out_dir`` (the measured table's folder)."""
    if not is_path:
        return spec
    return os.path.relpath(Path(spec).resolve(), out_dir.resolve())


def ncu_to_measured(
    ncu_csv: str | Path,
    trace: str,
    gpu: str,
    out: str | Path | None = None,
    klass: str = "unknown",
) -> pd.DataFrame:
    """One measured-table row per profiled launch, matched in order to ``trace``'s kernels.

    Checks the launch count and each function name against the trace (ConfigError
    naming the ncu file and line on a mismatch). With ``out`` the table is written there
    as CSV, ``trace`` and ``gpu`` paths relative to its folder.
    """
    from mdm.traces.workloads import load_trace

    path = Path(ncu_csv)
    launches = read_ncu(path)
    names = [k.name for k in load_trace(trace, lazy=True).iter_kernels()]  # no whole app
    if len(launches) != len(names):
        raise ConfigError(
            path,
            f"{len(launches)} profiled launch(es) but the trace {trace} has {len(names)} "
            "kernel(s); profile every launch the trace holds, in the same order",
        )
    out_dir = Path(out).parent if out is not None else Path.cwd()
    trace_is_path = not trace.startswith("builtin:")
    gpu_is_path = Path(gpu).exists() and not is_preset(gpu)  # load_gpu's precedence
    rows: list[dict[str, Any]] = []
    for i, (lu, tname) in enumerate(zip(launches, names, strict=True)):
        a, b = function_name(lu.kernel_name), function_name(tname)
        if a != b:
            raise ConfigError(
                path,
                f"line {lu.line}: launch {lu.id} is {lu.kernel_name!r} (function {a!r}) but "
                f"kernel {i} of {trace} is {tname!r} (function {b!r}); expected the same "
                "kernels in the same order",
            )
        rows.append(
            {
                "trace": _rel(trace, out_dir, trace_is_path),
                "gpu": _rel(gpu, out_dir, gpu_is_path),
                "kernel": i,
                "class": klass,
                **measurement(path, lu),
                "ncu_id": lu.id,
                "kernel_name": lu.kernel_name,
            }
        )
    df = pd.DataFrame(rows)
    cols = [c for c in ("trace", "gpu", "kernel", "class", "cycles", "time_us") if c in df]
    cols += [c for c in df.columns if c not in cols]
    df = df[cols]
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(out, index=False)
    return df
