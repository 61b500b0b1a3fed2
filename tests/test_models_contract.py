"""Contract every registered model must honour (sklearn ``check_estimator`` style).

For each model and each input (named MD/NMD cases and hypothesis-generated ones):
cycles positive and finite; CPI stack non-negative and summing to cycles / warp
instructions; never faster than the roofline from the cache statistics; and,
where the theory says so (``Model.queue_monotone``), more NoC or DRAM bandwidth
never adds cycles nor queueing stall, and more MSHRs never add MSHR stall.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mdm.config.gpu import GPUConfig
from mdm.models import _load_builtin  # noqa: F401
from mdm.models.base import MODELS, KernelInput, KernelPrediction, get_model
from mdm.models.roofline import roofline_bound
from mdm.models.synthetic import kernel_input_from_profile, pascal_like
from mdm.profile.intervals import IntervalProfile

BASE = pascal_like()
GPU = GPUConfig.model_validate(BASE)
ALL_MODELS = sorted(MODELS)

NMD = IntervalProfile.from_lists(
    [20, 8, 30, 5], [40, 300, 12, 250], [0, 1, 0, 2], [0, 0, 0, 1], [0.0, 0.3, 0.0, 0.5]
)
MD = IntervalProfile.from_lists([6, 4, 10], [20, 420, 380], [0, 32, 16], [0, 0, 4], [0.0, 0.6, 0.9])
CASES = {
    "nmd": kernel_input_from_profile(GPU, NMD, warps_per_sm=48, active_sms=28, warps_per_block=8),
    "md": kernel_input_from_profile(GPU, MD, warps_per_sm=64, active_sms=28, warps_per_block=4),
    "md-tail": kernel_input_from_profile(
        GPU, MD, warps_per_sm=32, active_sms=28, warps_per_block=8, n_blocks=4 * 28 * 2 + 13
    ),
    "nmd-small": kernel_input_from_profile(GPU, NMD, warps_per_sm=4, active_sms=3),
    "volta-streaming": kernel_input_from_profile(
        GPU.with_updates({"compute_capability": 70, "l1.allocate_on": "fill", "l1.sectored": True}),
        MD,
        warps_per_sm=64,
        active_sms=28,
        warps_per_block=2,
    ),
}


def _stall(p: KernelPrediction, *keys: str) -> float:
    return sum(p.cpi_stack.get(k, 0.0) for k in keys) * p.warp_insts


def check_basic(model: str, inp: KernelInput) -> KernelPrediction:
    p = get_model(model).predict_kernel(inp)
    assert p.model == model and p.kernel == inp.name
    assert math.isfinite(p.cycles) and p.cycles > 0
    assert p.warp_insts == inp.total_warp_insts
    assert all(math.isfinite(v) and v >= 0 for v in p.cpi_stack.values()), p.cpi_stack
    assert sum(p.cpi_stack.values()) == pytest.approx(p.cycles / p.warp_insts, rel=1e-9)
    assert p.ipc == pytest.approx(p.warp_insts / p.cycles)
    assert p.cycles >= roofline_bound(inp).cycles * (1 - 1e-12)
    if model in ("roofline", "mwp-cwp"):
        assert p.md_fraction is None  # no interval classification (eq. 2)
    else:
        assert p.md_fraction is not None and 0.0 <= p.md_fraction <= 1.0
        assert {"base", "dependency", "mshr", "noc", "dram"} <= set(p.cpi_stack)
    return p


def _rebuild(inp: KernelInput, updates: dict[str, object]) -> KernelInput:
    """Same kernel on an updated configuration (cache statistics unchanged)."""
    return KernelInput(**{**inp.__dict__, "gpu": inp.gpu.with_updates(updates)})


def check_monotone(model: str, inp: KernelInput) -> None:
    m = get_model(model)
    if not m.queue_monotone:
        return
    gpu = inp.gpu
    p0 = m.predict_kernel(inp)
    for field, comp in (("noc.bandwidth_gbps", "noc"), ("dram.bandwidth_gbps", "dram")):
        current = gpu.noc.bandwidth_gbps if comp == "noc" else gpu.dram.bandwidth_gbps
        p1 = m.predict_kernel(_rebuild(inp, {field: current * 2}))
        assert p1.cycles <= p0.cycles * (1 + 1e-12), field
        assert (
            _stall(p1, "mshr", "noc", "dram")
            <= _stall(p0, "mshr", "noc", "dram") * (1 + 1e-12) + 1e-9
        )
        if not p0.details.get("roofline_bound") and not p1.details.get("roofline_bound"):
            assert _stall(p1, comp) <= _stall(p0, comp) * (1 + 1e-12) + 1e-9, field
    more = {"l1.mshr_entries": gpu.l1.mshr_entries * 2}
    if gpu.l1.allocate_on == "fill":
        more = {"l1.miss_queue_entries": gpu.l1.miss_queue_entries * 2}
    p2 = m.predict_kernel(_rebuild(inp, more))
    assert _stall(p2, "mshr") <= _stall(p0, "mshr") * (1 + 1e-12) + 1e-9
    # more L2 MSHR entries never add cycles (the roofline's L2-MSHR bound only falls)
    for entries in (1, 4, gpu.l2.mshr_per_bank * 2):
        few = m.predict_kernel(_rebuild(inp, {"l2.mshr_per_bank": entries}))
        many = m.predict_kernel(_rebuild(inp, {"l2.mshr_per_bank": entries * 2}))
        assert many.cycles <= few.cycles * (1 + 1e-12), entries


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("model", ALL_MODELS)
def test_contract_on_named_cases(model: str, case: str) -> None:
    check_basic(model, CASES[case])
    check_monotone(model, CASES[case])


def test_named_cases_are_what_their_names_say() -> None:
    mdm = get_model("mdm")
    assert mdm.predict_kernel(CASES["nmd"]).md_fraction == 0
    assert mdm.predict_kernel(CASES["md"]).md_fraction > 0
    assert mdm.predict_kernel(CASES["md-tail"]).details["tail_warps_per_sm"] > 0
    # MD kernels are the ones where GPUMech's missing batching/queue model shows.
    assert (
        mdm.predict_kernel(CASES["md"]).cycles
        > get_model("gpumech").predict_kernel(CASES["md"]).cycles
    )


@pytest.mark.parametrize("model", ALL_MODELS)
def test_the_longest_warp_bounds_every_model(model: str) -> None:
    """A kernel ends only when its longest warp does (:mod:`mdm.models.roofline`): with
    that warp's single-warp cycles above every other term, each model predicts exactly
    them, the excess in ``dependency``; below, it changes nothing."""
    inp = CASES["nmd-small"]
    m = get_model(model)
    free = m.predict_kernel(inp)
    short = m.predict_kernel(KernelInput(**{**inp.__dict__, "longest_warp_cycles": 1.0}))
    assert (short.cycles, short.cpi_stack) == (free.cycles, free.cpi_stack)
    long = 10 * free.cycles
    p = check_basic(model, KernelInput(**{**inp.__dict__, "longest_warp_cycles": long}))
    assert p.cycles == pytest.approx(long, rel=1e-12)
    # the bound is in the details, where a user looks for what decided the cycles
    assert p.details.get("longest_warp_cycles", p.details.get("latency_cycles")) == long
    dep = p.cpi_stack["dependency"] - free.cpi_stack.get("dependency", 0.0)
    assert dep * p.warp_insts == pytest.approx(long - free.cycles, rel=1e-9)


@pytest.mark.parametrize("model", ALL_MODELS)
def test_the_l2_mshrs_bound_every_model(model: str) -> None:
    """Little's law on the L2's MSHR entries (:func:`mdm.models.roofline.l2_mshr_cycles`):
    each of the kernel's ``A`` entry allocations holds its entry at least the DRAM round
    trip ``L`` and the ``banks`` banks hold one entry each, so the kernel takes at least
    ``A x L / banks`` cycles. With ``A`` large enough each model predicts exactly that,
    the excess in ``dram``; with the preset's entries it changes nothing."""
    inp = CASES["md"]
    m = get_model(model)
    free = m.predict_kernel(inp)
    one = GPU.with_updates({"l2.mshr_per_bank": 1})
    lat = GPU.dram.latency_ns * GPU.core_clock_mhz / 1000  # L, core cycles
    # enough allocations for A x L / banks to be 3x the free prediction
    alloc = math.ceil(3 * free.cycles * GPU.l2.banks / lat)
    cache = replace(inp.cache, l2_mshr_allocations=alloc)
    p = check_basic(model, KernelInput(**{**inp.__dict__, "gpu": one, "cache": cache}))
    assert p.cycles == pytest.approx(alloc * lat / GPU.l2.banks, rel=1e-12)
    assert p.details.get("l2_mshr_cycles", p.details.get("roofline_cycles")) == p.cycles
    extra = (p.cpi_stack["dram"] - free.cpi_stack.get("dram", 0.0)) * p.warp_insts
    assert extra == pytest.approx(p.cycles - free.cycles, rel=1e-9)
    same = m.predict_kernel(KernelInput(**{**inp.__dict__, "cache": cache}))
    assert (same.cycles, same.cpi_stack) == (free.cycles, free.cpi_stack)  # 128 entries


