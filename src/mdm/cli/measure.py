"""``mdm measure``: turn profiler output into a measured table for ``mdm validate --measured``."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import GPU_HELP, cli_errors

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Import measured kernel times (Nsight Compute, Accel-Sim logs) for validation.",
)


@app.command("from-ncu")
def from_ncu(
    ncu_csv: Path = typer.Argument(..., help="ncu --csv output (details or --page raw)"),
    trace: str = typer.Option(..., "--trace", help="the traced application (as mdm predict)"),
    gpu: str = typer.Option(..., "--gpu", help=GPU_HELP),
    out: Path = typer.Option(..., "--out", help="measured table to write (CSV)"),
    klass: str = typer.Option("unknown", "--class", help="class of every row (MD, NMD, ...)"),
) -> None:
    """One row per profiled launch, matched in order (and by function name) to the trace."""
    with cli_errors():
        from mdm.explore.ncu import ncu_to_measured

        df = ncu_to_measured(ncu_csv, trace, gpu, out, klass)
        n_cyc = int(df["cycles"].notna().sum()) if "cycles" in df else 0
        what = {0: "time_us", len(df): "cycles"}.get(
            n_cyc, f"cycles for {n_cyc}, time_us for {len(df) - n_cyc}"
        )
        n_clk = int(df["sm_clock_mhz"].notna().sum()) if "sm_clock_mhz" in df else 0
        clock = {0: ", no SM clock (the config's is used)", len(df): ", SM clock from ncu"}.get(
            n_clk, f", SM clock from ncu for {n_clk} (the config's for the others)"
        )
        typer.echo(f"wrote {out}: {len(df)} launch(es), {what}{clock}")


@app.command("from-accelsim")
def from_accelsim(
    logs: list[Path] = typer.Argument(..., help="Accel-Sim output logs (.log, .log.xz, .log.gz)"),
    out: Path = typer.Option(..., "--out", help="measured table to write (CSV)"),
    traces_root: Path | None = typer.Option(
        None, "--traces-root", help="folder the runs' -trace paths are relative to"
    ),
    per_kernel: bool = typer.Option(
        False, "--per-kernel", help="one row per kernel, with its own cycles and miss rates"
    ),
    klass: str = typer.Option("unknown", "--class", help="class of every row (MD, NMD, ...)"),
) -> None:
    """One row per run (or kernel): its trace, the log as the configuration it used, its
    simulated cycles and L1/L2 miss rates; then `mdm validate --measured OUT`."""
    with cli_errors():
        from mdm.explore.accelsim_runs import logs_to_measured

        df = logs_to_measured(
            logs, out, traces_root=traces_root, per_kernel=per_kernel, klass=klass
        )
        typer.echo(f"wrote {out}: {len(df)} row(s) from {len(logs)} log(s)")
