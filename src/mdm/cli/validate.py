"""``mdm validate``: model accuracy against simulator results or measured times.

``--reference DIR``: an Accel-Sim reference folder (results.csv, traces/, configs/,
logs/; :mod:`mdm.explore.validate`). ``--measured FILE``: a CSV/Parquet table of
measured runs or kernels (trace, gpu, cycles or time_us, ...; :mod:`mdm.explore.measured`),
e.g. written by ``mdm measure from-ncu``. Both give the same per-run errors (paper 001
eq. 11), summaries, tables and report.
"""

from __future__ import annotations

import math
from pathlib import Path

import typer

from mdm.cli.common import cli_errors, echo_json
from mdm.errors import ConfigError


def validate(
    reference: Path = typer.Option(
        None, "--reference", help="folder with results.csv, traces/, configs/, logs/"
    ),
    measured: Path = typer.Option(
        None,
        "--measured",
        help="CSV/Parquet of measured runs: trace, gpu, cycles or time_us; optional kernel, "
        "sm_clock_mhz, run_id, class",
    ),
    models: list[str] = typer.Option(["mdm", "gpumech"], "--models", help="models (repeatable)"),
    out: Path = typer.Option(None, "--out", help="write tables, figures and report.html here"),
    json_: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    run: list[str] = typer.Option(None, "--run", help="only these run ids (--reference)"),
    workers: int = typer.Option(2, min=1, help="processes (one workload or trace per task)"),
) -> None:
    """Per-run IPC error (paper 001 eq. 11), per-class/GPU means, sweep Spearman correlations."""
    with cli_errors():
        from mdm.report.pages import validation_report

        if (reference is None) == (measured is None):
            raise ConfigError(None, "give exactly one of --reference DIR and --measured FILE")
        if measured is not None:
            if run:
                raise ConfigError(None, "--run applies to --reference only")
            from mdm.explore.measured import validate_measured

            res = validate_measured(measured, models, workers=workers)
        else:
            from mdm.explore.validate import validate as run_validate

            res = run_validate(reference, models, run or None, workers=workers)
        if out is not None:
            validation_report(res, out)
        if json_:
            echo_json(res.summary)
            return
        for m, s in res.summary["models"].items():
            if measured is None:
                classes = ", ".join(
                    f"{c} {s[k]:.1%}"
                    for c, k in (
                        ("MD", "mean_abs_error_md"),
                        ("NMD", "mean_abs_error_nmd"),
                        ("calib", "mean_abs_error_calib"),
                    )
                    if math.isfinite(s[k])  # a class without runs is left out
                )
                rest = [
                    f"mean Spearman {s['mean_spearman']:.2f}"
                    if math.isfinite(s["mean_spearman"])
                    else "",
                    f"mean |speedup err| {s['mean_abs_speedup_error']:.1%}"
                    if math.isfinite(s["mean_abs_speedup_error"])
                    else "",
                ]
                mean = s["mean_abs_error"]  # over MD and NMD runs
                typer.echo(
                    f"{m:>10}: mean |err| "
                    + (f"{mean:.1%}" if math.isfinite(mean) else "n/a (no MD or NMD run)")
                    + f" ({classes})"
                    + "".join(f", {x}" for x in rest if x)
                )
            else:
                parts = ", ".join(f"{c} {v:.1%}" for c, v in s["mean_abs_error_by_class"].items())
                gpus = ", ".join(f"{g} {v:.1%}" for g, v in s["mean_abs_error_by_gpu"].items())
                speed = s["mean_abs_speedup_error"]
                typer.echo(
                    f"{m:>10}: mean |err| {s['mean_abs_error']:.1%} (per class: {parts}; "
                    f"per gpu: {gpus})"
                    + (f", mean |speedup err| {speed:.1%}" if math.isfinite(speed) else "")
                )
        cache = res.summary.get("cache_simulation")
        if cache:
            levels = [
                f"{lvl} {cache[k]:.4f}"
                for lvl, k in (
                    ("L1", "mean_abs_l1_miss_rate_difference"),
                    ("L2", "mean_abs_l2_miss_rate_difference"),
                )
                if k in cache
            ]
            typer.echo(
                f"cache simulation vs reference ({cache['runs']} runs), mean |miss rate "
                f"difference|: {', '.join(levels)}"
            )
        skipped = res.summary["skipped"]
        typer.echo(f"{res.summary['runs']} runs predicted, {len(skipped)} skipped")
        for reason in sorted(set(skipped.values())):
            n = sum(1 for v in skipped.values() if v == reason)
            typer.echo(f"  skipped {n}: {reason}")
        conv = res.summary.get("clock_from_config") or []
        if conv:
            typer.echo(
                f"note: {len(conv)} run(s) give time_us without sm_clock_mhz; converted with "
                "the configuration's core_clock_mhz (boost clocks differ): "
                + ", ".join(conv[:5])
                + (" ..." if len(conv) > 5 else "")
            )
