"""``mdm trace``: inspect, generate and convert traces."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mdm.cli.common import (
    AllowUnknownOption,
    cli_errors,
    echo_json,
    open_app,
    print_table,
    short_name,
)
from mdm.errors import ConfigError

app = typer.Typer(
    rich_markup_mode="markdown",
    help="Inspect, generate and convert kernel traces.",
    no_args_is_help=True,
)


@app.command()
def info(
    path: Annotated[
        Path,
        typer.Argument(
            help="Accel-Sim dir, kernelslist.g, .traceg[.xz|.gz], store or builtin:NAME?k=v"
        ),
    ],
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    allow_unknown: AllowUnknownOption = False,
    kernels: Annotated[
        int, typer.Option("--kernels", min=0, help="Kernels listed one per row (--json: all).")
    ] = 20,
) -> None:
    """Kernels, thread blocks, warps, instructions, instruction mix and DPKI of a trace,
    in total and for its first ``--kernels`` kernels (names demangled).

    DPKI = divergent global loads per 1000 warp instructions; a load is divergent when
    its active lanes touch more 128 B lines than the minimum their bytes need.
    """
    with cli_errors():
        from mdm.traces.stats import app_stats

        st = app_stats(open_app(str(path), allow_unknown))  # one kernel in memory at a time
        if json_out:
            echo_json(st)
            return
        rows = [
            ("kernels", st["kernels"]),
            ("memcpys", st["memcpys"]),
            ("thread blocks", st["thread_blocks"]),
            ("warps", st["warps"]),
            ("warp instructions", st["warp_instructions"]),
            ("thread instructions", st["thread_instructions"]),
            ("memory instructions", st["memory_instructions"]),
            ("global loads", st["global_loads"]),
            ("divergent loads", st["divergent_loads"]),
            ("DPKI", f"{st['dpki']:.2f}"),
        ]
        typer.echo(f"trace {path}")
        for k, v in rows:
            typer.echo(f"  {k:<20} {v}")
        typer.echo("  instruction mix:")
        n = max(st["warp_instructions"], 1)
        for k, v in st["mix"].items():
            if v:
                typer.echo(f"    {k:<12} {v:>12}  {100.0 * v / n:6.2f}%")
        if kernels:
            _kernel_table(st["per_kernel"], kernels)


def _kernel_table(per: list[dict[str, Any]], most: int) -> None:
    """The first ``most`` kernels of ``per`` (:func:`mdm.traces.stats.app_stats`), a row
    each."""
    from rich.table import Table

    left = len(per) - most
    table = Table(
        title="per kernel" + (f" (first {most} of {len(per)}; --json for all)" if left > 0 else "")
    )
    for c in ("id", "kernel", "grid", "block", "warps", "warp insts", "global loads", "DPKI"):
        table.add_column(c, justify="left" if c == "kernel" else "right")
    for k in per[:most]:
        table.add_row(
            str(k["kernel_id"]),
            short_name(k["name"], 40),
            "x".join(map(str, k["grid"])),
            "x".join(map(str, k["block"])),
            str(k["warps"]),
            str(k["warp_instructions"]),
            str(k["global_loads"]),
            f"{k['dpki']:.2f}",
        )
    print_table(table)


_TRACE_FILES = (".traceg", ".traceg.xz", ".traceg.gz")


def _check_output(fmt: str, compress: str | None) -> None:
    """``--format`` and ``--compress`` of ``trace gen`` and ``trace convert``, checked
    before any work."""
    if fmt not in ("store", "accelsim"):
        raise ConfigError(None, f"--format must be 'accelsim' or 'store', not {fmt!r}")
    if compress not in (None, "xz", "gz"):
        raise ConfigError(None, f"--compress must be 'xz' or 'gz', not {compress!r}")
    if compress is not None and fmt == "store":
        raise ConfigError(None, "--compress is for --format accelsim (a store is binary)")


def _write(app_trace: Any, out: Path, fmt: str, compress: str | None) -> Path:
    """Write ``app_trace`` (read one kernel at a time when lazy) to ``out`` atomically:
    into a temp folder beside it that replaces ``out`` only once every kernel is
    written, so a malformed kernel half-way leaves no partial trace behind. An existing
    ``out`` is replaced only when it is empty, a store, or an Accel-Sim trace folder with
    nothing else in it (``kernelslist.g`` and ``*.traceg[.xz|.gz]``)."""
    from mdm._atomic import atomic_dir
    from mdm.traces import save_store, write_app
    from mdm.traces.store import is_store

    if out.is_dir() and any(out.iterdir()) and not is_store(out):
        if not (out / "kernelslist.g").is_file():
            raise ConfigError(
                None, f"{out} holds files but no trace; give a new or empty folder (it is replaced)"
            )
        others = sorted(
            p.name
            for p in out.iterdir()
            if p.name != "kernelslist.g" and not p.name.endswith(_TRACE_FILES)
        )
        if others:
            raise ConfigError(
                None,
                f"{out} holds a trace and other files ({', '.join(others[:5])}), which "
                "replacing it would delete; give a new or empty folder",
            )
    with atomic_dir(out) as tmp:
        if fmt == "store":
            save_store(app_trace, tmp)
        else:
            write_app(app_trace, tmp, compress=compress)  # type: ignore[arg-type]
    return out


@app.command()
def convert(
    src: Annotated[
        Path, typer.Argument(help="Input trace (any readable form, or builtin:NAME?k=v).")
    ],
    out: Annotated[Path, typer.Argument(help="Output dir (.mdmtrace suffix: compact store).")],
    fmt: Annotated[
        str | None, typer.Option("--format", help="accelsim or store (default: by OUT suffix)")
    ] = None,
    compress: Annotated[
        str | None, typer.Option("--compress", help="xz or gz for Accel-Sim output")
    ] = None,
    allow_unknown: AllowUnknownOption = False,
) -> None:
    """Convert between Accel-Sim traces and the compact store, one kernel at a time."""
    with cli_errors():
        from mdm.traces.store import STORE_SUFFIX

        kind = fmt or ("store" if out.name.endswith(STORE_SUFFIX) else "accelsim")
        _check_output(kind, compress)
        src_dir = src if src.is_dir() else src.parent
        if src.exists() and out.resolve() == src_dir.resolve():
            raise ConfigError(None, f"{out} is the input trace's folder: write to another one")
        written = _write(open_app(str(src), allow_unknown), out, kind, compress)
        typer.echo(f"wrote {kind} trace {written}")


@app.command()
def gen(
    workload: Annotated[str, typer.Argument(help="Built-in workload name.")],
    out: Annotated[Path, typer.Option("--out", help="Output directory.")],
    seed: Annotated[int, typer.Option("--seed")] = 0,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", "-p", help="Size parameter key=value (repeatable)."),
    ] = None,
    gs: Annotated[int | None, typer.Option("--gs", help="Grid stride (stride workload).")] = None,
    ctas: Annotated[int | None, typer.Option("--ctas", help="Thread blocks.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="accelsim or store")] = "accelsim",
    compress: Annotated[str | None, typer.Option("--compress", help="xz or gz")] = None,
) -> None:
    """Generate a built-in synthetic workload and write it."""
    with cli_errors():
        try:
            from mdm.traces.workloads import generate, parse_param_value, workload_params
        except ImportError as exc:
            raise ConfigError(None, f"built-in workloads are not available: {exc}") from None
        params: dict[str, Any] = {}
        for item in param or []:
            key, sep, value = item.partition("=")
            if not sep or not key.strip():
                raise ConfigError(None, f"--param expected key=value, got {item!r}")
            if key.strip() in params:
                raise ConfigError(None, f"--param {key.strip()} given twice")
            params[key.strip()] = parse_param_value(value.strip())
        for name, given in (("gs", gs), ("ctas", ctas)):
            if given is not None:
                if name in params:
                    raise ConfigError(None, f"--{name} and --param {name}=...: give one")
                params[name] = given
        workload_params(workload, params)  # the name and parameters, before any work
        _check_output(fmt, compress)
        app_trace = generate(workload, seed=seed, **params)
        written = _write(app_trace, out, fmt, compress)
        n = sum(k.n_instructions for k in app_trace.kernels)
        typer.echo(f"wrote {workload} ({n} warp instructions) to {written}")
