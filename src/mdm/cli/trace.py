"""``mdm trace``: inspect, generate and convert traces."""

from __future__ import annotations

import typer

app = typer.Typer(help="Inspect, generate and convert kernel traces.", no_args_is_help=True)
