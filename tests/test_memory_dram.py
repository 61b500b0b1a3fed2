"""The L2's fetch granularity (``l2.fetch_bytes``) and the DRAM row model
(``dram.activate_ns``): hand-worked streams, and the defaults leave the simulation as
it was."""

from __future__ import annotations

import numpy as np
import pytest
from test_memory_cachesim import LD, make_kernel

from mdm.config import load_gpu
from mdm.config.gpu import GPUConfig
from mdm.errors import ConfigError
from mdm.memory import simulate_app
from mdm.memory._core import C_DRAM_RD, N_COUNTERS, dram_queue
from mdm.traces.model import AppTrace
from mdm.traces.workloads import load_trace


def _plain_h100(**updates: object) -> GPUConfig:
    """h100's sectored L1/L2 design with one-sector fetches and no row model."""
    return load_gpu("h100").with_updates(
        {"l2.fetch_bytes": None, "dram.activate_ns": 0.0, **updates}
    )


def _h100(**updates: object) -> GPUConfig:
    """A small sectored GPU (:func:`_plain_h100`) with one SM."""
    return _plain_h100(n_sm=1, **updates)


def _one_lane(addr: int) -> list[int]:
    return [addr] * 32  # every lane the same word: one sector


def test_dram_queue_charges_an_activation_per_row_opened() -> None:
    """Row model by hand: 8 lines per row, 2 banks, 64 B at 8 B/cycle = 8 cycles of data,
    activation 20 cycles. Line 0 opens row 0 (bank 0): 20 cycles; line 5 is in row 0:
    8; line 8 opens row 1 (bank 1): 20; line 16 opens row 2 in bank 0 (row 0 closed):
    20; line 3 reopens row 0: 20."""
    free = np.zeros(1)
    rows = np.full((1, 2), -1, np.int64)
    cnt = np.zeros(N_COUNTERS, np.int64)
    got = [
        dram_queue(free, 0, 0.0, 64, 8.0, cnt, C_DRAM_RD, rows, line, 8, 20.0)
        for line in (0, 5, 8, 16, 3)
    ]
    assert [g[0] for g in got] == [0.0, 20.0, 28.0, 48.0, 68.0]
    # the activation's channel time beyond the 8 cycles of data, in bytes at 8 B/cycle
    assert [g[1] for g in got] == [96.0, 0.0, 96.0, 96.0, 96.0]
    assert free[0] == 88.0
    assert cnt[C_DRAM_RD] == 5 * 64
    # without rows (no columns) every transfer costs its bytes only
    free[0] = 0.0
    off = np.full((1, 0), -1, np.int64)
    got = [
        dram_queue(free, 0, 0.0, 64, 8.0, cnt, C_DRAM_RD, off, line, 8, 20.0) for line in (0, 8, 16)
    ]
    assert got == [(0.0, 0.0), (8.0, 0.0), (16.0, 0.0)]


def test_fetch_granularity_fetches_the_sector_pair() -> None:
    """Sectors 0, 1, 2 of one line, read one after another: 32 B fetches miss three
    times and read 96 B; 64 B fetches miss on sectors 0 and 2 (sector 1 came with 0)
    and read 128 B."""
    k = make_kernel([(LD, _one_lane(a), 4) for a in (0, 32, 64)])
    app = AppTrace([k], name="pair")
    base = simulate_app(app, _h100()).kernels[0]
    pair = simulate_app(app, _h100(**{"l2.fetch_bytes": 64})).kernels[0]
    assert (base.l2_read_misses, base.dram_read_bytes) == (3, 96)
    assert (pair.l2_read_misses, pair.dram_read_bytes) == (2, 128)
    assert pair.l2_read_accesses == base.l2_read_accesses == 3


def test_fetch_groups_are_aligned() -> None:
    """64 B fetches: a read of sector 1 fetches the aligned pair it belongs to (sectors
    0 and 1), not sectors 1 and 2. Sectors 1, 0, 2 of one line, read one after another:
    sector 1 misses (64 B), sector 0 came with it (in flight: no fetch), sector 2 misses
    (its pair 2, 3: 64 B). L2 read misses 2, DRAM reads 128 B (not 64 + 32 B)."""
    k = make_kernel([(LD, _one_lane(a), 4) for a in (32, 0, 64)])
    s = simulate_app(AppTrace([k], name="pair"), _h100(**{"l2.fetch_bytes": 64})).kernels[0]
    assert s.l2_read_accesses == 3
    assert (s.l2_read_misses, s.dram_read_bytes) == (2, 128)


def test_defaults_leave_the_simulation_unchanged() -> None:
    """``l2.fetch_bytes`` = one sector and the row model off give the same counts and
    timeline as the defaults (None, activate_ns 0) on a real kernel."""
    app = load_trace("builtin:gather?ctas=8&iters=2&xsize=65536")
    g = _plain_h100()
    a = simulate_app(app, g).kernels[0]
    b = simulate_app(app, g.with_updates({"l2.fetch_bytes": 32})).kernels[0]
    for f in ("l2_read_misses", "dram_read_bytes", "l1_read_hits", "timeline_cycles"):
        assert getattr(a, f) == getattr(b, f), f


def test_row_activations_slow_random_reads_not_streams() -> None:
    """With activations much longer than a transfer, a random gather's simulated time
    grows several-fold while a coalesced stream (four 256 B chunks per 1 KB row per
    channel) grows much less."""
    g = _plain_h100(n_sm=4)
    slow = g.with_updates({"dram.activate_ns": 50.0})
    rnd = load_trace("builtin:gather?ctas=16&iters=2&xsize=8388608")
    seq = load_trace("builtin:vecadd?ctas=16&iters=2")
    t = {
        name: [simulate_app(app, x).kernels[0].timeline_cycles for x in (g, slow)]
        for name, app in (("random", rnd), ("stream", seq))
    }
    assert t["random"][1] > 2.0 * t["random"][0]
    assert t["stream"][1] < 1.5 * t["stream"][0]


def test_activations_reach_eq8_through_the_profile() -> None:
    """A random gather's per-PC ``dram_act_bytes`` hold the activations' channel time, and
    the models' DRAM service (eq. 8, ``l_dram_service``) grows by it: with activations
    longer than a transfer, the gather's predicted DRAM stall rises; without the row model
    the column is 0."""
    from mdm.pipeline import predict_app

    app = load_trace("builtin:gather?ctas=16&iters=2&xsize=8388608")
    g = _plain_h100(n_sm=4)
    slow = g.with_updates({"dram.activate_ns": 50.0})
    sim0, sim1 = (simulate_app(app, x).kernels[0] for x in (g, slow))
    assert sim0.per_pc.dram_act_bytes.sum() == 0
    assert sim1.per_pc.dram_act_bytes.sum() > sim1.per_pc.dram_bytes.sum()
    p0, p1 = (predict_app(app, x, ["mdm"]) for x in (g, slow))
    dram0 = p0.total("mdm").cpi_stack["dram"]
    assert p1.total("mdm").cpi_stack["dram"] > 2 * dram0 > 0


@pytest.mark.parametrize("fetch", [16, 48, 256])
def test_fetch_bytes_must_be_whole_sectors_dividing_the_line(fetch: int) -> None:
    with pytest.raises(ConfigError, match="fetch_bytes"):
        load_gpu("h100").with_updates({"l2.fetch_bytes": fetch})
