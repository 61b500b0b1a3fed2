"""``mdm validate --reference DIR``: model accuracy against simulator results."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import cli_errors, echo_json


def validate(
    reference: Path = typer.Option(
        ..., "--reference", help="folder with results.csv, traces/, configs/, logs/"
    ),
    models: list[str] = typer.Option(["mdm", "gpumech"], "--models", help="models (repeatable)"),
    out: Path = typer.Option(None, "--out", help="write tables, figures and report.html here"),
    json_: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    run: list[str] = typer.Option(None, "--run", help="only these run ids (repeatable)"),
    workers: int = typer.Option(2, help="processes (one workload per task)"),
) -> None:
    """Per-run IPC error (paper 001 eq. 11), MD/NMD means, sweep Spearman correlations."""
    with cli_errors():
        from mdm.explore.validate import validate as run_validate
        from mdm.report.pages import _clean, validation_report

        res = run_validate(reference, models, run or None, workers=workers)
        if out is not None:
            validation_report(res, out)
        if json_:
            echo_json(_clean(res.summary))
        else:
            for m, s in res.summary["models"].items():
                typer.echo(
                    f"{m:>10}: mean |err| {s['mean_abs_error']:.1%} (MD {s['mean_abs_error_md']:.1%}, "
                    f"NMD {s['mean_abs_error_nmd']:.1%}, calib {s['mean_abs_error_calib']:.1%}), "
                    f"mean Spearman {s['mean_spearman']:.2f}"
                )
            skipped = res.summary["skipped"]
            typer.echo(f"{res.summary['runs']} runs predicted, {len(skipped)} skipped")
            for reason in sorted(set(skipped.values())):
                n = sum(1 for v in skipped.values() if v == reason)
                typer.echo(f"  skipped {n}: {reason}")
