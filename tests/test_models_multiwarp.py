"""Multi-warp cycles C_i (model-notes section 3): invariants and the scheduler split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mdm.config.gpu import GPUConfig
from mdm.models.multiwarp import multiwarp_cycles, scheduler_view
from mdm.models.synthetic import pascal_like

BASE = pascal_like("four-schedulers", 70, 150)


profiles = st.integers(1, 8).flatmap(
    lambda k: st.tuples(
        st.lists(st.integers(1, 100), min_size=k, max_size=k),
        st.lists(st.integers(0, 1000), min_size=k, max_size=k),
    )
)


@settings(max_examples=200, deadline=None)
@given(
    prof=profiles,
    warps=st.integers(1, 64),
    ir=st.sampled_from([1.0, 2.0, 4.0]),
    policy=st.sampled_from(["gto", "lrr"]),
)
def test_invariants(prof: tuple[list[int], list[int]], warps: int, ir: float, policy: str) -> None:
    n = np.array(prof[0], dtype=np.float64)
    s = np.array(prof[1], dtype=np.float64)
    c = multiwarp_cycles(n, s, warps, ir, policy)
    assert np.all(c >= n / ir + s - 1e-9)  # never faster than the warp alone
    assert np.all(c >= warps * n / ir - 1e-9)  # never above the peak issue rate
    assert warps * n.sum() / c.sum() <= ir * (1 + 1e-12)
    # One warp: C_i = n_i / IR + S_i exactly; more warps never shorten an interval.
    assert multiwarp_cycles(n, s, 1, ir, policy) == pytest.approx(n / ir + s)
    more = multiwarp_cycles(n, s, warps + 1, ir, policy)
    assert np.all(more >= c - 1e-9)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="policy"):
        multiwarp_cycles(np.ones(2), np.ones(2), 2, 1.0, "fifo")
    with pytest.raises(ValueError, match="shape"):
        multiwarp_cycles(np.ones(2), np.ones(3), 2, 1.0)


@pytest.mark.parametrize("cc", [61, 70])
def test_warps_split_over_schedulers(cc: int) -> None:
    gpu = GPUConfig.model_validate({**BASE, "compute_capability": cc})
    v = scheduler_view(gpu, 50)  # 4 schedulers: ceil(50 / 4) = 13 warps each, IR 1
    assert (v.warps, v.issue_rate, v.split) == (13, 1.0, True)
    pooled = scheduler_view(gpu, 50, split=False)
    assert (pooled.warps, pooled.issue_rate) == (50, 4.0)


def test_ldst_unit_caps_interval_cycles() -> None:
    from mdm.models.multiwarp import profile_cycles
    from mdm.profile.intervals import IntervalProfile

    gpu = GPUConfig.model_validate({**BASE, "compute_capability": 70})
    base = IntervalProfile.from_lists([10, 10], [0, 0])
    prof = IntervalProfile(
        base.n_insts,
        base.stall,
        base.read_misses,
        base.write_reqs,
        base.l2_miss_rate,
        ldst_cycles=np.array([8.0, 0.0]),
    )
    # 40 warps on 4 schedulers: W_sc = 10, issue cap 10 x 10 = 100 cycles per interval;
    # interval 0: 8 memory instructions x 40 warps on the SM's one LD/ST unit = 320
    c, view = profile_cycles(gpu, prof, 40)
    assert view.warps == 10
    assert c.tolist() == pytest.approx([320.0, 100.0])
    c0, _ = profile_cycles(gpu, base, 40)  # no LD/ST column: no cap
    assert c0.tolist() == pytest.approx([100.0, 100.0])


def test_unpaired_dual_issue_equals_single_issue() -> None:
    """Issue width 2 with issue slots = n_i (nothing pairs) gives the single-issue
    C_i; full pairing (slots = n_i / 2) gives the width-2 C_i without slots."""
    from dataclasses import replace

    from mdm.models.multiwarp import profile_cycles
    from mdm.profile.intervals import IntervalProfile

    base = IntervalProfile.from_lists([8, 4, 6], [100, 20, 0])
    g1 = GPUConfig.model_validate(pascal_like()).with_updates({"sm.issue_width": 1})
    g2 = g1.with_updates({"sm.issue_width": 2})
    single, _ = profile_cycles(g1, base, 32)
    unpaired, _ = profile_cycles(g2, replace(base, issue_slots=base.n_insts.copy()), 32)
    assert np.allclose(unpaired, single)
    full, _ = profile_cycles(g2, replace(base, issue_slots=base.n_insts / 2), 32)
    no_slots, _ = profile_cycles(g2, base, 32)
    assert np.allclose(full, no_slots)
    assert np.all(full <= unpaired)


def test_execution_units_cap_interval_cycles() -> None:
    """C_i >= W_sc x unit_cycles_i (a scheduler's share of its busiest unit), worked by
    hand; the cap binds only where the unit is slower than the issue rate."""
    from dataclasses import replace

    from mdm.models.multiwarp import profile_cycles
    from mdm.profile.intervals import IntervalProfile

    gpu = GPUConfig.model_validate({**BASE, "compute_capability": 70})
    base = IntervalProfile.from_lists([10, 10], [0, 0])
    # interval 0: 8 FP32 instructions at an initiation interval of 2 = 16 cycles per
    # warp; 40 warps on 4 schedulers: W_sc = 10, 160 > the issue cap's 100
    prof = replace(base, unit_cycles=np.array([16.0, 10.0]))
    c, view = profile_cycles(gpu, prof, 40)
    assert view.warps == 10
    assert c.tolist() == pytest.approx([160.0, 100.0])
    c0, _ = profile_cycles(gpu, base, 40)  # no unit column: no cap
    assert c0.tolist() == pytest.approx([100.0, 100.0])


def test_cycle_parts_attribute_the_caps_in_order() -> None:
    """``profile_cycle_parts``: the LD/ST cap's excess over the scheduler's C_i, then the
    execution-unit cap's excess over both, worked by hand; C_i itself is
    ``profile_cycles``'."""
    from dataclasses import replace

    from mdm.models.multiwarp import profile_cycle_parts, profile_cycles
    from mdm.profile.intervals import IntervalProfile

    gpu = GPUConfig.model_validate({**BASE, "compute_capability": 70})
    base = IntervalProfile.from_lists([10, 10], [0, 0])
    prof = replace(base, ldst_cycles=np.array([8.0, 0.0]), unit_cycles=np.array([16.0, 12.0]))
    parts = profile_cycle_parts(gpu, prof, 40)  # W = 40, W_sc = 10: issue cap 100 each
    # interval 0: LD/ST 40 x 8 = 320 (+220), units 10 x 16 = 160 below it (+0);
    # interval 1: no LD/ST time, units 10 x 12 = 120 (+20)
    assert parts.c.tolist() == pytest.approx([320.0, 120.0])
    assert parts.ldst.tolist() == pytest.approx([220.0, 0.0])
    assert parts.units.tolist() == pytest.approx([0.0, 20.0])
    assert np.array_equal(parts.c, profile_cycles(gpu, prof, 40)[0])


def test_gto_issue_probability_below_one_by_hand() -> None:
    """GTO's ``p_i = min(1, P S_i)`` with ``P = sum(n) / (sum(n)/IR + sum(S))`` below 1:
    n = [2, 20], S = [1, 0], IR = 1, W = 3: P = 22 / 23, avg_n = 11;
    p_0 = 22/23, extra_0 = 22/23 x 2 x 11 - 1 = 461/23, C_0 = 2 + 1 + 461/23 = 530/23
    (issue cap 3 x 2 = 6); p_1 = 1 (S = 0), extra_1 = 2 x 11 = 22, C_1 = 42 < cap 60.
    LRR: C_i = max(n_i + S_i, W n_i) = [6, 60]."""
    n, s = np.array([2.0, 20.0]), np.array([1.0, 0.0])
    assert multiwarp_cycles(n, s, 3, 1.0).tolist() == pytest.approx([530 / 23, 60])
    assert multiwarp_cycles(n, s, 3, 1.0, "lrr").tolist() == pytest.approx([6, 60])


def test_profile_cycles_follow_the_configured_policy() -> None:
    """``profile_cycles`` uses ``sm.scheduler_policy``: 12 warps on 4 schedulers (W_sc = 3)
    give the GTO and LRR cycles of the test above."""
    from mdm.models.multiwarp import profile_cycles
    from mdm.profile.intervals import IntervalProfile

    prof = IntervalProfile.from_lists([2, 20], [1, 0])
    gpu = GPUConfig.model_validate(BASE)
    gto, _ = profile_cycles(gpu, prof, 12)
    lrr, _ = profile_cycles(gpu.with_updates({"sm.scheduler_policy": "lrr"}), prof, 12)
    assert gto.tolist() == pytest.approx([530 / 23, 60])
    assert lrr.tolist() == pytest.approx([6, 60])
