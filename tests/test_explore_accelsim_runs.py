"""Accel-Sim logs -> measured table (``mdm measure from-accelsim``) on hand-written logs.

The logs below name the reference stencil2d trace (two kernels); their counters are
small numbers whose rates are worked by hand in each test's docstring.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest

from mdm.errors import ConfigError
from mdm.explore.accelsim_log import parse_log
from mdm.explore.accelsim_runs import kernel_miss_rates, logs_to_measured, miss_rates, run_trace

TRACE = "traces/sm61/stencil2d/kernelslist.g"


def _block(name: str, cyc: int, tot: int, l1: tuple[int, ...], acc: int, miss: int) -> str:
    """A kernel block; ``l1`` = GLOBAL_ACC_R HIT, HIT_RESERVED, MISS, SECTOR_MISS (a
    shorter tuple leaves the last ones out)."""
    lines = [f"kernel_name = {name}", f"gpu_sim_cycle = {cyc}", "gpu_sim_insn = 10"]
    lines += [f"gpu_tot_sim_cycle = {tot}", "gpu_tot_sim_insn = 20"]
    for what, n in zip(("HIT", "HIT_RESERVED", "MISS", "SECTOR_MISS"), l1, strict=False):
        lines.append(f"\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_R][{what}] = {n}")
    lines += [f"L2_total_cache_accesses = {acc}", f"L2_total_cache_misses = {miss}"]
    lines.append(f"L2_total_cache_miss_rate = {miss / acc:.4f}")
    return "\n".join(lines) + "\n"


def _log(path: Path, *blocks: str) -> Path:
    dump = f"GPGPU-Sim: Configuration options:\n-trace {TRACE} # traces kernel file\n\n"
    path.write_text(dump + "".join(blocks))
    return path


# cumulative counters: kernel 0 then kernel 1 (differences: HIT +20, HIT_RESERVED +0,
# MISS +10, SECTOR_MISS +10; L2 accesses +100, misses +30)
K0 = _block("k0", 100, 100, (10, 5, 20, 5), 50, 10)
K1 = _block("k1", 60, 160, (30, 5, 30, 15), 150, 40)


def test_run_row_is_the_last_blocks_totals(reference_dir: Path, tmp_path: Path) -> None:
    """Run row: cycles = the last block's gpu_tot_sim_cycle (160, not its own 60); L1
    rate of the last block's cumulative counters (30 + 15) / (30 + 5 + 30 + 15) = 0.5625;
    L2 rate as printed (40 / 150 -> 0.2667). ``run_id`` is the log's name without its
    suffix, ``gpu`` the log relative to the table's folder (m/ -> ../run.log)."""
    log = _log(tmp_path / "run.log", K0, K1)
    out = tmp_path / "m" / "t.csv"
    df = logs_to_measured([log], out, traces_root=reference_dir)
    assert len(df) == 1
    r = df.iloc[0]
    assert r["run_id"] == "run" and r["class"] == "unknown"
    assert r["cycles"] == 160.0
    assert r["l1d_rd_miss_rate"] == pytest.approx(0.5625, rel=1e-12)
    assert r["l2_miss_rate"] == 0.2667
    assert r["gpu"] == os.path.join("..", "run.log")
    want = os.path.relpath((reference_dir / TRACE).resolve(), out.parent.resolve())
    assert r["trace"] == want
    back = pd.read_csv(out)
    assert list(back["cycles"]) == [160.0] and list(back["gpu"]) == [r["gpu"]]


def test_per_kernel_rows_are_each_kernels_own(reference_dir: Path, tmp_path: Path) -> None:
    """Per kernel: ids run__k0, run__k1; cycles each block's gpu_sim_cycle (100, 60);
    kernel 0's rates its block's: L1 (20 + 5) / (10 + 5 + 20 + 5) = 0.625, L2 10 / 50
    = 0.2; kernel 1's from the differences: L1 (10 + 10) / (20 + 0 + 10 + 10) = 0.5, L2
    30 / 100 = 0.3."""
    log = _log(tmp_path / "run.log", K0, K1)
    df = logs_to_measured([log], traces_root=reference_dir, per_kernel=True)
    assert list(df["run_id"]) == ["run__k0", "run__k1"]
    assert list(df["kernel"]) == [0, 1]
    assert list(df["cycles"]) == [100.0, 60.0]
    assert list(df["l1d_rd_miss_rate"]) == pytest.approx([0.625, 0.5], rel=1e-12)
    assert list(df["l2_miss_rate"]) == pytest.approx([0.2, 0.3], rel=1e-12)


def test_missing_read_counters_give_nan(tmp_path: Path) -> None:
    """Kernel 0's block lacks SECTOR_MISS: its L1 rate (and the run rate of that block)
    is NaN; kernel 1's too (its difference needs the counter in both blocks); the L2
    rates are unaffected (0.2, 0.3)."""
    log = _log(tmp_path / "run.log", _block("k0", 100, 100, (10, 5, 20), 50, 10), K1)
    parsed = parse_log(log)
    assert math.isnan(miss_rates(parsed.kernels[0].stats)["l1d_rd_miss_rate"])
    per = kernel_miss_rates(parsed)
    assert math.isnan(per[0]["l1d_rd_miss_rate"]) and math.isnan(per[1]["l1d_rd_miss_rate"])
    assert [p["l2_miss_rate"] for p in per] == pytest.approx([0.2, 0.3], rel=1e-12)


def test_a_log_with_more_blocks_than_the_trace_is_refused(
    reference_dir: Path, tmp_path: Path
) -> None:
    """Three blocks for the two-kernel trace: the log is of another trace; refused."""
    log = _log(tmp_path / "run.log", K0, K1, _block("k2", 5, 165, (30, 5, 30, 15), 150, 40))
    with pytest.raises(ConfigError, match=r"3 kernel statistics blocks .* 2 kernels"):
        logs_to_measured([log], traces_root=reference_dir)


def test_the_nearest_folder_holding_the_trace_wins(tmp_path: Path) -> None:
    """Without a traces root the -trace path is tried from the log's folder upwards,
    first match: a trace both in a/b/ (the log's folder) and in a/ resolves to a/b/'s;
    with only a/'s, to a/'s."""
    for d in (tmp_path / "a", tmp_path / "a" / "b"):
        (d / "traces" / "t").mkdir(parents=True)
        (d / "traces" / "t" / "kernelslist.g").write_text("")
    log = tmp_path / "a" / "b" / "run.log"
    log.write_text("GPGPU-Sim: Configuration options:\n-trace traces/t/kernelslist.g # t\n")
    got = run_trace(log)
    assert got.resolve() == (tmp_path / "a" / "b" / "traces" / "t" / "kernelslist.g").resolve()
    (tmp_path / "a" / "b" / "traces" / "t" / "kernelslist.g").unlink()
    got = run_trace(log)
    assert got.resolve() == (tmp_path / "a" / "traces" / "t" / "kernelslist.g").resolve()
