"""The ``mdm`` command line: a thin layer over the pipeline stages.

Each sub-command lives in its own module of :mod:`mdm.cli` and wraps its body in
:func:`mdm.cli.common.cli_errors`, so bad input gives one line and exit status 1.
"""

from __future__ import annotations

import warnings

import typer

from mdm.cli.common import show_mdm_warning

warnings.showwarning = show_mdm_warning  # the CLI's one-line form of MdmWarning

app = typer.Typer(
    name="mdm",
    rich_markup_mode="markdown",
    help="Analytical GPU performance prediction (MDM, GPUMech family, MWP-CWP).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        import mdm

        typer.echo(f"mdm {mdm.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Analytical GPU performance prediction (MDM, GPUMech family, MWP-CWP)."""


def _register() -> None:
    # One line per sub-command module (keep sorted).
    from mdm.cli import trace as _trace

    app.add_typer(_trace.app, name="trace")
    from mdm.cli import cachesim as _cachesim

    app.command("cachesim")(_cachesim.cachesim)
    from mdm.cli import config as _config

    app.add_typer(_config.app, name="config")
    from mdm.cli import demo as _demo
    from mdm.cli import measure as _measure
    from mdm.cli import study as _study
    from mdm.cli import sweep as _sweep
    from mdm.cli import validate as _validate

    app.command("demo")(_demo.demo)
    app.add_typer(_measure.app, name="measure")
    app.add_typer(_study.app, name="study")
    app.command("sweep")(_sweep.sweep)
    app.command("validate")(_validate.validate)
    app.command("predict")(__import__("mdm.cli.predict", fromlist=["predict"]).predict)


_register()
