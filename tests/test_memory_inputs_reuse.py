"""Cache simulator inputs reused across configurations, and the numba address-mapping
paths: reuse must never change a result, and the numba mapping must equal the formula."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mdm.config.load import load_gpu
from mdm.memory import cachesim, simulate_app
from mdm.memory.carveout import kernel_allocates_on_fill
from mdm.memory.hashing import (
    _IPOLY_BITS,
    _MASK_TABLE,
    SET_IPOLY,
    SET_LINEAR,
    _map_gap,
    index_dtype,
    l2_bank_and_set,
)
from mdm.memory.stats import CacheSimResult
from mdm.traces.workloads import generate


def _out(lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Output arrays (bank, set) of the mapping kernels."""
    return np.empty(lines.shape[0], np.int64), np.empty(lines.shape[0], np.int64)


def _flat(res: CacheSimResult) -> list:
    out = []
    for k in res.kernels:
        d = {f: getattr(k, f) for f in k.__dataclass_fields__ if f not in ("per_pc", "warps")}
        pp = {f: np.asarray(getattr(k.per_pc, f)).tolist() for f in k.per_pc.__dataclass_fields__}
        out.append((d, pp))
    return out


def test_reused_inputs_give_identical_results() -> None:
    """A second configuration with the same coalescing/L2 mapping reuses the kernel
    inputs; its result equals a cold run's, and the first run's result is unchanged."""
    app = generate("stride", ctas=64)
    a = load_gpu("mdm_pascal")
    b = a.model_copy(update={"n_sm": 8, "dram": a.dram.model_copy(update={"bandwidth_gbps": 120})})
    assert cachesim._input_key(a) == cachesim._input_key(b)
    cachesim.clear_input_cache()
    cold_a = _flat(simulate_app(app, a))
    cachesim.clear_input_cache()
    cold_b = _flat(simulate_app(app, b))
    warm_a = _flat(simulate_app(app, a))  # inputs computed for b, reused
    warm_b = _flat(simulate_app(app, b))
    assert warm_a == cold_a
    assert warm_b == cold_b
    assert cold_a != cold_b  # the two configurations do differ (the test can fail)
    assert all(k in cachesim._INPUTS for k in app.kernels)


def test_prepared_inputs_are_the_ones_simulated() -> None:
    """:func:`prepare_inputs` puts every kernel's inputs in the cache, and the
    simulation reads those very objects; its result equals a cold run's."""
    app = generate("gather", ctas=16)
    g = load_gpu("mdm_pascal")
    cachesim.clear_input_cache()
    cold = _flat(simulate_app(app, g))
    cachesim.clear_input_cache()
    cachesim.prepare_inputs(app, g)
    held = [cachesim._INPUTS[k][cachesim._input_key(g)] for k in app.kernels]
    assert _flat(simulate_app(app, g)) == cold
    again = [cachesim._kernel_inputs(k, g) for k in app.kernels]
    assert all(a is b for a, b in zip(held, again, strict=True))
    cachesim.clear_input_cache()


