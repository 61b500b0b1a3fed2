"""``mdm config list|show|diff``: the GPU configurations ``--gpu`` accepts, resolved.

``show`` prints (or with ``--out`` writes) every field of a preset, a configuration file
or an imported ``gpgpusim.config`` in a form ``--gpu`` reads back
(:func:`mdm.config.export.save_gpu`), with the derived quantities the simulator uses;
``diff`` lists the fields in which two configurations differ.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mdm.cli.common import (
    GPU_HELP,
    SetOption,
    cli_errors,
    echo_json,
    load_gpu_set,
    print_table,
)
from mdm.config.gpu import GPUConfig

app = typer.Typer(
    rich_markup_mode="markdown", help="List, show, export and compare GPU configurations."
)

GpuArg = Annotated[str, typer.Argument(help=GPU_HELP)]


def _summary(gpu) -> dict[str, object]:  # noqa: ANN001 - GPUConfig, imported lazily
    l1, l2 = gpu.l1, gpu.l2
    return {
        "name": gpu.name,
        "compute_capability": gpu.compute_capability,
        "n_sm": gpu.n_sm,
        "core_clock_mhz": gpu.core_clock_mhz,
        "scheduler": f"{gpu.sm.schedulers} x {gpu.sm.scheduler_policy}",
        "l1": f"{l1.size_bytes // 1024} KB {l1.ways}-way"
        + (" sectored" if l1.sectored else "")
        + (" streaming" if l1.allocate_on == "fill" else "")
        + ("" if l1.enabled else " (off)"),
        "l1_mshr_entries": l1.mshr_entries,
        "l2": f"{l2.size_bytes // 1024} KB {l2.banks} banks {l2.ways}-way"
        + (" sectored" if l2.sectored else ""),
        "noc_effective_gbps": round(gpu.noc_effective_gbps, 1),
        "dram_bandwidth_gbps": gpu.dram.bandwidth_gbps,
    }


def _fmt(v: object) -> str:
    """A field value for a table: floats to 10 significant digits (1075.2, not
    1075.1999999999998)."""
    return f"{v:.10g}" if isinstance(v, float) else str(v)


@app.command("list")
def list_(
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of a table")] = False,
) -> None:
    """The built-in presets, one line each."""
    with cli_errors():
        from rich.table import Table

        from mdm.config import list_presets, load_gpu

        rows = [_summary(load_gpu(p)) for p in list_presets()]
        if as_json:
            echo_json(rows)
            return
        table = Table(title="GPU presets (mdm config show NAME for every field)")
        for col in rows[0]:
            table.add_column(col, justify="right" if col[0] in "cn" else "left")
        for r in rows:
            table.add_row(*(str(v) for v in r.values()))
        print_table(table)


def _warn_if_unsupported(cfg: GPUConfig) -> None:
    """A warning when the cache simulator would refuse ``cfg`` (``predict`` and
    ``cachesim`` fail on it), so that a configuration written out is known to run."""
    import warnings

    from mdm.errors import ConfigError, MdmWarning
    from mdm.memory.cachesim import check_supported

    try:
        check_supported(cfg)
    except ConfigError as exc:
        warnings.warn(
            MdmWarning(f"{exc.message}; mdm predict and mdm cachesim will refuse it"),
            stacklevel=2,
        )


@app.command("show")
def show(
    gpu: GpuArg,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="write the configuration to FILE (.toml, .yaml, .json)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="fields and derived values")] = False,
    settings: SetOption = None,
) -> None:
    """Every field of GPU (defaults included), as a file ``--gpu`` reads back, and the
    derived values (latencies in core cycles, bytes per cycle, cache sets)."""
    with cli_errors():
        from mdm.config.export import config_dict, derived_values, dumps_gpu, save_gpu

        cfg = load_gpu_set(gpu, settings)
        _warn_if_unsupported(cfg)
        cmd = " ".join(["mdm config show", gpu, *(f"--set {x}" for x in settings or [])])
        header = f"{cfg.name}: exported by `{cmd}`; use with --gpu FILE"
        if out is not None:
            save_gpu(cfg, out, header)
            typer.echo(f"wrote {out}")
            return
        if as_json:
            echo_json({"config": config_dict(cfg, keep_none=True), "derived": derived_values(cfg)})
            return
        typer.echo(dumps_gpu(cfg, ".toml", header), nl=False)
        typer.echo("\n# derived (not read back):")
        for k, v in derived_values(cfg).items():
            typer.echo(f"# {k} = {v:.6g}")


@app.command("diff")
def diff(
    a: GpuArg,
    b: GpuArg,
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of a table")] = False,
) -> None:
    """The fields in which configurations A and B differ (dotted names, as in sweeps)."""
    with cli_errors():
        from rich.table import Table

        from mdm.config import load_gpu
        from mdm.config.export import diff_gpus

        ga, gb = load_gpu(a), load_gpu(b)
        rows = diff_gpus(ga, gb)
        if as_json:
            echo_json(
                {
                    "a": ga.name,
                    "b": gb.name,
                    "a_given": a,
                    "b_given": b,
                    "differences": [{"field": f, "a": x, "b": y} for f, x, y in rows],
                }
            )
            return
        if not rows:
            typer.echo(f"{a} and {b}: no differences")
            return
        table = Table(title=f"{len(rows)} fields differ")
        table.add_column("field")
        table.add_column(f"A ({a})", justify="right")  # as given: two files may share a name
        table.add_column(f"B ({b})", justify="right")
        for f, x, y in rows:
            table.add_row(f, _fmt(x), _fmt(y))
        print_table(table)
