"""``mdm cachesim TRACE --gpu PRESET_OR_FILE [--per-pc] [--warp K:W ...] [--json]``.

L1/L2 statistics of an application per kernel and in total; with ``--per-pc`` also per
static global memory instruction (:func:`mdm.memory.stats.pc_rows`), with ``--warp``
per dynamic instruction of chosen warps (:func:`mdm.memory.stats.warp_rows`). ``TRACE``
is anything ``mdm predict`` accepts (a trace directory, ``kernelslist.g``, ``.mdmtrace``
or ``builtin:NAME?k=v``), read one kernel at a time; a ``--warp`` naming a kernel ID the
trace lacks is therefore reported after the last kernel.
"""

from __future__ import annotations

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
from mdm.memory.stats import KernelCacheStats


def _row(k: KernelCacheStats, atom: int) -> dict[str, Any]:
    return {
        "kernel_id": k.kernel_id,
        "name": k.name,
        "l1_read_accesses": k.l1_read_accesses,
        "l1_read_hits": k.l1_read_hits,
        "l1_read_pending_hits": k.l1_read_pending_hits,
        "l1_read_misses": k.l1_read_misses,
        "l1_write_accesses": k.l1_write_accesses,
        # null (a "-" in the table) where nothing was accessed: 0.0 would read as all hits
        "l1_miss_rate": k.l1_miss_rate if k.l1_read_accesses else None,
        "l2_accesses": k.l2_accesses,
        "l2_misses": k.l2_misses,
        "l2_miss_rate": k.l2_miss_rate if k.l2_accesses else None,
        "l2_pending_hits": k.l2_pending_hits,
        "dram_reads": k.dram_read_bytes // atom,
        "dram_writes": k.dram_write_bytes // atom,
        "l1_miss_queue_wait_cycles": k.l1_miss_queue_wait_cycles,
        "l1_mshr_wait_cycles": k.l1_mshr_wait_cycles,
        "l1_merge_wait_cycles": k.l1_merge_wait_cycles,
        "l1_alloc_wait_cycles": k.l1_alloc_wait_cycles,
        "l1_blocked_cycles": k.l1_blocked_cycles,
        "l2_merge_stalls": k.l2_merge_stalls,
        "l2_blocked_cycles": k.l2_blocked_cycles,
        "l2_mshr_stalls": k.l2_mshr_stalls,
        "l2_mshr_blocked_cycles": k.l2_mshr_blocked_cycles,
        "l2_mshr_allocations": k.l2_mshr_allocations,
    }


class WarpPicker:
    """``--warp K:W`` specs (kernel ID as in the trace and the table, 0-based warp
    index), resolved as the kernels stream past: :meth:`for_kernel` gives each kernel's
    warps (first-seen order, no duplicates) and checks their range; :meth:`finish`
    checks that every spec's kernel ID named exactly one kernel of the application."""

    def __init__(self, specs: list[str]) -> None:
        self._specs: list[tuple[str, int, int]] = []
        for s in specs:
            try:
                kid, w = (int(p) for p in s.split(":"))
            except ValueError:
                raise ConfigError(
                    None, f"--warp {s!r}: expected KERNEL:WARP (kernel ID, 0-based warp index)"
                ) from None
            self._specs.append((s, kid, w))
        self._seen: list[int] = []

    def for_kernel(self, kernel_id: int, n_warps: int) -> list[int]:
        """Warps to track in the next kernel of the application."""
        self._seen.append(kernel_id)
        out: list[int] = []
        for s, kid, w in self._specs:
            if kid != kernel_id or self._seen.count(kid) > 1:
                continue
            if not 0 <= w < n_warps:
                raise ConfigError(None, f"--warp {s}: warp {w} out of range 0..{n_warps - 1}")
            if w not in out:
                out.append(w)
        return out

    def finish(self) -> None:
        """After the last kernel: every spec named a kernel ID that occurs exactly once."""
        for s, kid, _ in self._specs:
            n = self._seen.count(kid)
            if n != 1:
                what = "no kernel" if not n else f"{n} kernels"
                raise ConfigError(None, f"--warp {s}: {what} with ID {kid}; IDs: {self._seen}")


# table headers (the JSON keys are the long names)
_HEAD = {
    "kernel_id": "kernel", "l1_read_accesses": "L1 reads", "l1_miss_rate": "L1 miss",
    "l2_accesses": "L2 acc", "l2_miss_rate": "L2 miss", "dram_reads": "DRAM rd",
    "dram_writes": "DRAM wr", "opcode": "op", "executions": "execs", "l1_accesses": "L1 acc",
    "l1_hits": "hits", "l1_pending_hits": "pend", "l1_misses": "misses",
    "l2_misses": "L2 misses", "dram_bytes": "DRAM B", "requests": "reqs", "index": "#",
    "l1_read_pending_hits": "L1 pending", "l2_pending_hits": "L2 pending",
    "l2_blocked_cycles": "L2 blocked", "l1_blocked_cycles": "L1 blocked",
    "l2_mshr_blocked_cycles": "L2 MSHR full",
    "l1_wait_cycles": "L1 blocked",
}  # fmt: skip


