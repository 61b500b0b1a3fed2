"""``mdm demo``: predict every built-in workload with every model, write a report."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import cli_errors


def demo(
    out: Path = typer.Option(Path("mdm-demo"), "--out", help="output folder"),
    preset: str = typer.Option("mdm_pascal", help="GPU preset"),
    tiny: bool = typer.Option(False, help="cap thread blocks per workload (fast)"),
) -> None:
    """Generate the built-in workloads, predict them on the preset, write table + figures + HTML."""
    with cli_errors():
        from mdm.explore.demo import run_demo

        t = run_demo(out, preset=preset, tiny=tiny)
        typer.echo(f"{len(t)} prediction rows; open {out / 'report.html'}")
