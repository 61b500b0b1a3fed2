"""Helpers shared by the CLI modules."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer

from mdm.errors import MdmError, MdmWarning

#: help of every ``--gpu``: what :func:`mdm.config.load_gpu` reads
GPU_HELP = "preset name, config file (.toml, .yaml, .json), gpgpusim.config or Accel-Sim log"

#: ``--set FIELD=VALUE`` (repeatable): one configuration field changed on top of ``--gpu``.
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        help="FIELD=VALUE: change one field of the configuration, dotted as `mdm config "
        "show` lists them, e.g. `l1.mshr_entries=256` (repeat)",
    ),
]


#: ``--allow-unknown``: opcodes missing from the SASS table count as ``UNKNOWN``.
AllowUnknownOption = Annotated[
    bool,
    typer.Option(
        "--allow-unknown",
        help="count opcodes missing from the SASS table of the trace's binary version as "
        "UNKNOWN (else an error naming them)",
    ),
]


def open_app(spec: str, allow_unknown: bool = False) -> Any:
    """The trace at ``spec``, one kernel at a time, or a ``builtin:`` workload generated
    in memory (:func:`mdm.traces.workloads.load_trace`)."""
    from mdm.traces.workloads import load_trace

    kw: dict[str, Any] = {"allow_unknown": True} if allow_unknown else {}
    return load_trace(spec, lazy=True, **kw)


def load_gpu_set(gpu: str, settings: list[str] | None) -> Any:
    """The :class:`~mdm.config.GPUConfig` of ``--gpu`` with the ``--set`` items applied
    (:func:`mdm.config.apply_settings`)."""
    from mdm.config import apply_settings, load_gpu

    return apply_settings(load_gpu(gpu), settings or [])


_showwarning = warnings.showwarning


def show_mdm_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """``warnings.showwarning`` for the CLI: an :class:`MdmWarning` (e.g. Accel-Sim
    options not mapped) as one ``warning: ...`` line on stderr, without the source line
    of the library that raised it; other warnings as Python prints them."""
    if issubclass(category, MdmWarning):
        typer.echo(f"warning: {message}", err=True)
    else:
        _showwarning(message, category, filename, lineno, file, line)


@contextmanager
def cli_errors() -> Iterator[None]:
    """Turn :class:`MdmError` (and bad-input OSError, or a failed allocation) into one line
    on stderr and exit code 1."""
    try:
        yield
    except MdmError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    except MemoryError as exc:  # numpy's allocation failures name the size asked for
        typer.echo(f"error: out of memory: {exc}", err=True)
        raise typer.Exit(1) from None
    except (
        FileNotFoundError,
        FileExistsError,
        IsADirectoryError,
        NotADirectoryError,
        PermissionError,
    ) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


@contextmanager
def kernel_progress(total: int, description: str) -> Iterator[Callable[[str], None]]:
    """A progress bar over an application's kernels on stderr (stdout stays clean for
    ``--json``), shown only on a terminal and for more than one kernel; yields the
    callback to call after each kernel with its name."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    console = Console(stderr=True)
    if total <= 1 or not console.is_terminal:
        yield lambda name: None
        return
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda name: bar.advance(task)


def short_name(name: str, n: int = 32) -> str:
    """A kernel name for a table: demangled, its function name, at most ``n``
    characters (:func:`mdm.traces.names.display_name`)."""
    from mdm.traces.names import display_name

    return display_name(name, n)


def print_table(table: Any) -> None:
    """Print a rich table on stdout; piped (no terminal width to fit) at up to 200
    columns, so that no figure is cut. Text is printed as it is, without rich's markup:
    a configuration's name such as ``v100 [l2.sectored=False]`` keeps its brackets."""
    from rich.console import Console

    console = Console(markup=False)
    if not console.is_terminal:
        console.width = 200
    console.print(table)


def cache_timing_option(value: str) -> str:
    """``--cache-timing`` of ``mdm sweep`` and ``mdm study``: ``point`` or ``base``."""
    if value not in ("point", "base"):
        from mdm.errors import ConfigError

        raise ConfigError(None, f"--cache-timing {value!r}: expected point or base")
    return value


def echo_json(obj: Any) -> None:
    """Print one JSON object on stdout (:func:`mdm._json.dumps`: NumPy values converted,
    non-finite numbers as ``null``)."""
    from mdm._json import dumps

    typer.echo(dumps(obj, indent=2))


def compile_note(gpu: Any) -> None:
    """On a terminal, one line on stderr when the cache simulator's issue loop for
    ``gpu``'s L1/L2 sectoring and L1 fill policy is not compiled yet (the first kernel
    then takes 30-60 s longer), so that the wait is explained."""
    from rich.console import Console

    from mdm.memory.cachesim import issue_loop_cached

    console = Console(stderr=True)
    if console.is_terminal and not issue_loop_cached(gpu):
        console.print(
            "note: first simulation with this L1/L2 layout: compiling the cache "
            "simulator once (30-60 s; cached for later runs)",
            highlight=False,
            soft_wrap=True,
        )
