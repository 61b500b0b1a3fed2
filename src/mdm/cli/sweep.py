"""``mdm sweep SPEC``: run (or resume) a design-space sweep."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import cache_timing_option, cli_errors


def sweep(
    spec: Path = typer.Argument(..., help="sweep spec (.yaml/.yml/.toml)"),
    out: Path = typer.Option(
        None, "--out", help="output folder (default: sweep-NAME, the spec's name)"
    ),
    executor: str = typer.Option("local", help="local (process pool), dask or serial"),
    scheduler: str = typer.Option(None, help="dask.distributed scheduler address"),
    workers: int = typer.Option(None, min=1, help="local process-pool size (default: all cores)"),
    report: bool = typer.Option(True, help="write figures and report.html"),
    cache_timing: str = typer.Option(
        None,
        "--cache-timing",
        help="base or point: overrides the spec's cache_timing (default base: caches "
        "simulated at the base's clocks and bandwidths; point: at every point's own)",
    ),
) -> None:
    """Run a sweep: one row per (workload, point, model) in results.parquet/.csv; resumable."""
    with cli_errors():
        from mdm.errors import ConfigError
        from mdm.explore.runner import run_sweep
        from mdm.explore.spec import load_spec

        s = load_spec(spec)
        if cache_timing is not None:
            s = s.model_copy(update={"cache_timing": cache_timing_option(cache_timing)})
        out_dir = out or Path(f"sweep-{s.name}")
        try:
            res = run_sweep(
                s, out_dir, executor=executor, workers=workers, scheduler=scheduler, progress=True
            )
        except ConfigError as exc:
            if exc.path is not None:
                raise
            raise ConfigError(spec, exc.message) from None  # e.g. a bad point: name the spec
        if report and len(res.table):
            from mdm.report.pages import sweep_report

            sweep_report(
                res.table, out_dir, s.swept_fields, f"sweep {s.name}", s.cache_timing_note()
            )
        typer.echo(
            f"{len(res.table)} rows -> {out_dir / 'results.parquet'} "
            f"({res.items_run} work items run, {res.items_skipped} resumed; one cache "
            f"simulation per item, cache_timing = {s.cache_timing})"
        )
        if "skipped" in res.table and res.table["skipped"].notna().any():
            sk = res.table[res.table["skipped"].notna()]
            pairs = sk[["workload", "point"]].drop_duplicates()
            typer.echo(
                f"{len(pairs)} (workload, point) pairs without a prediction (column "
                f"skipped), e.g. {sk['workload'].iloc[0]} at point {sk['point'].iloc[0]}: "
                f"{sk['skipped'].iloc[0]}",
                err=True,
            )