@pytest.mark.parametrize("preset", ["mdm_pascal", "v100"])
def test_issue_loop_compiled_without_global_memory_serves_a_real_kernel(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """:func:`compile_issue_loop` calls the issue loop with the argument types of a real
    kernel's simulation, so that the loop it compiles is the one a simulation loads
    (with one LD/ST-unit instruction, its lists were typed contiguous: a second
    compilation of about 26 s in the first simulation). On ``v100`` (adaptive
    carve-out) the real kernels, with shared memory, allocate on fill, and the warm-up
    kernel, without, on miss."""
    import numba

    from mdm.memory import _core

    g = load_gpu(preset)
    key = cachesim.issue_loop_key(g)
    entry = _core._RUN_TIMED[key]
    seen: list = []

    def record(args: tuple) -> float:
        seen.append(numba.typeof(args))
        return entry(args)

    monkeypatch.setitem(_core._RUN_TIMED, key, record)
    cachesim.compile_issue_loop(g)
    apps = [generate("stride", ctas=4), generate("gemm_tiled", M=32, N=64, K=32)]
    for app in apps:
        simulate_app(app, g)
        fill = kernel_allocates_on_fill(app.kernels[0], g)
        assert fill == (preset == "v100")
    assert len(seen) == 3 and seen[0] == seen[1] == seen[2]


def test_background_compile_leaves_the_loop_in_numbas_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """:func:`compile_in_background` starts one process per issue loop (none while one
    runs), which ends cleanly with the loop in numba's on-disk cache; the next
    simulation joins it."""
    g = load_gpu("mdm_pascal")
    key = cachesim.issue_loop_key(g)
    monkeypatch.setattr(cachesim, "issue_loop_cached", lambda gpu: False)
    assert cachesim.compile_in_background(g)
    pid, proc = cachesim._COMPILING[key]
    assert cachesim.compile_in_background(g)  # the same process, no second one
    assert cachesim._COMPILING[key] == (pid, proc)
    simulate_app(generate("stride", ctas=2), g)
    assert key not in cachesim._COMPILING
    assert proc.exitcode == 0
    monkeypatch.undo()
    assert cachesim.issue_loop_cached(g)
    assert not cachesim.compile_in_background(g)  # cached: nothing to start
    assert key not in cachesim._COMPILING


def test_kernel_inputs_are_narrow_and_equal_the_mapping() -> None:
    """The cached requests hold 4-sector masks in a byte and banks and sets in 16 bits
    (where they fit), with the coalescer's and the L2 mapping's values."""
    app = generate("gather", ctas=16)
    g = load_gpu("mdm_pascal")
    cachesim.clear_input_cache()
    kernel = app.kernels[0]
    ki = cachesim._kernel_inputs(kernel, g)
    assert ki.reqs.req_mask.dtype == np.uint8 and ki.reqs.req_full.dtype == np.uint8
    assert ki.bank.dtype == np.int16 and ki.l2set.dtype == np.int16
    # against the same mapping written into int64 (mdm_pascal takes the gap path)
    ln = ki.reqs.req_line
    sets = g.l2.sets_per_bank
    set_fn = SET_IPOLY if g.l2.set_index == "ipoly" else SET_LINEAR
    bank, l2set = _map_gap(ln, 7, 256, 24, 128, sets, set_fn, _MASK_TABLE, *_out(ln))
    np.testing.assert_array_equal(bank, ((ln << 7) >> 8) % 24)  # Table III
    np.testing.assert_array_equal(ki.bank, bank)
    np.testing.assert_array_equal(ki.l2set, l2set)
    assert ki.reqs.req_mask.max() == 0b1111  # every sector bit kept
    assert index_dtype(32768) == np.int16
    assert index_dtype(32769) == np.int32


def test_input_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries beyond INPUT_CACHE_BYTES are dropped, oldest first; results unchanged."""
    app = generate("stride", ctas=32)
    g = load_gpu("mdm_pascal")
    cachesim.clear_input_cache()
    ref = _flat(simulate_app(app, g))
    monkeypatch.setattr(cachesim, "INPUT_CACHE_BYTES", 1)
    cachesim.clear_input_cache()
    assert _flat(simulate_app(app, g)) == ref
    assert not any(cachesim._INPUTS.get(k) for k in app.kernels)
    cachesim.clear_input_cache()


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.integers(0, 2**40)
        # near 2^52 chunks (il = 256: a chunk is half a line number): the float
        # division's edge, and beyond it the integer one
        | st.integers(2**53 - 2**12, 2**53 + 2**12)
        | st.integers(0, 2**55),
        min_size=1,
        max_size=50,
    ),
    st.sampled_from([12, 24, 40, 3]),
    st.sampled_from([128, 256, 384, 512]),
    st.sampled_from([32, 64, 96]),
)
# a line whose chunk (2^54 + ...) a float division by 24 would floor one too high
@example(lines=[5, 33740384246340047], banks=24, il=256, sets=64)
def test_gap_mapping_equals_formula(lines: list[int], banks: int, il: int, sets: int) -> None:
    """GPGPU-Sim's non-power-of-two bank path in numba equals its formula in NumPy (the
    shift-and-mask path of power-of-two interleave and sets, with its float division
    below 2^52 and its integer one above, and the general path)."""
    ln = np.array(lines, np.int64)
    addr = ln << 7
    chunk = addr // il
    exp_set = (((chunk // banks) * il + addr % il) // 128) % sets
    b, s = _map_gap(ln, 7, il, banks, 128, sets, SET_LINEAR, _MASK_TABLE, *_out(ln))
    np.testing.assert_array_equal(b, chunk % banks)
    np.testing.assert_array_equal(s, exp_set)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.integers(0, 2**40), min_size=1, max_size=50),
    st.sampled_from([24, 48, 80]),
    st.sampled_from([256, 384]),
    st.sampled_from([16, 32, 64]),
)
def test_gap_mapping_hashes_the_partition_address_with_ipoly(
    lines: list[int], banks: int, il: int, sets: int
) -> None:
    """Non-power-of-two banks with an IPOLY set index (titan_v: 48 banks x 32 sets): the
    set is hashing.cc's IPOLY, written out bit by bit, of the partition address."""
    ln = np.array(lines, np.int64)
    b, s = _map_gap(ln, 7, il, banks, 128, sets, SET_IPOLY, _MASK_TABLE, *_out(ln))
    set_log2 = sets.bit_length() - 1
    for i, line in enumerate(lines):
        addr = line << 7
        chunk = addr // il
        local = (chunk // banks) * il + addr % il
        higher, want = local >> (7 + set_log2), (local >> 7) % sets
        for j, bits in enumerate(_IPOLY_BITS[sets]):
            want ^= (sum((higher >> p) & 1 for p in bits) & 1) << j
        assert b[i] == chunk % banks
        assert s[i] == want


def test_mdm_pascal_uses_the_gap_path() -> None:
    """mdm_pascal's 24 banks: bank = (addr >> 8) mod 24 (Table III mapping)."""
    g = load_gpu("mdm_pascal")
    lines = np.arange(0, 4096, 3, dtype=np.int64)
    b, _ = l2_bank_and_set(lines, g)
    np.testing.assert_array_equal(b, ((lines << 7) >> 8) % 24)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("l2.sub_partition_bits", (7,)),
        ("l2.bank_index", "consecutive"),
        ("l2.set_index", "linear"),
        ("l2.bank_interleave_bytes", 512),
    ],
)
def test_input_key_holds_the_l2_mapping_fields(field: str, value: object) -> None:
    """Every field the L2 bank/set map reads is in the input key (and the cache key): a
    configuration that maps lines differently never reuses another's inputs."""
    from mdm.memory import cache_key
    from mdm.memory.hashing import l2_bank_and_set

    a = load_gpu("sm7_qv100")
    b = a.with_updates({field: value})
    lines = np.arange(0, 50_000, 3, dtype=np.int64)
    assert any(
        not np.array_equal(x, y)
        for x, y in zip(l2_bank_and_set(lines, a), l2_bank_and_set(lines, b), strict=True)
    )
    assert cachesim._input_key(a) != cachesim._input_key(b)
    assert cache_key(a) != cache_key(b)
