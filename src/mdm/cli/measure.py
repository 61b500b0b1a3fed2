"""``mdm measure``: turn profiler output into a measured table for ``mdm validate --measured``."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import cli_errors

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Import measured kernel times (Nsight Compute) for validation.",
)


@app.command("from-ncu")
def from_ncu(
    ncu_csv: Path = typer.Argument(..., help="ncu --csv output (details or --page raw)"),
    trace: str = typer.Option(..., "--trace", help="the traced application (as mdm predict)"),
    gpu: str = typer.Option(..., "--gpu", help="preset name, config file or gpgpusim.config"),
    out: Path = typer.Option(..., "--out", help="measured table to write (CSV)"),
    klass: str = typer.Option("unknown", "--class", help="class of every row (MD, NMD, ...)"),
) -> None:
    """One row per profiled launch, matched in order (and by function name) to the trace."""
    with cli_errors():
        from mdm.explore.ncu import ncu_to_measured

        df = ncu_to_measured(ncu_csv, trace, gpu, out, klass)
        what = "cycles" if "cycles" in df and df["cycles"].notna().all() else "time_us"
        clock = "sm_clock_mhz" in df and df["sm_clock_mhz"].notna().all()
        typer.echo(
            f"wrote {out}: {len(df)} launch(es), {what}"
            + (", SM clock from ncu" if clock else ", no SM clock (the config's is used)")
        )