@pytest.mark.parametrize("model", [m for m in ALL_MODELS if m != "mwp-cwp"])
def test_more_sms_never_slow_a_grid_smaller_than_a_wave(model: str) -> None:
    """128 blocks of 8 warps on 16 to 127 SMs, the cache statistics fixed: the busiest SM
    holds ``ceil(128 / SMs)`` blocks, and the wave's queues count the grid's warps, not
    every SM at the busiest one's load (:func:`mdm.models.interval.partial_wave`). With
    two blocks on the busiest SM, 64 to 127 SMs predict the same; before, 112 SMs
    charged the queues of 224 blocks and predicted the kernel slower. (At 128 SMs and
    one block each, the MDM family's MSHR-capped concurrency, ``#SMs x M``, doubles:
    a different question.)"""
    prev = math.inf
    cycles = {}
    for sms in (16, 28, 56, 64, 100, 112, 127):
        busiest = -(-128 // sms)
        inp = kernel_input_from_profile(
            GPU.with_updates({"n_sm": sms}),
            MD,
            warps_per_sm=8 * busiest,
            active_sms=min(sms, 128),
            warps_per_block=8,
            n_blocks=128,
        )
        cycles[sms] = check_basic(model, inp).cycles
        assert cycles[sms] <= prev * (1 + 1e-12), (sms, cycles)
        prev = cycles[sms]
    assert cycles[127] == pytest.approx(cycles[64], rel=1e-12)


def test_bad_inputs_are_rejected_with_the_kernel_name() -> None:
    inp = CASES["nmd"]
    empty = KernelInput(**{**inp.__dict__, "total_warp_insts": 0, "name": "k0"})
    for model in ALL_MODELS:
        with pytest.raises(ValueError, match="k0"):
            get_model(model).predict_kernel(empty)


@st.composite
def kernel_inputs(draw: st.DrawFn) -> KernelInput:
    k = draw(st.integers(1, 5))
    ints = st.lists(st.integers(1, 60), min_size=k, max_size=k)
    stalls = st.lists(st.integers(0, 600), min_size=k, max_size=k)
    reads = st.lists(st.sampled_from([0, 0, 1, 2, 4, 8, 32]), min_size=k, max_size=k)
    writes = st.lists(st.sampled_from([0, 0, 1, 4]), min_size=k, max_size=k)
    miss = st.lists(st.floats(0, 1), min_size=k, max_size=k)
    prof = IntervalProfile.from_lists(
        draw(ints), draw(stalls), draw(reads), draw(writes), draw(miss)
    )
    gpu = GPU.with_updates(
        {
            "compute_capability": draw(st.sampled_from([61, 75])),
            "sm.scheduler_policy": draw(st.sampled_from(["gto", "lrr"])),
            "l1.mshr_entries": draw(st.sampled_from([4, 32, 128, 256])),
            "l1.allocate_on": draw(st.sampled_from(["miss", "fill"])),
            "noc.bandwidth_gbps": draw(st.sampled_from([100.0, 500.0, 1050.0, 4000.0])),
            "dram.bandwidth_gbps": draw(st.sampled_from([50.0, 200.0, 480.0, 2000.0])),
        }
    )
    wpb = draw(st.sampled_from([1, 2, 4, 8]))
    warps = wpb * draw(st.integers(1, 64 // wpb))
    sms = draw(st.integers(1, 28))
    full = warps // wpb * sms
    n_blocks = draw(st.integers(1, 3 * full))
    inp = kernel_input_from_profile(
        gpu, prof, warps_per_sm=warps, active_sms=sms, warps_per_block=wpb, n_blocks=n_blocks
    )
    longest = draw(st.sampled_from([0.0, 0.0, 50.0, 2_000.0, 200_000.0]))
    return KernelInput(**{**inp.__dict__, "longest_warp_cycles": longest})


@pytest.mark.parametrize("model", ALL_MODELS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=kernel_inputs())
def test_contract_hypothesis(model: str, inp: KernelInput) -> None:
    check_basic(model, inp)
    check_monotone(model, inp)


@pytest.mark.parametrize("model", ALL_MODELS)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inp=kernel_inputs(), factor=st.sampled_from([0.5, 1.0, 2.0, 4.0]))
def test_slower_execution_units_never_speed_up(model: str, inp: KernelInput, factor: float) -> None:
    """A profile whose execution units take longer per instruction (``unit_cycles``,
    initiation intervals) is never predicted faster than one without that column."""
    from dataclasses import replace

    slow = replace(inp, profile=replace(inp.profile, unit_cycles=inp.profile.n_insts * factor))
    m = get_model(model)
    check_basic(model, slow)
    assert m.predict_kernel(slow).cycles >= m.predict_kernel(inp).cycles * (1 - 1e-12)


def test_every_registering_module_is_in_the_registry_list() -> None:
    """The README's recipe for a new model: a module of ``mdm/models`` that registers a
    model is listed in ``_load_builtin`` (else nothing imports it and its name stays
    unknown), and :func:`model_names` gives exactly the registered names."""
    import ast
    from pathlib import Path

    from mdm.models import base

    pkg = Path(base.__file__).parent
    registering = {
        p.stem
        for p in pkg.glob("*.py")
        if any(
            isinstance(d, ast.Name) and d.id == "register"
            for node in ast.walk(ast.parse(p.read_text()))
            if isinstance(node, ast.ClassDef)
            for d in node.decorator_list
        )
    }
    listed = {
        alias.name
        for node in ast.parse((pkg / "_load_builtin.py").read_text()).body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert registering and registering <= listed
    assert base.model_names() == ALL_MODELS
    with pytest.raises(KeyError, match="known: .*mdm-pipelined"):
        get_model("mdm-pipelinde")
    msg = base.unknown_models(["mdm", "MDM-Queue", "mdm-pipelinde", "zzz"], "--model")
    assert msg is not None and msg.startswith("--model: unknown model(s) 'MDM-Queue' (did ")
    assert "'MDM-Queue' (did you mean 'mdm-queue'?)" in msg
    assert "'mdm-pipelinde' (did you mean 'mdm-pipelined'?), 'zzz';" in msg
    assert base.unknown_models(ALL_MODELS, "x") is None
