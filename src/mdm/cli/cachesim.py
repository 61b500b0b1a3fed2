"""``mdm cachesim TRACE --gpu PRESET_OR_FILE [--json]``: L1/L2 statistics of an app."""

from __future__ import annotations

from pathlib import Path

import typer

from mdm.cli.common import cli_errors, echo_json
from mdm.memory.stats import KernelCacheStats


def _row(k: KernelCacheStats, atom: int) -> dict[str, object]:
    return {
        "kernel_id": k.kernel_id,
        "name": k.name,
        "l1_read_accesses": k.l1_read_accesses,
        "l1_read_hits": k.l1_read_hits,
        "l1_read_pending_hits": k.l1_read_pending_hits,
        "l1_read_misses": k.l1_read_misses,
        "l1_write_accesses": k.l1_write_accesses,
        "l1_miss_rate": k.l1_miss_rate,
        "l2_accesses": k.l2_accesses,
        "l2_misses": k.l2_misses,
        "l2_miss_rate": k.l2_miss_rate,
        "dram_reads": k.dram_read_bytes // atom,
        "dram_writes": k.dram_write_bytes // atom,
        "l1_miss_queue_wait_cycles": k.l1_miss_queue_wait_cycles,
        "l2_merge_stalls": k.l2_merge_stalls,
        "l2_blocked_cycles": k.l2_blocked_cycles,
    }


def cachesim(
    trace: Path = typer.Argument(..., help="kernelslist.g or its folder"),
    gpu: str = typer.Option(..., "--gpu", help="preset name or config file"),
    json: bool = typer.Option(False, "--json", help="print JSON instead of a table"),
) -> None:
    """Simulate the L1s and the L2 for every kernel of TRACE; DRAM counts in atoms."""
    with cli_errors():
        from mdm.config.load import load_gpu
        from mdm.memory import simulate_app
        from mdm.traces.accelsim import read_app

        cfg = load_gpu(gpu)
        res = simulate_app(read_app(trace), cfg)
        atom = cfg.dram.atom_bytes
        rows = [_row(k, atom) for k in res.kernels]
        total = _row(res.total(), atom)
        if json:
            echo_json({"config": cfg.name, "kernels": rows, "total": total})
            return
        from rich.console import Console
        from rich.table import Table

        cols = ["kernel_id", "l1_read_accesses", "l1_miss_rate", "l2_accesses",
                "l2_miss_rate", "dram_reads", "dram_writes"]  # fmt: skip
        table = Table(title=f"cache simulation on {cfg.name}")
        for c in cols:
            table.add_column(c, justify="right")
        for r in [*rows, total]:
            table.add_row(*(f"{r[c]:.4f}" if isinstance(r[c], float) else str(r[c]) for c in cols))
        Console().print(table)
