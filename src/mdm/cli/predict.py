"""``mdm predict``: cycles, IPC, CPI stack and MD-interval share of an application.

``TRACE`` is anything :func:`mdm.traces.open_trace` accepts (a trace directory, a
``kernelslist.g`` or a ``.mdmtrace`` store, read one kernel at a time, so memory is
bounded by the largest kernel, not the application), or a built-in synthetic workload
``builtin:NAME?key=value&...``,
e.g. ``builtin:stride?gs=32&seed=3`` (``seed`` defaults to 0, values are parsed as
int, float, true/false or kept as strings; :func:`mdm.traces.workloads.load_trace`).

``--gpu`` is a preset name or file accepted by :func:`mdm.config.load_gpu`, including an
Accel-Sim ``gpgpusim.config`` (imported with :func:`mdm.config.accelsim.import_accelsim`);
``--set FIELD=VALUE`` changes one of its fields (:func:`mdm.config.apply_settings`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from mdm.cli.common import (
    GPU_HELP,
    AllowUnknownOption,
    SetOption,
    cli_errors,
    compile_note,
    echo_json,
    kernel_progress,
    load_gpu_set,
    open_app,
    print_table,
    short_name,
)
from mdm.errors import ConfigError
from mdm.traces.workloads import load_trace, parse_builtin  # noqa: F401 (re-exported)

STACK_COLUMN = "CPI stack, % of cycles"


def stack_shares(row: dict[str, Any]) -> str:
    """A row's CPI stack as shares of its cycles, largest first, e.g. ``"ldst 51%
    dram 28% base 8%"``; components under 0.5 % are left out (``--json`` has them all,
    in cycles per warp instruction)."""
    stack = {k[4:]: v for k, v in row.items() if k.startswith("cpi_")}
    total = sum(stack.values())
    if not total > 0:
        return ""
    parts = sorted(stack.items(), key=lambda kv: -kv[1])
    return " ".join(f"{k} {100 * v / total:.0f}%" for k, v in parts if v / total >= 0.005)


def first_model_kernels(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The kernel rows (launch order, no total) of the first model of ``rows``
    (:meth:`mdm.pipeline.AppPrediction.to_rows`)."""
    return [r for r in rows if r["model"] == rows[0]["model"] and r["kernel"] != "total"]


def shown_kernels(rows: list[dict[str, Any]], most: int) -> list[int]:
    """Positions (launch order) of the kernels a table lists: all when there are at most
    ``most``, else the ``most`` with the most cycles by the first model of ``rows``
    (:func:`first_model_kernels`), in launch order."""
    first = first_model_kernels(rows)
    if len(first) <= most:
        return list(range(len(first)))
    top = sorted(range(len(first)), key=lambda i: -first[i]["cycles"])[:most]
    return sorted(top)


def _table(pred: Any, most: int) -> None:
    from rich.table import Table

    rows = pred.to_rows()
    kernels = [r["kernel"] for r in first_model_kernels(rows)]
    n = len(kernels)
    keep = set(shown_kernels(rows, most))
    title = f"{pred.app or 'application'} on {pred.gpu}"
    if len(keep) < n:
        title += (
            f": the {len(keep)} of {n} kernels with the most cycles by {rows[0]['model']}"
            " (--kernels; --json for all)"
        )
    # the trace's kernel IDs (as `mdm cachesim` and `mdm trace info` give them), else the
    # launch positions
    ids = [str(i.cache.kernel_id) for i in pred.inputs]
    if len(ids) != n:
        ids = [str(i + 1) for i in range(n)]
    t = Table(title=title)
    for col in ("model", "id", "kernel", "cycles", "IPC", "MD share", STACK_COLUMN):
        t.add_column(col, justify="left" if col in ("model", "kernel", STACK_COLUMN) else "right")
    pos = 0
    for r in rows:
        if r["kernel"] == "total":
            pos = 0
        else:
            pos += 1
            if pos - 1 not in keep:
                continue
        stack = stack_shares(r)
        t.add_row(
            r["model"],
            "" if r["kernel"] == "total" else ids[pos - 1],
            short_name(r["kernel"]),
            f"{r['cycles']:.0f}",
            f"{r['ipc']:.4g}",
            "-" if math.isnan(r["md_fraction"]) else f"{r['md_fraction']:.2f}",
            stack,
            end_section=r["kernel"] == "total",
        )
    print_table(t)
    occ = pred.occupancy_text()
    if len(occ) == len(kernels):
        o = Table(title="occupancy (per SM, first wave), shared-memory bank conflicts, L1 blocking")
        o.add_column("id", justify="right")
        o.add_column("kernel")
        o.add_column("resident warps, limiter, waves")
        o.add_column("bank conflicts (representative warp)")
        o.add_column("L1 blocked by (cycles per SM, % of the cache simulation's time)")
        for i, (name, text, conf, blk) in enumerate(
            zip(kernels, occ, pred.conflict_text(), pred.blocking_text(), strict=True)
        ):
            if i in keep:
                o.add_row(ids[i], short_name(name), text, conf or "none", blk)
        print_table(o)
        c = Table(title="cache simulation (the models' inputs)")
        c.add_column("id", justify="right")
        c.add_column("kernel")
        for head in ("L1 read miss rate", "L2 miss rate", "DRAM read KB", "DRAM write KB"):
            c.add_column(head, justify="right")
        for i, (name, r) in enumerate(zip(kernels, pred.kernel_cache_rates(), strict=True)):
            if i in keep:
                c.add_row(
                    ids[i],
                    short_name(name),
                    f"{100 * r['l1_miss_rate']:.1f} %",
                    f"{100 * r['l2_miss_rate']:.1f} %",
                    f"{r['dram_read_bytes'] / 1e3:,.1f}",
                    f"{r['dram_write_bytes'] / 1e3:,.1f}",
                )
        print_table(c)


def predict(
    trace: Annotated[
        str, typer.Argument(help="trace dir / kernelslist.g / .mdmtrace, or builtin:NAME?k=v")
    ],
    gpu: Annotated[str, typer.Option("--gpu", help=GPU_HELP)],
    model: Annotated[
        list[str] | None, typer.Option("--model", help="model name (repeat); default: all")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
    kernels: Annotated[
        int,
        typer.Option(
            "--kernels", min=0, help="Kernels listed: those with the most cycles (--json: all)."
        ),
    ] = 20,
    settings: SetOption = None,
    allow_unknown: AllowUnknownOption = False,
) -> None:
    """Predict cycles, IPC, CPI stack and MD-interval share (eq. 2) per kernel and in total.

    The table lists every kernel of a trace of at most ``--kernels`` kernels, else the
    ``--kernels`` with the most cycles by the first model, in launch order (``id``: the
    trace's kernel ID, as ``mdm cachesim`` gives it), and the totals over all of them."""
    with cli_errors():
        from mdm.memory.cachesim import compile_in_background
        from mdm.models.base import model_names, unknown_models
        from mdm.pipeline import predict_app

        names = list(model) if model else model_names()
        message = unknown_models(names, "--model")
        if message is not None:
            raise ConfigError(None, message)
        cfg = load_gpu_set(gpu, settings)
        compile_note(cfg)
        app = open_app(trace, allow_unknown)  # one kernel in memory at a time
        compile_in_background(cfg)  # while the trace is read, profiled and coalesced
        with kernel_progress(app.n_kernels, f"predict {app.name}") as done:
            pred = predict_app(app, cfg, names, on_kernel=done)
        if as_json:
            echo_json(pred.to_dict())
        else:
            _table(pred, kernels)
