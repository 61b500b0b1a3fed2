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
