"""Accel-Sim log parser against the reference .json twins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mdm.errors import TraceFormatError
from mdm.explore.accelsim_log import parse_log

LOGS = [
    "stencil2d__mdm_pascal__baseline",  # 2 kernels
    "gather__mdm_pascal__l1_mshr_32",
    "bw_l2__SM7_QV100__baseline",  # other architecture, 2 kernels
]


@pytest.mark.parametrize("run_id", LOGS)
def test_parser_matches_json_twin(reference_dir: Path, run_id: str) -> None:
    log = parse_log(reference_dir / "logs" / f"{run_id}.log.xz")
    twin = json.loads((reference_dir / "logs" / f"{run_id}.json").read_text())
    assert len(log.kernels) == len(twin["kernels"])
    checked = 0
    for k, jk in zip(log.kernels, twin["kernels"], strict=True):
        assert k.name == jk["kernel_name"].strip()
        for key, val in jk.items():
            if key in ("kernel_name", "sim_sec"):  # sim_sec: wall clock, not in the block
                continue
            assert k.stats[key] == pytest.approx(val, rel=1e-9), key
            checked += 1
    assert checked > 100
    assert log.tot_sim_cycle == twin["kernels"][-1]["gpu_tot_sim_cycle"]
    assert log.tot_sim_insn == twin["kernels"][-1]["gpu_tot_sim_insn"]
    assert sum(log.kernel_cycles) == pytest.approx(log.tot_sim_cycle)


def test_parser_errors_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "x.log"
    p.write_text("nothing here\n")
    with pytest.raises(TraceFormatError, match="x.log"):
        parse_log(p)
    p.write_text("hdr\nkernel_name = k()\ngpu_sim_cycle = 10\n")
    with pytest.raises(TraceFormatError, match=r"x.log:2: .*gpu_sim_insn"):
        parse_log(p)


HAND_LOG = """\
GPGPU-Sim: Configuration options:
-gpgpu_n_clusters                      28 # number of processing clusters
-trace               traces/x/kernelslist.g # traces kernel file
Total number of memory sub partition = 24
kernel_name = k1(int)\x20
gpu_sim_cycle = 100
gpu_sim_insn = 2.5e+03
gpu_tot_sim_cycle = 100
gpu_tot_sim_insn = 2500
gpu_occupancy = -nan%
total dram reads = 12
n_nop = 7
n_nop = 9
Idle = -3
\tTotal_core_cache_stats_breakdown[GLOBAL_ACC_R][HIT] = 10
\tTotal_core_cache_fail_stats_breakdown[GLOBAL_ACC_R][MSHR_ENRTY_FAIL] = 4
\tL2_cache_stats_breakdown[GLOBAL_ACC_R][MISS] = 6
\tL2_cache_stats_fail_breakdown[GLOBAL_ACC_R][MISS_QUEUE_FULL] = 2
kernel_name = k2(float*)
gpu_sim_cycle = 40
gpu_sim_insn = 800
gpu_tot_sim_cycle = 140
gpu_tot_sim_insn = 3300
"""


def test_parser_on_a_hand_written_log(tmp_path: Path) -> None:
    """Read off the log above: kernel names without their trailing blank; a number in
    exponent form (2.5e+03 = 2500); a name with blanks; a negative value; a line that
    repeats in a block (per-channel DRAM counters such as ``n_nop``) keeps its first
    value; the four breakdown forms renamed TC_/TCF_/L2_/L2F_<A>_<B>; non-numbers
    (-nan%) and lines before the first kernel ignored. Run totals are the last block's
    gpu_tot_* (140 cycles, 3300 instructions), kernel cycles each block's gpu_sim_cycle."""
    from mdm.explore.accelsim_log import log_options

    p = tmp_path / "hand.log"
    p.write_text(HAND_LOG)
    log = parse_log(p)
    assert [k.name for k in log.kernels] == ["k1(int)", "k2(float*)"]
    k1 = log.kernels[0].stats
    assert k1["gpu_sim_insn"] == 2500.0
    assert k1["total dram reads"] == 12.0
    assert k1["n_nop"] == 7.0
    assert k1["Idle"] == -3.0
    assert "gpu_occupancy" not in k1
    assert "Total number of memory sub partition" not in k1
    breakdown = {k: v for k, v in k1.items() if k.startswith(("TC", "L2"))}
    assert breakdown == {
        "TC_GLOBAL_ACC_R_HIT": 10.0,
        "TCF_GLOBAL_ACC_R_MSHR_ENRTY_FAIL": 4.0,
        "L2_GLOBAL_ACC_R_MISS": 6.0,
        "L2F_GLOBAL_ACC_R_MISS_QUEUE_FULL": 2.0,
    }
    assert log.tot_sim_cycle == 140.0
    assert log.tot_sim_insn == 3300.0
    assert log.kernel_cycles == [100.0, 40.0]
    assert log_options(p) == {"-gpgpu_n_clusters": "28", "-trace": "traces/x/kernelslist.g"}
    assert log_options(p, ("-trace",)) == {"-trace": "traces/x/kernelslist.g"}


def test_parser_error_names_the_block_that_lacks_a_total(tmp_path: Path) -> None:
    """The second block (its kernel_name on line 6) lacks gpu_tot_sim_insn and
    gpu_tot_sim_cycle: the error names line 6 and both counters, not the first block."""
    p = tmp_path / "cut.log"
    p.write_text(
        "kernel_name = a\ngpu_sim_cycle = 1\ngpu_sim_insn = 1\ngpu_tot_sim_cycle = 1\n"
        "gpu_tot_sim_insn = 1\nkernel_name = b\ngpu_sim_cycle = 2\ngpu_sim_insn = 2\n"
    )
    with pytest.raises(
        TraceFormatError, match=r"cut.log:6: .*'b'.*gpu_tot_sim_cycle, gpu_tot_sim_insn"
    ):
        parse_log(p)
