"""Host-to-device copies into the L2 (``l2.fill_on_memcpy``, :mod:`mdm.memory.memcpy`):
GPGPU-Sim's 32 B steps, the fill rule, LRU order and capacity, and that every path of the
pipeline (``simulate_app``, ``predict_app``, ``mdm cachesim``) applies the copies."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_memory_cachesim import BASE, LD, make_kernel
from typer.testing import CliRunner

from mdm.cli.main import app as cli_app
from mdm.config.accelsim import import_accelsim
from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError, MdmWarning
from mdm.memory import AppSimulator, cache_key, simulate_app
from mdm.memory._core import find_way
from mdm.memory.cachesim import _L2State
from mdm.memory.memcpy import copy_steps, copy_to_l2, first_live_step, install_steps
from mdm.pipeline import predict_app, prepare
from mdm.traces.model import AppTrace, Memcpy
from mdm.traces.store import save_store

L2_LINES = 128  # BASE: 16 KB L2 of 128 B lines (2 banks x 16 sets x 4 ways)


def gpu(fill: bool = True, **l2: object) -> GPUConfig:
    return GPUConfig.model_validate({**BASE, "l2": {**BASE["l2"], "fill_on_memcpy": fill, **l2}})


def reads(lines: list[int]) -> AppTrace:
    """One warp reading each line once (one lane per line: one request each)."""
    return AppTrace([make_kernel([(LD, [128 * x], 4) for x in lines])])


def with_copy(addr: int, nbytes: int, lines: list[int]) -> AppTrace:
    return AppTrace([Memcpy(addr, nbytes), *reads(lines).commands])


def test_copy_steps_follow_gpgpusim_32_byte_walk() -> None:
    # perf_memcpy_to_gpu: addresses 100, 132, 164 (k < ceil(70 / 32) = 3), each
    # naming the sector of its address: line 0 sector 3, line 1 sectors 0 and 1
    lines, sector = copy_steps(100, 70, 32, 128)
    assert lines.tolist() == [0, 1, 1] and sector.tolist() == [3, 0, 1]
    assert copy_steps(0, 0, 32, 128)[0].size == 0
    with pytest.raises(ValueError, match="non-negative"):
        copy_steps(-1, 4, 32, 128)


def test_copied_lines_hit_in_the_l2_only_with_the_option() -> None:
    app = with_copy(0, 10 * 128, list(range(10)))
    on, off = simulate_app(app, gpu(True)).total(), simulate_app(app, gpu(False)).total()
    assert (on.l2_read_accesses, on.l2_read_misses) == (10, 0)
    assert (off.l2_read_accesses, off.l2_read_misses) == (10, 10)
    assert on.l1_read_misses == off.l1_read_misses == 10  # the L1 is not touched
    assert on.dram_read_bytes == 0 and off.dram_read_bytes == 10 * 128
    # a copy of other lines leaves these cold
    far = simulate_app(with_copy(10 * 128, 10 * 128, list(range(10))), gpu()).total()
    assert far.l2_read_misses == 10


def test_a_copy_larger_than_the_l2_keeps_its_last_lines() -> None:
    # 2 x capacity: with consecutive banks and linear sets the second half fills every
    # way of every set, in copy order, so the first half is gone
    addr, nbytes = 0, 2 * L2_LINES * 128
    last = list(range(L2_LINES, 2 * L2_LINES))
    first = list(range(L2_LINES))
    assert simulate_app(with_copy(addr, nbytes, last), gpu()).total().l2_read_misses == 0
    assert simulate_app(with_copy(addr, nbytes, first), gpu()).total().l2_read_misses == L2_LINES


def test_lru_order_is_copy_order_and_a_valid_sector_keeps_its_stamp() -> None:
    g = gpu()
    st = _L2State(g)
    # lines 0, 32, 64, 96 and 128 share bank 0's set 0 (4 ways): the fifth copy evicts
    # the first copied line, unless that line was copied again before
    for line in (0, 32, 64, 96):
        copy_to_l2(st, g, 128 * line, 128)
    copy_to_l2(st, g, 0, 32)  # line 0's sector 0 again: already valid, no new stamp
    copy_to_l2(st, g, 128 * 128, 128)
    assert find_way(st.tags, 0, 0, 0) < 0 and find_way(st.tags, 0, 0, 128) >= 0
    assert all(find_way(st.tags, 0, 0, x) >= 0 for x in (32, 64, 96))


def test_a_copied_sector_is_valid_and_clean() -> None:
    g = gpu()
    st = _L2State(g)
    copy_to_l2(st, g, 5 * 128, 128)
    # line 5 (address 640): bank 640 // 256 mod 2 = 0, set ((640 // 256 // 2) x 256 +
    # 640 mod 256) // 128 = 3 (linear index on the partition address)
    w = find_way(st.tags, 0, 3, 5)
    assert w >= 0
    st.dirty[0, 3, w] = 1  # as if a kernel had written it
    st.partial[0, 3, w] = 1
    st.valid[0, 3, w] = 0
    copy_to_l2(st, g, 5 * 128, 128)
    assert (st.valid[0, 3, w], st.dirty[0, 3, w], st.partial[0, 3, w]) == (1, 0, 0)
    assert st.fill[0, 3, w, 0] == -np.inf


def test_sectored_l2_validates_only_the_copied_sectors() -> None:
    # an unsectored L1 miss fetches the whole line: 4 sector accesses, the copied one hits
    g = gpu(sectored=True)
    s = simulate_app(with_copy(3 * 128, 32, [3]), g).total()
    assert (s.l2_read_accesses, s.l2_read_misses) == (4, 3)
    s = simulate_app(with_copy(3 * 128 + 16, 32, [3]), g).total()  # straddles sectors 0-1
    assert (s.l2_read_accesses, s.l2_read_misses) == (4, 3)  # one 32 B step: sector 0


def test_no_copy_work_without_the_option() -> None:
    sim = AppSimulator(gpu(False))
    assert sim.copy(Memcpy(0, 1 << 40)) == 0  # a 1 TB copy costs nothing when off
    assert AppSimulator(gpu(True)).copy(Memcpy(0, 4096)) == 4096 // 32


def test_option_is_part_of_the_cache_key() -> None:
    assert cache_key(gpu(True)) != cache_key(gpu(False))


def test_predict_app_and_the_cli_apply_the_copies(tmp_path) -> None:  # noqa: ANN001
    app = with_copy(0, 10 * 128, list(range(10)))
    want = simulate_app(app, gpu()).kernels[0].l2_read_misses
    assert want == 0
    for source in (app, prepare(app)):
        pred = predict_app(source, gpu(), ["mdm"])
        assert pred.inputs[0].cache.l2_read_misses == want
    assert predict_app(app, gpu(False), ["mdm"]).inputs[0].cache.l2_read_misses == 10
    # mdm cachesim reads the trace lazily (command by command)
    save_store(app, tmp_path / "t")
    cfg = tmp_path / "g.json"
    cfg.write_text(gpu().model_dump_json())
    res = CliRunner().invoke(
        cli_app, ["cachesim", str(tmp_path / "t"), "--gpu", str(cfg), "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["total"]["l2_misses"] == want


def test_accelsim_option_is_mapped(reference_dir, tmp_path) -> None:  # noqa: ANN001
    path = reference_dir / "configs" / "mdm_pascal" / "gpgpusim.config"

    def imported(extra: str) -> tuple[GPUConfig, str]:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            g = import_accelsim(path, extra)
        return g, " ".join(str(w.message) for w in rec if issubclass(w.category, MdmWarning))

    g, text = imported("")
    assert g.l2.fill_on_memcpy and "-gpgpu_perf_sim_memcpy" not in text
    assert not imported("-gpgpu_perf_sim_memcpy 0")[0].l2.fill_on_memcpy
    with pytest.raises(ConfigError, match="-gpgpu_perf_sim_memcpy: expected 0 or 1"):
        import_accelsim(path, "-gpgpu_perf_sim_memcpy 2")
    # absent from a config: GPGPU-Sim's default, 1
    text = path.read_text()
    (tmp_path / "gpgpusim.config").write_text(
        "\n".join(x for x in text.splitlines() if "-gpgpu_perf_sim_memcpy" not in x)
    )
    for f in ("trace.config", "config_mdm_islip.icnt"):
        src = path.parent / f
        if src.is_file():
            (tmp_path / f).write_text(src.read_text())
    assert imported_from(tmp_path / "gpgpusim.config").l2.fill_on_memcpy


def imported_from(path) -> GPUConfig:  # noqa: ANN001
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return import_accelsim(path)


def _contents(state: _L2State) -> list[list[tuple[int, int, int, int]]]:
    """Per set, its valid lines from least to most recently used, with their valid,
    dirty and partial masks (way positions aside)."""
    out = []
    for b in range(state.tags.shape[0]):
        for s in range(state.tags.shape[1]):
            ways = [w for w in range(state.tags.shape[2]) if state.tags[b, s, w] >= 0]
            ways.sort(key=lambda w: state.lru[b, s, w])
            out.append(
                [(int(state.tags[b, s, w]), int(state.valid[b, s, w]), int(state.dirty[b, s, w]),
                  int(state.partial[b, s, w])) for w in ways]
            )  # fmt: skip
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4 * L2_LINES * 128), st.integers(0, 3 * L2_LINES * 128))),
    st.integers(0, 64 * L2_LINES * 128),
    st.integers(1, 40 * L2_LINES * 128),
    st.booleans(),
)
def test_skipping_the_dead_head_of_a_copy_gives_the_same_l2(
    before: list[tuple[int, int]], addr: int, nbytes: int, sectored: bool
) -> None:
    """Installing a large copy from its first live step leaves every set with the same
    lines, masks and LRU order as installing every step (after any earlier copies)."""
    g = gpu(sectored=sectored)
    full, cut = _L2State(g), _L2State(g)
    for a, n in before:
        for state in (full, cut):
            install_steps(state, g, a, n, 0)
    install_steps(full, g, addr, nbytes, 0)
    copy_to_l2(cut, g, addr, nbytes)
    assert _contents(cut) == _contents(full)


@pytest.mark.parametrize("again", [False, True])
def test_a_buffer_copied_twice_is_installed_whole(again: bool) -> None:
    """A copy whose live suffix is already resident (the same buffer copied again, the
    second time after an L2's worth of other lines) is installed from its first step:
    the resident suffix lines keep their old stamps (a valid sector's copy does not
    refresh them), so skipping the head would change the LRU order."""
    g = gpu()
    nbytes = 8 * L2_LINES * 128
    full, cut = _L2State(g), _L2State(g)
    for state in (full, cut):
        install_steps(state, g, 0, nbytes, 0)
        if again:  # newer lines in every set: the copy's own lines are the oldest
            install_steps(state, g, 100 * L2_LINES * 128, L2_LINES * 128 // 2, 0)
    install_steps(full, g, 0, nbytes, 0)
    n = copy_to_l2(cut, g, 0, nbytes)
    assert n == nbytes // 32  # every step: the suffix is resident
    assert _contents(cut) == _contents(full)


def test_a_large_copy_installs_about_twice_the_l2() -> None:
    g = gpu()
    n = 40 * L2_LINES * 4  # 40 x the L2, 4 steps per line
    start = first_live_step(g, 0, n * 32)
    assert 0 < n - start <= 4 * L2_LINES * 4  # the last chunk of 2 x the L2's lines
    assert first_live_step(g, 0, (L2_LINES - 1) * 128) == 0  # too small to fill it


@pytest.mark.parametrize(("hashed", "steps"), [(False, None), (True, None), (False, 64)])
@settings(max_examples=15, deadline=None)
@given(addr=st.integers(0, 8 * L2_LINES * 128), nbytes=st.integers(0, 12 * L2_LINES * 128))
def test_first_live_step_is_the_shortest_suffix_in_chunks(
    hashed: bool, steps: int | None, addr: int, nbytes: int
) -> None:
    """first_live_step's docstring, with BASE's L2 (2 banks x 16 sets x 4 ways: 128 lines;
    4 steps of 32 B per 128 B line): chunks of 2 x 128 = 256 lines, or of CHUNK_STEPS
    steps when fewer (64 steps: 16 lines). A start > 0 is the first step of its line
    ``lo``; lines lo .. the copy's last are a whole number of chunks; they bring >= 4
    lines to every set; one chunk fewer does not."""
    from mdm.memory import memcpy
    from mdm.memory.hashing import l2_bank_and_set

    g = gpu(set_index="xor", bank_index="bitwise_xor") if hashed else gpu()
    chunk = 256 if steps is None else steps * 32 // 128
    with pytest.MonkeyPatch.context() as mp:
        if steps is not None:
            mp.setattr(memcpy, "CHUNK_STEPS", steps)
        start = first_live_step(g, addr, nbytes)
    n = -(-nbytes // 32)
    assert 0 <= start <= max(n - 1, 0)
    if start == 0:
        return
    first, last = addr // 128, (addr + (n - 1) * 32) // 128
    lo = (addr + start * 32) // 128
    assert (addr + (start - 1) * 32) // 128 == lo - 1  # cut at a line boundary
    assert (last + 1 - lo) % chunk == 0 and lo > first

    def fills_every_set(a: int) -> bool:
        bank, s = l2_bank_and_set(np.arange(a, last + 1, dtype=np.int64), g)
        count = np.bincount(bank.astype(np.int64) * 16 + s, minlength=32)
        return bool(count.min() >= 4)

    assert fills_every_set(lo)
    assert not fills_every_set(lo + chunk)


def test_installers_return_the_steps_they_installed() -> None:
    """install_steps from step 30 of a 100-step copy installs 70 steps; a copy of 40 x
    the L2 (40 x 128 lines x 4 steps = 20480) installs its steps from its first live
    step on, fewer than all of them."""
    g = gpu()
    assert install_steps(_L2State(g), g, 0, 100 * 32, 30) == 70
    n = 40 * L2_LINES * 4
    start = first_live_step(g, 0, n * 32)
    assert start > 0
    assert copy_to_l2(_L2State(g), g, 0, n * 32) == n - start