def _fmt(c: str, v: object) -> str:
    if c == "pc":
        return f"{v:#x}"
    if c == "kernel_id" and v == -1:
        return "total"
    if c == "name":
        return "" if v == "total" else short_name(str(v), 24)
    if v is None:
        return "-"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _print_table(title: str, cols: list[str], rows: list[dict[str, object]]) -> None:
    from rich.table import Table

    table = Table(title=title)
    for c in cols:
        table.add_column(_HEAD.get(c, c), justify="left" if c in ("opcode", "name") else "right")
    for r in rows:
        table.add_row(*(_fmt(c, r[c]) for c in cols))
    print_table(table)


def cachesim(
    trace: Annotated[
        str, typer.Argument(help="trace dir / kernelslist.g / .mdmtrace, or builtin:NAME?k=v")
    ],
    gpu: Annotated[str, typer.Option("--gpu", help=GPU_HELP)],
    per_pc: Annotated[
        bool,
        typer.Option(
            "--per-pc",
            help="also per static instruction (PC): L1 and L2 accesses and misses (a store "
            "PC's are its writes), DRAM",
        ),
    ] = False,
    warp: Annotated[
        list[str] | None,
        typer.Option(
            "--warp", help="K:W: per-instruction counters of warp W (0-based) of kernel ID K"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of tables")] = False,
    kernels: Annotated[
        int, typer.Option("--kernels", min=0, help="Kernels listed one per row (--json: all).")
    ] = 20,
    settings: SetOption = None,
    allow_unknown: AllowUnknownOption = False,
) -> None:
    """Simulate the L1s and the L2 for every kernel of TRACE; DRAM counts in atoms.

    The table lists the first ``--kernels`` kernels and the totals over all of them."""
    with cli_errors():
        from mdm.memory import AppSimulator, CacheSimResult
        from mdm.memory.cachesim import compile_in_background
        from mdm.memory.stats import pc_rows, warp_rows

        cfg = load_gpu_set(gpu, settings)
        compile_note(cfg)
        app = open_app(trace, allow_unknown)  # one kernel in memory at a time
        compile_in_background(cfg)  # while the trace is read, profiled and coalesced
        picker = WarpPicker(list(warp or []))
        sim = AppSimulator(cfg)
        atom = cfg.dram.atom_bytes
        stats: list[KernelCacheStats] = []
        rows: list[dict[str, Any]] = []  # a kernel's counters, per-PC rows, warps' rows
        with kernel_progress(app.n_kernels, f"cachesim {app.name}") as done:
            for kernel in sim.kernels_of(app):  # copies fill the L2 (l2.fill_on_memcpy)
                tracked = picker.for_kernel(kernel.kernel_id, kernel.n_warps)
                st = sim.simulate(kernel, track_warps=tracked)
                row = _row(st, atom)
                if per_pc:
                    row["per_pc"] = pc_rows(st, kernel)
                if tracked:
                    row["warps"] = {str(w): warp_rows(st, kernel, w) for w in tracked}
                stats.append(st)
                rows.append(row)
                done(kernel.name)
                del kernel  # not kept alive while the next kernel is read
        picker.finish()
        res = CacheSimResult(config_name=cfg.name, kernels=stats)
        total = _row(res.total(), atom)
        if as_json:
            echo_json({"config": cfg.name, "kernels": rows, "total": total})
            return
        # pending: accesses to a line in flight (L1: merged into its MSHR entry; L2: also
        # those its full entry refused); L2 blocked: bank-cycles blocked by those refused
        # reads (summed over the banks); L2 MSHR full: bank-cycles blocked by misses that
        # found every MSHR entry of their bank in flight; L1 blocked: cycles the SMs'
        # blocking L1s waited (miss queue, MSHR entry, merge slot, line allocation; summed
        # over the SMs)
        cols = ["kernel_id", "name", "l1_read_accesses", "l1_miss_rate", "l1_read_pending_hits",
                "l1_blocked_cycles", "l2_accesses", "l2_miss_rate", "l2_pending_hits",
                "l2_blocked_cycles", "l2_mshr_blocked_cycles", "dram_reads",
                "dram_writes"]  # fmt: skip
        title = f"cache simulation on {cfg.name}"
        if len(rows) > kernels:
            title += f" (first {kernels} of {len(rows)} kernels; --json for all)"
        _print_table(title, cols, [*rows[:kernels], total])
        pc_cols = ["pc", "opcode", "executions", "l1_accesses", "l1_pending_hits", "l1_misses",
                   "l1_miss_rate", "l1_wait_cycles", "l2_accesses", "l2_miss_rate",
                   "dram_bytes"]  # fmt: skip
        w_cols = ["index", "pc", "opcode", "requests", "l1_misses", "l1_pending_hits",
                  "l2_misses", "dram_bytes"]  # fmt: skip
        for row in rows:
            kid = row["kernel_id"]
            if per_pc:
                name = short_name(str(row["name"]), 48)
                _print_table(f"kernel {kid} ({name}) per PC", pc_cols, row["per_pc"])
            for w, wr in row.get("warps", {}).items():
                _print_table(f"kernel {kid} warp {w}: global memory instructions", w_cols, wr)
